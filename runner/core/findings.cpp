#include "runner/core/findings.hpp"

namespace streamlab {
namespace {

// Stable codes: tools and `allow:` lists use them, so they never change meaning.
constexpr FindingKind kCodes[] = {
    {"race", Severity::error,
     "two ops that nothing orders touch the same elements, at least one of them writing"},
    {"use-before-alloc", Severity::error,
     "an op may run before the stream-ordered allocation (mallocAsync) of a buffer it uses"},
    {"use-after-free", Severity::error, "an op may still use a buffer when it is freed"},
    {"pageable-async", Severity::warning,
     "memcpyAsync with pageable memory: the host waits, and the copy overlaps nothing"},
    {"wait-before-record", Severity::warning,
     "a wait on (a sync or query of) an event that no earlier op records: it orders nothing"},
    {"unsynced-host-read", Severity::warning,
     "host code (a check, a host function) reads host memory that device work may still be "
     "writing"},
    {"unused-allow", Severity::warning,
     "an `allow` that acknowledges no diagnostic of its op or check"},
    {"one-stream", Severity::warning,
     "work that could overlap (a copy beside a kernel, copies of both directions) is confined to "
     "one stream, whose order makes each op wait for the one before"},
    {"sync-in-loop", Severity::warning,
     "a host synchronization inside a loop makes each iteration wait for the last before the next "
     "is issued: the streams take turns instead of overlapping"},
    {"overhead-bound", Severity::warning,
     "every host-device copy is under 256 KiB, a few microseconds: issuing and starting a copy "
     "costs about as much, so there is little to overlap"},
    {"legacy-serializes", Severity::note,
     "an op on the legacy default stream waits for, or holds back, work of blocking streams"},
    {"blocking-alloc", Severity::note,
     "malloc, free, mallocHost or freeHost in the op list blocks the host or the device"},
    {"event-unused", Severity::note,
     "an event record that no wait, sync or query uses before the event is recorded again"},
};

}  // namespace

std::span<const FindingKind> finding_kinds() { return kCodes; }

const FindingKind* find_finding_code(std::string_view code) {
  for (const auto& c : kCodes)
    if (c.code == code) return &c;
  return nullptr;
}

Finding& Findings::add(std::string_view code, const SourceLoc& loc, std::string message) {
  const FindingKind* c = find_finding_code(code);
  Finding f;
  f.severity = c ? c->severity : Severity::error;
  f.code = std::string(code);
  f.loc = loc;
  f.message = std::move(message);
  items_.push_back(std::move(f));
  return items_.back();
}

}  // namespace streamlab

// The analyzer's rules. One walk over the expanded op list in issue order: each op tells the
// happens-before model what it orders (OpKind::order), then its accesses are checked against the
// live accesses of the buffers they touch. An access is dropped from the live set once a later
// access that covers it is ordered after it (any op that races with the dropped one races with the
// later one too), so the live sets stay small and the walk near-linear in ops x streams.
#include "runner/analyze/analyze.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <tuple>

#include <fmt/format.h>

#include "ops/op_kind.hpp"
#include "runner/analyze/fixes.hpp"
#include "runner/analyze/live_set.hpp"
#include "runner/analyze/overlap.hpp"
#include "runner/context/happens_before.hpp"

namespace streamlab {
namespace {

struct Record {
  int op = -1;
  StreamPoint at;
  int64_t begin = 0, end = 0;  // elements, end exclusive
  bool write = false;
  bool host = false;  // made by host code (a host function)
};

// A race or an unsynchronized host read found at `later`, explained after the walk (the records
// and waits that explain it may be issued after it).
struct Conflict {
  size_t finding = 0;
  int earlier = -1, later = -1;
};

std::string verb(bool write) { return write ? "write" : "read"; }

// What one walk covers: the experiment's op list, or a graph's body (whose buffer lifetimes and
// checks are the enclosing list's). A body is walked in place: copying the experiment for each of
// thousands of graphs would make the analysis quadratic.
struct Scope {
  std::span<const Op> ops;
  bool top_level = true;
};

class Analyzer {
 public:
  // `check_fixes`: fixes that move ops are checked by analyzing the op list they make (not done
  // by the analysis that checks one).
  Analyzer(const Experiment& exp, Scope scope, bool check_fixes = true)
      : exp_(exp),
        check_fixes_(check_fixes),
        ops_(scope.ops),
        top_level_(scope.top_level),
        hb_(exp),
        live_(exp.buffers.size()),
        alloc_at_(exp.buffers.size()),
        allocates_(ops_.size(), -1),
        frees_(ops_.size(), -1),
        records_of_event_(exp.events.size()),
        consumed_(ops_.size(), false),
        waits_(exp.streams.size()) {
    facts_.at.resize(ops_.size());
    facts_.accesses.resize(ops_.size());
    if (!top_level_) return;
    for (size_t b = 0; b < exp.buffers.size(); ++b) {
      if (exp.buffers[b].alloc_op >= 0) allocates_[exp.buffers[b].alloc_op] = static_cast<int>(b);
      if (exp.buffers[b].free_op >= 0) frees_[exp.buffers[b].free_op] = static_cast<int>(b);
    }
  }

  Findings run() {
    for (int i = 0; i < static_cast<int>(ops_.size()); ++i) issue(i);
    if (top_level_) check_reads_at_end();
    report_unused_records();
    offer_record_removals();
    report_unrecorded_waits();
    report_legacy_barriers();
    for (const Conflict& c : conflicts_) explain(c);
    if (top_level_) find_overlap_pitfalls(exp_, ops_, facts_, out_, reanalyze());
    return std::move(out_);
  }

 private:
  const Op& op(int i) const { return ops_[i]; }
  const std::string& stream_name(int s) const { return exp_.streams[s].name; }

  // "op 'k' (stream 's1', line 12)"
  std::string title(int i) const {
    if (op(i).stream < 0) return fmt::format("op '{}' (line {})", op(i).id, op(i).loc.line);
    return fmt::format("op '{}' (stream '{}', line {})", op(i).id, stream_name(op(i).stream),
                       op(i).loc.line);
  }

  void issue(int i) {
    // A host wait of its own, in a loop: what the host waited for, for sync-in-loop.
    bool may_wait = !outside_loops(op(i)) && !op(i).device_work && frees_[i] < 0;
    Clock host_before = may_wait ? hb_.host() : Clock{};
    hb_.begin(i);
    op(i).kind->order(hb_, exp_, op(i));
    op(i).kind->lint(exp_, op(i), i, out_);
    const IssueEffects& fx = hb_.effects();
    if (may_wait && !fx.at) note_host_wait(i, host_before);
    facts_.at[i] = fx.at;
    track_events(i, fx);
    track_legacy(i, fx);
    if (allocates_[i] >= 0) alloc_at_[allocates_[i]] = fx.at;
    if (frees_[i] >= 0) check_free(i, frees_[i], fx.at ? fx.start : hb_.host());
    if (!fx.at) return;  // only stream-ordered ops touch memory
    auto accesses = op(i).kind->accesses(exp_, op(i));
    reported_.clear();
    for (const Access& a : accesses) {
      check_allocated(i, a, fx.start);
      check_conflicts(i, a, fx.start);
    }
    for (const Access& a : accesses) add_live(i, *fx.at, a, fx.start);
    if (op(i).device_work) facts_.accesses[i] = std::move(accesses);
  }

  void note_host_wait(int i, const Clock& before) {
    WalkFacts::HostWait w{i, {}};
    for (size_t s = 0; s < before.size(); ++s)
      if (hb_.host()[s] > before[s]) w.streams.push_back(static_cast<int>(s));
    if (!w.streams.empty()) facts_.host_waits.push_back(std::move(w));
  }

  Reanalyze reanalyze() const {
    if (!check_fixes_) return {};
    const Experiment& exp = exp_;
    return [&exp](std::vector<Op> ops) { return Analyzer(exp, Scope{ops, true}, false).run(); };
  }

  // --- memory: races and lifetimes ---

  void check_conflicts(int i, const Access& a, const Clock& start) {
    int64_t begin = a.range.offset, end = a.range.offset + a.range.count;
    live_[a.range.buffer].for_overlapping(begin, end, [&](const Record& r) {
      if (r.end <= begin || end <= r.begin || (!r.write && !a.write) || done_in(r.at, start))
        return;
      if (!reported_.insert({r.op, a.range.buffer}).second)
        return;  // one finding per op pair and buffer
      BufferRange overlap{a.range.buffer, std::max(begin, r.begin),
                          std::min(end, r.end) - std::max(begin, r.begin)};
      if (r.host || a.host)
        report_host_read(r, i, a, overlap);
      else
        report_race(r, i, a, overlap);
    });
  }

  void report_race(const Record& r, int i, const Access& a, const BufferRange& overlap) {
    if (repeats_earlier("race", op(i).loc, op(r.op).loc, overlap.buffer)) return;
    Finding& f = out_.add(
        "race", op(i).loc,
        fmt::format("data race on '{}': op '{}' (stream '{}') {}s it while op '{}' (stream '{}', "
                    "line {}) may still {} it; nothing orders the two",
                    range_name(exp_, overlap), op(i).id, stream_name(op(i).stream), verb(a.write),
                    op(r.op).id, stream_name(op(r.op).stream), op(r.op).loc.line, verb(r.write)));
    f.related.push_back({op(r.op).loc, fmt::format("op '{}' {}s '{}' here", op(r.op).id,
                                                   verb(r.write), range_name(exp_, overlap))});
    if (op(i).workspace.buffer == overlap.buffer && op(r.op).workspace.buffer == overlap.buffer)
      workspace_fix(f, r.op, i);
    else
      event_fix(f, r.op, i);
    f.ops = {r.op, i};
    f.buffer = overlap.buffer;
    conflicts_.push_back({out_.items().size() - 1, r.op, i});
  }

  // Two library calls sharing a workspace (docs/semantics.md, L2): one workspace each lets them run
  // at once; an event would serialize them.
  void workspace_fix(Finding& f, int first, int second) const {
    const Op& o = op(second);
    const Buffer& ws = exp_.buffers[o.workspace.buffer];
    std::string own = identifier_from(ws.name + "_" + stream_name(o.stream));
    for (int n = 2; std::any_of(exp_.buffers.begin(), exp_.buffers.end(),
                                [&](const Buffer& b) { return b.name == own; });
         ++n)
      own = identifier_from(ws.name + "_" + stream_name(o.stream)) + std::to_string(n);
    f.fix = fmt::format(
        "give op '{}' a workspace of its own, so that both may run at once (or, to run them one "
        "after the other, record an event in stream '{}' after op '{}' and wait for it in stream "
        "'{}')",
        o.id, stream_name(op(first).stream), op(first).id, stream_name(o.stream));
    std::string uses = "workspace: " + ws.name;
    std::string line(SourceLines(exp_.source).line(o.loc.line));
    size_t at = line.find(uses);
    bool exact = at != std::string::npos &&
                 (at + uses.size() == line.size() || line[at + uses.size()] == ',' ||
                  line[at + uses.size()] == '}' || line[at + uses.size()] == ' ');
    if (!outside_loops(o) || !exact) return;  // in a loop: one per iteration, an `array:`
    f.edits = {Edit::declaring("buffers", fmt::format("{}: {{type: {}, count: {}, memory: device}}",
                                                      own, elem_type_name(ws.type), ws.count)),
               Edit::replacing("ops", o.loc.line, uses, "workspace: " + own,
                               fmt::format("line {}", o.loc.line))};
  }

  // A name made of an id or a stream's name that is itself an identifier ("in[2]" -> "in_2").
  static std::string identifier_from(const std::string& text) {
    std::string out;
    for (char ch : text) out += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
    while (!out.empty() && out.back() == '_') out.pop_back();
    if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "op_" + out;
    return out;
  }

  // A host function reads host memory while device work may still write it.
  void report_host_read(const Record& r, int i, const Access& a, const BufferRange& overlap) {
    int reader = a.host ? i : r.op, writer = a.host ? r.op : i;
    if (repeats_earlier("unsynced-host-read", op(i).loc, op(r.op).loc, overlap.buffer)) return;
    Finding& f = out_.add(
        "unsynced-host-read", op(i).loc,
        fmt::format("host function '{}' (stream '{}') reads '{}' while {} may still write it",
                    op(reader).id, stream_name(op(reader).stream), range_name(exp_, overlap),
                    title(writer)));
    f.related.push_back(
        {op(r.op).loc, fmt::format("op '{}' {}s it here", op(r.op).id, verb(r.write))});
    event_fix(f, r.op, i);
    f.ops = {r.op, i};
    f.buffer = overlap.buffer;
    conflicts_.push_back({out_.items().size() - 1, r.op, i});
  }

  // A1: a buffer from mallocAsync exists once its stream reaches the allocation.
  void check_allocated(int i, const Access& a, const Clock& start) {
    const Buffer& b = exp_.buffers[a.range.buffer];
    const auto& at = alloc_at_[a.range.buffer];
    if (!at || done_in(*at, start) || !reported_.insert({b.alloc_op, a.range.buffer}).second)
      return;
    if (repeats_earlier("use-before-alloc", op(i).loc, op(b.alloc_op).loc, a.range.buffer)) return;
    Finding& f = out_.add(
        "use-before-alloc", op(i).loc,
        fmt::format("op '{}' (stream '{}') uses '{}' before its allocation is ordered before it: "
                    "op '{}' allocates it in stream '{}' (line {}), and nothing makes stream '{}' "
                    "wait for that",
                    op(i).id, stream_name(op(i).stream), b.name, op(b.alloc_op).id,
                    stream_name(op(b.alloc_op).stream), op(b.alloc_op).loc.line,
                    stream_name(op(i).stream)));
    f.related.push_back(
        {op(b.alloc_op).loc, fmt::format("'{}' is allocated here, in stream order", b.name)});
    event_fix(f, b.alloc_op, i);
    f.ops = {b.alloc_op, i};
    f.buffer = a.range.buffer;
  }

  // A2, I4: every use of a buffer must be done before its free.
  void check_free(int i, int buffer, const Clock& at) {
    std::set<int> seen;
    live_[buffer].for_each([&](const Record& r) {
      if (done_in(r.at, at) || !seen.insert(r.op).second) return;
      if (repeats_earlier("use-after-free", op(i).loc, op(r.op).loc, buffer)) return;
      Finding& f = out_.add("use-after-free", op(i).loc,
                            fmt::format("op '{}' frees '{}' while {} may still {} it", op(i).id,
                                        exp_.buffers[buffer].name, title(r.op), verb(r.write)));
      f.related.push_back({op(r.op).loc, fmt::format("op '{}' uses '{}' here", op(r.op).id,
                                                     exp_.buffers[buffer].name)});
      if (op(i).stream >= 0)
        event_fix(f, r.op, i);
      else
        host_wait_fix(f, r.op, i);
      f.ops = {r.op, i};
      f.buffer = buffer;
    });
  }

  // Keeps the live set small: an access ordered after earlier ones that it covers replaces them
  // (a write replaces anything, a read replaces reads).
  void add_live(int i, const StreamPoint& at, const Access& a, const Clock& start) {
    Record rec{i, at, a.range.offset, a.range.offset + a.range.count, a.write, a.host};
    auto& live = live_[a.range.buffer];
    live.erase_within(rec.begin, rec.end, [&](const Record& r) {
      return r.end <= rec.end && done_in(r.at, start) && (rec.write || !r.write) &&
             r.host == rec.host;
    });
    live.add(rec);
  }

  // Checks read host memory at the end of the ops; streamlab synchronizes before them, a program
  // reading the buffer there would not.
  void check_reads_at_end() {
    for (size_t c = 0; c < exp_.checks.size(); ++c) {
      std::set<int> seen;
      for (const BufferRange& range : check_ranges(exp_.checks[c]))
        if (range.valid() && host_accessible(exp_.buffers[range.buffer].memory))
          check_read_at_end(static_cast<int>(c), range, seen);
    }
  }

  void check_read_at_end(int c, const BufferRange& range, std::set<int>& seen) {
    const CheckSpec& check = exp_.checks[c];
    live_[range.buffer].for_overlapping(
        range.offset, range.offset + range.count, [&](const Record& r) {
          if (!r.write || r.end <= range.offset || range.offset + range.count <= r.begin ||
              done_in(r.at, hb_.host()) || !seen.insert(r.op).second)
            return;
          if (repeats_earlier("unsynced-host-read", check.loc, op(r.op).loc, range.buffer)) return;
          Finding& f = out_.add(
              "unsynced-host-read", check.loc,
              fmt::format(
                  "check {} reads '{}' on the host, but {} may still write it: nothing makes "
                  "the host wait for it before the end of the ops (streamlab synchronizes "
                  "before its checks; a program reading '{}' there would see stale data)",
                  check.kind, exp_.buffers[range.buffer].name, title(r.op),
                  exp_.buffers[range.buffer].name));
          f.related.push_back({op(r.op).loc, fmt::format("op '{}' writes '{}' here", op(r.op).id,
                                                         exp_.buffers[range.buffer].name)});
          // A writer in a loop may write from another stream in each iteration: wait for them all.
          bool one_stream = outside_loops(op(r.op));
          f.fix = one_stream
                      ? fmt::format("make the host wait for stream '{}' at the end of the ops",
                                    stream_name(op(r.op).stream))
                      : "make the host wait for the device at the end of the ops";
          f.edits = {Edit::append(one_stream ? fmt::format("- streamSynchronize: {{stream: {}}}",
                                                           stream_name_ref(exp_, op(r.op).stream))
                                             : "- deviceSynchronize: {}",
                                  "at the end of the ops")};
          f.ops = {r.op};
          f.checks = {c};
          f.buffer = range.buffer;
        });
  }

  // The YAML that orders op `before` ahead of op `after`: an event recorded after one, waited for
  // before the other, each written beside its op (in a loop, in the loop's own terms).
  void event_fix(Finding& f, int before, int after) const {
    const Op &b = op(before), &a = op(after);
    std::string base = identifier_from(outside_loops(b) ? b.id : b.id.substr(0, b.id.find('[')));
    std::string name = base + "_done";
    for (int n = 2; std::any_of(exp_.events.begin(), exp_.events.end(),
                                [&](const Event& e) { return e.name == name; });
         ++n)
      name = fmt::format("{}_done{}", base, n);
    f.fix = fmt::format(
        "record an event in stream '{}' after op '{}' and make stream '{}' wait for it before op "
        "'{}'",
        stream_name(b.stream), b.id, stream_name(a.stream), a.id);
    // A record inside a loop is re-recorded by each iteration: a wait outside that iteration
    // would see only the last one.
    if (!is_block_item(exp_.source, b.loc) || !is_block_item(exp_.source, a.loc)) return;
    if (!same_iteration(b, a) && !outside_loops(b)) {
      f.fix += fmt::format(
          "; the two come from different iterations of loops, so record one event per iteration "
          "(an event with `array:`, indexed by the loop's variable) and wait for the one "
          "recorded after op '{}'",
          b.id);
      return;
    }
    f.edits = {Edit::declaring("events", name + ": {flags: disable-timing}"),
               Edit::after(b.loc.line,
                           fmt::format("- eventRecord: {{event: {}, stream: {}}}", name,
                                       stream_ref(exp_, b)),
                           fmt::format("after line {}", b.loc.line)),
               Edit::before(a.loc.line,
                            fmt::format("- streamWaitEvent: {{stream: {}, event: {}}}",
                                        stream_ref(exp_, a), name),
                            fmt::format("before line {}", a.loc.line))};
  }

  // The host waits for the user's stream before a host call (cudaFree, freeHost) frees a buffer.
  void host_wait_fix(Finding& f, int user, int freeing) const {
    const Op &u = op(user), &fr = op(freeing);
    f.fix = fmt::format("make the host wait for stream '{}' before op '{}'", stream_name(u.stream),
                        fr.id);
    if (!is_block_item(exp_.source, fr.loc)) return;
    // A user in another iteration of a loop may be on another stream each time: wait for all.
    std::string wait = same_iteration(u, fr) || outside_loops(u)
                           ? fmt::format("- streamSynchronize: {{stream: {}}}",
                                         same_iteration(u, fr) ? stream_ref(exp_, u)
                                                               : stream_name_ref(exp_, u.stream))
                           : "- deviceSynchronize: {}";
    f.edits = {Edit::before(fr.loc.line, wait, fmt::format("before line {}", fr.loc.line))};
  }

  // Counts a finding that repeats one already made from the same YAML lines (a loop) instead of
  // building its text again: a racy loop of ten thousand iterations costs one message.
  bool repeats_earlier(std::string_view code, const SourceLoc& at, const SourceLoc& other,
                       int buffer) {
    auto [it, fresh] = made_.try_emplace(
        std::tuple(code, at.line, at.col, other.line, other.col, buffer), out_.items().size());
    if (!fresh) ++out_.items()[it->second].repeats;
    return !fresh;
  }

  // --- events ---

  void track_events(int i, const IssueEffects& fx) {
    int e = op(i).event;
    if (e < 0) return;
    if (fx.bound_record >= 0) consumed_[fx.bound_record] = true;
    if (fx.unrecorded_event) unrecorded_.push_back(i);
    if (hb_.last_record(e) == i)
      records_.push_back(i), records_of_event_[e].push_back(i);
    else if (fx.at)
      waits_[op(i).stream].push_back(i);
  }

  // E3: a wait on an event never recorded is a no-op.
  void report_unrecorded_waits() {
    for (int i : unrecorded_) {
      const std::string& event = exp_.events[op(i).event].name;
      const auto& recs = records_of_event_[op(i).event];
      auto next = std::upper_bound(recs.begin(), recs.end(), i);
      int later = next == recs.end() ? -1 : *next;
      const EventUse use = op(i).kind->event_use;
      std::string what =
          use == EventUse::stream_waits
              ? fmt::format(
                    "stream '{}' waits on event '{}' before any op records it: the wait orders "
                    "nothing (an event never recorded holds no work)",
                    stream_name(op(i).stream), event)
          : use == EventUse::host_waits
              ? fmt::format(
                    "the host waits on event '{}' before any op records it: the call returns at "
                    "once, having waited for nothing",
                    event)
              : fmt::format(
                    "op '{}' queries event '{}' before any op records it: it answers 'done' at "
                    "once",
                    op(i).id, event);
      Finding& f = out_.add("wait-before-record", op(i).loc, what);
      f.ops = {i};
      if (later < 0) continue;
      f.related.push_back(
          {op(later).loc, fmt::format("'{}' is recorded only here, after it", event)});
      f.fix = fmt::format(
          "move op '{}' after the record at line {} (a wait binds to the record issued before it)",
          op(i).id, op(later).loc.line);
      auto text = item_text(exp_.source, op(i).loc.line);
      if (!text || !same_iteration(op(i), op(later)) || !is_block_item(exp_.source, op(i).loc) ||
          !is_block_item(exp_.source, op(later).loc))
        continue;
      f.edits = {
          Edit::removal(op(i).loc.line, fmt::format("remove it from line {}", op(i).loc.line)),
          Edit::after(op(later).loc.line, "- " + *text,
                      fmt::format("after line {}", op(later).loc.line))};
    }
  }

  void report_unused_records() {
    for (int r : records_) {
      if (consumed_[r] || repeats_earlier("event-unused", op(r).loc, {}, -1)) continue;
      const std::string& event = exp_.events[op(r).event].name;
      Finding& f = out_.add(
          "event-unused", op(r).loc,
          fmt::format("event '{}' recorded by op '{}' is never waited on, synchronized or queried "
                      "before it is recorded again or the ops end",
                      event, op(r).id));
      f.fix = "remove the record, or use it (streamWaitEvent, eventSynchronize)";
      f.ops = {r};
      unused_records_.push_back(out_.items().size() - 1);
    }
  }

  // Removing an unused record is a fix only where no iteration of its line uses it.
  void offer_record_removals() {
    if (unused_records_.empty()) return;
    std::map<std::pair<int, int>, int> expanded;  // (line, col) -> ops issued from there
    for (const Op& o : ops_) ++expanded[{o.loc.line, o.loc.col}];
    for (size_t index : unused_records_) {
      Finding& f = out_.items()[index];
      if (f.repeats != expanded[{f.loc.line, f.loc.col}] || !is_block_item(exp_.source, f.loc))
        continue;
      f.fix = "remove the record (or use it: streamWaitEvent, eventSynchronize)";
      f.edits = {Edit::removal(f.loc.line, fmt::format("remove the op at line {}", f.loc.line))};
    }
  }

  // --- the legacy default stream (S2) ---

  void track_legacy(int i, const IssueEffects& fx) {
    if (!fx.legacy_waits_for.empty()) legacy_[i].waits_for = fx.legacy_waits_for;
    if (fx.held_by_legacy >= 0) legacy_[fx.held_by_legacy].holds.insert(op(i).stream);
  }

  std::string stream_list(const std::vector<int>& streams) const {
    std::string out;
    for (size_t k = 0; k < streams.size(); ++k)
      out += fmt::format("{}'{}'",
                         k == 0                    ? ""
                         : k + 1 == streams.size() ? " and "
                                                   : ", ",
                         stream_name(streams[k]));
    return out;
  }

  void report_legacy_barriers() {
    for (const auto& [i, barrier] : legacy_) {
      std::vector<std::string> parts;
      if (!barrier.waits_for.empty())
        parts.push_back(
            fmt::format("waits until blocking stream{} {} finish{} the work issued before it",
                        barrier.waits_for.size() > 1 ? "s" : "", stream_list(barrier.waits_for),
                        barrier.waits_for.size() > 1 ? "" : "es"));
      std::vector<int> holds(barrier.holds.begin(), barrier.holds.end());
      if (!holds.empty())
        parts.push_back(fmt::format(
            "holds back blocking stream{} {}: work issued to {} after it waits until it is "
            "done",
            holds.size() > 1 ? "s" : "", stream_list(holds), holds.size() > 1 ? "them" : "it"));
      std::string what = parts.size() == 2 ? parts[0] + ", and " + parts[1] : parts[0];
      Finding& f = out_.add(
          "legacy-serializes", op(i).loc,
          fmt::format("op '{}' runs on the legacy default stream, so it {}", op(i).id, what));
      // Not `flags: non-blocking` on the other streams: the legacy stream would then order nothing
      // with them, and what it orders now would race.
      f.fix =
          "if it need not wait for the other streams, issue it to a created stream of its own "
          "(the Async form of the call, with `stream:`), and order it with events where it must";
      f.ops = {i};
    }
  }

  // --- explanations of a conflict: the waits that look as if they order it but do not ---

  void explain(const Conflict& c) {
    Finding& f = out_.items()[c.finding];
    int from = op(c.earlier).stream, to = op(c.later).stream;
    auto non_blocking = [&](int s) { return exp_.streams[s].non_blocking; };
    if ((exp_.streams[from].legacy && non_blocking(to)) ||
        (exp_.streams[to].legacy && non_blocking(from))) {
      int s = non_blocking(to) ? to : from;
      f.related.push_back({exp_.streams[s].loc,
                           fmt::format("stream '{}' is non-blocking: it does not synchronize with "
                                       "the legacy default stream",
                                       stream_name(s))});
    }
    if (int w = misleading_wait(c.earlier, c.later); w >= 0) explain_wait(f, c.earlier, w);
  }

  // A wait in the later op's stream on an event that the earlier op's stream records after the
  // earlier op, but only after the wait: it looks as if it ordered the two. The most recent few
  // waits are looked at, so that explaining stays cheap when there are thousands of conflicts.
  int misleading_wait(int earlier, int later) const {
    constexpr int kLook = 8;
    const auto& waits = waits_[op(later).stream];
    auto end = std::lower_bound(waits.begin(), waits.end(), later);
    for (int n = 0; end != waits.begin() && n < kLook; ++n) {
      int w = *--end;
      const auto& recs = records_of_event_[op(w).event];
      auto r = std::upper_bound(recs.begin(), recs.end(), std::max(earlier, w));
      for (int k = 0; r != recs.end() && k < kLook; ++r, ++k)
        if (op(*r).stream == op(earlier).stream) return w;
    }
    return -1;
  }

  void explain_wait(Finding& f, int earlier, int w) {
    const auto& recs = records_of_event_[op(w).event];
    int later_record = *std::upper_bound(recs.begin(), recs.end(), std::max(earlier, w));
    const std::string& event = exp_.events[op(w).event].name;
    f.related.push_back(
        {op(w).loc,
         waited_unrecorded(w)
             ? fmt::format(
                   "this wait on '{}' comes before any record of it, so it orders nothing; '{}' is "
                   "recorded after op '{}' only at line {}",
                   event, event, op(earlier).id, op(later_record).loc.line)
             : fmt::format(
                   "this wait binds to the record of '{}' issued before it, which does not include "
                   "op '{}'; the record at line {} comes after the wait",
                   event, op(earlier).id, op(later_record).loc.line)});
  }

  bool waited_unrecorded(int w) const {
    return std::find(unrecorded_.begin(), unrecorded_.end(), w) != unrecorded_.end();
  }

  struct LegacyBarrier {
    std::vector<int> waits_for;
    std::set<int> holds;
  };

  const Experiment& exp_;
  bool check_fixes_;
  std::span<const Op> ops_;
  bool top_level_;
  WalkFacts facts_;
  HappensBefore hb_;
  Findings out_;
  std::vector<LiveSet<Record>> live_;                 // per buffer
  std::vector<std::optional<StreamPoint>> alloc_at_;  // per buffer: where mallocAsync allocates it
  std::vector<int> allocates_, frees_;                // per op: the buffer it allocates, frees
  std::set<std::pair<int, int>> reported_;  // (earlier op, buffer) pairs of the current op
  std::vector<int> records_, unrecorded_;  // record ops; waits, syncs, queries of unrecorded events
  std::vector<std::vector<int>> records_of_event_;  // per event: its record ops, in issue order
  std::vector<bool> consumed_;           // per op: a record some wait, sync or query uses
  std::vector<std::vector<int>> waits_;  // per stream: its streamWaitEvent ops
  std::map<int, LegacyBarrier> legacy_;  // per legacy-stream op that serializes something
  std::vector<Conflict> conflicts_;
  std::vector<size_t> unused_records_;  // findings of records nothing uses
  std::map<std::tuple<std::string_view, int, int, int, int, int>, size_t>
      made_;  // by code, places, buffer
};

// --- after the walk: loop repeats folded, `allow`s applied, source order ---

std::string fold_key(const Finding& f) {
  std::string key = fmt::format("{}|{}:{}|{}", f.code, f.loc.line, f.loc.col, f.buffer);
  for (const auto& r : f.related) key += fmt::format("|{}:{}", r.loc.line, r.loc.col);
  return key;
}

void fold_repeats(Findings& findings) {
  std::map<std::string, size_t> first;
  std::vector<Finding> kept;
  for (auto& f : findings.items()) {
    auto [it, fresh] = first.try_emplace(fold_key(f), kept.size());
    if (fresh)
      kept.push_back(std::move(f));
    else
      kept[it->second].repeats += f.repeats;
  }
  findings.items() = std::move(kept);
}

// Acknowledges findings an op or check of the scope allows; an allowed code that acknowledges
// nothing (in no loop iteration of that op) is reported.
void apply_allows(const Experiment& exp, const Scope& scope, Findings& findings) {
  std::set<std::string> used;  // "line:col:code" of the allow lists that acknowledged something
  auto use = [&](const Allow& allow, const std::string& code) {
    if (std::find(allow.codes.begin(), allow.codes.end(), code) == allow.codes.end()) return false;
    used.insert(fmt::format("{}:{}:{}", allow.loc.line, allow.loc.col, code));
    return true;
  };
  for (auto& f : findings.items()) {
    for (int i : f.ops) f.acknowledged = use(scope.ops[i].allow, f.code) || f.acknowledged;
    for (int c : f.checks) f.acknowledged = use(exp.checks[c].allow, f.code) || f.acknowledged;
  }
  std::set<std::string> reported;
  auto report_unused = [&](const Allow& allow, const std::string& what) {
    for (const auto& code : allow.codes) {
      std::string key = fmt::format("{}:{}:{}", allow.loc.line, allow.loc.col, code);
      if (used.contains(key) || !reported.insert(key).second) continue;
      findings.add(
          "unused-allow", allow.loc,
          fmt::format("allow: '{}' acknowledges nothing: {} gives no such diagnostic", code, what));
    }
  };
  for (const Op& o : scope.ops) report_unused(o.allow, fmt::format("op '{}'", o.id));
  if (!scope.top_level) return;
  for (const CheckSpec& c : exp.checks) report_unused(c.allow, fmt::format("check {}", c.kind));
}

// A graph's body, analyzed as a capture runs: on its own, each forked stream starting from the
// fork (an op inside a capture depends only on what the capture recorded before it). From outside,
// the graph is one op of its stream touching everything its body touches. Findings point at the
// body's ops; an allow on the graph op or on a body op acknowledges them.
void analyze_graph_body(const Experiment& exp, int graph, Findings& into) {
  Scope body{exp.ops[graph].body, false};
  Findings inner = Analyzer(exp, body).run();
  fold_repeats(inner);
  apply_allows(exp, body, inner);
  for (Finding& f : inner.items()) {
    f.ops = {graph};
    f.checks.clear();
    into.items().push_back(std::move(f));
  }
}

}  // namespace

Findings analyze(const Experiment& exp) {
  Scope top{exp.ops, true};
  Findings findings = Analyzer(exp, top).run();
  for (size_t i = 0; i < exp.ops.size(); ++i)
    if (!exp.ops[i].body.empty()) analyze_graph_body(exp, static_cast<int>(i), findings);
  fold_repeats(findings);
  apply_allows(exp, top, findings);
  std::stable_sort(findings.items().begin(), findings.items().end(),
                   [](const Finding& a, const Finding& b) {
                     return std::tuple(a.loc.line, a.loc.col, a.severity) <
                            std::tuple(b.loc.line, b.loc.col, b.severity);
                   });
  return findings;
}

FindingCounts count_findings(const Findings& findings) {
  FindingCounts n;
  for (const auto& f : findings.items()) {
    if (f.acknowledged)
      ++n.acknowledged;
    else if (f.severity == Severity::error)
      ++n.errors;
    else if (f.severity == Severity::warning)
      ++n.warnings;
    else
      ++n.notes;
  }
  return n;
}

}  // namespace streamlab

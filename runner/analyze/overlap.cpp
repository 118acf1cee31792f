// One pass over the walk's facts per pitfall. Each speaks of the op list as written: a finding in
// a loop is reported once, at its line, with the loop's variable in its advice.
#include "runner/analyze/overlap.hpp"

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "runner/analyze/fixes.hpp"
#include "runner/core/suggest.hpp"

namespace streamlab {
namespace {

// How far back in a stream one-stream looks for an op that could have run beside another: the
// ops issued a few before it, where a pipeline's neighbouring stages are.
constexpr int kWindow = 8;
// Copies below this size (256 KiB: 5 us at 50 GB/s, a PCIe 5.0 link's pace) cost about as much
// to issue and start as they take to move (docs/semantics.md, O3).
constexpr int64_t kSmallCopyBytes = 256 << 10;
// Fixes of sync-in-loop are checked by analyzing the fixed op list: at most this many per run.
constexpr int kCheckedFixes = 8;

std::string_view engine_name(Engine e) {
  switch (e) {
    case Engine::copy_h2d:
      return "a host-to-device copy";
    case Engine::copy_d2h:
      return "a device-to-host copy";
    case Engine::copy_other:
      return "a copy";
    case Engine::compute:
      return "a kernel";
    case Engine::none:
      break;
  }
  return "work";
}

bool conflict(const std::vector<Access>& x, const std::vector<Access>& y) {
  for (const Access& a : x)
    for (const Access& b : y)
      if (a.range.buffer == b.range.buffer && (a.write || b.write) &&
          a.range.offset < b.range.offset + b.range.count &&
          b.range.offset < a.range.offset + a.range.count)
        return true;
  return false;
}

class OverlapPitfalls {
 public:
  OverlapPitfalls(const Experiment& exp, std::span<const Op> ops, const WalkFacts& facts,
                  Findings& out, const Reanalyze& reanalyze)
      : exp_(exp), ops_(ops), facts_(facts), out_(out), reanalyze_(reanalyze) {}

  void run() {
    one_stream();
    sync_in_loop();
    overhead_bound();
  }

 private:
  Engine engine(int i) const { return ops_[i].kind->engine(exp_, ops_[i]); }
  const std::string& stream_name(int s) const { return exp_.streams[s].name; }

  // --- one-stream ---

  // The device ops of each stream that use a copy engine of the host link or the SMs, in issue
  // order. A device-to-device copy is left out: beside a kernel it competes for the same device
  // memory, and overlapping the two gains little.
  std::map<int, std::vector<int>> stream_ops() const {
    std::map<int, std::vector<int>> out;
    for (size_t i = 0; i < ops_.size(); ++i) {
      Engine e = engine(static_cast<int>(i));
      if (facts_.at[i] && ops_[i].device_work && e != Engine::none && e != Engine::copy_other)
        out[facts_.at[i]->stream].push_back(static_cast<int>(i));
    }
    return out;
  }

  // The op of `list` before position k, within the window, that ran on other hardware and that
  // op list[k] does not depend on, even through the ops between them; -1 if none.
  int independent_before(const std::vector<int>& list, size_t k) const {
    const int b = list[k];
    size_t first = k > kWindow ? k - kWindow : 0;
    std::vector<bool> needed(k, false);  // list[j] is an input of list[k], directly or not
    for (size_t j = k; j-- > first;) {
      needed[j] = conflict(facts_.accesses[list[j]], facts_.accesses[b]);
      for (size_t m = j + 1; m < k && !needed[j]; ++m)
        needed[j] = needed[m] && conflict(facts_.accesses[list[j]], facts_.accesses[list[m]]);
    }
    for (size_t j = k; j-- > first;)
      if (!needed[j] && engine(list[j]) != engine(b) && confined(list[j], b)) return list[j];
    return -1;
  }

  // Whether no other stream got device work between ops a and b (of one stream): the work is
  // confined to the stream, rather than spread over streams that take turns with it (chunks
  // dealt round-robin to a few streams are a pipeline, not this pitfall).
  bool confined(int a, int b) const {
    const int stream = facts_.at[b]->stream;
    for (int i = b - 1; i > a; --i)
      if (facts_.at[i] && ops_[i].device_work && facts_.at[i]->stream != stream &&
          engine(i) != Engine::none)
        return false;
    return true;
  }

  std::string one_stream_advice(int b) const {
    const Op& o = ops_[b];
    if (outside_loops(o))
      return "issue work that does not depend on each other to streams of its own (one stream "
             "per chain of dependent ops, in order), so that the copy engines and the SMs work "
             "at once";
    const LoopLevel& loop = o.loops->back();
    return fmt::format(
        "give each iteration of the loop at line {} a stream of its own: declare an array of "
        "streams (under streams: `chunk: {{array: {}}}`) and issue the iteration's ops with "
        "`stream: {}`, so that one iteration's copies run beside another's kernel",
        loop.line, loop.count_text, yaml_scalar("chunk[" + loop.var + "]"));
  }

  void one_stream() {
    for (const auto& [stream, list] : stream_ops()) {
      int pairs = 0, first_a = -1, first_b = -1;
      for (size_t k = 1; k < list.size(); ++k) {
        int a = independent_before(list, k);
        if (a < 0) continue;
        if (pairs++ == 0) first_a = a, first_b = list[k];
      }
      if (!pairs) continue;
      const Op &a = ops_[first_a], &b = ops_[first_b];
      Finding& f = out_.add(
          "one-stream", b.loc,
          fmt::format("op '{}' ({}) and op '{}' ({}, line {}) touch different data and could run "
                      "at the same time, but both are in stream '{}', whose order makes '{}' wait "
                      "for '{}'{}",
                      b.id, engine_name(engine(first_b)), a.id, engine_name(engine(first_a)),
                      a.loc.line, stream_name(stream), b.id, a.id,
                      pairs > 1
                          ? fmt::format(" ({} such pairs in '{}')", pairs, stream_name(stream))
                          : ""));
      f.related.push_back({a.loc, fmt::format("op '{}' is issued here, before it", a.id)});
      f.fix = one_stream_advice(first_b);
      f.ops = {first_a, first_b};
    }
  }

  // --- sync-in-loop ---

  // The ops of the iteration after op `s`'s, in its innermost loop.
  std::vector<int> next_iteration(int s) const {
    const auto& loops = *ops_[s].loops;
    const LoopLevel& inner = loops.back();
    std::vector<int> out;
    for (size_t i = static_cast<size_t>(s) + 1; i < ops_.size(); ++i) {
      const Op& o = ops_[i];
      if (outside_loops(o) || o.loops->size() < loops.size()) break;
      const LoopLevel& level = (*o.loops)[loops.size() - 1];
      if (level.instance != inner.instance) break;
      if (level.value == inner.value + 1) out.push_back(static_cast<int>(i));
      if (level.value > inner.value + 1) break;
    }
    return out;
  }

  // The streams that got device work in op `s`'s iteration before it.
  std::set<int> used_in_iteration(int s) const {
    const LoopLevel& inner = ops_[s].loops->back();
    const size_t depth = ops_[s].loops->size();
    std::set<int> out;
    for (int i = s - 1; i >= 0; --i) {
      const Op& o = ops_[i];
      if (outside_loops(o) || o.loops->size() < depth) break;
      const LoopLevel& level = (*o.loops)[depth - 1];
      if (level.instance != inner.instance || level.value != inner.value) break;
      if (facts_.at[i] && o.device_work) out.insert(facts_.at[i]->stream);
    }
    return out;
  }

  // A stream of the next iteration that the wait held back, beside one it waited for whose work
  // this iteration issued: -1 if none. A wait for an earlier iteration's work (a ring of staging
  // buffers, reused two iterations on) lets this iteration's work overlap, and is left alone.
  std::pair<int, int> held_back(const WalkFacts::HostWait& w) const {
    std::set<int> used = used_in_iteration(w.op);
    for (int i : next_iteration(w.op)) {
      if (!facts_.at[i] || !ops_[i].device_work) continue;
      for (int waited : w.streams)
        if (used.contains(waited) && waited != facts_.at[i]->stream)
          return {facts_.at[i]->stream, waited};
    }
    return {-1, -1};
  }

  void sync_in_loop() {
    std::map<std::pair<int, int>, size_t> made;  // (line, col) -> finding
    for (const WalkFacts::HostWait& w : facts_.host_waits) {
      const Op& s = ops_[w.op];
      const LoopLevel& loop = s.loops->back();
      if (loop.value + 1 >= loop.count) continue;
      auto [next, waited] = held_back(w);
      if (next < 0) continue;
      auto [it, fresh] = made.try_emplace({s.loc.line, s.loc.col}, out_.items().size());
      if (!fresh) {
        ++out_.items()[it->second].repeats;
        continue;
      }
      Finding& f = out_.add(
          "sync-in-loop", s.loc,
          fmt::format("op '{}' makes the host wait for stream '{}' in an iteration of the loop at "
                      "line {}, so the next iteration's work (in stream '{}') is issued only once "
                      "this one's is done: issue order makes the streams take turns instead of "
                      "overlapping",
                      s.id, stream_name(waited), loop.line, stream_name(next)));
      f.ops = {w.op};
      f.fix = fmt::format("wait once, after the loop at line {}, when every iteration is issued",
                          loop.line);
      offer_move(f, w.op, loop.line);
    }
  }

  // Whether `text` names the loop variable `var` (as a word).
  static bool uses(const std::string& text, const std::string& var) {
    std::regex word("(^|[^A-Za-z0-9_])" + var + "([^A-Za-z0-9_]|$)");
    return std::regex_search(text, word);
  }

  // The op list with every iteration's op `s` (its line, in its innermost loop) moved after that
  // loop: once, or per iteration when it uses the loop's variable.
  std::vector<Op> moved_after_loop(int s, bool per_iteration) const {
    const Op& sync = ops_[s];
    const int instance = sync.loops->back().instance;
    const size_t depth = sync.loops->size();
    auto in_loop = [&](const Op& o) {
      return !outside_loops(o) && o.loops->size() >= depth &&
             (*o.loops)[depth - 1].instance == instance;
    };
    size_t last = 0;
    for (size_t i = 0; i < ops_.size(); ++i)
      if (in_loop(ops_[i])) last = i;
    std::vector<Op> out, moved;
    for (size_t i = 0; i < ops_.size(); ++i) {
      const Op& o = ops_[i];
      if (in_loop(o) && o.loc.line == sync.loc.line && o.loc.col == sync.loc.col) {
        Op copy = o;
        copy.loops = std::make_shared<const std::vector<LoopLevel>>(o.loops->begin(),
                                                                    o.loops->begin() + depth - 1);
        moved.push_back(std::move(copy));
      } else {
        out.push_back(o);
      }
      if (i != last) continue;
      if (!per_iteration && !moved.empty()) moved.erase(moved.begin(), moved.end() - 1);
      out.insert(out.end(), moved.begin(), moved.end());
    }
    return out;
  }

  // The fix's edits, when its text can be moved and the moved op list shows nothing new. When it
  // would show something new, the wait orders one iteration's work after another's (they share
  // data), and the advice says so instead.
  void offer_move(Finding& f, int s, int loop_line) {
    const Op& sync = ops_[s];
    const LoopLevel& loop = sync.loops->back();
    auto text = item_text(exp_.source, sync.loc.line);
    if (!text || !reanalyze_ || checked_++ >= kCheckedFixes ||
        !is_block_item(exp_.source, sync.loc) ||
        !is_block_item(exp_.source, {"", loop.line, loop.col}))
      return;
    for (const Buffer& b : exp_.buffers)
      if (b.alloc_op >= 0 || b.free_op >= 0) return;  // moving ops would move their indices
    bool per_iteration = uses(*text, loop.var);
    if (creates_findings(moved_after_loop(s, per_iteration), f)) {
      f.fix = fmt::format(
          "the wait also orders one iteration's work after another's, which share data (moving it "
          "after the loop at line {} would make a race): give each iteration data of its own (a "
          "chunk of the buffers, indexed by {}), then wait once after the loop",
          loop_line, loop.var);
      return;
    }
    std::string moved = per_iteration ? fmt::format("- loop: {{var: {}, count: {}, ops: [{{{}}}]}}",
                                                    loop.var, yaml_scalar(loop.count_text), *text)
                                      : "- " + *text;
    f.edits = {Edit::removal(sync.loc.line, fmt::format("remove it from line {}", sync.loc.line)),
               Edit::after(loop.line, moved, fmt::format("after the loop at line {}", loop.line))};
  }

  static std::string key(const Finding& f, std::span<const Op> ops) {
    std::vector<std::string> ids;
    for (int i : f.ops) ids.push_back(ops[i].id);
    std::sort(ids.begin(), ids.end());
    return fmt::format("{}|{}|{}|{}", f.code, f.buffer, join(ids), f.checks.size());
  }

  // Whether the op list `fixed` gives a finding the experiment does not give now (beside the one
  // being fixed).
  bool creates_findings(std::vector<Op> fixed, const Finding& fixing) const {
    std::set<std::string> now;
    for (const Finding& f : out_.items()) now.insert(key(f, ops_));
    std::vector<Op> kept = fixed;
    Findings after = reanalyze_(std::move(fixed));
    for (const Finding& f : after.items())
      if (f.code != fixing.code && !now.contains(key(f, kept))) return true;
    return false;
  }

  // --- overhead-bound ---

  void overhead_bound() {
    std::vector<int> copies;
    std::set<int> streams;
    bool in_loop = false;
    int64_t largest = 0;
    for (size_t i = 0; i < ops_.size(); ++i) {
      Engine e = engine(static_cast<int>(i));
      if (!facts_.at[i] || (e != Engine::copy_h2d && e != Engine::copy_d2h)) continue;
      copies.push_back(static_cast<int>(i));
      streams.insert(facts_.at[i]->stream);
      in_loop = in_loop || !outside_loops(ops_[i]);
      largest = std::max(largest, ops_[i].kind->bytes(exp_, ops_[i]));
    }
    // Overlap is what the experiment is after: copies in several streams, or chunks in a loop.
    if (copies.size() < 4 || largest >= kSmallCopyBytes || (streams.size() < 2 && !in_loop)) return;
    const Op& first = ops_[copies.front()];
    Finding& f = out_.add(
        "overhead-bound", first.loc,
        fmt::format("each of the {} host-device copies moves at most {}: at 50 GB/s a copy that "
                    "small takes under 5 us, about what issuing and starting it costs, so "
                    "overhead sets the time and streams have little to overlap",
                    copies.size(), format_bytes(largest)));
    f.fix = outside_loops(first)
                ? "move more data per copy (at least a few MiB each)"
                : fmt::format(
                      "move more data per copy: fewer, larger chunks (at least a few MiB "
                      "each) from the loop at line {}",
                      first.loops->back().line);
    f.ops = copies;
  }

  const Experiment& exp_;
  std::span<const Op> ops_;
  const WalkFacts& facts_;
  Findings& out_;
  const Reanalyze& reanalyze_;
  int checked_ = 0;
};

}  // namespace

void find_overlap_pitfalls(const Experiment& exp, std::span<const Op> ops, const WalkFacts& facts,
                           Findings& out, const Reanalyze& reanalyze) {
  OverlapPitfalls(exp, ops, facts, out, reanalyze).run();
}

}  // namespace streamlab

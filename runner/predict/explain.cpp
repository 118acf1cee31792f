#include "runner/predict/explain.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "ops/op_kind.hpp"
#include "ops/start_gate_rule.hpp"

namespace streamlab {
namespace {

// A start later than its dependencies allow by less than this is the device's own latency, not a
// hold (launch latency is a few microseconds; event timestamps jitter by about one).
constexpr double kHeldMs = 0.015;

class Explainer {
 public:
  Explainer(const Experiment& exp, const std::vector<OpDependencies>& deps,
            const std::vector<TimelineOp>& t, double gate_open_ms, int connections)
      : exp_(exp), deps_(deps), t_(t), gate_open_(gate_open_ms),
        gate_before_(std::isnan(gate_open_ms) ? 0 : gate_opens_before(exp)),
        connections_(std::max(1, connections)), end_(t.size(), NAN) {
    out_.waits.resize(exp.ops.size());
  }

  Explanation run() {
    for (size_t i = 0; i < exp_.ops.size(); ++i) {
      host_wait(static_cast<int>(i));
      if (deps_[i].in_stream) explain_op(static_cast<int>(i));
    }
    critical_path();
    return std::move(out_);
  }

 private:
  bool timed(int op) const { return !std::isnan(t_[op].start_ms); }
  const std::string& name(int op) const { return exp_.ops[op].id; }
  std::string stream_name(int s) const { return s >= 0 ? exp_.streams[s].name : "-"; }

  // A marker (a record, a wait) has no interval of its own: it ends when it may start.
  double end_of(int op) const { return timed(op) ? t_[op].end_ms : end_[op]; }

  // The op whose end a hold comes down to: through markers to the work they stand for.
  int resolve(int op) const {
    for (int guard = 0; op >= 0 && !timed(op) && guard < 1 << 20; ++guard) {
      const OpWait& w = out_.waits[op];
      if (w.op == op || w.op < 0) break;
      op = w.op;
    }
    return op;
  }

  void host_wait(int i) {
    double latest = -1;
    for (int w : deps_[i].host_waits)
      if (end_of(w) > latest) latest = end_of(w), out_.waits[i].host_wait = resolve(w);
  }

  void explain_op(int i) {
    OpWait& w = out_.waits[i];
    const Op& op = exp_.ops[i];
    const bool gated = static_cast<size_t>(i) < gate_before_;
    double could = gated ? gate_open_ : t_[i].issue_ms;
    w.rule = std::string(wait_rule_name(gated ? WaitRule::gate : WaitRule::issue));
    w.op = gated ? -1 : blocked_host_before(i);
    for (const Dependency& d : deps_[i].device) {
      double e = end_of(d.op);
      if (std::isnan(e) || e < could) continue;
      could = e;
      w.rule = std::string(wait_rule_name(d.rule));
      w.op = d.op;
      w.stream = d.stream;
      w.event = d.event;
    }
    inherit_from_marker(w);
    w.could_ms = could;
    w.start_ms = timed(i) ? t_[i].start_ms : could;
    if (!timed(i)) end_[i] = could;
    if (timed(i) && t_[i].start_ms > could + kHeldMs) held(i, op, w);
    w.text = describe(i, w);
  }

  // Held in stream order by a marker (a wait, a record) that was itself held: the marker's reason
  // is the op's (the work after a streamWaitEvent waits for the event, not for the wait).
  void inherit_from_marker(OpWait& w) const {
    if (w.op < 0 || timed(w.op) || w.rule != "stream_order") return;
    const OpWait& m = out_.waits[w.op];
    if (m.rule.empty() || m.rule == "issue" || m.rule == "gate") return;
    w.rule = m.rule;
    w.op = m.op;
    w.stream = m.stream;
    w.event = m.event;
  }

  // The host call right before op i, when the host blocked in it (so it issued op i late).
  int blocked_host_before(int i) const {
    if (i == 0) return -1;
    const TimelineOp& prev = t_[i - 1];
    return prev.return_ms - prev.issue_ms > kHeldMs && !deps_[i - 1].host_waits.empty() ? i - 1 : -1;
  }

  // It started later than its dependencies allowed: something it shares held it.
  void held(int i, const Op& op, OpWait& w) {
    const double could = w.could_ms, start = t_[i].start_ms;
    // A hardware queue: the op before it in its queue, of another stream, started late itself.
    const int queue = op.stream % connections_;
    for (int j = i - 1; j >= 0; --j) {
      if (!deps_[j].in_stream || exp_.ops[j].stream % connections_ != queue) continue;
      if (exp_.ops[j].stream == op.stream) break;
      double js = timed(j) ? t_[j].start_ms : end_[j];
      if (js > could + kHeldMs && js <= start + kHeldMs) {
        set(w, WaitRule::queue, resolve(j), exp_.ops[j].stream);
        return;
      }
      break;
    }
    const Engine mine = op.kind->engine(exp_, op);
    // What ran on the same part of the device and ended closest before it started.
    int best = -1;
    for (size_t j = 0; j < exp_.ops.size(); ++j) {
      if (static_cast<int>(j) == i || !timed(static_cast<int>(j))) continue;
      const Op& other = exp_.ops[j];
      if (op.self_timed != other.self_timed) continue;
      if (!op.self_timed && other.kind->engine(exp_, other) != mine) continue;
      const TimelineOp& o = t_[j];
      if (o.start_ms > could + kHeldMs || o.end_ms < could) continue;  // not busy when it could start
      if (o.end_ms > start + kHeldMs) {  // still running when it started: it shared rather than waited
        if (best < 0) best = static_cast<int>(j);
        continue;
      }
      if (best < 0 || o.end_ms > t_[best].end_ms || t_[best].end_ms > start + kHeldMs) best = static_cast<int>(j);
    }
    if (best < 0) {
      set(w, WaitRule::latency, -1, -1);
      return;
    }
    WaitRule rule = op.self_timed            ? WaitRule::host_thread
                    : mine == Engine::compute ? WaitRule::sms
                                              : WaitRule::copy_engine;
    set(w, rule, best, exp_.ops[best].stream);
  }

  static void set(OpWait& w, WaitRule rule, int op, int stream) {
    w.rule = std::string(wait_rule_name(rule));
    w.op = op;
    w.stream = stream;
    w.event = -1;
  }

  std::string after(int op) const {
    int r = resolve(op);
    if (r < 0) return "";
    if (r == op) return fmt::format("'{}'", name(op));
    return fmt::format("'{}' (through '{}')", name(r), name(op));
  }

  std::string describe(int i, const OpWait& w) const {
    const double late = w.start_ms - w.could_ms;
    std::string held = late > kHeldMs ? fmt::format(" for {:.3f} ms", late) : "";
    if (w.rule == "issue")
      return w.op >= 0 ? fmt::format("issued once the host returned from '{}', which waited for {}",
                                     name(w.op), after(out_.waits[w.op].host_wait))
                       : "started once the host issued it";
    if (w.rule == "gate") return "held by the start gate until the repetition was issued";
    if (w.rule == "stream_order") return fmt::format("stream order: after {} in {}", after(w.op), stream_name(exp_.ops[i].stream));
    if (w.rule == "event") {
      int record = w.op;
      const OpWait& rw = out_.waits[record];
      return fmt::format("event '{}': recorded in {} after {}", exp_.events[w.event].name,
                         stream_name(exp_.ops[record].stream),
                         rw.op >= 0 ? after(rw.op) : "nothing (the record was the stream's first op)");
    }
    if (w.rule == "legacy_waits")
      return fmt::format("the legacy stream waits for blocking stream {}: after {}", stream_name(w.stream), after(w.op));
    if (w.rule == "legacy_barrier")
      return fmt::format("legacy-stream barrier: blocking stream {} waits for {} on the legacy stream",
                         stream_name(exp_.ops[i].stream), after(w.op));
    if (w.rule == "group") return fmt::format("NCCL group: after {} in {}", after(w.op), stream_name(w.stream));
    if (w.rule == "queue")
      return fmt::format("hardware queue shared with stream {} (CUDA_DEVICE_MAX_CONNECTIONS={}): behind {}{}",
                         stream_name(w.stream), connections_, after(w.op), held);
    if (w.rule == "copy_engine") return fmt::format("copy engine busy with {}{}", after(w.op), held);
    if (w.rule == "sms") return fmt::format("SMs full with {}{}", after(w.op), held);
    if (w.rule == "host_thread") return fmt::format("the runtime's host-function thread busy with {}{}", after(w.op), held);
    return fmt::format("device start latency ({:.3f} ms)", late);
  }

  // An op issued late (or just issued): the path goes on through the host, to what the last
  // blocking call before it waited for.
  int host_before(int op, int blocked) const {
    if (blocked >= 0) return out_.waits[blocked].host_wait;
    for (int j = op - 1; j >= 0; --j)
      if (!deps_[j].host_waits.empty()) return out_.waits[j].host_wait;
    return -1;
  }

  // From the op that ends last, back through what held each op, to the start.
  void critical_path() {
    int cur = -1;
    double last = -1;
    for (size_t i = 0; i < exp_.ops.size(); ++i)
      if (timed(static_cast<int>(i)) && t_[i].end_ms > last) last = t_[i].end_ms, cur = static_cast<int>(i);
    std::vector<int> path;
    std::vector<bool> seen(exp_.ops.size());
    while (cur >= 0 && !seen[cur]) {
      seen[cur] = true;
      if (timed(cur)) path.push_back(cur);
      const OpWait& w = out_.waits[cur];
      int next = w.op;
      if (w.rule == "issue") next = host_before(cur, next);
      cur = next;
    }
    std::reverse(path.begin(), path.end());
    out_.critical_path = std::move(path);
  }

  const Experiment& exp_;
  const std::vector<OpDependencies>& deps_;
  const std::vector<TimelineOp>& t_;
  double gate_open_;
  size_t gate_before_;
  int connections_;
  std::vector<double> end_;  // markers: when they ended
  Explanation out_;
};

}  // namespace

Explanation explain(const Experiment& exp, const std::vector<OpDependencies>& deps,
                    const std::vector<TimelineOp>& timeline, double gate_open_ms, int connections) {
  return Explainer(exp, deps, timeline, gate_open_ms, connections).run();
}

std::vector<TimelineOp> measured_timeline(const RepetitionSample& rep) {
  std::vector<TimelineOp> out;
  for (const OpSample& s : rep.ops) out.push_back({s.issue_ms, s.return_ms, s.start_ms, s.end_ms});
  return out;
}

}  // namespace streamlab

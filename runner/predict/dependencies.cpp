#include "runner/predict/dependencies.hpp"

#include <algorithm>

#include "ops/op_kind.hpp"
#include "runner/context/happens_before.hpp"

namespace streamlab {

std::string_view wait_rule_name(WaitRule r) {
  switch (r) {
    case WaitRule::issue: return "issue";
    case WaitRule::gate: return "gate";
    case WaitRule::stream_order: return "stream_order";
    case WaitRule::event: return "event";
    case WaitRule::legacy_waits: return "legacy_waits";
    case WaitRule::legacy_barrier: return "legacy_barrier";
    case WaitRule::group: return "group";
    case WaitRule::copy_engine: return "copy_engine";
    case WaitRule::sms: return "sms";
    case WaitRule::queue: return "queue";
    case WaitRule::host_thread: return "host_thread";
    case WaitRule::latency: return "latency";
  }
  return "";
}

namespace {

// The direct dependencies of a stream-ordered op from the clock it starts with: the op before it
// in its stream, and those the legacy stream's barrier or an NCCL group adds. What the clock
// knows besides comes through these (or through the host, which waited for it before issuing),
// so it is not repeated.
void stream_dependencies(const Experiment& exp, const Op& op, const HappensBefore& hb,
                         OpDependencies& d) {
  const IssueEffects& e = *&hb.effects();
  const int own = e.at->stream;
  auto last_of = [&](int stream) {
    return e.start[stream] > 0
               ? hb.op_at({stream, e.start[stream] - 1})
               : -1;
  };
  if (e.at->index > 0) d.device.push_back({hb.op_at({own, e.at->index - 1}), WaitRule::stream_order});
  for (int s : e.legacy_waits_for)
    if (int o = last_of(s); o >= 0) d.device.push_back({o, WaitRule::legacy_waits, s});
  if (e.held_by_legacy >= 0) d.device.push_back({e.held_by_legacy, WaitRule::legacy_barrier, kLegacyStream});
  for (int s : op.rank_streams)
    if (s != own)
      if (int o = last_of(s); o >= 0) d.device.push_back({o, WaitRule::group, s});
  if (e.bound_record >= 0)
    d.device.push_back({e.bound_record, WaitRule::event, exp.ops[e.bound_record].stream, op.event});
}

}  // namespace

std::vector<OpDependencies> dependencies(const Experiment& exp) {
  HappensBefore hb(exp);
  std::vector<OpDependencies> out(exp.ops.size());
  for (size_t i = 0; i < exp.ops.size(); ++i) {
    const Op& op = exp.ops[i];
    Clock before = hb.host();
    hb.begin(static_cast<int>(i));
    op.kind->order(hb, exp, op);
    OpDependencies& d = out[i];
    if (hb.effects().at) {
      d.in_stream = true;
      stream_dependencies(exp, op, hb, d);
    }
    const Clock& after = hb.host();
    for (size_t s = 0; s < after.size(); ++s)
      if (after[s] > before[s])
        d.host_waits.push_back(hb.op_at({static_cast<int>(s), after[s] - 1}));
  }
  return out;
}

}  // namespace streamlab

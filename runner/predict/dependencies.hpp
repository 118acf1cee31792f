#pragma once
// The true dependencies of every op of an expanded op list, as the happens-before model
// (runner/context/happens_before.hpp) derives them, each with the rule that makes it: what the
// timeline model schedules by, and what the explanation of a timeline names.
#include <vector>

#include "runner/core/experiment.hpp"

namespace streamlab {

// Why an op started when it did (docs/prediction.md, "Explaining a wait").
enum class WaitRule {
  issue,           // it started as soon as the host issued it
  gate,            // the start gate held it until the repetition was issued
  stream_order,    // after the op before it in its stream
  event,           // after the work an event's record captured (a streamWaitEvent)
  legacy_waits,    // a legacy-stream op, after the earlier work of a blocking stream
  legacy_barrier,  // a blocking stream's op, after an earlier legacy-stream op
  group,           // an NCCL collective, after the other ranks' streams
  copy_engine,     // the copy engine of its direction was busy
  sms,             // the SMs were full
  queue,           // a hardware work queue shared with another stream held it
  host_thread,     // the runtime's host-function thread was busy
  latency,         // none of the above: the device's own start latency
};
std::string_view wait_rule_name(WaitRule r);

struct Dependency {
  int op = -1;  // the op that must finish first
  WaitRule rule = WaitRule::stream_order;
  int stream = -1;  // legacy_waits: the blocking stream; group: the other rank's stream
  int event = -1;   // event: the event waited for
};

struct OpDependencies {
  bool in_stream = false;           // stream-ordered: it (or its marker) runs in op.stream
  std::vector<Dependency> device;   // what must finish before it starts (in_stream ops)
  std::vector<int> host_waits;      // ops the host waits for before the call returns
};

std::vector<OpDependencies> dependencies(const Experiment& exp);

}  // namespace streamlab

#pragma once
// How the cuda backend measures device intervals (--timer). Each repetition: begin_repetition,
// then before_op / after_op around every op's API call, then, after the repetition's final device
// synchronize, end_repetition, which fills start_ms / end_ms of the device ops (milliseconds on
// the host's steady clock, from the repetition's start) and the device span.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "runner/core/experiment.hpp"
#include "runner/core/record.hpp"

namespace streamlab {

using HostClock = std::chrono::steady_clock;

class DeviceTimer {
 public:
  virtual ~DeviceTimer() = default;
  virtual std::string name() const = 0;         // "cupti", "events" or "none"
  virtual std::string description() const = 0;  // one line for reports
  // `number` is the backend's RepetitionSample::number of the repetition about to be issued.
  virtual void begin_repetition(uint64_t number, HostClock::time_point t0) = 0;
  virtual void before_op(size_t op, cudaStream_t stream) = 0;
  virtual void after_op(size_t op, cudaStream_t stream) = 0;
  virtual void end_repetition(RepetitionSample& rep) = 0;
  // After the last repetition, for timers that collect their records at the end of the run.
  virtual void finish(std::vector<RepetitionSample>&) {}
  // Whether an op issued in the running repetition (its after_op called) has finished on the
  // device; nullopt when this timer cannot tell. Called from another thread (the time limit's).
  virtual std::optional<bool> finished(size_t) const { return std::nullopt; }
};

// A pair of timing events around each device op in its own stream, read against an event
// recorded on a private non-blocking stream at the repetition's start.
std::unique_ptr<DeviceTimer> make_event_timer(const Experiment& exp);
// CUPTI activity records (kernels, copies, memsets) on the host's clock. Throws RunError naming
// the library when CUPTI cannot be loaded.
std::unique_ptr<DeviceTimer> make_cupti_timer(const Experiment& exp);
// CUPTI's id of a graph node, as its records of graph launches carry it; 0 when CUPTI is not
// loaded.
uint64_t cupti_graph_node_id(cudaGraphNode_t node);
// Spans only: no per-op device intervals and no tracing overhead.
std::unique_ptr<DeviceTimer> make_no_timer();

// Sets rep.device_span_ms from the device ops' intervals (NaN when none was measured).
void set_device_span(RepetitionSample& rep);

// One device activity of an op, as CUPTI reports it (ns on the host's steady clock), and the
// pure join that turns a repetition's records into op intervals, for testing without a GPU.
struct DeviceActivity {
  uint32_t correlation = 0;
  uint64_t start_ns = 0, end_ns = 0;
  uint64_t graph_node = 0;  // the graph node that ran it (0: not launched by a graph)
};
struct Correlation {
  uint32_t correlation = 0;
  uint64_t external = 0;  // the key pushed around the op's API call
};
// Keys are (repetition << 32) | (op + 1). Each op's interval spans all its activities (a pageable
// copy may be several); activities with a 0 timestamp (CUPTI ran out of buffer) are ignored.
uint64_t activity_key(uint64_t repetition, size_t op);
void assign_intervals(const std::vector<DeviceActivity>& activities,
                      const std::vector<Correlation>& correlations, uint64_t repetition,
                      uint64_t t0_ns, RepetitionSample& rep);

}  // namespace streamlab

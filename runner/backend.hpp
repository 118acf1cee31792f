#pragma once
// A backend runs an experiment's ops: `cuda` on the real runtime, `host` on host memory (a
// functional emulator that never claims GPU times). Backends produce records; they never print.
#include <cmath>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "runner/experiment.hpp"

namespace streamlab {

// Timings of one op in one repetition. All in milliseconds.
struct OpSample {
  double issue_ms = 0;   // host clock when the API call began, from the repetition's start
  double return_ms = 0;  // host clock when it returned
  // Device interval from timing events in the op's own stream, relative to an event recorded at
  // the repetition's start; NaN for host-only ops and on the host backend.
  double start_ms = NAN, end_ms = NAN;
  // streamQuery / eventQuery: 1 when the work was complete (cudaSuccess), 0 when not
  // (cudaErrorNotReady); -1 for other ops.
  int answer = -1;
  // A graph op, with the CUPTI timer: per captured op of its body, its device time in one replay
  // (the mean over the replays; NaN where none was measured).
  std::vector<double> body_ms{};
  // CUPTI's records of graph nodes: node id -> device ms summed over the op's launches (the
  // backend turns them into body_ms).
  std::vector<std::pair<uint64_t, double>> graph_nodes{};
  double host_ms() const { return return_ms - issue_ms; }
  double device_ms() const { return end_ms - start_ms; }
};

struct RepetitionSample {
  uint64_t number = 0;        // 1-based count of the backend's repetitions, warm-up included
  std::vector<OpSample> ops;  // by op index
  double gate_open_ms = NAN;  // host clock when the start gate opened (NaN: no gate)
  // Host clock from the gate's opening (or the first issue, without a gate) to the end of the
  // repetition's final device synchronize.
  double host_span_ms = 0;
  double device_span_ms = NAN;  // first device start to last device end (NaN: no device ops timed)
};

// An op the host backend cannot perform (a kernel compiled by NVRTC for a GPU): it skips the op
// and what depends on it, and says so.
class HostUnsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What Backend::contents throws for a buffer whose contents the backend did not compute (the host
// backend skipped an op that writes it); checks of it are not evaluated.
class ContentsUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A CUDA or runtime failure while running; the message names the op and its YAML line (exit 3).
class RunError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A fault of device code (an illegal address, a trap): CUDA reports it at whatever call comes
// next, often a later op's or the final synchronize, and the context is unusable after it. The CLI
// finds the op that caused it by running the experiment again with every op synchronized.
class DeviceFault : public RunError {
 public:
  DeviceFault(const std::string& what, std::string cuda_error, uint64_t in_repetition, int64_t at_op)
      : RunError(what), error(std::move(cuda_error)), repetition(in_repetition), op(at_op) {}
  std::string error;    // "cudaErrorIllegalAddress: an illegal memory access was encountered"
  uint64_t repetition;  // 1-based, warm-up included
  // The op whose call (or, every op synchronized, whose completion) reported it; -1: the
  // repetition's final synchronize.
  int64_t op;
};

// Whether a CUDA error is a fault of device code that poisons the context (cudaErrorIllegalAddress,
// cudaErrorLaunchFailure, ...).
bool is_device_fault(int cuda_error);

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;         // "cuda" or "host"
  virtual std::string description() const = 0;  // the device, for reports
  virtual bool measures_device_time() const = 0;
  // The device timer in use ("cupti", "events", "none") and a line describing it; after prepare().
  virtual std::string timer() const = 0;
  virtual std::string timer_description() const = 0;
  // Things the user should know about how the run was measured (a fallback, a skipped gate).
  virtual std::vector<std::string> notes() const = 0;
  // Allocates and fills every buffer (init or poison), creates streams and events.
  virtual void prepare() = 0;
  // Issues every op in order, then waits until the device is idle.
  virtual RepetitionSample run_repetition() = 0;
  // After the last repetition: fills what a timer measures only at the end of a run.
  virtual void finish(std::vector<RepetitionSample>& timed) = 0;
  // Final contents of a buffer, in host memory; valid until the next call on the backend.
  virtual std::span<const std::byte> contents(int buffer) = 0;
  // What had not finished, for the time limit's message: called on another thread while a
  // repetition runs, so it only reads progress (and asks CUDA, which is thread-safe). "" when it
  // knows nothing more than the run's phase.
  virtual std::string unfinished() const { return ""; }
};

std::unique_ptr<Backend> make_host_backend(const Experiment& exp);
enum class TimerChoice { automatic, cupti, events, none };  // automatic: CUPTI where it loads, else events
struct CudaOptions {
  TimerChoice timer = TimerChoice::automatic;
  bool gate = true;  // the start gate (start_gate.hpp)
  // Synchronize the device after every op and report the first one that faults (DeviceFault with
  // its index): how the CLI finds the op behind a fault.
  bool synchronize_each_op = false;
};
std::unique_ptr<Backend> make_cuda_backend(const Experiment& exp, int device, CudaOptions options = {});
// Destroys this process's context on `device` after a device fault (which leaves it unusable),
// so its memory is free for the run that finds the op behind the fault.
void release_cuda_device(int device);

// Number of CUDA devices; 0 with the runtime's reason in `why` when there is none (no driver,
// no GPU). The first CUDA call of the process: it also sets the process's CUDA environment.
int cuda_device_count(std::string* why);

// "op 'k1' (exp.yaml:14:5)": how errors name an op.
std::string op_context(const Op& op);

}  // namespace streamlab

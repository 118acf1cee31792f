#pragma once
// A backend runs an experiment's ops: `cuda` on the real runtime, `host` on host memory (a
// functional emulator that never claims GPU times). Backends produce records; they never print.
#include <cmath>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "runner/core/errors.hpp"
#include "runner/core/experiment.hpp"
#include "runner/core/provenance.hpp"
#include "runner/core/record.hpp"

namespace streamlab {

// Whether a CUDA error is a fault of device code that poisons the context (cudaErrorIllegalAddress,
// cudaErrorLaunchFailure, ...).
bool is_device_fault(int cuda_error);

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;         // "cuda" or "host"
  virtual std::string description() const = 0;  // the device, for reports
  // The CUDA device's name, once prepared ("NVIDIA H200"); empty on the host backend.
  virtual std::string device_name() const { return ""; }
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
  // What the repetition is doing now, in a few words, for the progress line on a terminal
  // ("in the call of op 'k1' (launch, line 31)"): called about once a second on another thread,
  // it only reads the atomics the repetition updates anyway. "" when it knows nothing.
  virtual std::string activity() const { return ""; }
  // The device's peak rates (after prepare()); unknown on the host backend.
  virtual DevicePeaks peaks() const { return {}; }
  // Facts of the device for the provenance (name, UUID, clocks, memory, link, driver, runtime),
  // once prepared; the host backend's say that no device was used.
  virtual Facts device_facts() const = 0;
};

// What the datasheet numbers of `device` give: device memory from its clock and bus width, the
// host link from the PCIe speed and width Linux reports for it (nothing known without sysfs).
DevicePeaks cuda_device_peaks(int device);
// The provenance's facts of a CUDA device (device_peaks.cpp, beside the peaks they share a source
// with): name, UUID, compute capability, SMs, clocks, memory, bus and link, driver and runtime.
Facts cuda_device_facts(int device, const DevicePeaks& peaks);
// The driver's version in the first line of /proc/driver/nvidia/version ("NVRM version: NVIDIA
// UNIX x86_64 Kernel Module  580.95.05 ...", or "... Open Kernel Module for x86_64  580.95.05 ..."
// for the open modules): its first word of digits and dots; "" when it has none.
std::string nvidia_driver_version(const std::string& nvrm_line);

std::unique_ptr<Backend> make_host_backend(const Experiment& exp);
enum class TimerChoice {
  automatic,
  cupti,
  events,
  none
};  // automatic: CUPTI where it loads, else events
struct CudaOptions {
  TimerChoice timer = TimerChoice::automatic;
  bool gate = true;  // the start gate (start_gate.hpp)
  // Synchronize the device after every op and report the first one that faults (DeviceFault with
  // its index): how the CLI finds the op behind a fault.
  bool synchronize_each_op = false;
};
std::unique_ptr<Backend> make_cuda_backend(const Experiment& exp, int device,
                                           CudaOptions options = {});
// Destroys this process's context on `device` after a device fault (which leaves it unusable),
// so its memory is free for the run that finds the op behind the fault.
void release_cuda_device(int device);

// Number of CUDA devices; 0 with the runtime's reason in `why` when there is none (no driver,
// no GPU). The first CUDA call of the process: it also sets the process's CUDA environment.
int cuda_device_count(std::string* why);

}  // namespace streamlab

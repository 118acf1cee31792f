#include "runner/execute/start_gate.hpp"

#include <algorithm>
#include <chrono>

#include <cuda.h>
#include <fmt/format.h>

#include "ops/kernels/gate.hpp"
#include "ops/op_kind.hpp"
#include "ops/start_gate_rule.hpp"
#include "runner/context/cuda_check.hpp"

namespace streamlab {
namespace {

std::string describe(const Experiment& exp, size_t opens_before, size_t blocking) {
  if (opens_before == exp.ops.size())
    return fmt::format("start gate: every stream held until all {} ops were issued",
                       exp.ops.size());
  const Op& op = exp.ops[opens_before];
  if (opens_before == blocking)
    return fmt::format(
        "start gate: opened before op '{}' (line {}), a {} that blocks the host; {} ops held",
        op.id, op.loc.line, op.kind->name, opens_before);
  return fmt::format("start gate: opened after {} ops, the most it holds", opens_before);
}

// The flag is written by this process's threads and read by the GPU over the bus.
void set_flag(int* flag, int value) {
  std::atomic_ref<int>(*flag).store(value, std::memory_order_release);
}

using WaitValue = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

// cuStreamWaitValue32 through the runtime's driver entry points: cuda.h's types only, no link to
// libcuda.
void* driver_wait_value() {
#if CUDART_VERSION >= 12050
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &fn, 12000, cudaEnableDefault,
                                       &found) == cudaSuccess &&
      found == cudaDriverEntryPointSuccess)
    return fn;
  static_cast<void>(cudaGetLastError());
#endif
  return nullptr;
}

}  // namespace

StartGate::StartGate(const Experiment& exp, const CudaState& state, bool enabled) {
  size_t blocking = first_blocking_op(exp);
  opens_before_ = std::min({blocking, exp.ops.size(), kGateMaxHeld});
  if (!enabled || !exp.gate) {
    note_ = enabled ? "start gate: off (the experiment says `gate: false`: it measures the cost of "
                      "issuing its ops)"
                    : "start gate: off (--no-gate)";
    return;
  }
  if (opens_before_ == 0) {
    if (!exp.ops.empty())
      note_ = fmt::format("start gate: not used: the first op, '{}' ({}), blocks the host",
                          exp.ops[0].id, exp.ops[0].kind->name);
    return;
  }
  note_ = describe(exp, opens_before_, blocking);
  for (size_t i = 0; i < opens_before_; ++i) {
    int s = exp.ops[i].stream;
    if (s >= 0 && std::find(streams_.begin(), streams_.end(), state.streams[s]) == streams_.end())
      streams_.push_back(state.streams[s]);
  }
  void* p = nullptr;
  STREAMLAB_CUDA(cudaHostAlloc(&p, 2 * sizeof(int), cudaHostAllocMapped));
  host_ = static_cast<int*>(p);
  set_flag(&host_[0], 1);
  set_flag(&host_[1], 0);
  STREAMLAB_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), p, 0));
  wait_value_ = driver_wait_value();
  if (!wait_value_)
    note_ += "; a spin kernel holds each stream (the driver has no cuStreamWaitValue32)";
  watcher_ = std::thread([this] { watch(); });
}

StartGate::~StartGate() {
  if (watcher_.joinable()) {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    stop_.notify_all();
    watcher_.join();
  }
  if (host_) {
    set_flag(&host_[0], 1);  // nothing may wait on memory about to be freed
    STREAMLAB_CUDA_NOEXCEPT(cudaFreeHost(host_));
  }
}

// One stream held: by its front end waiting on the flag, or by a gate kernel where that is not
// available (the driver refuses the wait, as on platforms without stream memory operations).
void StartGate::hold(cudaStream_t stream) {
  if (wait_value_) {
    auto wait = reinterpret_cast<WaitValue>(wait_value_);
    if (wait(stream, reinterpret_cast<CUdeviceptr>(device_), 1, CU_STREAM_WAIT_VALUE_GEQ) ==
        CUDA_SUCCESS)
      return;
    wait_value_ = nullptr;  // and a kernel from now on
  }
  STREAMLAB_CUDA(launch_start_gate(stream, device_, device_ + 1, kTimeoutNs));
}

void StartGate::close() {
  {
    std::lock_guard lock(mutex_);
    closed_at_ = std::chrono::steady_clock::now();
    set_flag(&host_[0], 0);
  }
  for (cudaStream_t s : streams_) hold(s);
}

void StartGate::open() {
  if (host_) set_flag(&host_[0], 1);
}

// Opens a gate still closed kTimeoutNs after its closing: the host may be waiting, in an op the
// gate rule did not expect to block, for work that the gate holds. A timeout is then kTimeoutNs
// to kTimeoutNs + kPollNs.
void StartGate::watch() {
  std::unique_lock lock(mutex_);
  while (!stop_.wait_for(lock, std::chrono::nanoseconds(kPollNs), [&] { return stopping_; })) {
    // A gate kernel that timed out has released its stream already and says so itself.
    const bool closed = std::atomic_ref<int>(host_[0]).load(std::memory_order_acquire) == 0 &&
                        std::atomic_ref<int>(host_[1]).load(std::memory_order_acquire) == 0;
    if (closed &&
        std::chrono::steady_clock::now() - closed_at_ >= std::chrono::nanoseconds(kTimeoutNs)) {
      host_timed_out_ = true;  // before the store: whoever sees the gate open sees why
      set_flag(&host_[0], 1);
    }
  }
}

bool StartGate::timed_out() {
  if (!host_) return false;
  const bool kernel = std::atomic_ref<int>(host_[1]).exchange(0) != 0;
  const bool host = host_timed_out_.exchange(false);
  return kernel || host;
}

}  // namespace streamlab

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

// cuStreamWaitValue32 and cuStreamWriteValue32 share this signature: (stream, address, value,
// flags).
using StreamValueOp = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

// A stream memory operation of the driver (cuStreamWaitValue32, cuStreamWriteValue32) through the
// runtime's driver entry points: cuda.h's types only, no link to libcuda. The CUDA 12 version is
// the v2 call, which takes no CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER: the driver answers that
// flag with CUDA_ERROR_INVALID_VALUE (an H100 and an H200, driver 580).
void* driver_entry_point(const char* name) {
#if CUDART_VERSION >= 12050
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found) ==
          cudaSuccess &&
      found == cudaDriverEntryPointSuccess)
    return fn;
  static_cast<void>(cudaGetLastError());
#else
  static_cast<void>(name);
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
  if (launches_block(exp)) {
    opens_before_ = 0;
    note_ = "start gate: off (CUDA_LAUNCH_BLOCKING=1: a launch into a held stream would never "
            "return)";
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
  wait_value_ = driver_entry_point("cuStreamWaitValue32");
  if (!wait_value_)
    note_ += "; a spin kernel holds each stream (the driver has no cuStreamWaitValue32)";
  if (streams_.size() > 1 && wait_value_) note_ += order_streams();
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
    set_flag(&host_[0], 1);  // nothing may wait on memory about to be freed: the chain follows
    // cudaFree waits for the device first (implicitly synchronizing), and so for the chain too.
    if (chain_) STREAMLAB_CUDA_NOEXCEPT(cudaFree(chain_));
    STREAMLAB_CUDA_NOEXCEPT(cudaFreeHost(host_));
  }
}

// The chain's words, and one write the driver must accept before the gate relies on it: a
// refused write would leave the next stream waiting for a value nothing writes. Returns what the
// report says about the order.
std::string StartGate::order_streams() {
  write_value_ = driver_entry_point("cuStreamWriteValue32");
  if (!write_value_)
    return "; its streams start at once, in no set order (no cuStreamWriteValue32)";
  void* p = nullptr;
  STREAMLAB_CUDA(cudaMalloc(&p, streams_.size() * sizeof(uint32_t)));
  chain_ = static_cast<uint32_t*>(p);
  STREAMLAB_CUDA(cudaMemset(chain_, 0, streams_.size() * sizeof(uint32_t)));
  auto write = reinterpret_cast<StreamValueOp>(write_value_);
  const CUresult tried =
      write(streams_[0], reinterpret_cast<CUdeviceptr>(chain_), 0, CU_STREAM_WRITE_VALUE_DEFAULT);
  // cudaMemset on device memory may return before it is done, and the experiment's streams need
  // not be ordered after it (non-blocking streams).
  STREAMLAB_CUDA(cudaDeviceSynchronize());
  if (tried == CUDA_SUCCESS)
    return "; its streams are released one after another, in the order of their first ops";
  write_value_ = nullptr;
  return fmt::format(
      "; its streams start at once, in no set order (the driver refused cuStreamWriteValue32: "
      "error {})",
      static_cast<int>(tried));
}

// One stream held: by its front end waiting on the stream before it or on the flag, or by a gate
// kernel where that is not available (the driver refuses the wait, as on platforms without stream
// memory operations).
void StartGate::hold(size_t k) {
  cudaStream_t stream = streams_[k];
  // The gate stops using each call the driver refuses, so the stream before wrote chain_[k]
  // exactly when the chain is still in use: its wait and its write both went through.
  const bool from_chain = k > 0 && chained();
  if (wait_value_) {
    auto wait = reinterpret_cast<StreamValueOp>(wait_value_);
    const auto word = from_chain ? reinterpret_cast<CUdeviceptr>(chain_ + k)
                                 : reinterpret_cast<CUdeviceptr>(device_);
    const CUresult held =
        wait(stream, word, from_chain ? generation_ : 1u, CU_STREAM_WAIT_VALUE_GEQ);
    if (held == CUDA_SUCCESS) {
      if (chained() && k + 1 < streams_.size()) release_next(k);
      return;
    }
    wait_value_ = nullptr;  // and a kernel from now on
    add_late_note(fmt::format(
        "start gate: the driver refused cuStreamWaitValue32 (error {}): a spin kernel holds "
        "each stream from then on, and its streams start at once",
        static_cast<int>(held)));
  }
  STREAMLAB_CUDA(launch_start_gate(stream, device_, device_ + 1, kTimeoutNs));
}

// Stream k, once released, releases stream k + 1, ahead of its own first op.
void StartGate::release_next(size_t k) {
  auto write = reinterpret_cast<StreamValueOp>(write_value_);
  const CUresult written = write(streams_[k], reinterpret_cast<CUdeviceptr>(chain_ + k + 1),
                                 generation_, CU_STREAM_WRITE_VALUE_DEFAULT);
  if (written == CUDA_SUCCESS) return;
  write_value_ = nullptr;  // every later stream waits on the flag itself
  add_late_note(fmt::format(
      "start gate: the driver refused cuStreamWriteValue32 (error {}): its streams start at "
      "once from then on, in no set order",
      static_cast<int>(written)));
}

void StartGate::add_late_note(std::string_view what) {
  if (!late_note_.empty()) late_note_ += "; ";
  late_note_ += what;
}

void StartGate::close() {
  {
    std::lock_guard lock(mutex_);
    closed_at_ = std::chrono::steady_clock::now();
    set_flag(&host_[0], 0);
  }
  ++generation_;
  for (size_t k = 0; k < streams_.size(); ++k) hold(k);
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

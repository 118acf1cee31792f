#include "runner/execute/start_gate.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

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
using WriteValue = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

// A stream memory operation of the driver (cuStreamWaitValue32, cuStreamWriteValue32) through the
// runtime's driver entry points: cuda.h's types only, no link to libcuda.
void* driver_entry_point(const char* name) {
#if CUDART_VERSION >= 12050
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found) ==
          cudaSuccess &&
      found == cudaDriverEntryPointSuccess)
    return fn;
  static_cast<void>(cudaGetLastError());
#endif
  static_cast<void>(name);
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
    if (s >= 0 && std::find(streams_.begin(), streams_.end(), state.streams[s]) == streams_.end()) {
      streams_.push_back(state.streams[s]);
      first_ops_.push_back(i);
    }
  }
  void* p = nullptr;
  STREAMLAB_CUDA(cudaHostAlloc(&p, 2 * sizeof(int), cudaHostAllocMapped));
  host_ = static_cast<int*>(p);
  set_flag(&host_[0], 1);
  set_flag(&host_[1], 0);
  STREAMLAB_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), p, 0));
  wait_value_ = driver_entry_point("cuStreamWaitValue32");
  write_value_ = driver_entry_point("cuStreamWriteValue32");
  if (!wait_value_)
    note_ += "; a spin kernel holds each stream (the driver has no cuStreamWaitValue32)";
  if (streams_.size() > 1 && wait_value_ && write_value_) {
    STREAMLAB_CUDA(cudaMalloc(&p, streams_.size() * sizeof(uint32_t)));
    chain_ = static_cast<uint32_t*>(p);
    // cudaMemset on device memory may return before it is done, and the experiment's streams
    // need not be ordered after it (non-blocking streams): the first repetition's writes must
    // not be overwritten by it.
    STREAMLAB_CUDA(cudaMemset(chain_, 0, streams_.size() * sizeof(uint32_t)));
    STREAMLAB_CUDA(cudaDeviceSynchronize());
  } else if (streams_.size() > 1) {
    note_ += fmt::format("; its streams start at once, in no set order (no {})",
                         wait_value_ ? "cuStreamWriteValue32" : "cuStreamWaitValue32");
  }
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
    // cudaFree waits for the device first (implicitly synchronizing), so for the chain too.
    if (chain_) STREAMLAB_CUDA_NOEXCEPT(cudaFree(chain_));
    STREAMLAB_CUDA_NOEXCEPT(cudaFreeHost(host_));
  }
}

// One stream held: by its front end waiting on the previous stream's write or on the flag, or by a
// gate kernel where that is not available (the driver refuses the wait, as on platforms without
// stream memory operations).
void StartGate::hold(size_t k) {
  cudaStream_t stream = streams_[k];
  // Each call the gate stops using once refused, so the stream before wrote chain_[k] exactly
  // when the chain is still in use: its wait and its write both went through.
  const bool from_chain = k > 0 && chained();
  if (wait_value_) {
    auto wait = reinterpret_cast<WaitValue>(wait_value_);
    const CUresult held = from_chain ? wait(stream, reinterpret_cast<CUdeviceptr>(chain_ + k),
                                            generation_, CU_STREAM_WAIT_VALUE_GEQ)
                                     : wait(stream, reinterpret_cast<CUdeviceptr>(device_), 1,
                                            CU_STREAM_WAIT_VALUE_GEQ);
    if (held == CUDA_SUCCESS) {
      if (chained() && k + 1 < streams_.size()) release_next(k);
      return;
    }
    wait_value_ = nullptr;  // and a kernel from now on, which the report must say
    add_late_note(fmt::format(
        "start gate: the driver refused cuStreamWaitValue32 (error {}): a spin kernel holds "
        "each stream from then on, and its streams start at once, in no set order",
        static_cast<int>(held)));
  }
  // Holds are queued as the repetition is issued: a kernel queued late gets what is left of the
  // gate's time, so no stream is held past kTimeoutNs after the closing.
  const int64_t held_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now() - closed_at_)
                              .count();
  const uint64_t left =
      held_ns >= static_cast<int64_t>(kTimeoutNs) ? 0 : kTimeoutNs - static_cast<uint64_t>(held_ns);
  STREAMLAB_CUDA(launch_start_gate(stream, device_, device_ + 1, left));
}

// Stream k, once released, releases stream k + 1: a write ahead of its first op. Nothing before
// the write in this stream touches memory, so it needs no barrier.
void StartGate::release_next(size_t k) {
  auto write = reinterpret_cast<WriteValue>(write_value_);
  const CUresult written = write(streams_[k], reinterpret_cast<CUdeviceptr>(chain_ + k + 1),
                                 generation_, CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER);
  if (written == CUDA_SUCCESS) return;
  write_value_ = nullptr;  // every later stream waits on the flag itself
  add_late_note(fmt::format(
      "start gate: the driver refused cuStreamWriteValue32 (error {}): its streams start at once "
      "from then on, in no set order",
      static_cast<int>(written)));
}

void StartGate::add_late_note(const std::string& note) {
  late_note_ += late_note_.empty() ? note : "; " + note;
}

void StartGate::close() {
  {
    std::lock_guard lock(mutex_);
    closed_at_ = std::chrono::steady_clock::now();
    set_flag(&host_[0], 0);
  }
  ++generation_;
  next_ = 0;
}

// A stream's hold is queued just before its first op, not with the others at the closing: streams
// can share a hardware queue (CUDA_DEVICE_MAX_CONNECTIONS), which runs its work in the order it
// was queued, so a stream's first op queued behind a later stream's hold would wait for that
// stream's release. With holds queued at the closing, an H100 started stream a3's 8 MiB copy
// ahead of a2's in 20 of 20 repetitions (the GPU suite's gate-order case, CUPTI).
void StartGate::before(size_t op) {
  if (next_ < first_ops_.size() && first_ops_[next_] == op) hold(next_++);
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
    // A gate kernel that timed out has released its stream and says so itself; the kernels
    // queued after it get the time left, so they time out no later.
    const bool closed = std::atomic_ref<int>(host_[0]).load(std::memory_order_acquire) == 0 &&
                        std::atomic_ref<int>(host_[1]).load(std::memory_order_acquire) == 0;
    if (closed &&
        std::chrono::steady_clock::now() - closed_at_ >= std::chrono::nanoseconds(kTimeoutNs)) {
      host_timed_out_ = true;  // before the store: whoever sees the gate open sees why
      set_flag(&host_[0], 1);
    }
  }
}

std::string StartGate::take_late_note() { return std::exchange(late_note_, {}); }

bool StartGate::timed_out() {
  if (!host_) return false;
  const bool kernel = std::atomic_ref<int>(host_[1]).exchange(0) != 0;
  const bool host = host_timed_out_.exchange(false);
  return kernel || host;
}

}  // namespace streamlab

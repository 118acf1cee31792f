// The cuda backend: every op issued to the real CUDA runtime, every call checked. Each device op
// is bracketed by a pair of timing events in its own stream (never the legacy stream for an op
// that is not on it: recording there would add a barrier, cuda_semantics.md section 12).
#include <chrono>
#include <cstdlib>

#include <fmt/format.h>

#include "ops/op.hpp"
#include "runner/backend.hpp"
#include "runner/buffer_init.hpp"
#include "runner/cuda_check.hpp"
#include "runner/cuda_state.hpp"

namespace streamlab {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct StreamDestroy {
  void operator()(cudaStream_t s) const noexcept { STREAMLAB_CUDA_NOEXCEPT(cudaStreamDestroy(s)); }
};
struct EventDestroy {
  void operator()(cudaEvent_t e) const noexcept { STREAMLAB_CUDA_NOEXCEPT(cudaEventDestroy(e)); }
};
using UniqueStream = std::unique_ptr<CUstream_st, StreamDestroy>;
using UniqueEvent = std::unique_ptr<CUevent_st, EventDestroy>;
using Memory = std::unique_ptr<void, void (*)(void*)>;

void free_device(void* p) { STREAMLAB_CUDA_NOEXCEPT(cudaFree(p)); }
void free_pinned(void* p) { STREAMLAB_CUDA_NOEXCEPT(cudaFreeHost(p)); }
void free_pageable(void* p) { std::free(p); }

UniqueStream create_stream(bool non_blocking) {
  cudaStream_t s = nullptr;
  STREAMLAB_CUDA(cudaStreamCreateWithFlags(&s, non_blocking ? cudaStreamNonBlocking : cudaStreamDefault));
  return UniqueStream(s);
}

UniqueEvent create_event() {
  cudaEvent_t e = nullptr;
  STREAMLAB_CUDA(cudaEventCreate(&e));
  return UniqueEvent(e);
}

Memory allocate(const Buffer& b) {
  void* p = nullptr;
  auto bytes = static_cast<size_t>(b.bytes);
  switch (b.memory) {
    case MemoryKind::device: STREAMLAB_CUDA(cudaMalloc(&p, bytes)); return Memory(p, free_device);
    case MemoryKind::pinned: STREAMLAB_CUDA(cudaMallocHost(&p, bytes)); return Memory(p, free_pinned);
    case MemoryKind::pageable: break;
  }
  // Plain malloc, as a hand-written program gets its pageable buffers: the driver's staging of
  // pageable copies depends on the source's alignment and pages, so anything else would differ.
  p = std::malloc(bytes);
  if (!p) throw std::bad_alloc();
  return Memory(p, free_pageable);
}

std::string describe_buffer(const Buffer& b) {
  return fmt::format("buffer '{}' ({}:{}:{}, {} bytes of {} memory)", b.name, b.loc.file, b.loc.line, b.loc.col,
                     b.bytes, memory_kind_name(b.memory));
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(const Experiment& exp, int device) : exp_(exp), device_(device), state_{exp, {}, {}, {}} {}

  ~CudaBackend() override {
    // Work may still be queued after a failure: let it finish before its memory is freed.
    STREAMLAB_CUDA_NOEXCEPT(cudaDeviceSynchronize());
  }

  std::string name() const override { return "cuda"; }
  std::string description() const override { return description_; }
  bool measures_device_time() const override { return true; }

  void prepare() override {
    STREAMLAB_CUDA(cudaSetDevice(device_));
    describe_device();
    create_streams();
    for (const Buffer& b : exp_.buffers) {
      try {
        allocate_and_fill(b);
      } catch (const CudaError& e) {
        throw RunError(fmt::format("{}: {}", describe_buffer(b), e.what()));
      } catch (const std::bad_alloc&) {
        throw RunError(fmt::format("{}: out of host memory", describe_buffer(b)));
      }
    }
    for (size_t i = 0; i < exp_.events.size(); ++i) state_.events.push_back(own(create_event()));
    base_ = create_event();
    for (size_t i = 0; i < exp_.ops.size(); ++i) {
      op_start_.push_back(create_event());
      op_end_.push_back(create_event());
    }
    STREAMLAB_CUDA(cudaDeviceSynchronize());
  }

  RepetitionSample run_repetition() override {
    RepetitionSample rep;
    STREAMLAB_CUDA(cudaEventRecord(base_.get(), timing_stream_.get()));
    auto t0 = Clock::now();
    for (size_t i = 0; i < exp_.ops.size(); ++i) rep.ops.push_back(issue(i, t0));
    try {
      STREAMLAB_CUDA(cudaDeviceSynchronize());
    } catch (const CudaError& e) {
      throw RunError(fmt::format("while waiting for the ops of a repetition to finish (an asynchronous failure "
                                 "of an op issued before): {}", e.what()));
    }
    rep.host_span_ms = ms_since(t0);
    read_device_times(rep);
    return rep;
  }

  std::span<const std::byte> contents(int index) override {
    const Buffer& b = exp_.buffers[index];
    auto* p = static_cast<std::byte*>(state_.buffers[index]);
    if (is_host_memory(b.memory)) return {p, static_cast<size_t>(b.bytes)};
    // One staging copy per buffer: a check reads two buffers' contents at once.
    staging_.resize(exp_.buffers.size());
    auto& copy = staging_[index];
    copy.resize(static_cast<size_t>(b.bytes));
    STREAMLAB_CUDA(cudaMemcpy(copy.data(), p, copy.size(), cudaMemcpyDeviceToHost));
    return copy;
  }

 private:
  OpSample issue(size_t i, Clock::time_point t0) {
    const Op& op = exp_.ops[i];
    OpSample s;
    try {
      if (op.device_work) STREAMLAB_CUDA(cudaEventRecord(op_start_[i].get(), state_.streams[op.stream]));
      s.issue_ms = ms_since(t0);
      op.kind->run_cuda(state_, op);
      s.return_ms = ms_since(t0);
      if (op.device_work) STREAMLAB_CUDA(cudaEventRecord(op_end_[i].get(), state_.streams[op.stream]));
    } catch (const CudaError& e) {
      throw RunError(fmt::format("{}: {}", op_context(op), e.what()));
    }
    return s;
  }

  void read_device_times(RepetitionSample& rep) {
    double first = INFINITY, last = -INFINITY;
    for (size_t i = 0; i < exp_.ops.size(); ++i) {
      if (!exp_.ops[i].device_work) continue;
      float start = 0, end = 0;
      STREAMLAB_CUDA(cudaEventElapsedTime(&start, base_.get(), op_start_[i].get()));
      STREAMLAB_CUDA(cudaEventElapsedTime(&end, base_.get(), op_end_[i].get()));
      rep.ops[i].start_ms = start, rep.ops[i].end_ms = end;
      first = std::min(first, double(start)), last = std::max(last, double(end));
    }
    if (first <= last) rep.device_span_ms = last - first;
  }

  void describe_device() {
    cudaDeviceProp p{};
    STREAMLAB_CUDA(cudaGetDeviceProperties(&p, device_));
    description_ = fmt::format("{} (sm_{}{}, {} SMs, {} copy engines, device {})", p.name, p.major, p.minor,
                               p.multiProcessorCount, p.asyncEngineCount, device_);
  }

  void create_streams() {
    timing_stream_ = create_stream(true);  // non-blocking: the base event orders nothing
    for (const Stream& s : exp_.streams) {
      if (s.legacy) {
        state_.streams.push_back(cudaStreamLegacy);
        continue;
      }
      streams_.push_back(create_stream(s.non_blocking));
      state_.streams.push_back(streams_.back().get());
    }
  }

  void allocate_and_fill(const Buffer& b) {
    memory_.push_back(allocate(b));
    void* p = memory_.back().get();
    state_.buffers.push_back(p);
    if (is_host_memory(b.memory)) {
      fill_initial(b, static_cast<std::byte*>(p));  // also touches every page before timing
    } else if (is_poisoned(b)) {
      STREAMLAB_CUDA(cudaMemset(p, kPoisonByte, static_cast<size_t>(b.bytes)));
    } else {
      std::vector<std::byte> initial(static_cast<size_t>(b.bytes));
      fill_initial(b, initial.data());
      STREAMLAB_CUDA(cudaMemcpy(p, initial.data(), initial.size(), cudaMemcpyHostToDevice));
    }
  }

  cudaEvent_t own(UniqueEvent e) {
    user_events_.push_back(std::move(e));
    return user_events_.back().get();
  }

  const Experiment& exp_;
  int device_;
  std::string description_;
  CudaState state_;
  // Declaration order is destruction order reversed: memory goes after the streams using it.
  std::vector<Memory> memory_;
  std::vector<UniqueStream> streams_;
  UniqueStream timing_stream_;
  std::vector<UniqueEvent> user_events_, op_start_, op_end_;
  UniqueEvent base_;
  std::vector<std::vector<std::byte>> staging_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(const Experiment& exp, int device) {
  return std::make_unique<CudaBackend>(exp, device);
}

int cuda_device_count(std::string* why) {
  // Load every kernel when the context is created, so lazy loading never lands in a timed
  // repetition; a value the user set is kept.
  setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    if (why) *why = fmt::format("{}: {}", cudaGetErrorName(e), cudaGetErrorString(e));
    return 0;
  }
  if (count == 0 && why) *why = "no CUDA device found";
  return count;
}

}  // namespace streamlab

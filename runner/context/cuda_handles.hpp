#pragma once
// Move-only owners of CUDA streams and events, for the cuda backend and its timers.
#include <memory>

#include <cuda_runtime_api.h>

#include "runner/context/cuda_check.hpp"

namespace streamlab {

struct StreamDestroy {
  void operator()(cudaStream_t s) const noexcept { STREAMLAB_CUDA_NOEXCEPT(cudaStreamDestroy(s)); }
};
struct EventDestroy {
  void operator()(cudaEvent_t e) const noexcept { STREAMLAB_CUDA_NOEXCEPT(cudaEventDestroy(e)); }
};
using UniqueStream = std::unique_ptr<CUstream_st, StreamDestroy>;
using UniqueEvent = std::unique_ptr<CUevent_st, EventDestroy>;

inline UniqueStream create_stream(bool non_blocking, int priority = 0) {
  cudaStream_t s = nullptr;
  STREAMLAB_CUDA(cudaStreamCreateWithPriority(
      &s, non_blocking ? cudaStreamNonBlocking : cudaStreamDefault, priority));
  return UniqueStream(s);
}

inline UniqueEvent create_event(unsigned flags = cudaEventDefault) {
  cudaEvent_t e = nullptr;
  STREAMLAB_CUDA(cudaEventCreateWithFlags(&e, flags));
  return UniqueEvent(e);
}

}  // namespace streamlab

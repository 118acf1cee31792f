#pragma once
#include <cstddef>
#include <vector>

#include <cuda_runtime_api.h>

#include "runner/experiment.hpp"

namespace streamlab {

// What the cuda backend's ops work on: the experiment's resources as CUDA handles, by index.
struct CudaState {
  const Experiment& exp;
  std::vector<cudaStream_t> streams;  // [kLegacyStream] is cudaStreamLegacy
  std::vector<void*> buffers;         // device pointers for device memory, host pointers otherwise
  std::vector<cudaEvent_t> events;
  void* at(const BufferRange& r) const {
    return static_cast<std::byte*>(buffers[r.buffer]) + range_offset_bytes(exp, r);
  }
};

}  // namespace streamlab

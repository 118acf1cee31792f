#pragma once
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "runner/core/experiment.hpp"

namespace streamlab {

// What the cuda backend's ops work on: the experiment's resources as CUDA handles, by index.
struct CudaState {
  const Experiment& exp;
  std::vector<cudaStream_t> streams;  // [kLegacyStream] is cudaStreamLegacy
  std::vector<void*> buffers;         // device pointers for device memory, host pointers otherwise
  std::vector<cudaEvent_t> events;
  // Per op, filled while a repetition runs: what a query answered; when a host function ran
  // (milliseconds on the host's steady clock from `t0`, written by the CUDA driver's thread).
  std::vector<int> answers;
  struct HostFunctionRun {
    const CudaState* state = nullptr;
    const Op* op = nullptr;
    double start_ms = 0, end_ms = 0;
  };
  // By op, ops captured into a graph included: the driver holds a pointer to its record from the
  // capture on, so records never move (std::map's nodes are stable).
  std::map<const Op*, HostFunctionRun> host_function_runs;
  std::chrono::steady_clock::time_point t0;
  // What OpKind::prepare_cuda made, per op (ops inside a graph included), and library handles
  // shared by ops ("cublas", "cudnn"), made by the first op that needs one.
  std::map<const Op*, std::shared_ptr<void>> prepared;
  std::map<std::string, std::shared_ptr<void>, std::less<>> libraries;
  std::vector<std::string> notes;  // what preparing chose (a cuDNN algorithm), for reports
  template <class T>
  T& prepared_for(const Op& op) const {
    return *static_cast<T*>(prepared.at(&op).get());
  }
  void* at(const BufferRange& r) const {
    return static_cast<std::byte*>(buffers[r.buffer]) + range_offset_bytes(exp, r);
  }
};

}  // namespace streamlab

#pragma once
// One checking macro for every CUDA runtime call: a failure throws CudaError with the call's
// text, so the error names what failed; callers add which op and YAML line it belongs to.
#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

namespace streamlab {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t error, const std::string& call)
      : std::runtime_error(std::string(cudaGetErrorName(error)) + ": " + cudaGetErrorString(error) +
                           " (in " + call + ")"),
        code(error) {}
  cudaError_t code;
};

// A failed call also leaves its error as the thread's "last error", which the next kernel
// launch's cudaGetLastError() would report as its own; it is cleared here, so it is reported
// once, by the call that failed.
inline void cuda_check(cudaError_t code, const char* call) {
  if (code == cudaSuccess) return;
  static_cast<void>(cudaGetLastError());
  throw CudaError(code, call);
}

}  // namespace streamlab

#define STREAMLAB_CUDA(call) ::streamlab::cuda_check((call), #call)
// For destructors: a failure to release is not worth an exception during unwinding.
#define STREAMLAB_CUDA_NOEXCEPT(call) static_cast<void>((call) == cudaSuccess || cudaGetLastError())

#pragma once
#include <cuda_runtime_api.h>

#include "ops/kernels/kernel_abi.hpp"

namespace streamlab {

// spin(us): every block waits `us` microseconds on the GPU's global timer, then exits. Writes
// nothing: the kernel of concurrency and overlap experiments, whose duration does not depend on
// how many SMs it shares.
cudaError_t launch_spin(const LaunchDims& dims, cudaStream_t stream, const KernelArgs& args,
                        int64_t times);
void host_spin(const LaunchDims& dims, const KernelArgs& args);

}  // namespace streamlab

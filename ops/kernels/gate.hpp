#pragma once
#include <cstdint>

#include <cuda_runtime_api.h>

namespace streamlab {

// The start gate: one thread that spins until the host sets *flag (mapped host memory), or until
// timeout_ns has passed on the GPU's global timer, in which case it sets *timed_out. Work queued
// behind it in its stream starts only when the host opens the gate.
cudaError_t launch_start_gate(cudaStream_t stream, const volatile int* flag, int* timed_out,
                              uint64_t timeout_ns);

}  // namespace streamlab

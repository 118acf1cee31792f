#pragma once
// The benches' check of a CUDA call: a hand-written program stops at the first failure, naming the
// call and its line, as a student's program with such a macro does.
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime_api.h>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "%s: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(3);                                                                                \
    }                                                                                              \
  } while (0)

#pragma once
// The programs of the reference material and of the claims (docs/results.md), written by hand the
// way a student writes them, one repetition per call. bench/compare.cpp runs each beside the
// equivalent experiment, repetition for repetition, in the same process. Plain C++17: nvcc compiles
// the implementation (hand_written.cu).
#include <memory>
#include <string>
#include <vector>

namespace bench {

class HandWritten {
 public:
  virtual ~HandWritten() = default;
  // Issues the program's calls and returns after the final cudaDeviceSynchronize.
  virtual void repetition() = 0;
  // Whether the results of the last repetition are right.
  virtual bool valid() const = 0;
  // Whether to record when each call returns (compare --calls); off by default.
  virtual void record_calls(bool) {}
  // When each CUDA call of the last repetition returned, in ms from the repetition's start, in the
  // order of the experiment's ops (compare --calls sets them beside the runner's); empty where a
  // program does not record them, or was not asked to.
  virtual std::vector<double> call_returns_ms() const { return {}; }
};

// C6's transpose program: two NxN int32 transposes, version "default" (legacy stream, pageable,
// cudaMemcpy), "streams" (kernels in two streams) or "pinned" (two streams, pinned memory,
// cudaMemcpyAsync).
std::unique_ptr<HandWritten> two_transposes(const std::string& version, int n);
// C1: four spin kernels of `us` microseconds in one stream or in four.
std::unique_ptr<HandWritten> spins(int streams, long long us);
// C5: a spin kernel of `us` microseconds and a `mib` MiB pinned H2D copy, in one stream or two.
std::unique_ptr<HandWritten> copy_and_kernel(int streams, long long us, long long mib);
// C10: 1000 empty kernels launched one by one, then replayed from a graph captured once.
std::unique_ptr<HandWritten> graph_launch(int kernels);
// The timers' pipeline: `cycles` cycles of four streams, each copying n floats in, scaling them
// and copying them out.
std::unique_ptr<HandWritten> pipeline(int cycles, long long n);

}  // namespace bench

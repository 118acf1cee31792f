// Claims C1 and C5 written by hand, timed as streamlab times a repetition (host steady clock from
// the first call to the end of the final synchronize; median of 20 after 3 warm-ups), to compare
// with experiments/claims/ in the same job (bench/run_gpu.sh).
//   usage: claims c1_one|c1_four|c5_one|c5_two
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                                                 \
  do {                                                                                              \
    cudaError_t e_ = (call);                                                                        \
    if (e_ != cudaSuccess) {                                                                        \
      std::fprintf(stderr, "%s: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(3);                                                                                 \
    }                                                                                               \
  } while (0)

__device__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// The same kernel as streamlab's spin.
__global__ void spin(int64_t us) {
  if (threadIdx.x == 0) {
    uint64_t end = global_ns() + uint64_t(us) * 1000;
    while (global_ns() < end) __nanosleep(500);
  }
  __syncthreads();
}

int main(int argc, char** argv) {
  std::string version = argc > 1 ? argv[1] : "";
  const size_t bytes = 64u << 20;
  int *h = nullptr, *d = nullptr;
  CHECK(cudaMallocHost(&h, bytes));
  CHECK(cudaMalloc(&d, bytes));
  std::memset(h, 7, bytes);
  cudaStream_t s[4];
  for (auto& st : s) CHECK(cudaStreamCreate(&st));
  std::vector<double> spans;
  for (int r = 0; r < 23; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    if (version == "c1_one" || version == "c1_four") {
      for (int k = 0; k < 4; ++k) spin<<<1, 32, 0, s[version == "c1_four" ? k : 0]>>>(1000);
    } else if (version == "c5_one" || version == "c5_two") {
      spin<<<1, 32, 0, s[0]>>>(1000);
      CHECK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s[version == "c5_two" ? 1 : 0]));
    } else {
      std::fprintf(stderr, "usage: %s c1_one|c1_four|c5_one|c5_two\n", argv[0]);
      return 2;
    }
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    if (r >= 3)
      spans.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(spans.begin(), spans.end());
  std::printf("hand-written %s: median %.3f ms min %.3f max %.3f\n", version.c_str(), spans[spans.size() / 2],
              spans.front(), spans.back());
  return 0;
}

// transpose_tiled against a device-to-device copy, with the two matrices at several places in
// device memory (docs/timing.md, "the tiled transpose, and where its matrices sit").
//
// One pool holds both matrices, at pairs of offsets; for each element size and n, each placement
// times cudaMemcpyAsync and the built-in transpose (median of 7 launches after one, CUDA events)
// and prints the ratio of their bandwidths, both counted read + written. The first placement of
// each row is checked element by element on the GPU. A ratio that moves from one placement to
// the next is the DRAM pattern of the blocks running at once, not the kernel's arithmetic.
//   usage: transpose_placements [POOL_GIB]   (default 40: int64 at n=32768 needs 3 x 8 GiB apart)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "bench/check_cuda.hpp"
#include "ops/kernels/transpose.hpp"
#include "runner/core/stats.hpp"

namespace {

constexpr size_t kGiB = size_t(1) << 30;

template <class T>
__global__ void fill(T* p, int64_t count, uint64_t salt) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x)
    p[i] = T((uint64_t(i) * 0x9E3779B97F4A7C15ull) ^ salt);
}

template <class T>
__global__ void count_wrong(const T* in, const T* out, int64_t n, unsigned long long* wrong) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n * n;
       i += int64_t(gridDim.x) * blockDim.x)
    if (out[i] != in[(i % n) * n + i / n]) atomicAdd(wrong, 1ull);
}

// The median of 7 timed calls of f after one untimed.
template <class F>
double median_ms(F f) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  f();
  std::vector<double> t;
  for (int i = 0; i < 7; ++i) {
    CHECK(cudaEventRecord(a));
    f();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  return streamlab::summarize(std::move(t)).median;
}

void transpose(void* in, void* out, int64_t n, int64_t elem) {
  streamlab::LaunchDims d;
  const int64_t tiles = (n + streamlab::transpose_tile(elem) - 1) / streamlab::transpose_tile(elem);
  d.grid[0] = d.grid[1] = tiles;
  d.block[0] = 32, d.block[1] = 16;
  streamlab::KernelArgs k;
  k.ptr[0] = in, k.ptr[1] = out, k.scalar[2] = n, k.elem_bytes[0] = k.elem_bytes[1] = elem;
  CHECK(streamlab::launch_transpose_tiled(d, nullptr, k, 1));
}

// Whether out is the transpose of in, counted on the GPU.
bool transposed(const void* in, const void* out, int64_t n, int64_t elem) {
  unsigned long long* wrong = nullptr;
  CHECK(cudaMalloc(&wrong, sizeof *wrong));
  CHECK(cudaMemset(wrong, 0, sizeof *wrong));
  streamlab::with_elem_type(elem, [&](auto zero) {
    using T = decltype(zero);
    count_wrong<T><<<2048, 256>>>(static_cast<const T*>(in), static_cast<const T*>(out), n, wrong);
  });
  unsigned long long host = 1;
  CHECK(cudaMemcpy(&host, wrong, sizeof host, cudaMemcpyDeviceToHost));
  CHECK(cudaFree(wrong));
  return host == 0;
}

void fill_matrix(void* p, int64_t n, int64_t elem) {
  streamlab::with_elem_type(elem, [&](auto zero) {
    using T = decltype(zero);
    fill<T><<<1024, 256>>>(static_cast<T*>(p), n * n, 9);
  });
  CHECK(cudaGetLastError());
}

}  // namespace

int main(int argc, char** argv) {
  const size_t pool_gib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 40;
  char* pool = nullptr;
  CHECK(cudaMalloc(&pool, pool_gib * kGiB));
  // Clocks up before the first figure: copies for about a quarter of a second.
  for (int i = 0; i < 200; ++i)
    CHECK(cudaMemcpyAsync(pool + pool_gib / 2 * kGiB, pool, kGiB, cudaMemcpyDeviceToDevice));
  CHECK(cudaDeviceSynchronize());
  // Offsets of in and out, in GiB, scaled by 3 for matrices of 4 GiB or more.
  const double places[][2] = {{3, 5}, {0, 3}, {1, 4}, {2, 4}, {7, 10}, {5.5, 8.5}, {0, 9}, {1, 13}};
  std::printf(
      "transpose_tiled / cudaMemcpyAsync D2D, read + written, at each placement of in/out\n");
  for (int64_t elem : {8, 4, 2, 1})
    for (int64_t n : {8192, 16384, 20000, 24576, 32768}) {
      const size_t bytes = size_t(n) * size_t(n) * size_t(elem);
      const double scale = bytes >= 4 * kGiB ? 3 : 1;
      std::printf("%d-byte n=%-6lld", int(elem), static_cast<long long>(n));
      double low = 9, high = 0;
      bool first = true, ok = true;
      int placed = 0;
      for (const auto& place : places) {
        const size_t a = size_t(place[0] * scale * double(kGiB)),
                     b = size_t(place[1] * scale * double(kGiB));
        if (b < a + bytes || b + bytes > pool_gib * kGiB) continue;
        void *in = pool + a, *out = pool + b;
        fill_matrix(in, n, elem);
        const double copy =
            median_ms([&] { CHECK(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice)); });
        const double tiled = median_ms([&] { transpose(in, out, n, elem); });
        if (first) ok = transposed(in, out, n, elem);
        first = false;
        ++placed;
        const double ratio = copy / tiled;
        low = std::min(low, ratio), high = std::max(high, ratio);
        std::printf(" %.3f", ratio);
      }
      std::printf("   min %.3f max %.3f over %d placements%s\n", low, high, placed,
                  ok ? "" : "   WRONG RESULT");
      std::fflush(stdout);
      if (!ok) return 1;
    }
  return 0;
}

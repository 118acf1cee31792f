// The reference material's two-transposes program, hand-written, in its three versions, timed the
// way streamlab times a repetition: host steady clock from the first call to the end of the final
// synchronize; median over the timed repetitions after warm-up. The figures streamlab's
// experiments 02-04 are compared with, run in the same job (bench/run_c6.sh).
//   usage: two_transposes VERSION N [REPEAT WARMUP]   VERSION: default | streams | pinned
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                                   \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(3);                                                                   \
    }                                                                                 \
  } while (0)

__global__ void transpose_naive(const int* in, int* out, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < n && y < n) out[(size_t)y * n + x] = in[(size_t)x * n + y];
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s default|streams|pinned N [REPEAT WARMUP]\n", argv[0]);
    return 2;
  }
  std::string version = argv[1];
  int n = std::atoi(argv[2]);
  int repeat = argc > 3 ? std::atoi(argv[3]) : 20, warmup = argc > 4 ? std::atoi(argv[4]) : 3;
  size_t bytes = size_t(n) * n * sizeof(int);
  bool pinned = version == "pinned";
  int *h_in[2], *h_out[2], *d_in[2], *d_out[2];
  for (int i = 0; i < 2; ++i) {
    if (pinned) {
      CHECK(cudaMallocHost(&h_in[i], bytes));
      CHECK(cudaMallocHost(&h_out[i], bytes));
    } else {
      h_in[i] = static_cast<int*>(std::malloc(bytes));
      h_out[i] = static_cast<int*>(std::malloc(bytes));
    }
    for (size_t k = 0; k < size_t(n) * n; ++k) h_in[i][k] = int((k * 2654435761u + i) & 0x7fffffff);
    std::memset(h_out[i], 0xCD, bytes);
    CHECK(cudaMalloc(&d_in[i], bytes));
    CHECK(cudaMalloc(&d_out[i], bytes));
  }
  cudaStream_t s[2];
  for (auto& st : s) CHECK(cudaStreamCreate(&st));
  dim3 block(32, 32), grid((n + 31) / 32, (n + 31) / 32);
  std::vector<double> spans;
  for (int r = 0; r < warmup + repeat; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 2; ++i) {
      if (pinned) {
        CHECK(cudaMemcpyAsync(d_in[i], h_in[i], bytes, cudaMemcpyHostToDevice, s[i]));
        transpose_naive<<<grid, block, 0, s[i]>>>(d_in[i], d_out[i], n);
        CHECK(cudaMemcpyAsync(h_out[i], d_out[i], bytes, cudaMemcpyDeviceToHost, s[i]));
      } else {
        CHECK(cudaMemcpy(d_in[i], h_in[i], bytes, cudaMemcpyHostToDevice));
        transpose_naive<<<grid, block, 0, version == "streams" ? s[i] : 0>>>(d_in[i], d_out[i], n);
        CHECK(cudaMemcpy(h_out[i], d_out[i], bytes, cudaMemcpyDeviceToHost));
      }
    }
    CHECK(cudaDeviceSynchronize());
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (r >= warmup) spans.push_back(ms);
  }
  bool valid = true;
  for (int i = 0; i < 2 && valid; ++i)
    for (size_t y = 0; y < size_t(n) && valid; ++y)
      for (size_t x = 0; x < size_t(n); ++x)
        if (h_out[i][y * n + x] != h_in[i][x * n + y]) { valid = false; break; }
  std::sort(spans.begin(), spans.end());
  std::printf("hand-written two_transposes %s N=%d: median %.3f ms min %.3f max %.3f (%d reps) valid=%d\n",
              version.c_str(), n, spans[spans.size() / 2], spans.front(), spans.back(), repeat, int(valid));
  return valid ? 0 : 1;
}

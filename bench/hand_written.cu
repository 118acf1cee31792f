#include "bench/hand_written.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench/check_cuda.hpp"

namespace bench {
namespace {

__global__ void transpose_naive(const int* in, int* out, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < n && y < n) out[(size_t)y * n + x] = in[(size_t)x * n + y];
}

__device__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// The same kernel as streamlab's spin (ops/kernels/spin.cu).
__global__ void spin(long long us) {
  if (threadIdx.x == 0) {
    uint64_t end = global_ns() + uint64_t(us) * 1000;
    while (global_ns() < end) __nanosleep(500);
  }
  __syncthreads();
}

// When each call of a repetition returned, for compare --calls: a clock read per call, tens of
// ns, as the runner's own. Off unless asked for, so the program is otherwise as written by hand.
class CallClock {
 public:
  void record(bool on) { on_ = on; }
  void start() {
    if (!on_) return;
    returns_.clear();
    t0_ = std::chrono::steady_clock::now();
  }
  void returned() {
    if (!on_) return;
    returns_.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count());
  }
  const std::vector<double>& returns() const { return returns_; }

 private:
  bool on_ = false;
  std::chrono::steady_clock::time_point t0_;
  std::vector<double> returns_;
};

class TwoTransposes final : public HandWritten {
 public:
  TwoTransposes(const std::string& version, int n)
      : n_(n),
        bytes_(size_t(n) * n * sizeof(int)),
        pinned_(version == "pinned"),
        streams_(version != "default") {
    for (int i = 0; i < 2; ++i) {
      if (pinned_) {
        CHECK(cudaMallocHost(&h_in_[i], bytes_));
        CHECK(cudaMallocHost(&h_out_[i], bytes_));
      } else {
        h_in_[i] = static_cast<int*>(std::malloc(bytes_));
        h_out_[i] = static_cast<int*>(std::malloc(bytes_));
      }
      for (size_t k = 0; k < size_t(n) * n; ++k)
        h_in_[i][k] = int((k * 2654435761u + i) & 0x7fffffff);
      std::memset(h_out_[i], 0xCD, bytes_);
      CHECK(cudaMalloc(&d_in_[i], bytes_));
      CHECK(cudaMalloc(&d_out_[i], bytes_));
      CHECK(cudaStreamCreate(&s_[i]));
    }
  }
  ~TwoTransposes() override {
    for (int i = 0; i < 2; ++i) {
      if (pinned_) {
        cudaFreeHost(h_in_[i]), cudaFreeHost(h_out_[i]);
      } else {
        std::free(h_in_[i]), std::free(h_out_[i]);
      }
      cudaFree(d_in_[i]), cudaFree(d_out_[i]), cudaStreamDestroy(s_[i]);
    }
  }
  void repetition() override {
    dim3 block(32, 32), grid((n_ + 31) / 32, (n_ + 31) / 32);
    calls_.start();
    for (int i = 0; i < 2; ++i) {
      if (pinned_) {
        CHECK(cudaMemcpyAsync(d_in_[i], h_in_[i], bytes_, cudaMemcpyHostToDevice, s_[i]));
        calls_.returned();
        transpose_naive<<<grid, block, 0, s_[i]>>>(d_in_[i], d_out_[i], n_);
        calls_.returned();
        CHECK(cudaMemcpyAsync(h_out_[i], d_out_[i], bytes_, cudaMemcpyDeviceToHost, s_[i]));
        calls_.returned();
      } else {
        CHECK(cudaMemcpy(d_in_[i], h_in_[i], bytes_, cudaMemcpyHostToDevice));
        calls_.returned();
        transpose_naive<<<grid, block, 0, streams_ ? s_[i] : 0>>>(d_in_[i], d_out_[i], n_);
        calls_.returned();
        CHECK(cudaMemcpy(h_out_[i], d_out_[i], bytes_, cudaMemcpyDeviceToHost));
        calls_.returned();
      }
    }
    CHECK(cudaDeviceSynchronize());
    if (pinned_) calls_.returned();  // 04 ends with a deviceSynchronize op; 02 and 03 do not
  }
  void record_calls(bool on) override { calls_.record(on); }
  std::vector<double> call_returns_ms() const override { return calls_.returns(); }
  bool valid() const override {
    for (int i = 0; i < 2; ++i)
      for (size_t y = 0; y < size_t(n_); ++y)
        for (size_t x = 0; x < size_t(n_); ++x)
          if (h_out_[i][y * n_ + x] != h_in_[i][x * n_ + y]) return false;
    return true;
  }

 private:
  int n_;
  size_t bytes_;
  bool pinned_, streams_;
  int *h_in_[2], *h_out_[2], *d_in_[2], *d_out_[2];
  cudaStream_t s_[2];
  CallClock calls_;
};

// Streams shared by the claims programs; destroyed with the program.
class Streams {
 public:
  explicit Streams(int count) : s_(count) {
    for (auto& s : s_) CHECK(cudaStreamCreate(&s));
  }
  ~Streams() {
    for (auto& s : s_) cudaStreamDestroy(s);
  }
  cudaStream_t operator[](int i) const { return s_[i % s_.size()]; }

 private:
  std::vector<cudaStream_t> s_;
};

class Spins final : public HandWritten {
 public:
  Spins(int streams, long long us) : s_(streams), us_(us) {}
  void repetition() override {
    calls_.start();
    for (int k = 0; k < 4; ++k) {
      spin<<<1, 32, 0, s_[k]>>>(us_);
      calls_.returned();
    }
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    calls_.returned();  // the experiment's last op is the deviceSynchronize
  }
  bool valid() const override { return true; }  // nothing to check: the kernels compute nothing
  void record_calls(bool on) override { calls_.record(on); }
  std::vector<double> call_returns_ms() const override { return calls_.returns(); }

 private:
  Streams s_;
  long long us_;
  CallClock calls_;
};

class CopyAndKernel final : public HandWritten {
 public:
  CopyAndKernel(int streams, long long us, long long mib)
      : s_(streams), us_(us), bytes_(size_t(mib) << 20) {
    CHECK(cudaMallocHost(&h_, bytes_));
    CHECK(cudaMalloc(&d_, bytes_));
    std::memset(h_, 7, bytes_);
  }
  ~CopyAndKernel() override { cudaFreeHost(h_), cudaFree(d_); }
  void repetition() override {
    spin<<<1, 32, 0, s_[0]>>>(us_);
    CHECK(cudaMemcpyAsync(d_, h_, bytes_, cudaMemcpyHostToDevice, s_[1]));
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
  }
  bool valid() const override {
    std::vector<char> back(bytes_);
    CHECK(cudaMemcpy(back.data(), d_, bytes_, cudaMemcpyDeviceToHost));
    return std::memcmp(back.data(), h_, bytes_) == 0;
  }

 private:
  Streams s_;
  long long us_;
  size_t bytes_;
  char *h_ = nullptr, *d_ = nullptr;
};

// C10: `kernels` empty kernels launched one by one in a stream, then the same captured once into a
// graph and launched with one call: the shape in which C10 was first measured (3.53 vs 0.68 us per
// kernel).
__global__ void empty_kernel() {}

class GraphLaunch final : public HandWritten {
 public:
  explicit GraphLaunch(int kernels) : s_(1), kernels_(kernels) {
    CHECK(cudaStreamBeginCapture(s_[0], cudaStreamCaptureModeGlobal));
    for (int k = 0; k < kernels_; ++k) empty_kernel<<<1, 1, 0, s_[0]>>>();
    CHECK(cudaStreamEndCapture(s_[0], &graph_));
    CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
    CHECK(cudaGraphUpload(exec_, s_[0]));
    CHECK(cudaStreamSynchronize(s_[0]));
  }
  ~GraphLaunch() override { cudaGraphExecDestroy(exec_), cudaGraphDestroy(graph_); }
  void repetition() override {
    for (int k = 0; k < kernels_; ++k) empty_kernel<<<1, 1, 0, s_[0]>>>();
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaGraphLaunch(exec_, s_[0]));
    CHECK(cudaDeviceSynchronize());
  }
  bool valid() const override { return true; }  // nothing to check: the kernels compute nothing

 private:
  Streams s_;
  int kernels_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// The timers' pipeline (experiments/bench/pipeline_four_streams.yaml): in each of `cycles` cycles,
// each of four streams copies its chunk of `n` floats in from pinned memory, scales it by 2 with
// the same kernel and launch as streamlab's scale (ops/kernels/vector.cu) and copies it out.
__global__ void scale(float* x, int64_t n, float factor) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    x[i] = __fmul_rn(x[i], factor);
}

class Pipeline final : public HandWritten {
 public:
  Pipeline(int cycles, int64_t n) : s_(4), cycles_(cycles), n_(n), count_(size_t(4) * cycles * n) {
    CHECK(cudaMallocHost(&h_, count_ * sizeof(float)));
    CHECK(cudaMallocHost(&r_, count_ * sizeof(float)));
    CHECK(cudaMalloc(&d_, count_ * sizeof(float)));
    for (size_t k = 0; k < count_; ++k) h_[k] = float(k % 1000003);  // exact, and doubled exactly
    std::memset(r_, 0, count_ * sizeof(float));
  }
  ~Pipeline() override { cudaFreeHost(h_), cudaFreeHost(r_), cudaFree(d_); }
  void repetition() override {
    const size_t bytes = size_t(n_) * sizeof(float);
    for (int j = 0; j < cycles_; ++j)
      for (int i = 0; i < 4; ++i) {
        const size_t off = size_t(4 * j + i) * n_;
        CHECK(cudaMemcpyAsync(d_ + off, h_ + off, bytes, cudaMemcpyHostToDevice, s_[i]));
        scale<<<1024, 256, 0, s_[i]>>>(d_ + off, n_, 2.0f);
        CHECK(cudaMemcpyAsync(r_ + off, d_ + off, bytes, cudaMemcpyDeviceToHost, s_[i]));
      }
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
  }
  bool valid() const override {
    for (size_t k = 0; k < count_; ++k)
      if (r_[k] != 2 * h_[k]) return false;
    return true;
  }

 private:
  Streams s_;
  int cycles_;
  int64_t n_;
  size_t count_;
  float *h_ = nullptr, *r_ = nullptr, *d_ = nullptr;
};

}  // namespace

std::unique_ptr<HandWritten> graph_launch(int kernels) {
  return std::make_unique<GraphLaunch>(kernels);
}

std::unique_ptr<HandWritten> two_transposes(const std::string& version, int n) {
  return std::make_unique<TwoTransposes>(version, n);
}
std::unique_ptr<HandWritten> spins(int streams, long long us) {
  return std::make_unique<Spins>(streams, us);
}
std::unique_ptr<HandWritten> copy_and_kernel(int streams, long long us, long long mib) {
  return std::make_unique<CopyAndKernel>(streams, us, mib);
}
std::unique_ptr<HandWritten> pipeline(int cycles, long long n) {
  return std::make_unique<Pipeline>(cycles, n);
}

}  // namespace bench

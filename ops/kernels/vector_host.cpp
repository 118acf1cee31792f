// Host references of ops/kernels/vector.cu, bit for bit: float arithmetic with one rounding per
// operation, std::fma where the device uses a fused multiply-add, and the reduction's exact order.
#include <cmath>
#include <cstdint>
#include <vector>

#include "ops/kernels/vector.hpp"

namespace streamlab {
namespace {

float* f32(void* p) { return static_cast<float*>(p); }

}  // namespace

void host_empty(const LaunchDims&, const KernelArgs&) {}

void host_fill(const LaunchDims&, const KernelArgs& a) {
  float* out = f32(a.ptr[0]);
  for (int64_t i = 0; i < a.count[0]; ++i) out[i] = float(a.real[1]);
}

void host_vector_add(const LaunchDims&, const KernelArgs& a) {
  const float *x = f32(a.ptr[0]), *y = f32(a.ptr[1]);
  float* out = f32(a.ptr[2]);
  for (int64_t i = 0; i < a.count[2]; ++i) out[i] = x[i] + y[i];
}

void host_saxpy(const LaunchDims&, const KernelArgs& a) {
  const float* x = f32(a.ptr[0]);
  float* y = f32(a.ptr[1]);
  for (int64_t i = 0; i < a.count[1]; ++i) y[i] = std::fma(float(a.real[2]), x[i], y[i]);
}

void host_scale(const LaunchDims&, const KernelArgs& a) {
  float* x = f32(a.ptr[0]);
  for (int64_t i = 0; i < a.count[0]; ++i) x[i] = x[i] * float(a.real[1]);
}

// The steps compose: `rounds` of v -> a*v + c are one v -> A*v + C (mod 2^32), so the reference
// costs one pass over the elements however many rounds the device does.
void host_lcg(const LaunchDims&, const KernelArgs& a) {
  const auto* x = static_cast<const uint32_t*>(a.ptr[0]);
  auto* y = static_cast<uint32_t*>(a.ptr[1]);
  const auto step_a = uint32_t(a.scalar[3]), step_c = uint32_t(a.scalar[4]);
  uint32_t mul = 1, add = 0;
  for (int64_t r = 0; r < a.scalar[2]; ++r) mul *= step_a, add = add * step_a + step_c;
  for (int64_t i = 0; i < a.count[1]; ++i) y[i] = x[i] * mul + add;
}

void host_reduce_sum(const LaunchDims& d, const KernelArgs& a) {
  const float* in = f32(a.ptr[0]);
  float* out = f32(a.ptr[1]);
  const int64_t blocks = d.grid[0], threads = d.block[0], n = a.count[0];
  std::vector<float> partial(static_cast<size_t>(threads));
  for (int64_t b = 0; b < blocks; ++b) {
    for (int64_t t = 0; t < threads; ++t) {
      float sum = 0;
      for (int64_t i = b * threads + t; i < n; i += blocks * threads) sum += in[i];
      partial[size_t(t)] = sum;
    }
    for (int64_t s = threads / 2; s > 0; s /= 2)
      for (int64_t t = 0; t < s; ++t) partial[size_t(t)] += partial[size_t(t + s)];
    out[b] = partial[0];
  }
}

}  // namespace streamlab

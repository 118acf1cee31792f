// Host references of the transposes: the same elements the device kernels write, for the
// same launch geometry, so the host backend and the checks agree with the GPU bit for bit.
#include <algorithm>
#include <cstdint>

#include "ops/kernels/transpose.hpp"

namespace streamlab {
namespace {

// out[r][c] = in[c][r] for r in [r0, r1), c in [c0, c1), walked in 32x32 blocks so that both
// matrices stay in cache.
void transpose_region(const uint32_t* in, uint32_t* out, int64_t n, int64_t r0, int64_t r1,
                      int64_t c0, int64_t c1) {
  constexpr int64_t B = 32;
  for (int64_t rb = r0; rb < r1; rb += B)
    for (int64_t cb = c0; cb < c1; cb += B)
      for (int64_t r = rb; r < std::min(rb + B, r1); ++r)
        for (int64_t c = cb; c < std::min(cb + B, c1); ++c) out[r * n + c] = in[c * n + r];
}

}  // namespace

// Thread (x, y) writes out[y][x]: the covered rows and columns are those the grid reaches.
void host_transpose_naive(const LaunchDims& d, const KernelArgs& a) {
  int64_t n = a.scalar[2];
  int64_t rows = std::min(n, d.grid[1] * d.block[1]);
  int64_t cols = std::min(n, d.grid[0] * d.block[0]);
  transpose_region(static_cast<const uint32_t*>(a.ptr[0]), static_cast<uint32_t*>(a.ptr[1]), n, 0,
                   std::max<int64_t>(rows, 0), 0, std::max<int64_t>(cols, 0));
}

// Block (bx, by) writes the 32x32 tile of out at rows bx*32.., columns by*32...
void host_transpose_tiled(const LaunchDims& d, const KernelArgs& a) {
  int64_t n = a.scalar[2];
  int64_t rows = std::min(n, d.grid[0] * kTransposeTile);
  int64_t cols = std::min(n, d.grid[1] * kTransposeTile);
  transpose_region(static_cast<const uint32_t*>(a.ptr[0]), static_cast<uint32_t*>(a.ptr[1]), n, 0,
                   std::max<int64_t>(rows, 0), 0, std::max<int64_t>(cols, 0));
}

}  // namespace streamlab

// Host references of the transposes: the same elements the device kernels write, for the
// same launch geometry and element size, so the host backend and the checks agree with the GPU
// bit for bit.
#include <algorithm>
#include <cstdint>

#include "ops/kernels/transpose.hpp"

namespace streamlab {
namespace {

// out[r][c] = in[c][r] for r in [0, rows), c in [0, cols), walked in 32x32 blocks so that both
// matrices stay in cache. T is an unsigned integer of the element's size.
template <class T>
void transpose_region(const KernelArgs& a, int64_t rows, int64_t cols) {
  constexpr int64_t B = 32;
  const T* in = static_cast<const T*>(a.ptr[0]);
  T* out = static_cast<T*>(a.ptr[1]);
  const int64_t n = a.scalar[2];
  for (int64_t rb = 0; rb < rows; rb += B)
    for (int64_t cb = 0; cb < cols; cb += B)
      for (int64_t r = rb; r < std::min(rb + B, rows); ++r)
        for (int64_t c = cb; c < std::min(cb + B, cols); ++c) out[r * n + c] = in[c * n + r];
}

// The rows and columns the grid covers, clamped to [0, n].
void transpose_covered(const KernelArgs& a, int64_t rows, int64_t cols) {
  const int64_t n = a.scalar[2];
  rows = std::clamp<int64_t>(rows, 0, n);
  cols = std::clamp<int64_t>(cols, 0, n);
  with_elem_type(a.elem_bytes[0],
                 [&](auto zero) { transpose_region<decltype(zero)>(a, rows, cols); });
}

}  // namespace

// Thread (x, y) writes out[y][x]: the covered rows and columns are those the grid reaches.
void host_transpose_naive(const LaunchDims& d, const KernelArgs& a) {
  transpose_covered(a, d.grid[1] * d.block[1], d.grid[0] * d.block[0]);
}

// The grid writes the tiles of out in rows [0, gx*edge), columns [0, gy*edge) (transpose_tile):
// block (bx, by) the one at rows bx*edge.., columns by*edge...
void host_transpose_tiled(const LaunchDims& d, const KernelArgs& a) {
  const int64_t edge = transpose_tile(a.elem_bytes[0]);
  transpose_covered(a, d.grid[0] * edge, d.grid[1] * edge);
}

}  // namespace streamlab

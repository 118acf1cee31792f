#pragma once
#include <cstdint>

#include <cuda_runtime_api.h>

#include "ops/kernels/kernel_abi.hpp"

namespace streamlab {

// Parameters of the transposes, by position: in, out (n*n elements of 1, 2, 4 or 8 bytes, the same
// type, row-major), n. Each writes out[r][c] = in[c][r] for the elements its grid covers.
cudaError_t launch_transpose_naive(const LaunchDims& dims, cudaStream_t stream,
                                   const KernelArgs& args, int64_t times);
cudaError_t launch_transpose_tiled(const LaunchDims& dims, cudaStream_t stream,
                                   const KernelArgs& args, int64_t times);
// The race of claim C9: transpose_tiled without __syncthreads. Its host reference is the
// transpose it means to compute (the host runs no warps, so it cannot race).
cudaError_t launch_transpose_tiled_nobarrier(const LaunchDims& dims, cudaStream_t stream,
                                             const KernelArgs& args, int64_t times);
void host_transpose_naive(const LaunchDims& dims, const KernelArgs& args);
void host_transpose_tiled(const LaunchDims& dims, const KernelArgs& args);

// Calls f(T{}) with T the unsigned integer of elem_bytes bytes (1, 2 or 8; 4 otherwise, which the
// kernel table's check has made the only other case): the launchers and the host references pick
// the instance that moves elements of that size here, in one place.
template <class F>
decltype(auto) with_elem_type(int64_t elem_bytes, F&& f) {
  switch (elem_bytes) {
    case 1:
      return f(uint8_t{});
    case 2:
      return f(uint16_t{});
    case 8:
      return f(uint64_t{});
    default:
      return f(uint32_t{});
  }
}

// transpose_tiled's tile edge, in elements: a grid [gx, gy] writes the tiles of out in rows
// [0, gx*edge) and columns [0, gy*edge), one tile per block. A tile row is 512 bytes for 4- and
// 8-byte elements: with the reference material's 32-element rows each block reads and writes
// shorter runs of DRAM, and its kernel stayed at 83% of a device-to-device copy on the H200.
constexpr int64_t transpose_tile(int64_t elem_bytes) { return elem_bytes == 8 ? 64 : 128; }

// The word transpose_tiled moves per access, in bytes: 1- and 2-byte elements go 4 or 2 to a
// 32-bit word and 4-byte ones 2 to a 64-bit word, each word holding a row of a small block that the
// kernel transposes in registers; 8-byte elements go one at a time. Fewer, wider accesses: one
// element per access needed up to 4 times the memory instructions and kept int32 2% further
// from the copy limit on the H200.
constexpr int64_t transpose_word(int64_t elem_bytes) { return elem_bytes < 4 ? 4 : 8; }

// Elements from one tile row to the next in shared memory: the tile edge plus one word, which
// makes a row an odd number of words, so the threads of a warp that access a column of words hit
// distinct banks.
constexpr int64_t transpose_tile_stride(int64_t elem_bytes) {
  return transpose_tile(elem_bytes) + transpose_word(elem_bytes) / elem_bytes;
}

// The tile a block of transpose_tiled moves, by the block's place in launch order: column c and
// row r of the tiles of `in`, on a grid of gx columns by gy rows of tiles. The few hundred blocks
// that run at once go down the rows of one column of tiles: they write whole rows of `out`, and
// read a 512-byte piece of each row of `in`, all at the same offset in their rows. Where rows lie
// an odd multiple of 128 KiB apart, what that read costs depends on where the matrix sits in
// DRAM: on the H200, over eight placements in one run, int64 at n=16384 (rows 128 KiB apart)
// reached 0.918-0.952 of a device-to-device copy, int32 at n=32768 0.931-0.964. There, `paired`
// (transpose_pairs_columns), consecutive blocks take two columns half the grid apart in turn,
// whose pieces lie half a row apart: 0.968-0.978 and 0.957-0.962 in the same run. At the other
// row lengths of that run (64, 125, 192 and 256 KiB) one column was ahead by 0.5-1.5%
// (docs/timing.md has the figures).
struct TileIndex {
  int64_t c, r;
};
constexpr bool transpose_pairs_columns(int64_t row_bytes, int64_t gx) {
  constexpr int64_t k128KiB = 128 * 1024;
  return row_bytes % (2 * k128KiB) == k128KiB && gx % 2 == 0;
}
constexpr TileIndex transpose_block_tile(int64_t block, int64_t gx, int64_t gy, bool paired) {
  if (!paired) return {block / gy, block % gy};
  return {block / 2 / gy + block % 2 * (gx / 2), block / 2 % gy};
}

// Shared memory a block's tile takes, in bytes (16.5 KiB to 65 KiB). A launch adds its `shared`
// to it; CUDA refuses a block more than 48 KiB in all, or more than the tile where the tile is
// larger (the launcher opts in to that much and no more).
constexpr int64_t transpose_tile_bytes(int64_t elem_bytes) {
  return transpose_tile(elem_bytes) * transpose_tile_stride(elem_bytes) * elem_bytes;
}

}  // namespace streamlab

// The transposes' host references, for every element size: what each launch geometry writes.
// The GPU suite (gpu_test.cpp) checks the device kernels against these.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ops/kernels/transpose.hpp"

using namespace streamlab;

namespace {

constexpr uint8_t kUnwritten = 0xA5;  // every byte of out before the launch

// An n x n matrix of `bytes`-byte elements and its output, with the host reference run once.
struct HostRun {
  int64_t n, bytes;
  std::vector<uint8_t> in, out;

  HostRun(int64_t n_, int64_t bytes_) : n(n_), bytes(bytes_) {
    in.resize(size_t(n * n * bytes));
    for (size_t i = 0; i < in.size(); ++i) in[i] = uint8_t(i * 131 + i / 7);  // distinct-ish
    out.assign(in.size(), kUnwritten);
  }
  KernelArgs args() {
    KernelArgs a;
    a.ptr[0] = in.data(), a.ptr[1] = out.data(), a.scalar[2] = n;
    a.elem_bytes[0] = a.elem_bytes[1] = bytes;
    a.count[0] = a.count[1] = n * n;
    return a;
  }
  void launch(void (*host)(const LaunchDims&, const KernelArgs&), int64_t gx, int64_t gy,
              int64_t bx, int64_t by) {
    LaunchDims d;
    d.grid[0] = gx, d.grid[1] = gy, d.block[0] = bx, d.block[1] = by;
    host(d, args());
  }
  // Element (r, c) of out equals element (c, r) of in, byte for byte.
  bool transposed_at(int64_t r, int64_t c) const {
    return std::memcmp(&out[size_t((r * n + c) * bytes)], &in[size_t((c * n + r) * bytes)],
                       size_t(bytes)) == 0;
  }
  bool unwritten_at(int64_t r, int64_t c) const {
    for (int64_t b = 0; b < bytes; ++b)
      if (out[size_t((r * n + c) * bytes + b)] != kUnwritten) return false;
    return true;
  }
  // How many elements break the rule: transposed inside rows x cols, unwritten outside.
  int64_t wrong(int64_t rows, int64_t cols) const {
    int64_t bad = 0;
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < n; ++c)
        bad += (r < rows && c < cols) ? !transposed_at(r, c) : !unwritten_at(r, c);
    return bad;
  }
};

constexpr int64_t kSizes[] = {1, 2, 4, 8};

}  // namespace

TEST_CASE("transpose_tiled: the tile edge is 128 elements, 64 for 8-byte ones; rows of 512 bytes") {
  CHECK(transpose_tile(1) == 128);
  CHECK(transpose_tile(2) == 128);
  CHECK(transpose_tile(4) == 128);
  CHECK(transpose_tile(8) == 64);
  CHECK(transpose_tile(4) * 4 == 512);
  CHECK(transpose_tile(8) * 8 == 512);
  // The word each access moves, and rows padded by one word: an odd number of words, so a
  // column of words is read without bank conflicts.
  CHECK(transpose_word(1) == 4);
  CHECK(transpose_word(2) == 4);
  CHECK(transpose_word(4) == 8);
  CHECK(transpose_word(8) == 8);
  for (int64_t bytes : kSizes) {
    CAPTURE(bytes);
    int64_t words = transpose_tile_stride(bytes) * bytes / transpose_word(bytes);
    CHECK(words % 2 == 1);
    CHECK(transpose_tile_stride(bytes) * bytes % transpose_word(bytes) == 0);
    CHECK(transpose_tile_bytes(bytes) ==
          transpose_tile(bytes) * transpose_tile_stride(bytes) * bytes);
  }
  // Only int32's tile is above the 48 KiB a block gets without opting in.
  CHECK(transpose_tile_bytes(4) == 128 * 130 * 4);
  CHECK(transpose_tile_bytes(8) <= 48 * 1024);
  CHECK(transpose_tile_bytes(2) <= 48 * 1024);
}

TEST_CASE("transpose_tiled: the blocks take every tile of the grid once, in either order") {
  for (bool paired : {false, true})
    for (int64_t gx : {1, 2, 3, 4, 7, 8, 256, 257})
      for (int64_t gy : {1, 2, 5, 256}) {
        if (paired && gx % 2) continue;  // transpose_pairs_columns pairs even grids only
        CAPTURE(paired);
        CAPTURE(gx);
        CAPTURE(gy);
        std::vector<int> taken(size_t(gx * gy), 0);
        for (int64_t b = 0; b < gx * gy; ++b) {
          TileIndex t = transpose_block_tile(b, gx, gy, paired);
          REQUIRE(t.c >= 0);
          REQUIRE(t.c < gx);
          REQUIRE(t.r >= 0);
          REQUIRE(t.r < gy);
          ++taken[size_t(t.r * gx + t.c)];
        }
        CHECK(std::count(taken.begin(), taken.end(), 1) == gx * gy);
      }
  // Down one column; paired, a column and the one half the grid along, then both one row down.
  CHECK(transpose_block_tile(1, 8, 4, false).c == 0);
  CHECK(transpose_block_tile(1, 8, 4, false).r == 1);
  CHECK(transpose_block_tile(4, 8, 4, false).c == 1);
  CHECK(transpose_block_tile(1, 8, 4, true).c == 4);
  CHECK(transpose_block_tile(1, 8, 4, true).r == 0);
  CHECK(transpose_block_tile(2, 8, 4, true).c == 0);
  CHECK(transpose_block_tile(2, 8, 4, true).r == 1);
  // Paired where rows lie an odd multiple of 128 KiB apart and the columns pair up.
  CHECK(transpose_pairs_columns(16384 * 8, 256));
  CHECK(transpose_pairs_columns(32768 * 4, 256));
  CHECK(transpose_pairs_columns(49152 * 8, 768));
  CHECK_FALSE(transpose_pairs_columns(16384 * 8, 255));
  CHECK_FALSE(transpose_pairs_columns(16384 * 4, 128));
  CHECK_FALSE(transpose_pairs_columns(24576 * 8, 384));
  CHECK_FALSE(transpose_pairs_columns(32768 * 8, 512));
  CHECK_FALSE(transpose_pairs_columns(20000 * 8, 313));
}

TEST_CASE(
    "transpose host references: every element size, an edge that is not a multiple of the tile") {
  for (int64_t bytes : kSizes) {
    for (int64_t n : {1, 37, 130, 257}) {
      CAPTURE(bytes);
      CAPTURE(n);
      int64_t edge = transpose_tile(bytes);
      HostRun tiled(n, bytes);
      tiled.launch(host_transpose_tiled, (n + edge - 1) / edge, (n + edge - 1) / edge, 32, 8);
      CHECK(tiled.wrong(n, n) == 0);
      HostRun naive(n, bytes);
      naive.launch(host_transpose_naive, (n + 31) / 32, (n + 31) / 32, 32, 32);
      CHECK(naive.wrong(n, n) == 0);
    }
  }
}

TEST_CASE("transpose host references: a short grid leaves the tiles it misses unwritten") {
  for (int64_t bytes : kSizes) {
    CAPTURE(bytes);
    const int64_t n = 300, edge = transpose_tile(bytes);
    // Grid [gx, gy] writes rows [0, gx*edge), columns [0, gy*edge): grid [1, 2] covers edge rows
    // and 2*edge columns (clamped to n).
    HostRun tiled(n, bytes);
    tiled.launch(host_transpose_tiled, 1, 2, 32, 8);
    CHECK(tiled.wrong(edge, std::min(n, 2 * edge)) == 0);
    // Thread (x, y) writes out[y][x]: grid [3, 2] of [32, 8] covers 16 rows and 96 columns.
    HostRun naive(n, bytes);
    naive.launch(host_transpose_naive, 3, 2, 32, 8);
    CHECK(naive.wrong(16, 96) == 0);
    // A grid larger than needed writes nothing outside the matrix.
    HostRun big(n, bytes);
    big.launch(host_transpose_tiled, 9, 9, 32, 8);
    CHECK(big.wrong(n, n) == 0);
  }
}

// The two transposes of the reference material, for elements of 1, 2, 4 and 8 bytes. Elements
// are moved as unsigned integers of their size, so one instance serves every type of that size.
#include <cstdint>
#include <type_traits>

#include "ops/kernels/transpose.hpp"

namespace streamlab {
namespace {

// One thread per element; consecutive threads write consecutive elements of `out` (coalesced
// writes) and read a column of `in` (strided reads): the reference material's kernel.
template <class T>
__global__ void transpose_naive_kernel(const T* in, T* out, int64_t n) {
  int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  int64_t y = blockIdx.y * int64_t(blockDim.y) + threadIdx.y;
  if (x < n && y < n) out[y * n + x] = in[x * n + y];
}

// Of kRowsLeft rows of bytesPerRow bytes each that a thread moves, how many it loads at once.
template <int kRowsLeft, int kBytesPerRow>
constexpr int kBatchRows = kRowsLeft < 64 / kBytesPerRow ? kRowsLeft : 64 / kBytesPerRow;

// Calls f(b, c, j, i) for each cell a thread moves in one batch of its tile rows, from jb on: row
// j = ty + (jb + b) * kRows of the tile, column i = tx + 32 * c. Unrolled: the batch's cells are
// straight-line code, so the loads of the first call are all issued before the stores of the next.
template <int kBatch, int kCols, int kRows, class F>
__device__ __forceinline__ void for_batch(int jb, F f) {
#pragma unroll
  for (int b = 0; b < kBatch; ++b)
#pragma unroll
    for (int c = 0; c < kCols; ++c)
      f(b, c, int(threadIdx.y) + (jb + b) * kRows, int(threadIdx.x) + 32 * c);
}

template <class T>
constexpr int kEdge = int(transpose_tile(sizeof(T)));
// One element per access: a row padded by one element, or by a 32-bit bank word for smaller
// elements, which the launcher's tile (transpose_tile_bytes) always has room for.
template <class T>
constexpr int kStride = kEdge<T> + (sizeof(T) < 4 ? 4 / int(sizeof(T)) : 1);

// A kEdge x kEdge tile goes through shared memory so that both the reads and the writes are
// coalesced; the padded row (kStride) avoids bank conflicts on the transposed read. blockDim is
// [32, kRows] with kRows dividing 32: thread (tx, ty) moves columns tx, tx+32, ... of rows ty,
// ty+kRows, ... Without the barrier (transpose_tiled_nobarrier, claim C9) a thread may read a
// tile element before the thread that loads it has written it, so the output depends on warp
// timing. kChecked: the tile crosses the matrix's edge, so each element is bounds-checked; a
// tile inside it runs straight-line code, whose loads the compiler issues all at once.
template <class T, bool kBarrier, int kRows, bool kChecked>
__device__ void move_tile(const T* __restrict__ in, T* __restrict__ out, int64_t n, T* tile,
                          int64_t r0, int64_t c0) {
  const int tx = threadIdx.x, ty = threadIdx.y;
  constexpr int kCols = kEdge<T> / 32;     // elements a thread moves per tile row
  constexpr int kMine = kEdge<T> / kRows;  // tile rows a thread moves
  // Rows whose loads are in flight together: 64 bytes per thread, few enough registers that
  // register use does not cut the blocks per SM below what the tile's shared memory allows.
  constexpr int kBatch = kBatchRows<kMine, kCols* int(sizeof(T))>;
  auto inside = [&](int j, int i) { return !kChecked || (r0 + j < n && c0 + i < n); };
#pragma unroll 1
  for (int jb = 0; jb < kMine; jb += kBatch) {
    T v[kBatch][kCols];
    for_batch<kBatch, kCols, kRows>(jb, [&](int b, int c, int j, int i) {
      if (inside(j, i)) v[b][c] = in[(r0 + j) * n + c0 + i];
    });
    for_batch<kBatch, kCols, kRows>(jb, [&](int b, int c, int j, int i) {
      if (inside(j, i)) tile[j * kStride<T> + i] = v[b][c];
    });
  }
  if constexpr (kBarrier)
    __syncthreads();  // every element of the tile is loaded before any thread reads a column
#pragma unroll 8
  for (int jj = 0; jj < kEdge<T>; jj += kRows)
#pragma unroll
    for (int ii = 0; ii < kEdge<T>; ii += 32) {
      int j = ty + jj, i = tx + ii;
      if (!kChecked || (c0 + j < n && r0 + i < n))
        out[(c0 + j) * n + r0 + i] = tile[i * kStride<T> + j];
    }
}

// The tile (column c, row r of tiles of `in`) that this block moves (transpose_block_tile), in a
// matrix whose rows are row_bytes long.
__device__ __forceinline__ void block_tile(int64_t row_bytes, int64_t& c, int64_t& r) {
  const int64_t block = blockIdx.y * int64_t(gridDim.x) + blockIdx.x;
  const TileIndex t = transpose_block_tile(block, gridDim.x, gridDim.y,
                                           transpose_pairs_columns(row_bytes, gridDim.x));
  c = t.c, r = t.r;
}

template <class T, bool kBarrier, int kRows>
__global__ void transpose_tiled_kernel(const T* __restrict__ in, T* __restrict__ out, int64_t n) {
  extern __shared__ __align__(16) unsigned char shared[];
  int64_t c, r;
  block_tile(n * int64_t(sizeof(T)), c, r);
  const int64_t r0 = r * kEdge<T>, c0 = c * kEdge<T>;  // the tile of in: first row, first column
  T* tile = reinterpret_cast<T*>(shared);
  if (r0 + kEdge<T> <= n && c0 + kEdge<T> <= n)  // the same for the whole block
    move_tile<T, kBarrier, kRows, false>(in, out, n, tile, r0, c0);
  else
    move_tile<T, kBarrier, kRows, true>(in, out, n, tile, r0, c0);
}

// Transposes the kP x kP block of elements E held in the words w[0..kP) (row i in w[i]).
template <class E, class W, int kP>
__device__ void transpose_words(W (&w)[kP]) {
  if constexpr (sizeof(E) == 4) {  // two 32-bit elements in a uint2
    uint32_t t = w[0].y;
    w[0].y = w[1].x, w[1].x = t;
  } else if constexpr (kP == 2) {  // two 16-bit elements in a 32-bit word
    uint32_t a = __byte_perm(w[0], w[1], 0x5410), b = __byte_perm(w[0], w[1], 0x7632);
    w[0] = a, w[1] = b;
  } else {  // four bytes in a 32-bit word
    uint32_t a0 = __byte_perm(w[0], w[1], 0x5140), a1 = __byte_perm(w[0], w[1], 0x7362);
    uint32_t a2 = __byte_perm(w[2], w[3], 0x5140), a3 = __byte_perm(w[2], w[3], 0x7362);
    w[0] = __byte_perm(a0, a2, 0x5410), w[1] = __byte_perm(a0, a2, 0x7632);
    w[2] = __byte_perm(a1, a3, 0x5410), w[3] = __byte_perm(a1, a3, 0x7632);
  }
}

// The word of transpose_word(sizeof(E)) bytes that holds kP elements E.
template <class E>
using Word = std::conditional_t<transpose_word(sizeof(E)) == 8, uint2, uint32_t>;
template <class E>
constexpr int kPerWord = int(sizeof(Word<E>) / sizeof(E));
template <class E>  // words in a tile row
constexpr int kWordsPerRow = kEdge<E> / kPerWord<E>;

// transpose_tiled for elements smaller than its word (1, 2 and 4 bytes; kP per word), where rows
// are whole words. The same tile as transpose_tiled_kernel, seen as kWords x kWords blocks of
// kP x kP elements: a thread loads a block's kP words, transposes it in registers and stores
// word k at tile[k][block column][block row]; after the barrier each thread writes the kP words
// of one block of out.
template <class E, bool kBarrier, int kRows, bool kChecked>
__device__ void move_word_tile(const Word<E>* __restrict__ in, Word<E>* __restrict__ out, int64_t n,
                               Word<E>* tile, int64_t c, int64_t r) {
  using W = Word<E>;
  constexpr int kP = kPerWord<E>, kWords = kWordsPerRow<E>;
  constexpr int kWordStride = kWords + 1;  // tile is [kP][kWords][kWordStride]
  const int64_t nw = n / kP;               // words in a matrix row
  const int tx = threadIdx.x, ty = threadIdx.y;
  int64_t r0 = r * (kWords * kP), w0 = c * kWords;
  constexpr int kCols = kWords / 32;     // blocks a thread moves per row of blocks
  constexpr int kMine = kWords / kRows;  // rows of blocks a thread moves
  constexpr int kBatch = kBatchRows<kMine, kCols * kP* int(sizeof(W))>;  // as in move_tile
  // Block row j of the tile starts at matrix row r0 + j * kP; n is a multiple of kP.
  auto inside = [&](int j, int i) { return !kChecked || (r0 + j * kP < n && w0 + i < nw); };
#pragma unroll 1
  for (int jb = 0; jb < kMine; jb += kBatch) {
    W w[kBatch][kCols][kP];
    for_batch<kBatch, kCols, kRows>(jb, [&](int b, int c, int j, int i) {
      if (!inside(j, i)) return;
#pragma unroll
      for (int k = 0; k < kP; ++k) w[b][c][k] = in[(r0 + j * kP + k) * nw + w0 + i];
    });
    for_batch<kBatch, kCols, kRows>(jb, [&](int b, int c, int j, int i) {
      if (!inside(j, i)) return;
      transpose_words<E>(w[b][c]);
#pragma unroll
      for (int k = 0; k < kP; ++k) tile[(k * kWords + i) * kWordStride + j] = w[b][c][k];
    });
  }
  if constexpr (kBarrier) __syncthreads();
  r0 = c * (kWords * kP), w0 = r * kWords;  // the tile of out
#pragma unroll 8
  for (int jj = 0; jj < kWords; jj += kRows)
#pragma unroll
    for (int ii = 0; ii < kWords; ii += 32) {
      int j = ty + jj, i = tx + ii;
      if (!inside(j, i)) continue;  // r0 and w0 now name the tile of out
#pragma unroll
      for (int k = 0; k < kP; ++k)
        out[(r0 + j * kP + k) * nw + w0 + i] = tile[(k * kWords + j) * kWordStride + i];
    }
}

template <class E, bool kBarrier, int kRows>
__global__ void transpose_word_kernel(const Word<E>* __restrict__ in, Word<E>* __restrict__ out,
                                      int64_t n) {
  extern __shared__ __align__(16) unsigned char shared[];
  auto* tile = reinterpret_cast<Word<E>*>(shared);
  int64_t c, r;  // the tile of in: column, row
  block_tile(n * int64_t(sizeof(E)), c, r);
  if ((c + 1) * kEdge<E> <= n && (r + 1) * kEdge<E> <= n)
    move_word_tile<E, kBarrier, kRows, false>(in, out, n, tile, c, r);
  else
    move_word_tile<E, kBarrier, kRows, true>(in, out, n, tile, c, r);
}

dim3 to_dim3(const int64_t v[3]) { return dim3(unsigned(v[0]), unsigned(v[1]), unsigned(v[2])); }

template <class T>
using Kernel = void (*)(const T*, T*, int64_t);

// Launches a tile kernel with its tile as dynamic shared memory, plus the launch's own `shared`.
// A tile above the 48 KiB a block gets without asking is opted in to, and no more, so the rule
// in transpose.hpp holds for every element size.
template <class T>
cudaError_t launch_tile(Kernel<T> kernel, int64_t elem_bytes, const LaunchDims& d,
                        cudaStream_t stream, const KernelArgs& a, int64_t times) {
  constexpr int64_t kWithoutOptIn = 48 * 1024;
  const int64_t tile = transpose_tile_bytes(elem_bytes);
  if (tile > kWithoutOptIn)
    if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(tile));
        e != cudaSuccess)
      return e;
  for (int64_t t = 0; t < times; ++t)
    kernel<<<to_dim3(d.grid), to_dim3(d.block), size_t(tile + d.shared_bytes), stream>>>(
        static_cast<const T*>(a.ptr[0]), static_cast<T*>(a.ptr[1]), a.scalar[2]);
  return cudaGetLastError();
}

// One instance per block height (load checks it divides 32), so each loop's trip count is known.
template <class T, template <class, bool, int> class K, bool kBarrier>
Kernel<T> for_rows(int64_t rows) {
  switch (rows) {
    case 1:
      return K<T, kBarrier, 1>::get();
    case 2:
      return K<T, kBarrier, 2>::get();
    case 4:
      return K<T, kBarrier, 4>::get();
    case 8:
      return K<T, kBarrier, 8>::get();
    case 16:
      return K<T, kBarrier, 16>::get();
    default:
      return K<T, kBarrier, 32>::get();
  }
}

template <class T, bool kBarrier, int kRows>
struct Tiled {
  static Kernel<T> get() { return transpose_tiled_kernel<T, kBarrier, kRows>; }
};
// The word kernel for elements of type E.
template <class E>
struct Words {
  template <class W, bool kBarrier, int kRows>
  struct Of {
    static Kernel<W> get() { return transpose_word_kernel<E, kBarrier, kRows>; }
  };
};

// Whole words per row and matrices aligned to the word: what transpose_word_kernel needs.
template <class E>
bool fits_words(const KernelArgs& a) {
  auto aligned = [](const void* p) {
    return reinterpret_cast<uintptr_t>(p) % sizeof(Word<E>) == 0;
  };
  return a.scalar[2] % kPerWord<E> == 0 && aligned(a.ptr[0]) && aligned(a.ptr[1]);
}

template <bool kBarrier>
cudaError_t launch_tiled(const LaunchDims& d, cudaStream_t stream, const KernelArgs& a,
                         int64_t times) {
  return with_elem_type(a.elem_bytes[0], [&](auto zero) {
    using T = decltype(zero);
    constexpr int64_t kBytes = sizeof(T);
    if constexpr (kBytes < 8)
      if (fits_words<T>(a))
        return launch_tile<Word<T>>(for_rows<Word<T>, Words<T>::template Of, kBarrier>(d.block[1]),
                                    kBytes, d, stream, a, times);
    return launch_tile<T>(for_rows<T, Tiled, kBarrier>(d.block[1]), kBytes, d, stream, a, times);
  });
}

}  // namespace

cudaError_t launch_transpose_naive(const LaunchDims& d, cudaStream_t stream, const KernelArgs& a,
                                   int64_t times) {
  return with_elem_type(a.elem_bytes[0], [&](auto zero) {
    using T = decltype(zero);
    for (int64_t t = 0; t < times; ++t)
      transpose_naive_kernel<T>
          <<<to_dim3(d.grid), to_dim3(d.block), size_t(d.shared_bytes), stream>>>(
              static_cast<const T*>(a.ptr[0]), static_cast<T*>(a.ptr[1]), a.scalar[2]);
    return cudaGetLastError();
  });
}

cudaError_t launch_transpose_tiled(const LaunchDims& d, cudaStream_t stream, const KernelArgs& a,
                                   int64_t times) {
  return launch_tiled<true>(d, stream, a, times);
}

cudaError_t launch_transpose_tiled_nobarrier(const LaunchDims& d, cudaStream_t stream,
                                             const KernelArgs& a, int64_t times) {
  return launch_tiled<false>(d, stream, a, times);
}

}  // namespace streamlab

// The table of built-in kernels. Adding a kernel: its .cu launcher and host reference, a
// parameter list, and one entry below.
#include <cmath>

#include <fmt/format.h>

#include "ops/kernels/kernel.hpp"
#include "ops/kernels/spin.hpp"
#include "ops/kernels/transpose.hpp"
#include "ops/kernels/vector.hpp"

namespace streamlab {
namespace {

constexpr KernelParam kTransposeParams[] = {
    {"in", ParamKind::in_buffer,
     "n x n matrix of 1-, 2-, 4- or 8-byte elements (uint8; float16, bfloat16; int32, uint32, "
     "float32; int64, float64)"},
    {"out", ParamKind::out_buffer, "n x n matrix, same type as in; receives in transposed"},
    {"n", ParamKind::scalar, "matrix edge, in elements"},
};

// Element sizes the transposes have instances for.
bool transposable(ElemType t) {
  size_t bytes = elem_size(t);
  return bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8;
}

std::optional<KernelArgProblem> check_square_args(const KernelCall& call) {
  const Buffer& in = call.buffer(0);
  const Buffer& out = call.buffer(1);
  int64_t n = call.scalar(2);
  if (!transposable(in.type))
    return KernelArgProblem{"in",
                            fmt::format("buffer '{}' is {} ({} bytes); expected elements of "
                                        "1, 2, 4 or 8 bytes",
                                        in.name, elem_type_name(in.type), elem_size(in.type))};
  if (out.type != in.type)
    return KernelArgProblem{
        "out", fmt::format("buffer '{}' is {}, but 'in' is {}; expected the same type", out.name,
                           elem_type_name(out.type), elem_type_name(in.type))};
  if (n < 1) return KernelArgProblem{"n", fmt::format("n is {}; expected at least 1", n)};
  int64_t needed = 0;
  if (__builtin_mul_overflow(n, n, &needed))
    return KernelArgProblem{"n", fmt::format("n*n overflows for n = {}", n)};
  for (int p : {0, 1}) {
    if (call.count(p) < needed)
      return KernelArgProblem{
          std::string(kTransposeParams[p].name),
          fmt::format("{} holds {} elements; n*n = {} needed",
                      range_title(call.exp, call.op.args[p].range), call.count(p), needed)};
  }
  return std::nullopt;
}

std::optional<KernelArgProblem> check_tiled_args(const KernelCall& call) {
  if (auto problem = check_square_args(call)) return problem;
  const auto& block = call.op.block;
  if (block[0] != 32 || 32 % block[1] != 0 || block[2] != 1) {
    int64_t edge = transpose_tile(static_cast<int64_t>(elem_size(call.buffer(0).type)));
    return KernelArgProblem{
        "block", fmt::format("{} needs block [32, k] with k dividing 32 (one {}x{} "
                             "tile of {} per block); got [{}, {}, {}]",
                             kernel_table()[call.op.kernel].name, edge, edge,
                             elem_type_name(call.buffer(0).type), block[0], block[1], block[2])};
  }
  return std::nullopt;
}

constexpr KernelParam kSpinParams[] = {
    {"us", ParamKind::scalar,
     "how long each block runs, in microseconds of the GPU's global timer"},
};

std::optional<KernelArgProblem> check_spin_args(const KernelCall& call) {
  constexpr int64_t kMaxUs =
      10'000'000;  // 10 s: longer is a mistake, and would trip the start gate
  if (call.scalar(0) < 0 || call.scalar(0) > kMaxUs)
    return KernelArgProblem{"us",
                            fmt::format("us is {}; expected 0..{} (10 s)", call.scalar(0), kMaxUs)};
  return std::nullopt;
}

int64_t no_bytes(const KernelCall&) { return 0; }

// The vector kernels take float32 ranges; the range bound to `out` (or the in-place one) sets n.
std::optional<KernelArgProblem> check_float32(const KernelCall& call) {
  for (size_t p = 0; p < call.op.args.size(); ++p) {
    if (!call.op.args[p].range.valid()) continue;
    const Buffer& b = call.buffer(int(p));
    if (b.type != ElemType::float32)
      return KernelArgProblem{
          std::string(kernel_table()[call.op.kernel].params[p].name),
          fmt::format("buffer '{}' is {}; {} works on float32", b.name, elem_type_name(b.type),
                      kernel_table()[call.op.kernel].name)};
  }
  return std::nullopt;
}

// Input `in` must hold at least as many elements as the range that sets n.
std::optional<KernelArgProblem> check_covers(const KernelCall& call, int in, int n_from) {
  if (call.count(in) >= call.count(n_from)) return std::nullopt;
  const auto& params = kernel_table()[call.op.kernel].params;
  return KernelArgProblem{
      std::string(params[in].name),
      fmt::format("{} holds {} elements; '{}' has {}, and each needs its element",
                  range_title(call.exp, call.op.args[in].range), call.count(in),
                  params[n_from].name, call.count(n_from))};
}

std::optional<KernelArgProblem> check_real_fits_float(const KernelCall& call, int p) {
  double v = call.real(p);
  if (std::isfinite(v) && std::abs(v) <= 3.4028234663852886e38) return std::nullopt;
  return KernelArgProblem{std::string(kernel_table()[call.op.kernel].params[p].name),
                          fmt::format("{} does not fit a float32", v)};
}

constexpr KernelParam kFillParams[] = {
    {"out", ParamKind::out_buffer, "float32 range to fill"},
    {"value", ParamKind::real, "the value every element gets"},
};
std::optional<KernelArgProblem> check_fill_args(const KernelCall& call) {
  if (auto p = check_float32(call)) return p;
  return check_real_fits_float(call, 1);
}

constexpr KernelParam kVectorAddParams[] = {
    {"a", ParamKind::in_buffer, "float32 range, at least as long as out"},
    {"b", ParamKind::in_buffer, "float32 range, at least as long as out"},
    {"out", ParamKind::out_buffer, "float32 range; out[i] = a[i] + b[i] for each of its elements"},
};
std::optional<KernelArgProblem> check_vector_add_args(const KernelCall& call) {
  if (auto p = check_float32(call)) return p;
  if (auto p = check_covers(call, 0, 2)) return p;
  return check_covers(call, 1, 2);
}

constexpr KernelParam kSaxpyParams[] = {
    {"x", ParamKind::in_buffer, "float32 range, at least as long as y"},
    {"y", ParamKind::inout_buffer,
     "float32 range; y[i] = a * x[i] + y[i] for each of its elements"},
    {"a", ParamKind::real, "the factor"},
};
std::optional<KernelArgProblem> check_saxpy_args(const KernelCall& call) {
  if (auto p = check_float32(call)) return p;
  if (auto p = check_covers(call, 0, 1)) return p;
  return check_real_fits_float(call, 2);
}

constexpr KernelParam kScaleParams[] = {
    {"x", ParamKind::inout_buffer, "float32 range, scaled in place"},
    {"factor", ParamKind::real, "the factor"},
};
std::optional<KernelArgProblem> check_scale_args(const KernelCall& call) {
  if (auto p = check_float32(call)) return p;
  return check_real_fits_float(call, 1);
}

constexpr KernelParam kLcgParams[] = {
    {"x", ParamKind::in_buffer, "int32 or uint32 range, at least as long as y"},
    {"y", ParamKind::out_buffer,
     "range of the same type; y[i] = x[i] after `rounds` steps of v = a * v + c (mod 2^32)"},
    {"rounds", ParamKind::scalar, "steps per element, 0..1000000: the kernel's time grows with it"},
    {"a", ParamKind::scalar, "the multiplier, taken mod 2^32 (e.g. 1664525)"},
    {"c", ParamKind::scalar, "the increment, taken mod 2^32 (e.g. 1013904223)"},
};
std::optional<KernelArgProblem> check_lcg_args(const KernelCall& call) {
  for (int p : {0, 1}) {
    const Buffer& b = call.buffer(p);
    if (b.type != ElemType::int32 && b.type != ElemType::uint32)
      return KernelArgProblem{p == 0 ? "x" : "y",
                              fmt::format("buffer '{}' is {}; lcg works on int32 or uint32", b.name,
                                          elem_type_name(b.type))};
  }
  if (call.buffer(0).type != call.buffer(1).type)
    return KernelArgProblem{"y",
                            fmt::format("buffer '{}' is {}, but 'x' is {}; expected the same "
                                        "type",
                                        call.buffer(1).name, elem_type_name(call.buffer(1).type),
                                        elem_type_name(call.buffer(0).type))};
  if (call.scalar(2) < 0 || call.scalar(2) > 1'000'000)
    return KernelArgProblem{"rounds",
                            fmt::format("rounds is {}; expected 0..1000000", call.scalar(2))};
  return check_covers(call, 0, 1);
}

constexpr KernelParam kReduceParams[] = {
    {"in", ParamKind::in_buffer, "float32 range to sum"},
    {"out", ParamKind::out_buffer,
     "float32 range of at least grid.x elements: one partial sum per block"},
};
std::optional<KernelArgProblem> check_reduce_args(const KernelCall& call) {
  if (auto p = check_float32(call)) return p;
  const auto& g = call.op.grid;
  const auto& b = call.op.block;
  if (g[1] != 1 || g[2] != 1)
    return KernelArgProblem{
        "grid", fmt::format("reduce_sum takes a 1-D grid; got [{}, {}, {}]", g[0], g[1], g[2])};
  if (b[1] != 1 || b[2] != 1 || b[0] < 1 || (b[0] & (b[0] - 1)) != 0)
    return KernelArgProblem{
        "block", fmt::format("reduce_sum takes a 1-D block of a power of two threads (its tree "
                             "halves them); got [{}, {}, {}]",
                             b[0], b[1], b[2])};
  if (call.op.shared_bytes + b[0] * 4 > 48 * 1024)
    return KernelArgProblem{
        "shared", fmt::format("reduce_sum uses block.x * 4 = {} bytes of shared memory besides "
                              "shared: {}; at most 49152 together",
                              b[0] * 4, call.op.shared_bytes)};
  if (call.count(1) < g[0])
    return KernelArgProblem{
        "out", fmt::format("{} holds {} elements; grid.x = {} blocks write one each",
                           range_title(call.exp, call.op.args[1].range), call.count(1), g[0])};
  return std::nullopt;
}

std::optional<KernelArgProblem> no_check(const KernelCall&) { return std::nullopt; }

constexpr int64_t kF32 = 4;
int64_t fill_bytes(const KernelCall& c) { return kF32 * c.count(0); }
int64_t vector_add_bytes(const KernelCall& c) { return 3 * kF32 * c.count(2); }
int64_t saxpy_bytes(const KernelCall& c) { return 3 * kF32 * c.count(1); }
int64_t scale_bytes(const KernelCall& c) { return 2 * kF32 * c.count(0); }
int64_t lcg_bytes(const KernelCall& c) { return 2 * kF32 * c.count(1); }
int64_t reduce_bytes(const KernelCall& c) { return kF32 * (c.count(0) + c.op.grid[0]); }

// Each element read once and written once (n*n fits: checked at load).
int64_t transpose_bytes(const KernelCall& call) {
  return 2 * call.scalar(2) * call.scalar(2) * static_cast<int64_t>(elem_size(call.buffer(0).type));
}

KernelLoad spin_load(const KernelCall& c) { return {0, static_cast<double>(c.scalar(0))}; }
KernelLoad lcg_load(const KernelCall& c) {
  return {static_cast<double>(c.count(1)) * static_cast<double>(c.scalar(2)), 0};
}

constexpr KernelKind kKernels[] = {
    {"spin",
     "every block waits us microseconds on the GPU's clock and writes nothing: for concurrency and "
     "overlap "
     "experiments",
     kSpinParams, check_spin_args, host_spin, launch_spin, no_bytes, spin_load},
    {"empty",
     "does nothing: what a launch costs by itself",
     {},
     no_check,
     host_empty,
     launch_empty,
     no_bytes},
    {"fill", "out[i] = value for every element of out (float32, grid-stride)", kFillParams,
     check_fill_args, host_fill, launch_fill, fill_bytes},
    {"vector_add", "out[i] = a[i] + b[i] (float32, grid-stride)", kVectorAddParams,
     check_vector_add_args, host_vector_add, launch_vector_add, vector_add_bytes},
    {"saxpy", "y[i] = a * x[i] + y[i], one fused multiply-add (float32, grid-stride)", kSaxpyParams,
     check_saxpy_args, host_saxpy, launch_saxpy, saxpy_bytes},
    {"scale", "x[i] *= factor, in place (float32, grid-stride)", kScaleParams, check_scale_args,
     host_scale, launch_scale, scale_bytes},
    {"lcg",
     "y[i] = x[i] after `rounds` steps of v = a * v + c, mod 2^32 (int32 or uint32, grid-stride): "
     "compute whose time grows with rounds, with an exact result",
     kLcgParams, check_lcg_args, host_lcg, launch_lcg, lcg_bytes, lcg_load},
    {"reduce_sum",
     "out[b] = the sum of block b's share of in, through a shared-memory tree with __syncthreads; "
     "1-D, power-of-two blocks; launch again with one block for the total",
     kReduceParams, check_reduce_args, host_reduce_sum, launch_reduce_sum, reduce_bytes},
    {"transpose_naive",
     "out[r][c] = in[c][r], one thread per element, coalesced writes and strided reads "
     "(the reference material's kernel); 1-, 2-, 4- or 8-byte elements; grid covers n x n threads",
     kTransposeParams, check_square_args, host_transpose_naive, launch_transpose_naive,
     transpose_bytes},
    {"transpose_tiled",
     "out[r][c] = in[c][r] through a shared-memory tile and __syncthreads, coalesced both ways; "
     "tile edge 128 (1-, 2-, 4-byte elements) or 64 (8-byte); block [32, k], grid "
     "[ceil(n/edge), ceil(n/edge)]",
     kTransposeParams, check_tiled_args, host_transpose_tiled, launch_transpose_tiled,
     transpose_bytes},
    {"transpose_tiled_nobarrier",
     "transpose_tiled without its __syncthreads: threads read tile elements before they are "
     "written, so the result is wrong (claim C9); its host reference is the right transpose",
     kTransposeParams, check_tiled_args, host_transpose_tiled, launch_transpose_tiled_nobarrier,
     transpose_bytes},
};

}  // namespace

std::span<const KernelKind> kernel_table() { return kKernels; }

std::string_view param_kind_name(ParamKind k) {
  switch (k) {
    case ParamKind::in_buffer:
      return "in";
    case ParamKind::out_buffer:
      return "out";
    case ParamKind::inout_buffer:
      return "inout";
    case ParamKind::scalar:
      return "int";
    case ParamKind::real:
      return "real";
  }
  return "?";
}

int find_kernel(std::string_view name) {
  for (size_t i = 0; i < std::size(kKernels); ++i)
    if (kKernels[i].name == name) return static_cast<int>(i);
  return -1;
}

}  // namespace streamlab

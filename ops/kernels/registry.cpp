// The table of built-in kernels. Adding a kernel: its .cu launcher and host reference, a
// parameter list, and one entry below.
#include <fmt/format.h>

#include "ops/kernels/kernel.hpp"
#include "ops/kernels/spin.hpp"
#include "ops/kernels/transpose.hpp"

namespace streamlab {
namespace {

constexpr KernelParam kTransposeParams[] = {
    {"in", ParamKind::in_buffer, "n x n matrix, 4-byte elements (int32, uint32, float32)"},
    {"out", ParamKind::out_buffer, "n x n matrix, same type as in; receives in transposed"},
    {"n", ParamKind::scalar, "matrix edge, in elements"},
};

std::optional<KernelArgProblem> check_square_args(const KernelCall& call) {
  const Buffer& in = call.buffer(0);
  const Buffer& out = call.buffer(1);
  int64_t n = call.scalar(2);
  if (elem_size(in.type) != 4)
    return KernelArgProblem{"in", fmt::format("buffer '{}' is {}; expected 4-byte elements "
                                              "(int32, uint32 or float32)", in.name, elem_type_name(in.type))};
  if (out.type != in.type)
    return KernelArgProblem{"out", fmt::format("buffer '{}' is {}, but 'in' is {}; expected the same type",
                                               out.name, elem_type_name(out.type), elem_type_name(in.type))};
  if (n < 1) return KernelArgProblem{"n", fmt::format("n is {}; expected at least 1", n)};
  int64_t needed = 0;
  if (__builtin_mul_overflow(n, n, &needed))
    return KernelArgProblem{"n", fmt::format("n*n overflows for n = {}", n)};
  for (int p : {0, 1}) {
    if (call.count(p) < needed)
      return KernelArgProblem{std::string(kTransposeParams[p].name),
                              fmt::format("{} holds {} elements; n*n = {} needed",
                                          range_title(call.exp, call.op.args[p].range), call.count(p), needed)};
  }
  return std::nullopt;
}

std::optional<KernelArgProblem> check_tiled_args(const KernelCall& call) {
  if (auto problem = check_square_args(call)) return problem;
  const auto& block = call.op.block;
  if (block[0] != kTransposeTile || kTransposeTile % block[1] != 0 || block[2] != 1)
    return KernelArgProblem{"block", fmt::format(
        "transpose_tiled needs block [32, k] with k dividing 32 (one 32x32 tile per block); got [{}, {}, {}]",
        block[0], block[1], block[2])};
  return std::nullopt;
}

constexpr KernelParam kSpinParams[] = {
    {"us", ParamKind::scalar, "how long each block runs, in microseconds of the GPU's global timer"},
};

std::optional<KernelArgProblem> check_spin_args(const KernelCall& call) {
  constexpr int64_t kMaxUs = 10'000'000;  // 10 s: longer is a mistake, and would trip the start gate
  if (call.scalar(0) < 0 || call.scalar(0) > kMaxUs)
    return KernelArgProblem{"us", fmt::format("us is {}; expected 0..{} (10 s)", call.scalar(0), kMaxUs)};
  return std::nullopt;
}

int64_t spin_bytes(const KernelCall&) { return 0; }

// Each element read once and written once (n*n fits: checked at load).
int64_t transpose_bytes(const KernelCall& call) {
  return 2 * call.scalar(2) * call.scalar(2) * static_cast<int64_t>(elem_size(call.buffer(0).type));
}

constexpr KernelInfo kKernels[] = {
    {"spin",
     "every block waits us microseconds on the GPU's clock and writes nothing: for concurrency and overlap "
     "experiments",
     kSpinParams, check_spin_args, host_spin, launch_spin, spin_bytes},
    {"transpose_naive",
     "out[r][c] = in[c][r], one thread per element, coalesced writes and strided reads "
     "(the reference material's kernel); grid covers n x n threads",
     kTransposeParams, check_square_args, host_transpose_naive, launch_transpose_naive, transpose_bytes},
    {"transpose_tiled",
     "out[r][c] = in[c][r] through a 32x32 shared-memory tile and __syncthreads, coalesced both "
     "ways; block [32, k], grid [ceil(n/32), ceil(n/32)]",
     kTransposeParams, check_tiled_args, host_transpose_tiled, launch_transpose_tiled, transpose_bytes},
};

}  // namespace

std::span<const KernelInfo> kernel_table() { return kKernels; }

std::string_view param_kind_name(ParamKind k) {
  switch (k) {
    case ParamKind::in_buffer: return "in";
    case ParamKind::out_buffer: return "out";
    case ParamKind::inout_buffer: return "inout";
    case ParamKind::scalar: return "int";
    case ParamKind::real: return "real";
  }
  return "?";
}

int find_kernel(std::string_view name) {
  for (size_t i = 0; i < std::size(kKernels); ++i)
    if (kKernels[i].name == name) return static_cast<int>(i);
  return -1;
}

}  // namespace streamlab

#pragma once
// The table of built-in kernels: each has a device launcher (.cu), a host reference that
// computes exactly what the launch computes (respecting its grid, so a grid that misses
// elements leaves them unwritten on both backends), and a parameter signature that load uses to
// type-check `args`.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <cuda_runtime_api.h>

#include "ops/kernels/kernel_abi.hpp"
#include "runner/core/experiment.hpp"

namespace streamlab {

// Buffers a kernel reads (in), writes (out) or both (inout); integer (scalar) and real values.
enum class ParamKind { in_buffer, out_buffer, inout_buffer, scalar, real };
inline bool is_buffer_param(ParamKind k) {
  return k == ParamKind::in_buffer || k == ParamKind::out_buffer || k == ParamKind::inout_buffer;
}
// "in", "out", "inout", "int", "real": how `streamlab list` and the schema name them.
std::string_view param_kind_name(ParamKind k);

struct KernelParam {
  std::string_view name;
  ParamKind kind;
  std::string_view doc;  // what the parameter means, for `streamlab list`
};

// A launch as load sees it, for the kernel's own argument checks.
struct KernelCall {
  const Experiment& exp;
  const Op& op;
  const Buffer& buffer(int param) const { return exp.buffers[op.args[param].range.buffer]; }
  int64_t count(int param) const { return op.args[param].range.count; }  // elements bound
  int64_t scalar(int param) const { return op.args[param].scalar; }
  double real(int param) const { return op.args[param].real; }
};

// A problem a kernel finds in its arguments; `where` names the YAML key to point at
// (a parameter name, or "block" / "grid").
struct KernelArgProblem {
  std::string where;
  std::string message;
};

// What a launch's time follows besides its bytes, for the timeline model: work units the
// profile rates per nanosecond (lcg: elements x rounds), or a fixed time per block (spin).
struct KernelLoad {
  double work = 0;
  double block_us = 0;
};

struct KernelKind {
  std::string_view name;
  std::string_view summary;
  std::span<const KernelParam> params;
  std::optional<KernelArgProblem> (*validate)(const KernelCall&);
  void (*host)(const LaunchDims&, const KernelArgs&);
  // `times` launches back to back and their error after them, as a hand-written loop checks it:
  // a bad configuration fails every one of them alike, and a fault while they run makes the
  // launches after it fail, so the last error is the one to report. One check per launch would
  // add a runtime call to each (C10 times launches microseconds apart).
  cudaError_t (*launch)(const LaunchDims&, cudaStream_t, const KernelArgs&, int64_t times);
  // Bytes a launch reads plus bytes it writes in device memory, for its effective bandwidth.
  int64_t (*bytes)(const KernelCall&);
  KernelLoad (*load)(const KernelCall&) = nullptr;  // nullptr: its bytes alone
  int regs = 32;  // registers per thread it compiles to (sm_90), which bound its occupancy
};

std::span<const KernelKind> kernel_table();
// Index into kernel_table(), or -1.
int find_kernel(std::string_view name);

}  // namespace streamlab

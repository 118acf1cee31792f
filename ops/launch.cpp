// launch: a built-in kernel on a stream with a grid, a block, dynamic shared memory and named
// arguments, type-checked against the kernel's signature (ops/kernels/registry.cpp).
#include <fmt/format.h>

#include "ops/kernels/kernel.hpp"
#include "ops/ops.hpp"
#include "runner/cuda_check.hpp"
#include "runner/cuda_state.hpp"
#include "runner/host_state.hpp"
#include "runner/load_context.hpp"
#include "runner/suggest.hpp"

namespace streamlab {
namespace {

constexpr std::string_view kLaunchKeys[] = {"kernel", "grid", "block", "shared?", "stream?", "args?"};

// Limits of every GPU streamlab targets (compute capability 7.5 and later).
constexpr int64_t kMaxThreadsPerBlock = 1024;
constexpr int64_t kMaxBlockDim[3] = {1024, 1024, 64};
constexpr int64_t kMaxGridDim[3] = {2147483647, 65535, 65535};
constexpr int64_t kMaxStaticOptInShared = 48 * 1024;  // more needs cudaFuncSetAttribute

void check_geometry(MapReader& r, const Op& op) {
  static const char* axis[] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i) {
    if (op.grid[i] > kMaxGridDim[i])
      r.ctx.error(r.get("grid"), fmt::format("grid.{} = {} exceeds the limit {}", axis[i], op.grid[i], kMaxGridDim[i]));
    if (op.block[i] > kMaxBlockDim[i])
      r.ctx.error(r.get("block"), fmt::format("block.{} = {} exceeds the limit {}", axis[i], op.block[i], kMaxBlockDim[i]));
  }
  int64_t threads = op.block[0] * op.block[1] * op.block[2];  // each at most 1024: no overflow
  if (threads > kMaxThreadsPerBlock)
    r.ctx.error(r.get("block"), fmt::format("block has {} threads; at most {} per block", threads, kMaxThreadsPerBlock));
}

// Each kernel's argument names, built once.
const std::vector<std::string>& param_keys(const KernelInfo& k) {
  static const auto keys = [] {
    std::vector<std::vector<std::string>> all;
    for (const auto& kernel : kernel_table()) {
      all.emplace_back();
      for (const auto& p : kernel.params) all.back().emplace_back(p.name);
    }
    return all;
  }();
  return keys[static_cast<size_t>(&k - kernel_table().data())];
}

// Binds every parameter of the kernel; returns false if any is missing or of the wrong kind.
bool bind_args(MapReader& r, const KernelInfo& k, Op& op) {
  if (!r.has("args")) {
    if (k.params.empty()) return true;  // `args` may be left out for a kernel without parameters
    r.require("args");
    return false;
  }
  MapReader args(r.ctx, r.get("args"), fmt::format("args of kernel '{}'", k.name), param_keys(k));
  if (!args.ok()) return false;
  bool good = true;
  op.args.resize(k.params.size());
  for (size_t i = 0; i < k.params.size(); ++i) {
    const KernelParam& p = k.params[i];
    YAML::Node node = args.require(p.name);
    if (p.kind == ParamKind::scalar) {
      auto v = r.ctx.integer(node, p.name);
      good = good && v.has_value();
      op.args[i].scalar = v.value_or(0);
      continue;
    }
    if (p.kind == ParamKind::real) {
      auto v = r.ctx.number(node, p.name);
      good = good && v.has_value();
      op.args[i].real = v.value_or(0);
      continue;
    }
    auto range = r.ctx.range(node);
    good = good && range.has_value();
    if (!range) continue;
    op.args[i].range = *range;
    const Buffer& buf = r.ctx.exp.buffers[range->buffer];
    if (!device_accessible(buf.memory)) {
      r.ctx.error(node, fmt::format("kernel arg '{}' needs memory the device can reach (device, managed or mapped); "
                                    "'{}' is {} host memory",
                                    p.name, buf.name, memory_kind_name(buf.memory)));
      good = false;
    }
  }
  return good;
}

void report_kernel_problem(MapReader& r, const KernelArgProblem& problem) {
  YAML::Node at = r.get(problem.where);
  if (!at.IsDefined()) {
    YAML::Node args = r.get("args");
    at = args.IsMap() && args[problem.where] ? args[problem.where] : r.node();
  }
  r.ctx.error(at, problem.message);
}

void parse_launch(MapReader& r, Op& op) {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const auto& k : kernel_table()) all.emplace_back(k.name);
    return all;
  }();
  auto kernel = r.ctx.choice(r.require("kernel"), "kernel", names);
  auto grid = r.ctx.dims(r.require("grid"), "grid");
  auto block = r.ctx.dims(r.require("block"), "block");
  op.shared_bytes = r.has("shared") ? r.ctx.integer(r.get("shared"), "shared").value_or(0) : 0;
  if (op.shared_bytes < 0 || op.shared_bytes > kMaxStaticOptInShared)
    r.ctx.error(r.get("shared"), fmt::format("shared: {} bytes of dynamic shared memory; expected 0..{}",
                                             op.shared_bytes, kMaxStaticOptInShared));
  op.stream = r.stream("stream", false);
  op.device_work = true;
  if (grid) op.grid = *grid;
  if (block) op.block = *block;
  if (grid && block) check_geometry(r, op);
  if (!kernel) return;
  op.kernel = static_cast<int>(*kernel);
  const KernelInfo& k = kernel_table()[op.kernel];
  if (bind_args(r, k, op) && grid && block)
    if (auto problem = k.validate(KernelCall{r.ctx.exp, op})) report_kernel_problem(r, *problem);
}

LaunchDims launch_dims(const Op& op) {
  LaunchDims d;
  for (int i = 0; i < 3; ++i) d.grid[i] = op.grid[i], d.block[i] = op.block[i];
  d.shared_bytes = op.shared_bytes;
  return d;
}

template <class State>
KernelArgs kernel_args(const Op& op, const State& s) {
  KernelArgs a;
  for (size_t i = 0; i < op.args.size(); ++i) {
    if (op.args[i].range.valid()) a.ptr[i] = s.at(op.args[i].range), a.count[i] = op.args[i].range.count;
    a.scalar[i] = op.args[i].scalar;
    a.real[i] = op.args[i].real;
  }
  return a;
}

void host_launch(HostState& s, const Op& op) {
  kernel_table()[op.kernel].host(launch_dims(op), kernel_args(op, s));
}

void cuda_launch(CudaState& s, const Op& op) {
  const KernelInfo& k = kernel_table()[op.kernel];
  cuda_check(k.launch(launch_dims(op), s.streams[op.stream], kernel_args(op, s)),
             fmt::format("launch of {}<<<[{},{},{}], [{},{},{}], {}>>>", k.name, op.grid[0], op.grid[1],
                         op.grid[2], op.block[0], op.block[1], op.block[2], op.shared_bytes).c_str());
}

std::string describe_launch(const Experiment& exp, const Op& op) {
  const KernelInfo& k = kernel_table()[op.kernel];
  std::string args;
  for (size_t i = 0; i < op.args.size(); ++i) {
    if (i) args += ", ";
    const KernelParam& p = k.params[i];
    args += is_buffer_param(p.kind) ? range_name(exp, op.args[i].range)
            : p.kind == ParamKind::real ? fmt::format("{:g}", op.args[i].real)
                                        : std::to_string(op.args[i].scalar);
  }
  auto dims = [](const std::array<int64_t, 3>& d) {
    return d[2] > 1 ? fmt::format("[{},{},{}]", d[0], d[1], d[2]) : fmt::format("[{},{}]", d[0], d[1]);
  };
  return fmt::format("{}<<<{}, {}{}>>>({})", k.name, dims(op.grid), dims(op.block),
                     op.shared_bytes ? fmt::format(", {}", op.shared_bytes) : "", args);
}

int64_t launch_bytes(const Experiment& exp, const Op& op) {
  return kernel_table()[op.kernel].bytes(KernelCall{exp, op});
}

std::vector<Access> launch_accesses(const Experiment&, const Op& op) {
  std::vector<Access> out;
  if (op.kernel < 0) return out;  // a launch with load errors
  const auto& params = kernel_table()[op.kernel].params;
  for (size_t i = 0; i < params.size() && i < op.args.size(); ++i) {
    if (!op.args[i].range.valid()) continue;
    if (params[i].kind == ParamKind::in_buffer || params[i].kind == ParamKind::inout_buffer)
      out.push_back({op.args[i].range, false});
    if (params[i].kind == ParamKind::out_buffer || params[i].kind == ParamKind::inout_buffer)
      out.push_back({op.args[i].range, true});
  }
  return out;
}

}  // namespace

const OpKind kLaunch = {"launch",
                        "kernel<<<grid, block, shared, stream>>>(args): a built-in kernel (see kernels below)",
                        kLaunchKeys, parse_launch, host_launch, cuda_launch, describe_launch, never_blocks,
                        launch_bytes, launch_accesses, order_in_stream};

}  // namespace streamlab

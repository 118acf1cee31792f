// launch: a built-in kernel on a stream with a grid, a block, dynamic shared memory and named
// arguments, type-checked against the kernel's signature (ops/kernels/kernel_table.cpp).
#include <cmath>

#include <fmt/format.h>

#include "ops/launch.hpp"

#include "ops/kernels/kernel.hpp"
#include "ops/op_kind.hpp"
#include "ops/user_kernel.hpp"
#include "runner/context/cuda_check.hpp"
#include "runner/context/cuda_state.hpp"
#include "runner/context/host_state.hpp"
#include "runner/context/load_context.hpp"
#include "runner/core/errors.hpp"
#include "runner/core/limits.hpp"
#include "runner/core/suggest.hpp"

namespace streamlab {
namespace {

constexpr std::string_view kLaunchKeys[] = {"kernel",  "grid",  "block", "shared?",
                                            "stream?", "args?", "times?"};

// Limits of every GPU streamlab targets (compute capability 7.5 and later).
constexpr int64_t kMaxThreadsPerBlock = 1024;
constexpr int64_t kMaxBlockDim[3] = {1024, 1024, 64};
constexpr int64_t kMaxGridDim[3] = {2147483647, 65535, 65535};
constexpr int64_t kMaxStaticOptInShared = 48 * 1024;  // more needs cudaFuncSetAttribute

void check_geometry(MapReader& r, const Op& op) {
  static const char* axis[] = {"x", "y", "z"};
  bool within = true;
  for (int i = 0; i < 3; ++i) {
    if (op.grid[i] > kMaxGridDim[i])
      r.ctx.error(r.get("grid"), fmt::format("grid.{} = {} exceeds the limit {}", axis[i],
                                             op.grid[i], kMaxGridDim[i]));
    if (op.block[i] > kMaxBlockDim[i])
      r.ctx.error(r.get("block"), fmt::format("block.{} = {} exceeds the limit {}", axis[i],
                                              op.block[i], kMaxBlockDim[i]));
    within = within && op.block[i] <= kMaxBlockDim[i];
  }
  if (!within) return;
  int64_t threads = op.block[0] * op.block[1] * op.block[2];  // each at most 1024: no overflow
  if (threads > kMaxThreadsPerBlock)
    r.ctx.error(r.get("block"), fmt::format("block has {} threads; at most {} per block", threads,
                                            kMaxThreadsPerBlock));
}

// Each kernel's argument names, built once.
const std::vector<std::string>& param_keys(const KernelKind& k) {
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

// A kernel's parameters as launches bind them: a built-in kernel's, or a user kernel's declared
// ones.
struct Signature {
  std::string_view name;
  std::vector<KernelParam> params;
  std::vector<std::string> keys;
};

Signature signature(const Experiment& exp, const Op& op) {
  if (is_user_kernel(op)) {
    const UserKernel& k = user_kernel(exp, op);
    Signature sig{k.name, user_params(k), {}};
    for (const auto& p : k.params) sig.keys.push_back(p.name);
    return sig;
  }
  const KernelKind& k = kernel_table()[op.kernel];
  return {k.name, {k.params.begin(), k.params.end()}, param_keys(k)};
}

// A user kernel's declared types: buffers of the declared element type, int32 values that fit.
bool check_user_types(MapReader& r, const UserKernel& k, const Op& op) {
  bool good = true;
  for (size_t i = 0; i < k.params.size(); ++i) {
    const UserKernelParam& p = k.params[i];
    YAML::Node at = r.get("args")[p.name];
    if (op.args[i].range.valid()) {
      const Buffer& b = r.ctx.exp.buffers[op.args[i].range.buffer];
      if (b.type == p.type) continue;
      r.ctx.error(at, fmt::format("kernel '{}' declares '{}' as {} {}; '{}' is {}", k.name, p.name,
                                  param_kind_name(static_cast<ParamKind>(p.kind)),
                                  elem_type_name(p.type), b.name, elem_type_name(b.type)));
      good = false;
    } else if (p.type == ElemType::int32 &&
               (op.args[i].scalar < INT32_MIN || op.args[i].scalar > INT32_MAX)) {
      r.ctx.error(at, fmt::format("'{}' is {}, which does not fit its declared type int32", p.name,
                                  op.args[i].scalar));
      good = false;
    }
  }
  return good;
}

// Binds every parameter of the kernel; returns false if any is missing or of the wrong kind.
// `host_buffers`: buffers may be host memory (a reference check computes on host copies).
bool bind_args(MapReader& r, const Signature& k, Op& op, bool host_buffers) {
  if (!r.has("args")) {
    if (k.params.empty()) return true;  // `args` may be left out for a kernel without parameters
    r.require("args");
    return false;
  }
  MapReader args(r.ctx, r.get("args"), fmt::format("args of kernel '{}'", k.name), k.keys);
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
    if (!host_buffers && !device_accessible(buf.memory)) {
      r.ctx.error(
          node,
          fmt::format(
              "kernel arg '{}' needs memory the device can reach (device, managed or mapped); "
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

void read_shared(MapReader& r, Op& op) {
  op.shared_bytes = r.has("shared") ? r.ctx.integer(r.get("shared"), "shared").value_or(0) : 0;
  if (op.shared_bytes < 0 || op.shared_bytes > kMaxStaticOptInShared)
    r.ctx.error(r.get("shared"),
                fmt::format("shared: {} bytes of dynamic shared memory; expected 0..{}",
                            op.shared_bytes, kMaxStaticOptInShared));
}

// The keys a launch has beyond a kernel call, read where the launch always read them.
void read_stream_and_times(MapReader& r, Op& op) {
  op.stream = r.stream("stream", false);
  op.device_work = true;
  if (r.has("times")) {  // issued back to back as one op: timed once, so the timer adds nothing per
                         // launch
    op.replays = r.ctx.integer(r.get("times"), "times").value_or(1);
    if (op.replays < 1 || op.replays > limits::kRepeatsPerOp)
      r.ctx.error(r.get("times"),
                  fmt::format("times: {}; expected 1..{}", op.replays, limits::kRepeatsPerOp));
  }
}

void parse_launch(MapReader& r, Op& op) { read_kernel_call(r, op, false, read_stream_and_times); }

}  // namespace

bool read_kernel_call(MapReader& r, Op& op, bool builtin_on_host, void (*also)(MapReader&, Op&)) {
  static const std::vector<std::string> builtin = [] {
    std::vector<std::string> all;
    for (const auto& k : kernel_table()) all.emplace_back(k.name);
    return all;
  }();
  std::vector<std::string> names = builtin;
  if (!builtin_on_host)
    for (const auto& k : r.ctx.exp.kernels) names.push_back(k.name);
  auto kernel = r.ctx.choice(r.require("kernel"), "kernel", names);
  auto grid = r.ctx.dims(r.require("grid"), "grid");
  auto block = r.ctx.dims(r.require("block"), "block");
  read_shared(r, op);
  if (also) also(r, op);
  if (grid) op.grid = *grid;
  if (block) op.block = *block;
  if (grid && block) check_geometry(r, op);
  if (!kernel) return false;
  bool is_user = *kernel >= builtin.size();
  op.kernel = static_cast<int>(is_user ? kUserKernelBase + (*kernel - builtin.size()) : *kernel);
  if (!bind_args(r, signature(r.ctx.exp, op), op, builtin_on_host) || !grid || !block) return false;
  if (is_user) return check_user_types(r, user_kernel(r.ctx.exp, op), op);
  if (auto problem = kernel_table()[op.kernel].validate(KernelCall{r.ctx.exp, op})) {
    report_kernel_problem(r, *problem);
    return false;
  }
  return true;
}

namespace {

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
    if (op.args[i].range.valid()) {
      a.ptr[i] = s.at(op.args[i].range), a.count[i] = op.args[i].range.count;
      a.elem_bytes[i] =
          static_cast<int64_t>(elem_size(s.exp.buffers[op.args[i].range.buffer].type));
    }
    a.scalar[i] = op.args[i].scalar;
    a.real[i] = op.args[i].real;
  }
  return a;
}

void host_launch(HostState& s, const Op& op) {
  if (is_user_kernel(op))
    throw HostUnsupported(fmt::format(
        "kernel '{}' is CUDA source compiled by NVRTC for a GPU; the host backend cannot "
        "run it",
        user_kernel(s.exp, op).name));
  for (int64_t t = 0; t < op.replays; ++t)
    kernel_table()[op.kernel].host(launch_dims(op), kernel_args(op, s));
}

void cuda_launch(CudaState& s, const Op& op) {
  if (is_user_kernel(op)) {
    for (int64_t t = 0; t < op.replays; ++t) launch_user_kernel(s, op);
    return;
  }
  // The launcher loops over the `times` launches itself, as a hand-written program does: the
  // arguments are made once, and the error is asked for once (kernel.hpp says why that suffices).
  const KernelKind& k = kernel_table()[op.kernel];
  if (cudaError_t e =
          k.launch(launch_dims(op), s.streams[op.stream], kernel_args(op, s), op.replays);
      e != cudaSuccess)
    throw CudaError(e, fmt::format("launch of {}<<<[{},{},{}], [{},{},{}], {}>>>", k.name,
                                   op.grid[0], op.grid[1], op.grid[2], op.block[0], op.block[1],
                                   op.block[2], op.shared_bytes));
}

void prepare_launch(CudaState& s, const Op& op) {
  if (is_user_kernel(op)) prepare_user_kernel(s, op);
}

std::string describe_launch(const Experiment& exp, const Op& op) {
  Signature k = signature(exp, op);
  std::string args;
  for (size_t i = 0; i < op.args.size(); ++i) {
    if (i) args += ", ";
    const KernelParam& p = k.params[i];
    args += is_buffer_param(p.kind)     ? range_name(exp, op.args[i].range)
            : p.kind == ParamKind::real ? fmt::format("{:g}", op.args[i].real)
                                        : std::to_string(op.args[i].scalar);
  }
  auto dims = [](const std::array<int64_t, 3>& d) {
    return d[2] > 1 ? fmt::format("[{},{},{}]", d[0], d[1], d[2])
                    : fmt::format("[{},{}]", d[0], d[1]);
  };
  return fmt::format("{}<<<{}, {}{}>>>({}){}", k.name, dims(op.grid), dims(op.block),
                     op.shared_bytes ? fmt::format(", {}", op.shared_bytes) : "", args,
                     op.replays > 1 ? fmt::format(" x{}", op.replays) : "");
}

int64_t launch_bytes(const Experiment& exp, const Op& op) {
  if (!is_user_kernel(op)) return op.replays * kernel_table()[op.kernel].bytes(KernelCall{exp, op});
  int64_t sum = 0;  // what a user kernel declares it reads plus what it declares it writes
  for (const Access& a : op.kind->accesses(exp, op)) sum += range_bytes(exp, a.range);
  return op.replays * sum;
}

// A launch's cost (docs/prediction.md): a built-in kernel's alone time follows its bytes or work
// at the profile's rate for it at full occupancy, scaled by the share of the device's block
// slots its grid fills; spin's follows its per-block time and its waves. `times` launches run
// back to back, each no sooner than the host issues it.
Work launch_work(const Experiment& exp, const Op& op, const DeviceProfile& p) {
  Work w;
  w.resource = Work::Resource::sm;
  w.blocks = op.grid[0] * op.grid[1] * op.grid[2];
  const int64_t threads = op.block[0] * op.block[1] * op.block[2];
  const double min_ms = p.kernel_min_us / 1000;
  if (is_user_kernel(op)) {
    w.per_sm = blocks_per_sm(p, threads, 32, op.shared_bytes);
    w.ms = min_ms;
    w.unknown = fmt::format("kernel '{}' is the experiment's own CUDA source: the model does not "
                            "know what it costs",
                            user_kernel(exp, op).name);
    return w;
  }
  const KernelKind& k = kernel_table()[op.kernel];
  auto rate = p.kernels.find(std::string(k.name));
  w.per_sm = blocks_per_sm(p, threads, k.regs, op.shared_bytes);
  const double slots = static_cast<double>(p.sms) * w.per_sm;
  const double waves = std::ceil(static_cast<double>(w.blocks) / slots);
  KernelCall call{exp, op};
  KernelLoad load = k.load ? k.load(call) : KernelLoad{};
  const auto bytes = static_cast<double>(k.bytes(call));
  double one;  // one launch, ms
  if (load.block_us > 0) {
    one = waves * load.block_us / 1000;
  } else if (rate == p.kernels.end()) {
    w.unknown = fmt::format("the profile has no rate for kernel '{}'", k.name);
    one = min_ms;
  } else {
    double fill = std::min(1.0, static_cast<double>(w.blocks) / slots);
    double t = bytes / (rate->second.gbps * 1e6);
    if (load.work > 0 && std::isfinite(rate->second.work_per_ns))
      t = std::max(t, load.work / (rate->second.work_per_ns * 1e6));
    one = t / fill;
  }
  one = std::max(one, min_ms);
  w.memory_share = std::min(1.0, bytes / one / (p.memory_gbps * 1e6));
  const double issue_ms = p.host_us_of("launch") / 1000;
  const auto n = static_cast<double>(op.replays);
  w.ms = std::max(n * one, (n - 1) * issue_ms + one);
  return w;
}

int64_t launch_calls(const Experiment&, const Op& op) { return op.replays; }

// What the parameters read and write; the analyzer asks for every launch, so built-in kernels'
// parameters are read in place, not copied.
std::vector<Access> param_accesses(std::span<const KernelParam> params, const Op& op) {
  std::vector<Access> out;
  for (size_t i = 0; i < params.size() && i < op.args.size(); ++i) {
    if (!op.args[i].range.valid()) continue;
    if (params[i].kind == ParamKind::in_buffer || params[i].kind == ParamKind::inout_buffer)
      out.push_back({op.args[i].range, false});
    if (params[i].kind == ParamKind::out_buffer || params[i].kind == ParamKind::inout_buffer)
      out.push_back({op.args[i].range, true});
  }
  return out;
}

std::vector<Access> launch_accesses(const Experiment& exp, const Op& op) {
  if (op.kernel < 0) return {};  // a launch with load errors
  if (!is_user_kernel(op)) return param_accesses(kernel_table()[op.kernel].params, op);
  return param_accesses(user_params(user_kernel(exp, op)), op);
}

}  // namespace

extern const OpKind kLaunch = {
    .name = "launch",
    .summary =
        "kernel<<<grid, block, shared, stream>>>(args), `times` times back to back: a built-in "
        "kernel (see kernels "
        "below) or one of the experiment's `kernels:`",
    .keys = kLaunchKeys,
    .parse = parse_launch,
    .run_host = host_launch,
    .run_cuda = cuda_launch,
    .describe = describe_launch,
    .blocks_host = never_blocks,
    .bytes = launch_bytes,
    .accesses = launch_accesses,
    .order = order_in_stream,
    .lint = no_lint,
    .prepare_cuda = prepare_launch,
    .engine = compute_engine,
    .work = launch_work,
    .calls = launch_calls,
};

}  // namespace streamlab

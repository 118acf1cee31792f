// Reading `checks:`: each kind's fields, resolved to ranges of the experiment's buffers, with the
// errors a check can have before anything runs (shapes, types, a reference without inputs, a freed
// buffer).
#include <set>

#include <fmt/format.h>

#include "ops/kernels/kernel.hpp"
#include "ops/launch.hpp"
#include "ops/op_kind.hpp"
#include "runner/check/check_table.hpp"
#include "runner/check/items.hpp"
#include "runner/context/load_context.hpp"
#include "runner/core/suggest.hpp"

namespace streamlab {
namespace {

bool whole_2d(LoadContext& ctx, const YAML::Node& at, const BufferRange& r) {
  const Buffer& b = ctx.exp.buffers[r.buffer];
  if (is_whole(ctx.exp, r) && b.shape.size() == 2) return true;
  ctx.error(at,
            fmt::format("transpose needs whole 2-D buffers (shape: [rows, cols]); {} is not one",
                        range_title(ctx.exp, r)));
  return false;
}

// rtol and atol, each a non-negative number; `defaults` when neither is given.
void parse_tolerance(LoadContext& ctx, MapReader& r, CheckSpec& c, double rtol, double atol) {
  c.rtol = r.has("rtol") ? ctx.number(r.get("rtol"), "rtol").value_or(rtol) : rtol;
  c.atol = r.has("atol") ? ctx.number(r.get("atol"), "atol").value_or(atol) : atol;
  for (auto [key, v] : {std::pair{"rtol", c.rtol}, std::pair{"atol", c.atol}})
    if (!(v >= 0))
      ctx.error(r.get(key),
                fmt::format("{}: {:g} is not a tolerance (expected a number >= 0)", key, v));
}

// A value the buffer's elements can hold exactly: integers in range for integer types.
bool representable(ElemType type, double v) {
  if (type == ElemType::float16) return std::isfinite(v) && std::abs(v) <= 65504.0;
  if (is_float(type))
    return std::isfinite(v) && (type == ElemType::float64 || std::abs(v) <= 3.4028234663852886e38);
  double lo = type == ElemType::int32   ? -2147483648.0
              : type == ElemType::int64 ? -9.2233720368547758e18
                                        : 0;
  double hi = type == ElemType::int32    ? 2147483647.0
              : type == ElemType::uint32 ? 4294967295.0
              : type == ElemType::uint8  ? 255.0
                                         : 9.2233720368547758e18;
  return v == std::floor(v) && v >= lo && v <= hi;
}

// The launch op named by `launch`: a kernel whose host reference the check applies.
int find_launch(LoadContext& ctx, const YAML::Node& node) {
  auto id = ctx.scalar(node, "launch");
  if (!id) return -1;
  std::vector<std::string> ids;
  for (size_t i = 0; i < ctx.exp.ops.size(); ++i) {
    bool builtin = ctx.exp.ops[i].kernel >= 0 &&
                   ctx.exp.ops[i].kernel < kUserKernelBase;  // with a host reference
    if (ctx.exp.ops[i].id == *id && builtin) return static_cast<int>(i);
    if (ctx.exp.ops[i].id == *id && ctx.exp.ops[i].kernel >= kUserKernelBase) {
      ctx.error(node, fmt::format("launch '{}' runs a user kernel, which has no host reference; "
                                  "compare its result with "
                                  "another computation of it (close, equal, value, checksum)",
                                  *id));
      return -1;
    }
    if (builtin) ids.push_back(ctx.exp.ops[i].id);
  }
  ctx.error(node, unknown_name("launch op", *id, ids, "launch ops"));
  return -1;
}

// `inputs` / `outputs`: PARAM: RANGE, standing another range of the same type and size for what
// a parameter reads first / is compared with at the end.
std::vector<BufferRange> reference_ranges(LoadContext& ctx, MapReader& r, std::string_view key,
                                          const Op& op, bool outputs) {
  const KernelKind& k = kernel_table()[op.kernel];
  std::vector<std::string> names;
  std::vector<BufferRange> out(op.args.size());
  for (size_t p = 0; p < k.params.size(); ++p) {
    bool reads =
        k.params[p].kind == ParamKind::in_buffer || k.params[p].kind == ParamKind::inout_buffer;
    bool writes =
        k.params[p].kind == ParamKind::out_buffer || k.params[p].kind == ParamKind::inout_buffer;
    if (outputs ? !writes : !reads) continue;
    names.emplace_back(k.params[p].name);
    out[p] = op.args[p].range;
  }
  YAML::Node given = r.has(key) ? r.get(key) : YAML::Node(YAML::NodeType::Null);
  MapReader m(ctx, given, fmt::format("{} of the reference of '{}'", key, op.id), names);
  for (size_t p = 0; p < k.params.size(); ++p) {
    if (!out[p].valid() || !m.has(k.params[p].name)) continue;
    YAML::Node at = m.get(k.params[p].name);
    auto range = ctx.range(at);
    if (!range) continue;
    const BufferRange& launched = op.args[p].range;
    ElemType want = ctx.exp.buffers[launched.buffer].type,
             have = ctx.exp.buffers[range->buffer].type;
    if (want != have || range->count != launched.count)
      ctx.error(at, fmt::format("'{}' stands for '{}' ({} {}); {} is {} {}", k.params[p].name,
                                range_name(ctx.exp, launched), launched.count, elem_type_name(want),
                                range_title(ctx.exp, *range), range->count, elem_type_name(have)));
    else
      out[p] = *range;
  }
  return out;
}

// `op: ID`: a library op (gemm, convolutionForward, an NCCL collective), whose host implementation
// is its reference.
int find_library_op(LoadContext& ctx, const YAML::Node& node) {
  auto id = ctx.scalar(node, "op");
  if (!id) return -1;
  std::vector<std::string> ids;
  for (size_t i = 0; i < ctx.exp.ops.size(); ++i) {
    const Op& op = ctx.exp.ops[i];
    if (!op.kind->host_reference) continue;
    if (op.id == *id) return static_cast<int>(i);
    ids.push_back(op.id);
  }
  ctx.error(node, unknown_name("gemm, convolutionForward or NCCL op", *id, ids, "such ops"));
  return -1;
}

void parse_op_reference(LoadContext& ctx, MapReader& r, CheckSpec& c) {
  c.op = find_library_op(ctx, r.get("op"));
  if (c.op < 0) return;
  const Op& op = ctx.exp.ops[c.op];
  std::set<int> written;
  for (const Access& a : op.kind->accesses(ctx.exp, op))
    if (a.write) written.insert(a.range.buffer);
  for (const Access& a : op.kind->accesses(ctx.exp, op)) {
    if (!a.range.valid()) return;  // the op's own buffers are wrong (reported there)
    const Buffer& b = ctx.exp.buffers[a.range.buffer];
    if (a.write || written.contains(a.range.buffer) || b.init.kind != InitSpec::Kind::none)
      continue;
    ctx.error(
        r.get("op"),
        fmt::format("the reference reads buffer '{}', which has no init (its initial contents are "
                    "poison): give it an init, or check the op that fills it",
                    b.name));
  }
  for (const Access& a :
       op.kind->accesses(ctx.exp, op))  // compared at the end; the workspace is scratch
    if (a.write && a.range.buffer != op.workspace.buffer) c.outputs.push_back(a.range);
}

// Checks read the final contents, so a buffer the op list frees has none to read.
void check_not_freed(LoadContext& ctx, const YAML::Node& at, const CheckSpec& c) {
  std::set<int> reported;
  for (const auto& r : check_ranges(c)) {
    if (!r.valid() || ctx.exp.buffers[r.buffer].free_op < 0 || !reported.insert(r.buffer).second)
      continue;
    const Op& free = ctx.exp.ops[ctx.exp.buffers[r.buffer].free_op];
    ctx.error(
        at,
        fmt::format(
            "check {} reads buffer '{}', which op '{}' (line {}) frees; checks read the contents "
            "left at the end of the run",
            c.kind, ctx.exp.buffers[r.buffer].name, free.id, free.loc.line));
  }
}

void load_check(LoadContext& ctx, const YAML::Node& item) {
  std::vector<std::string> names;
  for (const auto& k : check_table()) names.emplace_back(k.info.name);
  if (!item.IsMap() || item.size() != 1) {
    ctx.error(item,
              fmt::format(
                  "expected one check per list item, as `- KIND: {{fields}}` (checks: {}), got {}",
                  join(names), describe_node(item)));
    return;
  }
  auto entry = *item.begin();
  auto kind = ctx.choice(entry.first, "check", names);
  if (!kind) return;
  const CheckKind& k = check_table()[*kind];
  CheckSpec spec;
  spec.kind = k.info.name;
  spec.loc = ctx.loc(entry.first);
  std::vector<std::string> keys = k.keys;
  keys.emplace_back("expect?");
  keys.emplace_back("allow?");
  add_item_keys(keys);
  MapReader r(ctx, entry.second, fmt::format("check '{}'", k.info.name), keys);
  if (!r.ok()) return;
  spec.item = read_item_meta(r);
  if (r.has("expect"))
    spec.expect_mismatch =
        ctx.choice(r.get("expect"), "check expect", {"match", "mismatch"}).value_or(0) == 1;
  k.parse(ctx, r, spec);
  spec.allow = read_allow(r);
  check_not_freed(ctx, entry.first, spec);
  ctx.exp.checks.push_back(spec);
}

}  // namespace

void parse_transpose(LoadContext& ctx, MapReader& r, CheckSpec& c) {
  c.a = r.range("input");
  c.b = r.range("output");
  if (!c.a.valid() || !c.b.valid()) return;
  if (!whole_2d(ctx, r.get("input"), c.a) || !whole_2d(ctx, r.get("output"), c.b)) return;
  const Buffer& in = ctx.exp.buffers[c.a.buffer];
  const Buffer& out = ctx.exp.buffers[c.b.buffer];
  if (in.shape[0] != out.shape[1] || in.shape[1] != out.shape[0])
    ctx.error(r.node(),
              fmt::format(
                  "transpose of '{}' [{}, {}] needs an output of shape [{}, {}]; '{}' is [{}, {}]",
                  in.name, in.shape[0], in.shape[1], in.shape[1], in.shape[0], out.name,
                  out.shape[0], out.shape[1]));
  else if (in.type != out.type)
    ctx.error(r.node(),
              fmt::format("transpose between buffers of different types: '{}' is {} and '{}' is {}",
                          in.name, elem_type_name(in.type), out.name, elem_type_name(out.type)));
}

void parse_pairwise(LoadContext& ctx, MapReader& r, CheckSpec& c) {
  c.a = r.range("a");
  c.b = r.range("b");
  if (c.kind == "close") parse_tolerance(ctx, r, c, 1e-5, 1e-8);  // numpy.isclose's defaults
  if (!c.a.valid() || !c.b.valid()) return;
  const Buffer& a = ctx.exp.buffers[c.a.buffer];
  const Buffer& b = ctx.exp.buffers[c.b.buffer];
  if (a.type != b.type || c.a.count != c.b.count)
    ctx.error(r.node(),
              fmt::format("{} needs ranges of one type and size; '{}' is {} {} and '{}' is {} {}",
                          c.kind, range_name(ctx.exp, c.a), c.a.count, elem_type_name(a.type),
                          range_name(ctx.exp, c.b), c.b.count, elem_type_name(b.type)));
}

void parse_value(LoadContext& ctx, MapReader& r, CheckSpec& c) {
  c.a = r.range("buffer");
  auto v = ctx.number(r.require("value"), "value");
  c.value = v.value_or(0);
  if (!c.a.valid() || !v) return;
  ElemType type = ctx.exp.buffers[c.a.buffer].type;
  if (!representable(type, *v))
    ctx.error(r.get("value"),
              fmt::format("value: {:g} is not a {} value", *v, elem_type_name(type)));
}

void parse_checksum(LoadContext& ctx, MapReader& r, CheckSpec& c) {
  c.a = r.range("buffer");
  auto v = ctx.number(r.require("sum"), "sum");
  c.value = v.value_or(0);
  bool floats = c.a.valid() && is_float(ctx.exp.buffers[c.a.buffer].type);
  parse_tolerance(ctx, r, c, floats ? 1e-6 : 0, 0);  // float sums depend on the order of additions
}

// `kernel:` with `grid`, `block` and `args` as a launch takes them: the kernel's host reference
// applied to the initial contents of the ranges it reads, compared with the final contents of
// those it writes. No op need make the call: a grader checks a whole result however a
// submission computed it.
void parse_kernel_reference(LoadContext& ctx, MapReader& r, CheckSpec& c) {
  if (r.has("inputs") || r.has("outputs"))
    return ctx.error(r.node(),
                     "reference: with `kernel:`, `args` names the ranges it computes on and "
                     "compares; inputs and outputs stand in for a launch's parameters");
  auto call = std::make_shared<Op>();
  call->kind = nullptr;
  call->loc = c.loc;
  call->id = "reference";
  if (!read_kernel_call(r, *call, true)) return;
  const KernelKind& k = kernel_table()[call->kernel];
  c.args.resize(k.params.size());
  c.outputs.resize(k.params.size());
  for (size_t p = 0; p < k.params.size(); ++p) {
    if (!is_buffer_param(k.params[p].kind)) continue;
    const BufferRange& range = call->args[p].range;
    c.args[p] = range;
    if (k.params[p].kind != ParamKind::in_buffer) c.outputs[p] = range;
    const Buffer& b = ctx.exp.buffers[range.buffer];
    if (k.params[p].kind != ParamKind::out_buffer && b.init.kind == InitSpec::Kind::none)
      ctx.error(r.get("args")[std::string(k.params[p].name)],
                fmt::format("the reference reads '{}' from buffer '{}', which has no init (its "
                            "initial contents are poison); name a buffer with an init",
                            k.params[p].name, b.name));
  }
  c.call = call;
}

void parse_reference(LoadContext& ctx, MapReader& r, CheckSpec& c) {
  parse_tolerance(ctx, r, c, 0, 0);
  int forms = r.has("launch") + r.has("op") + r.has("kernel");
  if (forms != 1)
    return ctx.error(r.node(),
                     "reference: give exactly one of `launch:` (a built-in kernel's launch), `op:` "
                     "(a gemm, convolutionForward or NCCL op) and `kernel:` (a built-in kernel "
                     "applied to buffers, with grid, block and args)");
  if (r.has("kernel")) return parse_kernel_reference(ctx, r, c);
  if (r.has("op")) {
    if (r.has("inputs") || r.has("outputs"))
      ctx.error(
          r.node(),
          "reference: inputs and outputs stand in for a launch's parameters; an `op:` reference "
          "computes on the initial contents of the op's own buffers");
    return parse_op_reference(ctx, r, c);
  }
  c.op = find_launch(ctx, r.require("launch"));
  if (c.op < 0) return;
  const Op& op = ctx.exp.ops[c.op];
  const KernelKind& k = kernel_table()[op.kernel];
  if (op.args.size() != k.params.size())
    return;  // the launch's own arguments are wrong (reported there)
  c.args = reference_ranges(ctx, r, "inputs", op, false);
  c.outputs = reference_ranges(ctx, r, "outputs", op, true);
  for (size_t p = 0; p < k.params.size(); ++p) {
    if (k.params[p].kind == ParamKind::out_buffer)
      c.args[p] = c.outputs[p];  // computed on its initial contents
    if (k.params[p].kind == ParamKind::out_buffer || !c.args[p].valid()) continue;
    const Buffer& b = ctx.exp.buffers[c.args[p].buffer];
    if (b.init.kind == InitSpec::Kind::none)
      ctx.error(r.get("launch"),
                fmt::format("the reference reads '{}' from buffer '{}', which has no init (its "
                            "initial contents are poison); name the buffer it is copied from: "
                            "inputs: {{{}: SOURCE}}",
                            k.params[p].name, b.name, k.params[p].name));
  }
}

void load_checks(LoadContext& ctx, const YAML::Node& node) {
  if (node.IsDefined() && !node.IsNull() && !node.IsSequence()) {
    ctx.error(node, fmt::format("checks: expected a list of checks (`- KIND: {{fields}}`), got {}",
                                describe_node(node)));
    return;
  }
  for_each_item(ctx, node, "checks", [&](const YAML::Node& item) { load_check(ctx, item); });
}

}  // namespace streamlab

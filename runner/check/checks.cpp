#include "runner/check/checks.hpp"

#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include <fmt/format.h>

#include "ops/kernels/kernel.hpp"
#include "ops/op_kind.hpp"
#include "runner/context/buffer_init.hpp"
#include "runner/context/host_state.hpp"
#include "runner/context/load_context.hpp"
#include "runner/core/errors.hpp"
#include "runner/core/half.hpp"
#include "runner/core/suggest.hpp"

namespace streamlab {
namespace {

template <class T>
T read_as(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

double element(ElemType type, const std::byte* p) {
  switch (type) {
    case ElemType::int32:
      return read_as<int32_t>(p);
    case ElemType::uint32:
      return read_as<uint32_t>(p);
    case ElemType::int64:
      return static_cast<double>(read_as<int64_t>(p));
    case ElemType::float32:
      return read_as<float>(p);
    case ElemType::float64:
      return read_as<double>(p);
    case ElemType::uint8:
      return read_as<uint8_t>(p);
    case ElemType::float16:
      return half_to_float(read_as<uint16_t>(p));
    case ElemType::bfloat16:
      return bfloat16_to_float(read_as<uint16_t>(p));
  }
  return 0;
}

// `v` as an element of `type` (a value check's expected element).
std::array<std::byte, 8> element_bytes(ElemType type, double v) {
  std::array<std::byte, 8> out{};
  auto put = [&](auto x) { std::memcpy(out.data(), &x, sizeof x); };
  switch (type) {
    case ElemType::int32:
      put(static_cast<int32_t>(v));
      break;
    case ElemType::uint32:
      put(static_cast<uint32_t>(v));
      break;
    case ElemType::int64:
      put(static_cast<int64_t>(v));
      break;
    case ElemType::float32:
      put(static_cast<float>(v));
      break;
    case ElemType::float64:
      put(v);
      break;
    case ElemType::uint8:
      put(static_cast<uint8_t>(v));
      break;
    case ElemType::float16:
      put(float_to_half(static_cast<float>(v)));
      break;
    case ElemType::bfloat16:
      put(float_to_bfloat16(static_cast<float>(v)));
      break;
  }
  return out;
}

// The elements of a range within its buffer's contents.
struct Elements {
  const Buffer& buffer;
  BufferRange range;
  std::span<const std::byte> data;
  const std::byte* at(int64_t i) const {
    return data.data() + (range.offset + i) * elem_size(buffer.type);
  }
  std::string name(int64_t i) const {
    return buffer.name + format_index(buffer.shape, range.offset + i);
  }
  std::string value(int64_t i) const { return format_element(buffer.type, at(i)); }
};

Elements elements(const Experiment& exp, const BufferRange& r, const BufferContents& contents) {
  return {exp.buffers[r.buffer], r, contents(r.buffer)};
}

// Bitwise without a tolerance; else |x - e| <= atol + rtol * |e| (NaN is never close).
bool matches(const CheckSpec& c, ElemType type, const std::byte* x, const std::byte* e) {
  if (c.rtol == 0 && c.atol == 0) return std::memcmp(x, e, elem_size(type)) == 0;
  double a = element(type, x), b = element(type, e);
  return std::abs(a - b) <= c.atol + c.rtol * std::abs(b);
}

std::string tolerance(const CheckSpec& c) {
  return c.rtol == 0 && c.atol == 0 ? ""
                                    : fmt::format(" within rtol {:g}, atol {:g}", c.rtol, c.atol);
}

// Compares every element of `actual` with `expected(i)`; reports the first mismatch, labelled by
// `source(i)` (what the expected value is), and how many differ.
CheckResult compare(std::string title, const CheckSpec& c, const Elements& actual,
                    const std::function<const std::byte*(int64_t)>& expected,
                    const std::function<std::string(int64_t)>& source) {
  int64_t differ = 0, first = -1;
  for (int64_t i = 0; i < actual.range.count; ++i)
    if (!matches(c, actual.buffer.type, actual.at(i), expected(i)) && differ++ == 0) first = i;
  if (differ == 0) return {std::move(title), true, ""};
  return {std::move(title), false,
          fmt::format("{} = {}, expected {}{}{}; {} of {} elements differ", actual.name(first),
                      actual.value(first), format_element(actual.buffer.type, expected(first)),
                      source(first), tolerance(c), differ, actual.range.count)};
}

CheckResult run_transpose(const Experiment& exp, const CheckSpec& c,
                          const BufferContents& contents) {
  Elements in = elements(exp, c.a, contents), out = elements(exp, c.b, contents);
  int64_t rows = out.buffer.shape[0], cols = out.buffer.shape[1];
  auto source = [&](int64_t i) { return (i % cols) * rows + i / cols; };  // out[r][c] = in[c][r]
  return compare(
      fmt::format("transpose({} -> {})", in.buffer.name, out.buffer.name), c, out,
      [&](int64_t i) { return in.at(source(i)); },
      [&](int64_t i) { return fmt::format(" (= {})", in.name(source(i))); });
}

CheckResult run_pairwise(const Experiment& exp, const CheckSpec& c,
                         const BufferContents& contents) {
  Elements a = elements(exp, c.a, contents), b = elements(exp, c.b, contents);
  return compare(
      fmt::format("{}({}, {})", c.kind, range_name(exp, c.a), range_name(exp, c.b)), c, b,
      [&](int64_t i) { return a.at(i); },
      [&](int64_t i) { return fmt::format(" (= {})", a.name(i)); });
}

CheckResult run_value(const Experiment& exp, const CheckSpec& c, const BufferContents& contents) {
  Elements x = elements(exp, c.a, contents);
  auto expected = element_bytes(x.buffer.type, c.value);
  return compare(
      fmt::format("value({} == {:g})", range_name(exp, c.a), c.value), c, x,
      [&](int64_t) { return expected.data(); }, [](int64_t) { return std::string(); });
}

CheckResult run_checksum(const Experiment& exp, const CheckSpec& c,
                         const BufferContents& contents) {
  Elements x = elements(exp, c.a, contents);
  double sum = 0;
  for (int64_t i = 0; i < c.a.count; ++i)
    sum += element(x.buffer.type, x.at(i));  // in double, index order
  std::string title = fmt::format("checksum(sum of {} == {:g})", range_name(exp, c.a), c.value);
  if (std::abs(sum - c.value) <= c.atol + c.rtol * std::abs(c.value)) return {title, true, ""};
  return {title, false,
          fmt::format("the sum is {:.17g}, expected {:.17g}{}", sum, c.value, tolerance(c))};
}

// The launch's kernel, run by its host reference on the initial contents of the ranges its
// parameters stand for; each range it writes is compared with the final contents of its output.
CheckResult run_op_reference(const Experiment& exp, const CheckSpec& c,
                             const BufferContents& contents);

CheckResult run_reference(const Experiment& exp, const CheckSpec& c,
                          const BufferContents& contents) {
  const Op& op = exp.ops[c.op];
  if (op.kernel < 0) return run_op_reference(exp, c, contents);
  const KernelKind& k = kernel_table()[op.kernel];
  std::map<int, std::vector<std::byte>> initial;  // buffer -> its initial contents, computed on
  KernelArgs args;
  for (size_t p = 0; p < c.args.size(); ++p) {
    args.scalar[p] = op.args[p].scalar, args.real[p] = op.args[p].real;
    if (!c.args[p].valid()) continue;
    const Buffer& b = exp.buffers[c.args[p].buffer];
    auto [it, fresh] = initial.try_emplace(c.args[p].buffer, static_cast<size_t>(b.bytes));
    if (fresh) fill_initial(b, it->second.data());
    args.ptr[p] = it->second.data() + range_offset_bytes(exp, c.args[p]);
    args.count[p] = c.args[p].count;
  }
  LaunchDims dims;
  for (int i = 0; i < 3; ++i) dims.grid[i] = op.grid[i], dims.block[i] = op.block[i];
  dims.shared_bytes = op.shared_bytes;
  k.host(dims, args);
  std::string title = fmt::format("reference({} of '{}')", k.name, op.id);
  for (size_t p = 0; p < c.outputs.size(); ++p) {
    if (!c.outputs[p].valid()) continue;
    Elements actual = elements(exp, c.outputs[p], contents);
    const auto* computed = static_cast<const std::byte*>(args.ptr[p]);
    size_t size = elem_size(actual.buffer.type);
    auto result = compare(
        title, c, actual, [&](int64_t i) { return computed + i * size; },
        [&](int64_t) { return fmt::format(" (host reference of {})", k.name); });
    if (!result.passed) return result;
  }
  return {title, true, ""};
}

// A library op (gemm, convolutionForward) performed by its host implementation, in double, on the
// initial contents of what it reads; what it writes (its workspace aside) is compared with the
// final contents.
CheckResult run_op_reference(const Experiment& exp, const CheckSpec& c,
                             const BufferContents& contents) {
  const Op& op = exp.ops[c.op];
  HostState state{exp, std::vector<std::byte*>(exp.buffers.size(), nullptr), {}, {}};
  std::map<int, std::vector<std::byte>> initial;
  for (const Access& a : op.kind->accesses(exp, op)) {
    const Buffer& b = exp.buffers[a.range.buffer];
    auto [it, fresh] = initial.try_emplace(a.range.buffer, static_cast<size_t>(b.bytes));
    if (fresh) fill_initial(b, it->second.data());
    state.buffers[a.range.buffer] = it->second.data();
  }
  op.kind->run_host(state, op);
  std::string title = fmt::format("reference({} '{}', computed on the host)", op.kind->name, op.id);
  for (const BufferRange& out : c.outputs) {
    Elements actual = elements(exp, out, contents);
    const std::byte* computed = state.at(out);
    size_t size = elem_size(actual.buffer.type);
    auto result = compare(
        title, c, actual, [&](int64_t i) { return computed + i * size; },
        [&](int64_t) { return std::string(" (host reference)"); });
    if (!result.passed) return result;
  }
  return {title, true, ""};
}

bool whole_2d(LoadContext& ctx, const YAML::Node& at, const BufferRange& r) {
  const Buffer& b = ctx.exp.buffers[r.buffer];
  if (is_whole(ctx.exp, r) && b.shape.size() == 2) return true;
  ctx.error(at,
            fmt::format("transpose needs whole 2-D buffers (shape: [rows, cols]); {} is not one",
                        range_title(ctx.exp, r)));
  return false;
}

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

// rtol and atol, each a non-negative number; `defaults` when neither is given.
void parse_tolerance(LoadContext& ctx, MapReader& r, CheckSpec& c, double rtol, double atol) {
  c.rtol = r.has("rtol") ? ctx.number(r.get("rtol"), "rtol").value_or(rtol) : rtol;
  c.atol = r.has("atol") ? ctx.number(r.get("atol"), "atol").value_or(atol) : atol;
  for (auto [key, v] : {std::pair{"rtol", c.rtol}, std::pair{"atol", c.atol}})
    if (!(v >= 0))
      ctx.error(r.get(key),
                fmt::format("{}: {:g} is not a tolerance (expected a number >= 0)", key, v));
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

void parse_reference(LoadContext& ctx, MapReader& r, CheckSpec& c) {
  parse_tolerance(ctx, r, c, 0, 0);
  if (r.has("op") || !r.has("launch")) {
    if (r.has("launch") || !r.has("op"))
      return ctx.error(
          r.node(),
          "reference: give exactly one of `launch:` (a built-in kernel's launch) and `op:` "
          "(a gemm or convolutionForward op)");
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

struct CheckKind {
  CheckKindInfo info;
  std::vector<std::string> keys;
  void (*parse)(LoadContext&, MapReader&, CheckSpec&);
  CheckResult (*run)(const Experiment&, const CheckSpec&, const BufferContents&);
};

const std::vector<CheckKind>& check_table() {
  static const std::vector<CheckKind> table = {
      {{"transpose", "input, output",
        "output[r][c] == input[c][r] for every element (whole 2-D buffers)"},
       {"input", "output"},
       parse_transpose,
       run_transpose},
      {{"equal", "a, b",
        "b == a element by element (bitwise; buffers or ranges of one type and size)"},
       {"a", "b"},
       parse_pairwise,
       run_pairwise},
      {{"close", "a, b, rtol?, atol?",
        "|b - a| <= atol + rtol * |a| element by element (defaults: rtol 1e-5, atol 1e-8)"},
       {"a", "b", "rtol?", "atol?"},
       parse_pairwise,
       run_pairwise},
      {{"value", "buffer, value", "every element of buffer (or range) == value"},
       {"buffer", "value"},
       parse_value,
       run_value},
      {{"checksum", "buffer, sum, rtol?, atol?",
        "the sum of the elements (in double, in index order) == sum (float buffers: rtol 1e-6 by "
        "default)"},
       {"buffer", "sum", "rtol?", "atol?"},
       parse_checksum,
       run_checksum},
      {{"reference", "launch | op, inputs?, outputs?, rtol?, atol?",
        "the launch's kernel (or the gemm / convolutionForward op), run by its host reference on "
        "the initial "
        "contents of what it reads, equals what it wrote at the end; inputs / outputs: {PARAM: "
        "RANGE} stand other "
        "ranges for a launch's parameters"},
       {"launch?", "op?", "inputs?", "outputs?", "rtol?", "atol?"},
       parse_reference,
       run_reference},
  };
  return table;
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
  MapReader r(ctx, entry.second, fmt::format("check '{}'", k.info.name), keys);
  if (!r.ok()) return;
  if (r.has("expect"))
    spec.expect_mismatch =
        ctx.choice(r.get("expect"), "check expect", {"match", "mismatch"}).value_or(0) == 1;
  k.parse(ctx, r, spec);
  spec.allow = read_allow(r);
  check_not_freed(ctx, entry.first, spec);
  ctx.exp.checks.push_back(spec);
}

}  // namespace

void load_checks(LoadContext& ctx, const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsSequence()) {
    ctx.error(node, fmt::format("checks: expected a list of checks (`- KIND: {{fields}}`), got {}",
                                describe_node(node)));
    return;
  }
  for (const auto& item : node) load_check(ctx, item);
}

CheckResult run_check(const Experiment& exp, const CheckSpec& check, const BufferContents& contents,
                      bool gpu_results) {
  try {
    for (const auto& r : check_ranges(check))
      if (r.valid()) contents(r.buffer);  // the host backend may have no contents to offer for it
  } catch (const ContentsUnavailable& e) {
    return {check.kind, false, fmt::format("not evaluated: {}", e.what()), false};
  }
  for (const auto& k : check_table()) {
    if (k.info.name != check.kind) continue;
    if (!check.expect_mismatch) return k.run(exp, check, contents);
    CheckResult r = k.run(exp, check, contents);
    r.title += " (expecting a mismatch)";
    if (!gpu_results)
      return {r.title, false, "not evaluated: the host backend computes the right result", false};
    if (r.passed)
      return {r.title, false, "every element matched, so the wrong result did not show this time"};
    return {r.title, true, "as expected: " + r.detail};
  }
  return {check.kind, false, "unknown check kind"};
}

std::vector<CheckResult> run_checks(const Experiment& exp, const BufferContents& contents,
                                    bool gpu_results) {
  std::vector<CheckResult> results;
  for (const auto& c : exp.checks) results.push_back(run_check(exp, c, contents, gpu_results));
  return results;
}

std::vector<CheckKindInfo> check_kinds() {
  std::vector<CheckKindInfo> out;
  for (const auto& k : check_table()) out.push_back(k.info);
  return out;
}

std::string format_element(ElemType type, const std::byte* p) {
  switch (type) {
    case ElemType::int32:
      return fmt::format("{}", read_as<int32_t>(p));
    case ElemType::uint32:
      return fmt::format("{}", read_as<uint32_t>(p));
    case ElemType::int64:
      return fmt::format("{}", read_as<int64_t>(p));
    case ElemType::float32:
      return fmt::format("{}", read_as<float>(p));
    case ElemType::float64:
      return fmt::format("{}", read_as<double>(p));
    case ElemType::uint8:
      return fmt::format("{}", read_as<uint8_t>(p));
    case ElemType::float16:
      return fmt::format("{}", half_to_float(read_as<uint16_t>(p)));
    case ElemType::bfloat16:
      return fmt::format("{}", bfloat16_to_float(read_as<uint16_t>(p)));
  }
  return "?";
}

std::string format_index(const std::vector<int64_t>& shape, int64_t flat) {
  std::vector<std::string> parts(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    parts[d] = std::to_string(flat % shape[d]);
    flat /= shape[d];
  }
  return "[" + join(parts) + "]";
}

}  // namespace streamlab

#include "runner/checks.hpp"

#include <cstring>

#include <fmt/format.h>

#include "runner/load_context.hpp"
#include "runner/suggest.hpp"

namespace streamlab {
namespace {

// Mismatch bookkeeping shared by every check: the first differing element and a count.
struct Mismatches {
  int64_t count = 0;
  int64_t first = -1;
  int64_t first_source = -1;  // element of the source buffer the first mismatch should equal
  void add(int64_t index, int64_t source) {
    if (count++ == 0) first = index, first_source = source;
  }
};

CheckResult verdict(std::string title, const Mismatches& m, const Buffer& out, const Buffer& in,
                    std::span<const std::byte> out_data, std::span<const std::byte> in_data) {
  if (m.count == 0) return {std::move(title), true, ""};
  size_t size = elem_size(out.type);
  std::string detail = fmt::format(
      "{}{} = {}, expected {} (= {}{}); {} of {} elements differ", out.name, format_index(out.shape, m.first),
      format_element(out.type, out_data.data() + m.first * size), format_element(in.type, in_data.data() + m.first_source * size),
      in.name, format_index(in.shape, m.first_source), m.count, out.count);
  return {std::move(title), false, std::move(detail)};
}

CheckResult run_transpose(const Experiment& exp, const CheckSpec& c, const BufferContents& contents) {
  const Buffer& in = exp.buffers[c.a];
  const Buffer& out = exp.buffers[c.b];
  auto in_data = contents(c.a), out_data = contents(c.b);
  int64_t rows = out.shape[0], cols = out.shape[1];
  size_t size = elem_size(out.type);
  Mismatches m;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t col = 0; col < cols; ++col)
      if (std::memcmp(out_data.data() + (r * cols + col) * size, in_data.data() + (col * rows + r) * size, size))
        m.add(r * cols + col, col * rows + r);
  return verdict(fmt::format("transpose({} -> {})", in.name, out.name), m, out, in, out_data, in_data);
}

CheckResult run_equal(const Experiment& exp, const CheckSpec& c, const BufferContents& contents) {
  const Buffer& a = exp.buffers[c.a];
  const Buffer& b = exp.buffers[c.b];
  auto a_data = contents(c.a), b_data = contents(c.b);
  size_t size = elem_size(a.type);
  Mismatches m;
  for (int64_t i = 0; i < a.count; ++i)
    if (std::memcmp(b_data.data() + i * size, a_data.data() + i * size, size)) m.add(i, i);
  return verdict(fmt::format("equal({}, {})", a.name, b.name), m, b, a, b_data, a_data);
}

void parse_transpose(LoadContext& ctx, MapReader& r, CheckSpec& c) {
  c.a = r.buffer("input");
  c.b = r.buffer("output");
  if (c.a < 0 || c.b < 0) return;
  const Buffer& in = ctx.exp.buffers[c.a];
  const Buffer& out = ctx.exp.buffers[c.b];
  if (in.bytes == 0 || out.bytes == 0) return;  // already reported
  if (in.shape.size() != 2 || out.shape.size() != 2)
    ctx.error(r.node(), fmt::format("transpose needs two 2-D buffers (shape: [rows, cols]); '{}' has {} "
                                    "dimension(s) and '{}' {}", in.name, in.shape.size(), out.name, out.shape.size()));
  else if (in.shape[0] != out.shape[1] || in.shape[1] != out.shape[0])
    ctx.error(r.node(), fmt::format("transpose of '{}' [{}, {}] needs an output of shape [{}, {}]; '{}' is [{}, {}]",
                                    in.name, in.shape[0], in.shape[1], in.shape[1], in.shape[0], out.name,
                                    out.shape[0], out.shape[1]));
  else if (in.type != out.type)
    ctx.error(r.node(), fmt::format("transpose between buffers of different types: '{}' is {} and '{}' is {}",
                                    in.name, elem_type_name(in.type), out.name, elem_type_name(out.type)));
}

void parse_equal(LoadContext& ctx, MapReader& r, CheckSpec& c) {
  c.a = r.buffer("a");
  c.b = r.buffer("b");
  if (c.a < 0 || c.b < 0) return;
  const Buffer& a = ctx.exp.buffers[c.a];
  const Buffer& b = ctx.exp.buffers[c.b];
  if (a.bytes == 0 || b.bytes == 0) return;
  if (a.type != b.type || a.count != b.count)
    ctx.error(r.node(), fmt::format("equal needs buffers of one type and size; '{}' is {} {} and '{}' is {} {}",
                                    a.name, a.count, elem_type_name(a.type), b.name, b.count, elem_type_name(b.type)));
}

struct CheckKind {
  CheckKindInfo info;
  std::vector<std::string> keys;
  void (*parse)(LoadContext&, MapReader&, CheckSpec&);
  CheckResult (*run)(const Experiment&, const CheckSpec&, const BufferContents&);
};

const std::vector<CheckKind>& check_table() {
  static const std::vector<CheckKind> table = {
      {{"transpose", "input, output", "output[r][c] == input[c][r] for every element (2-D buffers)"},
       {"input", "output"}, parse_transpose, run_transpose},
      {{"equal", "a, b", "b == a element by element (bitwise; same type and size)"}, {"a", "b"}, parse_equal,
       run_equal},
  };
  return table;
}

void load_check(LoadContext& ctx, const YAML::Node& item) {
  std::vector<std::string> names;
  for (const auto& k : check_table()) names.emplace_back(k.info.name);
  if (!item.IsMap() || item.size() != 1) {
    ctx.error(item, fmt::format("expected one check per list item, as `- KIND: {{fields}}` (checks: {}), got {}",
                                join(names), describe_node(item)));
    return;
  }
  auto entry = *item.begin();
  auto kind = ctx.choice(entry.first, "check", names);
  if (!kind) return;
  const CheckKind& k = check_table()[*kind];
  CheckSpec spec{std::string(k.info.name), ctx.loc(entry.first), -1, -1};
  MapReader r(ctx, entry.second, fmt::format("check '{}'", k.info.name), k.keys);
  if (!r.ok()) return;
  k.parse(ctx, r, spec);
  ctx.exp.checks.push_back(spec);
}

}  // namespace

void load_checks(LoadContext& ctx, const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsSequence()) {
    ctx.error(node, fmt::format("checks: expected a list of checks (`- KIND: {{fields}}`), got {}", describe_node(node)));
    return;
  }
  for (const auto& item : node) load_check(ctx, item);
}

CheckResult run_check(const Experiment& exp, const CheckSpec& check, const BufferContents& contents) {
  for (const auto& k : check_table())
    if (k.info.name == check.kind) return k.run(exp, check, contents);
  return {check.kind, false, "unknown check kind"};
}

std::vector<CheckResult> run_checks(const Experiment& exp, const BufferContents& contents) {
  std::vector<CheckResult> results;
  for (const auto& c : exp.checks) results.push_back(run_check(exp, c, contents));
  return results;
}

std::vector<CheckKindInfo> check_kinds() {
  std::vector<CheckKindInfo> out;
  for (const auto& k : check_table()) out.push_back(k.info);
  return out;
}

template <class T>
static T read_as(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

std::string format_element(ElemType type, const std::byte* p) {
  switch (type) {
    case ElemType::int32: return fmt::format("{}", read_as<int32_t>(p));
    case ElemType::uint32: return fmt::format("{}", read_as<uint32_t>(p));
    case ElemType::int64: return fmt::format("{}", read_as<int64_t>(p));
    case ElemType::float32: return fmt::format("{}", read_as<float>(p));
    case ElemType::float64: return fmt::format("{}", read_as<double>(p));
    case ElemType::uint8: return fmt::format("{}", read_as<uint8_t>(p));
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

// The `buffers:` section: type, memory kind, shape or count (sizes checked for overflow), init.
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "runner/context/load_context.hpp"
#include "runner/core/limits.hpp"
#include "runner/core/suggest.hpp"

namespace streamlab {
namespace {

const std::vector<std::string> kTypes = {"int32",   "uint32", "int64",   "float32",
                                         "float64", "uint8",  "float16", "bfloat16"};
const std::vector<std::string> kMemory = {"device", "pinned", "pageable", "managed", "mapped"};
const std::vector<std::string> kInitForms = {"zeros", "value", "sequence", "random"};

// The range an init value must lie in to be stored exactly in the buffer's type.
std::pair<double, double> type_range(ElemType t) {
  switch (t) {
    case ElemType::int32:
      return {-2147483648.0, 2147483647.0};
    case ElemType::uint32:
      return {0.0, 4294967295.0};
    case ElemType::int64:
      return {-9223372036854775808.0, 9223372036854775807.0};
    case ElemType::uint8:
      return {0.0, 255.0};
    case ElemType::float16:
      return {-65504.0, 65504.0};
    case ElemType::float32:
      return {-3.4028234663852886e38, 3.4028234663852886e38};
    case ElemType::bfloat16:
      return {-3.3895313892515355e38, 3.3895313892515355e38};
    default:
      return {-std::numeric_limits<double>::max(), std::numeric_limits<double>::max()};
  }
}

std::optional<double> init_number(LoadContext& ctx, const YAML::Node& node, std::string_view what,
                                  ElemType t) {
  std::optional<double> v;
  if (is_float(t)) {
    v = ctx.number(node, what);
  } else if (auto i = ctx.integer(node, what)) {
    v = static_cast<double>(*i);
  }
  if (!v) return std::nullopt;
  auto [lo, hi] = type_range(t);
  if (*v < lo || *v > hi) {
    ctx.error(node, fmt::format("{}: {} does not fit in {}", what, *v, elem_type_name(t)));
    return std::nullopt;
  }
  return v;
}

void load_sequence(LoadContext& ctx, const YAML::Node& node, Buffer& b) {
  b.init = {InitSpec::Kind::sequence, 0, 1, 0};
  if (node.IsNull() || (node.IsScalar() && node.Scalar() == "sequence")) return;
  MapReader r(ctx, node, "init sequence", {"start?", "step?"});
  if (r.has("start")) b.init.value = init_number(ctx, r.get("start"), "start", b.type).value_or(0);
  if (r.has("step")) b.init.step = init_number(ctx, r.get("step"), "step", b.type).value_or(1);
}

void load_random(LoadContext& ctx, const YAML::Node& node, Buffer& b) {
  b.init = {InitSpec::Kind::random, 0, 1, 1};
  if (node.IsNull() || (node.IsScalar() && node.Scalar() == "random")) return;
  MapReader r(ctx, node, "init random", {"seed?"});
  if (!r.has("seed")) return;
  auto seed = ctx.integer(r.get("seed"), "seed");
  if (seed && *seed < 0) ctx.error(r.get("seed"), fmt::format("seed: {} is negative", *seed));
  b.init.seed = static_cast<uint64_t>(seed.value_or(1));
}

// init: zeros | sequence | random | {value: V} | {sequence: {start, step}} | {random: {seed}}
void load_init(LoadContext& ctx, const YAML::Node& node, Buffer& b) {
  if (node.IsScalar()) {
    auto form = ctx.choice(node, "init", {"zeros", "sequence", "random"});
    if (form == 0u) b.init.kind = InitSpec::Kind::zeros;
    if (form == 1u) load_sequence(ctx, node, b);
    if (form == 2u) load_random(ctx, node, b);
    return;
  }
  if (!node.IsMap() || node.size() != 1) {
    ctx.error(
        node,
        fmt::format(
            "init: expected zeros, sequence, random, {{value: V}}, {{sequence: {{start, step}}}} "
            "or {{random: {{seed: S}}}}, got {}",
            describe_node(node)));
    return;
  }
  auto entry = *node.begin();
  auto form = ctx.choice(entry.first, "init", kInitForms);
  if (form == 0u) ctx.error(entry.first, "init: write 'init: zeros' (zeros takes no value)");
  if (form == 1u)
    b.init = {InitSpec::Kind::value, init_number(ctx, entry.second, "value", b.type).value_or(0), 1,
              0};
  if (form == 2u) load_sequence(ctx, entry.second, b);
  if (form == 3u) load_random(ctx, entry.second, b);
}

// Elements and bytes, or nullopt (reported) on overflow.
std::optional<int64_t> checked_bytes(LoadContext& ctx, const YAML::Node& at, Buffer& b) {
  int64_t count = 1;
  for (int64_t d : b.shape)
    if (__builtin_mul_overflow(count, d, &count)) {
      ctx.error(
          at, fmt::format("buffer '{}' is too large: its element count overflows 64 bits", b.name));
      return std::nullopt;
    }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(count, static_cast<int64_t>(elem_size(b.type)), &bytes)) {
    ctx.error(at, fmt::format("buffer '{}' is too large: {} elements of {} bytes overflow 64 bits",
                              b.name, count, elem_size(b.type)));
    return std::nullopt;
  }
  b.count = count;
  return bytes;
}

// A float sequence must end inside its type's range too (its last element would be infinity);
// integer sequences wrap around, as C's conversions do.
void check_sequence_end(LoadContext& ctx, const YAML::Node& at, const Buffer& b) {
  if (b.init.kind != InitSpec::Kind::sequence || !is_float(b.type) || b.count < 1) return;
  double last = b.init.value + b.init.step * static_cast<double>(b.count - 1);
  auto [lo, hi] = type_range(b.type);
  if (!(last >= lo && last <= hi))
    ctx.error(at, fmt::format("init sequence: its last element, {} + {} x {}, does not fit in {}",
                              b.init.value, b.init.step, b.count - 1, elem_type_name(b.type)));
}

void load_extent(LoadContext& ctx, MapReader& r, Buffer& b) {
  if (r.has("shape") == r.has("count")) {
    ctx.error(r.node(), fmt::format("buffer '{}' needs exactly one of 'shape' or 'count'", b.name));
    return;
  }
  YAML::Node at = r.has("shape") ? r.get("shape") : r.get("count");
  if (r.has("count")) {
    if (auto c = ctx.integer(at, "count")) b.shape = {*c};
  } else if (!at.IsSequence() || at.size() == 0) {
    ctx.error(at, fmt::format("shape: expected a list of sizes [rows, cols, ...], got {}",
                              describe_node(at)));
  } else {
    for (const auto& d : at) {
      auto size = ctx.integer(d, "shape");
      if (!size) {  // reported; its size is unknown, not 0
        b.shape.clear();
        return;
      }
      b.shape.push_back(*size);
    }
  }
  for (int64_t d : b.shape)
    if (d < 1) {
      ctx.error(at, fmt::format("buffer '{}' has a size of {}; every size must be at least 1",
                                b.name, d));
      b.shape.clear();
      return;
    }
  if (!b.shape.empty()) b.bytes = checked_bytes(ctx, at, b).value_or(0);
}

// Words from C, CUDA and other tools that name one of streamlab's types or memory kinds, which the
// edit distance would not suggest ("float" is two letters from "float32").
struct Alias {
  std::string_view word, meaning;
};
constexpr Alias kAliases[] = {
    {"float", "float32"},   {"double", "float64"},  {"int", "int32"},     {"unsigned", "uint32"},
    {"uint", "uint32"},     {"long", "int64"},      {"half", "float16"},  {"bf16", "bfloat16"},
    {"char", "uint8"},      {"byte", "uint8"},      {"gpu", "device"},    {"global", "device"},
    {"cuda", "device"},     {"unified", "managed"}, {"zero-copy", "mapped"},
    {"host", "pinned (cudaMallocHost: copies can be asynchronous) or pageable (malloc)"},
};

// One of `choices`, or a located error that suggests the choice an alias means.
std::optional<size_t> choose(LoadContext& ctx, const YAML::Node& node, std::string_view what,
                             const std::vector<std::string>& choices) {
  for (const Alias& a : kAliases)
    if (node.IsScalar() && node.Scalar() == a.word) {
      ctx.error(node, fmt::format("unknown {} '{}'; did you mean {}? (expected one of: {})", what,
                                  a.word, a.meaning, join(choices)));
      return std::nullopt;
    }
  return ctx.choice(node, what, choices);
}

void load_buffer(LoadContext& ctx, const YAML::Node& key, const YAML::Node& value) {
  Buffer b;
  b.name = key.Scalar();
  b.loc = ctx.loc(key);
  MapReader r(ctx, value, fmt::format("buffer '{}'", b.name),
              {"type", "memory", "shape?", "count?", "init?", "array?"});
  // Declared even when invalid, so that uses of the name are not reported as unknown; a size of
  // 0 bytes tells later checks that this buffer already has an error.
  if (!ctx.room_for(key, ctx.exp.buffers, limits::kBuffers, "buffers")) return;
  if (!r.ok()) {
    ctx.exp.buffers.push_back(std::move(b));
    return;
  }
  b.type = static_cast<ElemType>(choose(ctx, r.require("type"), "type", kTypes).value_or(0));
  b.memory =
      static_cast<MemoryKind>(choose(ctx, r.require("memory"), "memory", kMemory).value_or(0));
  load_extent(ctx, r, b);
  if (r.has("init")) load_init(ctx, r.get("init"), b);
  if (r.has("init")) check_sequence_end(ctx, r.get("init"), b);
  // Elements of an array are alike, but random ones each get their own seed (seed + index): with
  // one seed, a copy into the wrong element would pass every check.
  for (const auto& name : array_names(ctx, r, b.name)) {
    if (!ctx.room_for(key, ctx.exp.buffers, limits::kBuffers, "buffers")) break;
    b.name = name;
    ctx.exp.buffers.push_back(b);
    ++b.init.seed;
  }
}

}  // namespace

void load_buffers(LoadContext& ctx, const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsMap()) {
    ctx.error(node,
              fmt::format("buffers: expected a mapping {{NAME: {{type, memory, shape}}}}, got {}",
                          describe_node(node)));
    return;
  }
  for (auto it = node.begin(); it != node.end(); ++it)
    if (check_declared_name(ctx, it->first, ctx.exp.buffers, "buffer"))
      load_buffer(ctx, it->first, it->second);
}

}  // namespace streamlab

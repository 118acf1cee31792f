#include "runner/check/checks.hpp"

#include "runner/check/check_table.hpp"

#include <algorithm>
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
  // The element's value; an element whose every byte is still the poison says so, since no
  // number would tell a reader that nothing wrote it.
  std::string value(int64_t i) const {
    std::string v = format_element(buffer.type, at(i));
    size_t size = elem_size(buffer.type);
    bool poisoned = true;
    for (size_t b = 0; b < size; ++b) poisoned = poisoned && at(i)[b] == std::byte{kPoisonByte};
    return poisoned ? fmt::format("{} (bytes 0x{:02X}: never written, the poison pattern)", v,
                                  kPoisonByte)
                    : v;
  }
};

Elements elements(const Experiment& exp, const BufferRange& r, const BufferContents& contents) {
  return {exp.buffers[r.buffer], r, contents(r.buffer)};
}

// Equal bytes. A memcmp of a constant size compiles to one comparison: a check walks every
// element of buffers of a GiB, where a call per element took most of a run's time.
bool same_bytes(const std::byte* x, const std::byte* e, size_t n) {
  switch (n) {
    case 1: return std::memcmp(x, e, 1) == 0;
    case 2: return std::memcmp(x, e, 2) == 0;
    case 4: return std::memcmp(x, e, 4) == 0;
    case 8: return std::memcmp(x, e, 8) == 0;
    default: return std::memcmp(x, e, n) == 0;
  }
}

// Bitwise without a tolerance; else equal (infinities of one sign are) or |x - e| <= atol +
// rtol * |e| (NaN is never close).
bool matches(const CheckSpec& c, ElemType type, const std::byte* x, const std::byte* e) {
  if (c.rtol == 0 && c.atol == 0) return same_bytes(x, e, elem_size(type));
  double a = element(type, x), b = element(type, e);
  return a == b || std::abs(a - b) <= c.atol + c.rtol * std::abs(b);
}

std::string tolerance(const CheckSpec& c) {
  return c.rtol == 0 && c.atol == 0 ? ""
                                    : fmt::format(" within rtol {:g}, atol {:g}", c.rtol, c.atol);
}

// Visits every index of `actual` in order.
auto in_order(const Elements& actual) {
  return [count = actual.range.count](auto&& f) {
    for (int64_t i = 0; i < count; ++i) f(i);
  };
}

// Compares every element of `actual` with `expected(i)`, visiting the indices as `visit` walks
// them; reports the first mismatch (the lowest index, whatever the walk), labelled by
// `source(i)` (what the expected value is), and how many differ.
template <class Expected, class Visit>
CheckResult compare(std::string title, const CheckSpec& c, const Elements& actual,
                    const Expected& expected, const std::function<std::string(int64_t)>& source,
                    const Visit& visit) {
  int64_t differ = 0, first = -1;
  visit([&](int64_t i) {
    if (matches(c, actual.buffer.type, actual.at(i), expected(i))) return;
    ++differ;
    if (first < 0 || i < first) first = i;
  });
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
  // In square tiles: walked row by row, every read of `in` would be a column apart from the last,
  // a cache miss per element (a minute for the checks of a 16384 x 16384 transpose).
  constexpr int64_t kTile = 64;
  auto tiles = [&](auto&& f) {
    for (int64_t r0 = 0; r0 < rows; r0 += kTile)
      for (int64_t c0 = 0; c0 < cols; c0 += kTile)
        for (int64_t r = r0; r < std::min(rows, r0 + kTile); ++r)
          for (int64_t col = c0; col < std::min(cols, c0 + kTile); ++col) f(r * cols + col);
  };
  return compare(
      fmt::format("transpose({} -> {})", in.buffer.name, out.buffer.name), c, out,
      [&](int64_t i) { return in.at(source(i)); },
      [&](int64_t i) { return fmt::format(" (= {})", in.name(source(i))); }, tiles);
}

CheckResult run_pairwise(const Experiment& exp, const CheckSpec& c,
                         const BufferContents& contents) {
  Elements a = elements(exp, c.a, contents), b = elements(exp, c.b, contents);
  return compare(
      fmt::format("{}({}, {})", c.kind, range_name(exp, c.a), range_name(exp, c.b)), c, b,
      [&](int64_t i) { return a.at(i); },
      [&](int64_t i) { return fmt::format(" (= {})", a.name(i)); }, in_order(b));
}

CheckResult run_value(const Experiment& exp, const CheckSpec& c, const BufferContents& contents) {
  Elements x = elements(exp, c.a, contents);
  auto expected = element_bytes(x.buffer.type, c.value);
  return compare(
      fmt::format("value({} == {:g})", range_name(exp, c.a), c.value), c, x,
      [&](int64_t) { return expected.data(); }, [](int64_t) { return std::string(); },
      in_order(x));
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

// "h_out", "r[0:64], s": the ranges a reference compares, for its title (two references of one
// launch compare different outputs, and must not read alike).
std::string outputs_named(const Experiment& exp, const CheckSpec& c) {
  std::vector<std::string> names;
  for (const BufferRange& r : c.outputs)
    if (r.valid()) names.push_back(range_name(exp, r));
  return join(names);
}

CheckResult run_reference(const Experiment& exp, const CheckSpec& c,
                          const BufferContents& contents) {
  const Op& op = c.call ? *c.call : exp.ops[c.op];
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
  std::string title =
      c.call ? fmt::format("reference({} -> {})", k.name, outputs_named(exp, c))
             : fmt::format("reference({} of '{}' -> {})", k.name, op.id, outputs_named(exp, c));
  for (size_t p = 0; p < c.outputs.size(); ++p) {
    if (!c.outputs[p].valid()) continue;
    Elements actual = elements(exp, c.outputs[p], contents);
    const auto* computed = static_cast<const std::byte*>(args.ptr[p]);
    size_t size = elem_size(actual.buffer.type);
    auto result = compare(
        title, c, actual, [&](int64_t i) { return computed + i * size; },
        [&](int64_t) { return fmt::format(" (host reference of {})", k.name); },
        in_order(actual));
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
  std::string title = fmt::format("reference({} '{}' -> {}, computed on the host)", op.kind->name,
                                  op.id, outputs_named(exp, c));
  for (const BufferRange& out : c.outputs) {
    Elements actual = elements(exp, out, contents);
    const std::byte* computed = state.at(out);
    size_t size = elem_size(actual.buffer.type);
    auto result = compare(
        title, c, actual, [&](int64_t i) { return computed + i * size; },
        [&](int64_t) { return std::string(" (host reference)"); }, in_order(actual));
    if (!result.passed) return result;
  }
  return {title, true, ""};
}

}  // namespace

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
      {{"reference", "launch | op | kernel, inputs?, outputs?, rtol?, atol?",
        "the launch's kernel (or the gemm / convolutionForward op), run by its host reference on "
        "the initial contents of what it reads, equals what it wrote at the end; inputs / "
        "outputs: {PARAM: RANGE} stand other ranges for a launch's parameters; kernel: a "
        "built-in kernel with grid, block and args, applied to the buffers its args name"},
       {"launch?", "op?", "kernel?", "grid?", "block?", "shared?", "args?", "inputs?", "outputs?",
        "rtol?", "atol?"},
       parse_reference,
       run_reference},
  };
  return table;
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
    if (r.passed && !gpu_results)
      return {r.title, false,
              "not evaluated: the host backend performs the ops one at a time in issue order, so "
              "a race cannot show there; run it on a GPU",
              false};
    if (r.passed)
      return {r.title, false, "every element matched, so the wrong result did not show this time"};
    if (!gpu_results)
      return {r.title, true,
              "as expected, on the host backend too, so the wrong result does not depend on "
              "timing: " +
                  r.detail};
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

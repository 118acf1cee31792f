#include "runner/core/experiment.hpp"

#include <fmt/format.h>

namespace streamlab {

std::string_view elem_type_name(ElemType t) {
  switch (t) {
    case ElemType::int32:
      return "int32";
    case ElemType::uint32:
      return "uint32";
    case ElemType::int64:
      return "int64";
    case ElemType::float32:
      return "float32";
    case ElemType::float64:
      return "float64";
    case ElemType::uint8:
      return "uint8";
    case ElemType::float16:
      return "float16";
    case ElemType::bfloat16:
      return "bfloat16";
  }
  return "?";
}

size_t elem_size(ElemType t) {
  switch (t) {
    case ElemType::int32:
    case ElemType::uint32:
    case ElemType::float32:
      return 4;
    case ElemType::int64:
    case ElemType::float64:
      return 8;
    case ElemType::uint8:
      return 1;
    case ElemType::float16:
    case ElemType::bfloat16:
      return 2;
  }
  return 1;
}

bool is_float(ElemType t) {
  return t == ElemType::float32 || t == ElemType::float64 || t == ElemType::float16 ||
         t == ElemType::bfloat16;
}

std::string_view visibility_name(Visibility v) {
  switch (v) {
    case Visibility::visible:
      return "visible";
    case Visibility::hidden:
      return "hidden";
    case Visibility::after_due_date:
      return "after_due_date";
  }
  return "?";
}

std::string_view memory_kind_name(MemoryKind m) {
  switch (m) {
    case MemoryKind::device:
      return "device";
    case MemoryKind::pinned:
      return "pinned";
    case MemoryKind::pageable:
      return "pageable";
    case MemoryKind::managed:
      return "managed";
    case MemoryKind::mapped:
      return "mapped";
  }
  return "?";
}

bool is_host_memory(MemoryKind m) {
  return m == MemoryKind::pinned || m == MemoryKind::pageable || m == MemoryKind::mapped;
}
bool device_accessible(MemoryKind m) {
  return m == MemoryKind::device || m == MemoryKind::managed || m == MemoryKind::mapped;
}
bool host_accessible(MemoryKind m) { return m != MemoryKind::device; }

int64_t range_offset_bytes(const Experiment& exp, const BufferRange& r) {
  return r.offset * static_cast<int64_t>(elem_size(exp.buffers[r.buffer].type));
}

int64_t range_bytes(const Experiment& exp, const BufferRange& r) {
  return r.count * static_cast<int64_t>(elem_size(exp.buffers[r.buffer].type));
}

std::vector<BufferRange> check_ranges(const CheckSpec& c) {
  std::vector<BufferRange> ranges = {c.a, c.b};
  ranges.insert(ranges.end(), c.args.begin(), c.args.end());
  ranges.insert(ranges.end(), c.outputs.begin(), c.outputs.end());
  return ranges;
}

bool is_whole(const Experiment& exp, const BufferRange& r) {
  return r.offset == 0 && r.count == exp.buffers[r.buffer].count;
}

std::string range_title(const Experiment& exp, const BufferRange& r) {
  return std::string(is_whole(exp, r) ? "buffer '" : "range '") + range_name(exp, r) + "'";
}

std::string range_name(const Experiment& exp, const BufferRange& r) {
  const Buffer& b = exp.buffers[r.buffer];
  if (is_whole(exp, r)) return b.name;
  return b.name + "[" + std::to_string(r.offset) + ":" + std::to_string(r.offset + r.count) + "]";
}

std::string format_bytes(int64_t bytes) {
  constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.4g} {}", v, units[u]);
}

std::vector<SweepPoint> sweep_points(const std::vector<SweepAxis>& axes) {
  std::vector<SweepPoint> points = {{}};
  for (const SweepAxis& axis : axes) {
    std::vector<SweepPoint> longer;
    for (const SweepPoint& p : points)
      for (int64_t v : axis.values) {
        longer.push_back(p);
        longer.back().emplace_back(axis.name, v);
      }
    points = std::move(longer);
  }
  return points;
}

}  // namespace streamlab

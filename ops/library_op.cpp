#include "ops/library_op.hpp"

#include <algorithm>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "runner/context/load_context.hpp"
#include "runner/core/half.hpp"

namespace streamlab {

BufferRange read_workspace(MapReader& r) {
  YAML::Node node = r.require("workspace");
  if (!node.IsDefined() || (node.IsScalar() && node.Scalar() == "none")) return {};
  auto b = r.ctx.buffer(node);
  if (!b) return {};
  const Buffer& buf = r.ctx.exp.buffers[*b];
  if (buf.memory != MemoryKind::device) {
    r.ctx.error(node, fmt::format("workspace '{}' is {} memory; expected a device buffer (or none)",
                                  buf.name, memory_kind_name(buf.memory)));
    return {};
  }
  return {*b, 0, buf.count};
}

std::optional<BufferRange> read_matrix(MapReader& r, std::string_view key, size_t rank) {
  YAML::Node node = r.require(key);
  if (!node.IsDefined()) return std::nullopt;
  auto b = r.ctx.buffer(node);
  if (!b) return std::nullopt;
  const Buffer& buf = r.ctx.exp.buffers[*b];
  if (buf.shape.size() != rank) {
    r.ctx.error(node, fmt::format("'{}' needs a {}-D buffer (shape: [{}]); '{}' has shape [{}]",
                                  key, rank, rank == 2 ? "rows, cols" : "N, C, H, W", buf.name,
                                  fmt::join(buf.shape, ", ")));
    return std::nullopt;
  }
  if (!device_accessible(buf.memory)) {
    r.ctx.error(
        node, fmt::format(
                  "'{}' needs memory the device can reach (device, managed or mapped); '{}' is {} "
                  "host memory",
                  key, buf.name, memory_kind_name(buf.memory)));
    return std::nullopt;
  }
  if (!is_float(buf.type)) {
    r.ctx.error(node, fmt::format("'{}' needs floating-point elements; '{}' is {}", key, buf.name,
                                  elem_type_name(buf.type)));
    return std::nullopt;
  }
  return BufferRange{*b, 0, buf.count};
}

void add_workspace_access(const Experiment&, const Op& op, std::vector<Access>& out) {
  if (op.workspace.valid()) out.push_back({op.workspace, true});
}

void parallel_for(int64_t n, const std::function<void(int64_t)>& f) {
  int64_t workers = std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, 64);
  workers = std::min(workers, n);
  if (workers <= 1) {
    for (int64_t i = 0; i < n; ++i) f(i);
    return;
  }
  std::vector<std::thread> threads;
  for (int64_t w = 0; w < workers; ++w)
    threads.emplace_back([&, w] {
      for (int64_t i = w; i < n; i += workers) f(i);
    });
  for (auto& t : threads) t.join();
}

Matrix::Matrix(const Experiment& exp, const BufferRange& r, std::byte* data)
    : type_(exp.buffers[r.buffer].type), data_(data) {}

double Matrix::get(int64_t i) const {
  const std::byte* p = data_ + i * static_cast<int64_t>(elem_size(type_));
  uint16_t h;
  float f;
  double d;
  int32_t i32;
  int64_t i64;
  switch (type_) {
    case ElemType::int32:
      std::memcpy(&i32, p, 4);
      return i32;
    case ElemType::int64:
      std::memcpy(&i64, p, 8);
      return static_cast<double>(i64);
    case ElemType::uint8:
      return static_cast<double>(static_cast<uint8_t>(*p));
    case ElemType::uint32: {
      uint32_t u;
      std::memcpy(&u, p, 4);
      return u;
    }
    case ElemType::float16:
      std::memcpy(&h, p, 2);
      return half_to_float(h);
    case ElemType::bfloat16:
      std::memcpy(&h, p, 2);
      return bfloat16_to_float(h);
    case ElemType::float64:
      std::memcpy(&d, p, 8);
      return d;
    default:
      std::memcpy(&f, p, 4);
      return f;
  }
}

void Matrix::set(int64_t i, double v) {
  std::byte* p = data_ + i * static_cast<int64_t>(elem_size(type_));
  uint16_t h;
  auto f = static_cast<float>(v);
  int32_t i32;
  int64_t i64;
  uint32_t u32;
  switch (type_) {
    case ElemType::int32:
      i32 = static_cast<int32_t>(v);
      std::memcpy(p, &i32, 4);
      return;
    case ElemType::int64:
      i64 = static_cast<int64_t>(v);
      std::memcpy(p, &i64, 8);
      return;
    case ElemType::uint32:
      u32 = static_cast<uint32_t>(v);
      std::memcpy(p, &u32, 4);
      return;
    case ElemType::uint8:
      *p = static_cast<std::byte>(static_cast<uint8_t>(v));
      return;
    case ElemType::float16:
      h = float_to_half(f);
      std::memcpy(p, &h, 2);
      return;
    case ElemType::bfloat16:
      h = float_to_bfloat16(f);
      std::memcpy(p, &h, 2);
      return;
    case ElemType::float64:
      std::memcpy(p, &v, 8);
      return;
    default:
      std::memcpy(p, &f, 4);
      return;
  }
}

}  // namespace streamlab

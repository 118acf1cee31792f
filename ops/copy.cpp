// memcpy and memcpyAsync: a whole buffer into another of the same type and size. The direction
// (cudaMemcpyKind) follows from the two buffers' memory kinds, as a student would pick it.
#include <cstring>

#include <fmt/format.h>

#include "ops/ops.hpp"
#include "runner/cuda_check.hpp"
#include "runner/cuda_state.hpp"
#include "runner/host_state.hpp"
#include "runner/load_context.hpp"

namespace streamlab {
namespace {

constexpr std::string_view kCopyKeys[] = {"dst", "src"};
constexpr std::string_view kCopyAsyncKeys[] = {"dst", "src", "stream?"};

std::string describe_size(const Buffer& b) {
  return fmt::format("'{}' ({} {}, {} bytes)", b.name, b.count, elem_type_name(b.type), b.bytes);
}

void check_same_shape(MapReader& r, const Op& op) {
  const Buffer& dst = r.ctx.exp.buffers[op.dst];
  const Buffer& src = r.ctx.exp.buffers[op.src];
  if (dst.bytes != src.bytes)
    r.ctx.error(r.node(), fmt::format("{} between buffers of different sizes: dst {} and src {}",
                                      op.kind->name, describe_size(dst), describe_size(src)));
  else if (dst.type != src.type)
    r.ctx.error(r.node(), fmt::format("{} between buffers of different types: dst '{}' is {} and src '{}' is {}",
                                      op.kind->name, dst.name, elem_type_name(dst.type), src.name,
                                      elem_type_name(src.type)));
}

void parse_copy(MapReader& r, Op& op) {
  op.dst = r.buffer("dst");
  op.src = r.buffer("src");
  op.stream = kLegacyStream;  // synchronous copies go to the default stream (cuda_semantics S5)
  if (op.dst < 0 || op.src < 0) return;
  if (op.dst == op.src) r.ctx.error(r.node(), fmt::format("{} from a buffer into itself", op.kind->name));
  check_same_shape(r, op);
  const auto& b = r.ctx.exp.buffers;
  op.device_work = !(is_host_memory(b[op.dst].memory) && is_host_memory(b[op.src].memory));
}

void parse_copy_async(MapReader& r, Op& op) {
  parse_copy(r, op);
  op.stream = r.stream("stream", false);
}

cudaMemcpyKind copy_direction(const Experiment& exp, const Op& op) {
  bool from_host = is_host_memory(exp.buffers[op.src].memory);
  bool to_host = is_host_memory(exp.buffers[op.dst].memory);
  if (from_host) return to_host ? cudaMemcpyHostToHost : cudaMemcpyHostToDevice;
  return to_host ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice;
}

std::string_view direction_name(cudaMemcpyKind kind) {
  switch (kind) {
    case cudaMemcpyHostToHost: return "H2H";
    case cudaMemcpyHostToDevice: return "H2D";
    case cudaMemcpyDeviceToHost: return "D2H";
    default: return "D2D";
  }
}

std::string describe_copy(const Experiment& exp, const Op& op) {
  return fmt::format("{} -> {} ({}, {})", exp.buffers[op.src].name, exp.buffers[op.dst].name,
                     direction_name(copy_direction(exp, op)), format_bytes(exp.buffers[op.dst].bytes));
}

// H1-H5: cudaMemcpy returns early only device to device.
bool copy_blocks(const Experiment& exp, const Op& op) { return copy_direction(exp, op) != cudaMemcpyDeviceToDevice; }

// H5-H7: cudaMemcpyAsync is synchronous with pageable memory, and host to host.
bool copy_async_blocks(const Experiment& exp, const Op& op) {
  auto pageable = [&](int b) { return exp.buffers[b].memory == MemoryKind::pageable; };
  return pageable(op.src) || pageable(op.dst) || copy_direction(exp, op) == cudaMemcpyHostToHost;
}

void host_copy(HostState& s, const Op& op) {
  std::memcpy(s.buffers[op.dst], s.buffers[op.src], static_cast<size_t>(s.exp.buffers[op.dst].bytes));
}

void cuda_copy(CudaState& s, const Op& op) {
  STREAMLAB_CUDA(cudaMemcpy(s.buffers[op.dst], s.buffers[op.src],
                            static_cast<size_t>(s.exp.buffers[op.dst].bytes), copy_direction(s.exp, op)));
}

void cuda_copy_async(CudaState& s, const Op& op) {
  STREAMLAB_CUDA(cudaMemcpyAsync(s.buffers[op.dst], s.buffers[op.src],
                                 static_cast<size_t>(s.exp.buffers[op.dst].bytes), copy_direction(s.exp, op),
                                 s.streams[op.stream]));
}

}  // namespace

const OpKind kMemcpy = {
    "memcpy", "cudaMemcpy: copy src into dst (same type and size); blocks the host; default stream",
    kCopyKeys, parse_copy, host_copy, cuda_copy, describe_copy, copy_blocks, dst_bytes};

const OpKind kMemcpyAsync = {
    "memcpyAsync",
    "cudaMemcpyAsync: copy src into dst in a stream (default: legacy); returns at once only for "
    "pinned or device memory",
    kCopyAsyncKeys, parse_copy_async, host_copy, cuda_copy_async, describe_copy, copy_async_blocks,
    dst_bytes};

}  // namespace streamlab

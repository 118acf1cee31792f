// memcpy and memcpyAsync: a whole buffer into another of the same type and size. The direction
// (cudaMemcpyKind) follows from the two buffers' memory kinds, as a student would pick it.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "ops/op_kind.hpp"
#include "runner/context/cuda_check.hpp"
#include "runner/context/cuda_state.hpp"
#include "runner/context/happens_before.hpp"
#include "runner/context/host_state.hpp"
#include "runner/context/load_context.hpp"
#include "runner/core/findings.hpp"

namespace streamlab {
namespace {

// dst and src: a buffer name, or {buffer, offset, count} for an element range.
constexpr std::string_view kCopyKeys[] = {"dst", "src"};
constexpr std::string_view kCopyAsyncKeys[] = {"dst", "src", "stream?"};

std::string describe_size(const Experiment& exp, const BufferRange& r) {
  const Buffer& b = exp.buffers[r.buffer];
  return fmt::format("'{}' ({} {}, {} bytes)", range_name(exp, r), r.count, elem_type_name(b.type),
                     range_bytes(exp, r));
}

void check_same_shape(MapReader& r, const Op& op) {
  const Experiment& exp = r.ctx.exp;
  const Buffer& dst = exp.buffers[op.dst.buffer];
  const Buffer& src = exp.buffers[op.src.buffer];
  if (range_bytes(exp, op.dst) != range_bytes(exp, op.src))
    r.ctx.error(r.node(),
                fmt::format("{} between {} of different sizes: dst {} and src {}", op.kind->name,
                            is_whole(exp, op.dst) && is_whole(exp, op.src) ? "buffers" : "ranges",
                            describe_size(exp, op.dst), describe_size(exp, op.src)));
  else if (dst.type != src.type)
    r.ctx.error(
        r.node(),
        fmt::format("{} between buffers of different types: dst '{}' is {} and src '{}' is {}",
                    op.kind->name, dst.name, elem_type_name(dst.type), src.name,
                    elem_type_name(src.type)));
}

bool overlapping(const BufferRange& a, const BufferRange& b) {
  return a.buffer == b.buffer && a.offset < b.offset + b.count && b.offset < a.offset + a.count;
}

void parse_copy(MapReader& r, Op& op) {
  op.dst = r.range("dst");
  op.src = r.range("src");
  op.stream = kLegacyStream;  // synchronous copies go to the default stream (docs/semantics.md, S5)
  if (!op.dst.valid() || !op.src.valid()) return;
  if (overlapping(op.dst, op.src))
    r.ctx.error(
        r.node(),
        fmt::format("{} between overlapping ranges of buffer '{}' ({} and {}); CUDA leaves the "
                    "result undefined",
                    op.kind->name, r.ctx.exp.buffers[op.dst.buffer].name,
                    range_name(r.ctx.exp, op.dst), range_name(r.ctx.exp, op.src)));
  check_same_shape(r, op);
  const auto& b = r.ctx.exp.buffers;
  op.device_work =
      !(is_host_memory(b[op.dst.buffer].memory) && is_host_memory(b[op.src.buffer].memory));
}

void parse_copy_async(MapReader& r, Op& op) {
  parse_copy(r, op);
  op.stream = r.stream("stream", false);
}

cudaMemcpyKind copy_direction(const Experiment& exp, const Op& op) {
  auto managed = [&](const BufferRange& r) {
    return exp.buffers[r.buffer].memory == MemoryKind::managed;
  };
  if (managed(op.src) || managed(op.dst))
    return cudaMemcpyDefault;  // the driver knows where the pages are
  bool from_host = is_host_memory(exp.buffers[op.src.buffer].memory);
  bool to_host = is_host_memory(exp.buffers[op.dst.buffer].memory);
  if (from_host) return to_host ? cudaMemcpyHostToHost : cudaMemcpyHostToDevice;
  return to_host ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice;
}

std::string_view direction_name(cudaMemcpyKind kind) {
  switch (kind) {
    case cudaMemcpyHostToHost:
      return "H2H";
    case cudaMemcpyHostToDevice:
      return "H2D";
    case cudaMemcpyDeviceToHost:
      return "D2H";
    case cudaMemcpyDefault:
      return "managed";
    default:
      return "D2D";
  }
}

std::string describe_copy(const Experiment& exp, const Op& op) {
  return fmt::format("{} -> {} ({}, {})", range_name(exp, op.src), range_name(exp, op.dst),
                     direction_name(copy_direction(exp, op)),
                     format_bytes(range_bytes(exp, op.dst)));
}

// H1-H5: cudaMemcpy returns early only device to device.
bool copy_blocks(const Experiment& exp, const Op& op) {
  return copy_direction(exp, op) != cudaMemcpyDeviceToDevice;
}

// H5-H7: cudaMemcpyAsync is synchronous with pageable memory, and host to host.
bool copy_async_blocks(const Experiment& exp, const Op& op) {
  auto pageable = [&](const BufferRange& r) {
    return exp.buffers[r.buffer].memory == MemoryKind::pageable;
  };
  return pageable(op.src) || pageable(op.dst) || copy_direction(exp, op) == cudaMemcpyHostToHost;
}

void host_copy(HostState& s, const Op& op) {
  std::memcpy(s.at(op.dst), s.at(op.src), static_cast<size_t>(range_bytes(s.exp, op.dst)));
}

void cuda_copy(CudaState& s, const Op& op) {
  STREAMLAB_CUDA(cudaMemcpy(s.at(op.dst), s.at(op.src),
                            static_cast<size_t>(range_bytes(s.exp, op.dst)),
                            copy_direction(s.exp, op)));
}

void cuda_copy_async(CudaState& s, const Op& op) {
  STREAMLAB_CUDA(cudaMemcpyAsync(s.at(op.dst), s.at(op.src),
                                 static_cast<size_t>(range_bytes(s.exp, op.dst)),
                                 copy_direction(s.exp, op), s.streams[op.stream]));
}

std::vector<Access> copy_accesses(const Experiment&, const Op& op) {
  std::vector<Access> out;
  if (op.src.valid()) out.push_back({op.src, false});
  if (op.dst.valid()) out.push_back({op.dst, true});
  return out;
}

// H1-H5: cudaMemcpy returns once the copy is done when it writes host memory, or reads pinned
// memory into the device. From pageable memory it returns after staging, with the DMA maybe still
// running (H1); device to device it returns at once (H4). Managed memory: version-dependent, so
// no promise.
bool copy_done_on_return(const Experiment& exp, const Op& op) {
  MemoryKind src = exp.buffers[op.src.buffer].memory, dst = exp.buffers[op.dst.buffer].memory;
  if (is_host_memory(dst)) return true;
  return dst == MemoryKind::device && (src == MemoryKind::pinned || src == MemoryKind::mapped);
}

void order_copy(HappensBefore& hb, const Experiment& exp, const Op& op) {
  hb.stream_op(op.stream);
  if (copy_done_on_return(exp, op)) hb.host_waits_for_op();
}

// H5-H6: host to host is done on return; a pageable copy only "might be synchronous", so the
// analysis promises nothing for it.
void order_copy_async(HappensBefore& hb, const Experiment& exp, const Op& op) {
  hb.stream_op(op.stream);
  if (copy_direction(exp, op) == cudaMemcpyHostToHost) hb.host_waits_for_op();
}

void lint_copy_async(const Experiment& exp, const Op& op, int index, Findings& out) {
  for (const BufferRange* r : {&op.src, &op.dst}) {
    const Buffer& b = exp.buffers[r->buffer];
    if (b.memory != MemoryKind::pageable) continue;
    Finding& f = out.add(
        "pageable-async", op.loc,
        fmt::format(
            "memcpyAsync '{}' uses pageable memory ('{}'): the call may wait until the copy "
            "is staged or done, so the host blocks and the copy overlaps nothing",
            op.id, b.name));
    f.fix = fmt::format("declare '{}' pinned (page-locked), so the copy can run asynchronously",
                        b.name);
    const std::string pageable = "memory: pageable";
    if (SourceLines(exp.source).line(b.loc.line).find(pageable) != std::string_view::npos)
      f.edits = {Edit::replacing("buffers", b.loc.line, pageable, "memory: pinned",
                                 fmt::format("line {}", b.loc.line))};
    f.ops = {index};
    return;
  }
}

Engine copy_engine(const Experiment& exp, const Op& op) {
  switch (copy_direction(exp, op)) {
    case cudaMemcpyHostToDevice:
      return Engine::copy_h2d;
    case cudaMemcpyDeviceToHost:
      return Engine::copy_d2h;
    default:
      return Engine::copy_other;
  }
}

// A copy's cost (docs/prediction.md): its direction's path at the profile's bandwidth, pinned or
// pageable by the host side's memory; a pageable copy is staged by the host, which takes part.
// Managed memory is taken as device memory (its pages are on the device once touched there).
Work copy_work(const Experiment& exp, const Op& op, const DeviceProfile& p) {
  const int64_t bytes = range_bytes(exp, op.dst);
  auto kind = [&](const BufferRange& r) { return exp.buffers[r.buffer].memory; };
  auto on_host = [&](const BufferRange& r) { return is_host_memory(kind(r)); };
  const bool pageable =
      kind(op.src) == MemoryKind::pageable || kind(op.dst) == MemoryKind::pageable;
  Work w;
  w.host_staged = pageable;
  if (on_host(op.src) && on_host(op.dst)) {  // a memcpy by the host
    w.resource = Work::Resource::host;
    w.ms = p.d2h_pageable.ms(bytes);
  } else if (on_host(op.src)) {
    w.resource = Work::Resource::copy_h2d;
    w.ms = (pageable ? p.h2d_pageable : p.h2d_pinned).ms(bytes);
  } else if (on_host(op.dst)) {
    w.resource = Work::Resource::copy_d2h;
    w.ms = (pageable ? p.d2h_pageable : p.d2h_pinned).ms(bytes);
  } else {
    w.resource = Work::Resource::copy_d2d;
    w.ms = p.d2d.ms(bytes);
    w.memory_share = std::min(1.0, 2.0 * static_cast<double>(bytes) / w.ms / (p.memory_gbps * 1e6));
  }
  return w;
}

}  // namespace

extern const OpKind kMemcpy = {
    .name = "memcpy",
    .summary =
        "cudaMemcpy: copy src into dst (buffers or element ranges, same type and size); blocks the "
        "host; default stream",
    .keys = kCopyKeys,
    .parse = parse_copy,
    .run_host = host_copy,
    .run_cuda = cuda_copy,
    .describe = describe_copy,
    .blocks_host = copy_blocks,
    .bytes = dst_bytes,
    .accesses = copy_accesses,
    .order = order_copy,
    .uncapturable =
        "a synchronous copy uses the legacy stream, which invalidates the capture "
        "(cudaErrorStreamCaptureImplicit); use memcpyAsync",
    .engine = copy_engine,
    .work = copy_work,
};

extern const OpKind kMemcpyAsync = {
    .name = "memcpyAsync",
    .summary =
        "cudaMemcpyAsync: copy src into dst in a stream (default: legacy); returns at once only "
        "for "
        "pinned or device memory",
    .keys = kCopyAsyncKeys,
    .parse = parse_copy_async,
    .run_host = host_copy,
    .run_cuda = cuda_copy_async,
    .describe = describe_copy,
    .blocks_host = copy_async_blocks,
    .bytes = dst_bytes,
    .accesses = copy_accesses,
    .order = order_copy_async,
    .lint = lint_copy_async,
    .engine = copy_engine,
    .work = copy_work,
};

}  // namespace streamlab

// memset and memsetAsync: every byte of a device buffer (or an element range of one) set to one
// value, as cudaMemset does.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "ops/op_kind.hpp"
#include "runner/context/cuda_check.hpp"
#include "runner/context/cuda_state.hpp"
#include "runner/context/happens_before.hpp"
#include "runner/context/host_state.hpp"
#include "runner/context/load_context.hpp"

namespace streamlab {
namespace {

constexpr std::string_view kMemsetKeys[] = {"dst", "value"};
constexpr std::string_view kMemsetAsyncKeys[] = {"dst", "value", "stream?"};

void parse_memset(MapReader& r, Op& op) {
  op.dst = r.range("dst");
  YAML::Node value = r.require("value");
  if (auto v = r.ctx.integer(value, "value")) {
    if (*v < 0 || *v > 255)
      r.ctx.error(
          value, fmt::format("value: {} is not a byte; {} sets every byte to a value in 0..255", *v,
                             op.kind->name));
    op.value = *v;
  }
  op.stream = kLegacyStream;
  op.device_work = true;
  if (op.dst.valid() && !device_accessible(r.ctx.exp.buffers[op.dst.buffer].memory)) {
    const Buffer& b = r.ctx.exp.buffers[op.dst.buffer];
    r.ctx.error(r.get("dst"), fmt::format("{} needs memory the device can write (device, managed "
                                          "or mapped); '{}' is {} host memory",
                                          op.kind->name, b.name, memory_kind_name(b.memory)));
  }
}

void parse_memset_async(MapReader& r, Op& op) {
  parse_memset(r, op);
  op.stream = r.stream("stream", false);
}

void host_memset(HostState& s, const Op& op) {
  std::memset(s.at(op.dst), static_cast<int>(op.value),
              static_cast<size_t>(range_bytes(s.exp, op.dst)));
}

void cuda_memset(CudaState& s, const Op& op) {
  STREAMLAB_CUDA(cudaMemset(s.at(op.dst), static_cast<int>(op.value),
                            static_cast<size_t>(range_bytes(s.exp, op.dst))));
}

void cuda_memset_async(CudaState& s, const Op& op) {
  STREAMLAB_CUDA(cudaMemsetAsync(s.at(op.dst), static_cast<int>(op.value),
                                 static_cast<size_t>(range_bytes(s.exp, op.dst)),
                                 s.streams[op.stream]));
}

std::string describe_memset(const Experiment& exp, const Op& op) {
  return fmt::format("{} = {:#04x} bytes ({})", range_name(exp, op.dst), op.value,
                     format_bytes(range_bytes(exp, op.dst)));
}

std::vector<Access> memset_accesses(const Experiment&, const Op& op) {
  if (!op.dst.valid()) return {};
  return {{op.dst, true}};
}

// H8-H9: cudaMemset returns at once on device memory, and once done on a managed or mapped one.
void order_memset(HappensBefore& hb, const Experiment& exp, const Op& op) {
  hb.stream_op(op.stream);
  if (exp.buffers[op.dst.buffer].memory != MemoryKind::device) hb.host_waits_for_op();
}

}  // namespace

namespace {

// A memset runs as blocks over the whole device at the profile's memset bandwidth.
Work memset_work(const Experiment& exp, const Op& op, const DeviceProfile& p) {
  const int64_t bytes = range_bytes(exp, op.dst);
  Work w;
  w.resource = Work::Resource::sm;
  w.blocks = p.sms;
  w.per_sm = 1;
  w.ms = p.memset.ms(bytes);
  w.memory_share = std::min(1.0, static_cast<double>(bytes) / w.ms / (p.memory_gbps * 1e6));
  return w;
}

}  // namespace

extern const OpKind kMemset = {
    .name = "memset",
    .summary = "cudaMemset: set every byte of a device buffer to value (0..255); default stream",
    .keys = kMemsetKeys,
    .parse = parse_memset,
    .run_host = host_memset,
    .run_cuda = cuda_memset,
    .describe = describe_memset,
    .blocks_host = never_blocks,
    .bytes = dst_bytes,
    .accesses = memset_accesses,
    .order = order_memset,
    .uncapturable =
        "a synchronous memset uses the legacy stream, which invalidates the capture "
        "(cudaErrorStreamCaptureImplicit); use memsetAsync",
    .engine = compute_engine,
    .work = memset_work,
};

extern const OpKind kMemsetAsync = {
    .name = "memsetAsync",
    .summary = "cudaMemsetAsync: set every byte of a device buffer to value (0..255) in a stream",
    .keys = kMemsetAsyncKeys,
    .parse = parse_memset_async,
    .run_host = host_memset,
    .run_cuda = cuda_memset_async,
    .describe = describe_memset,
    .blocks_host = never_blocks,
    .bytes = dst_bytes,
    .accesses = memset_accesses,
    .order = order_in_stream,
    .engine = compute_engine,
    .work = memset_work,
};

}  // namespace streamlab

// memPrefetchAsync: cudaMemPrefetchAsync, which migrates the pages of a managed buffer (or an
// element range of one) to the device or to the host, in a stream. Without it a kernel that
// touches pages resident on the host faults them over one by one, and the migration is part of the
// kernel's time; with it the migration is an op of its own, done at the copy engines' bandwidth.
//
// A prefetch moves pages, never values: it reads and writes nothing the analyzer compares, so two
// unordered ops, one of them a prefetch of the other's buffer, never race (docs/semantics.md, M1).
// It is device work in its stream (S1). op.dst holds the range, op.value where it goes.
#include <memory>

#include <fmt/format.h>

#include "ops/op_kind.hpp"
#include "runner/context/cuda_check.hpp"
#include "runner/context/cuda_state.hpp"
#include "runner/context/host_state.hpp"
#include "runner/context/load_context.hpp"

namespace streamlab {
namespace {

constexpr std::string_view kKeys[] = {"buffer", "to?", "stream?"};
const std::vector<std::string> kDestinations = {"device", "host"};
enum Destination : int64_t { kToDevice = 0, kToHost = 1 };

void parse_prefetch(MapReader& r, Op& op) {
  op.dst = r.range("buffer");
  if (r.has("to"))
    op.value = static_cast<int64_t>(
        r.ctx.choice(r.get("to"), "prefetch destination", kDestinations).value_or(kToDevice));
  op.stream = r.stream("stream", false);
  op.device_work = true;
  if (!op.dst.valid()) return;
  const Buffer& b = r.ctx.exp.buffers[op.dst.buffer];
  if (b.memory != MemoryKind::managed)
    r.ctx.error(
        r.get("buffer"),
        fmt::format("memPrefetchAsync moves the pages of managed memory; '{}' is {} memory, "
                    "which stays where it was allocated (declare it `memory: managed`)",
                    b.name, memory_kind_name(b.memory)));
}

// cudaMemPrefetchAsync took a device ordinal (or cudaCpuDeviceId) until CUDA 13, which takes a
// cudaMemLocation.
#if CUDART_VERSION >= 13000
using Location = cudaMemLocation;
#else
using Location = int;
#endif

// Where the pages go, worked out once before the first repetition: asking the runtime for the
// current device at every issue would add a call to the window the op is timed in.
void prepare_prefetch(CudaState& s, const Op& op) {
  int device = 0;
  STREAMLAB_CUDA(cudaGetDevice(&device));
  auto where = std::make_shared<Location>();
#if CUDART_VERSION >= 13000
  where->type = op.value == kToHost ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  where->id = op.value == kToHost ? 0 : device;
#else
  *where = op.value == kToHost ? cudaCpuDeviceId : device;
#endif
  s.prepared[&op] = std::move(where);
}

void cuda_prefetch(CudaState& s, const Op& op) {
  const Location& where = s.prepared_for<Location>(op);
  const auto bytes = static_cast<size_t>(range_bytes(s.exp, op.dst));
#if CUDART_VERSION >= 13000
  STREAMLAB_CUDA(cudaMemPrefetchAsync(s.at(op.dst), bytes, where, 0, s.streams[op.stream]));
#else
  STREAMLAB_CUDA(cudaMemPrefetchAsync(s.at(op.dst), bytes, where, s.streams[op.stream]));
#endif
}

std::string describe_prefetch(const Experiment& exp, const Op& op) {
  return fmt::format("{} -> {} ({})", range_name(exp, op.dst),
                     kDestinations[static_cast<size_t>(op.value)],
                     format_bytes(range_bytes(exp, op.dst)));
}

// A migration of managed pages at the pinned copy path's bandwidth of its direction.
Work prefetch_work(const Experiment& exp, const Op& op, const DeviceProfile& p) {
  Work w;
  const bool to_host = op.value == kToHost;
  w.resource = to_host ? Work::Resource::copy_d2h : Work::Resource::copy_h2d;
  w.ms = (to_host ? p.d2h_pinned : p.h2d_pinned).ms(range_bytes(exp, op.dst));
  return w;
}

}  // namespace

extern const OpKind kMemPrefetchAsync = {
    .name = "memPrefetchAsync",
    .summary =
        "cudaMemPrefetchAsync: migrate a managed buffer's pages to the device (default) or the "
        "host "
        "in a stream",
    .keys = kKeys,
    .parse = parse_prefetch,
    .run_host = host_no_op,  // host memory is all there is: nothing moves
    .run_cuda = cuda_prefetch,
    .describe = describe_prefetch,
    .blocks_host = never_blocks,
    .bytes = dst_bytes,
    .accesses = no_accesses,
    .order = order_in_stream,
    .prepare_cuda = prepare_prefetch,
    .uncapturable =
        "streamlab does not capture prefetches (a graph has no prefetch node): prefetch before the "
        "graph",
    .work = prefetch_work,
};

}  // namespace streamlab

// streamSynchronize and deviceSynchronize: the host waits for device work.
#include "ops/op_kind.hpp"
#include "runner/context/cuda_check.hpp"
#include "runner/context/cuda_state.hpp"
#include "runner/context/happens_before.hpp"
#include "runner/context/load_context.hpp"

namespace streamlab {
namespace {

constexpr std::string_view kStreamSyncKeys[] = {"stream"};

void parse_stream_sync(MapReader& r, Op& op) { op.stream = r.stream("stream", true); }
void parse_device_sync(MapReader&, Op&) {}
std::string describe_nothing(const Experiment&, const Op&) { return ""; }

void cuda_stream_sync(CudaState& s, const Op& op) {
  STREAMLAB_CUDA(cudaStreamSynchronize(s.streams[op.stream]));
}
void cuda_device_sync(CudaState&, const Op&) { STREAMLAB_CUDA(cudaDeviceSynchronize()); }

void order_stream_sync(HappensBefore& hb, const Experiment&, const Op& op) {
  hb.sync_stream(op.stream);
}
void order_device_sync(HappensBefore& hb, const Experiment&, const Op&) { hb.sync_device(); }

}  // namespace

extern const OpKind kStreamSynchronize = {
    .name = "streamSynchronize",
    .summary = "cudaStreamSynchronize: the host waits for stream's work",
    .keys = kStreamSyncKeys,
    .parse = parse_stream_sync,
    .run_host = host_no_op,
    .run_cuda = cuda_stream_sync,
    .describe = describe_nothing,
    .blocks_host = always_blocks,
    .bytes = no_bytes,
    .accesses = no_accesses,
    .order = order_stream_sync,
    .uncapturable =
        "a capture cannot wait for work it only records (cudaErrorStreamCaptureUnsupported)",
};

extern const OpKind kDeviceSynchronize = {
    .name = "deviceSynchronize",
    .summary = "cudaDeviceSynchronize: the host waits for all work in all streams",
    .keys = {},
    .parse = parse_device_sync,
    .run_host = host_no_op,
    .run_cuda = cuda_device_sync,
    .describe = describe_nothing,
    .blocks_host = always_blocks,
    .bytes = no_bytes,
    .accesses = no_accesses,
    .order = order_device_sync,
    .uncapturable =
        "a capture cannot wait for work it only records (cudaErrorStreamCaptureUnsupported)",
};

}  // namespace streamlab

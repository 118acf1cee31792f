// streamSynchronize and deviceSynchronize: the host waits for device work.
#include "ops/ops.hpp"
#include "runner/cuda_check.hpp"
#include "runner/cuda_state.hpp"
#include "runner/happens_before.hpp"
#include "runner/load_context.hpp"

namespace streamlab {
namespace {

constexpr std::string_view kStreamSyncKeys[] = {"stream"};

void parse_stream_sync(MapReader& r, Op& op) { op.stream = r.stream("stream", true); }
void parse_device_sync(MapReader&, Op&) {}
std::string describe_nothing(const Experiment&, const Op&) { return ""; }

void cuda_stream_sync(CudaState& s, const Op& op) { STREAMLAB_CUDA(cudaStreamSynchronize(s.streams[op.stream])); }
void cuda_device_sync(CudaState&, const Op&) { STREAMLAB_CUDA(cudaDeviceSynchronize()); }

void order_stream_sync(HappensBefore& hb, const Experiment&, const Op& op) { hb.sync_stream(op.stream); }
void order_device_sync(HappensBefore& hb, const Experiment&, const Op&) { hb.sync_device(); }

}  // namespace

const OpKind kStreamSynchronize = {"streamSynchronize", "cudaStreamSynchronize: the host waits for stream's work",
                                   kStreamSyncKeys, parse_stream_sync, host_no_op, cuda_stream_sync, describe_nothing, always_blocks, no_bytes,
                                   no_accesses, order_stream_sync};

const OpKind kDeviceSynchronize = {"deviceSynchronize",
                                   "cudaDeviceSynchronize: the host waits for all work in all streams", {},
                                   parse_device_sync, host_no_op, cuda_device_sync, describe_nothing,
                                   always_blocks, no_bytes, no_accesses, order_device_sync};

}  // namespace streamlab

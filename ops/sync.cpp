// streamSynchronize and deviceSynchronize: the host waits for device work.
#include "ops/ops.hpp"
#include "runner/cuda_check.hpp"
#include "runner/cuda_state.hpp"
#include "runner/load_context.hpp"

namespace streamlab {
namespace {

constexpr std::string_view kStreamSyncKeys[] = {"stream"};

void parse_stream_sync(MapReader& r, Op& op) { op.stream = r.stream("stream", true); }
void parse_device_sync(MapReader&, Op&) {}
void host_nothing(HostState&, const Op&) {}

void cuda_stream_sync(CudaState& s, const Op& op) { STREAMLAB_CUDA(cudaStreamSynchronize(s.streams[op.stream])); }
void cuda_device_sync(CudaState&, const Op&) { STREAMLAB_CUDA(cudaDeviceSynchronize()); }

}  // namespace

const OpKind kStreamSynchronize = {"streamSynchronize", "cudaStreamSynchronize: the host waits for stream's work",
                                   kStreamSyncKeys, parse_stream_sync, host_nothing, cuda_stream_sync};

const OpKind kDeviceSynchronize = {"deviceSynchronize",
                                   "cudaDeviceSynchronize: the host waits for all work in all streams", {},
                                   parse_device_sync, host_nothing, cuda_device_sync};

}  // namespace streamlab

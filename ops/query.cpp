// streamQuery and eventQuery: ask, without waiting, whether a stream's (an event's) work is done.
// The answer of every repetition is recorded (OpSample::answer) and reported.
#include "ops/op_kind.hpp"
#include "runner/context/cuda_check.hpp"
#include "runner/context/cuda_state.hpp"
#include "runner/context/happens_before.hpp"
#include "runner/context/host_state.hpp"
#include "runner/context/load_context.hpp"

namespace streamlab {
namespace {

constexpr std::string_view kStreamQueryKeys[] = {"stream"};
constexpr std::string_view kEventQueryKeys[] = {"event"};

void parse_stream_query(MapReader& r, Op& op) { op.stream = r.stream("stream", true); }
void parse_event_query(MapReader& r, Op& op) { op.event = r.event("event"); }

// cudaSuccess: done; cudaErrorNotReady: not yet; anything else is a failure.
void record(CudaState& s, const Op& op, cudaError_t e) {
  if (e != cudaSuccess && e != cudaErrorNotReady) STREAMLAB_CUDA(e);
  s.answers[op_index(s.exp, op)] = e == cudaSuccess ? 1 : 0;
}

void cuda_stream_query(CudaState& s, const Op& op) {
  record(s, op, cudaStreamQuery(s.streams[op.stream]));
}
void cuda_event_query(CudaState& s, const Op& op) {
  record(s, op, cudaEventQuery(s.events[op.event]));
}

// The host backend has done all earlier work by the time it gets here.
void host_query(HostState& s, const Op& op) { s.answers[op_index(s.exp, op)] = 1; }

std::string describe_stream(const Experiment& exp, const Op& op) {
  return exp.streams[op.stream].name;
}
std::string describe_event(const Experiment& exp, const Op& op) {
  return exp.events[op.event].name;
}

// S8: a query orders nothing (only an answer of "done" would, and that is known only at run time).
void order_event_query(HappensBefore& hb, const Experiment&, const Op& op) {
  hb.query_event(op.event);
}

}  // namespace

extern const OpKind kStreamQuery = {
    .name = "streamQuery",
    .summary = "cudaStreamQuery: is all work issued to stream done? (answer recorded; never waits)",
    .keys = kStreamQueryKeys,
    .parse = parse_stream_query,
    .run_host = host_query,
    .run_cuda = cuda_stream_query,
    .describe = describe_stream,
    .blocks_host = never_blocks,
    .bytes = no_bytes,
    .uncapturable =
        "querying a capturing stream invalidates the capture (cudaErrorStreamCaptureUnsupported)",
};

extern const OpKind kEventQuery = {
    .name = "eventQuery",
    .summary = "cudaEventQuery: is the work captured by event done? (answer recorded; never waits)",
    .keys = kEventQueryKeys,
    .parse = parse_event_query,
    .run_host = host_query,
    .run_cuda = cuda_event_query,
    .describe = describe_event,
    .blocks_host = never_blocks,
    .bytes = no_bytes,
    .accesses = no_accesses,
    .order = order_event_query,
    .uncapturable =
        "querying a captured event invalidates the capture (cudaErrorStreamCaptureUnsupported)",
    .event_use = EventUse::queries,
};

}  // namespace streamlab

// eventRecord, streamWaitEvent, eventSynchronize. On the host backend every op already runs in
// issue order, so these order nothing further there.
#include "ops/op_kind.hpp"
#include "runner/context/cuda_check.hpp"
#include "runner/context/cuda_state.hpp"
#include "runner/context/happens_before.hpp"
#include "runner/context/load_context.hpp"

namespace streamlab {
namespace {

constexpr std::string_view kRecordKeys[] = {"event", "stream?"};
constexpr std::string_view kWaitKeys[] = {"stream", "event"};
constexpr std::string_view kEventSyncKeys[] = {"event"};

void parse_record(MapReader& r, Op& op) {
  op.event = r.event("event");
  op.stream = r.stream("stream", false);
}

void parse_wait(MapReader& r, Op& op) {
  op.stream = r.stream("stream", true);
  op.event = r.event("event");
}

void parse_event_sync(MapReader& r, Op& op) { op.event = r.event("event"); }

std::string describe_event(const Experiment& exp, const Op& op) {
  return exp.events[op.event].name;
}

void cuda_record(CudaState& s, const Op& op) {
  STREAMLAB_CUDA(cudaEventRecord(s.events[op.event], s.streams[op.stream]));
}

void cuda_wait(CudaState& s, const Op& op) {
  STREAMLAB_CUDA(cudaStreamWaitEvent(s.streams[op.stream], s.events[op.event], 0));
}

void cuda_event_sync(CudaState& s, const Op& op) {
  STREAMLAB_CUDA(cudaEventSynchronize(s.events[op.event]));
}

void order_record(HappensBefore& hb, const Experiment&, const Op& op) {
  hb.record(op.event, op.stream);
}
void order_wait(HappensBefore& hb, const Experiment&, const Op& op) {
  hb.wait(op.stream, op.event);
}
void order_event_sync(HappensBefore& hb, const Experiment&, const Op& op) {
  hb.sync_event(op.event);
}

}  // namespace

extern const OpKind kEventRecord = {
    .name = "eventRecord",
    .summary =
        "cudaEventRecord: capture the work issued so far to stream (default: legacy) in event",
    .keys = kRecordKeys,
    .parse = parse_record,
    .run_host = host_no_op,
    .run_cuda = cuda_record,
    .describe = describe_event,
    .blocks_host = never_blocks,
    .bytes = no_bytes,
    .accesses = no_accesses,
    .order = order_record,
    .event_use = EventUse::records,
};

extern const OpKind kStreamWaitEvent = {
    .name = "streamWaitEvent",
    .summary = "cudaStreamWaitEvent: later work in stream waits for the work event captured",
    .keys = kWaitKeys,
    .parse = parse_wait,
    .run_host = host_no_op,
    .run_cuda = cuda_wait,
    .describe = describe_event,
    .blocks_host = never_blocks,
    .bytes = no_bytes,
    .accesses = no_accesses,
    .order = order_wait,
    .event_use = EventUse::stream_waits,
};

extern const OpKind kEventSynchronize = {
    .name = "eventSynchronize",
    .summary = "cudaEventSynchronize: the host waits for the event's work",
    .keys = kEventSyncKeys,
    .parse = parse_event_sync,
    .run_host = host_no_op,
    .run_cuda = cuda_event_sync,
    .describe = describe_event,
    .blocks_host = always_blocks,
    .bytes = no_bytes,
    .accesses = no_accesses,
    .order = order_event_sync,
    .uncapturable =
        "a capture cannot wait for work it only records (cudaErrorStreamCaptureUnsupported)",
    .event_use = EventUse::host_waits,
};

}  // namespace streamlab

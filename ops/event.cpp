// eventRecord, streamWaitEvent, eventSynchronize. On the host backend every op already runs in
// issue order, so these order nothing further there.
#include "ops/ops.hpp"
#include "runner/cuda_check.hpp"
#include "runner/cuda_state.hpp"
#include "runner/happens_before.hpp"
#include "runner/load_context.hpp"

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

std::string describe_event(const Experiment& exp, const Op& op) { return exp.events[op.event].name; }

void cuda_record(CudaState& s, const Op& op) {
  STREAMLAB_CUDA(cudaEventRecord(s.events[op.event], s.streams[op.stream]));
}

void cuda_wait(CudaState& s, const Op& op) {
  STREAMLAB_CUDA(cudaStreamWaitEvent(s.streams[op.stream], s.events[op.event], 0));
}

void cuda_event_sync(CudaState& s, const Op& op) { STREAMLAB_CUDA(cudaEventSynchronize(s.events[op.event])); }

void order_record(HappensBefore& hb, const Experiment&, const Op& op) { hb.record(op.event, op.stream); }
void order_wait(HappensBefore& hb, const Experiment&, const Op& op) { hb.wait(op.stream, op.event); }
void order_event_sync(HappensBefore& hb, const Experiment&, const Op& op) { hb.sync_event(op.event); }

}  // namespace

const OpKind kEventRecord = {
    "eventRecord", "cudaEventRecord: capture the work issued so far to stream (default: legacy) in event",
    kRecordKeys, parse_record, host_no_op, cuda_record, describe_event, never_blocks, no_bytes, no_accesses,
    order_record};

const OpKind kStreamWaitEvent = {
    "streamWaitEvent", "cudaStreamWaitEvent: later work in stream waits for the work event captured",
    kWaitKeys, parse_wait, host_no_op, cuda_wait, describe_event, never_blocks, no_bytes, no_accesses, order_wait};

const OpKind kEventSynchronize = {"eventSynchronize", "cudaEventSynchronize: the host waits for the event's work",
                                  kEventSyncKeys, parse_event_sync, host_no_op, cuda_event_sync, describe_event, always_blocks, no_bytes,
                                  no_accesses, order_event_sync};

}  // namespace streamlab

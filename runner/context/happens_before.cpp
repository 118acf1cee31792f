#include "runner/context/happens_before.hpp"

#include <algorithm>

namespace streamlab {

HappensBefore::HappensBefore(const Experiment& exp)
    : exp_(exp),
      host_(exp.streams.size(), 0),
      stream_(exp.streams.size()),
      blocking_join_(exp.streams.size(), 0),
      all_join_(exp.streams.size(), 0),
      stream_ops_(exp.streams.size()),
      event_(exp.events.size()),
      record_op_(exp.events.size(), -1) {}

void HappensBefore::begin(int op) {
  op_ = op;
  effects_ = {};
}

// Streams that the legacy stream synchronizes with (S2-S4): created without the non-blocking
// flag, and the per-thread default stream.
bool HappensBefore::blocking(int stream) const {
  const Stream& s = exp_.streams[stream];
  return !s.legacy && !s.non_blocking;
}

// An empty clock (a stream not used yet, an event not recorded) knows nothing: joining it is a
// no-op.
void HappensBefore::join(Clock& into, const Clock& from) const {
  for (size_t t = 0; t < from.size(); ++t) into[t] = std::max(into[t], from[t]);
}

Clock& HappensBefore::clock_of(int stream) {
  Clock& c = stream_[stream];
  if (c.empty()) c.assign(exp_.streams.size(), 0);
  return c;
}

void HappensBefore::changed(int stream) {
  join(all_join_, stream_[stream]);
  if (blocking(stream)) join(blocking_join_, stream_[stream]);
}

void HappensBefore::stream_op(int stream) {
  Clock& c = clock_of(stream);
  join(c, host_);  // PO: what the host has waited for is done before anything it issues later
  const Stream& s = exp_.streams[stream];
  if (s.legacy) {
    // LEG: a legacy-stream op waits for every earlier op of every blocking stream.
    for (size_t b = 0; b < stream_.size(); ++b)
      if (blocking(static_cast<int>(b)) && c[b] < stream_ops_[b].size())
        effects_.legacy_waits_for.push_back(static_cast<int>(b));
    join(c, blocking_join_);
  } else if (blocking(stream)) {
    // LEG: and every later op of a blocking stream waits for it.
    const Clock& legacy = stream_[kLegacyStream];
    if (!legacy.empty() && c[kLegacyStream] < legacy[kLegacyStream])
      effects_.held_by_legacy = stream_ops_[kLegacyStream].back();
    join(c, legacy);
  }
  effects_.start = c;
  effects_.at = StreamPoint{stream, static_cast<uint32_t>(stream_ops_[stream].size())};
  stream_ops_[stream].push_back(op_);
  c[stream] = static_cast<uint32_t>(stream_ops_[stream].size());  // SO: later ops follow this one
  changed(stream);
}

void HappensBefore::host_waits_for_op() { join(host_, stream_[effects_.at->stream]); }

void HappensBefore::record(int event, int stream) {
  stream_op(stream);
  event_[event] = stream_[stream];  // E1: the stream's work so far, this record included
  record_op_[event] = op_;
}

void HappensBefore::wait(int stream, int event) {
  stream_op(stream);
  effects_.bound_record = record_op_[event];
  if (record_op_[event] < 0) {  // E3: an event never recorded holds no work: no edge
    effects_.unrecorded_event = true;
    return;
  }
  join(stream_[stream], event_[event]);  // E2: bound to the record issued before the wait
  changed(stream);
}

void HappensBefore::sync_stream(int stream) {
  join(host_, stream_[stream]);
  // S6: syncing the legacy stream waits for blocking streams
  if (exp_.streams[stream].legacy) join(host_, blocking_join_);
}

void HappensBefore::sync_event(int event) {
  effects_.bound_record = record_op_[event];
  if (record_op_[event] < 0) {
    effects_.unrecorded_event = true;
    return;
  }
  join(host_, event_[event]);
}

void HappensBefore::query_event(int event) {
  effects_.bound_record = record_op_[event];
  effects_.unrecorded_event = record_op_[event] < 0;
}

void HappensBefore::group_op(const std::vector<int>& streams) {
  for (size_t i = 1; i < streams.size(); ++i) join(clock_of(streams[0]), stream_[streams[i]]);
  stream_op(streams[0]);
  for (size_t i = 1; i < streams.size(); ++i) {
    join(clock_of(streams[i]), stream_[streams[0]]);
    changed(streams[i]);
  }
}

void HappensBefore::sync_device() { join(host_, all_join_); }

}  // namespace streamlab

#include "runner/happens_before.hpp"

#include <algorithm>

namespace streamlab {

HappensBefore::HappensBefore(const Experiment& exp)
    : exp_(exp),
      host_(exp.streams.size(), 0),
      stream_(exp.streams.size(), Clock(exp.streams.size(), 0)),
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

void HappensBefore::join(Clock& into, const Clock& from) const {
  for (size_t t = 0; t < into.size(); ++t) into[t] = std::max(into[t], from[t]);
}

void HappensBefore::stream_op(int stream) {
  Clock& c = stream_[stream];
  join(c, host_);  // PO: what the host has waited for is done before anything it issues later
  const Stream& s = exp_.streams[stream];
  if (s.legacy) {
    // LEG: a legacy-stream op waits for every earlier op of every blocking stream.
    for (size_t b = 0; b < stream_.size(); ++b) {
      if (!blocking(static_cast<int>(b)) || stream_ops_[b].empty()) continue;
      if (c[b] < stream_ops_[b].size()) effects_.legacy_waits_for.push_back(static_cast<int>(b));
      join(c, stream_[b]);
    }
  } else if (blocking(stream)) {
    // LEG: and every later op of a blocking stream waits for it.
    const Clock& legacy = stream_[kLegacyStream];
    if (c[kLegacyStream] < legacy[kLegacyStream]) effects_.held_by_legacy = stream_ops_[kLegacyStream].back();
    join(c, legacy);
  }
  effects_.start = c;
  effects_.at = StreamPoint{stream, static_cast<uint32_t>(stream_ops_[stream].size())};
  stream_ops_[stream].push_back(op_);
  c[stream] = static_cast<uint32_t>(stream_ops_[stream].size());  // SO: later ops follow this one
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
}

void HappensBefore::sync_stream(int stream) {
  join(host_, stream_[stream]);
  if (!exp_.streams[stream].legacy) return;
  for (size_t b = 0; b < stream_.size(); ++b)  // S6: syncing the legacy stream waits for blocking streams
    if (blocking(static_cast<int>(b))) join(host_, stream_[b]);
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
  for (size_t i = 1; i < streams.size(); ++i) join(stream_[streams[0]], stream_[streams[i]]);
  stream_op(streams[0]);
  for (size_t i = 1; i < streams.size(); ++i) join(stream_[streams[i]], stream_[streams[0]]);
}

void HappensBefore::sync_device() {
  for (const Clock& c : stream_) join(host_, c);
}

}  // namespace streamlab

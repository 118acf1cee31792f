#pragma once
// Happens-before over the expanded op list, under the rules of docs/semantics.md: host program
// order (PO), stream order (SO, S1), event record -> wait bound at the time of the wait (EV, E2,
// E3), the legacy default stream's barrier with blocking streams (LEG, S2-S4) and calls that
// return only once device work is done (HW: S6, S7, E4, H1-H9, I4).
//
// Vector clocks with one component per stream: clock[t] = how many of stream t's ops are known
// to be done. Stream order makes "op k of t is done" imply "ops 0..k-1 of t are done", so one
// number per stream says everything, and each op costs O(streams): the whole walk is linear in
// ops x streams (the legacy stream's barriers and device synchronizes included). The host's
// knowledge is one more clock (what its syncs have waited for).
#include <cstdint>
#include <optional>
#include <vector>

#include "runner/core/experiment.hpp"

namespace streamlab {

using Clock = std::vector<uint32_t>;

// Op number `index` (0-based) among the stream-ordered ops of `stream`.
struct StreamPoint {
  int stream = -1;
  uint32_t index = 0;
};

inline bool done_in(const StreamPoint& p, const Clock& c) { return c[p.stream] > p.index; }

// What issuing one op did, for the analyzer's rules.
struct IssueEffects {
  std::optional<StreamPoint> at;      // where it runs, if it is stream-ordered
  Clock start;                        // what is done before it starts (stream-ordered ops)
  int bound_record = -1;              // a wait or an event sync: the record op it binds to
  bool unrecorded_event = false;      // it waits on or queries an event no earlier op records
  std::vector<int> legacy_waits_for;  // a legacy-stream op: blocking streams it had to wait for
  int held_by_legacy = -1;            // an op of a blocking stream held back by this legacy op
};

class HappensBefore {
 public:
  explicit HappensBefore(const Experiment& exp);

  // Starts issuing op `op` (in issue order); OpKind::order then says what the op does.
  void begin(int op);
  const IssueEffects& effects() const { return effects_; }
  // The host's knowledge: what is done when the host issues the next op.
  const Clock& host() const { return host_; }
  // The op of each stream-ordered point.
  int op_at(const StreamPoint& p) const { return stream_ops_[p.stream][p.index]; }
  // The op index of the record an event's captured work is bound to now; -1 if never recorded.
  int last_record(int event) const { return record_op_[event]; }

  // What OpKind::order calls for the op being issued:
  void stream_op(int stream);  // it runs in `stream` (device work, or a record or wait)
  void host_waits_for_op();    // the call returns only once that op is done
  void record(int event, int stream);
  void wait(int stream, int event);  // stream_op(stream), then later work waits for the event
  void sync_stream(int stream);
  void sync_event(int event);
  void query_event(int event);  // orders nothing (S8); notes a never-recorded event
  void sync_device();
  // L8: the streams of one NCCL group wait for each other before the collective and are blocked
  // until it completes: it runs in the first stream after what every one of them issued, and their
  // later work follows it.
  void group_op(const std::vector<int>& streams);

 private:
  bool blocking(int stream) const;
  void join(Clock& into, const Clock& from) const;
  Clock& clock_of(int stream);  // the stream's clock, made when the stream is first used
  void changed(int stream);     // folds a stream's new clock into the running joins below

  const Experiment& exp_;
  int op_ = -1;
  IssueEffects effects_;
  Clock host_;
  // Per stream: done once its last issued op is done. Empty until the stream is first used, so
  // that walking a graph's body costs what the body uses, not streams x streams.
  std::vector<Clock> stream_;
  // The join of every blocking stream's clock, and of every stream's: what a legacy-stream op and
  // a device synchronize wait for. Kept up to date as clocks change (they only grow), so those
  // ops cost O(streams) rather than O(streams^2).
  Clock blocking_join_, all_join_;
  std::vector<std::vector<int>> stream_ops_;  // per stream: op index of each stream-ordered op
  std::vector<Clock> event_;                  // per event: the work its last record captured
  std::vector<int> record_op_;                // per event: the op that last recorded it (-1: none)
};

}  // namespace streamlab

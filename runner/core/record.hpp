#pragma once
// What a run produced: the samples a backend measured, the figures derived from them, and the
// verdicts of the checks and expectations. Every stage below the reports fills its part once;
// reports and expectations only read it.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runner/core/experiment.hpp"
#include "runner/core/findings.hpp"
#include "runner/core/provenance.hpp"
#include "runner/core/stats.hpp"

namespace streamlab {

// Timings of one op in one repetition. All in milliseconds.
struct OpSample {
  double issue_ms = 0;   // host clock when the API call began, from the repetition's start
  double return_ms = 0;  // host clock when it returned
  // Device interval from timing events in the op's own stream, relative to an event recorded at
  // the repetition's start; NaN for host-only ops and on the host backend.
  double start_ms = NAN, end_ms = NAN;
  // streamQuery / eventQuery: 1 when the work was complete (cudaSuccess), 0 when not
  // (cudaErrorNotReady); -1 for other ops.
  int answer = -1;
  // A graph op, with the CUPTI timer: per captured op of its body, its device time in one replay
  // (the mean over the replays; NaN where none was measured).
  std::vector<double> body_ms{};
  // CUPTI's records of graph nodes: node id -> device ms summed over the op's launches (the
  // backend turns them into body_ms).
  std::vector<std::pair<uint64_t, double>> graph_nodes{};
  double host_ms() const { return return_ms - issue_ms; }
  double device_ms() const { return end_ms - start_ms; }
};

struct RepetitionSample {
  uint64_t number = 0;        // 1-based count of the backend's repetitions, warm-up included
  std::vector<OpSample> ops;  // by op index
  double gate_open_ms = NAN;  // host clock when the start gate opened (NaN: no gate)
  // Host clock from the gate's opening (or the first issue, without a gate) to the end of the
  // repetition's final device synchronize.
  double host_span_ms = 0;
  double device_span_ms = NAN;  // first device start to last device end (NaN: no device ops timed)
};

struct OpFigures {
  Summary device;           // device duration (n = 0 for host-only ops and without a device timer)
  Summary host;             // host time in the API call
  // The bytes behind the op's bandwidth, one convention for every op (figures.cpp says why):
  // device memory traffic, bytes read + bytes written (a device-to-device copy of B bytes counts
  // 2B, a kernel its reads + writes, a memset its writes); a copy between host and device counts
  // its B bytes once, the bytes over the link.
  int64_t bytes = 0;
  double gbps = NAN;        // bytes / median device duration, GB/s (1e9 bytes per second)
  // An op whose traffic is device memory's: its gbps over the run's copy ceiling (NaN: none).
  double of_ceiling = NAN;
  int asked = 0, done = 0;  // queries: repetitions that asked, and those answered "done"
  // A graph op: device time per launch (the op's duration / its launches), and per captured op in
  // one launch (the CUPTI timer only; n = 0 where not measured). Empty for other ops.
  Summary per_launch;
  std::vector<Summary> body;
};

struct StreamFigures {
  int stream = -1;
  double busy_ms = 0;  // median over repetitions of the union of its ops' device intervals
};

struct OverlapFigures {
  size_t a = 0, b = 0;    // op indices (a < b, in different streams), or stream indices
  double overlap_ms = 0;  // median over repetitions of the time both ran
};

// The span against its bounds (cuda-samples' simpleMultiCopy): no overlap at all would take the
// sum of the op durations; perfect overlap, as long as the busiest stream or copy engine.
struct SpanBounds {
  double sum_ms = NAN;       // no-overlap bound
  double busiest_ms = NAN;   // full-overlap bound
  std::string busiest;       // "stream s1", "H2D copy engine"
  double span_ms = NAN;      // measured: first device start to last device end
  double efficiency = NAN;   // (sum - span) / (sum - busiest): 0 = serial, 1 = the bound
  double concurrency = NAN;  // sum / span: how many ops ran at once on average
};

// The fastest device memory traffic the run can be held against, in the ops' convention (read +
// written): the fastest device-to-device copy the run measured, else the device's theoretical
// peak (memory clock x bus width); NaN when neither is known.
struct CopyCeiling {
  double gbps = NAN;
  bool measured = false;  // a copy of this run, not the datasheet formula
  std::string source{};   // "D2D copy 'c' (line 12), measured" or the peak's formula
};

struct RunFigures {
  std::vector<OpFigures> ops;
  CopyCeiling ceiling;
  std::vector<StreamFigures> streams;           // streams with device ops
  std::vector<OverlapFigures> overlaps;         // op pairs that overlapped (median > 0)
  bool op_pairs_skipped = false;                // more than kMaxOpsForPairs device ops
  std::vector<OverlapFigures> stream_overlaps;  // stream pairs whose busy times overlapped
  bool stream_pairs_skipped = false;  // more than kMaxStreamsForPairs streams with device ops
  SpanBounds bounds;
  // The spans over the timed repetitions (the host's from the gate's opening; the GPU's from the
  // first device start to the last end, n = 0 when no device op was timed).
  Summary host_span, device_span;
  // The timed repetition whose host span is the median one (an index into RunRecord::reps): the
  // one a timeline shows as typical.
  size_t typical_rep = 0;
};

struct CheckResult {
  std::string title;  // e.g. "transpose(h_in1 -> h_out1)"
  bool passed = false;
  std::string detail;  // the first mismatch and how many elements differ; empty when passed
  bool evaluated =
      true;  // false: not evaluated (why in detail); counts as neither passed nor failed
};

// The verdict of one item of `expect:`.
struct ExpectationResult {
  // partial: a measure between its full_at and zero_at (some of its points).
  enum class Status { passed, partial, failed, not_evaluated };
  std::string text;
  SourceLoc loc;
  Status status = Status::not_evaluated;
  std::string detail;  // failed: every function call's value; not evaluated: why
  std::vector<std::pair<std::string, double>> values;  // each call's text and value
  double fraction = 0;    // of its points earned: 1 passed, 0 failed, between for partial
  double measured = NAN;  // a measure's value (a ratio with `relative:`)
  // On the host backend, a timing expectation held against the predicted timeline: "holds",
  // "partial", "fails", or "not predicted"; its values in prediction_detail. Never a pass.
  std::string prediction{}, prediction_detail{};
};

// One graded item (a check or an expectation) as autograders and the score see it.
struct ScoredItem {
  enum class Status { passed, partial, failed, not_evaluated };
  std::string id;       // the item's `id`, else "check#N" / "expect#N"
  std::string title;    // its `name`, else what it tests; unique within the run
  bool check = true;    // a check of the contents, else an expectation
  bool timing = false;  // depends on GPU times: scores nothing unless every check passed
  Status status = Status::not_evaluated;
  double score = 0, max_score = 0;
  Visibility visibility = Visibility::visible;
  std::string output;  // what was measured or found; for less than full points, why
  SourceLoc loc;
};
std::string_view status_name(ScoredItem::Status s);

// passed: every check and expectation was evaluated and held; failed: one did not hold;
// incomplete: none failed, but some could not be evaluated (the host backend measures no GPU
// time; a user kernel it cannot run).
enum class Verdict { passed, failed, incomplete };

// The fastest the device in use can move bytes, for the physical floor below which no measured
// time can lie. In GB/s (1e9 bytes per second); NaN where unknown.
struct DevicePeaks {
  double memory_gbps = NAN;  // device memory, reads and writes together
  double link_gbps = NAN;    // the host link, each direction
  int64_t l2_bytes = 0;      // the L2 cache, which may serve repeated reads faster than memory
  std::string memory_source, link_source;  // how each was worked out
};

// Why an op started when it did, in a measured or a predicted timeline (runner/predict/explain.hpp,
// docs/prediction.md).
struct OpWait {
  std::string rule{};  // a WaitRule's name: "stream_order", "event", "copy_engine", ...; empty: no device work
  int op = -1;         // the op that held it (or the host call it was issued after); -1: none
  int stream = -1;     // the other stream a rule names (legacy_waits, queue, group)
  int event = -1;      // event: the event
  double could_ms = NAN, start_ms = NAN;  // when its dependencies allowed it to start; when it did
  std::string text{};  // the sentence: "event 'e' (recorded after 'produce' in s1)"
  int host_wait = -1;  // the op whose end the host waited for before the call returned (-1: none)
};

struct PredictedRun;  // below

// Everything a run produced; reports format it and measure nothing.
struct RunRecord {
  std::string backend;  // "cuda" or "host"
  std::string device;   // the backend's description of where it ran
  std::string timer;    // "cupti", "events" or "none"
  std::string timer_description;
  std::vector<std::string> notes;  // how the run was measured, for the user
  int64_t warmup = 0;
  std::vector<RepetitionSample> reps;  // timed repetitions only
  RunFigures figures;                  // derived from the repetitions (runner/check/figures.hpp)
  std::vector<CheckResult> checks;     // on the contents after the last repetition
  std::vector<ExpectationResult> expectations;
  Findings diagnostics;           // what `streamlab check` said of the experiment before it ran
  std::vector<ScoredItem> items;  // the checks, then the expectations, scored (score.hpp)
  DevicePeaks peaks;              // of the device the run used (none on the host backend)
  // What could not be trusted in the timings (a time below the device's physical floor).
  std::vector<std::string> impossible;
  // Why each op of the typical repetition started when it did, and its critical path (op indices,
  // first to last); empty when no device time was measured.
  std::vector<OpWait> waits;
  std::vector<int> critical_path;
  // The timeline model's prediction of the run (runner/predict/): always on the host backend, with
  // --predict on the cuda backend; null when not asked.
  std::shared_ptr<PredictedRun> predicted;
  // Where it came from: the backend gives the device's facts, the command line the rest.
  Provenance provenance{};
  bool device_timing() const { return timer != "none"; }  // device intervals were measured
  bool checks_passed() const;
  bool expectations_held() const;  // none failed (not evaluated is not failed)
  Verdict verdict() const;
};
// What the timeline model predicted for a run: a record of one modelled repetition (backend and
// timer "model") with its figures and expectations, as every report shows a measured one.
struct PredictedRun {
  std::string profile;             // the device profile: device, file and how it was made
  std::vector<std::string> notes;  // ops it could not time, a profile of another device
  RunRecord run;
  bool complete() const { return notes_unknown == 0; }
  int notes_unknown = 0;  // ops whose cost the model does not know
};

}  // namespace streamlab

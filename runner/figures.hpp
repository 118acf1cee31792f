#pragma once
// Figures derived from a finished run, shared by every report and by expectations: statistics
// over the timed repetitions, bandwidth, stream busy time, overlap, and the bounds of the span.
// Pure computation on the records; nothing here measures. Times in ms.
#include <string>
#include <vector>

#include "runner/backend.hpp"
#include "runner/stats.hpp"

namespace streamlab {

struct RunRecord;  // execute.hpp

struct OpFigures {
  Summary device;      // device duration (n = 0 for host-only ops and without a device timer)
  Summary host;        // host time in the API call
  int64_t bytes = 0;   // moved through device memory: a copy once, a kernel read + write
  double gbps = NAN;   // bytes / median device duration, GB/s (1e9 bytes per second)
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
  double sum_ms = NAN;      // no-overlap bound
  double busiest_ms = NAN;  // full-overlap bound
  std::string busiest;      // "stream s1", "H2D copy engine"
  double span_ms = NAN;     // measured: first device start to last device end
  double efficiency = NAN;  // (sum - span) / (sum - busiest): 0 = serial, 1 = the bound
  double concurrency = NAN; // sum / span: how many ops ran at once on average
};

struct RunFigures {
  std::vector<OpFigures> ops;
  std::vector<StreamFigures> streams;    // streams with device ops
  std::vector<OverlapFigures> overlaps;         // op pairs that overlapped (median > 0)
  bool op_pairs_skipped = false;                // more than kMaxOpsForPairs device ops
  std::vector<OverlapFigures> stream_overlaps;  // stream pairs whose busy times overlapped
  bool stream_pairs_skipped = false;            // more than kMaxStreamsForPairs streams with device ops
  SpanBounds bounds;
};

inline constexpr size_t kMaxOpsForPairs = 256;  // op pairs grow as n^2: beyond this, streams only
inline constexpr size_t kMaxStreamsForPairs = 64;  // and stream pairs as streams^2 x ops: beyond this, none

RunFigures run_figures(const Experiment& exp, const RunRecord& run);
std::vector<OpFigures> op_figures(const RunRecord& run, size_t op_count);
Summary host_span(const RunRecord& run);
Summary device_span(const RunRecord& run);  // n = 0 when no device op was timed

// Medians over the timed repetitions (NaN when not measured).
double median_overlap(const RunRecord& run, size_t a, size_t b);

// The samples of one op field over the timed repetitions, e.g. samples(run, i, &OpSample::issue_ms).
std::vector<double> samples(const RunRecord& run, size_t op, double OpSample::*field);

}  // namespace streamlab

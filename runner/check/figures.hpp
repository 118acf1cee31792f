#pragma once
// Figures derived from a finished run, shared by every report and by expectations: statistics
// over the timed repetitions, bandwidth, stream busy time, overlap, and the bounds of the span.
// Pure computation on the records; nothing here measures. Times in ms.
#include <string>
#include <vector>

#include "runner/core/record.hpp"

namespace streamlab {

inline constexpr size_t kMaxOpsForPairs = 256;  // op pairs grow as n^2: beyond this, streams only
inline constexpr size_t kMaxStreamsForPairs =
    64;  // and stream pairs as streams^2 x ops: beyond this, none

// The bytes an op's bandwidth counts (OpFigures::bytes): device memory read + written; a
// host<->device copy's bytes once.
int64_t traffic_bytes(const Experiment& exp, const Op& op);

RunFigures run_figures(const Experiment& exp, const RunRecord& run);
std::vector<OpFigures> op_figures(const RunRecord& run, size_t op_count);
Summary host_span(const RunRecord& run);
Summary device_span(const RunRecord& run);  // n = 0 when no device op was timed

// Times below the physical floor of the device the run used (its bytes over run.peaks), each
// said in a sentence; none when the device's peaks are unknown (floor.cpp).
std::vector<std::string> impossible_timings(const Experiment& exp, const RunRecord& run);

// Medians over the timed repetitions (NaN when not measured).
double median_overlap(const RunRecord& run, size_t a, size_t b);

// The samples of one op field over the timed repetitions, e.g. samples(run, i,
// &OpSample::issue_ms).
std::vector<double> samples(const RunRecord& run, size_t op, double OpSample::*field);

}  // namespace streamlab

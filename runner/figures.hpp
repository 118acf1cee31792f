#pragma once
// Figures derived from a finished run, shared by every report: per-op and per-span statistics
// over the timed repetitions. Pure computation on the records; nothing here measures.
#include <vector>

#include "runner/execute.hpp"
#include "runner/stats.hpp"

namespace streamlab {

struct OpFigures {
  Summary device;  // device duration, ms (n = 0 for host-only ops and on the host backend)
  Summary host;    // host time in the API call, ms
};

std::vector<OpFigures> op_figures(const RunRecord& run, size_t op_count);
Summary host_span(const RunRecord& run);    // ms
Summary device_span(const RunRecord& run);  // ms; n = 0 when no device op was timed

// The samples of one op field over the timed repetitions, e.g. sample(run, i, &OpSample::issue_ms).
std::vector<double> samples(const RunRecord& run, size_t op, double OpSample::*field);

}  // namespace streamlab

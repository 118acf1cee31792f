#pragma once
// Explaining a timeline, measured or predicted: for every op, when its true dependencies
// (dependencies.hpp) let it start, when it did, and the rule that held it; and the critical path
// through those holds (docs/prediction.md).
#include <cmath>
#include <vector>

#include "runner/core/record.hpp"
#include "runner/predict/dependencies.hpp"

namespace streamlab {

// One op's times in the timeline explained, all from the same origin (ms).
struct TimelineOp {
  double issue_ms = 0, return_ms = 0;
  double start_ms = NAN, end_ms = NAN;  // NaN: no device interval (a marker, a host-only op)
};

struct Explanation {
  std::vector<OpWait> waits;       // by op index
  std::vector<int> critical_path;  // op indices, first to last
};

// `gate_open_ms`: when the start gate let the streams run (NaN: no gate), holding the ops before
// gate_opens_before(exp); `connections`: the hardware queues streams were mapped onto.
Explanation explain(const Experiment& exp, const std::vector<OpDependencies>& deps,
                    const std::vector<TimelineOp>& timeline, double gate_open_ms, int connections);

// The timeline of a measured repetition (the cuda backend's samples).
std::vector<TimelineOp> measured_timeline(const RepetitionSample& rep);

}  // namespace streamlab

#pragma once
// The timeline model's place in a run (docs/prediction.md): the prediction of a run as a record
// reports show like a measured one, the explanation of a measured repetition, and timing
// expectations held against the prediction.
#include <memory>
#include <string>
#include <vector>

#include "runner/core/profile.hpp"
#include "runner/core/record.hpp"

namespace streamlab {

struct PeerRun;  // runner/check/expect.hpp

// One modelled repetition with its figures, waits and critical path. `gate`: as the cuda
// backend would run it (--no-gate: false). `notes`: how the profile was chosen.
std::shared_ptr<PredictedRun> predict(const Experiment& exp, const DeviceProfile& profile, bool gate,
                                      std::vector<std::string> notes);

// Why each op of the typical measured repetition started when it did, and its critical path.
void explain_measured(const Experiment& exp, RunRecord& record, int connections);

// The prediction's verdict on each timing expectation, beside the run's own (which stays what
// it is: on the host backend, not evaluated).
void judge_in_prediction(const Experiment& exp, RunRecord& record, const std::vector<PeerRun>& peers);

}  // namespace streamlab

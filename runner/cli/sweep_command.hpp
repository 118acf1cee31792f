#pragma once
// `run` over a sweep: the experiment once per point of its params, then one report of every point
// (runner/report/sweep_report.hpp).
#include <optional>

#include "runner/cli/run_support.hpp"
#include "runner/load/load.hpp"
#include "runner/report/output_file.hpp"

namespace streamlab {

// One run of a loaded experiment under `limit` (which a device fault's search for its op takes
// over: it is reset then); what `run` does for one experiment, and a sweep for each point.
RunRecord run_loaded(const Experiment& exp, const RunArgs& args, std::optional<TimeLimit>& limit);
// The exit code of a run's verdict.
int exit_code(Verdict v);

// Every point of `sweep` (the file parsed once, resolved per point with its params on top of
// --set), all within the command's time limit (`limit`, which resolving the points runs under;
// each point then has what is left of it); then the sweep's reports.
int run_sweep(const RunArgs& args, const ParsedExperiment& parsed, SweepSpec sweep,
              const OutputPlan& plan, std::optional<TimeLimit>& limit);

}  // namespace streamlab

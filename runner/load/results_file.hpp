#pragma once
// Reading results back (`streamlab compare`): the JSON `streamlab run --json` wrote, a sweep's
// included, into the runs and the samples they recorded.
#include <string>
#include <vector>

#include "runner/check/compare.hpp"

namespace streamlab {

// The runs a results file holds (one; a sweep's file, one per point, keyed by its params), or the
// results files under a folder (keyed by their path in it; other JSON files are left out and said
// in `skipped`). Throws InvalidInput naming the file, and where the JSON is wrong.
std::vector<RecordedRun> read_recorded_runs(const std::string& path, std::vector<std::string>& skipped);

}  // namespace streamlab

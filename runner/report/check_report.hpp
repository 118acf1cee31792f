#pragma once
// The findings of analyze as JSON items (schemas/check.schema.json, $defs/diagnostic), for
// `check --format json` and for the results of `run --json`.
#include <nlohmann/json.hpp>

#include "runner/core/experiment.hpp"
#include "runner/core/findings.hpp"

namespace streamlab {

nlohmann::ordered_json findings_json(const Experiment& exp, const Findings& findings);

}  // namespace streamlab

#pragma once
// The results document of one run (schemas/results.schema.json) as JSON, for the reports that hold
// it inside their own (a sweep's points).
#include <nlohmann/json.hpp>

#include "runner/core/experiment.hpp"
#include "runner/core/record.hpp"

namespace streamlab {

nlohmann::ordered_json results_document(const Experiment& exp, const RunRecord& run);
std::string_view verdict_name(Verdict v);  // "passed", "failed", "incomplete"

}  // namespace streamlab

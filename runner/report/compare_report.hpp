#pragma once
// `streamlab compare`'s reports: a markdown table (for a terminal, a pull request or a CI log) and
// JSON (schemas/compare.schema.json).
#include <string>
#include <vector>

#include "runner/check/compare.hpp"

namespace streamlab {

struct CompareInputs {
  std::vector<RecordedRun> a, b;
  std::vector<std::string> skipped;  // JSON files of the folders that are not results
};

std::string format_compare_markdown(const Comparison& c, const CompareInputs& in);
std::string format_compare_json(const Comparison& c, const CompareInputs& in);

}  // namespace streamlab

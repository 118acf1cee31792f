#pragma once
// analyze: races, lifetime errors and synchronization pitfalls, found from the op list alone
// (no GPU), the way a compiler reports errors. Happens-before follows CUDA's rules
// (happens_before.hpp); every access is checked against the earlier accesses it overlaps.
#include <string>
#include <string_view>

#include "runner/core/experiment.hpp"
#include "runner/core/findings.hpp"

namespace streamlab {

// The findings in source order, repeats from loop iterations folded into one, `allow`s applied
// (an `allow` that acknowledges nothing is itself reported).
Findings analyze(const Experiment& exp);

struct FindingCounts {
  int errors = 0, warnings = 0, notes = 0, acknowledged = 0;
};
FindingCounts count_findings(const Findings& findings);  // unacknowledged ones by severity

// Like a compiler: each unacknowledged finding with its source line, related notes and fix.
std::string format_findings(const Findings& findings, std::string_view source);
// "1 error, 2 warnings, 1 note (3 acknowledged)"; "no diagnostics" when there are none.
std::string format_counts(const FindingCounts& counts);
// `check --format json`: the findings of a loaded experiment (schemas/check.schema.json).
std::string format_findings_json(const Experiment& exp, const Findings& findings);
// The same document for a file that did not load: its load errors, code "invalid".
std::string format_load_errors_json(const std::string& file, const Diagnostics& diags);

}  // namespace streamlab

#pragma once
#include <string>
#include <vector>

#include "runner/execute/execute.hpp"

namespace streamlab {

// The console report of a finished run: the op table (median device and host times), the span
// per repetition, and each check's verdict. Formatting only.
std::string format_console_report(const Experiment& exp, const RunRecord& run);

// What the GB/s of an op table count, and the copy ceiling its "ceiling" column is against, in
// sentences (none when no op has a bandwidth): the console and HTML tables say the same.
std::vector<std::string> bandwidth_notes(const RunFigures& f);

// "verdict: passed: ...", "verdict: FAILED: 1 check failed", "verdict: INCOMPLETE: ...": what the
// exit code says, in words.
std::string format_verdict(const RunRecord& run);

// The op list as load expanded it (arrays, loops, resolved expressions), without times:
// `streamlab check --print`.
std::string format_op_list(const Experiment& exp);

}  // namespace streamlab

#pragma once
#include <string>

#include "runner/execute.hpp"

namespace streamlab {

// The console report of a finished run: the op table (median device and host times), the span
// per repetition, and each check's verdict. Formatting only.
std::string format_console_report(const Experiment& exp, const RunRecord& run);

// One line saying what an op does: "h_in1 -> d_in1 (H2D, 4 MiB)", "transpose_naive<<<...>>>".
std::string describe_op(const Experiment& exp, const Op& op);

// "4 MiB", "1.5 KiB", "12 B".
std::string format_bytes(int64_t bytes);

}  // namespace streamlab

#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runner/core/experiment.hpp"

namespace streamlab {

struct LoadOptions {
  // `--set NAME=EXPR`, in command-line order; each replaces the param's expression in the file.
  std::vector<std::pair<std::string, std::string>> overrides;
};

// Why `repeat` timed and `warmup` untimed repetitions of the experiment are too many to keep their
// samples (limits::kRepetitions, kSamples), or "" when they are not.
std::string repetitions_problem(const Experiment& exp, int64_t repeat, int64_t warmup);

// Reads, checks and resolves an experiment. Throws InvalidExperiment carrying every problem
// found (formatted as `file:line:col: error: ...` with the source line and a caret).
Experiment load_file(const std::string& path, const LoadOptions& options = {});
// The same from text in memory; `file` is the name diagnostics use.
Experiment load_string(std::string_view text, const std::string& file,
                       const LoadOptions& options = {});

}  // namespace streamlab

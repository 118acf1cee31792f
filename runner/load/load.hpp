#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runner/core/experiment.hpp"

namespace streamlab {

struct LoadOptions {
  // `--set NAME=EXPR`, in command-line order; each replaces the param's expression in the file.
  std::vector<std::pair<std::string, std::string>> overrides;
  // A point of a sweep: the file's `sweep:` axes were read once, before the points, with the params
  // as the file and --set give them (read again with the point's values, `[64, 2*N]` would mean
  // other values at each point); only its plots are read again, against the point's ops.
  bool sweep_point = false;
};

// Why `repeat` timed and `warmup` untimed repetitions of the experiment are too many to keep their
// samples (limits::kRepetitions, kSamples), or "" when they are not.
std::string repetitions_problem(const Experiment& exp, int64_t repeat, int64_t warmup);

// An experiment file read and its YAML parsed, not yet resolved: a sweep resolves it once per point
// (each with its params) without reading or parsing the file again.
struct ParsedExperiment;
// Reads and parses; throws InvalidExperiment as load_file does.
std::shared_ptr<const ParsedExperiment> parse_file(const std::string& path);
// Resolves the parsed file with `options`, as load_file does.
Experiment instantiate(const ParsedExperiment& parsed, const LoadOptions& options = {});

// The sweep a run makes: the command line's --sweep axes (NAME=V1,V2,...: integer expressions over
// the experiment's params) and --plot measures in place of the experiment's `sweep:`, else that,
// less the params --set (`sets`, NAME=EXPR) pins; empty: one run. Throws CommandLineError naming
// what is wrong (a param both swept and set on the command line).
SweepSpec sweep_from_args(const Experiment& exp, const std::vector<std::string>& sweeps,
                          const std::vector<std::string>& plots, const std::vector<std::string>& sets);

// Reads, checks and resolves an experiment. Throws InvalidExperiment carrying every problem
// found (formatted as `file:line:col: error: ...` with the source line and a caret).
Experiment load_file(const std::string& path, const LoadOptions& options = {});
// The same from text in memory; `file` is the name diagnostics use.
Experiment load_string(std::string_view text, const std::string& file,
                       const LoadOptions& options = {});

}  // namespace streamlab

#pragma once
// Expectations (`expect:`): conditions over a run's medians, stated in the experiment so a lab or
// a regression check knows what the numbers must show, e.g.
//   overlap(copy, kernel) >= 0.9 * duration(copy)
// Numbers, params, + - * /, comparisons, and/or/not, and the functions of expect.cpp's table.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runner/core/experiment.hpp"
#include "runner/core/record.hpp"

namespace YAML {
class Node;  // yaml-cpp: only load reads YAML
}

namespace streamlab {

class LoadContext;

struct ExpectNode {
  enum class Kind { number, call, negate, logical_not, binary } kind = Kind::number;
  std::string op;                      // call: the function; binary: + - * / < <= > >= == != and or
  double value = 0;                    // number (params are resolved to numbers at load)
  std::vector<int> refs;               // call: op or stream indices
  std::vector<std::vector<int>> sets;  // call: the ops of each `ops` argument
  std::vector<std::shared_ptr<const ExpectNode>> args;
  std::string text;           // call: its source text, for reporting its value
  size_t begin = 0, end = 0;  // where the node's text lies in the expectation
  int height = 1;             // nodes on the longest path down: evaluating recurses this deep
  bool boolean = false;
};

// Reads `expect:` (a list of strings) into exp.expectations, reporting problems at their column.
void load_expectations(LoadContext& ctx, const YAML::Node& node);

// A peer experiment `streamlab grade` ran beside this one, repetition for repetition: a measure
// with `relative: NAME` is divided by the same measure of peer NAME. `measures` holds, per
// expectation of this experiment, the measure parsed against the peer's ops (null where the
// expectation is relative to another peer, or to none).
struct PeerRun {
  std::string name;
  const Experiment* exp = nullptr;
  const RunRecord* run = nullptr;
  std::vector<std::shared_ptr<const ExpectNode>> measures;
};

std::vector<ExpectationResult> evaluate_expectations(const Experiment& exp, const RunRecord& run,
                                                     const std::vector<PeerRun>& peers = {});

// A `no_diagnostics` expectation judged by what `streamlab check` found: passed when none of its
// codes is among the findings (acknowledged or not), else failed with the first.
ExpectationResult judge_diagnostics(const Expectation& e, const Findings& findings);

// A relative expectation's measure parsed against a peer experiment's ops and params (and the
// values its loops' variables had); null with the problem in `error` when it does not parse there.
std::shared_ptr<const ExpectNode> parse_peer_measure(const Experiment& peer, const Expectation& e,
                                                     std::string* error);

// A measure (a number, not a condition) read from YAML, for a sweep's `plot:`; null, with the
// problem reported at its column, when it does not parse.
std::shared_ptr<const ExpectNode> load_measure(LoadContext& ctx, const YAML::Node& node,
                                               std::string_view what);
// The same from text (the command line's --plot); null with the problem in `error`.
std::shared_ptr<const ExpectNode> parse_measure(const Experiment& exp, std::string_view text,
                                                std::string* error);
// A measure's value on a run; NaN where something it needs was not measured.
double measure_value(const Experiment& exp, const RunRecord& run, const ExpectNode& measure);
// The value of an expression that calls no function (numbers and params only), as a run would
// evaluate it: NaN for a condition that compares a number that is not finite.
double evaluate_constant(const ExpectNode& node);
// Whether a measure needs GPU times (the host backend has none; its prediction does).
bool measure_uses_time(const ExpectNode& measure);
// A measure's unit, from its functions' units ("ms", "GB/s"): "" for a ratio of one unit or a
// plain number; nullopt where the units do not make one (ms * ms, ms + GB/s).
std::optional<std::string> measure_unit(const ExpectNode& measure);

struct FunctionDoc {
  std::string signature;
  std::string_view unit, meaning;
};
std::vector<FunctionDoc> expectation_functions();  // for `streamlab list`

}  // namespace streamlab

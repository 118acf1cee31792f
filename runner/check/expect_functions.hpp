#pragma once
// The functions expectations may call: one table, read by the parser (names, arguments) and
// the evaluator (values). Internal to expect*.cpp.
#include <string_view>
#include <vector>

#include "runner/check/figures.hpp"

namespace streamlab {

// ops: an op id, or the name of a loop's ops (every op whose id is NAME[k]).
enum class ExpectArg { op, ops, stream, number };

struct PeerRun;  // expect.hpp

struct ExpectContext {
  const Experiment& exp;
  const RunRecord& run;
  const RunFigures& figures;
  const std::vector<PeerRun>& peers;
};

struct ExpectFunction {
  std::string_view name;
  std::vector<ExpectArg> args;
  bool uses_time;  // needs GPU times: not evaluated on the host backend
  std::string_view unit;
  std::string_view meaning;
  // refs: op or stream indices of op/stream arguments; sets: the ops of `ops` arguments;
  // numbers: values of number arguments.
  double (*eval)(const ExpectContext&, const std::vector<int>& refs,
                 const std::vector<std::vector<int>>& sets, const std::vector<double>& numbers);
};

const std::vector<ExpectFunction>& expect_functions();
const ExpectFunction* find_expect_function(std::string_view name);

}  // namespace streamlab

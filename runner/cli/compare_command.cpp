// compare: two recorded runs, or two folders of them, measure by measure (runner/check/compare.hpp).
#include <filesystem>
#include <iostream>

#include "runner/check/compare.hpp"
#include "runner/cli/cli.hpp"
#include "runner/cli/commands.hpp"
#include "runner/core/diagnostics.hpp"
#include "runner/load/results_file.hpp"
#include "runner/report/compare_report.hpp"
#include "runner/report/output_file.hpp"

namespace streamlab {
namespace {

OutputPlan compare_plan(const CompareArgs& args) {
  std::vector<OutputRequest> requests;
  if (!args.json.empty()) requests.push_back({"--json", args.json});
  if (!args.markdown.empty()) requests.push_back({"--markdown", args.markdown});
  return OutputPlan(std::move(requests), {{"results A", args.a}, {"results B", args.b}});
}

}  // namespace

int cmd_compare(const CompareArgs& args) {
  OutputPlan plan = compare_plan(args);
  CompareInputs in;
  in.a = read_recorded_runs(args.a, in.skipped);
  in.b = read_recorded_runs(args.b, in.skipped);
  for (const auto& [runs, path] : {std::pair{&in.a, &args.a}, {&in.b, &args.b}})
    if (runs->empty())
      throw InvalidInput(*path + (std::filesystem::is_directory(*path)
                                      ? ": error: no results file in the folder"
                                      : ": error: the file holds no run (a sweep with no points)"));
  Comparison c = compare_runs(in.a, in.b, {.threshold = args.threshold / 100, .alpha = args.alpha});
  c.a_label = args.a, c.b_label = args.b;
  // Names and notes come from the results files: no byte of theirs may reach a terminal raw.
  std::string markdown = printable(format_compare_markdown(c, in));
  if (!plan.writes_stdout()) std::cout << markdown << std::flush;
  std::vector<std::string> texts;
  for (const auto& r : plan.requests()) texts.push_back(r.option == "--json" ? format_compare_json(c, in) : markdown);
  plan.commit(texts);
  return c.regressed() ? kExitCheckFailed : kExitOk;
}

}  // namespace streamlab

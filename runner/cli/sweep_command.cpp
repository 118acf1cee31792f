// `run` over a sweep. The file is read and parsed once; each point is resolved from it with its
// params (load checks every point before any runs, so a value that breaks a shape is found
// first), then run in order. One time limit bounds the whole command: a sweep of many points must
// not multiply what a file may take.
#include "runner/cli/sweep_command.hpp"

#include <iostream>

#include <fmt/format.h>

#include "runner/check/expect.hpp"
#include "runner/cli/cli.hpp"
#include "runner/core/errors.hpp"
#include "runner/predict/predict.hpp"
#include "runner/report/sweep_report.hpp"

namespace streamlab {
namespace {

// "K=4, MIB=64"
std::string point_text(const SweepPoint& p) {
  std::string out;
  for (const auto& [name, value] : p) out += fmt::format("{}{}={}", out.empty() ? "" : ", ", name, value);
  return out;
}

// The command line of one point: --set for each of its params after the command line's own, so
// a device fault's search for its op (which runs the same command again) runs this point.
RunArgs point_args(const RunArgs& args, const SweepPoint& point) {
  RunArgs a = args;
  a.sweeps.clear(), a.plots.clear();
  for (const auto& [name, value] : point) a.sets.push_back(fmt::format("{}={}", name, value));
  return a;
}

// Reports a sweep cannot write: each is one run's (a trace's timeline, an autograder's items).
void refuse_per_run_reports(const RunArgs& args) {
  for (auto [option, path] : {std::pair{"--trace", &args.trace}, {"--gradescope", &args.gradescope},
                              {"--junit", &args.junit}, {"--tap", &args.tap}})
    if (!path->empty())
      throw CommandLineError(fmt::format(
          "{} reports one run, not a sweep: run one point (--set NAME=VALUE in place of the sweep) "
          "with {}",
          option, option));
}

// The plots' measures parsed against the point's own ops (`out[K-1]` is another op at each K).
std::vector<std::shared_ptr<const ExpectNode>> plot_measures(const SweepSpec& sweep, const SweepPointRun& point) {
  std::vector<std::shared_ptr<const ExpectNode>> out;
  for (const SweepPlot& plot : sweep.plots) {
    std::string error;
    out.push_back(parse_measure(point.exp, plot.text, &error));
    if (!out.back())
      throw CommandLineError(fmt::format("plot '{}' at sweep point {}: {}", plot.text, point_text(point.params), error));
  }
  return out;
}

using Measures = std::vector<std::shared_ptr<const ExpectNode>>;

// Every point resolved, with its plots' measures parsed (`measures`, one entry per point), or
// InvalidExperiment naming the point whose values break the file.
std::vector<SweepPointRun> resolve_points(const RunArgs& args, const ParsedExperiment& parsed,
                                          const SweepSpec& sweep, std::vector<Measures>& measures) {
  std::vector<SweepPointRun> points;
  int64_t samples = 0;
  for (const SweepPoint& p : sweep_points(sweep.axes)) {
    RunArgs a = point_args(args, p);
    try {
      LoadOptions options = load_options(a.sets);
      options.sweep_point = true;
      points.push_back({p, instantiate(parsed, options), {}, {}, {}});
    } catch (const InvalidExperiment& e) {
      throw InvalidExperiment(fmt::format("streamlab: error: at sweep point {}:\n{}", point_text(p), e.what()),
                              e.diagnostics);
    }
    measures.push_back(plot_measures(sweep, points.back()));  // one that does not parse stops the sweep before it runs
    const Experiment& exp = points.back().exp;
    int64_t repeat = args.repeat >= 0 ? args.repeat : exp.repeat;
    int64_t warmup = args.warmup >= 0 ? args.warmup : exp.warmup;
    samples += (repeat + warmup) * std::max<int64_t>(1, static_cast<int64_t>(exp.ops.size()));
    if (samples > limits::kSweepSamples)
      throw CommandLineError(fmt::format(
          "the sweep would keep more than {} samples (repetitions x ops over its points, up to "
          "point {}); fewer points, or fewer repetitions",
          limits::kSweepSamples, point_text(p)));
  }
  return points;
}

std::vector<double> plot_values(const std::vector<std::shared_ptr<const ExpectNode>>& measures,
                                const Experiment& exp, const RunRecord& r) {
  std::vector<double> out;
  for (const auto& m : measures) {
    // The host backend measures no GPU time: a measure that needs it is not measured there.
    bool unmeasured = r.backend == "host" && measure_uses_time(*m);
    out.push_back(unmeasured ? NAN : measure_value(exp, r, *m));
  }
  return out;
}

// One point, under what is left of the command's limit (counted from `started`); its own limit
// object names the point's experiment in what had not finished.
void run_point(const RunArgs& args, const SweepSpec& sweep, const Measures& measures,
               SweepPointRun& point, size_t index, size_t total,
               std::chrono::steady_clock::time_point started) {
  std::cerr << fmt::format("streamlab: sweep point {} of {}: {}\n", index + 1, total,
                           point_text(point.params));
  RunArgs a = point_args(args, point.params);
  std::optional<TimeLimit> limit(std::in_place, a, "the experiment", started, &point.exp);
  point.record = run_loaded(point.exp, a, limit);
  point.plots = plot_values(measures, point.exp, point.record);
  point.predicted_plots.assign(sweep.plots.size(), NAN);
  if (point.record.predicted)
    point.predicted_plots = plot_values(measures, point.exp, point.record.predicted->run);
  point.exp.source.clear();  // diagnostics are printed: a thousand copies of the file need not stay
}

std::string format_sweep(const SweepRun& sweep, const std::string& option) {
  if (option == "--json") return format_sweep_json(sweep);
  if (option == "--csv") return format_sweep_csv(sweep);
  return format_sweep_html(sweep);
}

}  // namespace

int run_sweep(const RunArgs& args, const ParsedExperiment& parsed, SweepSpec sweep,
              const OutputPlan& plan, std::optional<TimeLimit>& limit) {
  refuse_per_run_reports(args);
  std::vector<Measures> measures;
  std::vector<SweepPointRun> points = resolve_points(args, parsed, sweep, measures);
  const auto started = limit->started();
  limit.reset();  // one watchdog at a time: each point's takes over, with the same deadline
  SweepRun run{std::move(sweep), std::move(points)};
  for (size_t i = 0; i < run.points.size(); ++i)
    run_point(args, run.spec, measures[i], run.points[i], i, run.points.size(), started);
  if (!plan.writes_stdout()) std::cout << format_sweep_console(run) << std::flush;
  std::vector<std::string> texts;
  for (const auto& request : plan.requests()) texts.push_back(format_sweep(run, request.option));
  plan.commit(texts);
  return exit_code(run.verdict());
}

}  // namespace streamlab

#include "runner/execute/execute.hpp"

#include <fmt/format.h>

#include "runner/check/checks.hpp"
#include "runner/check/expect.hpp"
#include "runner/check/figures.hpp"
#include "runner/check/score.hpp"

namespace streamlab {

std::string RunProgress::describe() const {
  switch (phase.load()) {
    case loading:
      return "while loading the experiment";
    case compiling:
      return "while compiling its user kernels";
    case preparing:
      return "while preparing the run (buffers, libraries, graphs, warm-up calls)";
    case warmup:
      return fmt::format("in warm-up repetition {} of {}", repetition.load(), of.load());
    case timed:
      return fmt::format("in timed repetition {} of {}", repetition.load(), of.load());
    case checking:
      return "while checking the results";
  }
  return "";
}

namespace {

void enter(const RunOptions& o, RunProgress::Phase phase, int64_t of = 0) {
  if (!o.where) return;
  o.where->repetition = 0;
  o.where->of = of;
  o.where->phase = phase;
}

void next_repetition(const RunOptions& o) {
  if (o.where) ++o.where->repetition;
}

}  // namespace

RunRecord run_experiment(const Experiment& exp, Backend& backend, const RunOptions& options) {
  RunRecord record;
  record.backend = backend.name();
  record.warmup = options.warmup;
  enter(options, RunProgress::preparing);
  backend.prepare();
  record.device = backend.description();
  record.timer = backend.timer();
  record.timer_description = backend.timer_description();
  const int64_t total = options.warmup + options.repeat;
  auto done = [&](int64_t n) {
    if (options.progress) options.progress(n, total);
  };
  enter(options, RunProgress::warmup, options.warmup);
  for (int64_t i = 0; i < options.warmup; ++i)
    next_repetition(options), backend.run_repetition(), done(i + 1);
  enter(options, RunProgress::timed, options.repeat);
  for (int64_t i = 0; i < options.repeat; ++i)
    next_repetition(options), record.reps.push_back(backend.run_repetition()),
        done(options.warmup + i + 1);
  enter(options, RunProgress::checking);
  backend.finish(record.reps);
  record.notes = options.notes;
  for (auto& note : backend.notes()) record.notes.push_back(std::move(note));
  record.diagnostics = options.findings;
  record.checks = run_checks(
      exp, [&](int index) { return backend.contents(index); }, backend.measures_device_time());
  record.peaks = backend.peaks();
  record.figures = run_figures(exp, record);
  record.impossible = impossible_timings(exp, record);
  record.expectations = evaluate_expectations(exp, record);
  record.items = score_items(exp, record);
  return record;
}

}  // namespace streamlab

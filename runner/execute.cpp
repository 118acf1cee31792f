#include "runner/execute.hpp"

namespace streamlab {

bool RunRecord::checks_passed() const {
  for (const auto& c : checks)
    if (c.evaluated && !c.passed) return false;
  return true;
}

bool RunRecord::expectations_held() const {
  for (const auto& e : expectations)
    if (e.status == ExpectationResult::Status::failed) return false;
  return true;
}

RunRecord run_experiment(const Experiment& exp, Backend& backend, const RunOptions& options) {
  RunRecord record;
  record.backend = backend.name();
  record.warmup = options.warmup;
  backend.prepare();
  record.device = backend.description();
  record.timer = backend.timer();
  record.timer_description = backend.timer_description();
  const int64_t total = options.warmup + options.repeat;
  auto done = [&](int64_t n) {
    if (options.progress) options.progress(n, total);
  };
  for (int64_t i = 0; i < options.warmup; ++i) backend.run_repetition(), done(i + 1);
  for (int64_t i = 0; i < options.repeat; ++i) record.reps.push_back(backend.run_repetition()), done(options.warmup + i + 1);
  backend.finish(record.reps);
  record.notes = backend.notes();
  record.checks = run_checks(exp, [&](int index) { return backend.contents(index); }, backend.measures_device_time());
  record.figures = run_figures(exp, record);
  record.expectations = evaluate_expectations(exp, record);
  return record;
}

}  // namespace streamlab

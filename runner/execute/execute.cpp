#include "runner/execute/execute.hpp"

#include <fmt/format.h>

#include "runner/check/checks.hpp"
#include "runner/check/expect.hpp"
#include "runner/check/figures.hpp"
#include "runner/check/score.hpp"
#include "runner/predict/predict.hpp"
#include "runner/predict/profile_io.hpp"
#include "runner/predict/simulate.hpp"

namespace streamlab {

std::string RunProgress::describe() const {
  switch (phase.load()) {
    case loading:
      return "while loading the experiment";
    case compiling:
      return "while compiling its user kernels";
    case analyzing:
      return "while analyzing it (the race analysis of streamlab check)";
    case preparing:
      return "while preparing the run (buffers, libraries, graphs, warm-up calls)";
    case warmup:
      return fmt::format("in warm-up repetition {} of {}", repetition.load(), of.load());
    case timed:
      return fmt::format("in timed repetition {} of {}", repetition.load(), of.load());
    case checking:
      return "while checking the results";
    case modelling:
      return "while explaining and predicting its timeline (the timeline model)";
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

namespace {

// One repetition of participant `i`, which the caller learns of when it fails.
RepetitionSample repetition(std::vector<Participant>& runs, size_t i, size_t* failed) {
  if (failed) *failed = i;
  return runs[i].backend->run_repetition();
}

void run_round(std::vector<Participant>& runs, std::vector<RunRecord>* records, int64_t round,
               size_t* failed) {
  for (size_t k = 0; k < runs.size(); ++k) {
    size_t i = (static_cast<size_t>(round) + k) % runs.size();
    RepetitionSample rep = repetition(runs, i, failed);
    if (records) (*records)[i].reps.push_back(std::move(rep));
  }
}

// The timeline model's part: the measured repetition explained, and the run predicted where asked.
void model(const Experiment& exp, const RunOptions& options, const Backend& backend,
           RunRecord& record) {
  std::string note;
  const DeviceProfile profile =
      options.profile ? *options.profile : builtin_profile(backend.device_name(), &note);
  explain_measured(exp, record, connections_of(exp, profile));
  if (record.backend == "host" || options.predict)
    record.predicted =
        predict(exp, profile, options.gate, note.empty() ? std::vector<std::string>{} : std::vector<std::string>{note});
}

}  // namespace

std::vector<RunRecord> run_together(std::vector<Participant>& runs, const RunOptions& options,
                                    size_t* failed) {
  std::vector<RunRecord> records(runs.size());
  enter(options, RunProgress::preparing);
  for (size_t i = 0; i < runs.size(); ++i) {
    if (failed) *failed = i;
    runs[i].backend->prepare();
    RunRecord& r = records[i];
    r.backend = runs[i].backend->name();
    r.warmup = options.warmup;
    r.device = runs[i].backend->description();
    r.timer = runs[i].backend->timer();
    r.timer_description = runs[i].backend->timer_description();
    r.provenance.device = runs[i].backend->device_facts();
  }
  const int64_t total = options.warmup + options.repeat;
  auto done = [&](int64_t n) {
    if (options.progress) options.progress(n, total);
  };
  enter(options, RunProgress::warmup, options.warmup);
  for (int64_t i = 0; i < options.warmup; ++i)
    next_repetition(options), run_round(runs, nullptr, i, failed), done(i + 1);
  enter(options, RunProgress::timed, options.repeat);
  for (int64_t i = 0; i < options.repeat; ++i)
    next_repetition(options), run_round(runs, &records, i, failed), done(options.warmup + i + 1);
  for (size_t i = 0; i < runs.size(); ++i) {
    enter(options, RunProgress::checking);
    if (failed) *failed = i;
    const Experiment& exp = *runs[i].exp;
    Backend& backend = *runs[i].backend;
    RunRecord& record = records[i];
    backend.finish(record.reps);
    record.notes = runs[i].notes;
    for (auto& note : backend.notes()) record.notes.push_back(std::move(note));
    record.diagnostics = runs[i].findings;
    record.checks = run_checks(
        exp, [&](int index) { return backend.contents(index); }, backend.measures_device_time());
    record.peaks = backend.peaks();
    record.figures = run_figures(exp, record);
    record.impossible = impossible_timings(exp, record);
    enter(options, RunProgress::modelling);
    model(exp, options, backend, record);
  }
  return records;
}

void evaluate(const Experiment& exp, RunRecord& record, const std::vector<PeerRun>& peers) {
  record.expectations = evaluate_expectations(exp, record, peers);
  judge_in_prediction(exp, record, peers);
  record.items = score_items(exp, record);
}

RunRecord run_experiment(const Experiment& exp, Backend& backend, const RunOptions& options) {
  std::vector<Participant> one = {{&exp, &backend, options.notes, options.findings}};
  RunRecord record = std::move(run_together(one, options).front());
  evaluate(exp, record);
  return record;
}

}  // namespace streamlab

#include "runner/predict/predict.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "runner/check/expect.hpp"
#include "runner/check/figures.hpp"
#include "runner/predict/explain.hpp"
#include "runner/predict/simulate.hpp"

namespace streamlab {
namespace {

// The model's repetition as a backend's sample: device intervals for the ops a device timer
// times, spans as the cuda backend measures them (the host's from the gate's opening).
RepetitionSample sample_of(const Experiment& exp, const ModelRun& m) {
  RepetitionSample rep;
  rep.number = 1;
  double first = NAN, last = NAN;
  for (size_t i = 0; i < exp.ops.size(); ++i) {
    OpSample s;
    s.issue_ms = m.ops[i].issue_ms;
    s.return_ms = m.ops[i].return_ms;
    if (exp.ops[i].device_work && !std::isnan(m.ops[i].start_ms)) {
      s.start_ms = m.ops[i].start_ms;
      s.end_ms = m.ops[i].end_ms;
      first = std::isnan(first) ? s.start_ms : std::min(first, s.start_ms);
      last = std::isnan(last) ? s.end_ms : std::max(last, s.end_ms);
    }
    rep.ops.push_back(s);
  }
  rep.gate_open_ms = m.gate_open_ms;
  const double from = std::isnan(m.gate_open_ms) ? 0 : m.gate_open_ms;
  rep.host_span_ms = m.end_ms - from;
  rep.device_span_ms = std::isnan(first) ? NAN : last - first;
  return rep;
}

std::string profile_title(const DeviceProfile& p) {
  return fmt::format("{} ({}{})", p.device, p.file, p.made_by.empty() ? "" : "; " + p.made_by);
}

}  // namespace

std::shared_ptr<PredictedRun> predict(const Experiment& exp, const DeviceProfile& profile, bool gate,
                                      std::vector<std::string> notes) {
  ModelOptions options;
  options.gate = gate;  // and the experiment's `gate:` (gate_opens_before)
  ModelRun m = simulate(exp, profile, options);
  auto out = std::make_shared<PredictedRun>();
  out->profile = profile_title(profile);
  out->notes = std::move(notes);
  for (const auto& [op, why] : m.unknown)
    out->notes.push_back(fmt::format("op '{}' (line {}): {}; the prediction gives it the least a "
                                     "kernel takes",
                                     exp.ops[op].id, exp.ops[op].loc.line, why));
  out->notes_unknown = static_cast<int>(m.unknown.size());
  RunRecord& r = out->run;
  r.backend = "model";
  r.device = "predicted for the " + profile.device;
  r.timer = "model";
  r.timer_description = "model: the timeline model's prediction (" + out->profile + ")";
  r.reps.push_back(sample_of(exp, m));
  r.figures = run_figures(exp, r);
  // Explained from the sample, as a measured repetition is: markers have no interval there.
  Explanation e = explain(exp, dependencies(exp), measured_timeline(r.reps.front()), m.gate_open_ms,
                          m.connections);
  r.waits = std::move(e.waits);
  r.critical_path = std::move(e.critical_path);
  return out;
}

void explain_measured(const Experiment& exp, RunRecord& record, int connections) {
  if (!record.device_timing() || record.reps.empty()) return;
  const RepetitionSample& rep = record.reps[record.figures.typical_rep];
  Explanation e = explain(exp, dependencies(exp), measured_timeline(rep), rep.gate_open_ms, connections);
  record.waits = std::move(e.waits);
  record.critical_path = std::move(e.critical_path);
}

void judge_in_prediction(const Experiment& exp, RunRecord& record, const std::vector<PeerRun>& peers) {
  if (!record.predicted) return;
  PredictedRun* predicted = record.predicted.get();
  predicted->run.expectations = evaluate_expectations(exp, predicted->run, peers);
  for (size_t i = 0; i < record.expectations.size() && i < exp.expectations.size(); ++i) {
    if (!exp.expectations[i].uses_time) continue;
    const ExpectationResult& p = predicted->run.expectations[i];
    ExpectationResult& r = record.expectations[i];
    using S = ExpectationResult::Status;
    r.prediction = !predicted->complete()         ? "not predicted"
                   : p.status == S::passed        ? "holds"
                   : p.status == S::partial       ? "partial"
                   : p.status == S::failed        ? "fails"
                                                  : "not predicted";
    r.prediction_detail = !predicted->complete() ? "the model cannot time every op (see its notes)" : p.detail;
  }
}

}  // namespace streamlab

#include <cmath>

#include <nlohmann/json.hpp>

#include "ops/op_kind.hpp"
#include "runner/check/figures.hpp"
#include "runner/check/score.hpp"
#include "runner/report/check_report.hpp"
#include "runner/report/files.hpp"
#include "runner/report/json_document.hpp"
#include "runner/report/json_text.hpp"
#include "runner/report/markup.hpp"

namespace streamlab {
namespace {

using json = nlohmann::ordered_json;

json number(double v) { return std::isnan(v) ? json(nullptr) : json(v); }

json numbers(const std::vector<double>& v) {
  json out = json::array();
  for (double x : v) out.push_back(number(x));
  return out;
}

json summary(const Summary& s) {
  if (s.n == 0) return nullptr;
  return {{"n", s.n}, {"median", s.median}, {"min", s.min}, {"max", s.max}, {"cv", s.cv}};
}

// A graph op's launches, its time per launch, and each captured op's time in one launch.
json graph_json(const Experiment& exp, const Op& g, const OpFigures& f) {
  json body = json::array();
  for (size_t j = 0; j < g.body.size(); ++j) {
    const Op& b = g.body[j];
    body.push_back({{"id", b.id},
                    {"kind", b.kind->name},
                    {"stream", b.stream >= 0 ? json(exp.streams[b.stream].name) : json(nullptr)},
                    {"line", b.loc.line},
                    {"device_ms", summary(j < f.body.size() ? f.body[j] : Summary{})}});
  }
  return {{"launches", g.replays}, {"per_launch_ms", summary(f.per_launch)}, {"captured", body}};
}

json op_json(const Experiment& exp, const RunRecord& run, size_t i, const OpFigures& f) {
  const Op& op = exp.ops[i];
  json samples_ = {{"issue_ms", numbers(samples(run, i, &OpSample::issue_ms))},
                   {"return_ms", numbers(samples(run, i, &OpSample::return_ms))}};
  if (op.device_work && run.device_timing()) {
    samples_["start_ms"] = numbers(samples(run, i, &OpSample::start_ms));
    samples_["end_ms"] = numbers(samples(run, i, &OpSample::end_ms));
  }
  if (f.asked) {  // queries: true when the work was done
    json answers = json::array();
    for (const auto& rep : run.reps) answers.push_back(rep.ops[i].answer == 1);
    samples_["done"] = answers;
  }
  json out = {{"index", i + 1},
              {"id", op.id},
              {"kind", op.kind->name},
              {"stream", op.stream >= 0 ? json(exp.streams[op.stream].name) : json(nullptr)},
              {"line", op.loc.line},
              {"column", op.loc.col},
              {"what", op.kind->describe(exp, op)},
              {"device_work", op.device_work},
              {"device_ms", summary(f.device)},
              {"host_ms", summary(f.host)},
              {"bytes", f.bytes},
              {"gbps", number(f.gbps)},
              {"of_ceiling", number(f.of_ceiling)},
              {"samples", samples_}};
  if (!op.body.empty()) out["graph"] = graph_json(exp, op, f);
  return out;
}

json spans_json(const RunRecord& run) {
  std::vector<double> host, device, gate;
  for (const auto& rep : run.reps)
    host.push_back(rep.host_span_ms), device.push_back(rep.device_span_ms),
        gate.push_back(rep.gate_open_ms);
  return {{"host_ms", summary(run.figures.host_span)},
          {"device_ms", summary(run.figures.device_span)},
          {"samples",
           {{"host_ms", numbers(host)},
            {"device_ms", numbers(device)},
            {"gate_open_ms", numbers(gate)}}}};
}

json experiment_json(const Experiment& exp) {
  json params = json::object();
  for (const auto& [name, value] : exp.params) params[name] = value;
  return {
      {"name", exp.name}, {"description", exp.description}, {"file", exp.file}, {"params", params}};
}

json overlaps_json(const std::vector<OverlapFigures>& overlaps, auto name_of) {
  json out = json::array();
  for (const auto& o : overlaps)
    out.push_back({{"a", name_of(o.a)}, {"b", name_of(o.b)}, {"overlap_ms", o.overlap_ms}});
  return out;
}

json figures_json(const Experiment& exp, const RunFigures& f) {
  json streams = json::array();
  for (const auto& s : f.streams)
    streams.push_back({{"stream", exp.streams[s.stream].name}, {"busy_ms", s.busy_ms}});
  const SpanBounds& b = f.bounds;
  return {{"bandwidth",
           {{"bytes", "device memory read + written; host<->device copies once, over the link"},
            {"ceiling_gbps", number(f.ceiling.gbps)},
            {"ceiling_measured", f.ceiling.measured},
            {"ceiling_source", f.ceiling.source}}},
          {"streams", streams},
          {"op_overlaps", overlaps_json(f.overlaps, [&](size_t i) { return exp.ops[i].id; })},
          {"op_overlaps_listed", !f.op_pairs_skipped},
          {"stream_overlaps",
           overlaps_json(f.stream_overlaps, [&](size_t i) { return exp.streams[i].name; })},
          {"stream_overlaps_listed", !f.stream_pairs_skipped},
          {"bounds",
           {{"no_overlap_ms", number(b.sum_ms)},
            {"full_overlap_ms", number(b.busiest_ms)},
            {"busiest", b.busiest},
            {"span_ms", number(b.span_ms)},
            {"efficiency", number(b.efficiency)},
            {"concurrency", number(b.concurrency)}}}};
}

json expectations_json(const RunRecord& run) {
  json out = json::array();
  for (const auto& e : run.expectations) {
    json values = json::object();
    for (const auto& [text, v] : e.values) values[text] = number(v);
    using S = ExpectationResult::Status;
    std::string_view status = e.status == S::passed    ? "passed"
                              : e.status == S::failed  ? "failed"
                              : e.status == S::partial ? "partial"
                                                       : "not_evaluated";
    out.push_back({{"text", e.text},
                   {"line", e.loc.line},
                   {"column", e.loc.col},
                   {"status", status},
                   {"detail", e.detail},
                   {"values", values},
                   {"fraction", e.status == S::not_evaluated ? json(nullptr) : json(e.fraction)}});
    if (!e.prediction.empty()) {
      out.back()["prediction"] = e.prediction;
      out.back()["prediction_detail"] = e.prediction_detail;
    }
  }
  return out;
}

// Every check and expectation as a graded item, and their sum.
json items_json(const RunRecord& run) {
  json items = json::array();
  for (const ScoredItem& s : run.items) items.push_back(scored_item_json(s));
  ScoreTotal t = total(run.items);
  return {{"score", t.score}, {"max_score", t.max_score}, {"items", items}};
}


json checks_json(const RunRecord& run) {
  json out = json::array();
  for (const auto& c : run.checks)
    out.push_back({{"title", c.title},
                   {"passed", c.passed},
                   {"evaluated", c.evaluated},
                   {"detail", c.detail}});
  return out;
}

std::string op_id(const Experiment& exp, int op) { return op >= 0 ? exp.ops[op].id : ""; }

// Why each op started when it did; only ops with a wait (stream-ordered ones).
json waits_json(const Experiment& exp, const std::vector<OpWait>& waits) {
  json out = json::array();
  for (size_t i = 0; i < waits.size(); ++i) {
    const OpWait& w = waits[i];
    if (w.rule.empty()) continue;
    out.push_back({{"op", exp.ops[i].id},
                   {"rule", w.rule},
                   {"held_by", w.op >= 0 ? json(op_id(exp, w.op)) : json(nullptr)},
                   {"stream", w.stream >= 0 ? json(exp.streams[w.stream].name) : json(nullptr)},
                   {"event", w.event >= 0 ? json(exp.events[w.event].name) : json(nullptr)},
                   {"could_start_ms", number(w.could_ms)},
                   {"started_ms", number(w.start_ms)},
                   {"text", w.text}});
  }
  return out;
}

json path_json(const Experiment& exp, const std::vector<int>& path) {
  json out = json::array();
  for (int op : path) out.push_back(exp.ops[op].id);
  return out;
}

// The timeline model's prediction: its profile, spans, per-op times and waits, critical path
// and the expectations held against it.
json predicted_json(const Experiment& exp, const PredictedRun& p) {
  const RunRecord& r = p.run;
  const RepetitionSample& rep = r.reps.front();
  json ops = json::array();
  for (size_t i = 0; i < exp.ops.size(); ++i) {
    const OpSample& s = rep.ops[i];
    ops.push_back({{"id", exp.ops[i].id},
                   {"issue_ms", s.issue_ms},
                   {"return_ms", s.return_ms},
                   {"start_ms", number(s.start_ms)},
                   {"end_ms", number(s.end_ms)},
                   {"device_ms", number(s.device_ms())}});
  }
  return {{"profile", p.profile},
          {"notes", p.notes},
          {"complete", p.complete()},
          {"span_ms", rep.host_span_ms},
          {"device_span_ms", number(rep.device_span_ms)},
          {"ops", ops},
          {"waits", waits_json(exp, r.waits)},
          {"critical_path", path_json(exp, r.critical_path)},
          {"expectations", expectations_json(r)}};
}

json facts_json(const Facts& facts) {
  json out = json::object();
  for (const auto& [name, value] : facts) out[name] = value;
  return out;
}

json provenance_json(const Experiment& exp, const RunRecord& run) {
  const Provenance& p = run.provenance;
  json params = json::object();
  for (const auto& [name, value] : exp.params) params[name] = value;
  return {{"date", p.date},
          {"command_line", p.command_line},
          {"streamlab", {{"version", p.version}, {"commit", p.commit}}},
          {"host", facts_json(p.host)},
          {"device", facts_json(p.device)},
          {"backend", run.backend},
          {"timer", run.timer},
          {"experiment", {{"file", exp.file}, {"sha256", p.experiment_sha256}, {"params", params}}}};
}

}  // namespace

std::string_view verdict_name(Verdict v) {
  return v == Verdict::passed ? "passed" : v == Verdict::failed ? "failed" : "incomplete";
}

json results_document(const Experiment& exp, const RunRecord& run) {
  const RunFigures& figures = run.figures;
  json ops = json::array();
  for (size_t i = 0; i < exp.ops.size(); ++i) ops.push_back(op_json(exp, run, i, figures.ops[i]));
  json doc = {
      {"schema_version", kResultsSchemaVersion},
      {"tool", {{"name", "streamlab"}, {"version", STREAMLAB_VERSION}}},
      {"provenance", provenance_json(exp, run)},
      {"experiment", experiment_json(exp)},
      {"backend",
       {{"name", run.backend},
        {"device", run.device},
        {"device_timing", run.device_timing()},
        {"timer", run.timer},
        {"timer_description", run.timer_description},
        {"peaks",
         {{"memory_gbps", number(run.peaks.memory_gbps)},
          {"memory_source", run.peaks.memory_source},
          {"link_gbps", number(run.peaks.link_gbps)},
          {"link_source", run.peaks.link_source},
          {"l2_bytes", run.peaks.l2_bytes}}}}},
      {"notes", run.notes},
      {"repetitions", {{"warmup", run.warmup}, {"timed", run.reps.size()}}},
      {"ops", ops},
      {"spans", spans_json(run)},
      {"figures", figures_json(exp, figures)},
      {"checks", checks_json(run)},
      {"expectations", expectations_json(run)},
      {"diagnostics", findings_json(exp, run.diagnostics)},
      {"score", items_json(run)},
      {"impossible", run.impossible},
      {"verdict", verdict_name(run.verdict())},
      // true: every check and expectation evaluated and held; false: one failed; null: none
      // failed but some could not be evaluated.
      {"passed", run.verdict() == Verdict::incomplete ? json(nullptr)
                                                      : json(run.verdict() == Verdict::passed)},
  };
  doc["waits"] = waits_json(exp, run.waits);
  doc["critical_path"] = path_json(exp, run.critical_path);
  doc["predicted"] = run.predicted ? predicted_json(exp, *run.predicted) : json(nullptr);
  return doc;
}

std::string format_json(const Experiment& exp, const RunRecord& run) {
  return json_text(results_document(exp, run));
}

}  // namespace streamlab

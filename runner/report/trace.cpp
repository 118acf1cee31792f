// Chrome trace event format: "X" (complete) events with ts and dur in microseconds, "M" events
// naming the tracks. Device intervals are relative to each repetition's base event and host ones
// to its first issue; both are placed at the repetition's offset on one axis, so they line up to
// within the base event's latency (a few microseconds).
#include <cmath>

#include <nlohmann/json.hpp>

#include "ops/op_kind.hpp"
#include "runner/report/files.hpp"
#include "runner/report/json_text.hpp"

namespace streamlab {
namespace {

using json = nlohmann::ordered_json;

constexpr int kGpuPid = 1, kHostPid = 2, kHostTid = 1;
constexpr int kPredictedPid = 3;  // the timeline model's prediction, a process of its own

json track_name(int pid, int tid, const std::string& name) {
  return {
      {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", "thread_name"}, {"args", {{"name", name}}}};
}

json process_name(int pid, const std::string& name) {
  return {
      {"ph", "M"}, {"pid", pid}, {"tid", 0}, {"name", "process_name"}, {"args", {{"name", name}}}};
}

json slice(int pid, int tid, const Op& op, const std::string& what, double start_ms, double end_ms,
           size_t rep) {
  return {{"ph", "X"},
          {"pid", pid},
          {"tid", tid},
          {"name", op.id},
          {"cat", op.kind->name},
          {"ts", start_ms * 1000},
          {"dur", (end_ms - start_ms) * 1000},
          {"args", {{"what", what}, {"repetition", rep + 1}}}};
}

json track_names(const Experiment& exp, const RunRecord& run) {
  json events = json::array(
      {process_name(kHostPid, "host"), track_name(kHostPid, kHostTid, "host thread (API calls)")});
  if (!run.device_timing()) return events;  // the host backend has no GPU tracks
  events.push_back(process_name(kGpuPid, "GPU: " + run.device));
  for (size_t s = 0; s < exp.streams.size(); ++s)
    events.push_back(track_name(kGpuPid, static_cast<int>(s) + 1, "stream " + exp.streams[s].name));
  return events;
}

// The prediction after the measured repetitions: a process "predicted" with a track per stream,
// each slice carrying why the op started then.
void predicted_slices(const Experiment& exp, const PredictedRun& p, double offset, json& events) {
  events.push_back(process_name(kPredictedPid, "predicted (timeline model): " + p.profile));
  for (size_t s = 0; s < exp.streams.size(); ++s)
    events.push_back(track_name(kPredictedPid, static_cast<int>(s) + 1,
                                "predicted stream " + exp.streams[s].name));
  const RepetitionSample& rep = p.run.reps.front();
  for (size_t i = 0; i < exp.ops.size(); ++i) {
    const OpSample& s = rep.ops[i];
    if (std::isnan(s.start_ms)) continue;
    json e = slice(kPredictedPid, exp.ops[i].stream + 1, exp.ops[i], exp.ops[i].kind->describe(exp, exp.ops[i]),
                   offset + s.start_ms, offset + s.end_ms, 0);
    e["args"] = {{"what", exp.ops[i].kind->describe(exp, exp.ops[i])},
                 {"predicted", true},
                 {"why", p.run.waits[i].text}};
    events.push_back(e);
  }
}

}  // namespace

std::string format_trace(const Experiment& exp, const RunRecord& run) {
  json events = track_names(exp, run);
  double offset = 0;  // where this repetition starts on the trace's axis, ms
  for (size_t r = 0; r < run.reps.size(); ++r) {
    const RepetitionSample& rep = run.reps[r];
    for (size_t i = 0; i < exp.ops.size(); ++i) {
      const Op& op = exp.ops[i];
      const OpSample& s = rep.ops[i];
      std::string what = op.kind->describe(exp, op);
      events.push_back(
          slice(kHostPid, kHostTid, op, what, offset + s.issue_ms, offset + s.return_ms, r));
      if (!std::isnan(s.start_ms))
        events.push_back(
            slice(kGpuPid, op.stream + 1, op, what, offset + s.start_ms, offset + s.end_ms, r));
    }
    offset +=
        std::max(rep.host_span_ms, std::isnan(rep.device_span_ms) ? 0.0 : rep.device_span_ms) +
        0.05;
  }
  if (run.predicted) predicted_slices(exp, *run.predicted, offset, events);
  json doc = {{"traceEvents", events},
              {"displayTimeUnit", "ms"},
              {"otherData",
               {{"experiment", exp.name},
                {"file", exp.file},
                {"backend", run.backend},
                {"schema_version", kResultsSchemaVersion}}}};
  return json_text(doc, -1);
}

}  // namespace streamlab

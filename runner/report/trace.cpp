// Chrome trace event format: "X" (complete) events with ts and dur in microseconds, "M" events
// naming the tracks. Device intervals are relative to each repetition's base event and host ones
// to its first issue; both are placed at the repetition's offset on one axis, so they line up to
// within the base event's latency (a few microseconds).
//
// Viewers (Perfetto, speedscope) drop or misdraw complete events of one track that overlap
// without nesting. So each repetition is laid after the whole extent of the one before (every
// host and device interval, not its span, which starts at the gate's opening), and a slice that
// would overlap another of its track without nesting moves to an overflow track of its own.
#include <algorithm>
#include <cmath>
#include <map>

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

// The earliest and latest instant of anything one repetition drew, ms on its own clock.
std::pair<double, double> extent(const RepetitionSample& rep) {
  double lo = INFINITY, hi = -INFINITY;
  auto take = [&](double t) {
    if (!std::isnan(t)) lo = std::min(lo, t), hi = std::max(hi, t);
  };
  for (const OpSample& s : rep.ops) take(s.issue_ms), take(s.return_ms), take(s.start_ms), take(s.end_ms);
  if (!std::isnan(rep.gate_open_ms)) take(rep.gate_open_ms + rep.host_span_ms);
  return lo <= hi ? std::pair{lo, hi} : std::pair{0.0, 0.0};
}

constexpr double kGapMs = 0.05;  // between repetitions, so that one never touches the next
constexpr int kOverflowTid = 1000;  // overflow tracks: tid + k * this

// Moves each complete event that overlaps an earlier one of its track without nesting in it to
// an overflow track of that track (named after it), so that every track nests.
void nest_tracks(json& events) {
  std::vector<size_t> order;
  std::map<std::pair<int, int>, std::string> names;
  for (size_t k = 0; k < events.size(); ++k) {
    const json& e = events[k];
    if (e["ph"] == "X") order.push_back(k);
    else if (e["name"] == "thread_name")
      names[{e["pid"].get<int>(), e["tid"].get<int>()}] = e["args"]["name"].get<std::string>();
  }
  // Earlier first; of two that start together, the longer one encloses the other.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const double ta = events[a]["ts"].get<double>(), tb = events[b]["ts"].get<double>();
    return ta != tb ? ta < tb : events[a]["dur"].get<double>() > events[b]["dur"].get<double>();
  });
  std::map<std::pair<int, int>, std::vector<double>> open;  // per track, the open slices' ends
  std::map<std::pair<int, int>, int> overflow_tracks;
  for (size_t k : order) {
    json& e = events[k];
    const int pid = e["pid"].get<int>(), tid = e["tid"].get<int>();
    const double ts = e["ts"].get<double>(), end = ts + e["dur"].get<double>();
    for (int level = 0;; ++level) {
      const int t = tid + level * kOverflowTid;
      auto& ends = open[{pid, t}];
      while (!ends.empty() && ends.back() <= ts) ends.pop_back();
      if (!ends.empty() && end > ends.back()) continue;  // would cross the enclosing one
      ends.push_back(end);
      e["tid"] = t;
      if (level > overflow_tracks[{pid, tid}]) overflow_tracks[{pid, tid}] = level;
      break;
    }
  }
  for (const auto& [track, levels] : overflow_tracks)
    for (int level = 1; level <= levels; ++level)
      events.push_back(track_name(track.first, track.second + level * kOverflowTid,
                                  names[track] + " (overlapping, " + std::to_string(level) + ")"));
}

}  // namespace

std::string format_trace(const Experiment& exp, const RunRecord& run) {
  json events = track_names(exp, run);
  double offset = 0;  // where this repetition starts on the trace's axis, ms
  for (size_t r = 0; r < run.reps.size(); ++r) {
    const RepetitionSample& rep = run.reps[r];
    const auto [first, last] = extent(rep);
    const double shift = offset - first;  // the repetition's clock onto the trace's axis
    for (size_t i = 0; i < exp.ops.size(); ++i) {
      const Op& op = exp.ops[i];
      const OpSample& s = rep.ops[i];
      std::string what = op.kind->describe(exp, op);
      events.push_back(
          slice(kHostPid, kHostTid, op, what, shift + s.issue_ms, shift + s.return_ms, r));
      if (!std::isnan(s.start_ms))
        events.push_back(
            slice(kGpuPid, op.stream + 1, op, what, shift + s.start_ms, shift + s.end_ms, r));
    }
    offset += last - first + kGapMs;
  }
  if (run.predicted) {
    const auto [first, last] = extent(run.predicted->run.reps.front());
    predicted_slices(exp, *run.predicted, offset - first, events);
  }
  nest_tracks(events);
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

#include "tests/test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ops/user_kernel.hpp"
#include "runner/check/figures.hpp"
#include "runner/core/diagnostics.hpp"
#include "runner/execute/backend.hpp"
#include "runner/predict/predict.hpp"
#include "runner/predict/profile_io.hpp"
#include "runner/predict/simulate.hpp"

namespace streamlab::test {

std::filesystem::path source_dir() {
  if (const char* env = std::getenv("STREAMLAB_SOURCE_DIR")) return env;
  return STREAMLAB_SOURCE_DIR;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::filesystem::path> yaml_files(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  if (!std::filesystem::exists(source_dir() / dir)) return files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(source_dir() / dir))
    if (e.path().extension() == ".yaml" && !e.path().string().ends_with(".rubric.yaml"))
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string diagnostics_of(const std::string& text, const std::string& file,
                           const LoadOptions& options) {
  try {
    load_string(text, file, options);
    return "";
  } catch (const InvalidExperiment& e) {
    return e.what();
  }
}

bool have_gpu(std::string* why) { return cuda_device_count(why) > 0; }

std::optional<std::string> compile_errors(const Experiment& exp, const std::string& arch) {
  try {
    compile_user_kernels(exp, arch);
    return "";
  } catch (const InvalidExperiment& err) {
    return err.what();
  } catch (const RunError& err) {
    MESSAGE("skipped: NVRTC is not installed here (", err.what(), ")");
    return std::nullopt;
  }
}

RunRecord run_on_host(const Experiment& e, int64_t repeat) {
  auto backend = make_host_backend(e);
  return run_experiment(e, *backend, {repeat, 0, {}});
}

namespace {
const char* kSyntheticExperiment = R"(name: reports
params: {N: 1024}
streams: {s1: {}, s2: {}}
buffers:
  h: {type: int32, shape: [N, N], memory: pinned, init: sequence}
  d: {type: int32, shape: [N, N], memory: device}
ops:
  - memcpyAsync: {id: up, dst: d, src: h, stream: s1}
  - launch: {id: k, kernel: spin, grid: 1, block: 32, stream: s2, args: {us: 1000}}
  - streamSynchronize: {stream: s1}
checks:
  - equal: {a: h, b: h}
)";

}  // namespace

const char* synthetic_experiment() { return kSyntheticExperiment; }

RunRecord synthetic_run() {
  RunRecord run;
  run.backend = "cuda";
  run.device = "Test GPU (sm_90, 1 SMs, 1 copy engines, device 0)";
  run.timer = "events";
  run.timer_description = "CUDA events around each device op, in its own stream";
  run.notes = {"a note"};
  run.warmup = 1;
  for (int r = 0; r < 2; ++r) {
    RepetitionSample rep;
    rep.number = uint64_t(r) + 2;
    rep.ops.push_back({0.001, 0.004, 0.010 + r, 0.510 + r});
    rep.ops.push_back({0.004, 0.007, 0.210 + r, 1.210 + r});
    rep.ops.push_back({0.007, 1.300 + r, NAN, NAN});
    rep.gate_open_ms = 0.006;
    rep.host_span_ms = 1.250 + r;
    rep.device_span_ms = 1.200;
    run.reps.push_back(rep);
  }
  run.checks.push_back({"equal(h, h)", true, ""});
  run.figures = run_figures(load_string(kSyntheticExperiment, "reports.yaml"), run);
  return run;
}

}  // namespace streamlab::test

namespace streamlab::test {
namespace {

using json = nlohmann::json;

std::filesystem::path recordings_dir() { return source_dir() / "tests/golden/h200"; }

// The experiment a recording ran: its JSON's file at its JSON's params, else the one named NAME.
Experiment recorded_experiment(const std::string& name, const json* doc) {
  if (!doc) {
    for (const auto& file : yaml_files("experiments"))
      if (file.stem() == name) return load_file(file.string());
    throw std::runtime_error("no experiments/**/" + name + ".yaml for the recording " + name);
  }
  LoadOptions options;
  for (const auto& [param, value] : (*doc)["experiment"]["params"].items())
    options.overrides.emplace_back(param, value.is_string() ? value.get<std::string>() : value.dump());
  return load_file((source_dir() / (*doc)["experiment"]["file"].get<std::string>()).string(),
                   options);
}

double cell_number(const std::vector<std::string>& row, size_t k) {
  return k < row.size() && !row[k].empty() ? std::stod(row[k]) : NAN;
}

// The CSV's measured rows into repetitions (its columns found by name: older recordings lack the
// `source` column).
std::vector<RepetitionSample> recorded_samples(const std::string& text, size_t op_count) {
  std::istringstream csv(text);
  std::string line;
  std::getline(csv, line);
  std::map<std::string, size_t> column;
  {
    std::stringstream header(line);
    size_t k = 0;
    for (std::string name; std::getline(header, name, ',');) column[name] = k++;
  }
  std::vector<RepetitionSample> reps;
  while (std::getline(csv, line)) {
    std::vector<std::string> row;
    std::stringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) row.push_back(cell);
    if (column.count("source") && row.size() > column["source"] && row[column["source"]] != "measured")
      continue;
    const size_t r = std::stoul(row[column["repetition"]]) - 1, i = std::stoul(row[column["op_index"]]) - 1;
    REQUIRE(i < op_count);
    if (reps.size() <= r) reps.resize(r + 1);
    reps[r].ops.resize(op_count);
    OpSample& s = reps[r].ops[i];
    s.issue_ms = cell_number(row, column["issue_ms"]);
    s.return_ms = cell_number(row, column["return_ms"]);
    s.start_ms = cell_number(row, column["device_start_ms"]);
    s.end_ms = cell_number(row, column["device_end_ms"]);
    const std::string answer = row.size() > column["answer"] ? row[column["answer"]] : "";
    s.answer = answer == "done" ? 1 : answer == "not-ready" ? 0 : -1;
  }
  return reps;
}

double sample(const json& samples, size_t r) {
  return r < samples.size() && samples[r].is_number() ? samples[r].get<double>() : NAN;
}

// What the JSON kept of the run: the backend, the spans and gate openings, graph bodies, checks.
void recorded_context(const Experiment& exp, const json& doc, RunRecord& run) {
  const json& b = doc["backend"];
  run.backend = b["name"], run.device = b["device"], run.timer = b["timer"];
  run.timer_description = b["timer_description"];
  const json& peaks = b["peaks"];
  if (peaks["memory_gbps"].is_number()) run.peaks.memory_gbps = peaks["memory_gbps"];
  if (peaks["link_gbps"].is_number()) run.peaks.link_gbps = peaks["link_gbps"];
  run.peaks.memory_source = peaks["memory_source"], run.peaks.link_source = peaks["link_source"];
  run.peaks.l2_bytes = peaks["l2_bytes"];
  run.notes = doc["notes"].get<std::vector<std::string>>();
  run.warmup = doc["repetitions"]["warmup"];
  const json& spans = doc["spans"]["samples"];
  for (size_t r = 0; r < run.reps.size(); ++r) {
    RepetitionSample& rep = run.reps[r];
    rep.gate_open_ms = sample(spans["gate_open_ms"], r);
    rep.host_span_ms = sample(spans["host_ms"], r);
    rep.device_span_ms = sample(spans["device_ms"], r);
  }
  // The JSON keeps a captured op's median, not each repetition's time: every repetition gets it.
  for (size_t i = 0; i < exp.ops.size(); ++i) {
    if (exp.ops[i].body.empty() || !doc["ops"][i].contains("graph")) continue;
    const json& captured = doc["ops"][i]["graph"]["captured"];
    std::vector<double> body(exp.ops[i].body.size(), NAN);
    for (size_t j = 0; j < body.size() && j < captured.size(); ++j)
      if (captured[j]["device_ms"].is_object()) body[j] = captured[j]["device_ms"]["median"];
    for (RepetitionSample& rep : run.reps) rep.ops[i].body_ms = body;
  }
  for (const json& c : doc["checks"])
    run.checks.push_back({c["title"], c["passed"], c["detail"], c["evaluated"]});
}

// Without a JSON: the gate as the first device start, the spans from the samples.
void derived_context(const std::string& name, RunRecord& run) {
  run.backend = "cuda", run.device = "NVIDIA H200 (recorded; its JSON was not kept)";
  run.timer = "recorded";
  run.timer_description = "device intervals recorded in " + name + ".csv (which timer is not recorded)";
  for (RepetitionSample& rep : run.reps) {
    double first = INFINITY, last = -INFINITY, end = -INFINITY;
    for (const OpSample& s : rep.ops) {
      end = std::max(end, s.return_ms);
      if (!std::isnan(s.start_ms)) first = std::min(first, s.start_ms), last = std::max(last, s.end_ms);
    }
    rep.gate_open_ms = first;
    rep.host_span_ms = end - first;
    rep.device_span_ms = last - first;
  }
}

}  // namespace

std::vector<std::string> recording_names() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(recordings_dir()))
    if (e.path().extension() == ".csv") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

Recording recorded_run(const std::string& name) {
  const auto json_path = recordings_dir() / (name + ".json");
  std::optional<json> doc;
  if (std::filesystem::exists(json_path)) doc = json::parse(read_text(json_path));
  Recording r{name, recorded_experiment(name, doc ? &*doc : nullptr), {}};
  r.run.reps = recorded_samples(read_text(recordings_dir() / (name + ".csv")), r.exp.ops.size());
  for (size_t k = 0; k < r.run.reps.size(); ++k) r.run.reps[k].number = uint64_t(k) + 1;
  if (doc) recorded_context(r.exp, *doc, r.run);
  else derived_context(name, r.run);
  for (RepetitionSample& rep : r.run.reps) rep.number += uint64_t(r.run.warmup);
  // What the run computes after its repetitions (runner/execute/execute.cpp), in its order.
  r.run.figures = run_figures(r.exp, r.run);
  r.run.impossible = impossible_timings(r.exp, r.run);
  explain_measured(r.exp, r.run, connections_of(r.exp, builtin_profile("NVIDIA H200", nullptr)));
  evaluate(r.exp, r.run);
  return r;
}

}  // namespace streamlab::test

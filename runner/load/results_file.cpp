// A results file is input like any other: a CI job compares files it did not write. Every value is
// checked for its type before it is used, the file's size is bounded, and a file that is not what
// it should be is an error naming where, never a crash or a silently empty comparison.
#include "runner/load/results_file.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runner/core/diagnostics.hpp"
#include "runner/core/limits.hpp"
#include "runner/core/safe_file.hpp"
#include "runner/core/suggest.hpp"

namespace streamlab {
namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& file, const std::string& where, const std::string& message) {
  throw InvalidInput(fmt::format("{}: error: {}{}", file, where.empty() ? "" : where + ": ", message));
}

// Line and column (from 1) of byte `offset` in `text`.
std::pair<int, int> line_col(const std::string& text, size_t offset) {
  offset = std::min(offset, text.size());
  int line = 1, col = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n')
      ++line, col = 1;
    else
      ++col;
  }
  return {line, col};
}

json parse(const std::string& file) {
  FileRead read = read_user_file(file, limits::kResultsFileBytes);
  if (!read.ok()) fail(file, "", read.error == ENOENT ? "cannot read the file (does it exist?)" : "the file " + read.refusal);
  try {
    return json::parse(read.text);
  } catch (const json::parse_error& e) {
    auto [line, col] = line_col(read.text, e.byte > 0 ? e.byte - 1 : 0);
    std::string what = e.what();
    auto colon = what.rfind(": ");  // nlohmann's text after its own "[json.exception...] ... at line.."
    throw InvalidInput(fmt::format("{}:{}:{}: error: not JSON: {}", file, line, col,
                                   colon == std::string::npos ? what : what.substr(colon + 2)));
  } catch (const json::out_of_range& e) {  // 406: a number past a double's range; no position given
    std::string what = e.what();
    auto bracket = what.find("] ");
    throw InvalidInput(fmt::format("{}: error: not JSON streamlab reads: {}", file,
                                   bracket == std::string::npos ? what : what.substr(bracket + 2)));
  }
}

const json& member(const std::string& file, const json& j, const std::string& where, const char* key) {
  if (!j.is_object() || !j.contains(key)) fail(file, where, fmt::format("expected a member '{}'", key));
  return j[key];
}

std::string text_of(const json& j) { return j.is_string() ? j.get<std::string>() : ""; }

// An array of numbers, null for a repetition that measured nothing.
std::vector<double> samples(const std::string& file, const json& j, const std::string& where) {
  if (!j.is_array()) fail(file, where, "expected an array of numbers");
  if (j.size() > static_cast<size_t>(limits::kSamples))
    fail(file, where, fmt::format("{} samples; at most {}", j.size(), limits::kSamples));
  std::vector<double> out;
  out.reserve(j.size());
  for (const auto& v : j) {
    if (!v.is_number() && !v.is_null()) fail(file, where, "expected an array of numbers (or null)");
    out.push_back(v.is_number() ? v.get<double>() : NAN);
  }
  return out;
}

bool any_measured(const std::vector<double>& v) {
  return std::any_of(v.begin(), v.end(), [](double x) { return !std::isnan(x); });
}

std::vector<double> differences(const std::vector<double>& end, const std::vector<double>& start) {
  std::vector<double> out(std::min(end.size(), start.size()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = end[i] - start[i];
  return out;
}

// An op's time per repetition: on the device (start to end) where it ran there, else its host call.
RecordedMeasure op_measure(const std::string& file, const json& op, const std::string& where) {
  const json& s = member(file, op, where, "samples");
  std::string id = text_of(member(file, op, where, "id"));
  if (s.contains("start_ms") && s.contains("end_ms")) {
    auto d = differences(samples(file, s["end_ms"], where + ".samples.end_ms"),
                         samples(file, s["start_ms"], where + ".samples.start_ms"));
    if (any_measured(d)) return {id, "device", d};
  }
  return {id, "host call",
          differences(samples(file, member(file, s, where + ".samples", "return_ms"), where + ".samples.return_ms"),
                      samples(file, member(file, s, where + ".samples", "issue_ms"), where + ".samples.issue_ms"))};
}

// Facts that make two runs like for like, from the provenance where the file has it.
Facts identity(const json& doc) {
  Facts out;
  const json& backend = doc.value("backend", json::object());
  if (backend.is_object()) {
    out.emplace_back("backend", text_of(backend.value("name", json())));
    out.emplace_back("device", text_of(backend.value("device", json())));
    out.emplace_back("timer", text_of(backend.value("timer", json())));
  }
  const json& p = doc.value("provenance", json::object());
  if (!p.is_object()) return out;
  const json& exp = p.value("experiment", json::object());
  if (exp.is_object()) {
    out.emplace_back("experiment file (sha256)", text_of(exp.value("sha256", json())));
    if (exp.contains("params") && exp["params"].is_object()) out.emplace_back("params", exp["params"].dump());
  }
  const json& tool = p.value("streamlab", json::object());
  if (tool.is_object()) out.emplace_back("streamlab commit", text_of(tool.value("commit", json())));
  const json& device = p.value("device", json::object());
  if (device.is_object()) {
    out.emplace_back("device uuid", text_of(device.value("uuid", json())));
    out.emplace_back("driver", text_of(device.value("driver", json())));
  }
  out.emplace_back("date", text_of(p.value("date", json())));
  return out;
}

RecordedRun results_run(const std::string& file, const json& doc, const std::string& where, std::string key) {
  RecordedRun run{.file = file, .key = std::move(key)};
  run.experiment = text_of(member(file, member(file, doc, where, "experiment"), where + ".experiment", "name"));
  run.identity = identity(doc);
  const json& spans = member(file, member(file, doc, where, "spans"), where + ".spans", "samples");
  run.measures.push_back({"span", "host clock", samples(file, member(file, spans, where + ".spans.samples", "host_ms"),
                                                        where + ".spans.samples.host_ms")});
  if (spans.contains("device_ms")) {
    auto device = samples(file, spans["device_ms"], where + ".spans.samples.device_ms");
    if (any_measured(device)) run.measures.push_back({"device span", "device", device});
  }
  const json& ops = member(file, doc, where, "ops");
  if (!ops.is_array()) fail(file, where + ".ops", "expected an array");
  for (size_t i = 0; i < ops.size(); ++i) run.measures.push_back(op_measure(file, ops[i], fmt::format("{}ops[{}]", where.empty() ? "" : where + ".", i)));
  return run;
}

bool is_streamlab(const json& doc) {
  return doc.is_object() && doc.contains("tool") && doc["tool"].is_object() && doc["tool"].value("name", json()) == "streamlab" &&
         doc.contains("schema_version");
}

std::string point_key(const json& params) {
  std::vector<std::string> parts;
  if (params.is_object())
    for (const auto& [name, value] : params.items()) parts.push_back(name + "=" + value.dump());
  return "[" + join(parts) + "]";
}

// The runs of one parsed file; `key` prefixes their keys (the file's path in a folder).
std::vector<RecordedRun> runs_of(const std::string& file, const json& doc, const std::string& key) {
  if (doc.value("schema_version", json()) != 1)
    fail(file, "schema_version", fmt::format("this streamlab reads version 1, the file is {}", doc.value("schema_version", json()).dump()));
  std::vector<RecordedRun> out;
  if (doc.value("kind", json()) == "sweep") {
    const json& points = member(file, doc, "", "points");
    if (!points.is_array()) fail(file, "points", "expected an array");
    for (size_t i = 0; i < points.size(); ++i) {
      std::string where = fmt::format("points[{}]", i);
      std::string point = point_key(member(file, points[i], where, "params"));
      out.push_back(results_run(file, member(file, points[i], where, "results"), where + ".results",
                                key.empty() ? point : key + " " + point));
    }
    return out;
  }
  if (!doc.contains("ops")) fail(file, "", "not a results file of `streamlab run --json` (no 'ops')");
  out.push_back(results_run(file, doc, "", key));
  return out;
}

std::vector<RecordedRun> read_folder(const std::string& folder, std::vector<std::string>& skipped) {
  std::vector<std::string> files;
  namespace fs = std::filesystem;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->path().extension() != ".json") continue;  // links are not followed into folders
    if (static_cast<int64_t>(files.size()) >= limits::kResultsFiles)
      fail(folder, "", fmt::format("more than {} JSON files", limits::kResultsFiles));
    files.push_back(it->path().string());
  }
  if (ec) fail(folder, "", "cannot read the folder: " + ec.message());
  std::sort(files.begin(), files.end());
  std::vector<RecordedRun> out;
  for (const auto& file : files) {
    json doc = parse(file);
    if (!is_streamlab(doc) || (!doc.contains("ops") && doc.value("kind", json()) != "sweep")) {
      skipped.push_back(file);
      continue;
    }
    for (auto& run : runs_of(file, doc, fs::path(file).lexically_relative(folder).string())) out.push_back(std::move(run));
  }
  return out;
}

}  // namespace

std::vector<RecordedRun> read_recorded_runs(const std::string& path, std::vector<std::string>& skipped) {
  try {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return read_folder(path, skipped);
    json doc = parse(path);
    if (!is_streamlab(doc)) fail(path, "", "not a results file of `streamlab run --json` (no tool 'streamlab' and schema_version)");
    return runs_of(path, doc, "");
  } catch (const json::exception& e) {  // a value of a type the checks above did not foresee
    fail(path, "", e.what());
  }
}

}  // namespace streamlab

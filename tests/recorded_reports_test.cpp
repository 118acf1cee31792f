// The reports of runs recorded on the H200 (tests/golden/h200/, every recording there) and of
// synthetic and host runs: every trace track nests and repetitions never overlap, the HTML
// numbers, scales, labels and explains what it draws, every sentence is complete for every
// backend and timer, and every table counts bytes one way.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include <nlohmann/json.hpp>

#include "ops/op_kind.hpp"
#include "runner/check/figures.hpp"
#include "runner/report/console.hpp"
#include "runner/report/files.hpp"
#include "tests/test_support.hpp"

namespace streamlab {
namespace {

using json = nlohmann::json;

// Every record the tests can give the reports: each recording, the synthetic run with each
// timer, and host runs (which carry a prediction).
struct Case {
  std::string name;
  Experiment exp;
  RunRecord run;
};

RunRecord with_timer(const Experiment& exp, std::string timer, std::string description) {
  RunRecord run = test::synthetic_run();
  run.timer = std::move(timer), run.timer_description = std::move(description);
  if (run.timer == "none")
    for (RepetitionSample& rep : run.reps) {
      rep.device_span_ms = NAN;
      for (OpSample& s : rep.ops) s.start_ms = s.end_ms = NAN;
    }
  run.figures = run_figures(exp, run);
  return run;
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const std::string& name : test::recording_names()) {
    test::Recording r = test::recorded_run(name);
    cases.push_back({"recorded " + name, std::move(r.exp), std::move(r.run)});
  }
  const Experiment synthetic = load_string(test::synthetic_experiment(), "reports.yaml");
  cases.push_back({"synthetic, events", synthetic, test::synthetic_run()});
  cases.push_back({"synthetic, cupti", synthetic,
                   with_timer(synthetic, "cupti", "CUPTI activity records, on the host clock")});
  cases.push_back({"synthetic, none", synthetic,
                   with_timer(synthetic, "none", "none (spans on the host clock only)")});
  cases.push_back({"synthetic, no description", synthetic, with_timer(synthetic, "events", "")});
  for (const char* file : {"experiments/graph_fork_join.yaml", "experiments/04_two_transposes_pinned_async.yaml"}) {
    LoadOptions small;
    small.overrides = {{"N", "64"}};
    Experiment exp = load_file((test::source_dir() / file).string(), small);
    RunRecord run = test::run_on_host(exp, 3);
    cases.push_back({std::string("host ") + file, std::move(exp), std::move(run)});
  }
  return cases;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = all_cases();
  return all;
}

constexpr double kEps = 1e-6;  // us: the trace's rounding

struct Slice {
  double ts, end;
  int repetition;  // 0: the prediction's
};

// Every complete event of the trace, by track (pid, tid).
std::map<std::pair<int, int>, std::vector<Slice>> tracks_of(const std::string& trace) {
  std::map<std::pair<int, int>, std::vector<Slice>> tracks;
  const json doc = json::parse(trace);
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const json& rep = e["args"].value("repetition", json(0));
    const double ts = e["ts"].get<double>();
    tracks[{e["pid"].get<int>(), e["tid"].get<int>()}].push_back(
        {ts, ts + e["dur"].get<double>(), e["args"].value("predicted", false) ? 0 : rep.get<int>()});
  }
  for (auto& entry : tracks)
    std::sort(entry.second.begin(), entry.second.end(), [](const Slice& a, const Slice& b) {
      return a.ts != b.ts ? a.ts < b.ts : a.end > b.end;
    });
  return tracks;
}

// What the viewers need of one track: each slice ends inside the one enclosing it, or starts
// after it ended, and no slice of a repetition begins before every slice of the one before ended.
void check_track(const std::string& where, const std::vector<Slice>& slices) {
  std::vector<double> open;
  std::map<int, std::pair<double, double>> reps;  // repetition: first start, last end
  for (const Slice& s : slices) {
    while (!open.empty() && open.back() <= s.ts + kEps) open.pop_back();
    INFO(where, ": slice at ", s.ts, " .. ", s.end, " us");
    if (!open.empty()) CHECK(s.end <= open.back() + kEps);
    open.push_back(s.end);
    if (s.repetition == 0) continue;
    auto [it, fresh] = reps.try_emplace(s.repetition, s.ts, s.end);
    if (!fresh) it->second.first = std::min(it->second.first, s.ts), it->second.second = std::max(it->second.second, s.end);
  }
  for (auto it = reps.begin(); it != reps.end() && std::next(it) != reps.end(); ++it) {
    const int rep = it->first;
    INFO(where, ": repetition ", rep, " and the next");
    CHECK(it->second.second <= std::next(it)->second.first + kEps);
  }
}

}  // namespace

TEST_CASE("reports: every track of every trace nests, and repetitions never overlap on it") {
  for (const Case& c : cases()) {
    const std::string name = c.name;
    const auto tracks = tracks_of(format_trace(c.exp, c.run));
    CHECK(!tracks.empty());
    for (const auto& entry : tracks)
      check_track(fmt::format("{}, track pid {} tid {}", name, entry.first.first, entry.first.second),
                  entry.second);
  }
}

TEST_CASE("reports: the trace lays each repetition after everything the one before drew") {
  // A repetition whose host calls start 1 ms before its gate opens: the span, measured from the
  // gate, is shorter than what the repetition drew.
  const Experiment exp = load_string(test::synthetic_experiment(), "reports.yaml");
  RunRecord run = test::synthetic_run();
  for (RepetitionSample& rep : run.reps) {
    rep.gate_open_ms = 1.0;
    rep.host_span_ms = 0.1;
  }
  const auto tracks = tracks_of(format_trace(exp, run));
  for (const auto& entry : tracks) check_track("gate late", entry.second);
}

}  // namespace streamlab

namespace streamlab {
namespace {

// A sentence built from a value that was empty: "bound ()", "( ", "the  timer", "none timer" (a
// call in an expectation's text, "gpu_span()", is no defect).
std::vector<std::string> empty_value_defects(const std::string& text) {
  std::vector<std::string> found;
  for (const char* pattern : {" ()", ">()", "( ", " )", " ,", "the  ", "none timer", ": .", "(, ", "''"})
    if (text.find(pattern) != std::string::npos) found.push_back(pattern);
  return found;
}

struct Tick {
  double x;
  std::string label;
};

// The tick labels of each SVG of an HTML report.
std::vector<std::vector<Tick>> ticks_of(const std::string& html) {
  std::vector<std::vector<Tick>> out;
  const std::regex tick("<text class='tick' x='([0-9.]+)'[^>]*>([^<]*)</text>");
  for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) {
    const std::string svg = html.substr(at, html.find("</svg>", at) - at);
    out.emplace_back();
    for (auto m = std::sregex_iterator(svg.begin(), svg.end(), tick); m != std::sregex_iterator(); ++m)
      out.back().push_back({std::stod((*m)[1]), (*m)[2]});
  }
  return out;
}

bool nice(double step) {  // 1, 2 or 5 x 10^k
  const double mantissa = step / std::pow(10, std::floor(std::log10(step) + 1e-9));
  return std::abs(mantissa - 1) < 1e-6 || std::abs(mantissa - 2) < 1e-6 || std::abs(mantissa - 5) < 1e-6;
}

void check_ticks(const std::string& where, const std::vector<Tick>& ticks) {
  INFO(where);
  CHECK(ticks.size() >= 2);
  CHECK(ticks.size() <= 10);
  for (size_t k = 1; k < ticks.size(); ++k) {
    INFO("ticks ", ticks[k - 1].label, " and ", ticks[k].label);
    // 6.6 units per character at font size 11 at most: the two half-labels must fit between.
    const double room = ticks[k].x - ticks[k - 1].x;
    CHECK(room >= 3.3 * static_cast<double>(ticks[k - 1].label.size() + ticks[k].label.size()) + 6);
    CHECK(nice(std::stod(ticks[k].label) - std::stod(ticks[k - 1].label)));
  }
}

// The legend's kinds that the repetition drew: each present is in the legend, each absent is not.
void check_legend(const Case& c, const std::string& html) {
  const RepetitionSample& rep = c.run.reps[c.run.figures.typical_rep];
  std::map<std::string, bool> drawn = {{"H2D copy", false}, {"D2H copy", false}, {"D2D copy", false},
                                       {"kernel", false},  {"graph launch", false}};
  for (size_t i = 0; i < c.exp.ops.size(); ++i) {
    const Op& op = c.exp.ops[i];
    if (std::isnan(rep.ops[i].start_ms)) continue;
    drawn["graph launch"] |= !op.body.empty();
    auto draws = [&](const Op& o) {
      const Engine e = o.kind->engine(c.exp, o);
      drawn["H2D copy"] |= e == Engine::copy_h2d, drawn["D2H copy"] |= e == Engine::copy_d2h;
      drawn["D2D copy"] |= e == Engine::copy_other, drawn["kernel"] |= o.kernel >= 0;
    };
    if (op.body.empty()) draws(op);
    for (size_t j = 0; j < op.body.size() && j < c.run.figures.ops[i].body.size(); ++j)
      if (c.run.figures.ops[i].body[j].n) draws(op.body[j]);  // its body row
  }
  const std::string legend = html.substr(html.find("<g class='legend'>"));
  const std::string first = legend.substr(0, legend.find("</g>"));
  for (const auto& [kind, present] : drawn) {
    const std::string k = kind;
    const bool shown = first.find(">" + k) != std::string::npos;
    INFO(c.name, ": legend entry ", k);
    if (present) CHECK(shown);
    if (!present) CHECK(!shown);
  }
  CHECK(first.find("host: time in the op&#39;s API call") != std::string::npos);
}

}  // namespace

TEST_CASE("reports: the HTML numbers timed repetitions from 1, ticks nicely, scales and has a legend") {
  // STREAMLAB_REPORTS_OUT=DIR also writes each case's HTML there, to look at in a browser.
  const char* out = std::getenv("STREAMLAB_REPORTS_OUT");
  for (const Case& c : cases()) {
    const std::string name = c.name;
    const std::string html = format_html(c.exp, c.run);
    INFO(name);
    if (out) {
      std::string file = name;
      std::replace_if(file.begin(), file.end(), [](char ch) { return !std::isalnum(static_cast<unsigned char>(ch)); }, '_');
      std::ofstream(std::filesystem::path(out) / (file + ".html")) << html;
    }
    CHECK(html.find("width='960'") == std::string::npos);
    for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) {
      const std::string open = html.substr(at, html.find('>', at) - at);
      CHECK(open.find("viewBox='0 0 ") != std::string::npos);
      CHECK(open.find("width='100%'") != std::string::npos);
    }
    const auto ticks = ticks_of(html);
    for (size_t k = 0; k < ticks.size(); ++k) check_ticks(fmt::format("{}, SVG {}", name, k + 1), ticks[k]);
    if (!c.run.device_timing()) {
      CHECK(html.find("No measured timeline: ") != std::string::npos);
      CHECK(html.find("Device bars") == std::string::npos);
      continue;
    }
    const size_t typical = c.run.figures.typical_rep;
    CHECK(html.find(fmt::format("Timeline of timed repetition {} of {}</h2>", typical + 1,
                                c.run.reps.size())) != std::string::npos);
    CHECK(html.find(fmt::format("the middle one of the {} timed ones ordered by host span ({:.3f} ms)",
                                c.run.reps.size(), c.run.reps[typical].host_span_ms)) != std::string::npos);
    check_legend(c, html);
  }
}

TEST_CASE("reports: a graph's body is drawn from its measured times, its placement said unmeasured") {
  size_t graphs = 0;
  for (const Case& c : cases())
    for (size_t i = 0; i < c.exp.ops.size(); ++i) {
      const auto& body = c.run.figures.ops[i].body;
      if (std::none_of(body.begin(), body.end(), [](const Summary& s) { return s.n > 0; })) continue;
      ++graphs;
      const std::string html = format_html(c.exp, c.run);
      INFO(c.name);
      CHECK(html.find("graph " + c.exp.ops[i].id + ": body, one replay") != std::string::npos);
      CHECK(html.find("durations measured, placement not") != std::string::npos);
      for (size_t j = 0; j < body.size(); ++j)  // each measured captured op has its bar, its time
        if (body[j].n)
          CHECK(html.find(fmt::format("{}.{}: ", c.exp.ops[i].id, c.exp.ops[i].body[j].id)) != std::string::npos);
    }
  MESSAGE(graphs, " graphs with measured bodies drawn");
}

TEST_CASE("reports: every sentence is complete, for every backend and timer") {
  for (const Case& c : cases()) {
    const std::string name = c.name;
    for (const auto& [format, text] :
         {std::pair{"console", format_console_report(c.exp, c.run)}, std::pair{"html", format_html(c.exp, c.run)}}) {
      const std::string f = format;
      INFO(name, ", ", f);
      std::string defects;
      for (const std::string& d : empty_value_defects(text)) {
        const size_t at = text.find(d);
        defects += "'" + d + "' in: " + text.substr(at < 60 ? 0 : at - 60, 120) + "\n";
      }
      CHECK(defects == "");
    }
  }
}

TEST_CASE("reports: every table counts bytes one way, and kernels are held against the copy ceiling") {
  for (const Case& c : cases()) {
    const std::string name = c.name;
    INFO(name);
    const RunFigures& f = c.run.figures;
    double fastest_copy = NAN;
    std::string fastest;
    for (size_t i = 0; i < c.exp.ops.size(); ++i) {
      const Op& op = c.exp.ops[i];
      const Engine e = op.kind->engine(c.exp, op);
      const int64_t once = op.kind->bytes(c.exp, op);
      INFO("op ", op.id);
      if (op.body.empty()) CHECK(f.ops[i].bytes == (e == Engine::copy_other ? 2 * once : once));
      else CHECK(f.ops[i].bytes == traffic_bytes(c.exp, op));
      if (!std::isnan(f.ops[i].gbps))
        CHECK(f.ops[i].gbps == doctest::Approx(static_cast<double>(f.ops[i].bytes) / f.ops[i].device.median / 1e6));
      if (e == Engine::copy_other && op.body.empty() && f.ops[i].gbps > (std::isnan(fastest_copy) ? 0 : fastest_copy))
        fastest_copy = f.ops[i].gbps, fastest = op.id;
      if (e == Engine::copy_h2d || e == Engine::copy_d2h) CHECK(std::isnan(f.ops[i].of_ceiling));
    }
    if (!std::isnan(fastest_copy)) {
      CHECK(f.ceiling.measured);
      CHECK(f.ceiling.gbps == fastest_copy);
      CHECK(f.ceiling.source.find("'" + fastest + "'") != std::string::npos);
    } else if (!std::isnan(c.run.peaks.memory_gbps)) {
      CHECK(!f.ceiling.measured);
      CHECK(f.ceiling.gbps == c.run.peaks.memory_gbps);
      CHECK(f.ceiling.source.find("theoretical peak") != std::string::npos);
    }
    // Each built-in kernel with a bandwidth is held against the ceiling, in every report.
    const std::string console = format_console_report(c.exp, c.run), html = format_html(c.exp, c.run);
    const json doc = json::parse(format_json(c.exp, c.run));
    CHECK(doc["figures"]["bandwidth"]["ceiling_measured"] == f.ceiling.measured);
    for (size_t i = 0; i < c.exp.ops.size(); ++i) {
      const OpFigures& o = f.ops[i];
      const json& op = doc["ops"][i];
      CHECK(op["bytes"] == o.bytes);
      if (std::isnan(o.gbps)) continue;
      CHECK(op["gbps"].get<double>() == doctest::Approx(o.gbps));
      if (c.exp.ops[i].kernel < 0 || std::isnan(f.ceiling.gbps)) continue;
      CHECK(o.of_ceiling == doctest::Approx(o.gbps / f.ceiling.gbps));
      CHECK(op["of_ceiling"].get<double>() == doctest::Approx(o.of_ceiling));
      const std::string share = fmt::format("{:.0f}%", 100 * o.of_ceiling);
      CHECK(console.find(fmt::format("{:.1f}  {:>7}", o.gbps, share)) != std::string::npos);
      CHECK(html.find(fmt::format("<td>{:.1f}</td><td>{}</td>", o.gbps, share)) != std::string::npos);
    }
    if (c.run.backend == "host" || std::all_of(f.ops.begin(), f.ops.end(), [](const OpFigures& o) { return std::isnan(o.gbps); }))
      continue;
    for (const std::string& text : {console, html}) {
      CHECK(text.find("GB/s: device memory read + written (a D2D copy of B bytes counts 2B") != std::string::npos);
      if (std::any_of(f.ops.begin(), f.ops.end(), [](const OpFigures& o) { return !std::isnan(o.of_ceiling); }))
        CHECK(text.find(fmt::format("D2D copy ceiling, {:.0f} GB/s read + written", f.ceiling.gbps)) != std::string::npos);
    }
  }
}

}  // namespace streamlab

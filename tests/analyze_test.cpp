// analyze: the happens-before rules case by case (tests/analyze/, one small experiment per rule,
// each with the exact diagnostics it must give), the shipped experiments, and the JSON form.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ops/op.hpp"
#include "runner/analyze.hpp"
#include "runner/happens_before.hpp"
#include "runner/load.hpp"
#include "tests/test_support.hpp"

using namespace streamlab;
using namespace streamlab::test;

namespace {

// What `streamlab check` prints on stderr, then the counts line.
std::string check_output(const std::string& text, const std::string& file) {
  Experiment exp = load_string(text, file);
  Findings findings = analyze(exp);
  return format_findings(findings, exp.source) + "summary: " + format_counts(count_findings(findings)) + "\n";
}

int count_code(const Findings& f, std::string_view code) {
  int n = 0;
  for (const auto& x : f.items()) n += x.code == code && !x.acknowledged;
  return n;
}

}  // namespace

// STREAMLAB_UPDATE_GOLDEN=1 rewrites the .expected files (then review the diff).
TEST_CASE("analyze: every experiment under tests/analyze gives exactly its expected diagnostics") {
  auto files = yaml_files("tests/analyze");
  CHECK(files.size() >= 30);
  int clean = 0;
  for (const auto& path : files) {
    std::string shown = "analyze/" + path.filename().string();
    INFO(shown);
    std::string actual = check_output(read_text(path), shown);
    auto expected_path = std::filesystem::path(path).replace_extension(".expected");
    if (std::getenv("STREAMLAB_UPDATE_GOLDEN")) std::ofstream(expected_path) << actual;
    CHECK(actual == read_text(expected_path));
    clean += actual == "summary: no diagnostics\n";
  }
  CHECK(clean >= 10);  // the fixed variants: no false alarms
}

TEST_CASE("analyze: every shipped experiment is clean, or acknowledges exactly what it shows") {
  for (const auto& path : yaml_files("experiments")) {
    INFO(path.string());
    Experiment exp = load_file(path.string());
    Findings findings = analyze(exp);
    CHECK(format_findings(findings, exp.source) == "");
  }
}

TEST_CASE("analyze: a race names both ops, the overlap and the event that would order them") {
  Findings f = analyze(load_file((source_dir() / "tests/analyze/16_overlapping_ranges.yaml").string()));
  REQUIRE(f.items().size() == 1);
  const Finding& race = f.items()[0];
  CHECK(race.code == "race");
  CHECK(race.severity == Severity::error);
  CHECK(race.message.find("data race on 'd[256:512]'") == 0);
  CHECK(race.ops == std::vector<int>{0, 1});
  CHECK(race.fix.find("- streamWaitEvent: {stream: s2, event: low_done}") != std::string::npos);
}

TEST_CASE("analyze: vector clocks follow stream order, events and host syncs") {
  Experiment exp = load_file((source_dir() / "tests/analyze/42_transitive_events.yaml").string());
  HappensBefore hb(exp);
  for (int i = 0; i < static_cast<int>(exp.ops.size()); ++i) {
    hb.begin(i);
    exp.ops[i].kind->order(hb, exp, exp.ops[i]);
    if (exp.ops[i].id == "consume") {
      // produce is op 0 of s1 (stream 1): done before consume starts, through s2's relay
      CHECK(done_in(StreamPoint{1, 0}, hb.effects().start));
      CHECK_FALSE(done_in(StreamPoint{1, 0}, hb.host()));  // the host has not waited for it
    }
  }
  CHECK(done_in(StreamPoint{1, 0}, hb.host()));  // after the final deviceSynchronize
}

TEST_CASE("analyze: JSON output carries codes, places, fixes and acknowledgements") {
  Experiment exp = load_file((source_dir() / "tests/analyze/31_allow_acknowledges.yaml").string());
  auto doc = nlohmann::json::parse(format_findings_json(exp, analyze(exp)));
  CHECK(doc["valid"] == true);
  CHECK(doc["errors"] == 0);
  CHECK(doc["acknowledged"] == 1);
  REQUIRE(doc["diagnostics"].size() == 1);
  CHECK(doc["diagnostics"][0]["code"] == "race");
  CHECK(doc["diagnostics"][0]["acknowledged"] == true);
  CHECK(doc["diagnostics"][0]["line"] == 16);
  CHECK(doc["diagnostics"][0]["ops"][0]["id"] == "produce");
  CHECK(doc["diagnostics"][0]["ops"][1]["id"] == "consume");
  CHECK(doc["diagnostics"][0]["ops"][1]["line"] == 16);
  CHECK(doc["diagnostics"][0]["buffer"] == "d");
}

TEST_CASE("analyze: a generated experiment of 16 streams orders what its events order") {
  // Ring of streams: stream k writes chunk k, records; stream k+1 waits, then reads chunk k.
  std::string yaml = "name: ring\nstreams: {s: {array: 16}}\nevents:\n";
  for (int k = 0; k < 16; ++k) yaml += fmt::format("  e{}: {{}}\n", k);
  yaml += "buffers: {d: {type: float32, count: 16384, memory: device}}\nops:\n";
  for (int k = 0; k < 16; ++k) {
    int next = (k + 1) % 16;
    yaml += fmt::format("  - launch: {{kernel: fill, grid: 4, block: 256, stream: 's[{}]', args: {{out: {{buffer: d, "
                        "offset: {}, count: 1024}}, value: 1}}}}\n", k, k * 1024);
    yaml += fmt::format("  - eventRecord: {{event: e{}, stream: 's[{}]'}}\n", k, k);
    if (k != 7) yaml += fmt::format("  - streamWaitEvent: {{stream: 's[{}]', event: e{}}}\n", next, k);
    yaml += fmt::format("  - launch: {{kernel: scale, grid: 4, block: 256, stream: 's[{}]', args: {{x: {{buffer: d, "
                        "offset: {}, count: 1024}}, factor: 2}}}}\n", next, k * 1024);
  }
  Findings f = analyze(load_string(yaml, "ring.yaml"));
  CHECK(count_code(f, "race") == 1);  // only the one wait left out
  CHECK(count_code(f, "event-unused") == 1);
}

// analyze: the happens-before rules case by case (tests/analyze/, one small experiment per rule,
// each with the exact diagnostics it must give), the shipped experiments, and the JSON form.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ops/op_kind.hpp"
#include "runner/analyze/analyze.hpp"
#include "runner/analyze/fixes.hpp"
#include "runner/analyze/live_set.hpp"
#include "runner/context/happens_before.hpp"
#include "runner/load/load.hpp"
#include "tests/test_support.hpp"

using namespace streamlab;
using namespace streamlab::test;

namespace {

// What `streamlab check` prints on stderr, then the counts line.
std::string check_output(const std::string& text, const std::string& file) {
  Experiment exp = load_string(text, file);
  Findings findings = analyze(exp);
  return format_findings(findings, exp.source) +
         "summary: " + format_counts(count_findings(findings)) + "\n";
}

int count_code(const Findings& f, std::string_view code) {
  int n = 0;
  for (const auto& x : f.items()) n += x.code == code && !x.acknowledged;
  return n;
}

// What identifies a finding across an edit that moves lines: its code, its buffer and its ops, by
// the id the user gave, else by kind (default ids count ops, and an inserted op renumbers them).
std::string finding_key(const Experiment& e, const Finding& f) {
  std::vector<std::string> ops;
  for (int i : f.ops)
    ops.push_back(e.ops[i].id.find('#') == std::string::npos ? e.ops[i].id
                                                             : std::string(e.ops[i].kind->name));
  std::sort(ops.begin(), ops.end());
  return fmt::format("{} on {} by {}", f.code, f.buffer >= 0 ? e.buffers[f.buffer].name : "-",
                     fmt::join(ops, ", "));
}

std::multiset<std::string> unacknowledged_keys(const Experiment& e, const Findings& findings) {
  std::multiset<std::string> keys;
  for (const Finding& f : findings.items())
    if (!f.acknowledged) keys.insert(finding_key(e, f));
  return keys;
}

// Applies each fix of the file's findings as printed, alone, and checks that the fixed file loads,
// no longer gives that finding, and gives nothing it did not give before. Returns the fixes
// applied.
int apply_every_fix(const std::filesystem::path& path) {
  std::string text = read_text(path);
  Experiment exp = load_string(text, path.filename().string());
  Findings before = analyze(exp);
  std::multiset<std::string> had = unacknowledged_keys(exp, before);
  int applied = 0;
  for (const Finding& f : before.items()) {
    if (f.acknowledged || f.edits.empty()) continue;
    std::string key = finding_key(exp, f);
    INFO(path.filename().string(), ": fixing ", key, "\n", format_fix_text(f, text));
    auto fixed = apply_edits(text, f.edits);
    REQUIRE(fixed.has_value());
    INFO("the fixed file:\n", *fixed);
    std::string problems = diagnostics_of(*fixed, path.filename().string());
    CHECK(problems == "");
    if (!problems.empty()) continue;
    Experiment after = load_string(*fixed, path.filename().string());
    std::multiset<std::string> has = unacknowledged_keys(after, analyze(after));
    CHECK(has.count(key) < had.count(key));
    for (const std::string& k : has) {
      INFO("found after the fix: ", k);
      CHECK(had.count(k) >= has.count(k));
    }
    ++applied;
  }
  return applied;
}

}  // namespace

TEST_CASE("analyze: every fix, applied as printed, removes its finding and gives nothing new") {
  int applied = 0;
  for (const std::string dir : {"tests/analyze", "tests/labs", "experiments"})
    for (const auto& path : yaml_files(dir)) applied += apply_every_fix(path);
  CHECK(applied >= 25);
}

TEST_CASE(
    "analyze: edits insert beside a list item, declare into block, flow or missing sections") {
  std::string text =
      "name: x\nevents: {a: {}}\nops:\n  - one: {}\n  - two: {x: 1,\n          y: 2}  # note\n"
      "  - three: {}\n";
  auto out = apply_edits(text, {Edit::declaring("events", "b: {}"), Edit::after(5, "- new: {}", ""),
                                Edit::before(4, "- first: {}", ""), Edit::removal(7, ""),
                                Edit::declaring("buffers", "h: {}")});
  REQUIRE(out.has_value());
  CHECK(*out ==
        "name: x\nevents: {b: {}, a: {}}\nbuffers:\n  h: {}\nops:\n  - first: {}\n  - one: {}\n"
        "  - two: {x: 1,\n          y: 2}  # note\n  - new: {}\n");
  CHECK_FALSE(apply_edits("ops: [{a: {}}]\n", {Edit::after(1, "- b: {}", "")}).has_value());
  CHECK(apply_edits("events:\n    a: {}\nops:\n  - x: {}\n",
                    {Edit::declaring("events", "b: {}"), Edit::append("- y: {}", "")}) ==
        "events:\n    b: {}\n    a: {}\nops:\n  - x: {}\n  - y: {}\n");
  CHECK(yaml_scalar("s1") == "s1");
  CHECK(yaml_scalar("s[i]") == "\"s[i]\"");
  CHECK(yaml_scalar("on") == "\"on\"");
  CHECK(item_text("ops:\n  - a: {x: 1}  # c\n", 2) == "a: {x: 1}");
  CHECK_FALSE(item_text("ops:\n  - a: {x: 1,\n       y: 2}\n", 2).has_value());
}

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
  Findings f =
      analyze(load_file((source_dir() / "tests/analyze/16_overlapping_ranges.yaml").string()));
  REQUIRE(f.items().size() == 1);
  const Finding& race = f.items()[0];
  CHECK(race.code == "race");
  CHECK(race.severity == Severity::error);
  CHECK(race.message.find("data race on 'd[256:512]'") == 0);
  CHECK(race.ops == std::vector<int>{0, 1});
  CHECK(format_fix_text(race, read_text(source_dir() / "tests/analyze/16_overlapping_ranges.yaml"))
            .find("- streamWaitEvent: {stream: s2, event: low_done}") != std::string::npos);
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
    yaml += fmt::format(
        "  - launch: {{kernel: fill, grid: 4, block: 256, stream: 's[{}]', args: {{out: {{buffer: "
        "d, "
        "offset: {}, count: 1024}}, value: 1}}}}\n",
        k, k * 1024);
    yaml += fmt::format("  - eventRecord: {{event: e{}, stream: 's[{}]'}}\n", k, k);
    if (k != 7)
      yaml += fmt::format("  - streamWaitEvent: {{stream: 's[{}]', event: e{}}}\n", next, k);
    yaml += fmt::format(
        "  - launch: {{kernel: scale, grid: 4, block: 256, stream: 's[{}]', args: {{x: {{buffer: "
        "d, "
        "offset: {}, count: 1024}}, factor: 2}}}}\n",
        next, k * 1024);
  }
  Findings f = analyze(load_string(yaml, "ring.yaml"));
  CHECK(count_code(f, "race") == 1);  // only the one wait left out
  CHECK(count_code(f, "event-unused") == 1);
}

// --- the analysis against a brute-force model ---------------------------------------------------
//
// Random small experiments, analyzed twice: by analyze() (vector clocks, live sets pruned as it
// goes) and by an independent model that builds the happens-before graph edge by edge from
// docs/semantics.md and compares every pair of accesses. Both must find races for the same
// (later op, buffer) pairs.
namespace {

struct RandomOp {
  std::string yaml;
  enum Kind {
    write,
    update,
    copy,
    record,
    wait,
    sync_stream,
    sync_device,
    sync_event,
    memset_sync
  } kind;
  int stream = 0, event = 0, dst = 0,
      src = 0;  // buffers are chunks: 0..3 = b0 low/high, b1 low/high
};

const char* kStreams[] = {"legacy", "s1", "s2", "nb", "per_thread"};
bool blocking(int s) { return s == 1 || s == 2 || s == 4; }

std::string chunk(int c) {
  return fmt::format("{{buffer: b{}, offset: {}, count: 256}}", c / 2, (c % 2) * 256);
}

RandomOp random_op(uint64_t& state) {
  auto next = [&](int n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int>((state >> 33) % static_cast<uint64_t>(n));
  };
  RandomOp op;
  op.kind = static_cast<RandomOp::Kind>(next(9));
  op.stream = next(5), op.event = next(2), op.dst = next(4), op.src = next(4);
  if (op.src == op.dst) op.src = (op.dst + 1) % 4;
  const char* s = kStreams[op.stream];
  switch (op.kind) {
    case RandomOp::write:
      op.yaml = fmt::format(
          "launch: {{kernel: fill, grid: 1, block: 256, stream: {}, args: {{out: {}, value: 1}}}}",
          s, chunk(op.dst));
      break;
    case RandomOp::update:
      op.yaml = fmt::format(
          "launch: {{kernel: scale, grid: 1, block: 256, stream: {}, args: {{x: {}, factor: 2}}}}",
          s, chunk(op.dst));
      break;
    case RandomOp::copy:
      op.yaml = fmt::format("memcpyAsync: {{dst: {}, src: {}, stream: {}}}", chunk(op.dst),
                            chunk(op.src), s);
      break;
    case RandomOp::record:
      op.yaml = fmt::format("eventRecord: {{event: e{}, stream: {}}}", op.event, s);
      break;
    case RandomOp::wait:
      op.yaml = fmt::format("streamWaitEvent: {{stream: {}, event: e{}}}", s, op.event);
      break;
    case RandomOp::sync_stream:
      op.yaml = fmt::format("streamSynchronize: {{stream: {}}}", s);
      break;
    case RandomOp::sync_device:
      op.yaml = "deviceSynchronize: {}";
      break;
    case RandomOp::sync_event:
      op.yaml = fmt::format("eventSynchronize: {{event: e{}}}", op.event);
      break;
    case RandomOp::memset_sync:
      op.stream = 0;
      op.yaml = fmt::format("memset: {{dst: {}, value: 0}}", chunk(op.dst));
      break;
  }
  return op;
}

// The model: node 2i is op i's host call, node 2i+1 its device work (if stream-ordered).
std::set<std::pair<int, int>> model_races(const std::vector<RandomOp>& ops) {
  int n = static_cast<int>(ops.size());
  auto on_device = [&](int i) {
    auto k = ops[i].kind;
    return k != RandomOp::sync_stream && k != RandomOp::sync_device && k != RandomOp::sync_event;
  };
  std::vector<std::vector<int>> edges(2 * n);
  std::vector<int> last_in_stream(5, -1), last_record(2, -1);
  std::vector<std::vector<int>> stream_ops(5);
  for (int i = 0; i < n; ++i) {
    const RandomOp& op = ops[i];
    if (i > 0) edges[2 * (i - 1)].push_back(2 * i);  // PO
    if (on_device(i)) {
      int s = op.stream, d = 2 * i + 1;
      edges[2 * i].push_back(d);                                                  // issue
      if (last_in_stream[s] >= 0) edges[2 * last_in_stream[s] + 1].push_back(d);  // SO
      if (s == 0)  // LEG: the legacy op waits for every earlier op of blocking streams
        for (int b = 1; b < 5; ++b)
          if (blocking(b))
            for (int j : stream_ops[b]) edges[2 * j + 1].push_back(d);
      if (blocking(s))  // and blocking streams' later ops wait for it
        for (int j : stream_ops[0]) edges[2 * j + 1].push_back(d);
      if (op.kind == RandomOp::wait && last_record[op.event] >= 0)
        edges[2 * last_record[op.event] + 1].push_back(d);
      if (op.kind == RandomOp::record) last_record[op.event] = i;
      last_in_stream[s] = i;
      stream_ops[s].push_back(i);
    }
    auto host_waits_for = [&](int j) {
      if (j >= 0 && i + 1 < n) edges[2 * j + 1].push_back(2 * (i + 1));
    };
    if (op.kind == RandomOp::sync_stream) {
      host_waits_for(last_in_stream[op.stream]);
      if (op.stream == 0)
        for (int b = 1; b < 5; ++b)
          if (blocking(b)) host_waits_for(last_in_stream[b]);
    }
    if (op.kind == RandomOp::sync_device)
      for (int s = 0; s < 5; ++s) host_waits_for(last_in_stream[s]);
    if (op.kind == RandomOp::sync_event) host_waits_for(last_record[op.event]);
  }
  // reach[a][b]: a path from node a to node b
  std::vector<std::vector<bool>> reach(2 * n, std::vector<bool>(2 * n, false));
  for (int a = 2 * n - 1; a >= 0; --a)
    for (int b : edges[a]) {
      reach[a][b] = true;
      for (int c = 0; c < 2 * n; ++c)
        if (reach[b][c]) reach[a][c] = true;
    }
  // accesses: chunk -> write?
  auto accesses = [&](int i) {
    std::vector<std::pair<int, bool>> out;
    switch (ops[i].kind) {
      case RandomOp::write:
      case RandomOp::memset_sync:
        out = {{ops[i].dst, true}};
        break;
      case RandomOp::update:
        out = {{ops[i].dst, false}, {ops[i].dst, true}};
        break;
      case RandomOp::copy:
        out = {{ops[i].src, false}, {ops[i].dst, true}};
        break;
      default:
        break;
    }
    return out;
  };
  std::set<std::pair<int, int>> races;  // (later op, buffer)
  for (int b = 0; b < n; ++b)
    for (int a = 0; a < b; ++a)
      for (auto [ca, wa] : accesses(a))
        for (auto [cb, wb] : accesses(b))
          if (ca == cb && (wa || wb) && !reach[2 * a + 1][2 * b + 1]) races.insert({b, ca / 2});
  return races;
}

}  // namespace

TEST_CASE(
    "analyze: races found by vector clocks are those of the brute-force happens-before graph") {
  uint64_t state = 2026;
  int with_races = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<RandomOp> ops;
    std::string yaml =
        "name: random\nstreams: {s1: {}, s2: {}, nb: {flags: non-blocking}}\nevents: {e0: {}, e1: "
        "{}}\n"
        "buffers:\n  b0: {type: float32, count: 512, memory: device}\n"
        "  b1: {type: float32, count: 512, memory: device}\nops:\n";
    for (int i = 0; i < 14; ++i) {
      ops.push_back(random_op(state));
      yaml += "  - " + ops.back().yaml + "\n";
    }
    Experiment exp = load_string(yaml, "random.yaml");
    Findings findings = analyze(exp);
    std::set<std::pair<int, int>> found;
    for (const auto& f : findings.items())
      if (f.code == "race") found.insert({f.ops.back(), f.buffer});
    std::set<std::pair<int, int>> expected = model_races(ops);
    INFO(yaml);
    CHECK(found == expected);
    with_races += !expected.empty();
  }
  CHECK(with_races > 50);  // the generator makes racy and clean experiments alike
}

TEST_CASE("analyze: each mistake of the overlap lab gives the diagnostic that names it") {
  const std::pair<const char*, const char*> mistakes[] = {
      {"pageable", "pageable-async"},     {"one_stream", "one-stream"},
      {"sync_per_chunk", "sync-in-loop"}, {"no_events", "race"},
      {"too_small", "overhead-bound"},    {"legacy_stream", "legacy-serializes"}};
  for (const auto& mistake : mistakes) {  // no structured binding: clang 14's INFO cannot capture one
    const char* file = mistake.first;
    const char* code = mistake.second;
    INFO(file);
    Experiment exp =
        load_file((source_dir() / fmt::format("tests/labs/overlap/{}.yaml", file)).string());
    Findings f = analyze(exp);
    CHECK(count_code(f, code) >= 1);
    for (const Finding& x : f.items())  // and nothing else that is not the mistake's own
      CHECK((x.code == code || x.severity == Severity::note));
  }
  for (const char* clean : {"starter", "solution"}) {
    INFO(clean);
    Experiment exp =
        load_file((source_dir() / fmt::format("experiments/labs/overlap/{}.yaml", clean)).string());
    CHECK(analyze(exp).items().empty());
  }
}

TEST_CASE("analyze: the live set visits every record that may overlap a range, in the order added") {
  struct R {
    int id;
    int64_t begin, end;
  };
  LiveSet<R> live;
  live.add({0, 100, 200});
  live.add({1, 0, 1000});  // long, and starting well before the ranges below
  live.add({2, 300, 400});
  live.add({3, 150, 160});
  auto overlapping = [&](int64_t b, int64_t e) {
    std::vector<int> ids;
    live.for_overlapping(b, e, [&](const R& r) {
      if (r.begin < e && b < r.end) ids.push_back(r.id);
    });
    return ids;
  };
  CHECK(overlapping(155, 156) == std::vector<int>{0, 1, 3});
  CHECK(overlapping(900, 950) == std::vector<int>{1});
  CHECK(overlapping(1000, 1100).empty());
  // Erasing covers first elements in [begin, end] and the predicate decides.
  live.erase_within(100, 400, [](const R& r) { return r.end <= 400 && r.id != 3; });
  std::vector<int> all;
  live.for_each([&](const R& r) { all.push_back(r.id); });
  CHECK(all == std::vector<int>{1, 3});
}

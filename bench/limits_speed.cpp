// How the cost of loading, checking and running an experiment grows with the shapes that used to
// make it quadratic or worse (docs/safety.md): a loop's count, graphs in a loop, streams seen by
// legacy-stream ops, host ops beside device ops in the report's figures, long expectations, and
// ops repeated through a YAML alias. Each shape is generated at a size and at twice and four times
// it, and timed as the command would do it (load from text, analyze, and for the host ops a run on
// the host backend with its figures). Linear growth doubles the time with the size: the ratio
// column should read about 2, and a quadratic cost would read 4.
//   usage: limits_speed [--scale K] [--rounds R]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "runner/analyze/analyze.hpp"
#include "runner/execute/execute.hpp"
#include "runner/load/load.hpp"

namespace {

using namespace streamlab;

// A loop of `n` copies in one stream.
std::string loop(int n) {
  return fmt::format(
      "name: loop\nstreams: {{s: {{}}}}\nbuffers:\n  a: {{type: float32, count: 64, memory: "
      "device}}\n"
      "  b: {{type: float32, count: 64, memory: device}}\nops:\n  - loop:\n      var: i\n      "
      "count: {}\n"
      "      ops:\n        - memcpyAsync: {{dst: a, src: b, stream: s}}\n",
      n);
}

// `n` graphs, each forking a kernel to a second stream and joining back, among 256 declared
// buffers and events: each graph's body is analyzed on its own.
std::string graphs(int n) {
  return fmt::format(
      "name: graphs\nstreams: {{s1: {{}}, s2: {{}}}}\nevents: {{f: {{array: 256}}, j: {{array: "
      "256}}}}\n"
      "buffers:\n  x: {{type: float32, count: 64, memory: device, init: sequence, array: "
      "256}}\nops:\n"
      "  - loop:\n      var: i\n      count: {}\n      ops:\n        - graph:\n            stream: "
      "s1\n"
      "            ops:\n              - eventRecord: {{event: 'f[i % 256]', stream: s1}}\n"
      "              - streamWaitEvent: {{stream: s2, event: 'f[i % 256]'}}\n"
      "              - launch: {{kernel: scale, grid: 1, block: 64, stream: s2, args: {{x: 'x[i % "
      "256]', factor: 2}}}}\n"
      "              - eventRecord: {{event: 'j[i % 256]', stream: s2}}\n"
      "              - streamWaitEvent: {{stream: s1, event: 'j[i % 256]'}}\n"
      "  - streamSynchronize: {{stream: s1}}\n",
      n);
}

// `streams` blocking streams, each given work, then 4,000 ops alternating between the legacy
// stream and the created ones: every legacy op waits for all blocking streams.
std::string legacy(int streams) {
  return fmt::format(
      "name: legacy\nstreams: {{s: {{array: {}}}}}\nbuffers:\n  x: {{type: float32, count: 64, "
      "memory: device, "
      "init: sequence, array: 16}}\nops:\n  - loop: {{var: k, count: {}, ops: [{{launch: {{kernel: "
      "scale, grid: 1, "
      "block: 64, stream: 's[k]', args: {{x: 'x[k % 16]', factor: 2}}}}}}]}}\n  - loop:\n      "
      "var: i\n      count: "
      "2000\n      ops:\n        - launch: {{kernel: scale, grid: 1, block: 64, args: {{x: 'x[i % "
      "16]', factor: 2}}}}\n"
      "        - launch: {{kernel: scale, grid: 1, block: 64, stream: 's[i % {}]', args: {{x: "
      "'x[(i + 1) % 16]', "
      "factor: 2}}}}\n",
      streams, streams, streams);
}

// `n` host-only ops (queries) beside 200 kernels in 4 streams, run on the host backend: the report
// pairs ops for their overlaps, which must not cost n^2.
std::string host_ops(int n) {
  return fmt::format(
      "name: host-ops\nstreams: {{s: {{array: 4}}}}\nbuffers:\n  x: {{type: float32, count: 64, "
      "memory: device, init: "
      "sequence, array: 4}}\nops:\n  - loop: {{var: i, count: 200, ops: [{{launch: {{kernel: "
      "scale, grid: 1, block: "
      "64, stream: 's[i % 4]', args: {{x: 'x[i % 4]', factor: 1}}}}}}]}}\n  - loop: {{var: j, "
      "count: {}, ops: "
      "[{{streamQuery: {{stream: 's[j % 4]'}}}}]}}\n  - deviceSynchronize: {{}}\n",
      n);
}

// `n` expectations, each a chain of 150 terms (2,400 characters).
std::string expectations(int n) {
  std::string chain;
  for (int t = 0; t < 150; ++t) chain += "duration(k) + ";
  std::string y =
      "name: expectations\nbuffers:\n  x: {type: float32, count: 64, memory: device, init: "
      "sequence}\n"
      "ops:\n  - launch: {id: k, kernel: scale, grid: 1, block: 64, args: {x: x, factor: "
      "2}}\nexpect:\n";
  for (int e = 0; e < n; ++e) y += fmt::format("  - \"{}1 > {}\"\n", chain, e);
  return y;
}

// One op written once and repeated `n` times through a YAML alias.
std::string aliases(int n) {
  std::string y =
      "name: aliases\nstreams: {s: {}}\nbuffers:\n  a: {type: float32, count: 64, memory: device}\n"
      "  b: {type: float32, count: 64, memory: device}\nops:\n  - &op {memcpyAsync: {dst: a, src: "
      "b, "
      "stream: s}}\n";
  for (int i = 1; i < n; ++i) y += "  - *op\n";
  return y;
}

struct Shape {
  const char* name;
  const char* size_is;
  int size;  // the first size; then twice and four times it
  std::function<std::string(int)> generate;
  bool run;  // also run it on the host backend (its figures included)
};

double time_once(const std::string& text, bool run) {
  auto t0 = std::chrono::steady_clock::now();
  Experiment e = load_string(text, "generated.yaml");
  Findings f = analyze(e);
  if (run) {
    auto backend = make_host_backend(e);
    RunRecord r = run_experiment(e, *backend, {1, 0, {}});
    static_cast<void>(r);
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double best_of(const std::string& text, bool run, int rounds) {
  double best = 1e300;
  for (int r = 0; r < rounds; ++r) best = std::min(best, time_once(text, run));
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "limits_speed: how loading, checking and running grow with the shapes docs/safety.md bounds"};
  int scale = 1, rounds = 3;
  app.add_option("--scale", scale, "Multiply every shape's first size by this");
  app.add_option("--rounds", rounds, "Best of this many runs per size");
  CLI11_PARSE(app, argc, argv);
  const std::vector<Shape> shapes = {
      {"loop", "copies", 12'500, loop, false},
      {"graphs", "graphs", 2'500, graphs, false},
      {"legacy", "streams", 64, legacy, false},
      {"host-ops", "queries", 5'000, host_ops, true},
      {"expectations", "expectations", 100, expectations, false},
      {"aliases", "ops", 12'500, aliases, false},
  };
  std::printf("%-13s %-13s %9s %11s %7s\n", "shape", "size", "", "best ms", "ratio");
  bool superlinear = false;
  for (const Shape& s : shapes) {
    double previous = 0;
    for (int k = 1; k <= 4; k *= 2) {
      int n = s.size * scale * k;
      double ms = best_of(s.generate(n), s.run, rounds);
      std::string ratio = previous > 0 ? fmt::format("{:.2f}", ms / previous) : "";
      superlinear = superlinear || (previous > 0 && ms / previous > 3);
      std::printf("%-13s %9d %-13s %11.2f %7s\n", s.name, n, s.size_is, ms, ratio.c_str());
      previous = ms;
    }
  }
  std::printf("%s\n",
              superlinear
                  ? "a cost grew faster than linearly (ratio over 3)"
                  : "every cost grew about linearly (each ratio under 3 for twice the size)");
  return superlinear ? 1 : 0;
}

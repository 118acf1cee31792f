// Runner against hand-written CUDA, repetition for repetition, in one process.
//
// Each pair is an experiment and the program it describes written by hand (hand_written.cu). Both
// are set up once, warmed up, then run in alternating order (A B B A A B ...) so that drift of
// the machine during the bench (pageable copies on these hosts drift by 30% over seconds, with
// the host's load) falls on both sides alike. The runner's span is the one `streamlab run`
// reports (host clock, gate opening or first issue to the final synchronize); the hand-written
// one is the host clock from its first call to its final synchronize.
// Each pair gets about --seconds of timed repetitions (at least 20 of each side), so the noisy
// short pairs (a pageable N=1024 repetition varies by 15%) get hundreds.
//   usage: compare [--timer none|events|cupti] [--no-gate] [--seconds S] [--only NAME] [--experiments DIR]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "bench/hand_written.hpp"
#include "runner/check/checks.hpp"
#include "runner/core/stats.hpp"
#include "runner/execute/backend.hpp"
#include "runner/load/load.hpp"

namespace {

using Params = std::vector<std::pair<std::string, std::string>>;

struct Pair {
  std::string name;
  std::string file;  // under the experiments directory
  Params params;     // set on the experiment, and passed to the hand-written program alike
  std::function<std::unique_ptr<bench::HandWritten>()> hand_written;
};

std::vector<Pair> pairs() {
  std::vector<Pair> all;
  const std::pair<const char*, const char*> c6[] = {
      {"default", "02_two_transposes_default_stream.yaml"},
      {"streams", "03_two_transposes_two_streams.yaml"},
      {"pinned", "04_two_transposes_pinned_async.yaml"}};
  for (int n : {1024, 8192})
    for (auto [version, file] : c6)
      all.push_back(
          {fmt::format("C6 {} N={}", version, n),
           file,
           {{"N", std::to_string(n)}},
           [version = std::string(version), n] { return bench::two_transposes(version, n); }});
  const long long spin_us = 1000, c5_us = 1500, c5_mib = 64;
  for (int streams : {1, 4})
    all.push_back(
        {fmt::format("C1 {} stream{}", streams, streams > 1 ? "s" : ""),
         streams == 1 ? "claims/c1_kernels_one_stream.yaml" : "claims/c1_kernels_four_streams.yaml",
         {{"US", std::to_string(spin_us)}},
         [=] { return bench::spins(streams, spin_us); }});
  for (int streams : {1, 2})
    all.push_back({fmt::format("C5 {} stream{}", streams, streams > 1 ? "s" : ""),
                   streams == 1 ? "claims/c5_copy_kernel_one_stream.yaml"
                                : "claims/c5_copy_kernel_two_streams.yaml",
                   {{"US", std::to_string(c5_us)}, {"MIB", std::to_string(c5_mib)}},
                   [=] { return bench::copy_and_kernel(streams, c5_us, c5_mib); }});
  all.push_back({"C10 launches vs graph", "claims/c10_graph_launch.yaml", {}, [] {
                   return bench::graph_launch(1000);
                 }});
  const int cycles = 10;
  const long long chunk = 4 << 20;
  all.push_back({"pipeline 4 streams", "bench/pipeline_four_streams.yaml",
                 {{"CYCLES", std::to_string(cycles)}, {"N", std::to_string(chunk)}},
                 [=] { return bench::pipeline(cycles, chunk); }});
  return all;
}

double time_ms(const std::function<void()>& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

struct Outcome {
  streamlab::Summary runner, hand;
  double paired = 0;  // median of the rounds' own ratios: what drift between rounds cannot move
  bool runner_valid = false, hand_valid = false;
};

Outcome compare(const Pair& pair, const std::string& dir, streamlab::TimerChoice timer, bool gate,
                double seconds) {
  streamlab::LoadOptions options;
  options.overrides = pair.params;
  auto exp = streamlab::load_file(dir + "/" + pair.file, options);
  auto runner = streamlab::make_cuda_backend(exp, 0, {.timer = timer, .gate = gate});
  runner->prepare();
  auto hand = pair.hand_written();
  auto run_runner = [&] { return runner->run_repetition().host_span_ms; };
  auto run_hand = [&] { return time_ms([&] { hand->repetition(); }); };
  double round_ms = 0;
  for (int i = 0; i < 3; ++i)
    round_ms = run_runner() + run_hand();  // warm-up, as the experiments' own
  const int rounds = std::clamp(static_cast<int>(seconds * 1000 / round_ms), 20, 5000);
  std::vector<double> r, h, ratios;
  for (int i = 0; i < rounds; ++i) {
    if ((i + 1) / 2 % 2 ==
        0) {  // A B, B A, A B, ...: a linear drift cancels in each pair of rounds
      r.push_back(run_runner()), h.push_back(run_hand());
    } else {
      h.push_back(run_hand()), r.push_back(run_runner());
    }
  }
  for (int i = 0; i < rounds; ++i) ratios.push_back(r[i] / h[i]);
  Outcome out{streamlab::summarize(r), streamlab::summarize(h),
              streamlab::summarize(ratios).median};
  auto checks = streamlab::run_checks(
      exp, [&](int b) { return runner->contents(b); }, true);
  out.runner_valid = true;
  for (const auto& c : checks) out.runner_valid = out.runner_valid && c.passed;
  out.hand_valid = hand->valid();
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"streamlab against hand-written CUDA, repetition for repetition in one process"};
  std::string timer_name = "none", only, dir = "experiments";
  double seconds = 10;
  app.add_option("--timer", timer_name, "The runner's device timer")
      ->check(CLI::IsMember({"none", "events", "cupti"}));
  app.add_option("--seconds", seconds,
                 "Timed seconds per pair, both sides together (at least 20 rounds)")
      ->check(CLI::Range(0.0, 3600.0));
  app.add_option("--only", only, "Run the pairs whose name contains this");
  bool no_gate = false;
  app.add_flag("--no-gate", no_gate,
               "The runner without its start gate, as `run --no-gate`: what the gate itself costs or hides");
  app.add_option("--experiments", dir, "Directory of the experiments");
  CLI11_PARSE(app, argc, argv);
  auto timer = timer_name == "none"     ? streamlab::TimerChoice::none
               : timer_name == "events" ? streamlab::TimerChoice::events
                                        : streamlab::TimerChoice::cupti;

  fmt::print(
      "runner (timer {}{}) vs hand-written: median host spans over interleaved repetitions, about {} "
      "s a pair;\n"
      "ratio: runner median / hand-written median; paired: median of each round's own ratio\n",
      timer_name, no_gate ? ", no start gate" : "", seconds);
  fmt::print("{:<18} {:>6} {:>11} {:>7} {:>16} {:>7} {:>7} {:>7}  {}\n", "pair", "rounds",
             "runner ms", "cv", "hand-written ms", "cv", "ratio", "paired", "valid");
  int failures = 0;
  for (const auto& pair : pairs()) {
    if (pair.name.find(only) == std::string::npos) continue;
    try {
      auto o = compare(pair, dir, timer, !no_gate, seconds);
      fmt::print("{:<18} {:>6} {:>11.3f} {:>6.1f}% {:>16.3f} {:>6.1f}% {:>7.3f} {:>7.3f}  {}\n",
                 pair.name, o.runner.n, o.runner.median, 100 * o.runner.cv, o.hand.median,
                 100 * o.hand.cv, o.runner.median / o.hand.median, o.paired,
                 o.runner_valid && o.hand_valid ? "both"
                 : o.runner_valid               ? "HAND-WRITTEN WRONG"
                                                : "RUNNER WRONG");
      failures += !(o.runner_valid && o.hand_valid);
    } catch (const std::exception& e) {
      fmt::print(stderr, "{}: {}\n", pair.name, e.what());
      ++failures;
    }
    std::fflush(stdout);
  }
  return failures ? 1 : 0;
}

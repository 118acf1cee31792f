// Runner against hand-written CUDA, round for round, in one process.
//
// Each pair is an experiment and the program it describes written by hand (hand_written.cu). Three
// sides are set up once and warmed up: the runner, the hand-written program, and a second
// instance of the hand-written program with its own allocations (the control). They then run in
// rounds, in the order A B C, C B A, C B A, A B C, ... so that drift of the machine during the
// bench (pageable copies on these hosts drift by 30% over seconds, with the host's load) falls on
// every side alike. The runner's span is the one `streamlab run` reports (host clock, gate opening
// or first issue to the final synchronize); the hand-written one is the host clock from its first
// call to its final synchronize.
//
// Each round gives two ratios, runner / hand-written and control / hand-written; the figures are
// their medians with a 95% interval. The control says how far apart two identical programs read
// (where their memory sits matters: pageable copies differ by several per cent), which a
// runner's ratio outside 0.99-1.01 is judged against in the verdict column.
// Each pair gets about --seconds of timed rounds (at least 20), so the noisy short pairs (a
// pageable N=1024 repetition varies by 15%) get hundreds.
//   usage: compare [--timer none|events|cupti] [--no-gate] [--no-control] [--runs K]
//                  [--seconds S] [--only NAME] [--calls] [--experiments DIR]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "bench/compare_verdict.hpp"
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
  all.push_back({"pipeline 4 streams",
                 "bench/pipeline_four_streams.yaml",
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
  bench::Ratio
      paired;  // runner / hand-written, round by round: what drift between rounds cannot move
  bench::Ratio control;  // control / hand-written, the same way; NaN without a control
  bool runner_valid = false, hand_valid = false;
  // Per call (op), the median over the rounds of when it returned, runner and hand-written, and
  // of each round's own difference (runner - hand-written): which call the two spans part at.
  std::vector<double> runner_calls{}, hand_calls{}, call_differences{};
};

struct Settings {
  std::string dir = "experiments";
  streamlab::TimerChoice timer = streamlab::TimerChoice::none;
  bool gate = true, control = true, calls = false;
  double seconds = 10;
};

// One side of a pair: a repetition timed on the host, and whether its results were right.
struct Side {
  std::function<double()> repetition;
  std::function<bool()> valid;
  // When each call of the last repetition returned, ms from where the side's span starts.
  std::function<std::vector<double>()> call_returns;
};

Side runner_side(const Pair& pair, const Settings& set) {
  streamlab::LoadOptions options;
  options.overrides = pair.params;
  // One owner for both, the experiment declared first: the backend refers to it until the
  // backend is destroyed, and members go in the reverse order (a lambda's captures have none).
  struct Runner {
    streamlab::Experiment exp;
    std::unique_ptr<streamlab::Backend> backend;
    streamlab::RepetitionSample last;  // for --calls
  };
  auto runner = std::make_shared<Runner>();
  runner->exp = streamlab::load_file(set.dir + "/" + pair.file, options);
  runner->backend =
      streamlab::make_cuda_backend(runner->exp, 0, {.timer = set.timer, .gate = set.gate});
  runner->backend->prepare();
  return {[runner] {
            runner->last = runner->backend->run_repetition();
            return runner->last.host_span_ms;
          },
          [runner] {
            auto checks = streamlab::run_checks(
                runner->exp, [&](int b) { return runner->backend->contents(b); }, true);
            return std::all_of(checks.begin(), checks.end(), [](auto& c) { return c.passed; });
          },
          [runner] {
            // From where the span starts, as the hand-written program's: the gate's opening,
            // where there is one, so the calls issued before it read negative.
            const auto& rep = runner->last;
            const double start = std::isnan(rep.gate_open_ms) ? 0 : rep.gate_open_ms;
            std::vector<double> returns;
            for (const auto& op : rep.ops) returns.push_back(op.return_ms - start);
            return returns;
          }};
}

Side hand_side(const Pair& pair, bool record_calls) {
  std::shared_ptr<bench::HandWritten> hand = pair.hand_written();
  hand->record_calls(record_calls);
  return {[hand] { return time_ms([&] { hand->repetition(); }); }, [hand] { return hand->valid(); },
          [hand] { return hand->call_returns_ms(); }};
}

// Per call, the median over the rounds of f(round, call); a side records the same calls every
// round, so every round has every call.
template <class F>
std::vector<double> per_call_medians(size_t rounds, size_t calls, F f) {
  std::vector<double> out;
  for (size_t c = 0; c < calls; ++c) {
    std::vector<double> at;
    for (size_t i = 0; i < rounds; ++i) at.push_back(f(i, c));
    out.push_back(streamlab::summarize(at).median);
  }
  return out;
}

// runner / hand-written[round][call] -> the Outcome's per-call medians, where the two sides
// recorded the same number of calls in every round; left empty otherwise.
void set_call_medians(const std::vector<std::vector<double>>& runner,
                      const std::vector<std::vector<double>>& hand, Outcome& out) {
  if (runner.empty() || hand.size() != runner.size()) return;
  const size_t calls = runner[0].size();
  for (size_t i = 0; i < runner.size(); ++i)
    if (runner[i].size() != calls || hand[i].size() != calls) return;
  out.runner_calls =
      per_call_medians(runner.size(), calls, [&](size_t i, size_t c) { return runner[i][c]; });
  out.hand_calls =
      per_call_medians(hand.size(), calls, [&](size_t i, size_t c) { return hand[i][c]; });
  out.call_differences = per_call_medians(
      runner.size(), calls, [&](size_t i, size_t c) { return runner[i][c] - hand[i][c]; });
}

Outcome compare(const Pair& pair, const Settings& set) {
  // The control records its calls as the hand-written side does, so the two stay alike.
  std::vector<Side> sides = {runner_side(pair, set), hand_side(pair, set.calls)};
  if (set.control) sides.push_back(hand_side(pair, set.calls));
  double round_ms = 0;
  for (int i = 0; i < 3; ++i) {  // warm-up, as the experiments' own
    round_ms = 0;
    for (auto& side : sides) round_ms += side.repetition();
  }
  const int rounds = std::clamp(static_cast<int>(set.seconds * 1000 / round_ms), 20, 5000);
  std::vector<std::vector<double>> ms(sides.size());
  std::vector<std::vector<std::vector<double>>> calls(2);  // [side][round][call]
  for (int i = 0; i < rounds; ++i) {
    const bool forward = (i + 1) / 2 % 2 == 0;  // a linear drift cancels in each pair of rounds
    for (size_t k = 0; k < sides.size(); ++k) {
      const size_t side = forward ? k : sides.size() - 1 - k;
      ms[side].push_back(sides[side].repetition());
      if (set.calls && side < 2) calls[side].push_back(sides[side].call_returns());
    }
  }
  auto ratios = [&](size_t side) {
    std::vector<double> r;
    for (int i = 0; i < rounds; ++i) r.push_back(ms[side][i] / ms[1][i]);
    return bench::ratio_of(r);
  };
  Outcome out{streamlab::summarize(ms[0]), streamlab::summarize(ms[1]), ratios(0),
              set.control ? ratios(2) : bench::Ratio{}};
  if (set.calls) set_call_medians(calls[0], calls[1], out);
  out.runner_valid = sides[0].valid();
  out.hand_valid = sides[1].valid() && (!set.control || sides[2].valid());
  return out;
}

void print_calls(const Outcome& o) {
  if (o.runner_calls.empty()) {
    fmt::print(
        "  calls: not set side by side (this pair's hand-written program does not record its "
        "calls, or records other calls than the experiment's ops)\n");
    return;
  }
  for (size_t c = 0; c < o.runner_calls.size(); ++c)
    fmt::print(
        "  call {} returned at: runner {:.4f} ms, hand-written {:.4f} ms; paired difference "
        "{:+.4f} ms\n",
        c + 1, o.runner_calls[c], o.hand_calls[c], o.call_differences[c]);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"streamlab against hand-written CUDA, round for round in one process"};
  Settings set;
  std::string timer_name = "none", only;
  app.add_option("--timer", timer_name, "The runner's device timer")
      ->check(CLI::IsMember({"none", "events", "cupti"}));
  app.add_option("--seconds", set.seconds,
                 "Timed seconds per pair, all sides together (at least 20 rounds)")
      ->check(CLI::Range(0.0, 3600.0));
  app.add_option("--only", only, "Run the pairs whose name contains this");
  bool no_gate = false, no_control = false;
  app.add_flag(
      "--no-gate", no_gate,
      "The runner without its start gate, as `run --no-gate`: what the gate itself costs or hides");
  app.add_flag(
      "--no-control", no_control,
      "Leave out the control (a second hand-written instance): two sides, a third less time");
  int runs = 1;
  app.add_option("--runs", runs,
                 "Set each pair up this many times afresh (new allocations), a line each")
      ->check(CLI::Range(1, 100));
  app.add_option("--experiments", set.dir, "Directory of the experiments");
  app.add_flag(
      "--calls", set.calls,
      "Under each pair whose hand-written program records it: when each call returned, "
      "runner and hand-written medians and each round's own difference, so a gap between the "
      "spans has a call to go with");
  CLI11_PARSE(app, argc, argv);
  set.timer = timer_name == "none"     ? streamlab::TimerChoice::none
              : timer_name == "events" ? streamlab::TimerChoice::events
                                       : streamlab::TimerChoice::cupti;
  set.gate = !no_gate;
  set.control = !no_control;

  fmt::print(
      "runner (timer {}{}) vs hand-written: median host spans over interleaved rounds, about {} s "
      "a pair;\n"
      "ratio: runner median / hand-written median; paired: median of each round's own ratio "
      "[95% interval]; control: a second hand-written instance's, the same way\n",
      timer_name, no_gate ? ", no start gate" : "", set.seconds);
  fmt::print("{:<22} {:>6} {:>10} {:>6} {:>10} {:>6} {:>6}  {:<22} {:<22} {:<13} {}\n", "pair",
             "rounds", "runner ms", "cv", "hand ms", "cv", "ratio", "paired", "control", "verdict",
             "valid");
  auto show = [](const bench::Ratio& r) {
    return std::isnan(r.median) ? std::string("-")
                                : fmt::format("{:.3f} [{:.3f}, {:.3f}]", r.median, r.low, r.high);
  };
  int failures = 0;
  for (const auto& pair : pairs()) {
    if (pair.name.find(only) == std::string::npos) continue;
    for (int run = 0; run < runs; ++run) {
      try {
        auto o = compare(pair, set);
        fmt::print(
            "{:<22} {:>6} {:>10.3f} {:>5.1f}% {:>10.3f} {:>5.1f}% {:>6.3f}  {:<22} {:<22} {:<13} "
            "{}\n",
            pair.name, o.runner.n, o.runner.median, 100 * o.runner.cv, o.hand.median,
            100 * o.hand.cv, o.runner.median / o.hand.median, show(o.paired), show(o.control),
            bench::verdict(o.paired, o.control),
            o.runner_valid && o.hand_valid ? "both"
            : o.runner_valid               ? "HAND-WRITTEN WRONG"
                                           : "RUNNER WRONG");
        if (set.calls) print_calls(o);
        failures += !(o.runner_valid && o.hand_valid);
      } catch (const std::exception& e) {
        fmt::print(stderr, "{}: {}\n", pair.name, e.what());
        ++failures;
      }
      std::fflush(stdout);
    }
  }
  return failures ? 1 : 0;
}

// How long `streamlab check` takes on a large experiment: a generated one of 16 streams and
// 10,000 ops (kernels and copies on element ranges of 32 buffers, events recorded and waited for
// across streams, now and then a synchronize), loaded from YAML text and analyzed, as the
// command does. The goal: under 100 ms on the 2-core development machine. It also times 2,500 to
// 40,000 ops, to show the cost grows linearly with the op count.
//   usage: check_speed [--ops N] [--streams S] [--rounds R] [--emit loops|spelled]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "runner/analyze/analyze.hpp"
#include "runner/load/load.hpp"

namespace {

constexpr int kBuffers = 32, kEvents = 32, kChunk = 4096, kChunks = 16;

// The same kind of mix written with loops, as a user writes a long experiment: per iteration and
// stream, a kernel on a chunk, a kernel reading two chunks into a third, a copy between chunks of
// two buffers, an event recorded, and the stream two further on waiting for it: two chains of
// streams (even and odd), unordered with each other, so some accesses race. `ops` is rounded down
// to a whole number of iterations.
std::string generate_loops(int ops, int streams) {
  std::string y = fmt::format(
      "name: generated-loops\nparams: {{S: {}}}\nstreams: {{s: {{array: S}}}}\nevents: {{e: "
      "{{array: S, flags: disable-timing}}}}\nbuffers:\n  b: {{array: {}, type: float32, count: "
      "{}, memory: device}}\nops:\n",
      streams, kBuffers, kChunk * kChunks);
  auto chunk = [](const char* buffer, const char* at) {
    return fmt::format("{{buffer: 'b[{}]', offset: (({}) % {}) * {}, count: {}}}", buffer, at,
                       kChunks, kChunk, kChunk);
  };
  y += fmt::format("  - loop:\n      var: i\n      count: {}\n      ops:\n", ops / (5 * streams));
  y += "        - loop:\n            var: k\n            count: S\n            ops:\n";
  const std::string in = "              - ";
  y += in + fmt::format(
                "launch: {{kernel: scale, grid: 16, block: 256, stream: 's[k]', args: {{x: {}, "
                "factor: 2}}}}\n",
                chunk("(i + k) % 32", "i * 5 + k"));
  y += in + fmt::format(
                "launch: {{kernel: vector_add, grid: 16, block: 256, stream: 's[k]', args: {{a: "
                "{}, b: {}, "
                "out: {}}}}}\n",
                chunk("(i + 2 * k) % 32", "i + k"), chunk("(3 * i + k) % 32", "i * 7"),
                chunk("(i + k + 5) % 32", "i * 3 + k"));
  y += in + fmt::format("memcpyAsync: {{dst: {}, src: {}, stream: 's[k]'}}\n",
                        chunk("(i + k + 9) % 32", "i + 2 * k"),
                        chunk("(i + k + 17) % 32", "i * 11 + k"));
  y += in + "eventRecord: {event: 'e[k]', stream: 's[k]'}\n";
  y += in + "streamWaitEvent: {stream: 's[(k + 2) % S]', event: 'e[k]'}\n";
  return y;
}

// A deterministic mix, as a course's largest lab might write it (and much longer), every op
// spelled out.
std::string generate(int ops, int streams) {
  std::string y = fmt::format("name: generated\nstreams: {{s: {{array: {}}}}}\nevents:\n", streams);
  for (int e = 0; e < kEvents; ++e) y += fmt::format("  e{}: {{flags: disable-timing}}\n", e);
  y += "buffers:\n";
  for (int b = 0; b < kBuffers; ++b)
    y += fmt::format("  b{}: {{type: float32, count: {}, memory: device}}\n", b, kChunk * kChunks);
  y += "  h: {type: float32, count: 65536, memory: pinned}\nops:\n";
  uint64_t state = 12345;
  auto next = [&](uint64_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int>((state >> 33) % n);
  };
  auto range = [&](int b) {
    return fmt::format("{{buffer: b{}, offset: {}, count: {}}}", b, next(kChunks) * kChunk, kChunk);
  };
  for (int i = 0; i < ops; ++i) {
    int s = next(streams), pick = next(100);
    std::string stream = fmt::format("'s[{}]'", s);
    if (pick < 50)
      y += fmt::format(
          "  - launch: {{kernel: scale, grid: 16, block: 256, stream: {}, args: {{x: {}, factor: "
          "2}}}}\n",
          stream, range(next(kBuffers)));
    else if (pick < 65)
      y += fmt::format(
          "  - launch: {{kernel: vector_add, grid: 16, block: 256, stream: {}, args: {{a: {}, b: "
          "{}, out: {}}}}}\n",
          stream, range(next(kBuffers)), range(next(kBuffers)), range(next(kBuffers)));
    else if (pick < 78) {
      int dst = next(kBuffers),
          src = (dst + 1 + next(kBuffers - 1)) % kBuffers;  // never the same buffer
      y += fmt::format("  - memcpyAsync: {{dst: {}, src: {}, stream: {}}}\n", range(dst),
                       range(src), stream);
    } else if (pick < 88)
      y += fmt::format("  - eventRecord: {{event: e{}, stream: {}}}\n", next(kEvents), stream);
    else if (pick < 98)
      y += fmt::format("  - streamWaitEvent: {{stream: {}, event: e{}}}\n", stream, next(kEvents));
    else if (pick < 99)
      y += fmt::format("  - streamSynchronize: {{stream: {}}}\n", stream);
    else
      y += "  - deviceSynchronize: {}\n";
  }
  return y;
}

using Clock = std::chrono::steady_clock;
double ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

struct Timing {
  double load = 0, analyze = 0, format = 0;
  size_t findings = 0;
  double total() const { return load + analyze + format; }
};

// The median round of `rounds`, by total.
Timing time_check(const std::string& yaml, int rounds) {
  std::vector<Timing> all;
  for (int r = 0; r < rounds; ++r) {
    Timing t;
    auto t0 = Clock::now();
    streamlab::Experiment exp = streamlab::load_string(yaml, "generated.yaml");
    auto t1 = Clock::now();
    streamlab::Findings findings = streamlab::analyze(exp);
    auto t2 = Clock::now();
    std::string text = streamlab::format_findings(findings, exp.source);
    auto t3 = Clock::now();
    t = {ms(t0, t1), ms(t1, t2), ms(t2, t3), findings.items().size()};
    all.push_back(t);
  }
  std::sort(all.begin(), all.end(),
            [](const Timing& a, const Timing& b) { return a.total() < b.total(); });
  return all[all.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Times streamlab check (load + analyze + format) on a generated experiment"};
  int ops = 10'000, streams = 16, rounds = 7;
  app.add_option("--ops", ops, "Ops in the generated experiment")->check(CLI::PositiveNumber);
  app.add_option("--streams", streams, "Streams")->check(CLI::Range(1, 64));
  app.add_option("--rounds", rounds, "Rounds; the median is reported")->check(CLI::PositiveNumber);
  std::string emit;
  app.add_option("--emit", emit,
                 "Print the generated experiment (loops or spelled) instead of timing")
      ->check(CLI::IsMember({"loops", "spelled"}));
  CLI11_PARSE(app, argc, argv);
  if (!emit.empty()) {
    fmt::print("{}", emit == "loops" ? generate_loops(ops, streams) : generate(ops, streams));
    return 0;
  }

  Timing loops, spelled;
  try {
    using Generator = std::string (*)(int, int);
    for (auto [form, generator] : {std::pair<const char*, Generator>{"loops", generate_loops},
                                   std::pair<const char*, Generator>{"spelled out", generate}}) {
      fmt::print("\n{}:\n{:>7} {:>7} {:>9} {:>10} {:>9} {:>9} {:>10} {:>9}\n", form, "ops",
                 "streams", "load ms", "analyze ms", "format ms", "total ms", "us per op",
                 "findings");
      for (int n : {ops / 4, ops / 2, ops, ops * 2, ops * 4}) {
        Timing t = time_check(generator(n, streams), rounds);
        if (n == ops) (generator == generate ? spelled : loops) = t;
        fmt::print("{:>7} {:>7} {:>9.2f} {:>10.2f} {:>9.2f} {:>9.2f} {:>10.2f} {:>9}\n", n, streams,
                   t.load, t.analyze, t.format, t.total(), 1000 * t.total() / n, t.findings);
      }
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "check_speed: {}", std::string(e.what()).substr(0, 2000));
    return 2;
  }
  // The analysis is this cost; loading is yaml-cpp's parse plus streamlab's reading.
  fmt::print(
      "\n{} ops on {} streams: analysis {:.1f} ms ({:.2f} of the 100 ms goal); whole check {:.1f} "
      "ms with "
      "loops ({:.2f}), {:.1f} ms spelled out ({:.2f}, of which load {:.1f} ms)\n",
      ops, streams, spelled.analyze, spelled.analyze / 100, loops.total(), loops.total() / 100,
      spelled.total(), spelled.total() / 100, spelled.load);
  return spelled.analyze < 100 && loops.total() < 100 ? 0 : 1;
}

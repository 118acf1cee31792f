// runner/cli/run_support: the progress line a terminal shows, fed a clock and a string instead of
// the steady clock and stderr.
#include <doctest/doctest.h>

#include "runner/cli/run_support.hpp"

using namespace streamlab;
using namespace std::chrono_literals;

namespace {

struct Captured {
  std::string out;
  ProgressLine line;
  explicit Captured(bool terminal, int width = 200)
      : line(
            terminal, [this](std::string_view s) { out += s; }, width) {}
};

void in_repetition(RunProgress& p, RunProgress::Phase phase, int64_t repetition, int64_t of) {
  p.phase = phase;
  p.repetition = repetition;
  p.of = of;
}

}  // namespace

TEST_CASE("progress line: a repetition shows what it does once it has run 2 s, once per tick") {
  Captured c(true);
  RunProgress p;
  in_repetition(p, RunProgress::timed, 3, 20);
  auto t0 = ProgressLine::Clock::now();
  c.line.tick(p, nullptr, t0);  // the repetition is first seen here
  c.line.tick(p, nullptr, t0 + 1s);
  CHECK(c.out.empty());
  c.line.tick(p, nullptr, t0 + 2s);
  CHECK(c.out == "\rstreamlab: timed repetition 3 of 20, 2 s\033[K");
  c.out.clear();
  in_repetition(p, RunProgress::timed, 4, 20);  // the next one counts from its own start
  c.line.tick(p, nullptr, t0 + 3s);
  CHECK(c.out.empty());
  c.line.tick(p, nullptr, t0 + 5s);
  CHECK(c.out == "\rstreamlab: timed repetition 4 of 20, 2 s\033[K");
  c.out.clear();
  in_repetition(p, RunProgress::checking, 0, 0);  // outside the repetitions: nothing
  c.line.tick(p, nullptr, t0 + 9s);
  CHECK(c.out.empty());
  c.line.finish();  // clears the line it left
  CHECK(c.out == "\r\033[K");
  c.out.clear();
  in_repetition(p, RunProgress::warmup, 1, 2);
  c.line.tick(p, nullptr, t0 + 20s);
  c.line.tick(p, nullptr, t0 + 30s);
  c.line.between(1, 2, t0 + 30s);
  CHECK(c.out.empty());  // finished: nothing more
}

TEST_CASE("progress line: between repetitions after a second, cut to the terminal, none off one") {
  Captured c(true, 24);
  auto t0 = ProgressLine::Clock::now();
  c.line.between(1, 30, t0);  // the run has not taken a second yet
  CHECK(c.out.empty());
  c.line.between(2, 30, t0 + 2s);
  CHECK(c.out == "\rstreamlab: repetition 2\033[K");  // 23 columns of 24: no wrap
  c.out.clear();
  c.line.between(30, 30, t0 + 3s);  // the last: the line is cleared for the report
  CHECK(c.out == "\rstreamlab: repetition 3\033[K\r\033[K");
  CHECK(c.line.printer());

  Captured pipe(false);
  CHECK_FALSE(pipe.line.printer());
}

TEST_CASE("progress line: a repetition said to be over is not shown again by a late tick") {
  Captured c(true);
  RunProgress p;
  in_repetition(p, RunProgress::timed, 1, 1);
  auto t0 = ProgressLine::Clock::now();
  c.line.tick(p, nullptr, t0);
  c.line.between(1, 1, t0 + 3s);  // the last repetition is over: the line is cleared
  CHECK(c.out == "\rstreamlab: repetition 1 of 1\033[K\r\033[K");
  c.out.clear();
  c.line.tick(p, nullptr, t0 + 4s);  // read before the run entered its checks
  CHECK(c.out.empty());
  in_repetition(p, RunProgress::checking, 0, 0);
  c.line.tick(p, nullptr, t0 + 5s);
  in_repetition(p, RunProgress::timed, 1, 1);  // the next run's repetition 1 is a new one
  c.line.tick(p, nullptr, t0 + 6s);
  c.line.tick(p, nullptr, t0 + 7s);
  CHECK(c.out.empty());
  c.line.tick(p, nullptr, t0 + 8s);
  CHECK(c.out == "\rstreamlab: timed repetition 1 of 1, 2 s\033[K");
}

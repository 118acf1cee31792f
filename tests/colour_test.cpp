// runner/report/colour: when output is coloured, and which words of a line are painted.
#include <doctest/doctest.h>

#include "runner/report/colour.hpp"

using namespace streamlab;

TEST_CASE("colour: auto colours a terminal only, NO_COLOR (non-empty) and TERM=dumb turn it off") {
  CHECK(decide_colour(ColourWhen::automatic, true, nullptr, "xterm"));
  CHECK_FALSE(decide_colour(ColourWhen::automatic, false, nullptr, "xterm"));
  CHECK_FALSE(decide_colour(ColourWhen::automatic, true, "1", "xterm"));
  CHECK(decide_colour(ColourWhen::automatic, true, "", "xterm"));  // empty: as if unset
  CHECK_FALSE(decide_colour(ColourWhen::automatic, true, nullptr, "dumb"));
  CHECK(decide_colour(ColourWhen::always, false, "1", "dumb"));  // the command line overrides
  CHECK_FALSE(decide_colour(ColourWhen::never, true, nullptr, "xterm"));
  CHECK(colour_when("always") == ColourWhen::always);
  CHECK(colour_when("never") == ColourWhen::never);
  CHECK(colour_when("auto") == ColourWhen::automatic);
}

TEST_CASE("colour: verdict words and severities are painted, nothing else") {
  struct Case {
    const char* line;
    const char* painted;
  };
  const Case cases[] = {
      {"  PASS  transpose(a -> b)", "  \033[32mPASS\033[0m  transpose(a -> b)"},
      {"  FAIL  value(x)", "  \033[1;31mFAIL\033[0m  value(x)"},
      {"  ----  host_time(h) < 1", "  \033[33m----\033[0m  host_time(h) < 1"},
      {"verdict: FAILED: 1 check failed", "verdict: \033[1;31mFAILED\033[0m: 1 check failed"},
      {"verdict: passed: every check", "verdict: \033[1;32mpassed\033[0m: every check"},
      {"verdict: INCOMPLETE: x", "verdict: \033[1;33mINCOMPLETE\033[0m: x"},
      {"        not evaluated: no GPU", "        \033[33mnot evaluated\033[0m: no GPU"},
      {"e.yaml:7:5: error: unknown op", "e.yaml:7:5: \033[1;31merror:\033[0m unknown op"},
      {"e.yaml:3:1: warning: w", "e.yaml:3:1: \033[1;35mwarning:\033[0m w"},
      // The first severity of the line, not a later one in the message.
      {"streamlab: note: a note: error: b", "streamlab: \033[1;36mnote:\033[0m a note: error: b"},
      // A quoted source line, a summary and an empty line stay as they are.
      {"    7 |   x: error: y", "    7 |   x: error: y"},
      {"2 of 2 checks passed", "2 of 2 checks passed"},
      {"", ""},
  };
  for (const Case& c : cases) {
    INFO(c.line);
    CHECK(paint_line(c.line) == c.painted);
  }
}

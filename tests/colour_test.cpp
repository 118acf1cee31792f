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
  CHECK(paint_line("  PASS  transpose(a -> b)") == "  \033[32mPASS\033[0m  transpose(a -> b)");
  CHECK(paint_line("  FAIL  value(x)") == "  \033[1;31mFAIL\033[0m  value(x)");
  CHECK(paint_line("  ----  host_time(h) < 1") == "  \033[33m----\033[0m  host_time(h) < 1");
  CHECK(paint_line("verdict: FAILED: 1 check failed") ==
        "verdict: \033[1;31mFAILED\033[0m: 1 check failed");
  CHECK(paint_line("verdict: passed: every check") == "verdict: \033[1;32mpassed\033[0m: every check");
  CHECK(paint_line("verdict: INCOMPLETE: x") == "verdict: \033[1;33mINCOMPLETE\033[0m: x");
  CHECK(paint_line("        not evaluated: no GPU") == "        \033[33mnot evaluated\033[0m: no GPU");
  CHECK(paint_line("e.yaml:7:5: error: unknown op") == "e.yaml:7:5: \033[1;31merror:\033[0m unknown op");
  CHECK(paint_line("e.yaml:3:1: warning: w") == "e.yaml:3:1: \033[1;35mwarning:\033[0m w");
  // The first severity of the line, not a later one in the message.
  CHECK(paint_line("streamlab: note: a note: error: b") ==
        "streamlab: \033[1;36mnote:\033[0m a note: error: b");
  // A quoted source line, a table row and a plain line stay as they are.
  CHECK(paint_line("    7 |   x: error: y") == "    7 |   x: error: y");
  CHECK(paint_line("2 of 2 checks passed") == "2 of 2 checks passed");
  CHECK(paint_line("") == "");
}

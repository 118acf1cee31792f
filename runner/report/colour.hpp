#pragma once
// Colour on terminals: the one place that decides whether stdout and stderr are coloured and what
// is painted. Reports and diagnostics are formatted without colour (they also go into files,
// JSON and autograder outputs); the colour is added to whole lines as they reach a terminal, by
// the streams' buffers, so no escape code can end up anywhere but on a screen.
#include <memory>
#include <streambuf>
#include <string>
#include <string_view>

namespace streamlab {

// --color: auto (a terminal, and no NO_COLOR), always, never.
enum class ColourWhen { automatic, always, never };
ColourWhen colour_when(std::string_view option);  // "auto", "always", "never"

// Whether a stream is coloured: `always` and `never` as they say; `automatic` only on a terminal,
// not when NO_COLOR holds any non-empty value (no-color.org) and not on TERM=dumb.
// `no_color`, `term`: the environment's values, null when unset.
bool decide_colour(ColourWhen when, bool terminal, const char* no_color, const char* term);

// One line of output (without its newline) with its verdict and severity words coloured: the
// tags PASS, FAIL and ---- of checks and expectations, `verdict: passed|FAILED|INCOMPLETE`,
// `not evaluated:`, and the `error:`, `warning:` or `note:` of a diagnostic's first line.
// Source lines quoted under a diagnostic (they start with a space) are left alone.
std::string paint_line(std::string_view line);

// While it lives, std::cout and std::cerr paint each line they write where decide_colour says so
// for their file descriptor; the streams get their own buffers back (flushed) when it ends.
class TerminalColour {
 public:
  explicit TerminalColour(ColourWhen when);
  ~TerminalColour();
  TerminalColour(const TerminalColour&) = delete;
  TerminalColour& operator=(const TerminalColour&) = delete;

 private:
  std::unique_ptr<std::streambuf> out_, err_;
  std::streambuf* old_out_ = nullptr;
  std::streambuf* old_err_ = nullptr;
};

}  // namespace streamlab

#include "runner/report/colour.hpp"

#include <unistd.h>

#include <array>
#include <cstdlib>
#include <iostream>

namespace streamlab {
namespace {

constexpr std::string_view kReset = "\033[0m";

struct Paint {
  std::string_view prefix;  // what the line starts with
  size_t word_at;           // where the painted word starts in it
  std::string_view colour;
};

// The console report's words (runner/report/console.cpp), at the start of their lines.
constexpr std::array kLineStarts = {
    Paint{"  PASS  ", 2, "\033[32m"},          Paint{"  FAIL  ", 2, "\033[1;31m"},
    Paint{"  ----  ", 2, "\033[33m"},          Paint{"verdict: passed", 9, "\033[1;32m"},
    Paint{"verdict: FAILED", 9, "\033[1;31m"}, Paint{"verdict: INCOMPLETE", 9, "\033[1;33m"},
    Paint{"        not evaluated:", 8, "\033[33m"},
};

// A diagnostic's severity, as format_diagnostic and the command line's messages print it
// (`file:line:col: error: ...`, `streamlab: note: ...`), in the colours compilers use.
constexpr std::array kSeverities = {
    Paint{": error:", 2, "\033[1;31m"},
    Paint{": warning:", 2, "\033[1;35m"},
    Paint{": note:", 2, "\033[1;36m"},
};

std::string painted(std::string_view line, size_t at, size_t length, std::string_view colour) {
  std::string out(line.substr(0, at));
  out.append(colour).append(line.substr(at, length)).append(kReset);
  out.append(line.substr(at + length));
  return out;
}

// The word of a Paint: from word_at to the end of the prefix, without a trailing colon or space.
size_t word_length(const Paint& p) {
  std::string_view word = p.prefix.substr(p.word_at);
  while (!word.empty() && (word.back() == ' ' || word.back() == ':')) word.remove_suffix(1);
  return word.size();
}

// A stream buffer that hands each finished line to paint_line() on its way to `target`. A flush
// in the middle of a line (std::cerr flushes after every <<, progress rewrites its line with \r)
// writes what it has, painted as a line start if it is one; the rest of that line goes unpainted.
class PaintingBuffer : public std::streambuf {
 public:
  explicit PaintingBuffer(std::streambuf* target) : target_(target) {}
  ~PaintingBuffer() override { sync(); }

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return sync() == 0 ? 0 : c;
    char ch = traits_type::to_char_type(c);
    xsputn(&ch, 1);
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    for (std::streamsize i = 0; i < n; ++i) {
      if (s[i] != '\n') {
        line_ += s[i];
        continue;
      }
      emit();
      target_->sputc('\n');
      at_line_start_ = true;
    }
    return n;
  }
  int sync() override {
    if (!line_.empty()) {
      emit();
      at_line_start_ = false;
    }
    return target_->pubsync();
  }

 private:
  void emit() {
    std::string text = at_line_start_ ? paint_line(line_) : line_;
    target_->sputn(text.data(), static_cast<std::streamsize>(text.size()));
    line_.clear();
  }
  std::streambuf* target_;
  std::string line_;
  bool at_line_start_ = true;
};

std::unique_ptr<std::streambuf> painting(std::ostream& stream, int fd, ColourWhen when) {
  if (!decide_colour(when, ::isatty(fd) == 1, std::getenv("NO_COLOR"), std::getenv("TERM")))
    return nullptr;
  return std::make_unique<PaintingBuffer>(stream.rdbuf());
}

}  // namespace

ColourWhen colour_when(std::string_view option) {
  if (option == "always") return ColourWhen::always;
  if (option == "never") return ColourWhen::never;
  return ColourWhen::automatic;
}

bool decide_colour(ColourWhen when, bool terminal, const char* no_color, const char* term) {
  if (when != ColourWhen::automatic) return when == ColourWhen::always;
  if (no_color && *no_color) return false;
  if (term && std::string_view(term) == "dumb") return false;
  return terminal;
}

std::string paint_line(std::string_view line) {
  for (const Paint& p : kLineStarts)
    if (line.starts_with(p.prefix)) return painted(line, p.word_at, word_length(p), p.colour);
  if (line.empty() || line.front() == ' ') return std::string(line);
  const Paint* first = nullptr;  // the severity that comes first in the line
  size_t first_at = std::string_view::npos;
  for (const Paint& p : kSeverities)
    if (size_t at = line.find(p.prefix); at < first_at) first = &p, first_at = at;
  if (!first) return std::string(line);
  return painted(line, first_at + first->word_at, word_length(*first) + 1, first->colour);  // with its ':'
}

TerminalColour::TerminalColour(ColourWhen when)
    : out_(painting(std::cout, STDOUT_FILENO, when)), err_(painting(std::cerr, STDERR_FILENO, when)) {
  if (out_) old_out_ = std::cout.rdbuf(out_.get());
  if (err_) old_err_ = std::cerr.rdbuf(err_.get());
}

TerminalColour::~TerminalColour() {
  if (out_) {
    std::cout.flush();
    std::cout.rdbuf(old_out_);
  }
  if (err_) {
    std::cerr.flush();
    std::cerr.rdbuf(old_err_);
  }
}

}  // namespace streamlab

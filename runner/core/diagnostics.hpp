#pragma once
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/source_loc.hpp"

namespace streamlab {

enum class Severity { error, warning, note };

// "error", "warning", "note": as diagnostics print them.
std::string_view severity_name(Severity s);

struct Diagnostic {
  Severity severity = Severity::error;
  SourceLoc loc;
  std::string message;
};

// Collects every problem of a file, so the user sees all of them at once (like a compiler),
// rather than one per run.
class Diagnostics {
 public:
  // At most this many are kept, as a compiler stops after so many errors: a file that repeats
  // one mistake ten thousand times must not cost ten thousand messages.
  static constexpr size_t kMost = 100;

  void error(const SourceLoc& loc, std::string message);
  void note(const SourceLoc& loc, std::string message);
  bool has_errors() const { return has_errors_; }
  // Whether no more are kept: callers may skip building a message then.
  bool full() const { return items_.size() >= kMost; }
  size_t dropped() const { return dropped_; }
  size_t count() const { return items_.size() + dropped_; }  // every problem reported, kept or not
  const std::vector<Diagnostic>& items() const { return items_; }

 private:
  void add(Diagnostic d);
  std::vector<Diagnostic> items_;
  size_t dropped_ = 0;
  bool has_errors_ = false;
};

// The lines of a source text, indexed once: printing many diagnostics of a long file must not
// scan it from the top for each.
class SourceLines {
 public:
  explicit SourceLines(std::string_view source);
  std::string_view line(int number) const;  // 1-based, without its newline; empty when out of range

 private:
  std::string_view source_;
  std::vector<size_t> starts_;
};

// `text` as it may be printed to a terminal: control characters (but tab and line feed), C1
// controls, bidirectional controls and bytes that are not UTF-8 become `\xNN`, so that no user
// text (a name, a source line, a path) can move the cursor, recolour or rewrite what a grader
// reads, or cut a message short.
std::string printable(std::string_view text);

// Decodes the UTF-8 sequence at `s[i]`: its length, 0 when it is malformed (cut short, overlong, a
// surrogate or past U+10FFFF), and its code point in `cp`.
size_t decode_utf8(std::string_view s, size_t i, char32_t& cp);

// Whether `s` starts with the UTF-8 of a bidirectional control (U+061C, U+200E, U+200F, U+202A to
// U+202E, U+2066 to U+2069): invisible, they reorder what a terminal or an editor shows, so that
// the source a grader reads differs from what runs ("Trojan Source").
bool is_bidi_control(std::string_view s);

// `file:line:col: error: message`, then the offending source line and a caret under the column.
// Everything printed goes through printable().
// `source` is the whole text of the file the diagnostic points into (may be empty).
std::string format_diagnostic(const Diagnostic& d, std::string_view source);
std::string format_diagnostic(const Diagnostic& d, const SourceLines& source);
std::string format_diagnostics(const Diagnostics& ds, std::string_view source);

// A command line that cannot work, found before anything runs (an output path that cannot be
// written, an option out of range): exit code 2, like an invalid experiment.
class CommandLineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An input other than an experiment that cannot be used (a results file given to compare): the
// message is `file[:line:col]: error: ...`, exit code 2.
class InvalidInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown by load when an experiment is invalid; carries every diagnostic (exit code 2).
class InvalidExperiment : public std::runtime_error {
 public:
  InvalidExperiment(std::string formatted, Diagnostics ds)
      : std::runtime_error(std::move(formatted)), diagnostics(std::move(ds)) {}
  Diagnostics diagnostics;
};

}  // namespace streamlab

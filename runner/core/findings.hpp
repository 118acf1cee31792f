#pragma once
// What `streamlab check` finds in an experiment before it runs: races, lifetime errors and
// synchronization pitfalls (runner/analyze/analyze.cpp), each with a stable code users can
// acknowledge with `allow: [code]` on an op or a check.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/diagnostics.hpp"

namespace streamlab {

struct FindingKind {
  std::string_view code;
  Severity severity;
  std::string_view meaning;  // one line, for `streamlab list` and docs/check.md
};
std::span<const FindingKind> finding_kinds();
const FindingKind* find_finding_code(std::string_view code);

// A place a finding points at besides its own, with what happens there.
struct Related {
  SourceLoc loc;
  std::string message;
};

// One change to the experiment's text that a fix makes, as `streamlab check` prints it and a
// tool (or a test) applies it. Lines are 1-based lines of the file; an "item" is the list item
// (`- KIND: {...}`, with its continuation lines) that starts on that line.
struct Edit {
  enum class Kind {
    insert_after,   // `text` as a list item after the item at `line`, at its indentation
    insert_before,  // `text` as a list item before the item at `line`
    append_op,      // `text` as the last item of the top-level `ops:` list
    remove,         // the item at `line`
    replace,        // the first `old` on `line` by `text`
    declare,        // `text` as an entry of the top-level mapping `section` (made if missing)
  };
  Kind kind = Kind::insert_after;
  int line = 0;
  std::string section;  // declare, replace: the top-level section of the line ("buffers")
  std::string old;      // replace
  std::string text;     // YAML, one line: "- eventRecord: {event: e, stream: s1}", "e: {}"
  std::string where;    // for people: "after line 15", "in place of line 30"

  static Edit after(int line, std::string text, std::string where) {
    return {Kind::insert_after, line, "", "", std::move(text), std::move(where)};
  }
  static Edit before(int line, std::string text, std::string where) {
    return {Kind::insert_before, line, "", "", std::move(text), std::move(where)};
  }
  static Edit append(std::string text, std::string where) {
    return {Kind::append_op, 0, "", "", std::move(text), std::move(where)};
  }
  static Edit removal(int line, std::string where) {
    return {Kind::remove, line, "", "", "", std::move(where)};
  }
  static Edit replacing(std::string section, int line, std::string old, std::string text,
                        std::string where) {
    return {Kind::replace,   line, std::move(section), std::move(old), std::move(text),
            std::move(where)};
  }
  static Edit declaring(std::string section, std::string text) {
    return {Kind::declare, 0, std::move(section), "", std::move(text), ""};
  }
};

struct Finding {
  Severity severity = Severity::error;
  std::string code;
  SourceLoc loc;
  std::string message;
  std::vector<Related> related;  // printed as notes after the finding
  // What would remove it: a sentence, and the edits that make the change (none when there is no
  // single mechanical fix; the sentence then says what to do).
  std::string fix;
  std::vector<Edit> edits;
  std::vector<int> ops;     // the ops involved (an `allow` on any of them acknowledges it)
  std::vector<int> checks;  // the checks involved
  int buffer = -1;          // the buffer a memory finding is about
  int repeats = 1;          // how many expanded ops (loop iterations) gave this same finding
  bool acknowledged = false;
};

class Findings {
 public:
  // `code` must be one of finding_kinds(); the severity comes from there.
  Finding& add(std::string_view code, const SourceLoc& loc, std::string message);
  std::vector<Finding>& items() { return items_; }
  const std::vector<Finding>& items() const { return items_; }

 private:
  std::vector<Finding> items_;
};

}  // namespace streamlab

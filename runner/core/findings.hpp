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

struct Finding {
  Severity severity = Severity::error;
  std::string code;
  SourceLoc loc;
  std::string message;
  std::vector<Related> related;  // printed as notes after the finding
  std::string fix;               // YAML that would remove it; empty when there is no single fix
  std::vector<int> ops;          // the ops involved (an `allow` on any of them acknowledges it)
  std::vector<int> checks;       // the checks involved
  int buffer = -1;               // the buffer a memory finding is about
  int repeats = 1;               // how many expanded ops (loop iterations) gave this same finding
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

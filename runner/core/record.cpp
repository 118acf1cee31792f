#include "runner/core/record.hpp"

namespace streamlab {

bool RunRecord::checks_passed() const {
  for (const auto& c : checks)
    if (c.evaluated && !c.passed) return false;
  return true;
}

bool RunRecord::expectations_held() const {
  for (const auto& e : expectations)
    if (e.status == ExpectationResult::Status::failed ||
        e.status == ExpectationResult::Status::partial)
      return false;
  return true;
}

Verdict RunRecord::verdict() const {
  // A time below the device's floor was not measured as it says: nothing timed can pass.
  if (!checks_passed() || !expectations_held() || !impossible.empty()) return Verdict::failed;
  for (const auto& c : checks)
    if (!c.evaluated) return Verdict::incomplete;
  for (const auto& e : expectations)
    if (e.status == ExpectationResult::Status::not_evaluated) return Verdict::incomplete;
  return Verdict::passed;
}

std::string_view status_name(ScoredItem::Status s) {
  switch (s) {
    case ScoredItem::Status::passed:
      return "passed";
    case ScoredItem::Status::partial:
      return "partial";
    case ScoredItem::Status::failed:
      return "failed";
    case ScoredItem::Status::not_evaluated:
      return "not_evaluated";
  }
  return "?";
}

}  // namespace streamlab

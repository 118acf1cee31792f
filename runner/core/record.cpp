#include "runner/core/record.hpp"

namespace streamlab {

bool RunRecord::checks_passed() const {
  for (const auto& c : checks)
    if (c.evaluated && !c.passed) return false;
  return true;
}

bool RunRecord::expectations_held() const {
  for (const auto& e : expectations)
    if (e.status == ExpectationResult::Status::failed) return false;
  return true;
}

}  // namespace streamlab

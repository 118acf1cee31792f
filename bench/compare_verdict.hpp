#pragma once
// bench/compare's figures and verdict for one pair, apart from the timing so that tests can reach
// them: the median of the rounds' ratios with its 95% interval, and what it says against the
// 1 +- 1% goal and the control.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "runner/core/stats.hpp"

namespace bench {

// A ratio's median over the rounds, and its 95% interval.
struct Ratio {
  double median = NAN, low = NAN, high = NAN;
};

// The interval is distribution-free: the order statistics that a sign test puts around the
// median (normal approximation of the binomial with its continuity correction; the bench takes at
// least 20 rounds). Its exact coverage is at least 95% for every n from 20 to 1200; without the
// correction's 1 it fell below 95% for 580 of them.
inline Ratio ratio_of(std::vector<double> x) {
  if (x.empty()) return {};
  std::sort(x.begin(), x.end());
  const double n = static_cast<double>(x.size());
  const auto k =  // 0-based
      static_cast<size_t>(std::max(0.0, std::floor((n - 1 - 1.96 * std::sqrt(n)) / 2)));
  return {streamlab::summarize(x).median, x[k], x[x.size() - 1 - k]};
}

inline constexpr double kBand = 0.01;  // the goal: the runner within 1% of the hand-written program

// "within": the paired ratio is inside 1 +- kBand. "as control": outside it, but its interval
// meets the control's, or the control's inverted: the control's two sides run the same code, and
// which of them is "the hand-written program" is an arbitrary choice, so a control at 1.015 says
// as much as one at 1/1.015. The runner then reads as a second copy of the hand-written program
// does, and the distance is where memory sits, not what the runner does. "unresolved": its
// interval reaches into the band; more rounds (--seconds) would tell. Otherwise the runner is
// slower or faster, by the measured amount.
inline std::string verdict(const Ratio& r, const Ratio& c) {
  auto meets = [&](double low, double high) { return r.low <= high && low <= r.high; };
  if (std::abs(r.median - 1) <= kBand) return "within";
  if (!std::isnan(c.median) && (meets(c.low, c.high) || meets(1 / c.high, 1 / c.low)))
    return "as control";
  if (r.low <= 1 + kBand && r.high >= 1 - kBand) return "unresolved";
  return r.median > 1 ? "RUNNER SLOWER" : "runner faster";
}

}  // namespace bench

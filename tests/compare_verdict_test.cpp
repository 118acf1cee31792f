// bench/compare's interval and verdict (bench/compare_verdict.hpp): the judgement that says
// whether a runner/hand-written pair is within its goal, on what the rounds measured.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "bench/compare_verdict.hpp"

using bench::Ratio;

namespace {

// P(Binomial(n, 1/2) <= k), exactly enough for n up to a few thousand (log space).
double binomial_cdf_half(int n, int k) {
  double sum = 0;
  for (int i = 0; i <= k; ++i)
    sum += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) -
                    n * std::log(2.0));
  return sum;
}

}  // namespace

TEST_CASE("compare: the median's interval covers it 95% of the time, for every round count") {
  // Rounds 0..n-1 with distinct values: the interval's ends are order statistics, and the true
  // median lies outside them exactly when at most k of the n rounds fall below it (or above).
  for (int n = 20; n <= 1200; ++n) {
    std::vector<double> x(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) x[static_cast<size_t>(i)] = i;
    Ratio r = bench::ratio_of(x);
    const int k = static_cast<int>(r.low);  // the lower end's 0-based rank
    REQUIRE(r.high == n - 1 - k);
    INFO("n = ", n, ", k = ", k);
    CHECK(1 - 2 * binomial_cdf_half(n, k) >= 0.95);
    // and not needlessly wide: one rank narrower would fall short, or nearly
    CHECK(1 - 2 * binomial_cdf_half(n, k + 1) < 0.96);
  }
}

TEST_CASE("compare: verdicts") {
  const Ratio none;
  CHECK(bench::verdict({1.009, 1.008, 1.010}, none) == "within");
  CHECK(bench::verdict({0.991, 0.990, 0.992}, none) == "within");
  CHECK(bench::verdict({1.017, 1.016, 1.018}, none) == "RUNNER SLOWER");
  CHECK(bench::verdict({0.983, 0.982, 0.984}, none) == "runner faster");
  CHECK(bench::verdict({1.020, 0.988, 1.045}, none) == "unresolved");
  // The control's two sides are alike: 1.015 and 1/1.015 say the same, and either excuses a
  // runner as far from 1 on either side.
  const Ratio control{1.015, 1.012, 1.018};
  CHECK(bench::verdict({1.016, 1.014, 1.017}, control) == "as control");
  CHECK(bench::verdict({0.985, 0.983, 0.987}, control) == "as control");
  CHECK(bench::verdict({1.030, 1.028, 1.032}, control) == "RUNNER SLOWER");
  CHECK(bench::verdict({1.017, 1.016, 1.018}, {1.003, 1.002, 1.003}) == "RUNNER SLOWER");
}

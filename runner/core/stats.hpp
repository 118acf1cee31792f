#pragma once
#include <cstddef>
#include <vector>

namespace streamlab {

// Summary of repeated measurements; NaN samples (not measured) are left out.
struct Summary {
  size_t n = 0;
  double median = 0, min = 0, max = 0;
  double cv = 0;  // coefficient of variation: standard deviation / mean
};

Summary summarize(std::vector<double> samples);

// The two-sided p-value of the Mann-Whitney U test that `a` and `b` come from one distribution
// (no assumption of normality: timings are skewed, with outliers). Exact for small samples without
// ties (n_a + n_b <= 40), else the normal approximation with the tie correction. NaN samples are
// left out; NaN when either side has fewer than two.
double mann_whitney_p(std::vector<double> a, std::vector<double> b);

}  // namespace streamlab

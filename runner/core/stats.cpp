#include "runner/core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace streamlab {

Summary summarize(std::vector<double> samples) {
  std::erase_if(samples, [](double v) { return std::isnan(v); });
  Summary s;
  s.n = samples.size();
  if (s.n == 0) return s;
  std::sort(samples.begin(), samples.end());
  s.min = samples.front();
  s.max = samples.back();
  s.median = s.n % 2 ? samples[s.n / 2] : (samples[s.n / 2 - 1] + samples[s.n / 2]) / 2;
  double mean = 0, var = 0;
  for (double v : samples) mean += v;
  mean /= static_cast<double>(s.n);
  for (double v : samples) var += (v - mean) * (v - mean);
  var /= static_cast<double>(s.n);
  s.cv = mean != 0 ? std::sqrt(var) / mean : 0;
  return s;
}

namespace {

// P(U <= u) for samples of n and m values without ties: the coefficients of the generating function
// prod_{i=1..n} (1 - q^(m+i)) / (1 - q^i), which counts the orderings giving each U, over C(n+m, n).
double exact_u_cdf(size_t n, size_t m, double u) {
  std::vector<double> count(n * m + 1, 0.0);
  count[0] = 1;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t k = count.size() - 1; k >= m + i; --k) count[k] -= count[k - m - i];  // * (1 - q^(m+i))
    for (size_t k = i; k < count.size(); ++k) count[k] += count[k - i];              // / (1 - q^i)
  }
  double total = 0, below = 0;
  for (size_t k = 0; k < count.size(); ++k) {
    total += count[k];
    if (static_cast<double>(k) <= u + 1e-9) below += count[k];
  }
  return below / total;
}

}  // namespace

double mann_whitney_p(std::vector<double> a, std::vector<double> b) {
  std::erase_if(a, [](double v) { return std::isnan(v); });
  std::erase_if(b, [](double v) { return std::isnan(v); });
  size_t n = a.size(), m = b.size();
  if (n < 2 || m < 2) return NAN;
  std::vector<std::pair<double, int>> all;  // value, side
  for (double v : a) all.emplace_back(v, 0);
  for (double v : b) all.emplace_back(v, 1);
  std::sort(all.begin(), all.end());
  double rank_sum_a = 0, ties = 0;  // ties: sum of t^3 - t over groups of equal values
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    double rank = (static_cast<double>(i + j) + 1) / 2;  // the group's mean rank, from 1
    for (size_t k = i; k < j; ++k)
      if (all[k].second == 0) rank_sum_a += rank;
    double t = static_cast<double>(j - i);
    ties += t * t * t - t;
    i = j;
  }
  double dn = static_cast<double>(n), dm = static_cast<double>(m), total = dn + dm;
  double u = rank_sum_a - dn * (dn + 1) / 2;
  double u_low = std::min(u, dn * dm - u);  // the distribution is symmetric about n*m/2
  if (ties == 0 && n + m <= 40) return std::min(1.0, 2 * exact_u_cdf(n, m, u_low));
  double sigma = std::sqrt(dn * dm / 12 * ((total + 1) - ties / (total * (total - 1))));
  if (sigma == 0) return 1;  // every value equal
  double z = (dn * dm / 2 - u_low - 0.5) / sigma;  // continuity-corrected
  return std::min(1.0, std::erfc(std::max(z, 0.0) / std::sqrt(2.0)));
}

}  // namespace streamlab

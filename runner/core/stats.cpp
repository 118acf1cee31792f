#include "runner/core/stats.hpp"

#include <algorithm>
#include <cmath>

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

}  // namespace streamlab

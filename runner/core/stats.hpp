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

}  // namespace streamlab

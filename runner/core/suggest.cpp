#include "runner/core/suggest.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace streamlab {
namespace {

// Edit distance counting a swap of neighbours as one edit ('rnu' is one typo from 'run'),
// case-insensitive ('Memcpy' for 'memcpy' is still a typo of one).
size_t edit_distance(std::string_view a, std::string_view b) {
  auto same = [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  };
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  constexpr size_t kLongest =
      64;  // a typo of a long word is rare; comparing it costs its length squared
  if (word.size() > kLongest) return "";
  size_t limit = std::max<size_t>(1, word.size() / 3);
  std::string best;
  size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    // Lengths further apart than the limit cannot be within it.
    if (c.size() > word.size() + limit || word.size() > c.size() + limit) continue;
    size_t d = edit_distance(word, c);
    if (d >= std::max(word.size(), c.size())) continue;  // nothing in common: 'M' is no typo of 'K'
    if (d < best_distance) best_distance = d, best = c;
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best = closest_match(word, candidates);
  return best.empty() ? "" : "; did you mean '" + best + "'?";
}

std::string unknown_name(std::string_view kind, std::string_view name,
                         const std::vector<std::string>& names, std::string_view plural) {
  if (names.empty())
    return "unknown " + std::string(kind) + " '" + std::string(name) +
           "' (the experiment declares no " + std::string(plural) + ")";
  return "unknown " + std::string(kind) + " '" + std::string(name) + "'" +
         did_you_mean(name, names) + " (" + std::string(plural) + ": " + join_some(names) + ")";
}

std::string join_some(const std::vector<std::string>& items, size_t most) {
  if (items.size() <= most) return join(items);
  std::vector<std::string> first(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(most));
  return join(first) + fmt::format(", ... ({} in all)", items.size());
}

int index_of(const std::vector<std::string>& names, std::string_view name) {
  auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

}  // namespace streamlab

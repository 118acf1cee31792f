#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace streamlab {

// The candidate closest to `word` by edit distance, if close enough to be a likely typo
// (at most a third of the word's length, at least 1, and not every character); empty otherwise.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// "; did you mean 'x'?" or "" — appended to "unknown ..." messages.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// "a, b, c" for listing what was expected.
std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");

}  // namespace streamlab

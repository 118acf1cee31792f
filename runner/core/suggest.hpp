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

// "unknown stream 's3'; did you mean 's1'? (streams: legacy, s1, s2)", or "... (the experiment
// declares no streams)": how every unresolved name is reported. `plural` labels the list.
std::string unknown_name(std::string_view kind, std::string_view name,
                         const std::vector<std::string>& names, std::string_view plural);

// Position of `name` in `names`, or -1.
int index_of(const std::vector<std::string>& names, std::string_view name);

// "a, b, c" for listing what was expected.
std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");
// The same, for lists that may be long (4096 buffers of an array): the first `most`, then
// ", ... (N in all)", so that a message stays short however many names there are.
std::string join_some(const std::vector<std::string>& items, size_t most = 12);

}  // namespace streamlab

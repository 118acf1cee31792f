#pragma once
// Fixes as edits of the experiment's text: how they name things so that what is printed is valid
// YAML where it goes (quoted names, a loop's variable inside the loop), how they are printed, and
// how they are applied (by a test over the analyzer's corpus, and by whoever wants them done).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/experiment.hpp"
#include "runner/core/findings.hpp"

namespace streamlab {

// `text` as a YAML scalar that reads back as itself inside a flow mapping: plain when it is a
// plain name, else double-quoted ("s[i]").
std::string yaml_scalar(std::string_view text);

// The stream of `op` as a YAML value valid next to the op: its `stream:` as written (the loop's
// `s[i]` inside the loop), else its name.
std::string stream_ref(const Experiment& exp, const Op& op);
// A stream's name as a YAML value valid anywhere.
std::string stream_name_ref(const Experiment& exp, int stream);

// Whether two ops come from one iteration of the same loops (or both from no loop): text inserted
// beside either can use the loops' variables the same way.
bool same_iteration(const Op& a, const Op& b);
// Whether `op` comes from no loop.
inline bool outside_loops(const Op& op) { return !op.loops || op.loops->empty(); }

// Whether the op (or loop) whose key is at `key` is a block list item of its own ("  - KIND:"
// starting its line), which edits can insert beside; an op inside a flow list (`ops: [{...}]`)
// is not.
bool is_block_item(std::string_view source, const SourceLoc& key);

// The text of the list item at `line` after its "- " ("streamSynchronize: {stream: s1}"), when the
// item is written on that one line; nullopt otherwise.
std::optional<std::string> item_text(std::string_view source, int line);

// How a fix is printed under its finding: the sentence, then the YAML of its edits, grouped by
// section, each with where it goes (a replaced line in full, from `source`).
std::string format_fix_text(const Finding& f, std::string_view source);

// The experiment's text with the edits made, or nullopt when its layout does not allow them
// (an item written inside a flow list, a section spread over lines in flow style).
std::optional<std::string> apply_edits(std::string_view source, const std::vector<Edit>& edits);

}  // namespace streamlab

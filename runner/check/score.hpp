#pragma once
// Scoring: every check and expectation of a run as a graded item (ScoredItem), with its points.
// Correctness gates timing: an item that depends on GPU times earns nothing unless every check
// passed. An item that was not evaluated earns nothing, and says why.
#include <vector>

#include "runner/core/experiment.hpp"
#include "runner/core/record.hpp"

namespace streamlab {

// The checks, then the expectations, of a finished run (run.checks and run.expectations are
// filled), each with a title unique within the run.
std::vector<ScoredItem> score_items(const Experiment& exp, const RunRecord& run);

// Correctness gates timing: when a check did not pass, no timing item keeps its points (each
// says why). score_items applies it; so must whoever adds items to a run's.
void gate_timing(std::vector<ScoredItem>& items);

// Every item of `exp` scored nothing for `why`: a submission that was not run (a race) or did not
// finish. `no_diagnostics` items are still judged by `findings` when given.
std::vector<ScoredItem> unrun_items(const Experiment& exp, const std::string& why,
                                    const Findings* findings);

// An item that could not be given to the run (a rubric's check naming an op the submission does
// not have): failed, no points, with why.
ScoredItem unscored_item(const ItemMeta& meta, bool check, std::string title, SourceLoc loc,
                         std::string why);

// Titles made unique ("... (line 40)" for a title that repeats), in place.
void make_titles_unique(std::vector<ScoredItem>& items);

struct ScoreTotal {
  double score = 0, max_score = 0;
};
ScoreTotal total(const std::vector<ScoredItem>& items);

}  // namespace streamlab

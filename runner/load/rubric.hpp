#pragma once
// A rubric (`NAME.rubric.yaml`): what an instructor grades a submission with. Its checks and
// expectations are written in the submission's terms (its op ids and buffer names) and applied to
// it, with the rubric's points and visibility; its params are forced on the submission and on the
// peer experiments (the reference solution, a baseline) that `streamlab grade` runs beside it.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runner/core/experiment.hpp"
#include "runner/core/record.hpp"

namespace streamlab {

struct Rubric {
  std::string name, description;
  std::string file, source;  // the rubric file as named, and its text
  // `params:`, evaluated in order: forced on the submission and the peers, and in scope in the
  // rubric's own checks and expectations.
  std::vector<std::pair<std::string, int64_t>> params;
  std::vector<std::string> param_texts;  // each param's expression, as written
  int64_t repeat = 10, warmup = 2;
  int64_t timeout_s = 0;  // `timeout:`; 0: the default time limit
  std::string timer;      // `timer:`; empty: events with peers, else the command line's
  bool gate = true;
  // `peers: {NAME: FILE}`, each FILE in the rubric's folder, as a path to load it from.
  std::vector<std::pair<std::string, std::string>> peers;
};

// Reads and checks a rubric. Throws InvalidExperiment with every problem (file:line:col).
Rubric load_rubric(const std::string& path);

// A rubric item that does not apply to a submission (it names an op or a buffer the submission
// lacks): it scores nothing, and says why. `before`: how many applied items of its section
// (checks or expectations) come before it.
struct UnappliedItem {
  ItemMeta meta;
  bool check = true;
  std::string title;
  SourceLoc loc;
  std::string why;
  size_t before = 0;
};

// Replaces params of the rubric (`grade --set NAME=EXPR`) and evaluates them all again in order,
// so that a param computed from a replaced one follows it. Throws CommandLineError.
void set_rubric_params(Rubric& rubric,
                       const std::vector<std::pair<std::string, std::string>>& overrides);

// The names of the params an experiment file declares, read without loading it ({} when it does
// not parse: loading it then says why).
std::vector<std::string> declared_params(const std::string& path);

// The scores of a submission's items (its checks, then its expectations, as score_items orders
// them), with the rubric items that did not apply where the rubric lists them; timing gated by
// every check, applied or not.
std::vector<ScoredItem> merge_rubric_items(const Experiment& sub, std::vector<ScoredItem> scored,
                                           const std::vector<UnappliedItem>& unapplied);

// Every item of the rubric as it reads without a submission (its id, name, points, visibility),
// each scoring nothing for `why`: for a submission that does not load.
std::vector<UnappliedItem> rubric_items(const Rubric& rubric, const std::string& why);

// Appends the rubric's checks and expectations to `exp` (loaded with the rubric's params), item by
// item; each item that does not apply is returned instead, with the first problem it has there.
std::vector<UnappliedItem> apply_rubric(const Rubric& rubric, Experiment& exp);

}  // namespace streamlab

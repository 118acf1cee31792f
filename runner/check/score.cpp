#include "runner/check/score.hpp"

#include <map>

#include <fmt/format.h>

#include "runner/check/expect.hpp"

namespace streamlab {
namespace {

ScoredItem from_meta(const ItemMeta& meta, bool check, std::string title, SourceLoc loc) {
  ScoredItem s;
  s.id = meta.id;
  s.title = meta.name.empty() ? std::move(title) : meta.name;
  s.check = check;
  s.max_score = meta.points;
  s.visibility = meta.visibility;
  s.loc = std::move(loc);
  return s;
}

ScoredItem score_check(const CheckSpec& spec, const CheckResult& r, size_t index) {
  ScoredItem s = from_meta(spec.item, true, r.title, spec.loc);
  if (s.id.empty()) s.id = fmt::format("check#{}", index + 1);
  s.status = !r.evaluated ? ScoredItem::Status::not_evaluated
             : r.passed   ? ScoredItem::Status::passed
                          : ScoredItem::Status::failed;
  s.score = r.evaluated && r.passed ? s.max_score : 0;
  s.output = r.detail.empty() ? (r.passed ? "every element as expected" : "") : r.detail;
  if (!spec.item.name.empty()) s.output = r.title + (s.output.empty() ? "" : ": " + s.output);
  return s;
}

ScoredItem::Status item_status(ExpectationResult::Status s) {
  using E = ExpectationResult::Status;
  using S = ScoredItem::Status;
  return s == E::passed    ? S::passed
         : s == E::partial ? S::partial
         : s == E::failed  ? S::failed
                           : S::not_evaluated;
}

ScoredItem score_expectation(const Expectation& spec, const ExpectationResult& r, size_t index) {
  ScoredItem s = from_meta(spec.item, false, r.text, r.loc);
  if (s.id.empty()) s.id = fmt::format("expect#{}", index + 1);
  s.timing = spec.uses_time;
  s.status = item_status(r.status);
  s.score = r.status == ExpectationResult::Status::not_evaluated ? 0 : s.max_score * r.fraction;
  s.output = r.status == ExpectationResult::Status::not_evaluated ? "not evaluated: " + r.detail
                                                                  : r.detail;
  if (!spec.item.name.empty()) s.output = r.text + (s.output.empty() ? "" : ": " + s.output);
  return s;
}

// The first check that did not pass, which gates the timing items: a fast wrong answer earns
// no time points (how course labs grade: correctness first).
const ScoredItem* first_failed_check(const std::vector<ScoredItem>& items) {
  for (const ScoredItem& s : items)
    if (s.check && s.status != ScoredItem::Status::passed) return &s;
  return nullptr;
}

// A timing item that may not keep what it earned: no points, failed, and why.
void withdraw_timing(std::vector<ScoredItem>& items, const std::string& why) {
  for (ScoredItem& s : items)
    if (s.timing && s.status != ScoredItem::Status::not_evaluated)
      s.score = 0, s.status = ScoredItem::Status::failed, s.output = why + "; " + s.output;
}

}  // namespace

std::vector<ScoredItem> score_items(const Experiment& exp, const RunRecord& run) {
  std::vector<ScoredItem> items;
  for (size_t i = 0; i < run.checks.size() && i < exp.checks.size(); ++i)
    items.push_back(score_check(exp.checks[i], run.checks[i], i));
  for (size_t i = 0; i < run.expectations.size() && i < exp.expectations.size(); ++i)
    items.push_back(score_expectation(exp.expectations[i], run.expectations[i], i));
  gate_timing(items);
  if (!run.impossible.empty()) withdraw_timing(items, "no points: " + run.impossible.front());
  make_titles_unique(items);
  return items;
}

void gate_timing(std::vector<ScoredItem>& items) {
  const ScoredItem* gate = first_failed_check(items);
  if (!gate) return;
  withdraw_timing(items, fmt::format("no points: check '{}' did not pass, and timing counts only "
                                     "for a correct result",
                                     gate->title));
}

std::vector<ScoredItem> unrun_items(const Experiment& exp, const std::string& why,
                                    const Findings* findings) {
  std::vector<ScoredItem> items;
  for (size_t i = 0; i < exp.checks.size(); ++i) {
    const CheckSpec& c = exp.checks[i];
    CheckResult r{
        c.item.name.empty() ? fmt::format("{} (line {})", c.kind, c.loc.line) : c.item.name, false,
        why};
    items.push_back(score_check(c, r, i));
  }
  for (size_t i = 0; i < exp.expectations.size(); ++i) {
    const Expectation& e = exp.expectations[i];
    ExpectationResult r{e.text, e.loc, ExpectationResult::Status::failed, why, {}};
    if (e.form == Expectation::Form::no_diagnostics && findings)
      r = judge_diagnostics(e, *findings);
    items.push_back(score_expectation(e, r, i));
  }
  make_titles_unique(items);
  return items;
}

ScoredItem unscored_item(const ItemMeta& meta, bool check, std::string title, SourceLoc loc,
                         std::string why) {
  ScoredItem s = from_meta(meta, check, std::move(title), std::move(loc));
  s.status = ScoredItem::Status::failed;
  if (s.id.empty()) s.id = fmt::format("line {}", s.loc.line);
  s.output = std::move(why);
  return s;
}

void make_titles_unique(std::vector<ScoredItem>& items) {
  std::map<std::string, int> seen, at_line;
  for (const ScoredItem& s : items)
    ++seen[s.title], ++at_line[fmt::format("{}@{}", s.title, s.loc.line)];
  // Items of one line (iterations of a loop) are told apart by their ids, which are unique.
  for (ScoredItem& s : items)
    if (seen[s.title] > 1)
      s.title += at_line[fmt::format("{}@{}", s.title, s.loc.line)] > 1
                     ? fmt::format(" ({})", s.id)
                     : fmt::format(" (line {})", s.loc.line);
}

ScoreTotal total(const std::vector<ScoredItem>& items) {
  ScoreTotal t;
  for (const ScoredItem& s : items) t.score += s.score, t.max_score += s.max_score;
  return t;
}

}  // namespace streamlab

#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runner/check/expect.hpp"
#include "runner/core/profile.hpp"
#include "runner/core/record.hpp"
#include "runner/execute/backend.hpp"

namespace streamlab {

// Where a run is, for the time limit's message: written by the run, read by the watchdog's thread.
struct RunProgress {
  enum Phase : int { loading, compiling, analyzing, preparing, warmup, timed, checking, modelling };
  std::atomic<int> phase{loading};
  std::atomic<int64_t> repetition{0};  // 1-based within its phase
  std::atomic<int64_t> of{0};          // repetitions in the phase
  std::string describe() const;        // "in timed repetition 3 of 20"
};

struct RunOptions {
  int64_t repeat = 1;  // timed repetitions
  int64_t warmup = 0;  // untimed repetitions before them
  // Called between repetitions (outside any timed region) with how many of warmup + repeat are
  // done; the CLI shows progress with it. May be empty.
  std::function<void(int64_t done, int64_t total)> progress;
  RunProgress* where = nullptr;  // may be null
  // What the caller knows and the record must say: how the run was set up (the experiment's
  // `env:`), before the backend's own notes; and what `streamlab check` found in the experiment.
  std::vector<std::string> notes{};
  Findings findings{};
  // The timeline model (runner/predict/): the device profile it predicts and explains with (--profile,
  // read once by the command line; null: the built-in one for the device in use), whether to
  // predict on the cuda backend too (--predict; the host backend always does), and whether the
  // run holds its streams behind the start gate (--no-gate: not).
  std::shared_ptr<const DeviceProfile> profile{};
  bool predict = false;
  bool gate = true;
};

// prepare -> warm-up repetitions -> timed repetitions -> checks -> figures -> expectations ->
// scores. Throws RunError on a CUDA or runtime failure.
RunRecord run_experiment(const Experiment& exp, Backend& backend, const RunOptions& options);

// Experiments run together in one process, on one device (`streamlab grade`: a submission and the
// peers its rubric compares it with), each with its backend, notes and findings.
struct Participant {
  const Experiment* exp = nullptr;
  Backend* backend = nullptr;
  std::vector<std::string> notes{};
  Findings findings{};
};

// Prepares every participant, then runs them repetition for repetition: each warm-up and timed
// repetition of one, then of the next, the first of them turning each repetition, so that none
// always follows the same one and all see the device as alike as one run can make them. Then
// checks and figures for each; expectations and scores are left to evaluate(). On a failure sets
// `*failed` (if given) to the participant's index and rethrows. `options.notes` and `findings`
// are ignored (each participant has its own).
std::vector<RunRecord> run_together(std::vector<Participant>& runs, const RunOptions& options,
                                    size_t* failed = nullptr);

// Expectations (measures relative to `peers` among them) and scores of a record run_together made.
void evaluate(const Experiment& exp, RunRecord& record, const std::vector<PeerRun>& peers = {});

}  // namespace streamlab

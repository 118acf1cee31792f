#pragma once
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "runner/backend.hpp"
#include "runner/checks.hpp"
#include "runner/expect.hpp"
#include "runner/figures.hpp"
#include "runner/findings.hpp"

namespace streamlab {

// Where a run is, for the time limit's message: written by the run, read by the watchdog's thread.
struct RunProgress {
  enum Phase : int { loading, compiling, preparing, warmup, timed, checking };
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
};

// Everything a run produced; reports format it and measure nothing.
struct RunRecord {
  std::string backend;      // "cuda" or "host"
  std::string device;       // the backend's description of where it ran
  std::string timer;              // "cupti", "events" or "none"
  std::string timer_description;
  std::vector<std::string> notes;  // how the run was measured, for the user
  int64_t warmup = 0;
  std::vector<RepetitionSample> reps;  // timed repetitions only
  RunFigures figures;                  // derived from the repetitions (figures.hpp)
  std::vector<CheckResult> checks;     // on the contents after the last repetition
  std::vector<ExpectationResult> expectations;
  Findings diagnostics;  // what `streamlab check` said of the experiment before it ran (set by the caller)
  bool device_timing() const { return timer != "none"; }  // device intervals were measured
  bool checks_passed() const;
  bool expectations_held() const;  // none failed (not evaluated is not failed)
};

// prepare -> warm-up repetitions -> timed repetitions -> checks. Throws RunError on a CUDA or
// runtime failure.
RunRecord run_experiment(const Experiment& exp, Backend& backend, const RunOptions& options);

}  // namespace streamlab

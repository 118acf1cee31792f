#pragma once
// Helpers shared by the tests: where the source tree is, reading files, running experiments.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "runner/execute/execute.hpp"
#include "runner/load/load.hpp"

namespace streamlab::test {

// The source tree: $STREAMLAB_SOURCE_DIR when set (the GPU machine runs the tests from a copy of
// the tree at another path), else where CMake configured the build.
std::filesystem::path source_dir();
std::string read_text(const std::filesystem::path& path);
// Every experiment (*.yaml, but rubrics: *.rubric.yaml) under `dir` of the source tree, sorted;
// none when `dir` does not exist.
std::vector<std::filesystem::path> yaml_files(const std::string& dir);

// Loads `text` and returns the formatted diagnostics ("" when it loads).
std::string diagnostics_of(const std::string& text, const std::string& file = "test.yaml",
                           const LoadOptions& options = {});

// Compiles `exp`'s user kernels for `arch`: the compiler's errors as streamlab prints them ("" when
// they compile), or nullopt where NVRTC is not installed (a MESSAGE says the case skipped).
std::optional<std::string> compile_errors(const Experiment& exp,
                                          const std::string& arch = "compute_75");

// Runs `e` on the host backend: `repeat` timed repetitions, no warm-up.
RunRecord run_on_host(const Experiment& e, int64_t repeat = 1);

// A small experiment (a 4 MiB copy in s1, a 1 ms spin kernel in s2, a streamSynchronize) and a
// device-timed record of it with round numbers, as the cuda backend would write it: the copy runs
// 0.5 ms, the kernel 1 ms beside it, overlapping the copy for 0.3 ms; two repetitions.
const char* synthetic_experiment();
RunRecord synthetic_run();

// A run recorded on a GPU, kept in tests/golden/h200/ (bench/run_gpu.sh's `predict` section):
// NAME.csv, every op of every timed repetition (`run --csv`), and where kept NAME.json (`run
// --json`), which names the experiment file and its params, the backend and timer, the gate
// openings and spans, the device's peaks, each graph body's times and the checks' verdicts.
struct Recording {
  std::string name;
  Experiment exp;
  RunRecord run;  // what the reports take, its figures, waits and expectations recomputed
};
// Every NAME of a NAME.csv in tests/golden/h200/, sorted: dropping a recording in covers it.
std::vector<std::string> recording_names();
// The recording NAME turned back into the RunRecord the run would have handed the reports.
// Without NAME.json: the experiment experiments/**/NAME.yaml at its own params, the gate taken
// as the first device start, and a timer said to be unknown.
Recording recorded_run(const std::string& name);

// Whether a CUDA device is usable here; `why` says why not.
bool have_gpu(std::string* why);

}  // namespace streamlab::test

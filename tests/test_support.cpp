#include "tests/test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "ops/user_kernel.hpp"
#include "runner/check/figures.hpp"
#include "runner/core/diagnostics.hpp"
#include "runner/execute/backend.hpp"

namespace streamlab::test {

std::filesystem::path source_dir() {
  if (const char* env = std::getenv("STREAMLAB_SOURCE_DIR")) return env;
  return STREAMLAB_SOURCE_DIR;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::filesystem::path> yaml_files(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  if (!std::filesystem::exists(source_dir() / dir)) return files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(source_dir() / dir))
    if (e.path().extension() == ".yaml" && !e.path().string().ends_with(".rubric.yaml"))
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string diagnostics_of(const std::string& text, const std::string& file,
                           const LoadOptions& options) {
  try {
    load_string(text, file, options);
    return "";
  } catch (const InvalidExperiment& e) {
    return e.what();
  }
}

bool have_gpu(std::string* why) { return cuda_device_count(why) > 0; }

std::optional<std::string> compile_errors(const Experiment& exp, const std::string& arch) {
  try {
    compile_user_kernels(exp, arch);
    return "";
  } catch (const InvalidExperiment& err) {
    return err.what();
  } catch (const RunError& err) {
    MESSAGE("skipped: NVRTC is not installed here (", err.what(), ")");
    return std::nullopt;
  }
}

RunRecord run_on_host(const Experiment& e, int64_t repeat) {
  auto backend = make_host_backend(e);
  return run_experiment(e, *backend, {repeat, 0, {}});
}

namespace {
const char* kSyntheticExperiment = R"(name: reports
params: {N: 1024}
streams: {s1: {}, s2: {}}
buffers:
  h: {type: int32, shape: [N, N], memory: pinned, init: sequence}
  d: {type: int32, shape: [N, N], memory: device}
ops:
  - memcpyAsync: {id: up, dst: d, src: h, stream: s1}
  - launch: {id: k, kernel: spin, grid: 1, block: 32, stream: s2, args: {us: 1000}}
  - streamSynchronize: {stream: s1}
checks:
  - equal: {a: h, b: h}
)";

}  // namespace

const char* synthetic_experiment() { return kSyntheticExperiment; }

RunRecord synthetic_run() {
  RunRecord run;
  run.backend = "cuda";
  run.device = "Test GPU (sm_90, 1 SMs, 1 copy engines, device 0)";
  run.timer = "events";
  run.timer_description = "CUDA events around each device op, in its own stream";
  run.notes = {"a note"};
  run.warmup = 1;
  for (int r = 0; r < 2; ++r) {
    RepetitionSample rep;
    rep.number = uint64_t(r) + 2;
    rep.ops.push_back({0.001, 0.004, 0.010 + r, 0.510 + r});
    rep.ops.push_back({0.004, 0.007, 0.210 + r, 1.210 + r});
    rep.ops.push_back({0.007, 1.300 + r, NAN, NAN});
    rep.gate_open_ms = 0.006;
    rep.host_span_ms = 1.250 + r;
    rep.device_span_ms = 1.200;
    run.reps.push_back(rep);
  }
  run.checks.push_back({"equal(h, h)", true, ""});
  run.figures = run_figures(load_string(kSyntheticExperiment, "reports.yaml"), run);
  return run;
}

}  // namespace streamlab::test

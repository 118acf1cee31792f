#include "runner/environment.hpp"

#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

#include "runner/backend.hpp"

namespace streamlab {
namespace {

bool cuda_initialized = false;
constexpr const char* kReexecMarker = "STREAMLAB_REEXECUTED";

bool in_force(const std::pair<std::string, std::string>& v) {
  const char* now = std::getenv(v.first.c_str());
  return now && v.second == now;
}

// The dynamic loader reads LD_* once, when the program starts.
bool read_at_start(const std::string& name) { return name.rfind("LD_", 0) == 0; }

}  // namespace

void mark_cuda_initialized() { cuda_initialized = true; }

void apply_environment(const Experiment& exp, char** argv) {
  bool reexec = false;
  for (const auto& v : exp.env) {
    if (in_force(v)) continue;
    reexec = reexec || cuda_initialized || read_at_start(v.first);
    setenv(v.first.c_str(), v.second.c_str(), 1);
  }
  if (!reexec) return;
  if (std::getenv(kReexecMarker))
    throw RunError("env: the experiment's variables are still not in force after re-executing streamlab");
  setenv(kReexecMarker, "1", 1);
  execv("/proc/self/exe", argv);
  throw RunError(fmt::format("env: could not re-execute streamlab to apply the experiment's variables"));
}

std::vector<std::string> environment_notes(const Experiment& exp) {
  std::vector<std::string> notes;
  for (const auto& v : exp.env)
    notes.push_back(fmt::format("env: {}={} (from the experiment, in force before CUDA started)", v.first, v.second));
  return notes;
}

}  // namespace streamlab

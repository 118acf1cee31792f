#include "runner/load/environment.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <fmt/format.h>

#include "runner/core/errors.hpp"

namespace streamlab {
namespace {

bool cuda_initialized = false;

bool digits(std::string_view v) {
  return !v.empty() && v.size() <= 9 &&
         std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool integer_in(std::string_view v, long lo, long hi) {
  if (!digits(v)) return false;
  long n = std::strtol(std::string(v).c_str(), nullptr, 10);
  return n >= lo && n <= hi;
}

bool one_of(std::string_view v, std::initializer_list<std::string_view> choices) {
  return std::find(choices.begin(), choices.end(), v) != choices.end();
}

bool zero_or_one(std::string_view v) { return one_of(v, {"0", "1"}); }
bool connections(std::string_view v) { return integer_in(v, 1, 32); }
bool module_loading(std::string_view v) { return one_of(v, {"EAGER", "LAZY"}); }
bool launch_queues(std::string_view v) { return one_of(v, {"0.25x", "0.5x", "2x", "4x"}); }
bool nccl_channels(std::string_view v) { return integer_in(v, 1, 64); }

// cuBLAS: one or more `:SIZE_KIB:COUNT` pairs, e.g. ":4096:8".
bool cublas_workspace(std::string_view v) {
  if (v.empty() || v.size() > 64) return false;
  int fields = 0;
  for (size_t i = 0; i < v.size();) {
    if (v[i] != ':') return false;
    size_t end = v.find(':', i + 1);
    if (!digits(
            v.substr(i + 1, end == std::string_view::npos ? std::string_view::npos : end - i - 1)))
      return false;
    ++fields;
    i = end == std::string_view::npos ? v.size() : end;
  }
  return fields % 2 == 0;
}

// NCCL_ALGO, NCCL_PROTO: names, `^` to exclude, `,` `;` `:` between them (no paths, no spaces).
bool nccl_names(std::string_view v) {
  return !v.empty() && v.size() <= 128 && std::all_of(v.begin(), v.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == ',' || c == '^' || c == ';' ||
           c == ':';
  });
}

const EnvSetting kSettings[] = {
    {"CUDA_DEVICE_MAX_CONNECTIONS", "1 to 32", connections,
     "hardware work queues between the host and the device (C18)"},
    {"CUDA_MODULE_LOADING", "EAGER or LAZY", module_loading,
     "when kernels are loaded (streamlab's default: EAGER)"},
    {"CUDA_LAUNCH_BLOCKING", "0 or 1", zero_or_one,
     "1: every launch returns only once its kernel is done"},
    {"CUDA_SCALE_LAUNCH_QUEUES", "0.25x, 0.5x, 2x or 4x", launch_queues,
     "the size of the queues the host issues work into"},
    {"CUDA_GRAPHS_USE_NODE_PRIORITY", "0 or 1", zero_or_one,
     "whether graph launches honour node priorities"},
    {"CUBLAS_WORKSPACE_CONFIG", ":SIZE_KIB:COUNT pairs, e.g. :4096:8", cublas_workspace,
     "cuBLAS's own workspace per stream"},
    {"NCCL_ALGO", "algorithm names (Ring, Tree, ...), ^ to exclude", nccl_names,
     "the algorithms NCCL may use"},
    {"NCCL_PROTO", "protocol names (LL, LL128, Simple), ^ to exclude", nccl_names,
     "the protocols NCCL may use"},
    {"NCCL_MIN_NCHANNELS", "1 to 64", nccl_channels,
     "the fewest channels (blocks) an NCCL collective uses"},
    {"NCCL_MAX_NCHANNELS", "1 to 64", nccl_channels,
     "the most channels (blocks) an NCCL collective uses"},
    // Not NCCL_NVLS_ENABLE: NVLink multicast can take a shared host's GPUs out of service; whether
    // it is on is the machine owner's choice, made in the environment streamlab starts in.
};

bool in_force(const std::pair<std::string, std::string>& v) {
  const char* now = std::getenv(v.first.c_str());
  return now && v.second == now;
}

}  // namespace

std::span<const EnvSetting> env_settings() { return kSettings; }

const EnvSetting* find_env_setting(std::string_view name) {
  for (const EnvSetting& s : kSettings)
    if (s.name == name) return &s;
  return nullptr;
}

void mark_cuda_initialized() { cuda_initialized = true; }

// Load accepted only the table's variables, with valid values; this sets them. Variables the
// runtime reads when it starts cannot change once it has: say so rather than measure without them.
void apply_environment(const Experiment& exp) {
  for (const auto& v : exp.env) {
    if (in_force(v)) continue;
    if (cuda_initialized)
      throw RunError(
          fmt::format("env: {}={} cannot take effect: CUDA already started in this process",
                      v.first, v.second));
    setenv(v.first.c_str(), v.second.c_str(), 1);
  }
}

std::vector<std::string> environment_notes(const Experiment& exp) {
  std::vector<std::string> notes;
  for (const auto& v : exp.env)
    notes.push_back(fmt::format("env: {}={} (from the experiment, in force before CUDA started)",
                                v.first, v.second));
  return notes;
}

}  // namespace streamlab

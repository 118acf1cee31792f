#pragma once
// An experiment's `env:`: the CUDA and library settings that change what an experiment measures
// (C18's CUDA_DEVICE_MAX_CONNECTIONS), in force before the process's first CUDA call. An
// experiment is data, so it may set only the variables of the table below, each with the values
// it takes: nothing that makes a program load code (LD_PRELOAD, CUDA_INJECTION64_PATH, plugins),
// name a library (STREAMLAB_*) or write a file (log destinations).
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/experiment.hpp"

namespace streamlab {

struct EnvSetting {
  std::string_view name;
  std::string_view values;  // what it takes, for `streamlab list` and messages
  bool (*valid)(std::string_view value);
  std::string_view meaning;  // one line: what it changes
};

// Every variable an experiment may set.
std::span<const EnvSetting> env_settings();
const EnvSetting* find_env_setting(std::string_view name);

// Sets the experiment's variables in this process. They must be in force before CUDA starts:
// throws RunError when CUDA already started in this process with different values.
void apply_environment(const Experiment& exp);

// "NAME=value (from the experiment)" per variable, for the report's notes.
std::vector<std::string> environment_notes(const Experiment& exp);

// Called by the CUDA backend before its first CUDA call.
void mark_cuda_initialized();

}  // namespace streamlab

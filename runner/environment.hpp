#pragma once
// An experiment's `env:`: environment variables the CUDA runtime reads when it starts (C18's
// CUDA_DEVICE_MAX_CONNECTIONS). They must be in force before the process's first CUDA call.
#include <string>
#include <vector>

#include "runner/experiment.hpp"

namespace streamlab {

// Sets the experiment's variables in this process. Where setting them now cannot work (CUDA is
// already initialized here, or the variable is read when a program starts, LD_*), re-executes
// the program with them (`argv` as given to main), once; returns only when they are in force.
// Throws RunError when a re-execution was already tried and they still differ.
void apply_environment(const Experiment& exp, char** argv);

// "NAME=value (from the experiment)" per variable, for the report's notes.
std::vector<std::string> environment_notes(const Experiment& exp);

// Called by the CUDA backend before its first CUDA call.
void mark_cuda_initialized();

}  // namespace streamlab

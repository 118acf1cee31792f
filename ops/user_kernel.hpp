#pragma once
// User kernels: CUDA source in the experiment (`kernels:`, inline or a file beside it) with a
// declared signature, compiled by NVRTC for the device in use and launched by the `launch` op
// like a built-in kernel. NVRTC is loaded only when an experiment has such a kernel.
#include <span>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "ops/kernels/kernel.hpp"
#include "runner/cuda_state.hpp"
#include "runner/diagnostics.hpp"

namespace streamlab {

class LoadContext;

// Reads `kernels:`: NAME: {source: TEXT | file: PATH, params: [{NAME: KIND TYPE}, ...]}.
void load_user_kernels(LoadContext& ctx, const YAML::Node& node);

bool is_user_kernel(const Op& op);
const UserKernel& user_kernel(const Experiment& exp, const Op& op);
// The declared parameters as the launch op's argument binding sees them (views into `k`).
std::vector<KernelParam> user_params(const UserKernel& k);

// Compiles every user kernel for `arch` ("sm_90" for a device's own code; "compute_75" for a check
// without a device). Throws InvalidExperiment with the compiler's errors at their source lines,
// RunError when NVRTC cannot be loaded. Returns the images (cubin or PTX), by kernel.
std::vector<std::string> compile_user_kernels(const Experiment& exp, const std::string& arch);

// cuda backend: compiles (once per kernel) and loads the kernel a launch names.
void prepare_user_kernel(CudaState& s, const Op& op);
void launch_user_kernel(CudaState& s, const Op& op);

}  // namespace streamlab

#pragma once
// User kernels: CUDA source in the experiment (`kernels:`, inline or a file in its folder) with a
// declared signature, compiled by NVRTC for the device in use and launched by the `launch` op
// like a built-in kernel. NVRTC is loaded only when an experiment has such a kernel. A kernel may
// include files in the experiment's folder (`#include "path"`), which streamlab reads and hands
// NVRTC itself: NVRTC opens no file (user_kernel.cpp says what a kernel may not use, and why).
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "ops/kernels/kernel.hpp"
#include "runner/context/cuda_state.hpp"
#include "runner/core/diagnostics.hpp"

namespace streamlab {

class LoadContext;

// Reads `kernels:`: NAME: {source: TEXT | file: PATH, params: [{NAME: KIND TYPE}, ...]}, and
// vets the files each kernel includes.
void load_user_kernels(LoadContext& ctx, const YAML::Node& node);

bool is_user_kernel(const Op& op);
const UserKernel& user_kernel(const Experiment& exp, const Op& op);
// The declared parameters as the launch op's argument binding sees them (views into `k`).
std::vector<KernelParam> user_params(const UserKernel& k);

// Diagnostics of a load, each shown with the line it points at: a line of the experiment, or of
// a file in its folder that a kernel reads (its `file:` or a header it includes; read again the
// way a kernel's files are, runner/core/safe_file.hpp). Lines of no other file are ever shown.
std::string format_with_kernel_sources(const Diagnostics& diags, const std::string& experiment_file,
                                       std::string_view experiment_source);

// The files in the experiment's folder that its user kernels read (their `file:` and the files
// they include), as paths to open from here: no report may replace one.
std::vector<std::string> user_kernel_files(const Experiment& exp);

// Compiles every user kernel for `arch` ("sm_90" for a device's own code; "compute_75" for a check
// without a device). Throws InvalidExperiment with the compiler's errors at their source lines,
// RunError when NVRTC cannot be loaded. Returns the images (cubin or PTX), by kernel.
std::vector<std::string> compile_user_kernels(const Experiment& exp, const std::string& arch);

// cuda backend: compiles (once per kernel) and loads the kernel a launch names.
void prepare_user_kernel(CudaState& s, const Op& op);
void launch_user_kernel(CudaState& s, const Op& op);

}  // namespace streamlab

#include "ops/user_kernel.hpp"

#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <nvrtc.h>

#include "runner/cuda_check.hpp"
#include "runner/library.hpp"
#include "runner/load_context.hpp"

namespace streamlab {
namespace {

constexpr size_t kMaxUserParams = 16;

const std::vector<std::string> kScalarTypes = {"int32", "int64", "float32", "float64"};

// "inout float32" -> a buffer parameter; "int64" -> a value.
bool read_param(LoadContext& ctx, const YAML::Node& key, const YAML::Node& value, UserKernelParam& p) {
  p.name = key.IsScalar() ? key.Scalar() : "";
  if (!is_identifier(p.name)) {
    ctx.error(key, fmt::format("kernel parameter name {} is not an identifier", describe_node(key)));
    return false;
  }
  auto text = ctx.scalar(value, "parameter");
  if (!text) return false;
  std::istringstream words(*text);
  std::string first, second, extra;
  words >> first >> second >> extra;
  static const std::vector<std::string> kinds = {"in", "out", "inout"};
  auto kind = std::find(kinds.begin(), kinds.end(), first);
  auto type_of = [](const std::string& t) { return t == "int32" ? ElemType::int32 : t == "int64" ? ElemType::int64
                                                   : t == "float64" ? ElemType::float64 : ElemType::float32; };
  if (kind != kinds.end() && extra.empty()) {
    static const std::vector<std::string> types = {"int32", "uint32", "int64", "float32", "float64", "uint8",
                                                   "float16", "bfloat16"};
    auto t = std::find(types.begin(), types.end(), second);
    if (t != types.end()) {
      p.kind = static_cast<int>(kind - kinds.begin());  // ParamKind::in_buffer, out_buffer, inout_buffer
      p.type = static_cast<ElemType>(t - types.begin());
      return true;
    }
  } else if (second.empty() && std::find(kScalarTypes.begin(), kScalarTypes.end(), first) != kScalarTypes.end()) {
    p.type = type_of(first);
    p.kind = static_cast<int>(is_float(p.type) ? ParamKind::real : ParamKind::scalar);
    return true;
  }
  ctx.error(value, fmt::format("parameter '{}': '{}' is not a parameter kind; expected `in TYPE`, `out TYPE` or "
                               "`inout TYPE` for a buffer (TYPE an element type such as float32), or int32, int64, "
                               "float32, float64 for a value", p.name, *text));
  return false;
}

// The line of the file that holds the first line of a YAML scalar's text: the next one for a
// block scalar (`source: |`).
int first_text_line(const Experiment& exp, const YAML::Node& node) {
  int line = node.Mark().line + 1;
  SourceLines lines(exp.source);
  std::string_view at = lines.line(line);
  size_t col = static_cast<size_t>(node.Mark().column);
  bool block = col < at.size() && (at[col] == '|' || at[col] == '>');
  return block ? line + 1 : line;
}

// The directory of the experiment file, where `file:` paths are found.
std::string beside(const std::string& experiment, const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  size_t slash = experiment.rfind('/');
  return slash == std::string::npos ? path : experiment.substr(0, slash + 1) + path;
}

void read_kernel(LoadContext& ctx, const YAML::Node& key, const YAML::Node& value) {
  if (!check_declared_name(ctx, key, ctx.exp.kernels, "kernel")) return;
  if (find_kernel(key.Scalar()) >= 0)
    return ctx.error(key, fmt::format("kernel '{}' is a built-in kernel's name; name yours otherwise", key.Scalar()));
  MapReader r(ctx, value, fmt::format("kernel '{}'", key.Scalar()), {"source?", "file?", "params"});
  if (!r.ok()) return;
  UserKernel k;
  k.name = key.Scalar();
  k.loc = ctx.loc(key);
  if (r.has("source") == r.has("file"))
    return ctx.error(key, fmt::format("kernel '{}': give its CUDA source as exactly one of `source:` (inline) and "
                                      "`file:` (a file beside the experiment)", k.name));
  if (r.has("source")) {
    k.source = ctx.scalar(r.get("source"), "source").value_or("");
    k.source_file = ctx.exp.file;
    k.first_line = first_text_line(ctx.exp, r.get("source"));
  } else {
    k.source_file = beside(ctx.exp.file, ctx.scalar(r.get("file"), "file").value_or(""));
    std::ifstream in(k.source_file, std::ios::binary);
    if (!in) return ctx.error(r.get("file"), fmt::format("cannot read kernel source '{}'", k.source_file));
    std::stringstream text;
    text << in.rdbuf();
    k.source = text.str();
  }
  YAML::Node params = r.require("params");
  if (params.IsDefined() && !params.IsSequence())
    return ctx.error(params, fmt::format("params: expected a list of `- NAME: KIND`, got {}", describe_node(params)));
  for (const auto& item : params) {
    if (!item.IsMap() || item.size() != 1) {
      ctx.error(item, "expected one parameter per list item, as `- NAME: inout float32` or `- n: int32`");
      continue;
    }
    UserKernelParam p;
    if (read_param(ctx, item.begin()->first, item.begin()->second, p)) k.params.push_back(std::move(p));
  }
  if (k.params.size() > kMaxUserParams)
    ctx.error(params, fmt::format("kernel '{}' has {} parameters; at most {}", k.name, k.params.size(), kMaxUserParams));
  ctx.exp.kernels.push_back(std::move(k));
}

struct Nvrtc {
  decltype(&nvrtcCreateProgram) create = nullptr;
  decltype(&nvrtcDestroyProgram) destroy = nullptr;
  decltype(&nvrtcAddNameExpression) add_name = nullptr;
  decltype(&nvrtcCompileProgram) compile = nullptr;
  decltype(&nvrtcGetProgramLogSize) log_size = nullptr;
  decltype(&nvrtcGetProgramLog) log = nullptr;
  decltype(&nvrtcGetLoweredName) lowered = nullptr;
  decltype(&nvrtcGetCUBINSize) cubin_size = nullptr;
  decltype(&nvrtcGetCUBIN) cubin = nullptr;
  decltype(&nvrtcGetPTXSize) ptx_size = nullptr;
  decltype(&nvrtcGetPTX) ptx = nullptr;
  decltype(&nvrtcGetErrorString) error_string = nullptr;
};

const Nvrtc& nvrtc() {
  static const Nvrtc api = [] {
    const SharedLibrary& lib = load_library({"NVRTC", "libnvrtc.so.13", "STREAMLAB_NVRTC", {"lib64", "lib"}});
    Nvrtc a;
    lib.resolve(a.create, "nvrtcCreateProgram");
    lib.resolve(a.destroy, "nvrtcDestroyProgram");
    lib.resolve(a.add_name, "nvrtcAddNameExpression");
    lib.resolve(a.compile, "nvrtcCompileProgram");
    lib.resolve(a.log_size, "nvrtcGetProgramLogSize");
    lib.resolve(a.log, "nvrtcGetProgramLog");
    lib.resolve(a.lowered, "nvrtcGetLoweredName");
    lib.resolve(a.cubin_size, "nvrtcGetCUBINSize");
    lib.resolve(a.cubin, "nvrtcGetCUBIN");
    lib.resolve(a.ptx_size, "nvrtcGetPTXSize");
    lib.resolve(a.ptx, "nvrtcGetPTX");
    lib.resolve(a.error_string, "nvrtcGetErrorString");
    return a;
  }();
  return api;
}

void check(nvrtcResult r, const char* call) {
  if (r != NVRTC_SUCCESS) throw RunError(fmt::format("NVRTC: {} failed: {}", call, nvrtc().error_string(r)));
}

std::string text_of(const std::string& file, const Experiment& exp) {
  if (file == exp.file) return exp.source;
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The compiler's log as diagnostics at the kernel's source lines: `file(line): error: text`, then
// NVRTC's echo of the line and a caret, whose position gives the column (shifted by the YAML
// block's indentation for inline source).
void add_log_diagnostics(const Experiment& exp, const UserKernel& k, const std::string& log, Diagnostics& out) {
  static const std::regex head(R"(^(.*)\((\d+)\): (catastrophic error|error|warning): (.*)$)");
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  SourceLines source_lines(exp.source);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (!std::regex_match(lines[i], m, head) || m[3] == "warning") continue;
    int line = std::stoi(m[2]);
    int col = 1;
    if (i + 2 < lines.size() && lines[i + 2].find('^') != std::string::npos) {
      const std::string& echo = lines[i + 1];
      std::string_view real = k.source_file == exp.file ? source_lines.line(line) : std::string_view();
      size_t shift = real.size() >= echo.size() && real.ends_with(echo) ? real.size() - echo.size() : 0;
      col = static_cast<int>(lines[i + 2].find('^') + shift) + 1;
    }
    out.error({k.source_file, line, col}, fmt::format("in kernel '{}': {}", k.name, m[4].str()));
  }
  if (out.items().empty())
    out.error(k.loc, fmt::format("kernel '{}' does not compile: {}", k.name, log.empty() ? "(no log)" : log));
}

struct Program {
  nvrtcProgram p = nullptr;
  ~Program() {
    if (p) nvrtc().destroy(&p);
  }
};

// Compiles one kernel; the image and its lowered (mangled) name. Errors in `diags`.
std::pair<std::string, std::string> compile(const Experiment& exp, const UserKernel& k, const std::string& arch,
                                            Diagnostics& diags) {
  // NVRTC would report a missing function as an error in its own name expression, at no useful line.
  if (!std::regex_search(k.source, std::regex("\\b" + k.name + "\\s*\\("))) {
    diags.error(k.loc, fmt::format("kernel '{}': the source defines no __global__ function named '{}'", k.name, k.name));
    return {};
  }
  // #line makes the compiler name the experiment's (or the source file's) own lines.
  std::string text = fmt::format("#line {} \"{}\"\n{}", k.first_line, k.source_file, k.source);
  Program prog;
  check(nvrtc().create(&prog.p, text.c_str(), k.source_file.c_str(), 0, nullptr, nullptr), "nvrtcCreateProgram");
  check(nvrtc().add_name(prog.p, k.name.c_str()), "nvrtcAddNameExpression");
  std::string arch_option = "--gpu-architecture=" + arch;
  const char* options[] = {arch_option.c_str(), "--std=c++17", "-default-device", "-lineinfo"};
  nvrtcResult result = nvrtc().compile(prog.p, 4, options);
  size_t log_size = 0;
  check(nvrtc().log_size(prog.p, &log_size), "nvrtcGetProgramLogSize");
  std::string log(log_size, '\0');
  if (log_size) check(nvrtc().log(prog.p, log.data()), "nvrtcGetProgramLog");
  if (!log.empty() && log.back() == '\0') log.pop_back();
  if (result != NVRTC_SUCCESS) {
    add_log_diagnostics(exp, k, log, diags);
    return {};
  }
  const char* lowered = nullptr;
  if (nvrtc().lowered(prog.p, k.name.c_str(), &lowered) != NVRTC_SUCCESS || !lowered) {
    diags.error(k.loc, fmt::format("kernel '{}': the source defines no __global__ function named '{}'", k.name, k.name));
    return {};
  }
  std::string image;
  size_t size = 0;
  bool cubin = arch.starts_with("sm_");
  check(cubin ? nvrtc().cubin_size(prog.p, &size) : nvrtc().ptx_size(prog.p, &size), "nvrtcGet*Size");
  image.resize(size);
  check(cubin ? nvrtc().cubin(prog.p, image.data()) : nvrtc().ptx(prog.p, image.data()), "nvrtcGetCUBIN");
  return {image, lowered};
}

// The compiler's errors, each shown with the line of the file it points into.
void throw_if_errors(const Experiment& exp, Diagnostics diags) {
  if (!diags.has_errors()) return;
  std::string text;
  for (const auto& d : diags.items()) text += format_diagnostic(d, text_of(d.loc.file, exp));
  throw InvalidExperiment(std::move(text), std::move(diags));
}

// A kernel loaded into the device's context, shared by every launch of it.
struct LoadedKernel {
  cudaLibrary_t library = nullptr;
  cudaKernel_t kernel = nullptr;
  LoadedKernel() = default;
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;
  ~LoadedKernel() {
    if (library) STREAMLAB_CUDA_NOEXCEPT(cudaLibraryUnload(library));
  }
};

}  // namespace

void load_user_kernels(LoadContext& ctx, const YAML::Node& node) {
  if (!node.IsDefined()) return;
  if (!node.IsMap()) return ctx.error(node, fmt::format("kernels: expected a mapping of NAME: {{source | file, params}}, "
                                                        "got {}", describe_node(node)));
  for (const auto& entry : node) read_kernel(ctx, entry.first, entry.second);
}

bool is_user_kernel(const Op& op) { return op.kernel >= kUserKernelBase; }

const UserKernel& user_kernel(const Experiment& exp, const Op& op) { return exp.kernels[op.kernel - kUserKernelBase]; }

std::vector<KernelParam> user_params(const UserKernel& k) {
  std::vector<KernelParam> out;
  for (const auto& p : k.params) out.push_back({p.name, static_cast<ParamKind>(p.kind), elem_type_name(p.type)});
  return out;
}

std::vector<std::string> compile_user_kernels(const Experiment& exp, const std::string& arch) {
  Diagnostics diags;
  std::vector<std::string> images;
  for (const UserKernel& k : exp.kernels) images.push_back(compile(exp, k, arch, diags).first);
  throw_if_errors(exp, std::move(diags));
  return images;
}

void prepare_user_kernel(CudaState& s, const Op& op) {
  const UserKernel& k = user_kernel(s.exp, op);
  auto& slot = s.libraries["kernel:" + k.name];  // one compilation per kernel, however many launches
  if (slot) {
    s.prepared[&op] = slot;
    return;
  }
  int device = 0;
  cudaDeviceProp p{};
  STREAMLAB_CUDA(cudaGetDevice(&device));
  STREAMLAB_CUDA(cudaGetDeviceProperties(&p, device));
  Diagnostics diags;
  auto [image, lowered] = compile(s.exp, k, fmt::format("sm_{}{}", p.major, p.minor), diags);
  throw_if_errors(s.exp, std::move(diags));
  auto loaded = std::make_shared<LoadedKernel>();
  STREAMLAB_CUDA(cudaLibraryLoadData(&loaded->library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  STREAMLAB_CUDA(cudaLibraryGetKernel(&loaded->kernel, loaded->library, lowered.c_str()));
  slot = std::move(loaded);
  s.prepared[&op] = slot;
}

void launch_user_kernel(CudaState& s, const Op& op) {
  const UserKernel& k = user_kernel(s.exp, op);
  const auto& loaded = s.prepared_for<LoadedKernel>(op);
  // Each argument in a slot of its declared C type; cudaLaunchKernel copies them.
  union Slot {
    void* ptr;
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
  } slots[kMaxUserParams];
  void* args[kMaxUserParams];
  for (size_t i = 0; i < k.params.size(); ++i) {
    const UserKernelParam& p = k.params[i];
    if (is_buffer_param(static_cast<ParamKind>(p.kind))) slots[i].ptr = s.at(op.args[i].range);
    else if (p.type == ElemType::int32) slots[i].i32 = static_cast<int32_t>(op.args[i].scalar);
    else if (p.type == ElemType::int64) slots[i].i64 = op.args[i].scalar;
    else if (p.type == ElemType::float32) slots[i].f32 = static_cast<float>(op.args[i].real);
    else slots[i].f64 = op.args[i].real;
    args[i] = &slots[i];
  }
  auto dim = [](const std::array<int64_t, 3>& d) {
    return dim3(static_cast<unsigned>(d[0]), static_cast<unsigned>(d[1]), static_cast<unsigned>(d[2]));
  };
  cudaError_t e = cudaLaunchKernel(reinterpret_cast<const void*>(loaded.kernel), dim(op.grid), dim(op.block), args,
                                   static_cast<size_t>(op.shared_bytes), s.streams[op.stream]);
  if (e != cudaSuccess) throw CudaError(e, fmt::format("launch of user kernel {}", k.name));
}

}  // namespace streamlab

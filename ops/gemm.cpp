// gemm: C = alpha * A * B + beta * C with cuBLAS (cublasGemmEx) in a stream. Matrices are row-major
// whole 2-D buffers, A [M, K], B [K, N], C [M, N]: float32, float64, or float16 / bfloat16 inputs
// with float32 accumulation (C of the input type or float32). The workspace policy is explicit:
// a device buffer the call may use, or none. cuBLAS is loaded when an experiment first needs it.
//
// Each call binds the handle to its stream and then its workspace (docs/semantics.md, L1:
// cublasSetStream resets the workspace), so one handle serves every stream; the workspace is
// written by the call (L2), so two calls that share one on unordered streams race, and the
// analyzer says so.
#include <cmath>
#include <cublas_v2.h>
#include <fmt/format.h>

#include "ops/library_op.hpp"
#include "ops/op_kind.hpp"
#include "runner/context/cuda_check.hpp"
#include "runner/context/cuda_state.hpp"
#include "runner/context/host_state.hpp"
#include "runner/context/library.hpp"
#include "runner/context/load_context.hpp"
#include "runner/core/half.hpp"

namespace streamlab {
namespace {

constexpr std::string_view kGemmKeys[] = {"a", "b", "c", "alpha?", "beta?", "workspace", "stream?"};
enum Arg { kA, kB, kC, kAlpha, kBeta };

struct Cublas {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetWorkspace_v2) set_workspace = nullptr;
  // The C entry point (cublas_api.h also declares a C++ overload taking a cudaDataType compute
  // type).
  cublasStatus_t (*gemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                         const void*, const void*, cudaDataType, int, const void*, cudaDataType,
                         int, const void*, void*, cudaDataType, int, cublasComputeType_t,
                         cublasGemmAlgo_t) = nullptr;
  decltype(&cublasGetStatusName) status_name = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
};

const Cublas& cublas() {
  static const Cublas api = [] {
    const SharedLibrary& lib =
        load_library({"cuBLAS", "libcublas.so.13", "STREAMLAB_CUBLAS", {"lib64", "lib"}});
    Cublas a;
    lib.resolve(a.create, "cublasCreate_v2");
    lib.resolve(a.destroy, "cublasDestroy_v2");
    lib.resolve(a.set_stream, "cublasSetStream_v2");
    lib.resolve(a.set_workspace, "cublasSetWorkspace_v2");
    lib.resolve(a.gemm, "cublasGemmEx");
    lib.resolve(a.status_name, "cublasGetStatusName");
    lib.resolve(a.status_string, "cublasGetStatusString");
    return a;
  }();
  return api;
}

void check(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw RunError(fmt::format("{} failed: {}: {}", call, cublas().status_name(status),
                             cublas().status_string(status)));
}

struct Shape {
  int64_t m, n, k;
};
Shape shape_of(const Experiment& exp, const Op& op) {
  const auto& a = exp.buffers[op.args[kA].range.buffer].shape;
  const auto& b = exp.buffers[op.args[kB].range.buffer].shape;
  return {a[0], b[1], a[1]};
}

bool half_type(ElemType t) { return t == ElemType::float16 || t == ElemType::bfloat16; }

void parse_gemm(MapReader& r, Op& op) {
  op.stream = r.stream("stream", false);
  op.device_work = true;
  op.args.resize(5);
  op.args[kAlpha].real = r.has("alpha") ? r.ctx.number(r.get("alpha"), "alpha").value_or(1) : 1;
  op.args[kBeta].real = r.has("beta") ? r.ctx.number(r.get("beta"), "beta").value_or(0) : 0;
  op.workspace = read_workspace(r);
  bool good = true;
  for (auto [arg, key] : {std::pair{kA, "a"}, {kB, "b"}, {kC, "c"}}) {
    auto m = read_matrix(r, key, 2);
    good = good && m.has_value();
    if (m) op.args[arg].range = *m;
  }
  if (!good) return;
  const Buffer& a = r.ctx.exp.buffers[op.args[kA].range.buffer];
  const Buffer& b = r.ctx.exp.buffers[op.args[kB].range.buffer];
  const Buffer& c = r.ctx.exp.buffers[op.args[kC].range.buffer];
  if (a.shape[1] != b.shape[0] || c.shape[0] != a.shape[0] || c.shape[1] != b.shape[1])
    return r.ctx.error(
        r.node(),
        fmt::format("gemm of A [{}, {}] and B [{}, {}] needs B [{}, N] and C [{}, {}]; '{}' is "
                    "[{}, {}] and '{}' is [{}, {}]",
                    a.shape[0], a.shape[1], b.shape[0], b.shape[1], a.shape[1], a.shape[0],
                    b.shape[1], b.name, b.shape[0], b.shape[1], c.name, c.shape[0], c.shape[1]));
  bool same_in = a.type == b.type;
  bool ok_types =
      same_in && ((a.type == ElemType::float32 && c.type == ElemType::float32) ||
                  (a.type == ElemType::float64 && c.type == ElemType::float64) ||
                  (half_type(a.type) && (c.type == a.type || c.type == ElemType::float32)));
  if (!ok_types)
    r.ctx.error(
        r.get("c"),
        fmt::format("gemm types: A {}, B {}, C {}; expected A and B of one type, and float32 -> "
                    "float32, float64 -> float64, float16 or bfloat16 -> the same or float32",
                    elem_type_name(a.type), elem_type_name(b.type), elem_type_name(c.type)));
}

// The host reference: each element summed in double over k, then rounded to C's type.
void host_gemm(HostState& s, const Op& op) {
  const Experiment& exp = s.exp;
  Shape d = shape_of(exp, op);
  Matrix a(exp, op.args[kA].range, s.at(op.args[kA].range));
  Matrix b(exp, op.args[kB].range, s.at(op.args[kB].range));
  Matrix c(exp, op.args[kC].range, s.at(op.args[kC].range));
  double alpha = op.args[kAlpha].real, beta = op.args[kBeta].real;
  std::vector<double> bt(static_cast<size_t>(d.k * d.n));  // B in double, once
  for (int64_t i = 0; i < d.k * d.n; ++i) bt[i] = b.get(i);
  parallel_for(d.m, [&](int64_t i) {
    std::vector<double> row(static_cast<size_t>(d.n), 0.0);
    for (int64_t p = 0; p < d.k; ++p) {
      double x = a.get(i * d.k + p);
      const double* brow = bt.data() + p * d.n;
      for (int64_t j = 0; j < d.n; ++j) row[j] += x * brow[j];
    }
    for (int64_t j = 0; j < d.n; ++j) {
      double old =
          beta == 0 ? 0 : beta * c.get(i * d.n + j);  // beta 0: C is not read (it may be poison)
      c.set(i * d.n + j, alpha * row[j] + old);
    }
  });
}

cudaDataType_t cuda_type(ElemType t) {
  switch (t) {
    case ElemType::float64:
      return CUDA_R_64F;
    case ElemType::float16:
      return CUDA_R_16F;
    case ElemType::bfloat16:
      return CUDA_R_16BF;
    default:
      return CUDA_R_32F;
  }
}

void cuda_gemm(CudaState& s, const Op& op);

// The handle, made by the first gemm; then one call of each gemm before the first repetition:
// cuBLAS loads its kernels on first use and may block the host doing so, which must not happen
// behind the start gate or in a timed repetition.
void prepare_gemm(CudaState& s, const Op& op) {
  if (!s.libraries.contains("cublas")) {
    cublasHandle_t h = nullptr;
    check(cublas().create(&h), "cublasCreate");
    s.libraries["cublas"] =
        std::shared_ptr<void>(h, [](void* p) { cublas().destroy(static_cast<cublasHandle_t>(p)); });
  }
  cuda_gemm(s, op);
  STREAMLAB_CUDA(cudaStreamSynchronize(s.streams[op.stream]));
}

void cuda_gemm(CudaState& s, const Op& op) {
  auto h = static_cast<cublasHandle_t>(s.libraries.at("cublas").get());
  check(cublas().set_stream(h, s.streams[op.stream]), "cublasSetStream");
  // After cublasSetStream, which resets the workspace to cuBLAS's own pool.
  void* ws = op.workspace.valid() ? s.at(op.workspace) : nullptr;
  size_t ws_bytes =
      op.workspace.valid() ? static_cast<size_t>(range_bytes(s.exp, op.workspace)) : 0;
  check(cublas().set_workspace(h, ws, ws_bytes), "cublasSetWorkspace");
  Shape d = shape_of(s.exp, op);
  ElemType in = s.exp.buffers[op.args[kA].range.buffer].type,
           out = s.exp.buffers[op.args[kC].range.buffer].type;
  double alpha64 = op.args[kAlpha].real, beta64 = op.args[kBeta].real;
  auto alpha32 = static_cast<float>(alpha64), beta32 = static_cast<float>(beta64);
  bool f64 = in == ElemType::float64;
  // Row-major C = A B is column-major C^T = B^T A^T: cuBLAS gets B first, with the dimensions
  // swapped.
  check(cublas().gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(d.n), static_cast<int>(d.m),
                      static_cast<int>(d.k), f64 ? static_cast<const void*>(&alpha64) : &alpha32,
                      s.at(op.args[kB].range), cuda_type(in), static_cast<int>(d.n),
                      s.at(op.args[kA].range), cuda_type(in), static_cast<int>(d.k),
                      f64 ? static_cast<const void*>(&beta64) : &beta32, s.at(op.args[kC].range),
                      cuda_type(out), static_cast<int>(d.n),
                      f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
}

std::string describe_gemm(const Experiment& exp, const Op& op) {
  Shape d = shape_of(exp, op);
  const auto& bufs = exp.buffers;
  return fmt::format("{} = {:g}*{}*{}{} ({}x{}x{}, {} -> {}; workspace {})",
                     bufs[op.args[kC].range.buffer].name, op.args[kAlpha].real,
                     bufs[op.args[kA].range.buffer].name, bufs[op.args[kB].range.buffer].name,
                     op.args[kBeta].real != 0 ? fmt::format(" + {:g}*C", op.args[kBeta].real) : "",
                     d.m, d.n, d.k, elem_type_name(bufs[op.args[kA].range.buffer].type),
                     elem_type_name(bufs[op.args[kC].range.buffer].type),
                     op.workspace.valid() ? range_name(exp, op.workspace) : "none");
}

int64_t gemm_bytes(const Experiment& exp, const Op& op) {
  int64_t c = range_bytes(exp, op.args[kC].range);
  return range_bytes(exp, op.args[kA].range) + range_bytes(exp, op.args[kB].range) +
         (op.args[kBeta].real != 0 ? 2 : 1) * c;
}

std::vector<Access> gemm_accesses(const Experiment& exp, const Op& op) {
  if (op.args.size() < 3 || !op.args[kC].range.valid()) return {};
  std::vector<Access> out = {
      {op.args[kA].range, false}, {op.args[kB].range, false}, {op.args[kC].range, true}};
  if (op.args[kBeta].real != 0) out.push_back({op.args[kC].range, false});
  add_workspace_access(exp, op, out);
  return out;
}

// cuBLAS at the profile's rate for the input type: 2mnk flops, or its bytes at memory speed.
Work gemm_work(const Experiment& exp, const Op& op, const DeviceProfile& p) {
  Shape d = shape_of(exp, op);
  auto type = std::string(elem_type_name(exp.buffers[op.args[kA].range.buffer].type));
  auto rate = p.gemm_tflops.find(type);
  Work w = device_filling_work(p, 2.0 * static_cast<double>(d.m) * static_cast<double>(d.n) * static_cast<double>(d.k),
                               rate == p.gemm_tflops.end() ? NAN : rate->second, op.kind->bytes(exp, op));
  if (rate == p.gemm_tflops.end()) w.unknown = fmt::format("the profile has no GEMM rate for {}", type);
  return w;
}

}  // namespace

extern const OpKind kGemm = {
    .name = "gemm",
    .summary =
        "C = alpha*A*B + beta*C by cuBLAS in a stream (row-major A [M,K], B [K,N], C [M,N]; "
        "workspace: a device buffer, or none)",
    .keys = kGemmKeys,
    .parse = parse_gemm,
    .run_host = host_gemm,
    .run_cuda = cuda_gemm,
    .describe = describe_gemm,
    .blocks_host = never_blocks,
    .bytes = gemm_bytes,
    .accesses = gemm_accesses,
    .order = order_in_stream,
    .lint = no_lint,
    .prepare_cuda = prepare_gemm,
    .host_reference = true,
    .engine = compute_engine,
    .work = gemm_work,
};

}  // namespace streamlab

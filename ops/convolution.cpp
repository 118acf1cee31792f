// convolutionForward: y = conv(x, w) with cuDNN (cudnnConvolutionForward) in a stream, bound with
// cudnnSetStream. NCHW tensors, float32 or float16 (both accumulate in float32), cross-correlation
// as deep-learning frameworks define convolution. The algorithm is named or chosen by cuDNN's
// heuristics among those whose workspace fits; the workspace is a device buffer or none, and every
// call writes it, so two unordered convolutions sharing one race (the analyzer reports it).
// cuDNN is loaded when an experiment first needs it.
#include <cmath>
#include <cudnn.h>
#include <fmt/format.h>

#include "ops/library_op.hpp"
#include "ops/op_kind.hpp"
#include "runner/context/cuda_check.hpp"
#include "runner/context/cuda_state.hpp"
#include "runner/context/host_state.hpp"
#include "runner/context/library.hpp"
#include "runner/context/load_context.hpp"

namespace streamlab {
namespace {

constexpr std::string_view kConvKeys[] = {"x",         "w",     "y",         "pad?",   "stride?",
                                          "dilation?", "algo?", "workspace", "stream?"};
enum Arg { kX, kW, kY, kPadH, kPadW, kStrideH, kStrideW, kDilH, kDilW, kArgs };

// CUDNN_CONVOLUTION_FWD_ALGO_*, in enum order.
const std::vector<std::string> kAlgos = {
    "implicit_gemm", "implicit_precomp_gemm", "gemm", "direct", "fft", "fft_tiling",
    "winograd",      "winograd_nonfused"};

struct Cudnn {
  decltype(&cudnnCreate) create = nullptr;
  decltype(&cudnnDestroy) destroy = nullptr;
  decltype(&cudnnSetStream) set_stream = nullptr;
  decltype(&cudnnGetErrorString) error_string = nullptr;
  decltype(&cudnnCreateTensorDescriptor) create_tensor = nullptr;
  decltype(&cudnnSetTensor4dDescriptor) set_tensor = nullptr;
  decltype(&cudnnDestroyTensorDescriptor) destroy_tensor = nullptr;
  decltype(&cudnnCreateFilterDescriptor) create_filter = nullptr;
  decltype(&cudnnSetFilter4dDescriptor) set_filter = nullptr;
  decltype(&cudnnDestroyFilterDescriptor) destroy_filter = nullptr;
  decltype(&cudnnCreateConvolutionDescriptor) create_conv = nullptr;
  decltype(&cudnnSetConvolution2dDescriptor) set_conv = nullptr;
  decltype(&cudnnSetConvolutionMathType) set_math = nullptr;
  decltype(&cudnnDestroyConvolutionDescriptor) destroy_conv = nullptr;
  decltype(&cudnnGetConvolutionForwardAlgorithm_v7) heuristics = nullptr;
  decltype(&cudnnGetConvolutionForwardWorkspaceSize) workspace_size = nullptr;
  decltype(&cudnnConvolutionForward) forward = nullptr;
};

const Cudnn& cudnn() {
  static const Cudnn api = [] {
    const SharedLibrary& lib =
        load_library({"cuDNN", "libcudnn.so.9", "STREAMLAB_CUDNN", {"lib64", "lib"}});
    Cudnn a;
    lib.resolve(a.create, "cudnnCreate");
    lib.resolve(a.destroy, "cudnnDestroy");
    lib.resolve(a.set_stream, "cudnnSetStream");
    lib.resolve(a.error_string, "cudnnGetErrorString");
    lib.resolve(a.create_tensor, "cudnnCreateTensorDescriptor");
    lib.resolve(a.set_tensor, "cudnnSetTensor4dDescriptor");
    lib.resolve(a.destroy_tensor, "cudnnDestroyTensorDescriptor");
    lib.resolve(a.create_filter, "cudnnCreateFilterDescriptor");
    lib.resolve(a.set_filter, "cudnnSetFilter4dDescriptor");
    lib.resolve(a.destroy_filter, "cudnnDestroyFilterDescriptor");
    lib.resolve(a.create_conv, "cudnnCreateConvolutionDescriptor");
    lib.resolve(a.set_conv, "cudnnSetConvolution2dDescriptor");
    lib.resolve(a.set_math, "cudnnSetConvolutionMathType");
    lib.resolve(a.destroy_conv, "cudnnDestroyConvolutionDescriptor");
    lib.resolve(a.heuristics, "cudnnGetConvolutionForwardAlgorithm_v7");
    lib.resolve(a.workspace_size, "cudnnGetConvolutionForwardWorkspaceSize");
    lib.resolve(a.forward, "cudnnConvolutionForward");
    return a;
  }();
  return api;
}

void check(cudnnStatus_t status, const char* call) {
  if (status != CUDNN_STATUS_SUCCESS)
    throw RunError(fmt::format("{} failed: {}", call, cudnn().error_string(status)));
}

struct Geometry {
  int64_t n, c, h, w, k, r, s, p, q;
  int64_t pad[2], stride[2], dil[2];
};

// The output extent of one spatial dimension.
int64_t out_extent(int64_t in, int64_t filter, int64_t pad, int64_t stride, int64_t dil) {
  return (in + 2 * pad - dil * (filter - 1) - 1) / stride + 1;
}

Geometry geometry(const Experiment& exp, const Op& op) {
  const auto& x = exp.buffers[op.args[kX].range.buffer].shape;
  const auto& w = exp.buffers[op.args[kW].range.buffer].shape;
  Geometry g{x[0], x[1], x[2], x[3], w[0], w[2], w[3], 0, 0, {}, {}, {}};
  for (int i = 0; i < 2; ++i)
    g.pad[i] = op.args[kPadH + i].scalar, g.stride[i] = op.args[kStrideH + i].scalar,
    g.dil[i] = op.args[kDilH + i].scalar;
  g.p = out_extent(g.h, g.r, g.pad[0], g.stride[0], g.dil[0]);
  g.q = out_extent(g.w, g.s, g.pad[1], g.stride[1], g.dil[1]);
  return g;
}

// `key: [h, w]` of non-negative (pad) or positive (stride, dilation) integers, small enough that
// the output extent's arithmetic cannot overflow and cuDNN's int parameters hold them.
constexpr int64_t kMaxConvParam = 1 << 20;
void read_pair(MapReader& r, std::string_view key, Op& op, int first, int64_t fallback,
               int64_t least) {
  op.args[first].scalar = op.args[first + 1].scalar = fallback;
  if (!r.has(key)) return;
  YAML::Node node = r.get(key);
  if (!node.IsSequence() || node.size() != 2)
    return r.ctx.error(node, fmt::format("{}: expected [h, w], got {}", key, describe_node(node)));
  for (int i = 0; i < 2; ++i) {
    auto v = r.ctx.integer(node[i], key);
    if (v && (*v < least || *v > kMaxConvParam))
      r.ctx.error(node[i], fmt::format("{}: {} is outside {}..{}", key, *v, least, kMaxConvParam));
    else if (v)
      op.args[first + i].scalar = *v;
  }
}

void check_shapes(MapReader& r, const Op& op) {
  const Experiment& exp = r.ctx.exp;
  const Buffer& x = exp.buffers[op.args[kX].range.buffer];
  const Buffer& w = exp.buffers[op.args[kW].range.buffer];
  const Buffer& y = exp.buffers[op.args[kY].range.buffer];
  if (x.type != w.type || x.type != y.type ||
      (x.type != ElemType::float32 && x.type != ElemType::float16))
    return r.ctx.error(
        r.node(),
        fmt::format("convolutionForward types: x {}, w {}, y {}; expected all float32 or all "
                    "float16",
                    elem_type_name(x.type), elem_type_name(w.type), elem_type_name(y.type)));
  for (const Buffer* b : {&x, &w, &y})
    for (int64_t d : b->shape)
      if (d > INT32_MAX)  // cuDNN's descriptors take int
        return r.ctx.error(r.node(), fmt::format("'{}' has an extent of {}; cuDNN takes at most {}",
                                                 b->name, d, INT32_MAX));
  if (w.shape[1] != x.shape[1])
    return r.ctx.error(r.get("w"), fmt::format("w [K, C, R, S] has C = {}; x has {} channels",
                                               w.shape[1], x.shape[1]));
  Geometry g = geometry(exp, op);
  if (g.p < 1 || g.q < 1)
    return r.ctx.error(
        r.get("w"), fmt::format("the filter ({}x{}) is larger than the padded input ({}x{})", g.r,
                                g.s, g.h + 2 * g.pad[0], g.w + 2 * g.pad[1]));
  std::vector<int64_t> want = {g.n, g.k, g.p, g.q};
  if (y.shape != want)
    r.ctx.error(
        r.get("y"),
        fmt::format("y must have shape [{}] (N, K, P, Q for this x, w, pad, stride and dilation); "
                    "'{}' is [{}]",
                    fmt::join(want, ", "), y.name, fmt::join(y.shape, ", ")));
}

void parse_conv(MapReader& r, Op& op) {
  op.stream = r.stream("stream", false);
  op.device_work = true;
  op.args.resize(kArgs);
  read_pair(r, "pad", op, kPadH, 0, 0);
  read_pair(r, "stride", op, kStrideH, 1, 1);
  read_pair(r, "dilation", op, kDilH, 1, 1);
  if (r.has("algo") && !(r.get("algo").IsScalar() && r.get("algo").Scalar() == "auto"))
    op.algo = static_cast<int>(r.ctx.choice(r.get("algo"), "algo", kAlgos).value_or(0));
  op.workspace = read_workspace(r);
  bool good = true;
  for (auto [arg, key] : {std::pair{kX, "x"}, {kW, "w"}, {kY, "y"}}) {
    auto m = read_matrix(r, key, 4);
    good = good && m.has_value();
    if (m) op.args[arg].range = *m;
  }
  if (good) check_shapes(r, op);
}

// The host reference: every output element summed in double, then rounded to y's type.
void host_conv(HostState& s, const Op& op) {
  Geometry g = geometry(s.exp, op);
  auto doubles = [&](int arg) {  // converted once: the loops below read each element many times
    Matrix m(s.exp, op.args[arg].range, s.at(op.args[arg].range));
    std::vector<double> v(static_cast<size_t>(op.args[arg].range.count));
    for (size_t i = 0; i < v.size(); ++i) v[i] = m.get(static_cast<int64_t>(i));
    return v;
  };
  const std::vector<double> x = doubles(kX), w = doubles(kW);
  Matrix y(s.exp, op.args[kY].range, s.at(op.args[kY].range));
  parallel_for(g.n * g.k, [&](int64_t nk) {
    int64_t n = nk / g.k, k = nk % g.k;
    std::vector<double> plane(static_cast<size_t>(g.p * g.q), 0.0);
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t r = 0; r < g.r; ++r)
        for (int64_t t = 0; t < g.s; ++t) {
          double wv = w[((k * g.c + c) * g.r + r) * g.s + t];
          const double* xc = x.data() + (n * g.c + c) * g.h * g.w;
          for (int64_t p = 0; p < g.p; ++p) {
            int64_t h = p * g.stride[0] - g.pad[0] + r * g.dil[0];
            if (h < 0 || h >= g.h) continue;
            for (int64_t q = 0; q < g.q; ++q) {
              int64_t v = q * g.stride[1] - g.pad[1] + t * g.dil[1];
              if (v >= 0 && v < g.w) plane[p * g.q + q] += xc[h * g.w + v] * wv;
            }
          }
        }
    for (int64_t i = 0; i < g.p * g.q; ++i) y.set((n * g.k + k) * g.p * g.q + i, plane[i]);
  });
}

// Descriptors and the algorithm of one convolution, made once.
struct ConvPlan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t algo{};
  ConvPlan() = default;
  ConvPlan(const ConvPlan&) = delete;
  ConvPlan& operator=(const ConvPlan&) = delete;
  ~ConvPlan() {
    if (x) cudnn().destroy_tensor(x);
    if (y) cudnn().destroy_tensor(y);
    if (w) cudnn().destroy_filter(w);
    if (conv) cudnn().destroy_conv(conv);
  }
};

cudnnHandle_t cudnn_handle(CudaState& s) {
  auto& slot = s.libraries["cudnn"];
  if (!slot) {
    cudnnHandle_t h = nullptr;
    check(cudnn().create(&h), "cudnnCreate");
    slot =
        std::shared_ptr<void>(h, [](void* p) { cudnn().destroy(static_cast<cudnnHandle_t>(p)); });
  }
  return static_cast<cudnnHandle_t>(slot.get());
}

void describe_tensors(ConvPlan& plan, const Geometry& g, cudnnDataType_t type) {
  auto i = [](int64_t v) { return static_cast<int>(v); };
  check(cudnn().create_tensor(&plan.x), "cudnnCreateTensorDescriptor");
  check(cudnn().set_tensor(plan.x, CUDNN_TENSOR_NCHW, type, i(g.n), i(g.c), i(g.h), i(g.w)),
        "cudnnSetTensor4dDescriptor");
  check(cudnn().create_tensor(&plan.y), "cudnnCreateTensorDescriptor");
  check(cudnn().set_tensor(plan.y, CUDNN_TENSOR_NCHW, type, i(g.n), i(g.k), i(g.p), i(g.q)),
        "cudnnSetTensor4dDescriptor");
  check(cudnn().create_filter(&plan.w), "cudnnCreateFilterDescriptor");
  check(cudnn().set_filter(plan.w, type, CUDNN_TENSOR_NCHW, i(g.k), i(g.c), i(g.r), i(g.s)),
        "cudnnSetFilter4dDescriptor");
  check(cudnn().create_conv(&plan.conv), "cudnnCreateConvolutionDescriptor");
  check(cudnn().set_conv(plan.conv, i(g.pad[0]), i(g.pad[1]), i(g.stride[0]), i(g.stride[1]),
                         i(g.dil[0]), i(g.dil[1]), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
        "cudnnSetConvolution2dDescriptor");
  // float32: FMA only, no TF32 tensor cores, so results match a float32 reference; float16: tensor
  // cores.
  check(
      cudnn().set_math(plan.conv, type == CUDNN_DATA_HALF ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH),
      "cudnnSetConvolutionMathType");
}

// The named algorithm, or the best-ranked of cuDNN's heuristics whose workspace fits.
cudnnConvolutionFwdAlgo_t choose_algo(cudnnHandle_t h, const ConvPlan& plan, const Op& op,
                                      size_t ws_bytes, std::string& why) {
  if (op.algo >= 0) {
    auto algo = static_cast<cudnnConvolutionFwdAlgo_t>(op.algo);
    size_t need = 0;
    cudnnStatus_t st = cudnn().workspace_size(h, plan.x, plan.w, plan.conv, plan.y, algo, &need);
    if (st != CUDNN_STATUS_SUCCESS)
      throw RunError(fmt::format("algo {} cannot compute this convolution: {}", kAlgos[op.algo],
                                 cudnn().error_string(st)));
    if (need > ws_bytes)
      throw RunError(fmt::format("algo {} needs {} bytes of workspace; it has {}", kAlgos[op.algo],
                                 need, ws_bytes));
    why = fmt::format("{} (named; workspace {} of {} bytes)", kAlgos[op.algo], need, ws_bytes);
    return algo;
  }
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int count = 0;
  check(cudnn().heuristics(h, plan.x, plan.w, plan.conv, plan.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                           &count, perf),
        "cudnnGetConvolutionForwardAlgorithm_v7");
  for (int i = 0; i < count; ++i) {
    size_t need = 0;  // asked again: the heuristics' own figure is an estimate
    if (perf[i].status != CUDNN_STATUS_SUCCESS ||
        cudnn().workspace_size(h, plan.x, plan.w, plan.conv, plan.y, perf[i].algo, &need) !=
            CUDNN_STATUS_SUCCESS ||
        need > ws_bytes)
      continue;
    why = fmt::format("{} (cuDNN's heuristics, rank {}; workspace {} of {} bytes)",
                      kAlgos[perf[i].algo], i + 1, need, ws_bytes);
    return perf[i].algo;
  }
  throw RunError(
      fmt::format("no algorithm of cuDNN's heuristics fits a workspace of {} bytes", ws_bytes));
}

void cuda_conv(CudaState& s, const Op& op);

// One call before the first repetition: cuDNN loads and initializes its kernels on first use, and
// may block the host doing so, which must not happen behind the start gate or in a timed
// repetition.
void warm_up(CudaState& s, const Op& op) {
  cuda_conv(s, op);
  STREAMLAB_CUDA(cudaStreamSynchronize(s.streams[op.stream]));
}

void prepare_conv(CudaState& s, const Op& op) {
  cudnnHandle_t h = cudnn_handle(s);
  auto plan = std::make_shared<ConvPlan>();
  bool half = s.exp.buffers[op.args[kX].range.buffer].type == ElemType::float16;
  describe_tensors(*plan, geometry(s.exp, op), half ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT);
  size_t ws_bytes =
      op.workspace.valid() ? static_cast<size_t>(range_bytes(s.exp, op.workspace)) : 0;
  std::string why;
  plan->algo = choose_algo(h, *plan, op, ws_bytes, why);
  s.notes.push_back(fmt::format("op '{}': cuDNN algorithm {}", op.id, why));
  s.prepared[&op] = std::move(plan);
  warm_up(s, op);
}

void cuda_conv(CudaState& s, const Op& op) {
  cudnnHandle_t h = cudnn_handle(s);
  const auto& plan = s.prepared_for<ConvPlan>(op);
  check(cudnn().set_stream(h, s.streams[op.stream]), "cudnnSetStream");
  float alpha = 1, beta = 0;
  void* ws = op.workspace.valid() ? s.at(op.workspace) : nullptr;
  size_t ws_bytes =
      op.workspace.valid() ? static_cast<size_t>(range_bytes(s.exp, op.workspace)) : 0;
  check(cudnn().forward(h, &alpha, plan.x, s.at(op.args[kX].range), plan.w, s.at(op.args[kW].range),
                        plan.conv, plan.algo, ws, ws_bytes, &beta, plan.y, s.at(op.args[kY].range)),
        fmt::format("cudnnConvolutionForward (algo {}, workspace {} bytes)", kAlgos[plan.algo],
                    ws_bytes)
            .c_str());
}

std::string describe_conv(const Experiment& exp, const Op& op) {
  Geometry g = geometry(exp, op);
  const auto& b = exp.buffers;
  return fmt::format(
      "{} = conv({} [{}x{}x{}x{}], {} [{}x{}x{}x{}]) pad {}x{} stride {}x{}, {}; algo {}, "
      "workspace {}",
      b[op.args[kY].range.buffer].name, b[op.args[kX].range.buffer].name, g.n, g.c, g.h, g.w,
      b[op.args[kW].range.buffer].name, g.k, g.c, g.r, g.s, g.pad[0], g.pad[1], g.stride[0],
      g.stride[1], elem_type_name(b[op.args[kX].range.buffer].type),
      op.algo >= 0 ? kAlgos[op.algo] : "auto",
      op.workspace.valid() ? range_name(exp, op.workspace) : "none");
}

int64_t conv_bytes(const Experiment& exp, const Op& op) {
  return range_bytes(exp, op.args[kX].range) + range_bytes(exp, op.args[kW].range) +
         range_bytes(exp, op.args[kY].range);
}

std::vector<Access> conv_accesses(const Experiment& exp, const Op& op) {
  if (op.args.size() < kArgs || !op.args[kY].range.valid()) return {};
  std::vector<Access> out = {
      {op.args[kX].range, false}, {op.args[kW].range, false}, {op.args[kY].range, true}};
  add_workspace_access(exp, op, out);
  return out;
}

// cuDNN at the profile's rate for the input type: 2 flops per multiply-add of the direct form.
Work conv_work(const Experiment& exp, const Op& op, const DeviceProfile& p) {
  Geometry g = geometry(exp, op);
  double flops = 2.0 * static_cast<double>(g.n) * static_cast<double>(g.k) * static_cast<double>(g.c) *
                 static_cast<double>(g.r) * static_cast<double>(g.s) * static_cast<double>(g.p) *
                 static_cast<double>(g.q);
  auto type = std::string(elem_type_name(exp.buffers[op.args[kX].range.buffer].type));
  auto rate = p.conv_tflops.find(type);
  Work w = device_filling_work(p, flops, rate == p.conv_tflops.end() ? NAN : rate->second,
                               op.kind->bytes(exp, op));
  if (rate == p.conv_tflops.end()) w.unknown = fmt::format("the profile has no convolution rate for {}", type);
  return w;
}

}  // namespace

extern const OpKind kConvolutionForward = {
    .name = "convolutionForward",
    .summary =
        "y = conv(x, w) by cuDNN in a stream (NCHW float32/float16; algo named or auto; workspace: "
        "a device buffer, or none)",
    .keys = kConvKeys,
    .parse = parse_conv,
    .run_host = host_conv,
    .run_cuda = cuda_conv,
    .describe = describe_conv,
    .blocks_host = never_blocks,
    .bytes = conv_bytes,
    .accesses = conv_accesses,
    .order = order_in_stream,
    .lint = no_lint,
    .prepare_cuda = prepare_conv,
    .host_reference = true,
    .engine = compute_engine,
    .work = conv_work,
};

}  // namespace streamlab

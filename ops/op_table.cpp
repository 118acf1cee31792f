// The table of op kinds. Adding an op: its file under ops/ (CMake finds it), its declaration and
// its line here, the schema, a test and an experiment.
#include "ops/op_kind.hpp"
#include "runner/context/happens_before.hpp"

namespace streamlab {

extern const OpKind kMemcpy, kMemcpyAsync;                              // copy.cpp
extern const OpKind kMemset, kMemsetAsync;                              // memset.cpp
extern const OpKind kLaunch;                                            // launch.cpp
extern const OpKind kEventRecord, kStreamWaitEvent, kEventSynchronize;  // event.cpp
extern const OpKind kStreamSynchronize, kDeviceSynchronize;             // sync.cpp
extern const OpKind kLaunchHostFunc;                                    // host_func.cpp
extern const OpKind kStreamQuery, kEventQuery;                          // query.cpp
extern const OpKind kMalloc, kFree, kMallocHost, kFreeHost, kMallocAsync, kFreeAsync;  // alloc.cpp
extern const OpKind kGraph;                                                            // graph.cpp
extern const OpKind kGemm;                                                             // gemm.cpp
extern const OpKind kConvolutionForward;                                 // convolution.cpp
extern const OpKind kAllReduce, kBroadcast, kReduceScatter, kAllGather;  // nccl.cpp
extern const OpKind kMemPrefetchAsync;                                   // mem_prefetch.cpp

namespace {

const OpKind* const kOps[] = {
    &kMemcpy,
    &kMemcpyAsync,
    &kMemset,
    &kMemsetAsync,
    &kLaunch,
    &kEventRecord,
    &kStreamWaitEvent,
    &kEventSynchronize,
    &kStreamSynchronize,
    &kDeviceSynchronize,
    &kLaunchHostFunc,
    &kStreamQuery,
    &kEventQuery,
    &kMalloc,
    &kFree,
    &kMallocHost,
    &kFreeHost,
    &kMallocAsync,
    &kFreeAsync,
    &kGraph,
    &kGemm,
    &kConvolutionForward,
    &kAllReduce,
    &kBroadcast,
    &kReduceScatter,
    &kAllGather,
    &kMemPrefetchAsync,
};

}  // namespace

std::span<const OpKind* const> op_table() { return kOps; }

const OpKind* find_op_kind(std::string_view name) {
  for (const OpKind* k : kOps)
    if (k->name == name) return k;
  return nullptr;
}

void order_in_stream(HappensBefore& hb, const Experiment&, const Op& op) {
  hb.stream_op(op.stream);
}

std::vector<int> buffers_to_restore(const Experiment& exp) {
  std::vector<bool> written(exp.buffers.size());
  for (const Op& op : exp.ops)
    for (const Access& a : op.kind->accesses(exp, op))
      if (a.write) written[a.range.buffer] = true;
  std::vector<int> out;
  for (size_t b = 0; b < exp.buffers.size(); ++b)
    if (written[b] && exp.buffers[b].init.kind != InitSpec::Kind::none)
      out.push_back(static_cast<int>(b));
  return out;
}

}  // namespace streamlab

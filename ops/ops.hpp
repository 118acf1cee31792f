#pragma once
// The op kinds defined under ops/, one per runtime API call; registry.cpp puts them in a table.
#include "ops/op.hpp"

namespace streamlab {

extern const OpKind kMemcpy, kMemcpyAsync;                            // copy.cpp
extern const OpKind kMemset, kMemsetAsync;                            // memset.cpp
extern const OpKind kLaunch;                                          // launch.cpp
extern const OpKind kEventRecord, kStreamWaitEvent, kEventSynchronize;  // event.cpp
extern const OpKind kStreamSynchronize, kDeviceSynchronize;           // sync.cpp
extern const OpKind kLaunchHostFunc;                                  // host_func.cpp
extern const OpKind kStreamQuery, kEventQuery;                        // query.cpp
extern const OpKind kMalloc, kFree, kMallocHost, kFreeHost, kMallocAsync, kFreeAsync;  // alloc.cpp
extern const OpKind kGraph;                                           // graph.cpp
extern const OpKind kGemm;                                            // gemm.cpp
extern const OpKind kConvolutionForward;                              // convolution.cpp
extern const OpKind kAllReduce, kBroadcast, kReduceScatter, kAllGather;  // nccl.cpp

}  // namespace streamlab

#pragma once
// An NVTX range named by an op's id around its API call, so Nsight Systems (or any NVTX tool)
// shows the experiment's names. Header-only NVTX 3 from the CUDA toolkit: without a tool
// attached a range costs a branch.
#include <string>

#include <nvtx3/nvToolsExt.h>

namespace streamlab {

class NvtxRange {
 public:
  explicit NvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace streamlab

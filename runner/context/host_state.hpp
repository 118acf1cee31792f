#pragma once
#include <cstddef>
#include <memory>
#include <vector>

#include "runner/core/experiment.hpp"

namespace streamlab {

// What the host backend's ops work on: every buffer, whatever its memory kind, is host memory.
struct HostState {
  const Experiment& exp;
  std::vector<std::byte*> buffers;  // by buffer index
  std::vector<int> answers;  // per op: what a query answered (always 1: work is done in order)
  std::vector<std::unique_ptr<std::byte[]>> op_allocated;  // buffers allocated by ops, by index
  std::byte* at(const BufferRange& r) const {
    return buffers[r.buffer] + range_offset_bytes(exp, r);
  }
};

}  // namespace streamlab

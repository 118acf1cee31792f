#pragma once
// What the library ops (gemm, convolutionForward) share: their operands (whole device buffers of a
// given rank), their workspace policy, and typed element access for their host references.
#include <cstddef>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "ops/op_kind.hpp"

namespace streamlab {

class MapReader;

// `workspace: NAME` (a device buffer the call may use, whole) or `workspace: none`. Required: where
// a library's scratch memory lives decides whether two streams may call it at once.
BufferRange read_workspace(MapReader& r);
// A whole buffer the device can reach, with `rank` dimensions.
std::optional<BufferRange> read_matrix(MapReader& r, std::string_view key, size_t rank);
// The workspace is written by every call (docs/semantics.md, L2): two unordered calls sharing one
// race.
void add_workspace_access(const Experiment& exp, const Op& op, std::vector<Access>& out);

// f(i) for i in [0, n), split over the host's cores: host references of large GEMMs and
// convolutions would otherwise take minutes.
void parallel_for(int64_t n, const std::function<void(int64_t)>& f);

// The elements of a range as doubles, whatever their type (host references compute in double).
class Matrix {
 public:
  Matrix(const Experiment& exp, const BufferRange& r, std::byte* data);
  double get(int64_t i) const;
  void set(int64_t i, double v);

 private:
  ElemType type_;
  std::byte* data_;
};

}  // namespace streamlab

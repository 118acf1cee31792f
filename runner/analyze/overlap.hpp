#pragma once
// The analyzer's advice on overlap (docs/check.md): work that could overlap but is confined to
// one stream, a host synchronization in a loop that makes the iterations take turns, and copies
// too small for overlap to matter. Read from the facts of the analyzer's walk; internal to
// runner/analyze.
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "ops/op_kind.hpp"
#include "runner/context/happens_before.hpp"
#include "runner/core/experiment.hpp"
#include "runner/core/findings.hpp"

namespace streamlab {

struct WalkFacts {
  std::vector<std::optional<StreamPoint>> at;  // per op: where it runs, if stream-ordered
  std::vector<std::vector<Access>> accesses;   // per op: what it touches (stream-ordered ops)
  // An op in a loop, with no device work of its own, that made the host wait for streams.
  struct HostWait {
    int op = -1;
    std::vector<int> streams;  // whose work the host waited for in it
  };
  std::vector<HostWait> host_waits;
};

// Analyzes another op list of the experiment (a fix applied), for checking that a fix creates no
// new finding.
using Reanalyze = std::function<Findings(std::vector<Op>)>;

// Adds one-stream, sync-in-loop and overhead-bound findings for the top-level op list.
void find_overlap_pitfalls(const Experiment& exp, std::span<const Op> ops, const WalkFacts& facts,
                           Findings& out, const Reanalyze& reanalyze);

}  // namespace streamlab

#include "ops/start_gate_rule.hpp"

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "ops/op_kind.hpp"

namespace streamlab {

size_t first_blocking_op(const Experiment& exp) {
  for (size_t i = 0; i < exp.ops.size(); ++i)
    if (exp.ops[i].kind->blocks_host(exp, exp.ops[i])) return i;
  return exp.ops.size();
}

bool launches_block(const Experiment& exp) {
  // The process's own environment too: grade applies a submission's `env:` to the whole process
  // (its peers run under it), and a shell may have set it.
  const char* set = std::getenv("CUDA_LAUNCH_BLOCKING");
  if (set && std::string_view(set) == "1") return true;
  return std::any_of(exp.env.begin(), exp.env.end(), [](const auto& e) {
    return e.first == "CUDA_LAUNCH_BLOCKING" && e.second == "1";
  });
}

size_t gate_opens_before(const Experiment& exp) {
  if (!exp.gate || launches_block(exp)) return 0;
  return std::min({first_blocking_op(exp), exp.ops.size(), kGateMaxHeld});
}

}  // namespace streamlab

#pragma once
// Checks of final buffer contents (`checks:`), one table entry per kind: how it is read from YAML
// and how it compares. They run after the last repetition, on the final contents.
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/experiment.hpp"
#include "runner/core/record.hpp"

namespace YAML {
class Node;  // yaml-cpp: only load reads YAML
}

namespace streamlab {

class LoadContext;

// The final contents of buffer `index`, in host memory.
using BufferContents = std::function<std::span<const std::byte>(int index)>;

void load_checks(LoadContext& ctx, const YAML::Node& node);
// `gpu_results`: the contents come from the GPU (checks that expect a mismatch need them).
CheckResult run_check(const Experiment& exp, const CheckSpec& check, const BufferContents& contents,
                      bool gpu_results);
std::vector<CheckResult> run_checks(const Experiment& exp, const BufferContents& contents,
                                    bool gpu_results);

struct CheckKindInfo {
  std::string_view name, fields, summary;
};
std::vector<CheckKindInfo> check_kinds();  // for `streamlab list`

// An element of `type` at `data` as text: "17", "-3", "0.5".
std::string format_element(ElemType type, const std::byte* data);
// "[3, 5]" for a multi-dimensional shape, "[7]" otherwise.
std::string format_index(const std::vector<int64_t>& shape, int64_t flat);

}  // namespace streamlab

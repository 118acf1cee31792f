#pragma once
// The build's identity. Placeholder until the build computes the commit.
#include <string>
namespace streamlab {
inline std::string build_commit() { return "unknown"; }
}  // namespace streamlab

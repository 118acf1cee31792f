#include "runner/core/errors.hpp"

#include <fmt/format.h>

namespace streamlab {

std::string op_context(const Op& op) {
  return fmt::format("op '{}' ({}:{}:{})", op.id, op.loc.file, op.loc.line, op.loc.col);
}

}  // namespace streamlab

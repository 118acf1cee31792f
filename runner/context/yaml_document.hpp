#pragma once
// The first step of load: an experiment's text to one YAML document, refusing what yaml-cpp would
// accept but streamlab must not: bytes that are not printable UTF-8 text (a NUL cuts off every
// message after it; an escape sequence would reach the terminal of whoever reads the diagnostics),
// a second document (it would be dropped), and aliases (`*name`) that expand the document past
// limits::kYamlNodes nodes or refer to the node they are in (a graph that contains itself).
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "runner/core/diagnostics.hpp"

namespace streamlab {

// The document, or a Null node with the problems in `diags` (located in `file`).
YAML::Node parse_document(const std::string& text, const std::string& file, Diagnostics& diags);

}  // namespace streamlab

#pragma once
// How every JSON report becomes text.
#include <string>

#include <nlohmann/json.hpp>

namespace streamlab {

// `doc` (a json, or an ordered_json that keeps its keys in insertion order) as text with a final
// newline (`indent` -1: one line). Bytes that are not UTF-8 (a path given on the command line, a
// tool's message) become U+FFFD, rather than an exception after the run.
template <class Json>
std::string json_text(const Json& doc, int indent = 2) {
  return doc.dump(indent, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace streamlab

#include "runner/context/load_context.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "runner/core/findings.hpp"
#include "runner/core/limits.hpp"
#include "runner/core/suggest.hpp"

namespace streamlab {

SourceLoc LoadContext::loc(const YAML::Node& node) const {
  YAML::Mark m = node.Mark();
  if (m.is_null()) return {file, 0, 0};
  return {file, m.line + 1, m.column + 1};
}

void LoadContext::error(const YAML::Node& node, std::string message) {
  diags.error(loc(node), std::move(message));
}

// With `array: E`, the names NAME[0] .. NAME[E-1]; without, NAME alone.
std::vector<std::string> array_names(LoadContext& ctx, MapReader& r, const std::string& name) {
  if (!r.has("array")) return {name};
  auto size = ctx.integer(r.get("array"), "array");
  if (!size) return {};
  if (*size < 1 || *size > limits::kArray) {
    ctx.error(r.get("array"),
              fmt::format("array: {} elements; expected 1..{}", *size, limits::kArray));
    return {};
  }
  std::vector<std::string> names;
  for (int64_t i = 0; i < *size; ++i) names.push_back(fmt::format("{}[{}]", name, i));
  return names;
}

BlockLevel::BlockLevel(LoadContext& ctx, const YAML::Node& at)
    : ctx_(ctx), ok_(++ctx.block_depth <= limits::kBlockDepth) {
  if (!ok_)
    ctx.error(at,
              fmt::format("loops and graphs nest deeper than {} levels here", limits::kBlockDepth));
}

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

std::string describe_node(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return node.size() == 0 ? "an empty mapping" : "a mapping";
    case YAML::NodeType::Sequence:
      return node.size() == 0 ? "an empty list" : "a list";
    case YAML::NodeType::Scalar:
      return "'" + node.Scalar() + "'";
    default:
      return "nothing";
  }
}

std::optional<int64_t> LoadContext::integer(const YAML::Node& node, std::string_view what) {
  if (!node.IsDefined()) return std::nullopt;
  if (!node.IsScalar()) {
    error(node, fmt::format("{}: expected an integer or an integer expression, got {}", what,
                            describe_node(node)));
    return std::nullopt;
  }
  auto result = evaluate(node.Scalar(), params);
  if (auto* value = std::get_if<int64_t>(&result)) return *value;
  const auto& e = std::get<ExprError>(result);
  if (broken_params.contains(e.unknown_name)) return std::nullopt;
  SourceLoc at = loc(node);
  // Quoted scalars (tag "!") start one column before their text.
  at.col += static_cast<int>(e.offset) + (node.Tag() == "!" ? 1 : 0);
  diags.error(at, fmt::format("{}: {}", what, e.message));
  return std::nullopt;
}

std::optional<double> LoadContext::number(const YAML::Node& node, std::string_view what) {
  if (!node.IsDefined()) return std::nullopt;
  if (node.IsScalar()) {
    auto result = evaluate(node.Scalar(), params);
    if (auto* value = std::get_if<int64_t>(&result)) return static_cast<double>(*value);
    if (broken_params.contains(std::get<ExprError>(result).unknown_name)) return std::nullopt;
    const std::string& text = node.Scalar();
    char* end = nullptr;
    double d = std::strtod(text.c_str(), &end);
    if (!text.empty() && end == text.c_str() + text.size()) {
      if (std::isfinite(d)) return d;
      error(node, fmt::format("{}: {} is not a finite number", what, describe_node(node)));
      return std::nullopt;
    }
  }
  error(node, fmt::format("{}: expected a number or an integer expression, got {}", what,
                          describe_node(node)));
  return std::nullopt;
}

std::optional<std::string> LoadContext::indexed_name(const YAML::Node& node,
                                                     std::string_view what) {
  auto text = scalar(node, what);
  if (!text) return std::nullopt;
  size_t open = text->find('[');
  if (open == std::string::npos || text->back() != ']') return text;
  auto result = evaluate(std::string_view(*text).substr(open + 1, text->size() - open - 2), params);
  if (auto* value = std::get_if<int64_t>(&result))
    return fmt::format("{}[{}]", text->substr(0, open), *value);
  const auto& e = std::get<ExprError>(result);
  if (broken_params.contains(e.unknown_name)) return std::nullopt;
  SourceLoc at = loc(node);
  at.col += static_cast<int>(open + 1 + e.offset) + (node.Tag() == "!" ? 1 : 0);
  diags.error(at, fmt::format("{} index: {}", what, e.message));
  return std::nullopt;
}

std::optional<std::string> LoadContext::id(const YAML::Node& node) {
  auto id = indexed_name(node, "id");
  if (!id || is_identifier(id->substr(0, id->find('[')))) return id;
  error(node, fmt::format("id '{}' is not an identifier (letters, digits and '_', with an "
                          "optional [index])",
                          *id));
  return std::nullopt;
}

std::optional<std::string> LoadContext::scalar(const YAML::Node& node, std::string_view what) {
  if (!node.IsDefined()) return std::nullopt;
  if (node.IsScalar()) return node.Scalar();
  error(node, fmt::format("{}: expected a name, got {}", what, describe_node(node)));
  return std::nullopt;
}

std::optional<size_t> LoadContext::choice(const YAML::Node& node, std::string_view what,
                                          const std::vector<std::string>& choices) {
  auto text = scalar(node, what);
  if (!text) return std::nullopt;
  for (size_t i = 0; i < choices.size(); ++i)
    if (choices[i] == *text) return i;
  error(node, fmt::format("unknown {} '{}'{} (expected one of: {})", what, *text,
                          did_you_mean(*text, choices), join(choices)));
  return std::nullopt;
}

template <class T>
std::optional<int> LoadContext::lookup(const YAML::Node& node, std::string_view kind,
                                       const std::vector<T>& items) {
  auto name = indexed_name(node, kind);
  if (!name) return std::nullopt;
  for (size_t i = 0; i < items.size(); ++i)
    if (items[i].name == *name) return static_cast<int>(i);
  if (diags.full()) {  // not kept: not worth building
    diags.error(loc(node), "");
    return std::nullopt;
  }
  std::vector<std::string> names;  // not found: the names, for the message
  for (const auto& item : items) names.push_back(item.name);
  if (size_t open = name->find('['); open != std::string::npos && name->back() != ']') {
    error(node, fmt::format("{} {}: expected ']' after the index", kind, *name));
    return std::nullopt;
  }
  if (size_t open = name->find('['); open != std::string::npos) {  // an index past an array's end?
    std::string base = name->substr(0, open + 1);
    int64_t size = std::count_if(names.begin(), names.end(),
                                 [&](const std::string& n) { return n.rfind(base, 0) == 0; });
    if (size > 0) {
      error(node, fmt::format("{} {} is outside the array: '{}' has {} elements, {}0] to {}{}]",
                              kind, *name, base.substr(0, open), size, base, base, size - 1));
      return std::nullopt;
    }
  }
  error(node, unknown_name(kind, *name, names, std::string(kind) + "s"));
  return std::nullopt;
}

std::optional<int> LoadContext::buffer(const YAML::Node& node) {
  return lookup(node, "buffer", exp.buffers);
}
std::optional<int> LoadContext::stream(const YAML::Node& node) {
  // The per-thread default stream exists in every program; it joins the experiment when named.
  bool declared = std::any_of(exp.streams.begin(), exp.streams.end(),
                              [](const Stream& s) { return s.per_thread; });
  if (!declared && node.IsScalar() && node.Scalar() == kPerThreadStreamName) {
    exp.streams.push_back(
        {.name = std::string(kPerThreadStreamName), .loc = loc(node), .per_thread = true});
  }
  return lookup(node, "stream", exp.streams);
}
std::optional<int> LoadContext::event(const YAML::Node& node) {
  return lookup(node, "event", exp.events);
}

std::optional<BufferRange> LoadContext::range(const YAML::Node& node) {
  if (!node.IsMap()) {
    auto b = buffer(node);
    if (!b) return std::nullopt;
    return BufferRange{*b, 0, exp.buffers[*b].count};
  }
  MapReader r(*this, node, "buffer range", {"buffer", "offset?", "count?"});
  int b = r.buffer("buffer");
  auto offset = r.has("offset") ? integer(r.get("offset"), "offset") : std::optional<int64_t>(0);
  if (!r.ok() || b < 0 || !offset) return std::nullopt;
  const Buffer& buf = exp.buffers[b];
  if (*offset < 0 || *offset >= buf.count) {
    error(r.get("offset"), fmt::format("offset {} is outside buffer '{}' (elements 0..{})", *offset,
                                       buf.name, buf.count - 1));
    return std::nullopt;
  }
  auto count = r.has("count") ? integer(r.get("count"), "count")
                              : std::optional<int64_t>(buf.count - *offset);
  if (!count) return std::nullopt;
  if (*count < 1 || *count > buf.count - *offset) {
    error(r.get("count"),
          fmt::format("count {} at offset {} does not fit buffer '{}' ({} elements; at most {} "
                      "from there)",
                      *count, *offset, buf.name, buf.count, buf.count - *offset));
    return std::nullopt;
  }
  return BufferRange{b, *offset, *count};
}

std::optional<std::array<int64_t, 3>> LoadContext::dims(const YAML::Node& node,
                                                        std::string_view what) {
  if (!node.IsDefined()) return std::nullopt;
  if (node.IsScalar()) {  // a single dimension may be written without brackets
    auto x = integer(node, what);
    if (!x) return std::nullopt;
    if (*x < 1) {
      error(node, fmt::format("{}: {} is not a positive size", what, *x));
      return std::nullopt;
    }
    return std::array<int64_t, 3>{*x, 1, 1};
  }
  if (!node.IsSequence() || node.size() < 1 || node.size() > 3) {
    error(node, fmt::format("{}: expected a list of 1 to 3 sizes [x, y, z], got {}", what,
                            describe_node(node)));
    return std::nullopt;
  }
  std::array<int64_t, 3> out{1, 1, 1};
  bool good = true;
  for (size_t i = 0; i < node.size(); ++i) {
    auto v = integer(node[i], what);
    if (v && *v < 1) error(node[i], fmt::format("{}: {} is not a positive size", what, *v));
    if (!v || *v < 1)
      good = false;
    else
      out[i] = *v;
  }
  return good ? std::optional(out) : std::nullopt;
}

}  // namespace streamlab

// MapReader: one YAML mapping read key by key, knowing which keys it accepts, and the `allow:`
// lists that ops and checks carry.
#include <algorithm>

#include <fmt/format.h>

#include "runner/context/load_context.hpp"
#include "runner/core/findings.hpp"
#include "runner/core/suggest.hpp"

namespace streamlab {

MapReader::MapReader(LoadContext& c, const YAML::Node& node, std::string what,
                     const std::vector<std::string>& keys)
    : ctx(c), node_(node), what_(std::move(what)) {
  if (node.IsNull()) {  // an empty body (`deviceSynchronize:`) reads as an empty mapping
    ok_ = true;
    return;
  }
  if (!node.IsMap()) {
    ctx.error(node, fmt::format("{}: expected a mapping {{key: value, ...}}, got {}", what_,
                                describe_node(node)));
    return;
  }
  ok_ = true;
  entries_.reserve(node.size());
  for (auto it = node.begin(); it != node.end(); ++it) {
    const auto entry = *it;  // each it-> would build the key and value nodes again
    if (!entry.first.IsScalar()) {  // `[a, b]: 1` or `{a: 1}: 2`
      ctx.error(entry.first, fmt::format("a key in {} must be a plain name, got {}", what_,
                                         describe_node(entry.first)));
      continue;
    }
    std::string key = entry.first.Scalar();
    if (has(key)) {
      ctx.error(entry.first, fmt::format("duplicate key '{}' in {}", key, what_));
      continue;
    }
    bool known = std::any_of(keys.begin(), keys.end(),
                             [&](const std::string& k) { return key_name(k) == key; });
    if (!known) {
      std::vector<std::string> names;
      for (const auto& k : keys) names.emplace_back(key_name(k));
      ctx.error(entry.first, fmt::format("unknown key '{}' in {}{} (expected: {})", key, what_,
                                         did_you_mean(key, names), join(names)));
    }
    entries_.push_back({std::move(key), entry.first, entry.second});
  }
}

bool MapReader::has(std::string_view key) const {
  for (const auto& e : entries_)
    if (e.key == key) return true;
  return false;
}

YAML::Node MapReader::get(std::string_view key) const {
  for (const auto& e : entries_)
    if (e.key == key) return e.value;
  return YAML::Node(YAML::NodeType::Undefined);
}

YAML::Node MapReader::require(std::string_view key) {
  if (ok_ && !has(key)) ctx.error(node_, fmt::format("missing '{}' in {}", key, what_));
  return get(key);
}

int MapReader::buffer(std::string_view key) { return ctx.buffer(require(key)).value_or(-1); }
BufferRange MapReader::range(std::string_view key) {
  return ctx.range(require(key)).value_or(BufferRange{});
}
int MapReader::event(std::string_view key) { return ctx.event(require(key)).value_or(-1); }

int MapReader::stream(std::string_view key, bool required) {
  YAML::Node n = required ? require(key) : get(key);
  if (!n.IsDefined()) return required ? -1 : kLegacyStream;  // CUDA's default: stream 0
  return ctx.stream(n).value_or(-1);
}

Allow read_allow(MapReader& r) {
  Allow allow;
  if (!r.has("allow")) return allow;
  YAML::Node node = r.get("allow");
  allow.loc = r.ctx.loc(node);
  if (!node.IsSequence()) {
    r.ctx.error(node,
                fmt::format("allow: expected a list of diagnostic codes (e.g. [race]), got {}",
                            describe_node(node)));
    return allow;
  }
  std::vector<std::string> codes;
  for (const auto& c : finding_kinds()) codes.emplace_back(c.code);
  for (const auto& item : node)
    if (auto i = r.ctx.choice(item, "diagnostic code in allow", codes))
      allow.codes.push_back(codes[*i]);
  return allow;
}

std::string_view key_name(std::string_view key) {
  return key_optional(key) ? key.substr(0, key.size() - 1) : key;
}

bool key_optional(std::string_view key) { return !key.empty() && key.back() == '?'; }

}  // namespace streamlab

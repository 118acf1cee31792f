#include "runner/check/items.hpp"

#include <fmt/format.h>

#include "runner/context/load_context.hpp"
#include "runner/core/limits.hpp"

namespace streamlab {

void add_item_keys(std::vector<std::string>& keys) {
  for (std::string_view k : kItemKeys) keys.emplace_back(k);
}

namespace {

void read_points(MapReader& r, ItemMeta& m) {
  if (!r.has("points")) return;
  auto points = r.ctx.number(r.get("points"), "points");
  if (!points) return;
  if (*points < 0 || *points > 1e6)
    return r.ctx.error(r.get("points"),
                       fmt::format("points: {:g}; expected a number from 0 to 1000000", *points));
  m.points = *points + 0.0;  // -0 as 0
  m.points_given = true;
}

void read_id(MapReader& r, ItemMeta& m) {
  auto id = r.ctx.id(r.get("id"));
  if (!id) return;
  auto [earlier, fresh] = r.ctx.item_ids.try_emplace(*id, r.ctx.loc(r.get("id")).line);
  if (!fresh)
    return r.ctx.error(r.get("id"), fmt::format("the id '{}' of a check or expectation is used "
                                                "twice (first at line {})",
                                                *id, earlier->second));
  m.id = *id;
}

}  // namespace

ItemMeta read_item_meta(MapReader& r) {
  ItemMeta m;
  if (r.has("id")) read_id(r, m);
  if (r.has("name")) m.name = r.ctx.scalar(r.get("name"), "name").value_or("");
  read_points(r, m);
  if (r.has("visibility")) {
    static const std::vector<std::string> kinds = {"visible", "hidden", "after_due_date"};
    if (auto v = r.ctx.choice(r.get("visibility"), "visibility", kinds))
      m.visibility = static_cast<Visibility>(*v);
  }
  return m;
}

namespace {

void load_items(LoadContext& ctx, const YAML::Node& node, std::string_view section,
                const std::function<void(const YAML::Node&)>& load_one);

// `- loop: {var, count, SECTION: [...]}`, as load_ops reads a loop of ops.
void load_item_loop(LoadContext& ctx, const YAML::Node& body, std::string_view section,
                    const std::function<void(const YAML::Node&)>& load_one) {
  MapReader r(ctx, body, "loop", {"var", "count", std::string(section)});
  if (!r.ok()) return;
  auto var = ctx.scalar(r.require("var"), "loop var");
  auto count = ctx.integer(r.require("count"), "loop count");
  YAML::Node items = r.require(section);
  if (!var || !count || !items.IsDefined()) return;
  if (!is_identifier(*var) || ctx.params.contains(*var))
    return ctx.error(r.get("var"), fmt::format("loop var '{}' {}", *var,
                                               is_identifier(*var) ? "is already a param"
                                                                   : "is not an identifier"));
  if (*count < 0 || *count > limits::kItems)
    return ctx.error(r.get("count"),
                     fmt::format("loop count {}; expected 0 to {}", *count, limits::kItems));
  BlockLevel level(ctx, body);
  if (!level.ok()) return;
  size_t errors = ctx.diags.count();
  ctx.item_loop_vars.push_back(*var);
  for (int64_t v = 0; v < *count; ++v) {
    if (++ctx.loop_iterations > limits::kLoopIterations) {
      ctx.error(r.get("count"), fmt::format("loops repeat their bodies more than {} times in all",
                                            limits::kLoopIterations));
      break;
    }
    ctx.params[*var] = v;
    load_items(ctx, items, section, load_one);
    if (ctx.diags.count() > errors) break;  // the same mistake once, not once per iteration
  }
  ctx.item_loop_vars.pop_back();
  ctx.params.erase(*var);
}

void load_items(LoadContext& ctx, const YAML::Node& node, std::string_view section,
                const std::function<void(const YAML::Node&)>& load_one) {
  if (!node.IsSequence()) {
    ctx.error(node, fmt::format("{}: expected a list, got {}", section, describe_node(node)));
    return;
  }
  for (const auto& item : node) {
    if (item.IsMap() && item.size() == 1 && item.begin()->first.IsScalar() &&
        item.begin()->first.Scalar() == "loop") {
      load_item_loop(ctx, item.begin()->second, section, load_one);
      continue;
    }
    if (++ctx.items_read > limits::kItems) {
      if (ctx.items_read == limits::kItems + 1)
        ctx.error(item, fmt::format("more than {} checks and expectations, with loops expanded",
                                    limits::kItems));
      return;
    }
    load_one(item);
  }
}

}  // namespace

void for_each_item(LoadContext& ctx, const YAML::Node& node, std::string_view section,
                   const std::function<void(const YAML::Node&)>& load_one) {
  if (!node.IsDefined() || node.IsNull()) return;
  load_items(ctx, node, section, load_one);
}

}  // namespace streamlab

#pragma once
// What checks and expectations share as graded items: `id`, `name`, `points` and `visibility`,
// and `loop`s that repeat them as loops repeat ops. Internal to runner/check.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/experiment.hpp"

namespace YAML {
class Node;
}

namespace streamlab {

class LoadContext;
class MapReader;

// The keys an item accepts besides its own.
inline constexpr std::string_view kItemKeys[] = {"id?", "name?", "points?", "visibility?"};
void add_item_keys(std::vector<std::string>& keys);

// Reads `id`, `name`, `points` and `visibility` of the item `r` reads. An id is unique among
// the experiment's checks and expectations.
ItemMeta read_item_meta(MapReader& r);

// Calls `load_one` for each item of the list `node` (the `checks:` or `expect:` section), with
// `- loop: {var: i, count: E, SECTION: [...]}` expanded: the body once per value of `var`, a param
// inside it. Loops nest; every item counts towards limits::kItems.
void for_each_item(LoadContext& ctx, const YAML::Node& node, std::string_view section,
                   const std::function<void(const YAML::Node&)>& load_one);

}  // namespace streamlab

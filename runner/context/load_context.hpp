#pragma once
// Shared machinery of load: typed readers of YAML nodes that report problems as diagnostics
// (file:line:col, what was expected) and keep going, so one run shows every problem.
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "runner/core/diagnostics.hpp"
#include "runner/core/experiment.hpp"
#include "runner/core/expr.hpp"

namespace streamlab {

class LoadContext {
 public:
  LoadContext(Experiment& experiment, Diagnostics& diagnostics)
      : exp(experiment), diags(diagnostics), file(experiment.file) {}

  SourceLoc loc(const YAML::Node& node) const;
  void error(const YAML::Node& node, std::string message);

  // An integer expression over the params (a YAML integer is one too); `what` names the field.
  std::optional<int64_t> integer(const YAML::Node& node, std::string_view what);
  // A number: an integer expression, or a YAML floating-point literal.
  std::optional<double> number(const YAML::Node& node, std::string_view what);
  // A plain scalar string.
  std::optional<std::string> scalar(const YAML::Node& node, std::string_view what);
  // A name, where `NAME[EXPR]` (an element of an array; an op id in a loop) becomes NAME[value].
  std::optional<std::string> indexed_name(const YAML::Node& node, std::string_view what);
  // An `id`: an identifier, with an optional [index] (`k[i]` in a loop).
  std::optional<std::string> id(const YAML::Node& node);
  // One of `choices`; returns its index.
  std::optional<size_t> choice(const YAML::Node& node, std::string_view what,
                               const std::vector<std::string>& choices);
  // Names of declared things, resolved to indices (unknown names get a suggestion).
  std::optional<int> buffer(const YAML::Node& node);
  std::optional<int> stream(const YAML::Node& node);
  // A buffer name (the whole buffer) or {buffer: NAME, offset: E, count: E}, count defaulting to
  // the rest of the buffer; the range must lie inside it.
  std::optional<BufferRange> range(const YAML::Node& node);
  std::optional<int> event(const YAML::Node& node);
  // A list of 1 to 3 positive integer expressions (grid, block); missing entries are 1.
  std::optional<std::array<int64_t, 3>> dims(const YAML::Node& node, std::string_view what);

  Experiment& exp;
  Diagnostics& diags;
  // The file the YAML being read comes from: the experiment's, or a rubric's whose items are
  // read into a submission.
  std::string file;
  ParamScope params;
  // Params whose own expression was invalid (already reported): expressions using them are
  // not reported again.
  std::set<std::string, std::less<>> broken_params;
  // Every op id given so far (graph bodies included), with its line: ids are unique in the whole
  // experiment, and checking that must not cost a scan of every earlier op.
  std::unordered_map<std::string, int> op_ids;
  // Every id of a check or an expectation, with its line.
  std::unordered_map<std::string, int> item_ids;
  int64_t items_read = 0;                   // checks and expectations read so far, loops expanded
  int64_t expectation_op_refs = 0;          // ops named by expectations' op sets so far
  std::vector<std::string> item_loop_vars;  // the variables of the loops around the item read
  int block_depth = 0;                      // loops and graphs open around the op being read
  // Graphs open around the op being read: such an op is captured, not part of `exp.ops`, so it
  // has no index there and must not mark buffers' lifetimes.
  int capture_depth = 0;
  std::vector<LoopLevel> loop_stack;        // the loops open around the op being read
  LoopStack loops;                          // the same, shared by the ops of one iteration
  int loop_instances = 0;                   // loop expansions so far
  int64_t kernel_source_bytes = 0;          // user kernels' sources and headers, read so far
  // The experiment's lines, indexed once, for whatever needs a line of it during load.
  const SourceLines& source_lines() {
    if (!lines_) lines_.emplace(exp.source);
    return *lines_;
  }
  int64_t loop_iterations = 0;  // bodies repeated by loops so far, in all
  int64_t expanded_ops = 0;     // ops read so far, graph bodies included

  // Declares one more of `items` (streams, events, buffers) at `node`: false, reported once, past
  // `limit`.
  template <class T>
  bool room_for(const YAML::Node& node, const std::vector<T>& items, int64_t limit,
                std::string_view what) {
    if (static_cast<int64_t>(items.size()) < limit) return true;
    if (full_.insert(std::string(what)).second)
      error(node,
            fmt::format("more than {} {}: an experiment declares at most {}", limit, what, limit));
    return false;
  }

 private:
  template <class T>
  std::optional<int> lookup(const YAML::Node& node, std::string_view kind,
                            const std::vector<T>& items);
  std::set<std::string> full_;  // kinds of declarations whose limit was reported
  std::optional<SourceLines> lines_;
};

// One level of loops or graphs around the ops being read: false, reported, past
// limits::kBlockDepth (each level is a stack frame of load).
class BlockLevel {
 public:
  BlockLevel(LoadContext& ctx, const YAML::Node& at);
  ~BlockLevel() { --ctx_.block_depth; }
  BlockLevel(const BlockLevel&) = delete;
  BlockLevel& operator=(const BlockLevel&) = delete;
  bool ok() const { return ok_; }

 private:
  LoadContext& ctx_;
  bool ok_;
};

// A key a mapping accepts, as op kinds list them: a trailing `?` marks it optional.
// key_name("stream?") is "stream".
std::string_view key_name(std::string_view key);
bool key_optional(std::string_view key);

// Reads one YAML mapping, knowing which keys it accepts: unknown keys (with a suggestion),
// duplicate keys and a non-mapping node are reported at construction; missing required keys
// when asked for with require().
class MapReader {
 public:
  MapReader(LoadContext& ctx, const YAML::Node& node, std::string what,
            const std::vector<std::string>& keys);

  bool ok() const { return ok_; }
  const YAML::Node& node() const { return node_; }
  const std::string& what() const { return what_; }
  bool has(std::string_view key) const;
  YAML::Node get(std::string_view key) const;  // an undefined node when absent
  YAML::Node require(std::string_view key);    // reports "missing 'key'" when absent
  // Typed shortcuts: -1 / nullopt when absent (required ones report it) or invalid.
  int buffer(std::string_view key);
  BufferRange range(std::string_view key);  // invalid (buffer -1) when absent or wrong
  int event(std::string_view key);
  int stream(std::string_view key, bool required);

  LoadContext& ctx;

 private:
  struct Entry {
    std::string key;
    YAML::Node key_node, value;
  };
  YAML::Node node_;
  std::string what_;
  std::vector<Entry> entries_;
  bool ok_ = false;
};

bool is_identifier(const std::string& s);

// A list of ops (loops expanded) appended to `out`: the body of a graph. Their default ids start
// with `prefix` ("g.memcpyAsync#2").
void load_op_list(LoadContext& ctx, const YAML::Node& node, std::vector<Op>& out,
                  std::string_view prefix);

// `allow: [code, ...]` of an op or a check, if `r` has one: codes of findings.hpp.
Allow read_allow(MapReader& r);

// The names a declaration makes: NAME, or with `array: E` (read from `r`) NAME[0] .. NAME[E-1].
std::vector<std::string> array_names(LoadContext& ctx, MapReader& r, const std::string& name);

// What the node holds, for "expected X, got Y" messages: "a mapping", "a list", "'abc'".
std::string describe_node(const YAML::Node& node);

// Checks a declared name (a mapping key): an identifier, not declared twice among `earlier`.
template <class T>
bool check_declared_name(LoadContext& ctx, const YAML::Node& key, const std::vector<T>& earlier,
                         std::string_view kind) {
  const std::string name = key.IsScalar() ? key.Scalar() : "";
  if (!is_identifier(name)) {
    ctx.error(key,
              fmt::format("{} name {} is not an identifier (letters, digits and '_', not starting "
                          "with a digit)",
                          kind, describe_node(key)));
    return false;
  }
  for (const auto& e : earlier)
    if (e.name == name) {
      ctx.error(
          key, fmt::format("{} '{}' is declared twice (first at line {})", kind, name, e.loc.line));
      return false;
    }
  return true;
}

}  // namespace streamlab

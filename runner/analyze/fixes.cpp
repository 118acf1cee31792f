#include "runner/analyze/fixes.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>

namespace streamlab {

std::string yaml_scalar(std::string_view text) {
  static const char* kWords[] = {"true", "false", "yes", "no", "on", "off", "null", "y", "n"};
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  bool plain =
      !text.empty() && (std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_');
  for (char c : text)
    plain =
        plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-');
  for (const char* w : kWords) plain = plain && lower != w;
  if (plain) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string stream_name_ref(const Experiment& exp, int stream) {
  return yaml_scalar(exp.streams[static_cast<size_t>(stream)].name);
}

std::string stream_ref(const Experiment& exp, const Op& op) {
  return op.stream_text.empty() ? stream_name_ref(exp, op.stream) : yaml_scalar(op.stream_text);
}

bool same_iteration(const Op& a, const Op& b) {
  if (outside_loops(a) || outside_loops(b)) return outside_loops(a) && outside_loops(b);
  if (a.loops == b.loops) return true;
  if (a.loops->size() != b.loops->size()) return false;
  for (size_t i = 0; i < a.loops->size(); ++i)
    if ((*a.loops)[i].instance != (*b.loops)[i].instance ||
        (*a.loops)[i].value != (*b.loops)[i].value)
      return false;
  return true;
}

namespace {

std::vector<std::string> split_lines(std::string_view source) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= source.size()) {
    size_t end = source.find('\n', start);
    if (end == std::string_view::npos) {
      if (start < source.size()) lines.emplace_back(source.substr(start));
      break;
    }
    lines.emplace_back(source.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

int indentation(const std::string& line) {
  size_t i = line.find_first_not_of(' ');
  return i == std::string::npos ? -1 : static_cast<int>(i);
}

// A line with nothing but spaces or a comment.
bool blank(const std::string& line) {
  int i = indentation(line);
  return i < 0 || line[static_cast<size_t>(i)] == '#';
}

// The line without a trailing comment (a '#' after a space, outside quotes), right-trimmed.
std::string without_comment(const std::string& line) {
  char quote = 0;
  size_t end = line.size();
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote) {
      if (c == '\\' && quote == '"')
        ++i;
      else if (c == quote)
        quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && (i == 0 || line[i - 1] == ' ')) {
      end = i;
      break;
    }
  }
  std::string out = line.substr(0, end);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// The column of the '-' of a block list item on `line` (0-based index), or -1.
int dash_column(const std::vector<std::string>& lines, int index) {
  if (index < 0 || index >= static_cast<int>(lines.size())) return -1;
  const std::string& l = lines[static_cast<size_t>(index)];
  int i = indentation(l);
  if (i < 0 || l[static_cast<size_t>(i)] != '-' || static_cast<size_t>(i) + 1 >= l.size() ||
      l[static_cast<size_t>(i) + 1] != ' ')
    return -1;
  return i;
}

// The last line (0-based) of the item starting at `index`: its continuation lines are those
// indented past its '-'.
int item_end(const std::vector<std::string>& lines, int index, int dash) {
  int end = index;
  for (int k = index + 1; k < static_cast<int>(lines.size()); ++k) {
    if (blank(lines[static_cast<size_t>(k)])) continue;
    if (indentation(lines[static_cast<size_t>(k)]) <= dash) break;
    end = k;
  }
  return end;
}

// The 0-based line of a top-level key `name:`, or -1.
int top_level(const std::vector<std::string>& lines, std::string_view name) {
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].starts_with(name) && lines[i].size() > name.size() && lines[i][name.size()] == ':')
      return static_cast<int>(i);
  return -1;
}

// One change of lines, against the original text: erase `erase` lines at `at`, insert `insert`.
// `content`: it replaces what is at `at` (a replaced line), and so goes after what other changes
// insert there.
struct Change {
  int at = 0, erase = 0;
  std::vector<std::string> insert;
  bool content = false;
};

std::optional<Change> item_change(const std::vector<std::string>& lines, const Edit& e) {
  int index = e.line - 1, dash = dash_column(lines, index);
  if (dash < 0) return std::nullopt;
  std::string indented = std::string(static_cast<size_t>(dash), ' ') + e.text;
  if (e.kind == Edit::Kind::insert_before) return Change{index, 0, {indented}};
  int end = item_end(lines, index, dash);
  if (e.kind == Edit::Kind::insert_after) return Change{end + 1, 0, {indented}};
  return Change{index, end - index + 1, {}, true};  // remove
}

std::optional<Change> append_change(const std::vector<std::string>& lines, const Edit& e) {
  int ops = top_level(lines, "ops");
  if (ops < 0 || !without_comment(lines[static_cast<size_t>(ops)]).ends_with(":"))
    return std::nullopt;
  int last = -1, dash = -1;
  for (int k = ops + 1; k < static_cast<int>(lines.size()); ++k) {
    if (blank(lines[static_cast<size_t>(k)])) continue;
    if (indentation(lines[static_cast<size_t>(k)]) == 0) break;
    if (dash < 0) dash = dash_column(lines, k);
    last = k;
  }
  if (dash < 0) return std::nullopt;
  return Change{last + 1, 0, {std::string(static_cast<size_t>(dash), ' ') + e.text}};
}

std::optional<Change> declare_change(const std::vector<std::string>& lines, const Edit& e) {
  int at = top_level(lines, e.section);
  if (at < 0) {
    int ops = top_level(lines, "ops");
    if (ops < 0) return std::nullopt;
    return Change{ops, 0, {e.section + ":", "  " + e.text}};
  }
  std::string line = without_comment(lines[static_cast<size_t>(at)]);
  std::string rest = line.substr(e.section.size() + 1);
  rest.erase(0, rest.find_first_not_of(' '));
  if (rest.empty()) {
    int indent = 2;
    for (int k = at + 1; k < static_cast<int>(lines.size()); ++k)
      if (!blank(lines[static_cast<size_t>(k)])) {
        if (indentation(lines[static_cast<size_t>(k)]) > 0)
          indent = indentation(lines[static_cast<size_t>(k)]);
        break;
      }
    return Change{at + 1, 0, {std::string(static_cast<size_t>(indent), ' ') + e.text}};
  }
  if (rest.front() != '{' || rest.back() != '}') return std::nullopt;
  std::string inner = rest.substr(1, rest.size() - 2);
  bool empty = inner.find_first_not_of(' ') == std::string::npos;
  return Change{at, 1, {e.section + ": {" + e.text + (empty ? "" : ", " + inner) + "}"}, true};
}

std::optional<Change> replace_change(const std::vector<std::string>& lines, const Edit& e) {
  int index = e.line - 1;
  if (index < 0 || index >= static_cast<int>(lines.size())) return std::nullopt;
  std::string line = lines[static_cast<size_t>(index)];
  size_t at = line.find(e.old);
  if (at == std::string::npos) return std::nullopt;
  line.replace(at, e.old.size(), e.text);
  return Change{index, 1, {line}, true};
}

std::optional<Change> change_of(const std::vector<std::string>& lines, const Edit& e) {
  switch (e.kind) {
    case Edit::Kind::insert_after:
    case Edit::Kind::insert_before:
    case Edit::Kind::remove:
      return item_change(lines, e);
    case Edit::Kind::append_op:
      return append_change(lines, e);
    case Edit::Kind::replace:
      return replace_change(lines, e);
    case Edit::Kind::declare:
      return declare_change(lines, e);
  }
  return std::nullopt;
}

}  // namespace

bool is_block_item(std::string_view source, const SourceLoc& key) {
  std::vector<std::string> lines = split_lines(source);
  return key.col >= 3 && dash_column(lines, key.line - 1) == key.col - 3;
}

std::optional<std::string> item_text(std::string_view source, int line) {
  std::vector<std::string> lines = split_lines(source);
  int index = line - 1, dash = dash_column(lines, index);
  if (dash < 0 || item_end(lines, index, dash) != index) return std::nullopt;
  return without_comment(lines[static_cast<size_t>(index)]).substr(static_cast<size_t>(dash) + 2);
}

std::optional<std::string> apply_edits(std::string_view source, const std::vector<Edit>& edits) {
  std::vector<std::string> lines = split_lines(source);
  std::vector<Change> changes;
  for (const Edit& e : edits) {
    auto c = change_of(lines, e);
    if (!c) return std::nullopt;
    changes.push_back(std::move(*c));
  }
  // From the bottom up, so that each change's line numbers still hold. At one place: what is
  // erased there goes, then the insertions in the order the edits were made, then new content.
  std::stable_sort(changes.begin(), changes.end(),
                   [](const Change& a, const Change& b) { return a.at > b.at; });
  for (size_t k = 0; k < changes.size();) {
    size_t end = k;
    int erase = 0;
    std::vector<std::string> inserted, content;
    for (; end < changes.size() && changes[end].at == changes[k].at; ++end) {
      const Change& c = changes[end];
      erase = std::max(erase, c.erase);
      auto& into = c.content ? content : inserted;
      into.insert(into.end(), c.insert.begin(), c.insert.end());
    }
    inserted.insert(inserted.end(), content.begin(), content.end());
    auto at = lines.begin() + std::min<int>(changes[k].at, static_cast<int>(lines.size()));
    at = lines.erase(at, at + std::min<int>(erase, static_cast<int>(lines.end() - at)));
    lines.insert(at, inserted.begin(), inserted.end());
    k = end;
  }
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

std::string format_fix_text(const Finding& f, std::string_view source) {
  if (f.edits.empty()) return f.fix;
  std::vector<std::string> lines = split_lines(source);
  std::string out = f.fix + ":";
  std::vector<std::string> sections;
  std::map<std::string, std::vector<std::string>> entries;
  for (const Edit& e : f.edits) {
    std::string section = e.section.empty() ? "ops" : e.section;
    if (!entries.contains(section)) sections.push_back(section);
    std::string where = e.where.empty() ? "" : "  # " + e.where;
    if (e.kind == Edit::Kind::replace) {
      auto c = replace_change(lines, e);
      std::string line =
          c ? c->insert[0].substr(static_cast<size_t>(indentation(c->insert[0]))) : e.text;
      entries[section].push_back(line + where);
      continue;
    }
    entries[section].push_back(e.kind == Edit::Kind::remove ? fmt::format("({})", e.where)
                                                            : e.text + where);
  }
  // Declarations first: what the ops then name.
  std::stable_partition(sections.begin(), sections.end(),
                        [](const std::string& s) { return s != "ops"; });
  for (const auto& s : sections) {
    out += "\n" + s + ":";
    for (const auto& line : entries[s]) out += "\n  " + line;
  }
  return out;
}

}  // namespace streamlab

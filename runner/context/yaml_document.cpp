#include "runner/context/yaml_document.hpp"

#include <regex>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include "runner/core/limits.hpp"

namespace streamlab {
namespace {

// YAML's printable characters (c-printable, in the YAML 1.2 specification), less NEL (U+0085): a C1
// control, which YAML 1.1 takes for a line break and some terminals obey.
bool printable(char32_t c) {
  return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0x7E) ||
         (c >= 0xA0 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) ||
         (c >= 0x10000 && c <= 0x10FFFF);
}

std::string describe_character(std::string_view s, size_t i, size_t n, char32_t cp) {
  if (n == 0)
    return fmt::format("byte 0x{:02X}, which is not UTF-8", static_cast<unsigned char>(s[i]));
  if (cp == 0) return "a NUL byte";
  if (cp == 0x1B) return "an escape character (U+001B)";
  if (is_bidi_control(s.substr(i, n)))
    return fmt::format("the bidirectional control U+{:04X}, which reorders what is shown",
                       static_cast<uint32_t>(cp));
  return fmt::format("the control character U+{:04X}", static_cast<uint32_t>(cp));
}

// Reports the first character that is not printable UTF-8; returns whether the text is clean.
bool check_text(std::string_view text, const std::string& file, Diagnostics& diags) {
  int line = 1, col = 1;
  for (size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    size_t n = decode_utf8(text, i, cp);
    if (n == 0 || !printable(cp) || (cp == 0xFEFF && i != 0) ||
        is_bidi_control(text.substr(i, n))) {
      diags.error({file, line, col},
                  fmt::format("{}: an experiment file is UTF-8 text without control characters "
                              "(tabs and line breaks are fine)",
                              describe_character(text, i, n, cp)));
      return false;
    }
    if (cp == '\n')
      ++line, col = 1;
    else
      ++col;
    i += n;
  }
  return true;
}

// Walks the document's events once: counts its nodes as aliases expand them, finds aliases to a
// node still open (a cycle), and a second document.
class Census final : public YAML::EventHandler {
 public:
  // Thrown to stop the walk at the first problem: yaml-cpp's parser stops only on an exception.
  struct Stop {};

  Census(const std::string& file, Diagnostics& diags) : file_(file), diags_(diags) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t a) override { leaf(m, a); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t a,
                const std::string& value) override {
    leaf(m, a);
    check_scalar(m, value);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a,
                       YAML::EmitterStyle::value) override {
    open(m, a);
  }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a,
                  YAML::EmitterStyle::value) override {
    open(m, a);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapEnd() override { close(); }

  void OnAlias(const YAML::Mark& m, YAML::anchor_t a) override {
    if (a >= size_.size() || size_[a] < 0) {
      return fail(
          m,
          "this alias refers to a node that contains it: the document would be infinite (a list or "
          "mapping cannot hold itself)");
    }
    add(m, size_[a]);
  }

 private:
  void leaf(const YAML::Mark& m, YAML::anchor_t a) {
    add(m, 1);
    anchor_size(a, 1);
  }

  // A double-quoted string can hold any character as an escape (`"\e[31m"`, `"\0"`): the file's
  // bytes are clean, but the value is not. Names, descriptions and sources need none of them.
  void check_scalar(const YAML::Mark& m, std::string_view value) {
    for (size_t i = 0; i < value.size(); ++i) {
      auto b = static_cast<unsigned char>(value[i]);
      bool c0 = (b < 0x20 && b != '\t' && b != '\n' && b != '\r') || b == 0x7F;
      bool c1 =
          b == 0xC2 && i + 1 < value.size() && static_cast<unsigned char>(value[i + 1]) < 0xA0;
      if (c0 || c1)
        fail(m,
             fmt::format(
                 "this string holds the control character U+{:04X} (written as an escape); names, "
                 "descriptions and sources may not hold control characters",
                 c1 ? static_cast<unsigned char>(value[i + 1]) : b));
    }
  }

  void open(const YAML::Mark& m, YAML::anchor_t a) {
    add(m, 1);
    if (a) anchor_size(a, -1);  // open: an alias to it now is a cycle
    open_.push_back({a, nodes_ - 1});
  }

  void close() {
    if (open_.empty()) return;
    auto [a, start] = open_.back();
    open_.pop_back();
    if (a) anchor_size(a, nodes_ - start);
  }

  void anchor_size(YAML::anchor_t a, int64_t size) {
    if (!a) return;
    if (a >= size_.size()) size_.resize(a + 1, 0);
    size_[a] = size;
  }

  void add(const YAML::Mark& m, int64_t n) {
    nodes_ += n;
    if (nodes_ > limits::kYamlNodes)
      fail(m,
           fmt::format(
               "with its aliases expanded, the document has more than {} nodes; write the repeated "
               "part once (a loop repeats ops)",
               limits::kYamlNodes));
  }

  [[noreturn]] void fail(const YAML::Mark& m, std::string message) {
    diags_.error({file_, m.line + 1, m.column + 1}, std::move(message));
    throw Stop{};
  }

  const std::string& file_;
  Diagnostics& diags_;
  int64_t nodes_ = 0;          // with aliases expanded
  std::vector<int64_t> size_;  // per anchor: the nodes of its subtree (-1: still open)
  std::vector<std::pair<YAML::anchor_t, int64_t>>
      open_;  // open collections: anchor, nodes_ at their start
};

// Where a next document starts, if there is one: the walk stops at its start.
struct NextDocument final : YAML::EventHandler {
  struct Found {};
  YAML::Mark at;
  void OnDocumentStart(const YAML::Mark& m) override {
    at = m;
    throw Found{};
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// The census of the first document, then whether a second one follows (yaml-cpp's Load would
// drop it silently). Returns whether the text may be loaded.
bool check_document(const std::string& text, const std::string& file, Diagnostics& diags) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  Census census(file, diags);
  try {
    if (!parser.HandleNextDocument(census)) return true;
  } catch (const Census::Stop&) {
    return false;
  }
  NextDocument next;
  try {
    parser.HandleNextDocument(next);
    return true;
  } catch (const NextDocument::Found&) {
    diags.error({file, next.at.line + 1, next.at.column + 1},
                "a second YAML document: an experiment file holds one document (remove the '---' "
                "that starts this "
                "one, or move it to a file of its own)");
    return false;
  }
}

// yaml-cpp's message when a flow mapping or list holds an unquoted `s[i]`: brackets start a flow
// list there, so `stream: s[i]` inside {...} is not the name it looks like.
std::string flow_hint(const std::string& text, int line) {
  std::istringstream in(text);
  std::string l;
  for (int n = 0; n <= line && std::getline(in, l);) ++n;
  static const std::regex indexed(R"(([A-Za-z_][A-Za-z0-9_]*):\s*([A-Za-z_][A-Za-z0-9_]*\[[^\]"',{}]*\]))");
  std::smatch m;
  if (!std::regex_search(l, m, indexed)) return "";
  return fmt::format(
      "; inside {{...}} a name with an index must be quoted, as {}: \"{}\" (unquoted, its "
      "brackets start a list)",
      m[1].str(), m[2].str());
}

}  // namespace

YAML::Node parse_document(const std::string& text, const std::string& file, Diagnostics& diags) {
  if (!check_text(text, file, diags)) return YAML::Node(YAML::NodeType::Null);
  try {
    if (!check_document(text, file, diags)) return YAML::Node(YAML::NodeType::Null);
    return YAML::Load(text);
  } catch (
      const YAML::DeepRecursion& e) {  // yaml-cpp's own guard; its message says only "bad file"
    diags.error(
        {file, e.mark.line + 1, e.mark.column + 1},
        fmt::format(
            "malformed YAML: collections nested too deeply: the YAML parser stops at a depth of {}",
            e.depth()));
  } catch (const YAML::ParserException& e) {
    std::string hint = e.msg.find("flow") != std::string::npos ? flow_hint(text, e.mark.line) : "";
    diags.error({file, e.mark.line + 1, e.mark.column + 1}, "malformed YAML: " + e.msg + hint);
  }
  return YAML::Node(YAML::NodeType::Null);
}

}  // namespace streamlab

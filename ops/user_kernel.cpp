#include "ops/user_kernel.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <nvrtc.h>

#include "runner/context/cuda_check.hpp"
#include "runner/context/library.hpp"
#include "runner/context/load_context.hpp"
#include "runner/core/bounded_child.hpp"
#include "runner/core/limits.hpp"
#include "runner/core/safe_file.hpp"

namespace streamlab {
namespace {

constexpr size_t kMaxUserParams = 16;

const std::vector<std::string> kScalarTypes = {"int32", "int64", "float32", "float64"};

// "inout float32" -> a buffer parameter; "int64" -> a value.
bool read_param(LoadContext& ctx, const YAML::Node& key, const YAML::Node& value,
                UserKernelParam& p) {
  p.name = key.IsScalar() ? key.Scalar() : "";
  if (!is_identifier(p.name)) {
    ctx.error(key,
              fmt::format("kernel parameter name {} is not an identifier", describe_node(key)));
    return false;
  }
  auto text = ctx.scalar(value, "parameter");
  if (!text) return false;
  std::istringstream words(*text);
  std::string first, second, extra;
  words >> first >> second >> extra;
  static const std::vector<std::string> kinds = {"in", "out", "inout"};
  auto kind = std::find(kinds.begin(), kinds.end(), first);
  auto type_of = [](const std::string& t) {
    return t == "int32"     ? ElemType::int32
           : t == "int64"   ? ElemType::int64
           : t == "float64" ? ElemType::float64
                            : ElemType::float32;
  };
  if (kind != kinds.end() && extra.empty()) {
    static const std::vector<std::string> types = {"int32",   "uint32", "int64",   "float32",
                                                   "float64", "uint8",  "float16", "bfloat16"};
    auto t = std::find(types.begin(), types.end(), second);
    if (t != types.end()) {
      p.kind =
          static_cast<int>(kind - kinds.begin());  // ParamKind::in_buffer, out_buffer, inout_buffer
      p.type = static_cast<ElemType>(t - types.begin());
      return true;
    }
  } else if (second.empty() &&
             std::find(kScalarTypes.begin(), kScalarTypes.end(), first) != kScalarTypes.end()) {
    p.type = type_of(first);
    p.kind = static_cast<int>(is_float(p.type) ? ParamKind::real : ParamKind::scalar);
    return true;
  }
  ctx.error(
      value,
      fmt::format(
          "parameter '{}': '{}' is not a parameter kind; expected `in TYPE`, `out TYPE` or "
          "`inout TYPE` for a buffer (TYPE an element type such as float32), or int32, int64, "
          "float32, float64 for a value",
          p.name, *text));
  return false;
}

// The line of the file that holds the first line of a YAML scalar's text: the next one for a
// block scalar (`source: |`).
int first_text_line(const SourceLines& lines, const YAML::Node& node) {
  int line = node.Mark().line + 1;
  std::string_view at = lines.line(line);
  size_t col = static_cast<size_t>(node.Mark().column);
  bool block = col < at.size() && (at[col] == '|' || at[col] == '>');
  return block ? line + 1 : line;
}

// ---- The files of a kernel's source ------------------------------------------------------------
//
// NVRTC opens any file a kernel names: `#include "/etc/passwd"` compiles that file and echoes its
// lines in the errors. So streamlab reads every file a kernel includes itself, through
// safe_file.hpp (inside the experiment's folder, regular, bounded), hands NVRTC their texts
// (nvrtcCreateProgram's headers) and lets it search no folder (-no-source-include, no -I). For
// that, each text is first scanned the way the preprocessor reads it, for whatever could make
// NVRTC look a file up:
// - `#include "path"`: path is relative to the including file's folder (the experiment's for
//   inline source), must stay in the experiment's folder, and is read by streamlab; the directive
//   is rewritten to the name NVRTC knows the header by (its path in the experiment's folder).
//   Every #include is read, even one an #if leaves out: the scanner does not evaluate conditions.
// - `#include <name>`: NVRTC 13.0 provides no header of its own (each of the toolkit's 515 header
//   names, compiled with -no-source-include and no -I, is "could not open source file"), so the
//   name could only be found in the toolkit's or the system's folders: refused.
// - `#include MACRO`: refused; only the preprocessor would know which file it names.
// - `#include_next`, `#import`, `#embed`, and any directive not in kDirectives: refused.
// - `__has_include`, `__has_include_next`, `__has_embed` look files up (an absolute path works in
//   them even with no include path): refused, with every identifier that ## could paste into
//   one of them (`__has_`, `_`...). Refusing ## would not do: NVRTC's own headers define macros
//   that paste their arguments. A pasted name's first piece is always a token of the source.

constexpr size_t kMaxProblemsShown = 20;  // per file: a file of 500 000 bad tokens gets 20 messages

const std::vector<std::string_view> kDirectives = {
    "define",   "undef", "if",    "ifdef", "ifndef", "elif",    "elifdef",
    "elifndef", "else",  "endif", "line",  "error",  "warning", "pragma"};
const std::vector<std::string_view> kFileLookups = {"__has_include", "__has_include_next",
                                                    "__has_embed"};

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident(char c) { return is_ident_start(c) || is_digit(c); }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }

// A source as the preprocessor reads it: a backslash right before a newline joins the two lines.
// Positions are offsets into the text as written. '\0' marks the end (a source with a NUL byte
// is refused before it is scanned).
class Cursor {
 public:
  explicit Cursor(std::string_view text) : s_(text), i_(joined(0)) {}
  bool done() const { return i_ >= s_.size(); }
  size_t pos() const { return i_; }
  std::string_view text() const { return s_; }
  char peek(size_t ahead = 0) const {
    size_t j = i_;
    for (size_t k = 0; k < ahead && j < s_.size(); ++k) j = joined(j + 1);
    return j < s_.size() ? s_[j] : '\0';
  }
  void next(size_t n = 1) {
    for (size_t k = 0; k < n && i_ < s_.size(); ++k) i_ = joined(i_ + 1);
  }
  void seek(size_t offset) { i_ = joined(std::min(offset, s_.size())); }

 private:
  // One pass, as the preprocessor's: of two backslashes and two newlines, the second backslash
  // joins the lines, and the first, then before the second newline, does not.
  size_t joined(size_t j) const {
    while (j + 1 < s_.size() && s_[j] == '\\' && s_[j + 1] == '\n') j += 2;
    return j;
  }
  std::string_view s_;
  size_t i_;
};

struct IncludeDirective {
  std::string name;  // as written between the quotes
  size_t at = 0;     // the offset of the opening quote
  size_t end = 0;    // the offset after the closing quote
};

struct ScanProblem {
  size_t at = 0;
  std::string message;
};

struct SourceScan {
  std::vector<IncludeDirective> includes;
  std::vector<ScanProblem> problems;  // the first kMaxProblemsShown
  size_t more_problems = 0;
};

// Finds a text's #include directives and what a kernel may not use (see above). Where the
// scanner and NVRTC might read a text differently, the scanner errs towards seeing more
// directives, never fewer: a block comment that spans lines may be followed by a directive on
// its last line (NVRTC takes it for one too); an unterminated literal ends at its line's end (as
// in NVRTC: a /* after it opens no comment); a byte outside ASCII is taken for a space, so that
// a '#' after it still starts a directive, and ends an identifier, so that `é__has_include`
// still holds `__has_include`.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : c_(text) {}

  SourceScan run() {
    bool line_start = true;
    while (!c_.done()) {
      char ch = c_.peek();
      if (ch == '\n') {
        line_start = true;
        c_.next();
      } else if (is_space(ch) || static_cast<unsigned char>(ch) >= 0x80) {
        c_.next();
      } else if (ch == '/' && c_.peek(1) == '/') {
        skip_line_comment();
      } else if (ch == '/' && c_.peek(1) == '*') {
        line_start = skip_block_comment() || line_start;
      } else if (line_start &&
                 (ch == '#' || (ch == '%' && c_.peek(1) == ':'))) {  // %: is a digraph of #
        directive();
        line_start = false;
      } else {
        line_start = false;
        token();
      }
    }
    return std::move(out_);
  }

 private:
  void problem(size_t at, std::string message) {
    if (out_.problems.size() < kMaxProblemsShown)
      out_.problems.push_back({at, std::move(message)});
    else
      ++out_.more_problems;
  }

  void skip_line_comment() {
    while (!c_.done() && c_.peek() != '\n') c_.next();
  }

  // Whether the comment held a newline.
  bool skip_block_comment() {
    size_t at = c_.pos();
    c_.next(2);
    bool newline = false;
    while (!c_.done()) {
      if (c_.peek() == '*' && c_.peek(1) == '/') {
        c_.next(2);
        return newline;
      }
      newline = newline || c_.peek() == '\n';
      c_.next();
    }
    problem(at, "this /* comment has no end");
    return newline;
  }

  // Spaces and comments inside a directive, up to its end (a newline) or its next token.
  void skip_directive_space() {
    for (;;) {
      if (is_space(c_.peek())) {
        c_.next();
      } else if (c_.peek() == '/' && c_.peek(1) == '*') {
        skip_block_comment();
      } else if (c_.peek() == '/' && c_.peek(1) == '/') {
        skip_line_comment();
      } else {
        return;
      }
    }
  }

  std::string identifier() {
    std::string id;
    while (is_ident(c_.peek())) {
      id += c_.peek();
      c_.next();
    }
    return id;
  }

  void directive() {
    size_t hash = c_.pos();
    c_.next(c_.peek() == '#' ? 1 : 2);
    skip_directive_space();
    char ch = c_.peek();
    if (c_.done() || ch == '\n' || is_digit(ch))
      return;  // the null directive; a line marker (# 12 "f"), as #line
    std::string name = is_ident_start(ch) ? identifier() : std::string();
    if (name == "include") return include_operand();
    if (std::find(kDirectives.begin(), kDirectives.end(), name) != kDirectives.end()) return;
    if (name == "include_next" || name == "import" || name == "embed")
      return problem(
          hash, fmt::format("'#{}' is not allowed in a kernel; it may include only files in the "
                            "experiment's folder, each with `#include \"path\"`",
                            name));
    problem(hash,
            fmt::format(
                "{} is not a directive a kernel may use (allowed: #define, #undef, #if, #ifdef, "
                "#ifndef, "
                "#elif, #elifdef, #elifndef, #else, #endif, #line, #error, #warning, #pragma and "
                "#include \"path\")",
                name.empty() ? "a '#' not followed by a name" : "'#" + name + "'"));
  }

  void include_operand() {
    skip_directive_space();
    size_t at = c_.pos();
    char open = c_.peek();
    if (open != '"' && open != '<')
      return problem(
          at,
          "#include needs a file name in double quotes, as `#include \"file.h\"`: streamlab reads "
          "the "
          "files a kernel includes before compiling it, so a name a macro makes is not allowed");
    char close = open == '"' ? '"' : '>';
    std::string name;
    c_.next();
    while (!c_.done() && c_.peek() != '\n' && c_.peek() != close) {
      name += c_.peek();
      c_.next();
    }
    if (c_.peek() != close)
      return problem(
          at, fmt::format("#include {}{}: the file name needs its closing {} on the same line",
                          open, name, close));
    size_t end = c_.pos() + 1;
    c_.next();
    if (open == '<')
      return problem(
          at, fmt::format(
                  "#include <{}>: NVRTC provides no headers of its own, and a kernel may not read "
                  "the toolkit's or the system's; include a file in the experiment's folder, as "
                  "`#include \"file.h\"`",
                  name));
    out_.includes.push_back({name, at, end});
  }

  void token() {
    char ch = c_.peek();
    if (is_ident_start(ch)) {
      size_t at = c_.pos();
      std::string id = identifier();
      char quote = c_.peek();
      if (quote == '"' && (id == "R" || id == "u8R" || id == "uR" || id == "UR" || id == "LR"))
        return raw_literal();
      if ((quote == '"' || quote == '\'') && (id == "u8" || id == "u" || id == "U" || id == "L"))
        return literal(quote);
      return check_identifier(at, id);
    }
    if (is_digit(ch) || (ch == '.' && is_digit(c_.peek(1)))) return pp_number();
    if (ch == '"' || ch == '\'') return literal(ch);
    c_.next();
  }

  void check_identifier(size_t at, const std::string& id) {
    for (auto name : kFileLookups)
      if (id == name)
        return problem(
            at,
            fmt::format("'{}' is not allowed in a kernel: it looks files up, and a kernel may see "
                        "only the files it includes",
                        id));
    for (auto name : kFileLookups)
      if (name.starts_with(id))
        return problem(
            at,
            fmt::format("identifier '{}' is not allowed in a kernel: pasted with ## it could make "
                        "'{}', which looks files up",
                        id, name));
  }

  // A string or character literal; one without its closing quote ends with its line.
  void literal(char quote) {
    c_.next();
    while (!c_.done()) {
      char ch = c_.peek();
      if (ch == '\n') return;
      c_.next();
      if (ch == quote) return;
      if (ch == '\\' && c_.peek() != '\n') c_.next();
    }
  }

  // R"delim( ... )delim": from its quote on, the text as written (the standard undoes joined
  // lines inside a raw string, and so does NVRTC).
  void raw_literal() {
    size_t quote = c_.pos();
    std::string_view s = c_.text();
    size_t paren = quote + 1;
    auto delimiter_char = [](char c) {
      return c > ' ' && c < 0x7f && c != '(' && c != ')' && c != '\\';
    };
    while (paren < s.size() && paren - quote <= 17 && delimiter_char(s[paren])) ++paren;
    if (paren >= s.size() || s[paren] != '(' || paren - quote - 1 > 16) {
      problem(quote,
              "a raw string's delimiter must be at most 16 characters, none of them a space, a "
              "parenthesis or "
              "a backslash, followed by '('");
      return literal('"');
    }
    std::string close = ")" + std::string(s.substr(quote + 1, paren - quote - 1)) + "\"";
    size_t end = s.find(close, paren + 1);
    if (end == std::string_view::npos) {
      problem(quote, "this raw string has no end");
      return c_.seek(s.size());
    }
    c_.seek(end + close.size());
  }

  // 12, 0x1F, 1'000'000, 1.5e-3f: digit separators must not be taken for character literals.
  void pp_number() {
    char prev = '\0';
    for (;;) {
      char ch = c_.peek();
      bool sign =
          (ch == '+' || ch == '-') && (prev == 'e' || prev == 'E' || prev == 'p' || prev == 'P');
      if (is_ident(ch) || ch == '.' || sign) {
        prev = ch;
        c_.next();
      } else if (ch == '\'' && is_ident(c_.peek(1))) {
        prev = c_.peek(1);
        c_.next(2);
      } else {
        return;
      }
    }
  }

  Cursor c_;
  SourceScan out_;
};

// Line and column (1-based, in bytes) of an offset into a text.
class Positions {
 public:
  explicit Positions(std::string_view text) {
    starts_.push_back(0);
    for (size_t i = text.find('\n'); i != std::string_view::npos; i = text.find('\n', i + 1))
      starts_.push_back(i + 1);
  }
  std::pair<int, int> at(size_t offset) const {
    auto line = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), offset) -
                                    starts_.begin());
    return {static_cast<int>(line), static_cast<int>(offset - starts_[line - 1]) + 1};
  }

 private:
  std::vector<size_t> starts_;
};

// One file of a kernel's source: its own text, or a header it includes.
struct SourceFile {
  std::string shown;  // the name diagnostics give it: the experiment's, or a path in its folder
  std::string nvrtc_name;  // the name NVRTC knows it by: a header's include name
  std::string folder;  // its folder relative to the experiment's: where its includes are looked for
  std::string text;    // as read, lines ending in \n
  std::string compiled;        // what NVRTC compiles: includes renamed to the headers' NVRTC names
  int first_line = 1;          // the line of `shown` that holds the text's first line
  bool in_experiment = false;  // inline source: its lines are the experiment's, indented
};

// "exp/dir/" for "exp/dir/e.yaml": what a path relative to the experiment's folder is shown after.
std::string shown_prefix(const std::string& experiment_file) {
  size_t slash = experiment_file.rfind('/');
  return slash == std::string::npos ? "" : experiment_file.substr(0, slash + 1);
}

// The path in the experiment's folder of a file shown as `shown`, if it is one.
std::optional<std::string> relative_to_experiment(const std::string& experiment_file,
                                                  const std::string& shown) {
  std::string prefix = shown_prefix(experiment_file);
  if (shown == experiment_file || !shown.starts_with(prefix) || shown.size() == prefix.size())
    return std::nullopt;
  return shown.substr(prefix.size());
}

std::string parent_of(const std::string& rel) {
  size_t slash = rel.rfind('/');
  return slash == std::string::npos ? "" : rel.substr(0, slash);
}

// Windows line ends made \n, so that NVRTC and the scanner split lines alike. A NUL would end
// NVRTC's copy of the text early, and other control characters (a lone carriage return among
// them) are read differently by different compilers: the offset of the first, if any.
std::optional<size_t> clean_text(std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i)
    if (!(text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) out += text[i];
  text = std::move(out);
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n' && !is_space(text[i])) || c == 0x7f) return i;
    if (is_bidi_control(std::string_view(text).substr(i, 3)))
      return i;  // shown otherwise than compiled
  }
  return std::nullopt;
}

// Reads and vets a kernel's source and every file it includes (see above).
class SourceReader {
 public:
  // At load the headers are read from the folder; when compiling, the texts load kept
  // (UserKernel::headers) stand for them, so nothing is read twice.
  SourceReader(const Experiment& exp, const UserKernel& k, Diagnostics& diags, bool from_folder)
      : exp_(exp), k_(k), diags_(diags), from_folder_(from_folder) {}

  std::vector<SourceFile> read() {
    SourceFile own;
    own.shown = k_.source_file;
    own.nvrtc_name = fmt::format("kernel '{}'", k_.name);  // no include name has a quote
    own.in_experiment = k_.source_file == exp_.file;
    own.folder = own.in_experiment
                     ? ""
                     : parent_of(relative_to_experiment(exp_.file, k_.source_file).value_or(""));
    own.first_line = k_.first_line;
    own.text = k_.source;
    files_.push_back(std::move(own));
    if (!add_text(0)) return std::move(files_);
    for (size_t i = 0; i < files_.size(); ++i) scan(i);
    return std::move(files_);
  }

 private:
  // A file's text made ready to scan; false, and the text dropped, when it is not text.
  bool add_text(size_t i) {
    auto bad = clean_text(files_[i].text);
    if (!bad) return true;
    Positions positions(files_[i].text);
    bool bidi = is_bidi_control(std::string_view(files_[i].text).substr(*bad, 3));
    diags_.error(
        locate(files_[i], positions, *bad),
        bidi
            ? fmt::format(
                  "kernel '{}': a bidirectional control character in the source: it would show the "
                  "code otherwise than it compiles",
                  k_.name)
            : fmt::format(
                  "kernel '{}': a control character (0x{:02x}) in the source; kernels are text",
                  k_.name, static_cast<unsigned char>(files_[i].text[*bad])));
    files_[i].text.clear();
    return false;
  }

  // At most kMaxProblemsShown diagnostics per file, then how many more there were.
  void scan(size_t i) {
    SourceScan scan = Scanner(files_[i].text).run();
    Positions positions(files_[i].text);
    size_t shown = 0, hidden = scan.more_problems;
    SourceLoc last;
    auto report = [&](size_t at, const std::string& message) {
      if (shown == kMaxProblemsShown) return void(++hidden);
      ++shown;
      last = locate(files_[i], positions, at);
      diags_.error(last, fmt::format("kernel '{}': {}", k_.name, message));
    };
    std::vector<std::string> names;
    size_t p = 0;
    for (const auto& inc : scan.includes) {  // the diagnostics in the order of their lines
      for (; p < scan.problems.size() && scan.problems[p].at < inc.at; ++p)
        report(scan.problems[p].at, scan.problems[p].message);
      std::string refusal;
      names.push_back(include(i, inc, refusal));
      if (!refusal.empty()) report(inc.at, refusal);
    }
    for (; p < scan.problems.size(); ++p) report(scan.problems[p].at, scan.problems[p].message);
    if (hidden)
      diags_.error(last, fmt::format("kernel '{}': {} more problems in this file, not shown",
                                     k_.name, hidden));
    files_[i].compiled = rewrite(files_[i].text, scan.includes, names);
  }

  // The NVRTC name of the header `inc` names, read and queued for scanning; "" and why in
  // `refusal` when it is not read. A file is read once per kernel, however often it is included.
  std::string include(size_t from, const IncludeDirective& inc, std::string& refusal) {
    auto rel = path_in_folder(files_[from].folder, inc.name);
    if (rel) {
      for (const auto& f : files_)
        if (f.nvrtc_name == *rel) return *rel;
      if (auto it = refused_.find(*rel); it != refused_.end()) {
        refusal = it->second;
        return "";
      }
    }
    refusal = why_not_read(files_[from], inc, rel);
    if (!refusal.empty()) {
      if (rel) refused_[*rel] = refusal;
      return "";
    }
    return *rel;
  }

  std::string why_not_read(const SourceFile& from, const IncludeDirective& inc,
                           const std::optional<std::string>& rel) {
    if (rel && rel->find_first_of("\\'\"") != std::string::npos)
      return fmt::format(
          "included file '{}' has a quote or a backslash in its path '{}', which NVRTC would read "
          "as "
          "something else",
          inc.name, *rel);
    if (files_.size() > static_cast<size_t>(limits::kIncludedFiles))
      return fmt::format("included file '{}' is one more than the {} files a kernel may include",
                         inc.name, limits::kIncludedFiles);
    FileRead file =
        from_folder_ ? read_in_experiment_folder(exp_.file, inc.name, from.folder) : kept(*rel);
    if (!file.ok()) return fmt::format("included file '{}' {}", inc.name, file.refusal);
    SourceFile header;
    header.shown = shown_prefix(exp_.file) + *rel;
    header.nvrtc_name = *rel;
    header.folder = parent_of(*rel);
    header.text = std::move(file.text);
    files_.push_back(std::move(header));  // `from` may dangle from here on
    add_text(files_.size() - 1);
    return "";
  }

  // The text with each #include's file name replaced by its NVRTC name, lines where they were:
  // a name written over several lines (joined with backslashes) is followed by as many joins.
  static std::string rewrite(const std::string& text, const std::vector<IncludeDirective>& includes,
                             const std::vector<std::string>& names) {
    std::string out;
    size_t from = 0;
    for (size_t j = 0; j < includes.size(); ++j) {
      const auto& inc = includes[j];
      out.append(text, from, inc.at - from);
      if (names[j].empty()) {
        out.append(text, inc.at, inc.end - inc.at);
      } else {
        out += '"' + names[j] + '"';
        auto newlines = std::count(text.begin() + static_cast<std::ptrdiff_t>(inc.at),
                                   text.begin() + static_cast<std::ptrdiff_t>(inc.end), '\n');
        for (int64_t n = 0; n < newlines; ++n) out += "\\\n";
      }
      from = inc.end;
    }
    out.append(text, from, std::string::npos);
    return out;
  }

  // Where an offset of a file's text is shown: inline source at its line of the experiment, the
  // column shifted by the YAML block's indentation.
  SourceLoc locate(const SourceFile& f, const Positions& positions, size_t offset) {
    auto [line, col] = positions.at(offset);
    int shown_line = f.first_line + line - 1;
    if (!f.in_experiment) return {f.shown, shown_line, col};
    if (!experiment_lines_) experiment_lines_.emplace(exp_.source);
    std::string_view real = experiment_lines_->line(shown_line);
    std::string_view own = SourceLines(f.text).line(line);
    size_t shift = real.ends_with(own) ? real.size() - own.size() : 0;
    if (!real.ends_with(own) && real.find(own) != std::string_view::npos)
      shift = real.find(own);  // "source: '...'"
    return {f.shown, shown_line, col + static_cast<int>(shift)};
  }

  FileRead kept(const std::string& rel) const {
    for (const auto& [path, text] : k_.headers)
      if (path == rel) return {text, "", 0};
    return {"", "was not read when the experiment was loaded", 0};
  }

  const Experiment& exp_;
  const UserKernel& k_;
  Diagnostics& diags_;
  bool from_folder_;
  std::vector<SourceFile> files_;
  std::map<std::string, std::string, std::less<>>
      refused_;  // path in the folder -> why it was not read
  std::optional<SourceLines> experiment_lines_;
};

std::vector<SourceFile> read_sources(const Experiment& exp, const UserKernel& k, Diagnostics& diags,
                                     bool from_folder) {
  return SourceReader(exp, k, diags, from_folder).read();
}

// The texts diagnostics may show lines of, by the name they are shown by: the experiment's, and
// those of the files read for its kernels. No file is opened to show a line.
using ShownTexts = std::map<std::string, std::string, std::less<>>;

void remember(const std::vector<SourceFile>& files, ShownTexts& shown) {
  for (const auto& f : files)
    if (!f.in_experiment) shown[f.shown] = f.text;
}

// ---- Loading ----------------------------------------------------------------------------------

void read_params(LoadContext& ctx, const YAML::Node& params, UserKernel& k) {
  std::vector<std::pair<std::string, int>> declared;  // name, line
  for (const auto& item : params) {
    if (k.params.size() ==
        kMaxUserParams) {  // one more than a kernel may take: reported by the caller
      UserKernelParam extra;
      k.params.push_back(extra);
      return;
    }
    if (!item.IsMap() || item.size() != 1) {
      ctx.error(item,
                "expected one parameter per list item, as `- NAME: inout float32` or `- n: int32`");
      continue;
    }
    const auto entry =
        *item.begin();  // the iterator's value is a temporary: keep it, not a reference into it
    const YAML::Node& key = entry.first;
    std::string name = key.IsScalar() ? key.Scalar() : "";
    auto first = std::find_if(declared.begin(), declared.end(),
                              [&](const auto& d) { return d.first == name; });
    if (first !=
        declared.end()) {  // two arguments of one name: a launch's args could not tell them apart
      ctx.error(key, fmt::format("kernel '{}': parameter '{}' is declared twice (first at line {})",
                                 k.name, name, first->second));
      continue;
    }
    if (is_identifier(name)) declared.emplace_back(name, ctx.loc(key).line);
    UserKernelParam p;
    if (read_param(ctx, key, entry.second, p)) k.params.push_back(std::move(p));
  }
}

// Reads and vets the files the kernel includes, and keeps their texts for compiling; their bytes
// count towards limits::kKernelSourceBytes with the kernels' own.
void keep_headers(LoadContext& ctx, UserKernel& k) {
  for (const SourceFile& f : read_sources(ctx.exp, k, ctx.diags, true)) {
    if (f.nvrtc_name.starts_with("kernel '")) continue;  // the kernel's own text
    k.headers.emplace_back(f.nvrtc_name, f.text);
    ctx.kernel_source_bytes += static_cast<int64_t>(f.text.size());
  }
}

void read_kernel(LoadContext& ctx, const YAML::Node& key, const YAML::Node& value) {
  if (!ctx.room_for(key, ctx.exp.kernels, limits::kKernels, "user kernels")) return;
  if (!check_declared_name(ctx, key, ctx.exp.kernels, "kernel")) return;
  if (find_kernel(key.Scalar()) >= 0)
    return ctx.error(
        key,
        fmt::format("kernel '{}' is a built-in kernel's name; name yours otherwise", key.Scalar()));
  MapReader r(ctx, value, fmt::format("kernel '{}'", key.Scalar()), {"source?", "file?", "params"});
  if (!r.ok()) return;
  UserKernel k;
  k.name = key.Scalar();
  k.loc = ctx.loc(key);
  if (r.has("source") == r.has("file"))
    return ctx.error(
        key,
        fmt::format("kernel '{}': give its CUDA source as exactly one of `source:` (inline) and "
                    "`file:` (a file beside the experiment)",
                    k.name));
  // Past the cap (reported once, at the kernel that passed it) no file is read: a file of many
  // kernels, each including many headers, would otherwise read gigabytes before its error.
  const bool over_cap = ctx.kernel_source_bytes > limits::kKernelSourceBytes;
  if (over_cap) {
    // declared all the same, with its params, so that its launches are still checked
  } else if (r.has("source")) {
    k.source = ctx.scalar(r.get("source"), "source").value_or("");
    k.source_file = ctx.exp.file;
    k.first_line = first_text_line(ctx.source_lines(), r.get("source"));
  } else {
    auto name = ctx.scalar(r.get("file"), "file");
    if (!name) return;
    FileRead file = read_in_experiment_folder(ctx.exp.file, *name);
    k.source_file = shown_prefix(ctx.exp.file) + path_in_folder("", *name).value_or(*name);
    k.source = std::move(file.text);
    // Declared all the same (the experiment is invalid now), so that its launches are still
    // checked.
    if (!file.ok())
      ctx.error(r.get("file"),
                fmt::format("kernel '{}': file '{}' {}", k.name, *name, file.refusal));
  }
  if (!k.source.empty())
    keep_headers(ctx, k);  // its includes, read and vetted now: `check` shows them
  ctx.kernel_source_bytes += static_cast<int64_t>(k.source.size());
  if (!over_cap && ctx.kernel_source_bytes > limits::kKernelSourceBytes)
    ctx.error(key, fmt::format(
                       "kernel '{}': the kernels' sources and the files they include come to "
                       "more than {} bytes in all",
                       k.name, limits::kKernelSourceBytes));
  YAML::Node params = r.require("params");
  if (params.IsDefined() && !params.IsSequence())
    return ctx.error(params, fmt::format("params: expected a list of `- NAME: KIND`, got {}",
                                         describe_node(params)));
  read_params(ctx, params, k);
  if (k.params.size() > kMaxUserParams) {
    ctx.error(params,
              fmt::format("kernel '{}' has more than {} parameters", k.name, kMaxUserParams));
    k.params.resize(kMaxUserParams);
  }
  ctx.exp.kernels.push_back(std::move(k));
}

// ---- NVRTC ------------------------------------------------------------------------------------

struct Nvrtc {
  decltype(&nvrtcCreateProgram) create = nullptr;
  decltype(&nvrtcDestroyProgram) destroy = nullptr;
  decltype(&nvrtcAddNameExpression) add_name = nullptr;
  decltype(&nvrtcCompileProgram) compile = nullptr;
  decltype(&nvrtcGetProgramLogSize) log_size = nullptr;
  decltype(&nvrtcGetProgramLog) log = nullptr;
  decltype(&nvrtcGetLoweredName) lowered = nullptr;
  decltype(&nvrtcGetCUBINSize) cubin_size = nullptr;
  decltype(&nvrtcGetCUBIN) cubin = nullptr;
  decltype(&nvrtcGetPTXSize) ptx_size = nullptr;
  decltype(&nvrtcGetPTX) ptx = nullptr;
  decltype(&nvrtcGetErrorString) error_string = nullptr;
};

const Nvrtc& nvrtc() {
  static const Nvrtc api = [] {
    const SharedLibrary& lib =
        load_library({"NVRTC", "libnvrtc.so.13", "STREAMLAB_NVRTC", {"lib64", "lib"}});
    Nvrtc a;
    lib.resolve(a.create, "nvrtcCreateProgram");
    lib.resolve(a.destroy, "nvrtcDestroyProgram");
    lib.resolve(a.add_name, "nvrtcAddNameExpression");
    lib.resolve(a.compile, "nvrtcCompileProgram");
    lib.resolve(a.log_size, "nvrtcGetProgramLogSize");
    lib.resolve(a.log, "nvrtcGetProgramLog");
    lib.resolve(a.lowered, "nvrtcGetLoweredName");
    lib.resolve(a.cubin_size, "nvrtcGetCUBINSize");
    lib.resolve(a.cubin, "nvrtcGetCUBIN");
    lib.resolve(a.ptx_size, "nvrtcGetPTXSize");
    lib.resolve(a.ptx, "nvrtcGetPTX");
    lib.resolve(a.error_string, "nvrtcGetErrorString");
    return a;
  }();
  return api;
}

void check(nvrtcResult r, const char* call) {
  if (r != NVRTC_SUCCESS)
    throw RunError(fmt::format("NVRTC: {} failed: {}", call, nvrtc().error_string(r)));
}

// One error of NVRTC's log: `NAME(LINE): error: TEXT` (or `catastrophic error`).
struct LogError {
  std::string file;
  int line = 0;
  std::string message;
};

// The error whose "(LINE): " opens at `paren` of log line `l`, if that is one.
std::optional<LogError> parse_error_at(std::string_view l, size_t paren) {
  size_t digits = paren + 1, i = digits;
  while (i < l.size() && is_digit(l[i]) && i - digits < 9) ++i;
  if (i == digits || l.substr(i, 3) != "): ") return std::nullopt;
  std::string_view rest = l.substr(i + 3);
  for (std::string_view kind : {"error: ", "catastrophic error: "}) {
    if (!rest.starts_with(kind)) continue;
    LogError e{std::string(l.substr(0, paren)), 0, std::string(rest.substr(kind.size()))};
    std::from_chars(l.data() + digits, l.data() + i, e.line);
    return e;
  }
  return std::nullopt;
}

// NAME may be anything a #line directive gave it, "(3): error: " included: the names streamlab
// gave NVRTC are tried first.
std::optional<LogError> parse_error(std::string_view l, const std::vector<SourceFile>& files) {
  for (const auto& f : files)
    if (l.size() > f.nvrtc_name.size() && l.starts_with(f.nvrtc_name) &&
        l[f.nvrtc_name.size()] == '(')
      if (auto e = parse_error_at(l, f.nvrtc_name.size())) return e;
  for (size_t paren = l.find('('); paren != std::string_view::npos; paren = l.find('(', paren + 1))
    if (auto e = parse_error_at(l, paren)) return e;
  return std::nullopt;
}

// The column NVRTC's caret marks, in the line as the experiment or the file has it. NVRTC echoes
// the line it compiled after two spaces, the caret under it; for inline source that line lacks
// the YAML block's indentation.
int caret_column(const std::vector<std::string_view>& log, size_t head, std::string_view real) {
  if (head + 2 >= log.size()) return 1;
  size_t caret = log[head + 2].find('^');
  if (caret == std::string_view::npos) return 1;
  std::string_view echo = log[head + 1];
  if (echo.starts_with("  ") && caret >= 2) {
    echo.remove_prefix(2);
    caret -= 2;
  }
  size_t shift = real.size() >= echo.size() && real.ends_with(echo) ? real.size() - echo.size() : 0;
  return static_cast<int>(caret + shift) + 1;
}

// The compiler's log as diagnostics at the lines of the files streamlab read (the experiment
// for inline source). An error NVRTC places in a file of another name (a `#line 1 "/etc/passwd"`
// of the kernel's) is shown at the kernel's declaration, with its message only: streamlab shows
// lines of no file but those it read for the kernel.
void add_log_diagnostics(const Experiment& exp, const UserKernel& k,
                         const std::vector<SourceFile>& files, const std::string& log,
                         Diagnostics& out) {
  std::vector<std::string_view> lines;
  for (size_t at = 0; at < log.size();) {
    size_t end = std::min(log.find('\n', at), log.size());
    lines.push_back(std::string_view(log).substr(at, end - at));
    at = end + 1;
  }
  size_t before = out.count();
  SourceLines experiment_lines(exp.source);
  for (size_t i = 0; i < lines.size(); ++i) {
    auto e = parse_error(lines[i], files);
    if (!e) continue;
    auto f = std::find_if(files.begin(), files.end(),
                          [&](const SourceFile& s) { return s.nvrtc_name == e->file; });
    if (f == files.end()) {
      out.error(
          k.loc,
          fmt::format("in kernel '{}' (at line {} of '{}', which names no file of the kernel): {}",
                      k.name, e->line, e->file, e->message));
      continue;
    }
    std::string_view real =
        f->in_experiment ? experiment_lines.line(e->line) : SourceLines(f->text).line(e->line);
    out.error({f->shown, e->line, caret_column(lines, i, real)},
              fmt::format("in kernel '{}': {}", k.name, e->message));
  }
  if (out.count() == before)
    out.error(k.loc, fmt::format("kernel '{}' does not compile: {}", k.name,
                                 log.empty() ? "(no log)" : log));
}

// Whether some file of the kernel's source names `name` followed by '(' (NVRTC tells, once it
// compiled, whether that is a __global__ function).
bool names_function(const std::vector<SourceFile>& files, const std::string& name) {
  for (const auto& f : files) {
    const std::string& t = f.text;
    for (size_t at = t.find(name); at != std::string::npos; at = t.find(name, at + 1)) {
      size_t after = at + name.size();
      if ((at > 0 && is_ident(t[at - 1])) || (after < t.size() && is_ident(t[after]))) continue;
      while (after < t.size() && (is_space(t[after]) || t[after] == '\n')) ++after;
      if (after < t.size() && t[after] == '(') return true;
    }
  }
  return false;
}

struct Program {
  nvrtcProgram p = nullptr;
  ~Program() {
    if (p) nvrtc().destroy(&p);
  }
};

// What NVRTC made of one kernel: its result, the log, and when it compiled, the image and the
// lowered (mangled) name of the kernel (empty when the source does not define it).
struct NvrtcOutput {
  int result = NVRTC_SUCCESS;
  std::string log, lowered, image;
};

// The log is cut to this: a source of #warning lines could make it gigabytes, and diagnostics
// stop at Diagnostics::kMost anyway.
constexpr size_t kLogBytes = 1 << 20;
// What the compiling child may send back: the log, and an image of a 16 MiB source.
constexpr int64_t kCompileOutputBytes = int64_t{256} << 20;

// The result, then each field as its size (8 bytes) and its bytes: how the compiling child sends
// its output back.
std::string pack(const NvrtcOutput& out) {
  std::string bytes(reinterpret_cast<const char*>(&out.result), sizeof out.result);
  for (const std::string* field : {&out.log, &out.lowered, &out.image}) {
    uint64_t n = field->size();
    bytes.append(reinterpret_cast<const char*>(&n), sizeof n).append(*field);
  }
  return bytes;
}

// nullopt unless `bytes` is exactly what pack() makes.
std::optional<NvrtcOutput> unpack(std::string_view bytes) {
  NvrtcOutput out;
  if (bytes.size() < sizeof out.result) return std::nullopt;
  std::memcpy(&out.result, bytes.data(), sizeof out.result);
  bytes.remove_prefix(sizeof out.result);
  for (std::string* field : {&out.log, &out.lowered, &out.image}) {
    uint64_t n = 0;
    if (bytes.size() < sizeof n) return std::nullopt;
    std::memcpy(&n, bytes.data(), sizeof n);
    bytes.remove_prefix(sizeof n);
    if (n > bytes.size()) return std::nullopt;
    *field = bytes.substr(0, n);
    bytes.remove_prefix(n);
  }
  if (!bytes.empty()) return std::nullopt;
  return out;
}

// Runs NVRTC on `text` (the kernel's file, as `files[0]` is named) with the headers `files[1..]`.
NvrtcOutput run_nvrtc(const std::string& text, const std::vector<SourceFile>& files,
                      const std::string& kernel, const std::string& arch) {
  std::vector<const char*> headers, names;
  for (size_t i = 1; i < files.size(); ++i) {
    headers.push_back(files[i].compiled.c_str());
    names.push_back(files[i].nvrtc_name.c_str());
  }
  Program prog;
  check(nvrtc().create(&prog.p, text.c_str(), files[0].nvrtc_name.c_str(),
                       static_cast<int>(headers.size()), headers.data(), names.data()),
        "nvrtcCreateProgram");
  check(nvrtc().add_name(prog.p, kernel.c_str()), "nvrtcAddNameExpression");
  std::string arch_option = "--gpu-architecture=" + arch;
  // -no-source-include: no folder to search, not even the kernel's; every header is in `headers`.
  const char* options[] = {arch_option.c_str(), "--std=c++17", "-default-device", "-lineinfo",
                           "-no-source-include"};
  NvrtcOutput out;
  out.result = nvrtc().compile(prog.p, static_cast<int>(std::size(options)), options);
  size_t log_size = 0;
  check(nvrtc().log_size(prog.p, &log_size), "nvrtcGetProgramLogSize");
  out.log.assign(log_size, '\0');
  if (log_size) check(nvrtc().log(prog.p, out.log.data()), "nvrtcGetProgramLog");
  if (!out.log.empty() && out.log.back() == '\0') out.log.pop_back();
  if (out.log.size() > kLogBytes)
    out.log.resize(out.log.rfind('\n', kLogBytes) + 1);  // whole lines; npos+1 == 0
  const char* lowered = nullptr;
  if (out.result != NVRTC_SUCCESS ||
      nvrtc().lowered(prog.p, kernel.c_str(), &lowered) != NVRTC_SUCCESS || !lowered)
    return out;
  out.lowered = lowered;
  size_t size = 0;
  bool cubin = arch.starts_with("sm_");
  check(cubin ? nvrtc().cubin_size(prog.p, &size) : nvrtc().ptx_size(prog.p, &size),
        "nvrtcGet*Size");
  out.image.resize(size);
  check(cubin ? nvrtc().cubin(prog.p, out.image.data()) : nvrtc().ptx(prog.p, out.image.data()),
        "nvrtcGetCUBIN");
  return out;
}

// NVRTC's output for `text`, from a child process under limits::kCompile*: the source is the
// experiment's, and a compiler can be made to use any amount of memory and time. A bound that
// stops it is the kernel's error (in `diags`); a failure of this machine is a RunError.
std::optional<NvrtcOutput> compile_in_child(const UserKernel& k, const std::string& text,
                                            const std::vector<SourceFile>& files,
                                            const std::string& arch, Diagnostics& diags) {
  nvrtc();  // loaded here, once, not in every child
  ChildResult child =
      run_bounded([&] { return pack(run_nvrtc(text, files, k.name, arch)); },
                  {limits::kCompileMemoryBytes, limits::kCompileCpuSeconds, kCompileOutputBytes});
  if (child.outcome == ChildResult::failed)
    throw RunError(fmt::format("compiling kernel '{}': {}", k.name, child.why));
  std::optional<NvrtcOutput> out =
      child.outcome == ChildResult::ok ? unpack(child.bytes) : std::nullopt;
  if (child.outcome == ChildResult::ok && !out)
    throw RunError(fmt::format("compiling kernel '{}': its output came back cut short", k.name));
  if (out && out->result == NVRTC_ERROR_OUT_OF_MEMORY)
    child.why = fmt::format("NVRTC ran out of memory (it may use {} MiB)",
                            limits::kCompileMemoryBytes >> 20);
  if (!out || out->result == NVRTC_ERROR_OUT_OF_MEMORY) {
    diags.error(k.loc, fmt::format("kernel '{}': compiling it was stopped: {}", k.name, child.why));
    return std::nullopt;
  }
  return out;
}

// Compiles one kernel; the image and its lowered (mangled) name. Errors in `diags`; the texts
// they point into in `shown`.
std::pair<std::string, std::string> compile(const Experiment& exp, const UserKernel& k,
                                            const std::string& arch, Diagnostics& diags,
                                            ShownTexts& shown) {
  size_t before = diags.count();
  std::vector<SourceFile> files =
      read_sources(exp, k, diags, false);  // the texts load read and vetted
  remember(files, shown);
  if (diags.count() != before) return {};
  // NVRTC would report a missing function as an error in its own name expression, at no useful
  // line.
  if (!names_function(files, k.name)) {
    diags.error(k.loc,
                fmt::format("kernel '{}': the source defines no __global__ function named '{}'",
                            k.name, k.name));
    return {};
  }
  // #line makes the compiler number the lines as the experiment (or the kernel's file) does.
  std::string text =
      fmt::format("#line {} \"{}\"\n{}", k.first_line, files[0].nvrtc_name, files[0].compiled);
  std::optional<NvrtcOutput> out = compile_in_child(k, text, files, arch, diags);
  if (!out) return {};
  if (out->result != NVRTC_SUCCESS) {
    add_log_diagnostics(exp, k, files, out->log, diags);
    return {};
  }
  if (out->lowered.empty()) {
    diags.error(k.loc,
                fmt::format("kernel '{}': the source defines no __global__ function named '{}'",
                            k.name, k.name));
    return {};
  }
  return {std::move(out->image), std::move(out->lowered)};
}

// Each diagnostic with the line it points at, from `text_of(file)`.
template <class TextOf>
std::string format_each(const Diagnostics& diags, TextOf text_of) {
  std::string out;
  std::map<std::string, SourceLines, std::less<>>
      lines;  // one index per file, however many diagnostics
  for (const auto& d : diags.items()) {
    auto it = lines.find(d.loc.file);
    if (it == lines.end()) it = lines.emplace(d.loc.file, SourceLines(text_of(d))).first;
    out += format_diagnostic(d, it->second);
  }
  return out;
}

// The compiler's errors, each shown with the line of the file it points into.
void throw_if_errors(const Experiment& exp, Diagnostics diags, const ShownTexts& shown) {
  if (!diags.has_errors()) return;
  std::string text = format_each(diags, [&](const Diagnostic& d) -> std::string_view {
    if (d.loc.file == exp.file) return exp.source;
    auto it = shown.find(d.loc.file);
    return it == shown.end() ? std::string_view() : std::string_view(it->second);
  });
  throw InvalidExperiment(std::move(text), std::move(diags));
}

// A kernel loaded into the device's context, shared by every launch of it.
struct LoadedKernel {
  cudaLibrary_t library = nullptr;
  cudaKernel_t kernel = nullptr;
  LoadedKernel() = default;
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;
  ~LoadedKernel() {
    if (library) STREAMLAB_CUDA_NOEXCEPT(cudaLibraryUnload(library));
  }
};

}  // namespace

void load_user_kernels(LoadContext& ctx, const YAML::Node& node) {
  if (!node.IsDefined()) return;
  if (!node.IsMap())
    return ctx.error(node,
                     fmt::format("kernels: expected a mapping of NAME: {{source | file, params}}, "
                                 "got {}",
                                 describe_node(node)));
  for (const auto& entry : node) read_kernel(ctx, entry.first, entry.second);
}

std::string format_with_kernel_sources(const Diagnostics& diags, const std::string& experiment_file,
                                       std::string_view experiment_source) {
  std::map<std::string, std::string, std::less<>> texts;
  return format_each(diags, [&](const Diagnostic& d) -> std::string_view {
    if (d.loc.file == experiment_file) return experiment_source;
    auto rel = d.loc.line > 0 ? relative_to_experiment(experiment_file, d.loc.file) : std::nullopt;
    if (!rel) return {};
    FileRead file = read_in_experiment_folder(experiment_file, *rel);
    if (!file.ok()) return {};
    clean_text(file.text);
    return texts[d.loc.file] = std::move(file.text);
  });
}

std::vector<std::string> user_kernel_files(const Experiment& exp) {
  std::vector<std::string> out;
  for (const UserKernel& k : exp.kernels) {
    if (k.source_file != exp.file) out.push_back(k.source_file);
    for (const auto& header : k.headers) out.push_back(shown_prefix(exp.file) + header.first);
  }
  return out;
}

bool is_user_kernel(const Op& op) { return op.kernel >= kUserKernelBase; }

const UserKernel& user_kernel(const Experiment& exp, const Op& op) {
  return exp.kernels[op.kernel - kUserKernelBase];
}

std::vector<KernelParam> user_params(const UserKernel& k) {
  std::vector<KernelParam> out;
  for (const auto& p : k.params)
    out.push_back({p.name, static_cast<ParamKind>(p.kind), elem_type_name(p.type)});
  return out;
}

std::vector<std::string> compile_user_kernels(const Experiment& exp, const std::string& arch) {
  Diagnostics diags;
  ShownTexts shown;
  std::vector<std::string> images;
  for (const UserKernel& k : exp.kernels)
    images.push_back(compile(exp, k, arch, diags, shown).first);
  throw_if_errors(exp, std::move(diags), shown);
  return images;
}

void prepare_user_kernel(CudaState& s, const Op& op) {
  const UserKernel& k = user_kernel(s.exp, op);
  auto& slot =
      s.libraries["kernel:" + k.name];  // one compilation per kernel, however many launches
  if (slot) {
    s.prepared[&op] = slot;
    return;
  }
  int device = 0;
  cudaDeviceProp p{};
  STREAMLAB_CUDA(cudaGetDevice(&device));
  STREAMLAB_CUDA(cudaGetDeviceProperties(&p, device));
  Diagnostics diags;
  ShownTexts shown;
  auto [image, lowered] = compile(s.exp, k, fmt::format("sm_{}{}", p.major, p.minor), diags, shown);
  throw_if_errors(s.exp, std::move(diags), shown);
  auto loaded = std::make_shared<LoadedKernel>();
  STREAMLAB_CUDA(cudaLibraryLoadData(&loaded->library, image.data(), nullptr, nullptr, 0, nullptr,
                                     nullptr, 0));
  STREAMLAB_CUDA(cudaLibraryGetKernel(&loaded->kernel, loaded->library, lowered.c_str()));
  slot = std::move(loaded);
  s.prepared[&op] = slot;
}

void launch_user_kernel(CudaState& s, const Op& op) {
  const UserKernel& k = user_kernel(s.exp, op);
  const auto& loaded = s.prepared_for<LoadedKernel>(op);
  // Each argument in a slot of its declared C type; cudaLaunchKernel copies them.
  union Slot {
    void* ptr;
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
  } slots[kMaxUserParams];
  void* args[kMaxUserParams];
  for (size_t i = 0; i < k.params.size(); ++i) {
    const UserKernelParam& p = k.params[i];
    if (is_buffer_param(static_cast<ParamKind>(p.kind)))
      slots[i].ptr = s.at(op.args[i].range);
    else if (p.type == ElemType::int32)
      slots[i].i32 = static_cast<int32_t>(op.args[i].scalar);
    else if (p.type == ElemType::int64)
      slots[i].i64 = op.args[i].scalar;
    else if (p.type == ElemType::float32)
      slots[i].f32 = static_cast<float>(op.args[i].real);
    else
      slots[i].f64 = op.args[i].real;
    args[i] = &slots[i];
  }
  auto dim = [](const std::array<int64_t, 3>& d) {
    return dim3(static_cast<unsigned>(d[0]), static_cast<unsigned>(d[1]),
                static_cast<unsigned>(d[2]));
  };
  cudaError_t e =
      cudaLaunchKernel(reinterpret_cast<const void*>(loaded.kernel), dim(op.grid), dim(op.block),
                       args, static_cast<size_t>(op.shared_bytes), s.streams[op.stream]);
  if (e != cudaSuccess) throw CudaError(e, fmt::format("launch of user kernel {}", k.name));
}

}  // namespace streamlab

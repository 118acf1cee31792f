#include "runner/core/diagnostics.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace streamlab {

void Diagnostics::add(Diagnostic d) {
  has_errors_ = has_errors_ || d.severity == Severity::error;
  if (full()) {
    ++dropped_;
    return;
  }
  items_.push_back(std::move(d));
}

void Diagnostics::error(const SourceLoc& loc, std::string message) {
  add({Severity::error, loc, std::move(message)});
}

void Diagnostics::note(const SourceLoc& loc, std::string message) {
  add({Severity::note, loc, std::move(message)});
}

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::error:
      return "error";
    case Severity::warning:
      return "warning";
    case Severity::note:
      return "note";
  }
  return "error";
}

size_t decode_utf8(std::string_view s, size_t i, char32_t& cp) {
  auto b = static_cast<unsigned char>(s[i]);
  size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  cp = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
  for (size_t k = 1; k < n; ++k) {
    auto c = static_cast<unsigned char>(s[i + k]);
    if ((c >> 6) != 0x2) return 0;
    cp = (cp << 6) | (c & 0x3F);
  }
  static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;  // overlong, surrogate
  return n;
}

bool is_bidi_control(std::string_view s) {
  auto byte = [&](size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  if (byte(0) == 0xD8 && byte(1) == 0x9C) return true;  // U+061C, the Arabic letter mark
  if (byte(0) != 0xE2) return false;
  unsigned b1 = byte(1), b2 = byte(2);
  return (b1 == 0x80 &&
          (b2 == 0x8E || b2 == 0x8F || (b2 >= 0xAA && b2 <= 0xAE))) ||  // U+200E-F, U+202A-E
         (b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9);                      // U+2066-9
}

namespace {

// The length of the UTF-8 sequence at `i` when it is well formed and neither a C1 control (U+0080
// to U+009F, which some terminals obey as escape sequences) nor a bidirectional control; 0
// otherwise.
size_t printable_utf8(std::string_view s, size_t i) {
  char32_t cp = 0;
  size_t n = decode_utf8(s, i, cp);
  if (n < 2 || cp <= 0x9F || is_bidi_control(s.substr(i, n))) return 0;
  return n;
}

// Appends the bytes of `text` from `i` that make one character, escaped where it is not
// printable; returns how many bytes it consumed and sets `width` to the columns it prints in.
size_t append_printable(std::string& out, std::string_view text, size_t i, int& width) {
  auto b = static_cast<unsigned char>(text[i]);
  if (b == '\t' || b == '\n' || (b >= 0x20 && b < 0x7F)) {
    out += static_cast<char>(b);
    width = 1;
    return 1;
  }
  if (size_t n = b >= 0x80 ? printable_utf8(text, i) : 0) {
    out.append(text.substr(i, n));
    width = 1;
    return n;
  }
  out += fmt::format("\\x{:02X}", b);
  width = 4;
  return 1;
}

// The source line as printed (control characters escaped) and the caret under column `col` (in
// bytes, 1-based). The caret line keeps tabs where the source has them, so it lines up in any
// terminal.
std::pair<std::string, std::string> source_and_caret(std::string_view text, int col) {
  std::string line, pad;
  for (size_t i = 0; i < text.size();) {
    int width = 0;
    size_t n = append_printable(line, text, i, width);
    if (static_cast<int>(i) + 1 < col)
      pad += text[i] == '\t' ? std::string(1, '\t') : std::string(width, ' ');
    i += n;
  }
  if (col > 1 && static_cast<size_t>(col - 1) > text.size())
    pad += std::string(col - 1 - text.size(), ' ');
  return {line, pad};
}

// A long source line is shown as a window of it around the column, "..." marking each cut, so a
// diagnostic stays readable (a file may hold one line of megabytes).
constexpr size_t kExcerptBytes = 160;

struct Excerpt {
  std::string_view text;
  int col = 0;  // in `text`
  bool cut_front = false, cut_back = false;
};

bool utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Each cut moves to the next character's first byte, at most 3 bytes on (a UTF-8 sequence is at
// most 4 bytes; bytes that are not UTF-8 may follow each other for ever).
size_t next_character(std::string_view text, size_t i) {
  for (int step = 0; step < 3 && i < text.size() && utf8_continuation(text[i]); ++step) ++i;
  return i;
}

Excerpt excerpt(std::string_view text, int col) {
  if (text.size() <= kExcerptBytes) return {text, col};
  size_t at = std::min(static_cast<size_t>(std::max(col - 1, 0)), text.size());
  size_t begin = next_character(text, std::min(at > kExcerptBytes / 2 ? at - kExcerptBytes / 2 : 0,
                                               text.size() - kExcerptBytes));
  size_t end = next_character(text, std::min(text.size(), begin + kExcerptBytes));
  return {text.substr(begin, end - begin), col - static_cast<int>(begin), begin > 0,
          end < text.size()};
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  int width = 0;
  for (size_t i = 0; i < text.size();) i += append_printable(out, text, i, width);
  return out;
}

SourceLines::SourceLines(std::string_view source) : source_(source) {
  starts_.push_back(0);
  for (size_t i = source.find('\n'); i != std::string_view::npos; i = source.find('\n', i + 1))
    starts_.push_back(i + 1);
}

std::string_view SourceLines::line(int number) const {
  if (number < 1 || static_cast<size_t>(number) > starts_.size()) return {};
  size_t begin = starts_[number - 1];
  size_t end = static_cast<size_t>(number) < starts_.size() ? starts_[number] - 1 : source_.size();
  std::string_view text = source_.substr(begin, end - begin);
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  return text;
}

std::string format_diagnostic(const Diagnostic& d, std::string_view source) {
  return format_diagnostic(d, SourceLines(source));
}

std::string format_diagnostic(const Diagnostic& d, const SourceLines& source) {
  std::string out;
  if (d.loc.line > 0)
    out = fmt::format("{}:{}:{}: {}: {}\n", printable(d.loc.file), d.loc.line, d.loc.col,
                      severity_name(d.severity), printable(d.message));
  else
    out = fmt::format("{}: {}: {}\n", printable(d.loc.file), severity_name(d.severity),
                      printable(d.message));
  std::string_view text = d.loc.line > 0 ? source.line(d.loc.line) : std::string_view{};
  if (text.empty()) return out;
  Excerpt shown = excerpt(text, d.loc.col);
  auto [line, pad] = source_and_caret(shown.text, shown.col);
  std::string_view front = shown.cut_front ? "..." : "", back = shown.cut_back ? "..." : "";
  out += fmt::format("{:>5} | {}{}{}\n", d.loc.line, front, line, back);
  out += fmt::format("      | {}{}^\n", std::string(front.size(), ' '), pad);
  return out;
}

std::string format_diagnostics(const Diagnostics& ds, std::string_view source) {
  std::string out;
  SourceLines lines(source);
  for (const auto& d : ds.items()) out += format_diagnostic(d, lines);
  if (ds.dropped())
    out += fmt::format("streamlab: {} more problems not shown (the first {} are above)\n",
                       ds.dropped(), Diagnostics::kMost);
  return out;
}

}  // namespace streamlab

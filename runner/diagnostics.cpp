#include "runner/diagnostics.hpp"

#include <fmt/format.h>

namespace streamlab {

void Diagnostics::error(const SourceLoc& loc, std::string message) {
  items_.push_back({Severity::error, loc, std::move(message)});
}

void Diagnostics::note(const SourceLoc& loc, std::string message) {
  items_.push_back({Severity::note, loc, std::move(message)});
}

bool Diagnostics::has_errors() const {
  for (const auto& d : items_)
    if (d.severity == Severity::error) return true;
  return false;
}

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::error: return "error";
    case Severity::warning: return "warning";
    case Severity::note: return "note";
  }
  return "error";
}

namespace {

// The caret line keeps tabs where the source has them, so the caret lines up in any terminal.
std::string caret_padding(std::string_view text, int col) {
  std::string pad;
  for (int i = 0; i + 1 < col; ++i)
    pad += (static_cast<size_t>(i) < text.size() && text[i] == '\t') ? '\t' : ' ';
  return pad;
}

}  // namespace

SourceLines::SourceLines(std::string_view source) : source_(source) {
  starts_.push_back(0);
  for (size_t i = source.find('\n'); i != std::string_view::npos; i = source.find('\n', i + 1)) starts_.push_back(i + 1);
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
    out = fmt::format("{}:{}:{}: {}: {}\n", d.loc.file, d.loc.line, d.loc.col,
                      severity_name(d.severity), d.message);
  else
    out = fmt::format("{}: {}: {}\n", d.loc.file, severity_name(d.severity), d.message);
  std::string_view text = d.loc.line > 0 ? source.line(d.loc.line) : std::string_view{};
  if (text.empty()) return out;
  out += fmt::format("{:>5} | {}\n", d.loc.line, text);
  out += fmt::format("      | {}^\n", caret_padding(text, d.loc.col));
  return out;
}

std::string format_diagnostics(const Diagnostics& ds, std::string_view source) {
  std::string out;
  SourceLines lines(source);
  for (const auto& d : ds.items()) out += format_diagnostic(d, lines);
  return out;
}

}  // namespace streamlab

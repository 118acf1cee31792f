#pragma once
// Text inside HTML and XML reports (a title a student wrote may hold anything).
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "runner/core/diagnostics.hpp"
#include "runner/core/record.hpp"

namespace streamlab {

// `text` as character data or an attribute value of HTML or XML 1.0: the markup characters
// escaped, line feeds and tabs as character references (an attribute keeps them so), and the
// control characters XML 1.0 cannot hold at all replaced by '?'.
inline std::string escape_markup(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    size_t n = decode_utf8(text, i, cp);
    if (n == 0) {  // not UTF-8 (a path from the command line): XML must be, so a replacement
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    if (n > 1) {
      out += text.substr(i, n);
      i += n;
      continue;
    }
    char c = text[i++];
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '\n':
        out += "&#10;";
        break;
      case '\t':
        out += "&#9;";
        break;
      default:
        out += static_cast<unsigned char>(c) < 0x20 ? '?' : c;
    }
  }
  return out;
}

// One graded item as every JSON report writes it.
inline nlohmann::ordered_json scored_item_json(const ScoredItem& s) {
  return {{"id", s.id},
          {"title", s.title},
          {"kind", s.check ? "check" : "expectation"},
          {"timing", s.timing},
          {"status", status_name(s.status)},
          {"score", s.score},
          {"max_score", s.max_score},
          {"visibility", visibility_name(s.visibility)},
          {"file", s.loc.file},
          {"line", s.loc.line},
          {"output", s.output}};
}

}  // namespace streamlab

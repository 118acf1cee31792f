#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "runner/check/figures.hpp"
#include "runner/execute/backend.hpp"
#include "runner/report/console.hpp"
#include "runner/report/files.hpp"
#include "runner/report/markup.hpp"
#include "tests/test_support.hpp"

using namespace streamlab;
using namespace streamlab::test;

namespace {

// Compares with tests/golden/NAME; STREAMLAB_UPDATE_GOLDEN=1 rewrites it (then review the diff).
void check_golden(const std::string& name, const std::string& actual) {
  auto path = source_dir() / "tests/golden" / name;
  if (std::getenv("STREAMLAB_UPDATE_GOLDEN")) std::ofstream(path) << actual;
  INFO(name);
  CHECK(actual == read_text(path));
}

}  // namespace

TEST_CASE("reports: JSON, CSV, trace and console of a device-timed run match their golden files") {
  Experiment e = load_string(synthetic_experiment(), "reports.yaml");
  RunRecord run = synthetic_run();
  check_golden("reports.json", format_json(e, run));
  check_golden("reports.csv", format_csv(e, run));
  check_golden("reports.trace.json", format_trace(e, run));
  check_golden("reports.console.txt", format_console_report(e, run));
  check_golden("reports.html", format_html(e, run));
}

TEST_CASE("reports: markup escapes what HTML and XML cannot hold, and keeps UTF-8") {
  CHECK(escape_markup("a<b & \"c\" 'd'\n\x01") == "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&#10;?");
  CHECK(escape_markup("\xC3\xA9t\xC3\xA9") == "\xC3\xA9t\xC3\xA9");  // été stays
  CHECK(escape_markup("sub\xFF.yaml") == "sub\xEF\xBF\xBD.yaml");    // not UTF-8: U+FFFD
}

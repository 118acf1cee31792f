#pragma once
// Which streamlab this is: the project's version and the commit the binary was built from, for
// `--version` and for the provenance of results. The values are written at build time
// (cmake/version.cmake), so a binary never names a commit it was not built from.
#include <string>
#include <string_view>

namespace streamlab {

std::string_view version();      // "0.1.0", the project's version (CMakeLists.txt)
// The commit's abbreviated hash, with "-dirty" when tracked files had changes; "unknown" when the
// sources were not a git checkout (a source tarball).
std::string_view commit();
std::string_view commit_date();  // the commit's date, "2026-12-03"; "" when commit() is unknown

// "streamlab 0.1.0 (commit 1a2b3c4d, 2026-12-03)" or "streamlab 0.1.0 (commit unknown)".
std::string version_line();

}  // namespace streamlab

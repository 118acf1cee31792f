#pragma once
#include <string>
#include <string_view>

namespace streamlab {

// Writes `text` to `path` whole or not at all: into a temporary file beside it, then renamed over
// it, so a reader never sees half a report and a failed run leaves no file. "-" writes to stdout.
// Throws RunError naming the path and the reason on failure.
void write_output_file(const std::string& path, std::string_view text);

}  // namespace streamlab

#pragma once
#include <string>

namespace streamlab {

// A position in an experiment file. line and col are 1-based, as editors and compilers show
// them (yaml-cpp's Mark is 0-based: convert with from_mark in load_context.hpp).
struct SourceLoc {
  std::string file;
  int line = 0;
  int col = 0;
};

}  // namespace streamlab

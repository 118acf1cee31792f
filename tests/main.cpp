// The test runner. When asked for the GPU suite alone (-ts=gpu) on a machine without a CUDA
// device, it says so and exits 77, which CTest reports as skipped (SKIP_RETURN_CODE).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <iostream>
#include <string_view>

#include "tests/test_support.hpp"

namespace {

bool only_gpu_suite(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "-ts=gpu" || a == "--test-suite=gpu") return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::string why;
  if (only_gpu_suite(argc, argv) && !streamlab::test::have_gpu(&why)) {
    std::cout << "gpu tests skipped: no CUDA device (" << why << ")\n";
    return 77;
  }
  return doctest::Context(argc, argv).run();
}

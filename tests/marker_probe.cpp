// A shared library whose constructor writes a marker file (named by STREAMLAB_MARKER in the
// environment): the CLI test names it where an experiment would make streamlab load code
// (LD_PRELOAD, LD_AUDIT, STREAMLAB_NVRTC, CUDA_INJECTION64_PATH) and checks that no marker appears.
// Loaded by the dynamic loader, it proves the test could fail.
#include <cstdio>
#include <cstdlib>

namespace {

__attribute__((constructor)) void leave_marker() {
  const char* path = std::getenv("STREAMLAB_MARKER");
  if (!path) return;
  if (std::FILE* f = std::fopen(path, "a")) {
    std::fputs("loaded\n", f);
    std::fclose(f);
  }
}

}  // namespace

// LD_AUDIT loads a library only if it exports la_version.
extern "C" unsigned int la_version(unsigned int version) { return version; }

#pragma once
// Optional libraries (cuBLAS, cuDNN, NVRTC, CUPTI) are loaded at run time, only when an experiment
// needs one (docs/semantics.md, "Optional libraries"): the program runs where they are missing, and
// an experiment that needs a missing one fails with a message naming the library and the op.
#include <string>
#include <vector>

#include "runner/core/errors.hpp"

namespace streamlab {

struct LibrarySpec {
  const char* title;              // "cuBLAS"
  const char* soname;             // "libcublas.so.13": the loader's own search comes first
  const char* env;                // "STREAMLAB_CUBLAS": a path the user sets, tried alone
  std::vector<const char*> dirs;  // under the CUDA toolkit's root: "lib64", "extras/CUPTI/lib64"
};

class SharedLibrary {
 public:
  const std::string& path() const { return path_; }
  const std::string& title() const { return title_; }
  // The symbol's address; throws RunError naming the library when it has none.
  void* symbol(const char* name) const;
  template <class F>
  void resolve(F& f, const char* name) const {
    f = reinterpret_cast<F>(symbol(name));
  }

 private:
  friend const SharedLibrary& load_library(const LibrarySpec& spec);
  void* handle_ = nullptr;
  std::string path_, title_;
};

// Loads the library once per process (later calls return it). Throws RunError: "cuBLAS
// (libcublas.so.13) could not be loaded: tried ...; set STREAMLAB_CUBLAS to its path".
const SharedLibrary& load_library(const LibrarySpec& spec);

}  // namespace streamlab

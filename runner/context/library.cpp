#include "runner/context/library.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include <fmt/format.h>

namespace streamlab {
namespace {

std::vector<std::string> candidates(const LibrarySpec& spec) {
  if (const char* env = std::getenv(spec.env)) return {env};
  std::vector<std::string> out{spec.soname};  // LD_LIBRARY_PATH, the ldconfig cache
  for (const char* root : std::initializer_list<const char*>{
           std::getenv("CUDA_HOME"), std::getenv("CUDA_PATH"), "/usr/local/cuda"}) {
    if (!root) continue;
    for (const char* dir : spec.dirs)
      out.push_back(fmt::format("{}/{}/{}", root, dir, spec.soname));
  }
  return out;
}

}  // namespace

void* SharedLibrary::symbol(const char* name) const {
  void* f = dlsym(handle_, name);
  if (!f)
    throw RunError(
        fmt::format("{} ({}) has no symbol {}: a different version than streamlab was built for?",
                    title_, path_, name));
  return f;
}

const SharedLibrary& load_library(const LibrarySpec& spec) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<SharedLibrary>> loaded;
  std::lock_guard lock(mutex);
  auto& slot = loaded[spec.soname];
  if (slot) return *slot;
  std::vector<std::string> tried = candidates(spec);
  std::string last_error;
  for (const auto& path : tried) {
    if (void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      slot = std::make_unique<SharedLibrary>();
      slot->handle_ = h, slot->path_ = path, slot->title_ = spec.title;
      return *slot;
    }
    last_error = dlerror();
  }
  throw RunError(fmt::format(
      "{} ({}) could not be loaded: tried {} (last: {}); install it or set {} to its path",
      spec.title, spec.soname, fmt::join(tried, ", "), last_error, spec.env));
}

}  // namespace streamlab

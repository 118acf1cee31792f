// What keeps the shipped programs running on glibc 2.34 (docs/install.md). libstdc++ is linked in
// statically, and its std::random_device calls arc4random, which glibc has only since 2.36; the
// program never makes a random_device, but the library's string instantiations link it in all
// the same. The link (-Wl,--wrap=arc4random, CMakeLists.txt) sends that call here instead, to
// getentropy (glibc 2.25), which reads the same kernel source.
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>

extern "C" uint32_t __wrap_arc4random() {
  uint32_t value = 0;
  while (getentropy(&value, sizeof value) != 0)
    if (errno != EINTR) std::abort();  // as glibc's arc4random does: it has no way to fail
  return value;
}

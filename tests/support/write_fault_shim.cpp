// A fault injector for tests/scripts/test_disk_full.sh, loaded with LD_PRELOAD: write(2) on a file whose path
// contains $TOPO_FAULT_PATH fails with ENOSPC ("No space left on device"), after $TOPO_FAULT_SKIP such writes
// have gone through (default 0). Every other write is the real one. Topograph's writes all go through write(2)
// (kernels/atomic_file.cpp, apps/train/io.cpp), so this reaches each write site without touching the code.
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

using WriteFn = ssize_t (*)(int, const void*, size_t);

bool targeted(int fd) {
  const char* want = std::getenv("TOPO_FAULT_PATH");
  if (want == nullptr || *want == '\0' || fd <= 2) return false;
  char link[64], path[4096];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = ::readlink(link, path, sizeof path - 1);
  if (n <= 0) return false;
  path[n] = '\0';
  return std::strstr(path, want) != nullptr;
}

std::atomic<long> matched{0};

}  // namespace

extern "C" ssize_t write(int fd, const void* buf, size_t count) {
  static const WriteFn real = reinterpret_cast<WriteFn>(::dlsym(RTLD_NEXT, "write"));
  if (targeted(fd)) {
    const char* skip = std::getenv("TOPO_FAULT_SKIP");
    if (matched.fetch_add(1) >= (skip != nullptr ? std::atol(skip) : 0)) {
      errno = ENOSPC;
      return -1;
    }
  }
  return real(fd, buf, count);
}

#include "fuzz/fuzz_support.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>

namespace topo::fuzz {

const std::string& memory_file(std::string_view bytes, int slot) {
  struct File {
    int fd = -1;
    std::string path;
  };
  static std::array<File, 4> files;
  File& f = files.at(static_cast<std::size_t>(slot));
  if (f.fd < 0) {
    f.fd = ::memfd_create("topo_fuzz_input", 0);
    if (f.fd < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    f.path = "/proc/self/fd/" + std::to_string(f.fd);
  }
  if (::ftruncate(f.fd, 0) != 0 ||
      ::pwrite(f.fd, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) {
    std::perror("memfd write");
    std::abort();
  }
  return f.path;
}

}  // namespace topo::fuzz

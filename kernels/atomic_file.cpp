#include "kernels/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "kernels/error.hpp"

namespace topo {
namespace {

std::string directory_of(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

// `path` is the file being replaced: the error names it (the temp file is removed, `path` stays as it was).
// `tmp` == `path`: written in place (a device or FIFO).
void write_all(int fd, const ByteRange& part, const std::string& tmp, const std::string& path) {
  const char* p = static_cast<const char*>(part.data);
  std::size_t n = part.size;
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const std::string why = w == 0 ? "no byte written" : std::strerror(errno);
      if (tmp == path) fail("writing {} failed: {}", path, why);
      fail("writing {} failed: {} (through its temp file {}; {} is left as it was)", path, why, tmp, path);
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

}  // namespace

void write_file_atomically(const std::string& target, const std::vector<ByteRange>& parts) {
  // What is at `target` decides how it is written. A symlink: the file it points to is replaced, the link
  // kept. A device, FIFO or socket (/dev/null, /dev/stdout): written in place, as a stream has nothing to
  // replace (the rename below made /dev/null a regular file, run as root). A directory: an error saying so.
  struct stat st {};
  std::string path = target;
  if (::lstat(target.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    std::error_code ec;
    const std::filesystem::path resolved = std::filesystem::weakly_canonical(target, ec);
    if (!ec) path = resolved.string();
  }
  if (::stat(path.c_str(), &st) == 0) {
    TOPO_CHECK(!S_ISDIR(st.st_mode), "cannot write {}: it is a directory", target);
    if (!S_ISREG(st.st_mode)) {
      const int out = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
      TOPO_CHECK(out >= 0, "cannot open {} for writing: {}", target, std::strerror(errno));
      try {
        for (const ByteRange& part : parts) write_all(out, part, target, target);
      } catch (...) {
        ::close(out);
        throw;
      }
      TOPO_CHECK(::close(out) == 0, "closing {} failed: {}", target, std::strerror(errno));
      return;
    }
  }
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  TOPO_CHECK(fd >= 0, "cannot create a temp file for {} in {}: {}", path, directory_of(path), std::strerror(errno));
  try {
    // mkstemp makes the file 0600; a result file gets the usual permissions (0666 less the umask).
    const mode_t mask = ::umask(0);
    ::umask(mask);
    TOPO_CHECK(::fchmod(fd, 0666 & ~mask) == 0, "cannot set the permissions of {}: {}", tmp, std::strerror(errno));
    for (const ByteRange& part : parts) write_all(fd, part, tmp, path);
    TOPO_CHECK(::fsync(fd) == 0, "fsync of {} failed: {}", tmp, std::strerror(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail("closing {} failed: {}", tmp, std::strerror(err));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail("cannot rename the temp file onto {}: {}", path, std::strerror(err));
  }
  const int dir = ::open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {  // best effort: some filesystems refuse fsync on directories
    ::fsync(dir);
    ::close(dir);
  }
}

}  // namespace topo

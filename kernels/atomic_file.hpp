#pragma once
// The project's one way to write a result file: checkpoints, result.json, benchmark reports and plots are
// all written through here, so a run killed mid-write never leaves a half-written file behind.
// The bytes go to a temp file beside the target (same filesystem), are fsynced, and the temp file is renamed
// over the target; the directory is then fsynced (best effort) so the rename itself survives a crash. A symlink
// has the file it points to replaced; a device or FIFO (/dev/null, /dev/stdout) is written in place; a directory
// is an error.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace topo {

struct ByteRange {
  const void* data;
  std::size_t size;
};

// Writes the concatenation of `parts` to `path`. On any failure the temp file is removed and a topo::Error
// names the path and the reason (errno's message).
void write_file_atomically(const std::string& path, const std::vector<ByteRange>& parts);
inline void write_file_atomically(const std::string& path, std::string_view text) {
  write_file_atomically(path, {ByteRange{text.data(), text.size()}});
}

}  // namespace topo

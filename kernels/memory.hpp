#pragma once
// The process's memory as the OS sees it: its resident high-water mark, and how much more it may take before
// the kernel's OOM killer (or a container's) ends it. Runs report the first (with host_memory::stats(), the
// allocator's own peak, kernels/storage.hpp) and check what they are about to allocate against the second,
// so that a job too big for the machine stops with an error naming the sizes instead of being killed.
#include <cstdint>
#include <string>

namespace topo {

// The most this process had resident at once (VmHWM in /proc/self/status; getrusage's ru_maxrss elsewhere).
std::int64_t peak_rss_bytes();
// Starts a new high-water mark from what is resident now (Linux: "5" written to /proc/self/clear_refs), so a
// benchmark can take the peak of one step after a larger one; false where the OS offers no reset (the mark
// then keeps the process's whole history).
bool reset_peak_rss();
// Resident now (VmRSS); 0 when the OS does not say.
std::int64_t rss_bytes();
// Mapped now (VmSize: what RLIMIT_AS, `ulimit -v`, counts); 0 when the OS does not say.
std::int64_t mapped_bytes();

struct AvailableMemory {
  std::int64_t bytes = 0;  // what new allocations may still take
  std::string source;      // where the figure came from: "MemAvailable", "cgroup memory limit 8.0 GiB, 2.1 GiB used"
};
// The smaller of /proc/meminfo's MemAvailable, the headroom under the tightest cgroup memory limit on this
// process's path (v2 memory.max - memory.current, v1 memory.limit_in_bytes - memory.usage_in_bytes) and under
// `ulimit -v` / `ulimit -d` (RLIMIT_AS - VmSize, RLIMIT_DATA - VmData). `limit` >
// 0 (a user's --memory-limit): the process may hold at most that many bytes resident, so the headroom is
// limit - rss_bytes() when that is smaller.
AvailableMemory available_memory(std::int64_t limit = 0);

// "512M", "8G", "1.5GiB", "100000" (bytes; K/M/G/T are powers of 1024, with or without "iB"/"B") -> bytes. A
// bad size is a topo::Error naming `field`.
std::int64_t parse_byte_size(const std::string& text, const std::string& field);
// 1.5 GiB, 300.0 MiB, 12 KiB, 7 B.
std::string format_bytes(double bytes);

}  // namespace topo

#pragma once
// Storage: one device allocation shared by every tensor view onto it. CPU memory is 64-byte aligned;
// CUDA memory comes from a caching allocator over cudaMalloc (never managed memory), so the training loop's
// repeated same-sized allocations do not reach the driver.
#include <cstddef>
#include <functional>
#include <memory>

#include "kernels/device.hpp"

namespace topo {

class Storage {
 public:
  Storage(std::size_t bytes, Device device);
  // Memory allocated by someone else (a PyTorch tensor handed over by DLPack): views read and write it in
  // place and it is never freed here; `release` runs when the last view is gone (it drops the owner's
  // reference). No copy is made.
  Storage(void* data, std::size_t bytes, Device device, std::function<void()> release);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  Device device() const { return device_; }
  // Borrowed memory (the constructor above): someone outside Topograph may still read it, so autograd
  // never adopts it as a gradient buffer to accumulate into.
  bool borrowed() const { return static_cast<bool>(release_); }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  Device device_;
  std::function<void()> release_;  // set for borrowed memory only
};

// Copies `bytes` between any two devices (host<->host, host<->device, device<->device).
void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, std::size_t bytes);
// Sets `bytes` to zero on `device`.
void zero_bytes(void* dst, Device device, std::size_t bytes);

namespace host_memory {
// The host allocator behind CPU storage: 64-byte aligned (blocks of 2 MiB and more: 2 MiB aligned and advised
// for transparent huge pages, unless TOPO_HUGE_PAGES=0); blocks of 256 KiB and more are cached for reuse (a
// request takes the smallest parked block up to 1/8 larger; at most the limit, 2 GiB by default, is parked, and
// no more than the larger of 256 MiB and the peak bytes in use; past that the blocks parked longest are freed).
void* allocate(std::size_t bytes);
void release(void* ptr, std::size_t bytes);
void empty_cache();
std::size_t bytes_cached();
// Sets the most bytes the cache parks (freeing the oldest blocks past it); returns the previous limit.
std::size_t set_cache_limit(std::size_t bytes);
// Bytes of CPU storage live now (handed to tensors, not parked), and the most live at once since the process
// started or reset_peak(): Topograph's own high-water mark, beside the process's RSS (kernels/memory.hpp), which
// also counts the cache, the graph structures and everything outside Storage. Two relaxed atomics per
// allocation, so it is always on.
struct Stats {
  std::size_t bytes_in_use = 0, peak_bytes_in_use = 0, bytes_cached = 0;
};
Stats stats();
// Starts a new peak from the bytes in use now (a run or a benchmark measuring its own high-water mark).
void reset_peak();
}  // namespace host_memory

namespace cuda_memory {
// The caching allocator behind CUDA storage (also used directly by kernels for scratch space).
void* allocate(std::size_t bytes, int device_index);
void release(void* ptr, std::size_t bytes, int device_index);
// Returns cached blocks to the driver.
void empty_cache();
struct Stats {
  std::size_t bytes_in_use = 0, bytes_cached = 0, driver_allocations = 0;
};
Stats stats();
}  // namespace cuda_memory

}  // namespace topo

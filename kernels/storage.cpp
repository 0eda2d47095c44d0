#include "kernels/storage.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <new>
#include <unordered_map>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "kernels/error.hpp"

#if TOPO_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace topo {

namespace {
constexpr std::size_t kCpuAlignment = 64;
std::size_t round_up(std::size_t n, std::size_t m) { return (n + m - 1) / m * m; }

#if TOPO_WITH_CUDA
void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) fail("CUDA error in {}: {}", what, cudaGetErrorString(status));
}
#endif
}  // namespace

namespace host_memory {
namespace {
// Large host blocks are cached by rounded size. A fresh multi-megabyte block costs a page fault per 4 KiB
// on first touch, which was 20-40% of a softmax over a training batch; the training loop allocates the
// same sizes every step, so reusing freed blocks removes that. Small blocks go straight to malloc.
// When the parked bytes would pass the limit, the blocks parked longest are freed first: sizes that stopped
// recurring (another model's, another batch shape's) make room for the ones in use. (Refusing new blocks
// instead kept a cache full of the first sizes seen: `topo-bench models` ran Multi-Scale's steps on fresh,
// faulting pages once Star's and the dense model's blocks had filled it.)
// Text batches vary in length, so their sizes rarely recur exactly: a request takes the smallest parked block
// up to 1/8 larger (its true size kept in `handed` for the release), and the cache parks at most about one
// step's worth, the larger of 256 MiB and the peak bytes in use. With exact sizes and the fixed 2 GiB limit a
// Star classifier of 0.4M parameters (62 MiB of tensors at its peak) grew to 1.2 GiB resident over four epochs
// of MTL-16's variable-length reviews, the cache filling with sizes no step asked for again.
constexpr std::size_t kCacheFrom = std::size_t{1} << 18;  // 256 KiB
constexpr std::size_t kCacheFloor = std::size_t{256} << 20;  // the cache may always park this much
struct Block {
  std::size_t size;
  void* ptr;
};
struct Cache {
  std::mutex mutex;
  std::list<Block> parked;                                       // oldest release first
  std::multimap<std::size_t, std::list<Block>::iterator> by_size;  // the same blocks, by size
  std::unordered_map<void*, std::size_t> handed;  // blocks of kCacheFrom and more in use: their true sizes
  std::size_t bytes_cached = 0;
  std::size_t limit = std::size_t{2} << 30;  // 2 GiB
};
Cache& cache() {
  static Cache* c = new Cache;  // leaked on purpose: storage may be released during static destruction
  return *c;
}
std::size_t block_size(std::size_t bytes) {
  if (bytes == 0) bytes = 1;
  return bytes < kCacheFrom ? round_up(bytes, kCpuAlignment) : round_up(bytes, std::size_t{1} << 16);
}
// Live bytes (blocks handed out, at their rounded size) and their high-water mark: relaxed atomics, since the
// figures are read for reports, never to order other memory accesses.
std::atomic<std::size_t> g_in_use{0}, g_peak{0};
void count_allocation(std::size_t size) {
  const std::size_t now = g_in_use.fetch_add(size, std::memory_order_relaxed) + size;
  std::size_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}
// What the cache may park now: the set limit, or less when the process's peak in use is smaller.
std::size_t park_limit(const Cache& c) {
  return std::min(c.limit, std::max(kCacheFloor, g_peak.load(std::memory_order_relaxed)));
}
// Frees the blocks parked longest until `room` more bytes fit under the limit (the caller holds the lock).
void evict_for(Cache& c, std::size_t room) {
  const std::size_t limit = park_limit(c);
  while (!c.parked.empty() && c.bytes_cached + room > limit) {
    const auto oldest = c.parked.begin();
    auto [first, last] = c.by_size.equal_range(oldest->size);
    while (first->second != oldest) ++first;  // a block is in both containers: found before `last`
    c.by_size.erase(first);
    c.bytes_cached -= oldest->size;
    std::free(oldest->ptr);
    c.parked.erase(oldest);
  }
}

// Blocks of 2 MiB and more start on a 2 MiB boundary and ask the kernel for transparent huge pages
// (MADV_HUGEPAGE: where THP is `madvise`, the common default, nothing else gets them). The sparse kernels
// gather rows at random from tables of tens to hundreds of MiB; with 4 KiB pages nearly every such row is a
// TLB miss and a page walk. A standalone gather of 21M random 256-byte rows from a 256 MiB table (1M nodes x
// 64 floats; Skylake-SP, one thread) took 2.55-2.65 s on 4 KiB pages and 1.37-1.63 s on huge pages; at 25 MiB
// (100k nodes) the difference was within the noise. TOPO_HUGE_PAGES=0 in the environment turns this off.
constexpr std::size_t kHugePage = std::size_t{2} << 20;
bool huge_pages_wanted() {
  static const bool wanted = [] {
    const char* v = std::getenv("TOPO_HUGE_PAGES");
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return wanted;
}
void* fresh_block(std::size_t size) {
  if (size < kHugePage || !huge_pages_wanted()) return std::aligned_alloc(kCpuAlignment, size);
  void* ptr = nullptr;
  // posix_memalign, not aligned_alloc: the size need not be a multiple of the alignment.
  if (posix_memalign(&ptr, kHugePage, size) != 0) return nullptr;
#ifdef MADV_HUGEPAGE
  (void)madvise(ptr, size, MADV_HUGEPAGE);  // advice only: without THP the block is ordinary memory
#endif
  return ptr;
}
}  // namespace

void* allocate(std::size_t bytes) {
  const std::size_t size = block_size(bytes);
  if (size >= kCacheFrom) {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.by_size.lower_bound(size);
    if (it != c.by_size.end() && it->first - size <= size / 8) {
      const std::size_t real = it->first;
      void* ptr = it->second->ptr;
      c.parked.erase(it->second);
      c.by_size.erase(it);
      c.bytes_cached -= real;
      c.handed.emplace(ptr, real);
      count_allocation(real);
      return ptr;
    }
  }
  void* ptr = fresh_block(size);
  if (ptr == nullptr) fail("out of host memory allocating {} bytes", bytes);
  if (size >= kCacheFrom) {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    c.handed.emplace(ptr, size);
  }
  count_allocation(size);
  return ptr;
}

void release(void* ptr, std::size_t bytes) {
  std::size_t size = block_size(bytes);
  if (size >= kCacheFrom) {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    const auto handed = c.handed.find(ptr);
    if (handed != c.handed.end()) {  // always, for a block allocate() handed out
      size = handed->second;
      c.handed.erase(handed);
    }
    g_in_use.fetch_sub(size, std::memory_order_relaxed);
    if (size <= park_limit(c)) {
      evict_for(c, size);
      c.by_size.emplace(size, c.parked.insert(c.parked.end(), Block{size, ptr}));
      c.bytes_cached += size;
      return;
    }
    std::free(ptr);
    return;
  }
  g_in_use.fetch_sub(size, std::memory_order_relaxed);
  std::free(ptr);
}

void empty_cache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (const Block& b : c.parked) std::free(b.ptr);
  c.parked.clear();
  c.by_size.clear();
  c.bytes_cached = 0;
}

std::size_t set_cache_limit(std::size_t bytes) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  const std::size_t previous = c.limit;
  c.limit = bytes;
  evict_for(c, 0);
  return previous;
}

std::size_t bytes_cached() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.bytes_cached;
}

Stats stats() {
  Stats s;
  s.bytes_in_use = g_in_use.load(std::memory_order_relaxed);
  s.peak_bytes_in_use = std::max(g_peak.load(std::memory_order_relaxed), s.bytes_in_use);
  s.bytes_cached = bytes_cached();
  return s;
}

void reset_peak() { g_peak.store(g_in_use.load(std::memory_order_relaxed), std::memory_order_relaxed); }
}  // namespace host_memory

Storage::Storage(std::size_t bytes, Device device) : bytes_(bytes), device_(device) {
  if (device.is_cpu()) {
    data_ = host_memory::allocate(bytes);  // never null, even for empty tensors, so views stay well-defined
  } else {
    require_available(device);
    data_ = cuda_memory::allocate(bytes, device.index);
  }
}

Storage::Storage(void* data, std::size_t bytes, Device device, std::function<void()> release)
    : data_(data), bytes_(bytes), device_(device), release_(std::move(release)) {
  TOPO_CHECK(release_, "Storage: borrowed memory needs a release function");
  TOPO_CHECK(data_ != nullptr || bytes_ == 0, "Storage: borrowed memory of {} bytes at a null pointer", bytes_);
}

Storage::~Storage() {
  if (release_) {
    release_();
    return;
  }
  if (device_.is_cpu()) {
    host_memory::release(data_, bytes_);
  } else {
    cuda_memory::release(data_, bytes_, device_.index);
  }
}

void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, std::size_t bytes) {
  if (bytes == 0) return;
  if (dst_device.is_cpu() && src_device.is_cpu()) {
    std::memcpy(dst, src, bytes);
    return;
  }
#if TOPO_WITH_CUDA
  const cudaMemcpyKind kind = dst_device.is_cpu()   ? cudaMemcpyDeviceToHost
                              : src_device.is_cpu() ? cudaMemcpyHostToDevice
                                                    : cudaMemcpyDeviceToDevice;
  cuda_check(cudaMemcpy(dst, src, bytes, kind), "cudaMemcpy");
#else
  fail("copy between {} and {} needs the CUDA backend, which this build lacks", src_device.str(), dst_device.str());
#endif
}

void zero_bytes(void* dst, Device device, std::size_t bytes) {
  if (bytes == 0) return;
  if (device.is_cpu()) {
    std::memset(dst, 0, bytes);
    return;
  }
#if TOPO_WITH_CUDA
  cuda_check(cudaMemset(dst, 0, bytes), "cudaMemset");
#else
  fail("zeroing memory on {} needs the CUDA backend, which this build lacks", device.str());
#endif
}

namespace cuda_memory {
namespace {
// Blocks are cached by (device, rounded size). Small sizes round to 512 B, large ones to 2 MiB, so a
// block can be reused by requests of nearly the same size without splitting.
struct Cache {
  std::mutex mutex;
  std::multimap<std::pair<int, std::size_t>, void*> free_blocks;
  Stats stats;
};
Cache& cache() {
  static Cache* c = new Cache;  // leaked on purpose: storage may be released during static destruction
  return *c;
}
std::size_t block_size(std::size_t bytes) {
  if (bytes == 0) bytes = 1;
  return bytes < (1u << 20) ? round_up(bytes, 512) : round_up(bytes, 2u << 20);
}
}  // namespace

void* allocate(std::size_t bytes, int device_index) {
#if TOPO_WITH_CUDA
  const std::size_t size = block_size(bytes);
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.free_blocks.find({device_index, size});
    if (it != c.free_blocks.end()) {
      void* ptr = it->second;
      c.free_blocks.erase(it);
      c.stats.bytes_cached -= size;
      c.stats.bytes_in_use += size;
      return ptr;
    }
  }
  cuda_check(cudaSetDevice(device_index), "cudaSetDevice");
  void* ptr = nullptr;
  if (cudaMalloc(&ptr, size) != cudaSuccess) {
    (void)cudaGetLastError();
    empty_cache();  // out of memory with blocks parked in the cache: give them back and try once more
    cuda_check(cudaMalloc(&ptr, size), "cudaMalloc");
  }
  std::lock_guard<std::mutex> lock(c.mutex);
  c.stats.bytes_in_use += size;
  c.stats.driver_allocations += 1;
  return ptr;
#else
  (void)bytes;
  fail("CUDA allocation on device {} needs the CUDA backend, which this build lacks", device_index);
#endif
}

void release(void* ptr, std::size_t bytes, int device_index) {
  if (ptr == nullptr) return;
  const std::size_t size = block_size(bytes);
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.free_blocks.insert({{device_index, size}, ptr});
  c.stats.bytes_in_use -= size;
  c.stats.bytes_cached += size;
}

void empty_cache() {
#if TOPO_WITH_CUDA
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (auto& [key, ptr] : c.free_blocks) {
    cudaSetDevice(key.first);
    cudaFree(ptr);
  }
  c.free_blocks.clear();
  c.stats.bytes_cached = 0;
#endif
}

Stats stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.stats;
}

}  // namespace cuda_memory
}  // namespace topo

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "kernels/tensor.hpp"
#include "tests/support/testing.hpp"

using namespace topo;

TEST_CASE("tensor: views share storage; reshape and slice_rows are zero-copy") {
  Tensor t = Tensor::arange(12, DType::F32).reshape({3, 4});
  CHECK(t.shape() == Shape{3, 4});
  Tensor rows = t.slice_rows(1, 3);
  CHECK(rows.shape() == Shape{2, 4});
  CHECK(rows.shares_storage_with(t));
  CHECK(rows.to_vector<float>()[0] == 4.f);
  rows.data<float>()[0] = 40.f;
  CHECK(t.to_vector<float>()[4] == 40.f);
  CHECK(t.reshape({-1}).shape() == Shape{12});
  CHECK(t.reshape({2, -1, 2}).shape() == Shape{2, 3, 2});
  CHECK(t.clone().shares_storage_with(t) == false);
}

TEST_CASE("tensor: bad shapes, dtypes and devices are topo::Error naming the values") {
  Tensor t = Tensor::zeros({3, 4});
  CHECK_THROWS_WITH_AS(t.reshape({5, 2}), doctest::Contains("[3, 4] -> [5, 2]"), Error);
  CHECK_THROWS_AS(t.reshape({-1, -1}), Error);
  CHECK_THROWS_WITH_AS(t.slice_rows(2, 4), doctest::Contains("[2, 4)"), Error);
  CHECK_THROWS_WITH_AS(t.data<std::int64_t>(), doctest::Contains("int64"), Error);
  CHECK_THROWS_AS(t.size(2), Error);
  CHECK_THROWS_AS(Tensor::empty({-1}), Error);
  // Sizes past int64 are out of memory, not a wrapped small allocation written past its end (a crash).
  constexpr std::int64_t kHuge = std::int64_t{1} << 62;
  CHECK_THROWS_WITH_AS(Tensor::zeros({kHuge, 16}), doctest::Contains("out of host memory: shape ["), Error);
  CHECK_THROWS_WITH_AS(Tensor::zeros({kHuge}), doctest::Contains("more bytes than int64 counts"), Error);
  CHECK_THROWS_AS(Device::parse("gpu"), Error);
  CHECK(Device::parse("cuda:1") == Device::cuda(1));
  CHECK(Device::parse("cuda:2147483647") == Device::cuda(2147483647));
  CHECK_THROWS_WITH_AS(Device::parse("cuda:99999999999"), doctest::Contains("cuda:99999999999"), Error);
  CHECK_THROWS_WITH_AS(Device::parse("cuda:2147483648"), doctest::Contains("cuda:2147483648"), Error);
}

TEST_CASE("device discovery fails soft without a driver") {
  const int count = cuda_device_count();  // must not throw, whatever the machine
  CHECK(count >= 0);
  if (count == 0) {
    CHECK_THROWS_WITH_AS(Tensor::zeros({2}, DType::F32, Device::cuda()), doctest::Contains("cuda:0"), Error);
    CHECK_THROWS_AS(require_available(Device::cuda()), Error);
  }
  CHECK_NOTHROW(require_available(Device::cpu()));
}

TEST_CASE("tensor: from_vector, to_vector and item round-trip every dtype") {
  CHECK(Tensor::from_vector(std::vector<std::int32_t>{1, 2, 3}, {3}).to_vector<std::int32_t>() ==
        std::vector<std::int32_t>{1, 2, 3});
  CHECK(Tensor::full({1}, 2.5f).item() == 2.5f);
  CHECK_THROWS_AS(Tensor::from_vector(std::vector<float>{1, 2}, {3}), Error);
  Tensor z = Tensor::zeros({0, 5});
  CHECK(z.numel() == 0);
  CHECK(z.to_vector<float>().empty());
}

TEST_CASE("host allocator: a freed large block is reused for the next request of its size") {
  host_memory::empty_cache();
  const void* first;
  {
    Tensor big = Tensor::empty({1 << 20});  // 4 MiB
    first = big.raw_data();
  }
  CHECK(host_memory::bytes_cached() >= (std::size_t{4} << 20));
  Tensor again = Tensor::empty({1 << 20});
  CHECK(again.raw_data() == first);
  CHECK(host_memory::bytes_cached() == 0);
  Tensor small = Tensor::zeros({7});  // small blocks bypass the cache
  CHECK(host_memory::bytes_cached() == 0);
}

// The VmFlags line of the mapping in /proc/self/smaps that holds `p` ("" where none does).
std::string mapping_flags(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> begin >> dash >> end && dash == '-') inside = begin <= at && at < end;
    else if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

TEST_CASE("host allocator: blocks of 2 MiB and more start on a 2 MiB boundary and are advised for huge pages") {
  // TOPO_HUGE_PAGES=0 turns the advice off (kernels/storage.cpp); the sparse kernels' random row gathers are
  // what it is for.
  const char* env = std::getenv("TOPO_HUGE_PAGES");
  // A kernel built without transparent huge pages refuses the advice (and has no such directory).
  const bool wanted = (env == nullptr || std::strcmp(env, "0") != 0) &&
                      std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled").good();
  host_memory::empty_cache();
  Tensor big = Tensor::empty({(3 << 20) / 4 + 5});  // 3 MiB + 20 bytes: not a multiple of 2 MiB
  const auto address = reinterpret_cast<std::uintptr_t>(big.raw_data());
  CHECK(address % 64 == 0);
  if (wanted) CHECK(address % (std::size_t{2} << 20) == 0);
  const std::string flags = mapping_flags(big.raw_data());
  CAPTURE(flags);
  REQUIRE(!flags.empty());
  CHECK((flags.find(" hg") != std::string::npos) == wanted);
  Tensor small = Tensor::empty({(1 << 19) - 1});  // under 2 MiB: an ordinary block
  CHECK(reinterpret_cast<std::uintptr_t>(small.raw_data()) % 64 == 0);
}

TEST_CASE("host allocator: a request takes a parked block up to 1/8 larger, and its release parks the block whole") {
  host_memory::empty_cache();
  const void* first;
  {
    Tensor big = Tensor::empty({1 << 20});  // 4 MiB
    first = big.raw_data();
  }
  {
    Tensor smaller = Tensor::empty({(1 << 20) - (1 << 16)});  // 3.75 MiB: within 1/8 of the parked block
    CHECK(smaller.raw_data() == first);
    CHECK(host_memory::bytes_cached() == 0);
    CHECK(host_memory::stats().bytes_in_use >= (std::size_t{4} << 20));  // counted at the block's size
  }
  CHECK(host_memory::bytes_cached() == (std::size_t{4} << 20));  // parked at its true size
  Tensor much_smaller = Tensor::empty({1 << 19});  // 2 MiB: too far below, a block of its own
  CHECK(much_smaller.raw_data() != first);
  CHECK(host_memory::bytes_cached() == (std::size_t{4} << 20));
}

TEST_CASE("host allocator: past its limit the cache frees the blocks parked longest, not the newest") {
  host_memory::empty_cache();
  const std::size_t previous = host_memory::set_cache_limit(std::size_t{8} << 20);  // 8 MiB
  const std::size_t mib = std::size_t{1} << 20;
  { Tensor a = Tensor::empty({static_cast<std::int64_t>(3 * mib / 4)}), b = Tensor::empty({static_cast<std::int64_t>(3 * mib / 4)}); }
  CHECK(host_memory::bytes_cached() == 6 * mib);  // two 3 MiB blocks parked
  const void* fresh;
  {
    Tensor c = Tensor::empty({static_cast<std::int64_t>(mib)});  // 4 MiB: a size the cache has not seen
    fresh = c.raw_data();
  }
  CHECK(host_memory::bytes_cached() == 7 * mib);  // one 3 MiB block freed to park it
  Tensor again = Tensor::empty({static_cast<std::int64_t>(mib)});
  CHECK(again.raw_data() == fresh);
  host_memory::set_cache_limit(2 * mib);  // lowering the limit frees what no longer fits
  CHECK(host_memory::bytes_cached() == 0);
  host_memory::set_cache_limit(previous);
}

TEST_CASE("tensor: borrowed storage is read and written in place and released, never freed or adopted") {
  // What the Python binding does with a torch tensor's memory: the kernels see the caller's buffer itself.
  std::vector<float> owner = {1.f, 2.f, 3.f, 4.f, 5.f, 6.f};
  int released = 0;
  {
    auto storage = std::make_shared<Storage>(owner.data(), owner.size() * sizeof(float), Device::cpu(),
                                             [&released] { ++released; });
    Tensor t = Tensor::from_storage(storage, {2, 3}, DType::F32);
    storage.reset();
    CHECK(t.raw_data() == owner.data());
    CHECK(t.to_vector<float>() == owner);
    t.data<float>()[4] = 50.f;
    CHECK(owner[4] == 50.f);
    // The only handle, spanning all of it, yet not private: its owner outside still sees it.
    CHECK_FALSE(t.sole_owner());
    CHECK(released == 0);
  }
  CHECK(released == 1);
  auto small = std::make_shared<Storage>(owner.data(), 2 * sizeof(float), Device::cpu(), [] {});
  CHECK_THROWS_WITH_AS(Tensor::from_storage(small, {3}, DType::F32), doctest::Contains("needs 12 bytes"), Error);
  CHECK_THROWS_AS(Storage(owner.data(), 4, Device::cpu(), nullptr), Error);
}

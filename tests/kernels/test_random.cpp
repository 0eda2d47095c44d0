#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/dense/random.hpp"
#include "kernels/dense/random_math.hpp"
#include "kernels/threads.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using topo::testing::kAwkwardSizes;

namespace {

// Reference stream, written from the layout documented in random_math.hpp: element g of stream `tag`
// is word g % 4 of Philox4x32-10(counter = {g / 4 low, g / 4 high, tag, 0}, key = {seed low, seed high}).
std::uint32_t ref_word(std::uint64_t seed, std::uint32_t tag, std::uint64_t g) {
  const std::uint64_t block = g / 4;
  const Philox4 ctr{{std::uint32_t(block & 0xffffffffu), std::uint32_t(block >> 32), tag, 0u}};
  return philox4x32_10_raw(ctr, std::uint32_t(seed & 0xffffffffu), std::uint32_t(seed >> 32)).v[g % 4];
}
double ref_uniform(std::uint64_t seed, std::uint64_t g) { return std::ldexp(double(ref_word(seed, 0, g) >> 8), -24); }
double ref_normal(std::uint64_t seed, std::uint64_t g) {
  const std::uint64_t first = g - g % 2;  // the pair (2k, 2k+1) shares two uniforms
  const double u1 = std::ldexp(double((ref_word(seed, 1, first) >> 8) + 1), -24);
  const double u2 = std::ldexp(double(ref_word(seed, 1, first + 1) >> 8), -24);
  const double r = std::sqrt(-2 * std::log(u1)), a = 2 * M_PI * u2;
  return g % 2 == 0 ? r * std::cos(a) : r * std::sin(a);
}

struct Moments {
  double mean = 0, var = 0;
};
Moments moments(const std::vector<float>& v) {
  Moments m;
  for (float x : v) m.mean += x;
  m.mean /= double(v.size());
  for (float x : v) m.var += (x - m.mean) * (x - m.mean);
  m.var /= double(v.size());
  return m;
}

std::vector<float> concat_vec(std::vector<float> a, const std::vector<float>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST_CASE("philox4x32-10 matches the Random123 known-answer vectors") {
  struct Kat {
    Philox4 ctr;
    std::uint32_t k0, k1;
    Philox4 expected;
  };
  const Kat kats[] = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
      {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}}, 0xffffffffu, 0xffffffffu,
       {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
      {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, 0xa4093822u, 0x299f31d0u,
       {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}},
  };
  for (const Kat& k : kats) {
    const Philox4 out = philox4x32_10_raw(k.ctr, k.k0, k.k1);
    for (int i = 0; i < 4; ++i) CHECK(out.v[i] == k.expected.v[i]);
  }
}

TEST_CASE("random_uniform and random_normal match the reference stream at awkward sizes") {
  for (std::int64_t n : kAwkwardSizes) {
    CAPTURE(n);
    const std::uint64_t seed = 0x1234'5678'9abc'def0ull + n;
    std::vector<float> u = random_uniform({n, 3}, -2.f, 3.f, seed).to_vector<float>();
    std::vector<float> z = random_normal({n, 3}, 1.5f, 0.5f, seed).to_vector<float>();
    std::vector<float> ru(u.size()), rz(z.size());
    for (std::size_t i = 0; i < u.size(); ++i) {
      ru[i] = float(-2.0 + 5.0 * ref_uniform(seed, i));
      rz[i] = float(1.5 + 0.5 * ref_normal(seed, i));
    }
    TOPO_CHECK_CLOSE(u, ru, 1e-6, 1e-6);
    TOPO_CHECK_CLOSE(z, rz, 1e-5, 1e-5);
  }
}

TEST_CASE("uniform and normal draws have the right moments over 2^20 draws") {
  const std::int64_t n = 1 << 20;
  const std::vector<float> u = random_uniform({n}, 0.f, 1.f, 7).to_vector<float>();
  const Moments mu = moments(u);
  // Standard error of the mean: sqrt(1/12 / n) ~ 2.8e-4; of the variance ~ 8e-5.
  CHECK(std::abs(mu.mean - 0.5) < 2e-3);
  CHECK(std::abs(mu.var - 1.0 / 12) < 1e-3);
  bool in_range = true;
  for (float x : u) in_range = in_range && x >= 0.f && x < 1.f;
  CHECK(in_range);

  const std::vector<float> w = random_uniform({n}, -3.f, 5.f, 8).to_vector<float>();
  const Moments mw = moments(w);
  CHECK(std::abs(mw.mean - 1.0) < 2e-2);
  CHECK(std::abs(mw.var - 64.0 / 12) < 5e-2);

  const std::vector<float> z = random_normal({n}, 0.f, 1.f, 9).to_vector<float>();
  const Moments mz = moments(z);
  CHECK(std::abs(mz.mean) < 5e-3);
  CHECK(std::abs(mz.var - 1.0) < 1e-2);
  std::int64_t within = 0;
  for (float x : z) within += std::abs(x) < 1.f;
  CHECK(std::abs(double(within) / n - 0.682689492) < 3e-3);  // P(|Z| < 1)

  const std::vector<float> s = random_normal({n}, 2.f, 3.f, 10).to_vector<float>();
  const Moments ms = moments(s);
  CHECK(std::abs(ms.mean - 2.0) < 2e-2);
  CHECK(std::abs(ms.var - 9.0) < 1e-1);
}

TEST_CASE("dropout matches the reference mask at awkward sizes and offsets; its bit mask applied gives the same bits") {
  for (std::int64_t n : kAwkwardSizes) {
    // The last offset puts the 32-bit carry of the block counter inside a batch of blocks.
    for (std::uint64_t offset : {0ull, 1ull, 3ull, 6ull, 1000003ull, (1ull << 34) - 37}) {
      CAPTURE(n);
      CAPTURE(offset);
      const float p = 0.3f;
      const std::uint64_t seed = 42 + n;
      // Values in [0.5, 1.5): never zero, so a zero output means a dropped element.
      Tensor x = topo::testing::random_uniform({n, 5}, n, 0.5f, 1.5f);
      const std::vector<float> xs = x.to_vector<float>();
      const std::vector<float> y = dropout(x, p, seed, offset).to_vector<float>();
      std::vector<float> expected(xs.size());
      for (std::size_t i = 0; i < xs.size(); ++i)
        expected[i] = ref_uniform(seed, offset + i) >= p ? float(xs[i] / (1.0 - p)) : 0.f;
      TOPO_CHECK_CLOSE(y, expected, 1e-6, 1e-6);
      bool same_mask = true;
      for (std::size_t i = 0; i < xs.size(); ++i) same_mask = same_mask && ((y[i] == 0.f) == (expected[i] == 0.f));
      CHECK(same_mask);

      // The bit mask: one bit per element, set where the reference keeps it, none past the end.
      const Tensor mask = dropout_mask(x.numel(), p, seed, offset);
      REQUIRE(mask.dtype() == DType::I32);
      REQUIRE(mask.numel() == (x.numel() + 31) / 32);
      const std::vector<std::int32_t> words = mask.to_vector<std::int32_t>();
      bool bits_right = true;
      for (std::int64_t i = 0; i < mask.numel() * 32; ++i) {
        const bool bit = (static_cast<std::uint32_t>(words[i / 32]) >> (i % 32)) & 1u;
        bits_right = bits_right && bit == (i < x.numel() && ref_uniform(seed, offset + i) >= p);
      }
      CHECK(bits_right);
      // Drawn and applied in one pass (dropout's own path), the mask alone's bits.
      const MaskedDropout both = dropout_with_mask(x, p, seed, offset);
      TOPO_CHECK_CLOSE(both.y.to_vector<float>(), expected, 1e-6, 1e-6);
      CHECK(both.mask.to_vector<std::int32_t>() == words);
      // Applied whole, and row run by row run (a lazy input's slabs), it gives dropout's bits.
      CHECK(dropout_apply_mask(x, mask, p).to_vector<float>() == y);
      for (std::int64_t step : {std::int64_t{1}, std::int64_t{3}, std::int64_t{7}}) {
        bool runs_right = true;
        for (std::int64_t r = 0; r < n; r += step) {
          const std::int64_t end = std::min(n, r + step);
          const std::vector<float> part = dropout_apply_mask(x.slice_rows(r, end), mask, p, r * 5).to_vector<float>();
          runs_right = runs_right && std::equal(part.begin(), part.end(), y.begin() + r * 5);
        }
        CHECK(runs_right);
      }
    }
  }
  // A dropped NaN stays NaN and a dropped negative is -0, as dropout's x * 0: a seed whose mask drops all four.
  const Tensor special = Tensor::from_vector(std::vector<float>{std::nanf(""), -2.f, 3.f, -0.f}, {4});
  std::uint64_t seed = 1;
  while (dropout_mask(4, 0.9f, seed).to_vector<std::int32_t>()[0] != 0) ++seed;
  const std::vector<float> z = dropout_apply_mask(special, dropout_mask(4, 0.9f, seed), 0.9f).to_vector<float>();
  CHECK(std::isnan(z[0]));
  CHECK((z[1] == 0.f && std::signbit(z[1])));
  CHECK((z[2] == 0.f && !std::signbit(z[2])));
}

TEST_CASE("dropout keeps about 1 - p of the elements, scaled by 1/(1-p)") {
  const std::int64_t n = 1 << 20;
  Tensor ones = Tensor::full({n}, 1.f);
  for (float p : {0.1f, 0.5f, 0.9f}) {
    CAPTURE(p);
    const std::vector<float> y = dropout(ones, p, 123, 0).to_vector<float>();
    std::int64_t kept = 0;
    bool values_ok = true;
    for (float v : y) {
      if (v != 0.f) {
        ++kept;
        values_ok = values_ok && std::abs(v - 1.0 / (1.0 - p)) < 1e-5;
      }
    }
    CHECK(values_ok);
    CHECK(std::abs(double(kept) / n - (1.0 - p)) < 3e-3);  // standard error <= 5e-4
  }
}

TEST_CASE("dropout is deterministic in (seed, offset) and differs across offsets and seeds") {
  Tensor x = Tensor::full({4096}, 1.f);
  const std::vector<float> a = dropout(x, 0.5f, 5, 100).to_vector<float>();
  CHECK(a == dropout(x, 0.5f, 5, 100).to_vector<float>());
  const std::vector<float> b = dropout(x, 0.5f, 5, 101).to_vector<float>();
  const std::vector<float> c = dropout(x, 0.5f, 6, 100).to_vector<float>();
  std::int64_t same_b = 0, same_c = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    same_b += a[i] == b[i];
    same_c += a[i] == c[i];
  }
  // Independent masks agree on about half the positions.
  CHECK(same_b < 2400);
  CHECK(same_c < 2400);
  CHECK(random_normal({100}, 0, 1, 1).to_vector<float>() == random_normal({100}, 0, 1, 1).to_vector<float>());
  CHECK(random_normal({100}, 0, 1, 1).to_vector<float>() != random_normal({100}, 0, 1, 2).to_vector<float>());
}

TEST_CASE("dropout over a tensor equals dropout over its two halves at offsets 0 and n/2") {
  for (std::int64_t n : {2, 7, 33, 257, 100003}) {
    CAPTURE(n);
    Tensor x = topo::testing::random_uniform({n}, n, 0.5f, 1.5f);
    const std::int64_t half = n / 2;
    const std::vector<float> whole = dropout(x, 0.25f, 77, 0).to_vector<float>();
    const std::vector<float> parts =
        concat_vec(dropout(x.slice_rows(0, half), 0.25f, 77, 0).to_vector<float>(),
                   dropout(x.slice_rows(half, n), 0.25f, 77, std::uint64_t(half)).to_vector<float>());
    CHECK(whole == parts);
  }
}

TEST_CASE("CPU random results do not depend on the number of OpenMP threads") {
  const int saved = num_threads();
  const std::int64_t n = (1 << 18) + 3;
  Tensor x = topo::testing::random_uniform({n}, 3, 0.5f, 1.5f);
  std::vector<std::vector<float>> runs[3];
  for (int threads : {1, 2, 5}) {
    set_num_threads(threads);
    runs[0].push_back(dropout(x, 0.4f, 9, 11).to_vector<float>());
    runs[1].push_back(random_uniform({n}, -1.f, 1.f, 9).to_vector<float>());
    runs[2].push_back(random_normal({n}, 0.f, 1.f, 9).to_vector<float>());
  }
  set_num_threads(saved);
  for (auto& r : runs) {
    CHECK(r[0] == r[1]);
    CHECK(r[0] == r[2]);
  }
}

TEST_CASE("dropout edge cases and errors name the value") {
  Tensor x = topo::testing::random_uniform({3, 4}, 1);
  Tensor same = dropout(x, 0.f, 1);
  CHECK(same.shares_storage_with(x));
  CHECK(same.to_vector<float>() == x.to_vector<float>());
  CHECK(dropout(Tensor::empty({0}), 0.5f, 1).numel() == 0);
  for (float p : {-0.25f, 1.f, 1.5f}) {
    CAPTURE(p);
    try {
      (void)dropout(x, p, 1);
      FAIL("no error for p = " << p);
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find(fmt::format("{}", p)) != std::string::npos);
    }
    CHECK_THROWS_AS(dropout_mask(12, p, 1), Error);
    CHECK_THROWS_AS(dropout_with_mask(x, p, 1), Error);
    CHECK_THROWS_AS(dropout_apply_mask(x, dropout_mask(12, 0.5f, 1), p), Error);
  }
  CHECK_THROWS_AS(dropout(x, std::nanf(""), 1), Error);
  CHECK_THROWS_AS(dropout(Tensor::arange(4), 0.5f, 1), Error);
  // A mask too short for the run, of another dtype, or not 1-D: errors naming what was given.
  CHECK_THROWS_AS(dropout_apply_mask(x, dropout_mask(12, 0.5f, 1), 0.5f, 21), Error);
  CHECK_THROWS_AS(dropout_apply_mask(Tensor::full({40}, 1.f), dropout_mask(12, 0.5f, 1), 0.5f), Error);
  CHECK_THROWS_AS(dropout_apply_mask(x, Tensor::full({1}, 0.f), 0.5f), Error);
  CHECK_THROWS_AS(dropout_apply_mask(x, Tensor::zeros({1, 1}, DType::I32), 0.5f), Error);
  CHECK_THROWS_AS(dropout_mask(-1, 0.5f, 1), Error);
  CHECK(dropout_mask(0, 0.5f, 1).numel() == 0);
  CHECK_THROWS_AS(random_uniform({3}, 1.f, 0.f, 1), Error);
  CHECK_THROWS_AS(random_normal({3}, 0.f, -1.f, 1), Error);
  CHECK(random_uniform({0}, 0.f, 1.f, 1).numel() == 0);
}

TEST_CASE("philox_batch equals philox4x32_10 block by block, full batches and short ones") {
  // Full batches take a vector path on AVX-512 CPUs; a short batch the portable loop.
  std::uint64_t blocks[kPhiloxBatch];
  Philox4 out[kPhiloxBatch];
  for (std::uint64_t seed : {0ull, 7ull, 0x123456789abcdef0ull, ~0ull})
    for (std::uint32_t stream : {kStreamUniform, kStreamNormal})
      for (int count : {kPhiloxBatch, 5, 1}) {
        for (int j = 0; j < kPhiloxBatch; ++j) blocks[j] = seed * 31 + static_cast<std::uint64_t>(j) * 0x9E3779B97F4A7C15ull;
        philox_batch(blocks, stream, seed, out, count);
        for (int j = 0; j < count; ++j) {
          const Philox4 want = philox4x32_10(blocks[j], stream, seed);
          for (int w = 0; w < 4; ++w) CHECK(out[j].v[w] == want.v[w]);
        }
      }
}

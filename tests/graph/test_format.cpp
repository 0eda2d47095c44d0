// coo_to_csr against a naive reference (for each row, scan all edges in id order), over many random COO
// matrices: empty, isolated rows, multi-edges, int32 and int64, and sizes that take the parallel path.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "kernels/sparse/format.hpp"
#include "tests/support/testing.hpp"

using namespace topo;

namespace {

struct Coo {
  std::vector<std::int64_t> rows, cols;
};

Coo random_coo(std::int64_t nnz, std::int64_t num_rows, std::int64_t num_cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Coo c;
  // Rows drawn from a small subset half the time: many multi-edges and isolated rows.
  const std::int64_t hot = std::max<std::int64_t>(1, num_rows / 4);
  for (std::int64_t e = 0; e < nnz; ++e) {
    const bool use_hot = rng() % 2 == 0;
    c.rows.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(use_hot ? hot : num_rows)));
    c.cols.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(num_cols)));
  }
  return c;
}

template <class T>
Tensor as_tensor(const std::vector<std::int64_t>& v) {
  return Tensor::from_vector(std::vector<T>(v.begin(), v.end()), {static_cast<std::int64_t>(v.size())});
}

template <class T>
std::vector<std::int64_t> as_i64(const Tensor& t) {
  const auto v = t.to_vector<T>();
  return std::vector<std::int64_t>(v.begin(), v.end());
}

// The reference: row r lists the edges e with rows[e] == r in increasing e.
template <class T>
void check_against_reference(const Coo& c, std::int64_t num_rows, std::int64_t num_cols) {
  const CsrView csr = coo_to_csr(as_tensor<T>(c.rows), as_tensor<T>(c.cols), num_rows, num_cols);
  REQUIRE(csr.indptr.dtype() == dtype_v<T>);
  REQUIRE(csr.num_rows == num_rows);
  REQUIRE(csr.num_cols == num_cols);
  const auto indptr = as_i64<T>(csr.indptr), indices = as_i64<T>(csr.indices), eids = as_i64<T>(csr.eids);
  REQUIRE(indptr.size() == static_cast<std::size_t>(num_rows + 1));
  REQUIRE(indices.size() == c.rows.size());
  std::vector<std::int64_t> want_indptr{0}, want_indices, want_eids;
  for (std::int64_t r = 0; r < num_rows; ++r) {
    for (std::size_t e = 0; e < c.rows.size(); ++e)
      if (c.rows[e] == r) {
        want_indices.push_back(c.cols[e]);
        want_eids.push_back(static_cast<std::int64_t>(e));
      }
    want_indptr.push_back(static_cast<std::int64_t>(want_indices.size()));
  }
  CHECK(indptr == want_indptr);
  CHECK(indices == want_indices);
  CHECK(eids == want_eids);
  // Degrees fall out of indptr.
  const auto deg = as_i64<T>(degrees_from_indptr(csr.indptr));
  std::vector<std::int64_t> want_deg(static_cast<std::size_t>(num_rows), 0);
  for (std::int64_t r : c.rows) ++want_deg[r];
  CHECK(deg == want_deg);
}

}  // namespace

TEST_CASE("coo_to_csr matches the reference on random matrices (int32 and int64)") {
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    const std::int64_t num_rows = testing::kAwkwardSizes[seed % testing::kAwkwardSizes.size()];
    const std::int64_t num_cols = testing::kAwkwardSizes[(seed / 2) % testing::kAwkwardSizes.size()];
    const std::int64_t nnz = static_cast<std::int64_t>(seed * 13 % 300);  // includes 0 (empty)
    const Coo c = random_coo(nnz, num_rows, num_cols, seed);
    INFO("seed " << seed << " rows " << num_rows << " cols " << num_cols << " nnz " << nnz);
    check_against_reference<std::int32_t>(c, num_rows, num_cols);
    check_against_reference<std::int64_t>(c, num_rows, num_cols);
  }
}

TEST_CASE("coo_to_csr: empty matrix, matrix with no rows, and all edges in one row") {
  check_against_reference<std::int32_t>(Coo{}, 5, 5);
  check_against_reference<std::int64_t>(Coo{}, 0, 0);
  Coo one_row;
  for (int e = 0; e < 50; ++e) {
    one_row.rows.push_back(3);
    one_row.cols.push_back((e * 7) % 11);
  }
  check_against_reference<std::int32_t>(one_row, 4, 11);
}

TEST_CASE("coo_to_csr: the parallel path (many edges) is stable and exact") {
  // Above the serial threshold (2^16 edges) each thread histograms its own chunk; order within rows must
  // still be by edge id. A direct check (not the O(rows * nnz) reference): every row's eids increase and
  // each entry's (row, col) is the COO edge it names.
  for (std::uint64_t seed : {1u, 2u}) {
    const std::int64_t nnz = 200003, num_rows = 1031, num_cols = 517;
    const Coo c = random_coo(nnz, num_rows, num_cols, seed);
    const CsrView csr = coo_to_csr(as_tensor<std::int64_t>(c.rows), as_tensor<std::int64_t>(c.cols), num_rows, num_cols);
    const auto indptr = as_i64<std::int64_t>(csr.indptr), indices = as_i64<std::int64_t>(csr.indices),
               eids = as_i64<std::int64_t>(csr.eids);
    std::vector<std::int64_t> count(num_rows, 0);
    for (std::int64_t r : c.rows) ++count[r];
    bool ok = indptr[0] == 0;
    std::vector<char> seen(nnz, 0);
    for (std::int64_t r = 0; r < num_rows && ok; ++r) {
      ok = indptr[r + 1] - indptr[r] == count[r];
      for (std::int64_t k = indptr[r]; k < indptr[r + 1] && ok; ++k) {
        const std::int64_t e = eids[k];
        ok = e >= 0 && e < nnz && !seen[e] && c.rows[e] == r && c.cols[e] == indices[k] &&
             (k == indptr[r] || eids[k - 1] < e);
        if (ok) seen[e] = 1;
      }
    }
    CHECK(ok);
  }
}

TEST_CASE("coo_to_csr: the structure and the edge ids alone equal the full view's arrays") {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const std::int64_t num_rows = 50, num_cols = 40;
    const Coo c = random_coo(100000 * seed, num_rows, num_cols, seed);  // past the parallel size at seed 1
    const Tensor rows = as_tensor<std::int32_t>(c.rows), cols = as_tensor<std::int32_t>(c.cols);
    const CsrView full = coo_to_csr(rows, cols, num_rows, num_cols);
    const CsrView structure = coo_to_csr(rows, cols, num_rows, num_cols, CsrArrays::structure);
    const CsrView ids = coo_to_csr(rows, cols, num_rows, num_cols, CsrArrays::edge_ids);
    CHECK_FALSE(structure.has_edge_ids());
    CHECK_FALSE(ids.indices.defined());
    CHECK(structure.indptr.to_vector<std::int32_t>() == full.indptr.to_vector<std::int32_t>());
    CHECK(structure.indices.to_vector<std::int32_t>() == full.indices.to_vector<std::int32_t>());
    CHECK(ids.indptr.to_vector<std::int32_t>() == full.indptr.to_vector<std::int32_t>());
    CHECK(ids.eids.to_vector<std::int32_t>() == full.eids.to_vector<std::int32_t>());
  }
}

TEST_CASE("coo_to_csr rejects bad input with the offending value") {
  const Tensor rows = Tensor::from_vector(std::vector<std::int32_t>{0, 1, 7}, {3});
  const Tensor cols = Tensor::from_vector(std::vector<std::int32_t>{0, -1, 0}, {3});
  const Tensor good_cols = Tensor::from_vector(std::vector<std::int32_t>{0, 1, 0}, {3});
  CHECK_THROWS_WITH_AS(coo_to_csr(rows, good_cols, 4, 4), "coo_to_csr: rows[2] = 7 is outside [0, 4)", Error);
  CHECK_THROWS_WITH_AS(coo_to_csr(good_cols, cols, 4, 4), "coo_to_csr: cols[1] = -1 is outside [0, 4)", Error);
  const Tensor wide = Tensor::from_vector(std::vector<std::int64_t>{0, 1, 0}, {3});
  CHECK_THROWS_AS(coo_to_csr(good_cols, wide, 4, 4), Error);
  CHECK_THROWS_AS(coo_to_csr(Tensor::zeros({3}), Tensor::zeros({3}), 4, 4), Error);
}

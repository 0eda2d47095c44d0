// CUDA coo_to_csr / degrees / HeteroGraph formats against the CPU ones (the CPU path is itself checked
// against a naive reference in tests/graph). Runs only where a CUDA device exists.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "graph/graph.hpp"
#include "kernels/sparse/format.hpp"
#include "tests/support/testing.hpp"

using namespace topo;

namespace {

template <class T>
void compare_coo_to_csr(std::int64_t nnz, std::int64_t num_rows, std::int64_t num_cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> rows(nnz), cols(nnz);
  const std::int64_t hot = std::max<std::int64_t>(1, num_rows / 3);  // skewed rows: multi-edges, empty rows
  for (std::int64_t e = 0; e < nnz; ++e) {
    rows[e] = static_cast<T>(rng() % static_cast<std::uint64_t>(rng() % 2 ? hot : num_rows));
    cols[e] = static_cast<T>(rng() % static_cast<std::uint64_t>(num_cols));
  }
  const Tensor r = Tensor::from_vector(rows, {nnz}), c = Tensor::from_vector(cols, {nnz});
  const CsrView cpu = coo_to_csr(r, c, num_rows, num_cols);
  const CsrView gpu = coo_to_csr(r.to(Device::cuda()), c.to(Device::cuda()), num_rows, num_cols);
  REQUIRE(gpu.device().is_cuda());
  INFO("nnz " << nnz << " rows " << num_rows << " cols " << num_cols << " seed " << seed);
  CHECK(gpu.indptr.to_vector<T>() == cpu.indptr.to_vector<T>());
  CHECK(gpu.indices.to_vector<T>() == cpu.indices.to_vector<T>());
  CHECK(gpu.eids.to_vector<T>() == cpu.eids.to_vector<T>());  // both stable: identical, not just equivalent
  CHECK(degrees_from_indptr(gpu.indptr).to_vector<T>() == degrees_from_indptr(cpu.indptr).to_vector<T>());
}

}  // namespace

TEST_CASE("CUDA coo_to_csr equals the CPU one (int32 and int64, awkward sizes, empty, large)") {
  std::uint64_t seed = 0;
  for (std::int64_t num_rows : testing::kAwkwardSizes)
    for (std::int64_t nnz : {std::int64_t{0}, std::int64_t{1}, std::int64_t{33}, std::int64_t{1000}}) {
      compare_coo_to_csr<std::int32_t>(nnz, num_rows, 17, ++seed);
      compare_coo_to_csr<std::int64_t>(nnz, num_rows, 17, ++seed);
    }
  compare_coo_to_csr<std::int32_t>(1 << 20, 70001, 70001, 99);
  compare_coo_to_csr<std::int64_t>(300007, 1, 5, 100);  // everything in one row
  compare_coo_to_csr<std::int32_t>(10, 1, 1, 101);  // one row, one column
}

TEST_CASE("a HeteroGraph moved to CUDA builds the same CSR/CSC there") {
  const std::vector<std::int64_t> lens = {1, 2, 5, 33};
  const auto star = builders::star_batch(lens);
  const HeteroGraph g({builders::node_type("sat", lens), builders::node_type("relay", builders::ones(4))},
                      {{{"sat", "ring", "sat"}, builders::ring_batch(lens, true)},
                       {{"relay", "relay_to_sat", "sat"}, star.from_center},
                       {{"sat", "sat_to_relay", "relay"}, star.to_center}});
  const HeteroGraph d = g.to(Device::cuda());
  for (int r = 0; r < g.num_relations(); ++r) {
    CHECK(d.in_csc(r).indptr.device().is_cuda());
    CHECK(d.in_csc(r).indptr.to_vector<std::int32_t>() == g.in_csc(r).indptr.to_vector<std::int32_t>());
    CHECK(d.in_csc(r).indices.to_vector<std::int32_t>() == g.in_csc(r).indices.to_vector<std::int32_t>());
    CHECK(d.out_csr(r).eids.to_vector<std::int32_t>() == g.out_csr(r).eids.to_vector<std::int32_t>());
    CHECK(d.in_degrees(r).to_vector<std::int32_t>() == g.in_degrees(r).to_vector<std::int32_t>());
    CHECK(d.in_edges(r, 0).eids == g.in_edges(r, 0).eids);
  }
  // Built formats travel with to(): a graph whose CSC exists on the CPU carries it to the device.
  const HeteroGraph moved = g.to(Device::cuda());
  CHECK(moved.in_csc(0).indptr.device().is_cuda());
}

TEST_CASE("blocks assembled on CUDA from the device's cached formats equal the CPU ones") {
  const std::vector<std::int64_t> lens = {1, 2, 5, 33, 4};
  for (bool int64 : {false, true}) {
    const DType dt = int64 ? DType::I64 : DType::I32;
    const auto star = builders::star_batch(lens, dt);
    const HeteroGraph g({builders::node_type("sat", lens), builders::node_type("emb", lens),
                         builders::node_type("relay", builders::ones(5))},
                        {{{"sat", "ring", "sat"}, builders::ring_batch(lens, true, dt)},
                         {{"emb", "token", "sat"}, builders::self_loops_batch(lens, dt)},
                         {{"relay", "from_relay", "sat"}, star.from_center},
                         {{"sat", "self", "sat"}, builders::self_loops_batch(lens, dt)},
                         {{"sat", "to_relay", "relay"}, star.to_center}});
    const HeteroGraph d = g.to(Device::cuda());
    const Block cpu = to_block(g, "sat", {"ring", "token", "from_relay", "self"});
    const Block gpu = to_block(d, "sat", {"ring", "token", "from_relay", "self"});
    REQUIRE(gpu.in.device().is_cuda());
    auto same = [&](const Tensor& a, const Tensor& b) {
      if (int64) CHECK(a.to_vector<std::int64_t>() == b.to_vector<std::int64_t>());
      else CHECK(a.to_vector<std::int32_t>() == b.to_vector<std::int32_t>());
    };
    for (const auto& [c, x] : {std::pair{cpu.in, gpu.in}, std::pair{cpu.out, gpu.out}}) {
      same(c.indptr, x.indptr);
      same(c.indices, x.indices);
      same(c.eids, x.eids);
    }
    // Segment blocks (per-example readouts) are built on the device directly.
    const Block seg = segment_block({3, 0, 2}, "tok", Device::cuda());
    CHECK(seg.in.indptr.to_vector<std::int32_t>() == std::vector<std::int32_t>{0, 3, 3, 5});
  }
}

#pragma once
// Small graphs for the sparse-kernel tests, as plain COO lists (the truth the references loop over) plus the
// CSR views the kernels take. Built here without graph/ so the kernels are tested on their own layer.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "kernels/sparse/format.hpp"
#include "kernels/sparse/reference.hpp"

namespace topo::testing {

// The COO lists (num_src, num_dst, src, dst: edge e runs src[e] -> dst[e]) are the references' reference::Coo.
struct CooGraph : reference::Coo {
  std::string name;
  CsrView in;   // rows = destinations
  CsrView out;  // rows = sources
};

inline CooGraph make_coo_graph(std::string name, std::int64_t num_src, std::int64_t num_dst,
                               std::vector<std::int64_t> src, std::vector<std::int64_t> dst, DType ids = DType::I64) {
  CooGraph g;
  g.name = std::move(name);
  g.num_src = num_src;
  g.num_dst = num_dst;
  g.src = std::move(src);
  g.dst = std::move(dst);
  const std::int64_t e = g.num_edges();
  auto tensor = [&](const std::vector<std::int64_t>& v) {
    Tensor t = Tensor::from_vector(v, {e});
    if (ids == DType::I64) return t;
    std::vector<std::int32_t> narrow(v.begin(), v.end());
    return Tensor::from_vector(narrow, {e});
  };
  g.in = coo_to_csr(tensor(g.dst), tensor(g.src), num_dst, num_src);
  g.out = coo_to_csr(tensor(g.src), tensor(g.dst), num_src, num_dst);
  return g;
}

// Edges in destination order for the given in-degrees (destination v gets degrees[v] in-edges), sources
// drawn uniformly from [0, num_src) with `rng`: graphs whose degrees straddle a kernel's internal limits.
struct EdgeLists {
  std::vector<std::int64_t> src, dst;
};
inline EdgeLists edges_with_degrees(const std::vector<std::int64_t>& degrees, std::int64_t num_src,
                                    std::mt19937_64& rng) {
  EdgeLists e;
  for (std::size_t v = 0; v < degrees.size(); ++v)
    for (std::int64_t k = 0; k < degrees[v]; ++k) {
      e.src.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(num_src)));
      e.dst.push_back(static_cast<std::int64_t>(v));
    }
  return e;
}

// Random bipartite-ish graph: some destinations get no in-edges, destination 0 is heavy, multi-edges allowed.
inline CooGraph random_graph(std::int64_t num_src, std::int64_t num_dst, std::int64_t edges, std::uint64_t seed,
                             DType ids = DType::I64) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> us(0, num_src - 1), vs(0, std::max<std::int64_t>(num_dst / 2, 1) - 1);
  std::vector<std::int64_t> src, dst;
  for (std::int64_t i = 0; i < edges; ++i) {
    src.push_back(us(rng));
    dst.push_back(i % 3 == 0 ? 0 : vs(rng));  // upper half of destinations stays empty
  }
  return make_coo_graph("random(seed " + std::to_string(seed) + ")", num_src, num_dst, src, dst, ids);
}

// Star-Transformer satellites: closed ring with self edges plus a relay node n that every satellite reads
// and that reads every satellite. Node ids 0..n-1 satellites, n the relay.
inline CooGraph ring_relay_graph(std::int64_t n) {
  std::vector<std::int64_t> src, dst;
  auto edge = [&](std::int64_t u, std::int64_t v) { src.push_back(u); dst.push_back(v); };
  for (std::int64_t i = 0; i < n; ++i) {
    edge(i, i);
    if (n > 1) edge((i + n - 1) % n, i);
    if (n > 2) edge((i + 1) % n, i);
    edge(n, i);
    edge(i, n);
  }
  return make_coo_graph("ring_relay(" + std::to_string(n) + ")", n + 1, n + 1, src, dst);
}

// |i - j| <= (w - 1) / 2.
inline CooGraph window_graph(std::int64_t n, std::int64_t w) {
  std::vector<std::int64_t> src, dst;
  for (std::int64_t v = 0; v < n; ++v)
    for (std::int64_t u = std::max<std::int64_t>(0, v - (w - 1) / 2); u <= std::min(n - 1, v + (w - 1) / 2); ++u) {
      src.push_back(u);
      dst.push_back(v);
    }
  return make_coo_graph("window(" + std::to_string(n) + "," + std::to_string(w) + ")", n, n, src, dst);
}

inline std::vector<CooGraph> test_graphs() {
  std::vector<CooGraph> gs;
  gs.push_back(random_graph(7, 9, 40, 1));
  gs.push_back(random_graph(33, 31, 257, 2, DType::I32));
  gs.push_back(random_graph(1, 1, 1, 3));
  gs.push_back(ring_relay_graph(1));
  gs.push_back(ring_relay_graph(2));
  gs.push_back(ring_relay_graph(33));
  gs.push_back(window_graph(31, 9));
  gs.push_back(make_coo_graph("no edges", 4, 5, {}, {}));
  return gs;
}

}  // namespace topo::testing

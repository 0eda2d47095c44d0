// Neighbour sampling (graph/sampling.hpp): each seed keeps min(fanout, in-degree) distinct in-edges of its
// own, the draw is a pure function of (seed, relation, node) whatever the thread count and seed order, the
// frontier keeps every node, and bad seeds are clean errors; sample_distinct's draws are uniform.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <vector>

#include "graph/graph.hpp"
#include "graph/sampling.hpp"
#include "kernels/threads.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using topo::testing::error_of;
using Pairs = std::vector<std::pair<std::int64_t, std::int64_t>>;
using Ids = std::vector<std::int64_t>;

namespace {

// user <-follows- user (node v has in-degree v: sources 0..v-1, plus a repeated edge into 5), user <-plays-
// game (every game into user 2).
HeteroGraph social(DType dt) {
  Pairs follows, plays;
  for (std::int64_t v = 0; v < 9; ++v)
    for (std::int64_t u = 0; u < v; ++u) follows.emplace_back(u, v);
  follows.emplace_back(1, 5);
  for (std::int64_t u = 0; u < 4; ++u) plays.emplace_back(u, 2);
  return HeteroGraph({{"user", 9}, {"game", 4}},
                     {{{"user", "follows", "user"}, EdgeList::from_pairs(follows, dt)},
                      {{"game", "plays", "user"}, EdgeList::from_pairs(plays, dt)}});
}

// (src, dst, parent eid) of relation r of a sampled frontier.
std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> triples(const HeteroGraph& f, int r) {
  const auto pairs = f.edges(r).pairs();
  const Ids eid = f.edata_map(r).at(kEID).to_vector<std::int64_t>();
  std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> out;
  for (std::size_t e = 0; e < pairs.size(); ++e) out.emplace_back(pairs[e].first, pairs[e].second, eid[e]);
  return out;
}

}  // namespace

TEST_CASE("sample_neighbors keeps min(fanout, in-degree) distinct in-edges per seed, real edges of the graph") {
  for (DType dt : {DType::I32, DType::I64}) {
    const HeteroGraph g = social(dt);
    const auto parent = g.edges(0).pairs();
    const Ids seeds = {8, 0, 5, 2, 1};
    const HeteroGraph f = sample_neighbors(g, {{"user", seeds}}, {3, -1}, 7);
    CHECK(f.num_nodes("user") == 9);  // the frontier keeps every node
    CHECK(f.num_nodes("game") == 4);
    std::map<std::int64_t, std::set<std::int64_t>> per_seed;
    std::vector<std::int64_t> order;
    for (const auto& t : triples(f, 0)) {
      const std::int64_t s = std::get<0>(t), d = std::get<1>(t), e = std::get<2>(t);
      REQUIRE(e >= 0);
      REQUIRE(e < static_cast<std::int64_t>(parent.size()));
      CHECK(parent[e] == std::make_pair(s, d));  // a real edge, and its id in g
      CHECK(per_seed[d].insert(e).second);       // never the same edge twice
      if (order.empty() || order.back() != d) order.push_back(d);
    }
    CHECK(per_seed[8].size() == 3);
    CHECK(per_seed.count(0) == 0);  // no in-edges
    CHECK(per_seed[5].size() == 3);
    CHECK(per_seed[2].size() == 2);  // in-degree 2 < fanout: all
    CHECK(per_seed[1].size() == 1);
    CHECK(order == Ids{8, 5, 2, 1});                // grouped by seed in the order given
    CHECK(triples(f, 1).size() == 4);               // fanout -1: every in-edge (plays into user 2)
  }
}

TEST_CASE("sample_neighbors draws depend only on (seed, relation, node): threads and seed order change nothing") {
  const HeteroGraph g = social(DType::I64);
  auto edges_of = [&](const Ids& seeds, std::uint64_t seed) {
    std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> all;
    for (const auto& t : triples(sample_neighbors(g, {{"user", seeds}}, {4, 2}, seed), 0)) all.insert(t);
    return all;
  };
  const int threads = num_threads();
  set_num_threads(1);
  const auto one = edges_of({8, 7, 6, 5}, 11);
  set_num_threads(2);
  CHECK(edges_of({5, 6, 7, 8}, 11) == one);
  set_num_threads(threads);
  CHECK(edges_of({8, 7, 6, 5}, 12) != one);  // another seed, another draw
}

TEST_CASE("sample_distinct draws distinct values, each as often") {
  std::map<std::int64_t, int> counts;
  const int trials = 20000;
  for (int t = 0; t < trials; ++t) {
    const Ids picks = sample_distinct(10, 3, splitmix64(static_cast<std::uint64_t>(t)));
    REQUIRE(picks.size() == 3);
    CHECK(std::set<std::int64_t>(picks.begin(), picks.end()).size() == 3);
    for (std::int64_t p : picks) ++counts[p];
  }
  for (std::int64_t v = 0; v < 10; ++v) {  // each value in 3/10 of the draws: 6000 +- 4.5 sigma
    INFO("value " << v);
    CHECK(counts[v] > 6000 - 300);
    CHECK(counts[v] < 6000 + 300);
  }
  CHECK(sample_distinct(4, 9, 1) == Ids{0, 1, 2, 3});
}

TEST_CASE("sample_neighbors errors name the type and the position") {
  const HeteroGraph g = social(DType::I64);
  CHECK(error_of([&] { sample_neighbors(g, {{"user", {1, 9}}}, {2, 2}, 0); }).find("seed nodes['user'][1] = 9") !=
        std::string::npos);
  CHECK(error_of([&] { sample_neighbors(g, {{"user", {3, 3}}}, {2, 2}, 0); }).find("repeated") != std::string::npos);
  CHECK(error_of([&] { sample_neighbors(g, {{"user", {3}}}, {2}, 0); }).find("2 relations") != std::string::npos);
  CHECK(error_of([&] { sample_neighbors(g, {{"film", {0}}}, {2, 2}, 0); }).find("film") != std::string::npos);
}

TEST_CASE("sample_blocks chains the layers, destinations leading sources, edges by their ids in the graph") {
  const HeteroGraph g = social(DType::I32);
  const std::vector<Ids> seeds = {{8, 2}, {}};  // user, game
  const std::vector<SampledBlock> layers = sample_blocks(g, seeds, {{2, -1}, {3, 1}}, 5);
  REQUIRE(layers.size() == 2);
  CHECK(layers[1].dst_nodes == seeds);
  CHECK(layers[0].dst_nodes == layers[1].parts.src_nodes);
  for (const SampledBlock& layer : layers) {
    for (int t = 0; t < 2; ++t) {
      const Ids& dst = layer.dst_nodes[t];
      CHECK(Ids(layer.parts.src_nodes[t].begin(), layer.parts.src_nodes[t].begin() + dst.size()) == dst);
    }
    for (int r = 0; r < 2; ++r) {
      const auto parent = g.edges(r).pairs();
      const int s = r == 0 ? 0 : 1;  // follows: user -> user; plays: game -> user
      const EdgeIds& e = layer.parts.edges[r];
      for (std::size_t k = 0; k < e.size(); ++k)
        CHECK(parent[e.eid[k]] == std::make_pair(layer.parts.src_nodes[s][e.src[k]], layer.dst_nodes[0][e.dst[k]]));
    }
  }
  const HeteroGraph block = block_graph(g, layers[1].parts, layers[1].dst_nodes, "SRC/", "DST/");
  CHECK(block.node_types() == std::vector<std::string>{"SRC/user", "SRC/game", "DST/user", "DST/game"});
  CHECK(block.num_nodes("DST/user") == 2);
  CHECK(block.id_dtype() == DType::I32);
}

TEST_CASE("sample_blocks is sample_neighbors then to_block, layer by layer, without the frontier graph") {
  for (DType dt : {DType::I32, DType::I64}) {
    const HeteroGraph g = social(dt);
    const std::vector<std::vector<std::int64_t>> fanouts = {{2, 1}, {3, -1}};
    const std::vector<SampledBlock> fast = sample_blocks(g, {{8, 5, 2}, {}}, fanouts, 9);
    std::vector<Ids> dst = {{8, 5, 2}, {}};
    for (std::size_t l = fanouts.size(); l-- > 0;) {
      NodeSets named;
      if (!dst[0].empty()) named["user"] = dst[0];
      if (!dst[1].empty()) named["game"] = dst[1];
      const HeteroGraph frontier = sample_neighbors(g, named, fanouts[l], splitmix64(9 + l));
      BlockParts slow = to_block(frontier, dst, true);
      for (int r = 0; r < 2; ++r) {
        const Ids parent = frontier.edata_map(r).at(kEID).to_vector<std::int64_t>();
        for (std::int64_t& e : slow.edges[r].eid) e = parent[static_cast<std::size_t>(e)];
        CHECK(fast[l].parts.edges[r].src == slow.edges[r].src);
        CHECK(fast[l].parts.edges[r].dst == slow.edges[r].dst);
        CHECK(fast[l].parts.edges[r].eid == slow.edges[r].eid);
      }
      CHECK(fast[l].parts.src_nodes == slow.src_nodes);
      dst = slow.src_nodes;
    }
  }
}

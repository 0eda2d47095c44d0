// Neighbour sampling (graph/sampling.hpp): each seed keeps min(fanout, in-degree) distinct in-edges of its
// own, the draw is a pure function of (seed, relation, node) whatever the thread count and seed order, the
// frontier keeps every node, and bad seeds are clean errors; sample_distinct's draws are uniform.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <tuple>
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

// sample_blocks(g, seeds, fanouts, seed, options) against its composition on social(): layer by layer from the
// last, sample_neighbors of the layer's destinations (the frontier turned round for out-edges: neighbour -> seed)
// then to_block, the frontier's edge ids mapped back to g's. Blocks, edges and source nodes must agree.
void check_blocks_are_composition(const HeteroGraph& g, const std::vector<Ids>& seeds,
                                  const std::vector<std::vector<std::int64_t>>& fanouts, std::uint64_t seed,
                                  const SamplingOptions& options = {}) {
  const std::vector<SampledBlock> fast = sample_blocks(g, seeds, fanouts, seed, options);
  std::vector<Ids> dst = seeds;
  for (std::size_t l = fanouts.size(); l-- > 0;) {
    NodeSets named;
    if (!dst[0].empty()) named["user"] = dst[0];
    if (!dst[1].empty()) named["game"] = dst[1];
    HeteroGraph frontier = sample_neighbors(g, named, fanouts[l], splitmix64(seed + l), options);
    if (options.edge_dir == EdgeDir::out) frontier = frontier.reverse();
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
  // -1 is every edge; another negative fan-out has no meaning (the draws would read it as -1).
  CHECK(sample_neighbors(g, {{"user", {3}}}, {-1, -1}, 0).total_num_edges() > 0);
  CHECK(error_of([&] { sample_neighbors(g, {{"user", {3}}}, {2, -5}, 0); }).find("fan-out [1] = -5") !=
        std::string::npos);
  CHECK(error_of([&] { sample_blocks(g, {{3}, {}}, {{2, 2}, {-2, 1}}, 0); }).find("layer 1: fan-out [0] = -2") !=
        std::string::npos);
  // With replacement the draws are fan-out x seeds: two seeds at 2^62 overflow int64 (undefined before).
  SamplingOptions with_replacement;
  with_replacement.replace = true;
  const std::int64_t big = std::int64_t{1} << 62;
  CHECK(error_of([&] { sample_neighbors(g, {{"user", {3, 4}}}, {big, 0}, 0, with_replacement); })
            .find("the draws of 2 seeds overflow int64") != std::string::npos);
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
    check_blocks_are_composition(g, {{8, 5, 2}, {}}, {{2, 1}, {3, -1}}, 9);
  }
}

// --- The modes beyond uniform in-edges without replacement (SamplingOptions)

namespace {

// One node type: sources 0..7, then `n` destinations 8.. each with the same in-edges from every source, so one
// call draws n independent rows of one law (each seed's draw is its own). Edge u -> 8 + i has id 8 i + u.
HeteroGraph fan(std::int64_t n) {
  Pairs edges;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t u = 0; u < 8; ++u) edges.emplace_back(u, 8 + i);
  return HeteroGraph({{"node", 8 + n}}, {{{"node", "to", "node"}, EdgeList::from_pairs(edges, DType::I64)}});
}

Ids destinations_of_fan(std::int64_t n) {
  Ids ids(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) ids[i] = 8 + i;
  return ids;
}

// fan's weights: edge u -> v weighs u, so source 0 never counts.
Tensor source_weights(std::int64_t n) {
  std::vector<float> w;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t u = 0; u < 8; ++u) w.push_back(static_cast<float>(u));
  return Tensor::from_vector(w, {static_cast<std::int64_t>(w.size())});
}

// How often each source of `fan` was drawn, and how many seeds drew some source twice.
struct FanCounts {
  std::vector<std::int64_t> per_source = std::vector<std::int64_t>(8, 0);
  std::int64_t seeds_with_repeats = 0;
};
FanCounts count_fan(const HeteroGraph& f) {
  FanCounts c;
  std::map<std::int64_t, std::multiset<std::int64_t>> per_seed;
  for (const auto& [u, v] : f.edges(0).pairs()) {
    ++c.per_source[u];
    per_seed[v].insert(u);
  }
  for (const auto& [v, sources] : per_seed)
    c.seeds_with_repeats += std::set<std::int64_t>(sources.begin(), sources.end()).size() < sources.size();
  return c;
}

}  // namespace

TEST_CASE("sample_neighbors with replacement: fanout draws of any non-empty row, uniform, repeats as often as chance") {
  const HeteroGraph g = social(DType::I32);
  SamplingOptions replace;
  replace.replace = true;
  const HeteroGraph f = sample_neighbors(g, {{"user", {0, 2, 8}}}, {3, 2}, 3, replace);
  const auto parent = g.edges(0).pairs();
  std::map<std::int64_t, int> per_seed;
  for (const auto& [s, d, e] : triples(f, 0)) {
    CHECK(parent[e] == std::make_pair(s, d));
    ++per_seed[d];
  }
  CHECK(per_seed.count(0) == 0);  // in-degree 0: nothing to draw
  CHECK(per_seed[2] == 3);        // in-degree 2 < fanout 3: still 3 draws
  CHECK(per_seed[8] == 3);
  CHECK(triples(f, 1).size() == 2);  // plays: 2 draws for user 2
  CHECK(triples(sample_neighbors(g, {{"user", {8, 2}}}, {-1, -1}, 3, replace), 0).size() == 8 + 2);  // -1: all, once

  const std::int64_t n = 20000;
  const FanCounts c = count_fan(sample_neighbors(fan(n), {{"node", destinations_of_fan(n)}}, {4}, 5, replace));
  for (std::int64_t u = 0; u < 8; ++u) {  // 4 n / 8 = 10000 each; sd ~ 94
    INFO("source " << u);
    CHECK(std::abs(c.per_source[u] - 10000) < 470);
  }
  // all 4 draws distinct with probability 8*7*6*5 / 8^4 = 0.41: a repeat in 0.590 of the rows (sd 0.0035)
  CHECK(std::abs(static_cast<double>(c.seeds_with_repeats) / n - 0.590) < 0.02);
}

TEST_CASE("sample_neighbors by out-edges keeps the edges' direction, min(fanout, out-degree) per seed") {
  for (DType dt : {DType::I32, DType::I64}) {
    const HeteroGraph g = social(dt);
    SamplingOptions out;
    out.edge_dir = EdgeDir::out;
    const HeteroGraph f = sample_neighbors(g, {{"user", {1, 8, 6}}, {"game", {3}}}, {3, 1}, 7, out);
    const auto follows = g.edges(0).pairs(), plays = g.edges(1).pairs();
    std::map<std::int64_t, std::set<std::int64_t>> per_seed;
    Ids order;
    for (const auto& [s, d, e] : triples(f, 0)) {
      CHECK(follows[e] == std::make_pair(s, d));  // seed -> neighbour, as in g
      CHECK(per_seed[s].insert(e).second);
      if (order.empty() || order.back() != s) order.push_back(s);
    }
    CHECK(per_seed[1].size() == 3);    // out-degree 8 (2..8, and 5 twice)
    CHECK(per_seed.count(8) == 0);     // out-degree 0
    CHECK(per_seed[6].size() == 2);    // out-degree 2 < fanout: both
    CHECK(order == Ids{1, 6});
    const auto drawn = triples(f, 1);  // plays: game 3's one out-edge (3 -> user 2)
    REQUIRE(drawn.size() == 1);
    CHECK(plays[std::get<2>(drawn[0])] == std::make_pair(std::int64_t{3}, std::int64_t{2}));
    CHECK(std::get<0>(drawn[0]) == 3);
  }
}

TEST_CASE("weighted draws without replacement follow the weights left, never a zero weight") {
  const std::int64_t n = 20000;
  SamplingOptions weighted;
  weighted.prob = {source_weights(n)};
  const HeteroGraph g = fan(n);
  const Ids seeds = destinations_of_fan(n);
  const FanCounts one = count_fan(sample_neighbors(g, {{"node", seeds}}, {1}, 1, weighted));
  CHECK(one.per_source[0] == 0);
  for (std::int64_t u = 1; u < 8; ++u) {  // u / 28 of the draws; sd < 70
    INFO("source " << u);
    CHECK(std::abs(static_cast<double>(one.per_source[u]) - n * u / 28.0) < 350);
  }
  // two draws, one after the other: u is in with probability u/28 + sum_j (j/28) u / (28 - j)
  const FanCounts two = count_fan(sample_neighbors(g, {{"node", seeds}}, {2}, 2, weighted));
  CHECK(two.per_source[0] == 0);
  CHECK(two.seeds_with_repeats == 0);
  for (std::int64_t u = 1; u < 8; ++u) {
    double p = u / 28.0;
    for (std::int64_t j = 1; j < 8; ++j)
      if (j != u) p += (j / 28.0) * u / (28.0 - j);
    INFO("source " << u << " expected " << p * n);
    CHECK(std::abs(two.per_source[u] - p * n) < 5 * std::sqrt(n * p * (1 - p)));
  }
  // fanout at or above the positive entries (7 here): exactly those, also for fanout -1
  for (std::int64_t fanout : {7, 9, -1}) {
    const FanCounts all = count_fan(sample_neighbors(g, {{"node", {8, 9}}}, {fanout}, 3, weighted));
    CHECK(all.per_source == std::vector<std::int64_t>{0, 2, 2, 2, 2, 2, 2, 2});
  }
}

TEST_CASE("weighted draws with replacement: fanout draws in proportion, none from a row of zero weights") {
  const std::int64_t n = 20000;
  SamplingOptions weighted;
  weighted.prob = {source_weights(n)};
  weighted.replace = true;
  const HeteroGraph g = fan(n);
  const FanCounts c = count_fan(sample_neighbors(g, {{"node", destinations_of_fan(n)}}, {3}, 4, weighted));
  CHECK(c.per_source[0] == 0);
  for (std::int64_t u = 1; u < 8; ++u) {  // 3 n u / 28; sd < 120
    INFO("source " << u);
    CHECK(std::abs(static_cast<double>(c.per_source[u]) - 3.0 * n * u / 28) < 600);
  }
  CHECK(c.seeds_with_repeats > n / 4);  // repeats happen
  // a row of zero weights gets no draw; fanout -1 takes each positive edge once
  std::vector<float> zero_row(8 * 2, 1.f);
  for (int u = 0; u < 8; ++u) zero_row[u] = 0.f;  // node 8's edges
  weighted.prob = {Tensor::from_vector(zero_row, {16, 1})};
  const HeteroGraph small = fan(2);
  std::map<std::int64_t, int> per_seed;
  for (const auto& [s, d, e] : triples(sample_neighbors(small, {{"node", {8, 9}}}, {5}, 1, weighted), 0)) ++per_seed[d];
  CHECK(per_seed == std::map<std::int64_t, int>{{9, 5}});
  per_seed.clear();
  for (const auto& [s, d, e] : triples(sample_neighbors(small, {{"node", {8, 9}}}, {-1}, 1, weighted), 0))
    ++per_seed[d];
  CHECK(per_seed == std::map<std::int64_t, int>{{9, 8}});
}

TEST_CASE("excluded edges are never drawn: each seed draws min(fanout, edges left), uniformly or by the weights") {
  const std::int64_t n = 20000;
  const HeteroGraph g = fan(n);
  const Ids seeds = destinations_of_fan(n);
  SamplingOptions options;
  options.exclude = {{}};
  for (std::int64_t i = n; i-- > 0;)  // sources 0 and 1 of every row, backwards and edge 1 twice: any order
    for (std::int64_t u : {1, 0, 1}) options.exclude[0].push_back(8 * i + u);
  const FanCounts one = count_fan(sample_neighbors(g, {{"node", seeds}}, {1}, 5, options));
  CHECK(one.per_source[0] == 0);
  CHECK(one.per_source[1] == 0);
  for (std::int64_t u = 2; u < 8; ++u) {  // n / 6 each; sd ~53
    INFO("source " << u);
    CHECK(std::abs(static_cast<double>(one.per_source[u]) - n / 6.0) < 350);
  }
  for (std::int64_t fanout : {6, 9, -1})  // at or above the edges left: exactly those
    CHECK(count_fan(sample_neighbors(g, {{"node", {8, 9}}}, {fanout}, 6, options)).per_source ==
          std::vector<std::int64_t>{0, 0, 2, 2, 2, 2, 2, 2});
  options.replace = true;  // fanout draws among the edges left
  const FanCounts three = count_fan(sample_neighbors(g, {{"node", seeds}}, {3}, 7, options));
  CHECK(three.per_source[0] + three.per_source[1] == 0);
  for (std::int64_t u = 2; u < 8; ++u) CHECK(std::abs(static_cast<double>(three.per_source[u]) - n / 2.0) < 600);
  options.exclude[0] = {8, 9, 10, 11, 12, 13, 14, 15};  // every edge of node 9: it draws nothing
  for (std::int64_t fanout : {3, -1})
    CHECK(count_fan(sample_neighbors(g, {{"node", {9}}}, {fanout}, 8, options)).per_source ==
          std::vector<std::int64_t>(8, 0));
  options.replace = false;  // with prob: in proportion to the weights of the edges left (source 7 excluded)
  options.prob = {source_weights(n)};
  options.exclude[0].clear();
  for (std::int64_t i = 0; i < n; ++i) options.exclude[0].push_back(8 * i + 7);
  const FanCounts weighted = count_fan(sample_neighbors(g, {{"node", seeds}}, {1}, 9, options));
  CHECK(weighted.per_source[0] + weighted.per_source[7] == 0);
  for (std::int64_t u = 1; u < 7; ++u) CHECK(std::abs(static_cast<double>(weighted.per_source[u]) - n * u / 21.0) < 350);
  // sample_blocks reads them too, also by out-edges (the reverse keeps the edge ids)
  const HeteroGraph s = social(DType::I32);
  for (EdgeDir dir : {EdgeDir::in, EdgeDir::out}) {
    SamplingOptions social_options;
    social_options.edge_dir = dir;
    social_options.exclude = {{0, 3, 7, 36}, {1}};
    check_blocks_are_composition(s, {{8, 5, 2}, {}}, {{2, 1}, {-1, -1}}, 3, social_options);
    for (const SampledBlock& b : sample_blocks(s, {{8, 5, 2}, {}}, {{-1, -1}}, 3, social_options))
      for (int r = 0; r < 2; ++r)
        for (std::int64_t e : b.parts.edges[r].eid) CHECK(e != (r == 0 ? 36 : 1));
  }
  SamplingOptions bad;
  bad.exclude = {{0, 37}, {}};
  CHECK(error_of([&] { sample_neighbors(s, {{"user", {5}}}, {2, 2}, 0, bad); })
            .find("exclude of relation (user, follows, user): [1] = 37 is outside [0, 37)") != std::string::npos);
  bad.exclude = {{0}};
  CHECK(error_of([&] { sample_blocks(s, {{5}, {}}, {{2, 2}}, 0, bad); })
            .find("exclude has 1 edge lists for a graph of 2 relations") != std::string::npos);
}

TEST_CASE("every mode's draws depend only on (seed, relation, node): threads and seed order change nothing") {
  const std::int64_t n = 3000;
  const HeteroGraph g = fan(n);
  Ids forward = destinations_of_fan(n), backward(forward.rbegin(), forward.rend());
  Ids every_third;  // excluded in modes 4 and 5
  for (std::int64_t e = 0; e < 8 * n; e += 3) every_third.push_back(e);
  for (int mode = 0; mode < 6; ++mode) {
    SamplingOptions options;
    options.replace = mode % 2 == 1;
    if (mode == 2 || mode == 3) options.prob = {source_weights(n)};
    if (mode >= 4) options.exclude = {every_third};
    auto edges_of = [&](const Ids& seeds, std::uint64_t seed) {
      std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, int> counted;
      for (const auto& t : triples(sample_neighbors(g, {{"node", seeds}}, {3}, seed, options), 0)) ++counted[t];
      return counted;
    };
    INFO("mode " << mode);
    const int threads = num_threads();
    set_num_threads(1);
    const auto one = edges_of(forward, 21);
    set_num_threads(2);
    CHECK(edges_of(backward, 21) == one);
    set_num_threads(threads);
    CHECK(edges_of(forward, 22) != one);
  }
}

TEST_CASE("sample_neighbors' prob errors name prob, the relation and the edge") {
  const HeteroGraph g = social(DType::I64);
  const std::int64_t follows = g.num_edges(0);
  SamplingOptions options;
  std::vector<float> w(static_cast<std::size_t>(follows), 1.f);
  w[static_cast<std::size_t>(follows) - 1] = -2.f;  // edge 1 -> 5, the last one
  options.prob = {Tensor::from_vector(w, {follows}), Tensor()};
  const std::string negative = error_of([&] { sample_neighbors(g, {{"user", {5}}}, {2, 2}, 0, options); });
  CHECK(negative.find("prob of relation (user, follows, user) has weight -2 at edge 36") != std::string::npos);
  CHECK(error_of([&] { sample_neighbors(g, {{"user", {4}}}, {2, 2}, 0, options); }).empty());  // row not read
  w.back() = std::numeric_limits<float>::quiet_NaN();
  options.prob[0] = Tensor::from_vector(w, {follows});
  CHECK(error_of([&] { sample_neighbors(g, {{"user", {5}}}, {2, 2}, 0, options); }).find("weight nan") !=
        std::string::npos);
  options.prob[0] = Tensor::full({follows, 2}, 1.f);
  CHECK(error_of([&] { sample_neighbors(g, {{"user", {5}}}, {2, 2}, 0, options); })
            .find("must hold one weight per edge ([37] or [37, 1]), got float32[37, 2]") !=
        std::string::npos);
  options.prob[0] = Tensor::arange(follows);
  CHECK(error_of([&] { sample_neighbors(g, {{"user", {5}}}, {2, 2}, 0, options); })
            .find("must be float32, got int64") != std::string::npos);
  options.prob = {Tensor::from_vector(w, {follows})};
  CHECK(error_of([&] { sample_neighbors(g, {{"user", {5}}}, {2, 2}, 0, options); })
            .find("prob has 1 weight tensors for a graph of 2 relations") != std::string::npos);
}

TEST_CASE("sample_blocks in every mode is sample_neighbors then to_block; by out-edges, on the reversed frontier") {
  const HeteroGraph g = social(DType::I64);
  std::vector<float> w;
  for (const auto& [u, v] : g.edges(0).pairs()) w.push_back(static_cast<float>((u + v) % 3));
  for (int mode = 0; mode < 4; ++mode) {
    SamplingOptions options;
    options.replace = mode == 1 || mode == 3;
    options.edge_dir = mode >= 2 ? EdgeDir::out : EdgeDir::in;
    if (mode == 2) options.prob = {Tensor::from_vector(w, {static_cast<std::int64_t>(w.size())}), Tensor()};
    INFO("mode " << mode);
    const std::vector<Ids> seeds = options.edge_dir == EdgeDir::in ? std::vector<Ids>{{8, 5, 2}, {}}
                                                                    : std::vector<Ids>{{1, 5}, {3}};
    check_blocks_are_composition(g, seeds, {{2, 1}, {3, -1}}, 9, options);
  }
  SamplingOptions out;
  out.edge_dir = EdgeDir::out;
  const std::vector<SampledBlock> layers = sample_blocks(g, {{}, {0, 3}}, {{1, 1}}, 2, out);
  const HeteroGraph block = block_graph(g.reverse(), layers[0].parts, layers[0].dst_nodes, "SRC/", "DST/");
  CHECK(block.canonical_etype(1).str() == "(SRC/user, plays, DST/game)");  // the drawn game -> user edges, turned
  CHECK(block.num_edges(1) == 2);
}

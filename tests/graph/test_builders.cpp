// Every builder against an obviously-correct double loop over all (src, dst) pairs, compared as sorted edge
// multisets (so a duplicate edge shows up as a size mismatch), at n = 0, 1, 2, 3 and awkward sizes; and the
// direct batched builders against batch() of per-graph builders.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <tuple>
#include <vector>

#include "graph/graph.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using Pairs = std::vector<std::pair<std::int64_t, std::int64_t>>;

namespace {

Pairs sorted(Pairs p) {
  std::sort(p.begin(), p.end());
  return p;
}

// j -> i for every pair the predicate admits, by brute force over n x n.
template <class Pred>
Pairs brute(std::int64_t n, Pred attends) {
  Pairs p;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      if (attends(i, j)) p.emplace_back(j, i);
  return sorted(p);
}

std::int64_t absdiff(std::int64_t a, std::int64_t b) { return a > b ? a - b : b - a; }

const std::vector<std::int64_t> kSizes = {0, 1, 2, 3, 4, 7, 31, 33};

}  // namespace

TEST_CASE("ring: hand-written small cases") {
  CHECK(builders::ring(1, true).pairs().empty());
  CHECK(builders::ring(1, false).pairs().empty());
  CHECK(sorted(builders::ring(2, true).pairs()) == Pairs{{0, 1}, {1, 0}});
  CHECK(sorted(builders::ring(2, false).pairs()) == Pairs{{0, 1}, {1, 0}});
  CHECK(sorted(builders::ring(3, true).pairs()) == Pairs{{0, 1}, {0, 2}, {1, 0}, {1, 2}, {2, 0}, {2, 1}});
  CHECK(sorted(builders::ring(3, false).pairs()) == Pairs{{0, 1}, {1, 0}, {1, 2}, {2, 1}});
  CHECK(sorted(builders::ring(4, true).pairs()) ==
        Pairs{{0, 1}, {0, 3}, {1, 0}, {1, 2}, {2, 1}, {2, 3}, {3, 0}, {3, 2}});
}

TEST_CASE("builders equal their brute-force definitions") {
  for (std::int64_t n : kSizes) {
    INFO("n = " << n);
    CHECK(sorted(builders::ring(n, true).pairs()) ==
          brute(n, [&](auto i, auto j) { return i != j && (absdiff(i, j) == 1 || absdiff(i, j) == n - 1); }));
    CHECK(sorted(builders::ring(n, false).pairs()) == brute(n, [&](auto i, auto j) { return absdiff(i, j) == 1; }));
    for (std::int64_t w : {1, 3, 5, 9, 101}) {
      INFO("width " << w);
      CHECK(sorted(builders::window(n, w).pairs()) ==
            brute(n, [&](auto i, auto j) { return absdiff(i, j) <= (w - 1) / 2; }));
    }
    CHECK(sorted(builders::full(n).pairs()) == brute(n, [](auto, auto) { return true; }));
    CHECK(sorted(builders::self_loops(n).pairs()) == brute(n, [](auto i, auto j) { return i == j; }));
    Pairs to, from;
    for (std::int64_t i = 0; i < n; ++i) {
      to.emplace_back(i, 0);
      from.emplace_back(0, i);
    }
    CHECK(sorted(builders::to_one(n).pairs()) == to);
    CHECK(sorted(builders::from_one(n).pairs()) == sorted(from));
  }
}

TEST_CASE("bipartite_spans: in and contains edges") {
  // Hand-written: 4 chars, words [0,1], [1,3], [2,2].
  const std::vector<builders::Span> spans = {{0, 1}, {1, 3}, {2, 2}};
  const auto e = builders::bipartite_spans(4, spans);
  CHECK(sorted(e.in.pairs()) == Pairs{{0, 0}, {1, 0}, {1, 1}, {2, 1}, {2, 2}, {3, 1}});
  CHECK(sorted(e.contains.pairs()) == Pairs{{0, 0}, {0, 1}, {1, 1}, {1, 2}, {1, 3}, {2, 2}});
  // Brute force: char c -> word j iff s_j <= c <= e_j, over random spans.
  std::mt19937 rng(5);
  for (std::int64_t n : {1, 2, 7, 31}) {
    std::vector<builders::Span> sp;
    for (int k = 0; k < 9; ++k) {
      const std::int64_t a = rng() % n, b = rng() % n;
      sp.push_back({std::min(a, b), std::max(a, b)});
    }
    Pairs want_in, want_contains;
    for (std::size_t j = 0; j < sp.size(); ++j)
      for (std::int64_t c = 0; c < n; ++c)
        if (sp[j].start <= c && c <= sp[j].end) {
          want_in.emplace_back(c, j);
          want_contains.emplace_back(j, c);
        }
    const auto got = builders::bipartite_spans(n, sp, DType::I64);
    CHECK(sorted(got.in.pairs()) == sorted(want_in));
    CHECK(sorted(got.contains.pairs()) == sorted(want_contains));
  }
  CHECK_THROWS_WITH_AS(builders::bipartite_spans(4, {{2, 4}}),
                       "bipartite_spans: graph 0 word 0 has span [2, 4] outside a sentence of 4 characters", Error);
  CHECK_THROWS_AS(builders::bipartite_spans(4, {{2, 1}}), Error);
}

TEST_CASE("builders reject bad arguments") {
  CHECK_THROWS_WITH_AS(builders::window(5, 4), "window: width 4 of graph 0 must be odd and >= 1", Error);
  CHECK_THROWS_AS(builders::window(5, 0), Error);
  CHECK_THROWS_WITH_AS(builders::ring_batch({3, -2}, true), "ring: graph 1 has negative length -2", Error);
  CHECK_THROWS_AS(builders::window_batch({3, 4}, std::vector<std::int64_t>{1}), Error);
  CHECK_THROWS_AS(builders::full(3, DType::F32), Error);
  // Sizes past int64 (lengths as Python hands them) and node ids past int32 fail before anything is allocated;
  // they wrapped silently (a signed overflow) before.
  const std::int64_t big = std::int64_t{1} << 62;
  CHECK_THROWS_WITH_AS(builders::self_loops_batch({big, big}, DType::I64),
                       "self_loops: 4611686018427387904 + 4611686018427387904 overflows int64", Error);
  CHECK_THROWS_WITH_AS(builders::full(std::int64_t{1} << 32, DType::I64),
                       "full: 4294967296 x 4294967296 overflows int64", Error);
  CHECK_THROWS_WITH_AS(builders::ring(big, true, DType::I64), "ring: 2 x 4611686018427387904 overflows int64", Error);
  CHECK_THROWS_WITH_AS(builders::window(big, big + 1, DType::I64),
                       "window: 4611686018427387904 x 4611686018427387905 overflows int64", Error);
  // 2^31 characters but one short word: few edges, yet the word's character ids do not fit int32.
  CHECK_THROWS_WITH_AS(builders::bipartite_spans_batch({std::int64_t{1} << 31, 3}, {{}, {{0, 1}}}, DType::I32),
                       "bipartite_spans: 2147483651 nodes need int64 ids", Error);
}

TEST_CASE("edges are listed by destination (CSC order) and builders honour the id dtype") {
  const auto w = builders::window(6, 3, DType::I64);
  CHECK(w.src.dtype() == DType::I64);
  const auto p = w.pairs();
  CHECK(std::is_sorted(p.begin(), p.end(), [](auto a, auto b) { return std::tie(a.second, a.first) < std::tie(b.second, b.first); }));
}

TEST_CASE("direct batched builders equal batch() of per-graph graphs") {
  const std::vector<std::int64_t> lens = {1, 2, 3, 0, 7, 16, 33};
  const auto B = static_cast<std::int64_t>(lens.size());
  std::vector<std::int64_t> widths;
  std::vector<std::vector<builders::Span>> spans;
  for (std::int64_t n : lens) {
    widths.push_back(n / 4 * 2 + 1);
    std::vector<builders::Span> s;
    for (std::int64_t a = 0; a + 1 < n; a += 2) s.push_back({a, std::min(n - 1, a + 2)});
    spans.push_back(s);
  }
  for (DType dt : {DType::I32, DType::I64}) {
    std::vector<HeteroGraph> singles;
    for (std::int64_t b = 0; b < B; ++b) {
      const std::int64_t n = lens[b];
      const auto se = builders::bipartite_spans(n, spans[b], dt);
      singles.push_back(HeteroGraph(
          {{"tok", n}, {"hub", 1}, {"word", static_cast<std::int64_t>(spans[b].size())}},
          {{{"tok", "ring", "tok"}, builders::ring(n, true, dt)},
           {{"tok", "open", "tok"}, builders::ring(n, false, dt)},
           {{"tok", "win", "tok"}, builders::window(n, widths[b], dt)},
           {{"tok", "full", "tok"}, builders::full(n, dt)},
           {{"tok", "self", "tok"}, builders::self_loops(n, dt)},
           {{"tok", "to_hub", "hub"}, builders::to_one(n, dt)},
           {{"hub", "from_hub", "tok"}, builders::from_one(n, dt)},
           {{"tok", "in", "word"}, se.in},
           {{"word", "contains", "tok"}, se.contains}}));
    }
    const HeteroGraph batched = batch(singles);
    const auto star = builders::star_batch(lens, dt);
    const auto se = builders::bipartite_spans_batch(lens, spans, dt);
    const HeteroGraph direct(
        {builders::node_type("tok", lens), builders::node_type("hub", builders::ones(B)),
         builders::node_type("word", builders::span_counts(spans))},
        {{{"tok", "ring", "tok"}, builders::ring_batch(lens, true, dt)},
         {{"tok", "open", "tok"}, builders::ring_batch(lens, false, dt)},
         {{"tok", "win", "tok"}, builders::window_batch(lens, widths, dt)},
         {{"tok", "full", "tok"}, builders::full_batch(lens, dt)},
         {{"tok", "self", "tok"}, builders::self_loops_batch(lens, dt)},
         {{"tok", "to_hub", "hub"}, star.to_center},
         {{"hub", "from_hub", "tok"}, star.from_center},
         {{"tok", "in", "word"}, se.in},
         {{"word", "contains", "tok"}, se.contains}});
    REQUIRE(direct.batch_size() == B);
    REQUIRE(batched.batch_size() == B);
    for (int t = 0; t < direct.num_node_types(); ++t) {
      CHECK(direct.num_nodes(t) == batched.num_nodes(t));
      CHECK(direct.batch_num_nodes(t) == batched.batch_num_nodes(t));
    }
    for (int r = 0; r < direct.num_relations(); ++r) {
      INFO("relation " << direct.canonical_etype(r).str());
      CHECK(direct.edges(r).pairs() == batched.edges(r).pairs());  // same order too
      CHECK(direct.batch_num_edges(r) == batched.batch_num_edges(r));
      CHECK(direct.edges(r).dtype() == dt);
    }
  }
}

TEST_CASE("fractional_widths: ceil(n / d) rounded up to odd") {
  // By hand: 16/4 = 4 -> 5; 17/4 -> 5; 9/4 -> 3 -> 3; 1/4 -> 1; 0 -> 1; 100/16 -> 7 -> 7; 96/16 = 6 -> 7.
  CHECK(builders::fractional_widths({16, 17, 9, 1, 0}, 4) == std::vector<std::int64_t>{5, 5, 3, 1, 1});
  CHECK(builders::fractional_widths({100, 96}, 16) == std::vector<std::int64_t>{7, 7});
  CHECK_THROWS_WITH_AS(builders::fractional_widths({4}, 0), "fractional_widths: divisor 0 must be >= 1", Error);
}

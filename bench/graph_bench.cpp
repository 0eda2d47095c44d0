// Suite `graph`: building a training batch's topology, next to the training step it feeds.
// A batch: 128 sentences with lengths drawn uniformly from 16..256 (seeded). Construction includes every
// format the step reads (the blocks' CSR pairs), so it is the whole per-batch graph cost. The target
// (issue #3) is construction < 5% of one Star-Transformer training step on the same batch; the
// `fraction_of_star_step` field of each build result says where we are.
#include <random>

#include "bench/harness.hpp"
#include "graph/graph.hpp"
#include "kernels/dense/random.hpp"
#include "models/star_transformer/topology.hpp"
#include "models/star_transformer/star_transformer.hpp"
#include "nn/ops.hpp"

namespace {

using namespace topo;

std::vector<std::int64_t> random_lengths(std::int64_t count, std::int64_t lo, std::int64_t hi, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<std::int64_t> dist(lo, hi);
  std::vector<std::int64_t> lengths(static_cast<std::size_t>(count));
  for (auto& n : lengths) n = dist(gen);
  return lengths;
}

// Words of 1..4 characters tiling each sentence, plus every overlapping bigram: a lexicon-match-like load.
std::vector<std::vector<builders::Span>> random_spans(const std::vector<std::int64_t>& lengths, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<std::int64_t> word(1, 4);
  std::vector<std::vector<builders::Span>> spans;
  for (std::int64_t n : lengths) {
    std::vector<builders::Span> s;
    for (std::int64_t i = 0; i < n;) {
      const std::int64_t e = std::min(n - 1, i + word(gen) - 1);
      s.push_back({i, e});
      i = e + 1;
    }
    for (std::int64_t i = 0; i + 1 < n; i += 2) s.push_back({i, i + 1});
    spans.push_back(std::move(s));
  }
  return spans;
}

}  // namespace

TOPO_BENCH_SUITE(graph, "topology construction for a batch of 128 sentences (16..256 tokens) vs a Star step") {
  const std::vector<std::int64_t> lengths = random_lengths(128, 16, 256, 42);
  std::int64_t tokens = 0;
  for (std::int64_t n : lengths) tokens += n;
  const nlohmann::json shape = {{"sentences", 128}, {"tokens", tokens}, {"lengths", "uniform 16..256"}};

  // The step it is measured against: the Star-Transformer of the paper's text setting (d = 300, 6 heads,
  // 2 layers) on this batch, forward + backward (no optimizer update).
  models::StarConfig cfg;
  cfg.vocab_size = 10000;
  cfg.hidden = 300;
  cfg.heads = 6;
  cfg.layers = 2;
  models::StarTransformer star(cfg);
  star.reset_parameters(1);
  models::SequenceBatch batch;
  batch.lengths = lengths;
  {
    std::mt19937 gen(7);
    std::uniform_int_distribution<std::int64_t> id(0, cfg.vocab_size - 1);
    std::vector<std::int64_t> ids(static_cast<std::size_t>(tokens));
    for (auto& x : ids) x = id(gen);
    batch.token_ids = Tensor::from_vector(ids, {tokens});
  }
  const models::StarTopology topology = models::star_topology(lengths, models::StarVariant::Full);
  const Tensor weights = random_uniform({static_cast<std::int64_t>(lengths.size()), cfg.hidden}, -1.f, 1.f, 3);
  const bench::Result step = bench.run("star training step (reference)", {}, [&] {
    star.zero_grad();
    const models::Encoding enc = star.encode(batch, topology);
    nn::sum_all(enc.sentences * nn::Var(weights)).backward();
  }, shape);
  const double step_ms = step.stats.median_ms;
  auto fraction = [&](const bench::Result& r) { return r.stats.median_ms / step_ms; };

  bench::Result r = bench.run("star topology (graph + 3 blocks)", {},
                              [&] { (void)models::star_topology(lengths, models::StarVariant::Full); }, shape);
  bench.annotate("fraction_of_star_step", fraction(r));

  r = bench.run("window w=9 (graph + CSC)", {}, [&] {
    HeteroGraph g({builders::node_type("tok", lengths)}, {{{"tok", "window", "tok"}, builders::window_batch(lengths, 9)}});
    (void)g.in_csc(0);
  }, shape);
  bench.annotate("fraction_of_star_step", fraction(r));

  const auto spans = random_spans(lengths, 5);
  r = bench.run("bipartite spans (graph + CSC both ways)", {}, [&] {
    const builders::SpanEdges e = builders::bipartite_spans_batch(lengths, spans);
    HeteroGraph g({builders::node_type("char", lengths), builders::node_type("word", builders::span_counts(spans))},
                  {{{"char", "in", "word"}, e.in}, {{"word", "contains", "char"}, e.contains}});
    (void)g.in_csc(0);
    (void)g.in_csc(1);
  }, shape);
  bench.annotate("fraction_of_star_step", fraction(r));
}

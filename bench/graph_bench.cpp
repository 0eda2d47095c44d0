// Suite `graph`: building a training batch's topology, next to the training step it feeds.
// A batch: 128 sentences with lengths drawn uniformly from 16..256 (seeded). Construction includes every
// format the step reads (the blocks' CSR pairs), so it is the whole per-batch graph cost. The target
// (issue #3) is construction < 5% of one Star-Transformer training step on the same batch; the
// `fraction_of_star_step` field of each build result says where we are.
// Second part (issue #12): block assembly for 128 sentences of n = 128, for Star (its two blocks) and for a
// window graph (w = 9, the Multi-Scale model with that one scale), each against one training step
// (forward + backward) of that model on that batch: `fraction_of_step`, target < 5%. Assembly is timed
// alone (the graph's per-relation formats already cached, as after construction) and with the graph.
#include <random>

#include "bench/harness.hpp"
#include "graph/graph.hpp"
#include "kernels/dense/random.hpp"
#include "models/multiscale_transformer/multiscale_transformer.hpp"
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

models::SequenceBatch random_batch(const std::vector<std::int64_t>& lengths, std::int64_t vocab, std::uint32_t seed) {
  models::SequenceBatch batch;
  batch.lengths = lengths;
  std::int64_t tokens = 0;
  for (std::int64_t n : lengths) tokens += n;
  std::mt19937 gen(seed);
  std::uniform_int_distribution<std::int64_t> id(0, vocab - 1);
  std::vector<std::int64_t> ids(static_cast<std::size_t>(tokens));
  for (auto& x : ids) x = id(gen);
  batch.token_ids = Tensor::from_vector(ids, {tokens});
  return batch;
}

// One training step's forward + backward of `encode` (sentence features against fixed weights).
template <class Encode>
void train_step(nn::Module& model, const Encode& encode, const Tensor& weights) {
  model.zero_grad();
  nn::sum_all(encode().sentences * nn::Var(weights)).backward();
}

// The Star-Transformer of the paper's text setting: d = 300, 6 heads, 2 layers.
std::unique_ptr<models::StarTransformer> paper_star(std::int64_t max_length) {
  models::StarConfig cfg;
  cfg.encoder.vocab_size = 10000;
  cfg.encoder.hidden = 300;
  cfg.encoder.heads = 6;
  cfg.encoder.layers = 2;
  cfg.encoder.max_length = max_length;
  auto star = std::make_unique<models::StarTransformer>(cfg);
  star->reset_parameters(1);
  return star;
}

void block_assembly(bench::Runner& bench) {
  const std::vector<std::int64_t> lengths(128, 128);
  const nlohmann::json shape = {{"sentences", 128}, {"n", 128}};
  const models::SequenceBatch batch = random_batch(lengths, 10000, 11);
  const Tensor weights = random_uniform({128, 300}, -1.f, 1.f, 5);

  const auto star_model = paper_star(128);
  models::StarTransformer& star = *star_model;
  const models::StarTopology star_top = models::star_topology(lengths, models::StarVariant::Full);
  const double star_step =
      bench.run("star training step, 128 x n=128 (reference)", {}, [&] {
             train_step(star, [&] { return star.encode(batch, star_top); }, weights);
           }, shape).stats.median_ms;
  bench::Result r = bench.run("star blocks from cached formats (satellite + relay)", {}, [&] {
    (void)to_block(star_top.graph, "sat", {"self", "token", "ring", "from_relay"});
    (void)to_block(star_top.graph, "relay", {"to_relay", "relay_self"});
  }, shape);
  bench.annotate("fraction_of_step", r.stats.median_ms / star_step);
  r = bench.run("star topology (graph + formats + blocks)", {},
                [&] { (void)models::star_topology(lengths, models::StarVariant::Full); }, shape);
  bench.annotate("fraction_of_step", r.stats.median_ms / star_step);

  models::MultiScaleConfig mc;
  mc.encoder.vocab_size = 10000;
  mc.encoder.heads = 10;
  mc.encoder.hidden = 300;
  mc.encoder.layers = 2;
  mc.scales = models::parse_scales("9");
  mc.encoder.max_length = 128;
  models::MultiScaleTransformer window_model(mc);
  window_model.reset_parameters(2);
  const models::MultiScaleTopology window_top = models::multiscale_topology(lengths, mc.scales);
  const double window_step =
      bench.run("window w=9 training step, 128 x n=128 (reference)", {}, [&] {
             train_step(window_model, [&] { return window_model.encode(batch, window_top); }, weights);
           }, shape).stats.median_ms;
  r = bench.run("window w=9 block from cached formats", {},
                [&] { (void)to_block(window_top.graph, "pos", {"scale0"}); }, shape);
  bench.annotate("fraction_of_step", r.stats.median_ms / window_step);
  r = bench.run("window w=9 topology (graph + formats + block)", {},
                [&] { (void)models::multiscale_topology(lengths, mc.scales); }, shape);
  bench.annotate("fraction_of_step", r.stats.median_ms / window_step);
}

}  // namespace

TOPO_BENCH_SUITE(graph, "topology construction for a batch of 128 sentences (16..256 tokens) vs a Star step") {
  const std::vector<std::int64_t> lengths = random_lengths(128, 16, 256, 42);
  std::int64_t tokens = 0;
  for (std::int64_t n : lengths) tokens += n;
  const nlohmann::json shape = {{"sentences", 128}, {"tokens", tokens}, {"lengths", "uniform 16..256"}};

  // The step it is measured against: the Star-Transformer of the paper's text setting (d = 300, 6 heads,
  // 2 layers) on this batch, forward + backward (no optimizer update).
  const auto star_model = paper_star(256);
  models::StarTransformer& star = *star_model;
  const models::SequenceBatch batch = random_batch(lengths, 10000, 7);
  const models::StarTopology topology = models::star_topology(lengths, models::StarVariant::Full);
  const Tensor weights = random_uniform({static_cast<std::int64_t>(lengths.size()), star.hidden_size()}, -1.f, 1.f, 3);
  const bench::Result step = bench.run("star training step (reference)", {}, [&] {
    train_step(star, [&] { return star.encode(batch, topology); }, weights);
  }, shape);
  const double step_ms = step.stats.median_ms;
  auto fraction = [&](const bench::Result& r) { return r.stats.median_ms / step_ms; };

  bench::Result r = bench.run("star topology (graph + 2 blocks)", {},
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

  block_assembly(bench);
}

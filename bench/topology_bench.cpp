// Suite `topology`: a topology file's model (--model graph) against the registered model the file describes,
// per training step (issue #35: within 5%). Pairs: Star vs configs/topologies/star.json (graph path both), and
// Multi-Scale vs configs/topologies/multiscale.json on the band path (the default of both) and on the graph path.
// The two steps of a pair alternate call by call (rounds of A, B, then B, A, after one untimed round), so a
// drifting machine load slows both alike; `registered_over_file` is the median over rounds of t_registered /
// t_file (1: as fast; 0.95: the file's model 5% slower). A step is encode + a weighted sum of the sentence
// features + backward (no optimizer: identical for both), width 100 (Star 4 heads, Multi-Scale 10, as the classify
// recipes), 2 layers. Batches: 16 sentences of MR-like lengths (5..60 tokens, drawn once), and 8 of n = 128 —
// the file's model builds its graph per batch from the file's relations, the registered one from its builders.
#include <chrono>
#include <random>

#include "bench/harness.hpp"
#include "kernels/dense/random.hpp"
#include "models/multiscale_transformer/multiscale_transformer.hpp"
#include "models/star_transformer/star_transformer.hpp"
#include "models/topology_transformer/topology_transformer.hpp"
#include "nn/autograd.hpp"
#include "nn/ops.hpp"

namespace {

using namespace topo;
constexpr std::int64_t kVocab = 20000, kHidden = 100;

models::SequenceBatch token_batch(const std::vector<std::int64_t>& lengths, std::uint32_t seed) {
  models::SequenceBatch b;
  b.lengths = lengths;
  std::mt19937 gen(seed);
  std::uniform_int_distribution<std::int64_t> id(0, kVocab - 1);
  std::vector<std::int64_t> ids(static_cast<std::size_t>(b.num_tokens()));
  for (auto& x : ids) x = id(gen);
  b.token_ids = Tensor::from_vector(ids, {b.num_tokens()});
  return b;
}

std::vector<std::int64_t> mr_like_lengths() {
  std::mt19937 gen(5);
  std::uniform_int_distribution<std::int64_t> n(5, 60);
  std::vector<std::int64_t> lengths(16);
  for (auto& x : lengths) x = n(gen);
  return lengths;
}

}  // namespace

TOPO_BENCH_SUITE(topology, "a topology file's model vs the registered model it describes (Star, Multi-Scale) per train step, interleaved") {
  const std::string dir = std::string(TOPO_SOURCE_DIR) + "/configs/topologies/";
  models::EncoderConfig encoder{.vocab_size = kVocab, .hidden = kHidden, .heads = 4, .layers = 2, .max_length = 256};
  models::StarConfig sc{.encoder = encoder};
  models::TopologyTransformerConfig star_file{.encoder = encoder, .topology = models::read_topology_file(dir + "star.json")};
  star_file.residual = false;  // Star's paper form, as StarConfig's default
  encoder.heads = 10;
  models::MultiScaleConfig mc{.encoder = encoder};
  models::TopologyTransformerConfig ms_file{.encoder = encoder, .topology = models::read_topology_file(dir + "multiscale.json")};
  models::MultiScaleConfig mc_graph = mc;
  mc_graph.band = false;
  models::TopologyTransformerConfig ms_file_graph = ms_file;
  ms_file_graph.band = false;
  struct Pair {
    const char* name;
    std::shared_ptr<models::SequenceEncoder> registered, file;
  };
  const std::vector<Pair> pairs = {
      {"star", std::make_shared<models::StarTransformer>(sc), std::make_shared<models::TopologyTransformer>(star_file)},
      {"multiscale band", std::make_shared<models::MultiScaleTransformer>(mc),
       std::make_shared<models::TopologyTransformer>(ms_file)},
      {"multiscale graph", std::make_shared<models::MultiScaleTransformer>(mc_graph),
       std::make_shared<models::TopologyTransformer>(ms_file_graph)},
  };
  const int rounds = bench.quick() ? 3 : 10;
  struct Shape {
    const char* name;
    std::vector<std::int64_t> lengths;
  };
  const std::vector<Shape> shapes = {{"mr-like", mr_like_lengths()}, {"n=128", std::vector<std::int64_t>(8, 128)}};
  for (const Shape& shape : shapes) {
    const models::SequenceBatch batch = token_batch(shape.lengths, 11);
    const Tensor r = random_uniform({batch.size(), kHidden}, -1, 1, 3);
    for (const Pair& pair : pairs) {
      pair.registered->reset_parameters(1), pair.file->reset_parameters(1);
      const auto step = [&](int which) {  // milliseconds; 0 registered, 1 file
        models::SequenceEncoder& model = which == 0 ? *pair.registered : *pair.file;
        const auto t0 = std::chrono::steady_clock::now();
        model.zero_grad();
        nn::sum_all(model.encode(batch).sentences * nn::Var(r)).backward();
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      };
      (void)step(0), (void)step(1);
      std::vector<double> times[2], ratios;
      for (int i = 0; i < rounds; ++i) {
        double t[2];
        for (int k = 0; k < 2; ++k) {
          const int which = i % 2 == 0 ? k : 1 - k;
          t[which] = step(which);
        }
        times[0].push_back(t[0]), times[1].push_back(t[1]);
        ratios.push_back(t[0] / t[1]);
      }
      const nlohmann::json extra = {{"sentences", batch.size()}, {"tokens", batch.num_tokens()}, {"rounds", rounds}};
      bench.record(fmt::format("{} registered train step {}", pair.name, shape.name), bench::summarize(times[0]), {}, extra);
      bench.record(fmt::format("{} file train step {}", pair.name, shape.name), bench::summarize(times[1]), {}, extra);
      bench.annotate("registered_over_file", bench::summarize(ratios).median_ms);
      bench.annotate("round_ratios", ratios);
    }
  }
}

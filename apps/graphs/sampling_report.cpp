#include "apps/graphs/sampling_report.hpp"

#include <algorithm>
#include <chrono>
#include <random>

#include "graph/sampling.hpp"
#include "kernels/error.hpp"
#include "kernels/threads.hpp"

namespace topo::apps {

// The neighbour sampler as a sampled node-classify run calls it (graph/sampling.hpp's sample_blocks: the draws
// and the numbering of each layer's sources, input layer first), on the graph topo-train builds (the listed edges and a self loop per
// node), over `batches` batches of training nodes drawn without repetition from a seeded shuffle. One batch
// first, untimed, builds the CSC. What bench/peers/sampling.py times for DGL's MultiLayerNeighborSampler.
nlohmann::json sampling_report(const NodeDataset& data, const std::vector<std::int64_t>& fanouts, std::int64_t batch,
                               std::int64_t batches, std::uint64_t seed) {
  using Clock = std::chrono::steady_clock;
  const HeteroGraph g = node_classify_graph(data);
  std::vector<std::int64_t> train = data.splits.train;
  TOPO_CHECK(!train.empty(), "sample: the graph has no training nodes");
  TOPO_CHECK(batch >= 1 && batches >= 1, "sample: --batch {} and --batches {} must be >= 1", batch, batches);
  TOPO_CHECK(!fanouts.empty(), "sample: --fanouts needs one fan-out per layer");
  for (const std::int64_t f : fanouts)
    TOPO_CHECK(f >= 1 || f == -1, "sample: --fanouts {} must be >= 1 or -1 (every in-edge)", f);
  std::mt19937_64 rng(seed);
  std::shuffle(train.begin(), train.end(), rng);
  std::vector<std::vector<std::int64_t>> per_layer;
  for (const std::int64_t f : fanouts) per_layer.push_back({f});
  std::size_t next = 0;
  const auto draw = [&] {
    std::vector<std::int64_t> seeds;
    for (std::int64_t i = 0; i < batch && i < static_cast<std::int64_t>(train.size()); ++i) {
      if (next == train.size()) next = 0;  // past the split: around again (the seeds of one batch stay distinct)
      seeds.push_back(train[next++]);
    }
    return seeds;
  };
  (void)sample_blocks(g, {draw()}, per_layer, seed);
  std::vector<double> ms;
  double edges = 0, sources = 0;
  for (std::int64_t b = 0; b < batches; ++b) {
    const std::vector<std::int64_t> seeds = draw();
    const auto t0 = Clock::now();
    const std::vector<SampledBlock> layers = sample_blocks(g, {seeds}, per_layer, seed + 1 + b);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    for (const SampledBlock& l : layers) edges += static_cast<double>(l.parts.edges[0].size());
    sources += static_cast<double>(layers.front().parts.src_nodes[0].size());
  }
  double total = 0;
  for (const double m : ms) total += m;
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double seeds_done =
      static_cast<double>(batches) * static_cast<double>(std::min<std::int64_t>(batch, train.size()));
  return {{"library", "topograph"}, {"fanouts", fanouts}, {"batch", batch}, {"batches", batches},
          {"threads", num_threads()}, {"median_batch_ms", sorted[sorted.size() / 2]},
          {"seeds_per_second", seeds_done / (total / 1e3)}, {"sampled_edges_per_second", edges / (total / 1e3)},
          {"edges_per_batch", edges / static_cast<double>(batches)},
          {"input_nodes_per_batch", sources / static_cast<double>(batches)}};
}

}  // namespace topo::apps

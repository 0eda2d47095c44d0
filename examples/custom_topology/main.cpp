// A user's own sparse-attention topology, built from Topograph's builders and trained for a few steps, in a
// project that only sees the installed package (find_package(Topograph), Topograph::topograph).
//
// The topology is Longformer's / BigBird's, on one node type "tok"; token i attends to
//   window  — its neighbours |i - j| <= 1 (builders::window_batch, i itself included),
//   dilated — the tokens 3, 6 and 9 positions away (a dilated sliding window: no builder has it, so its edges
//             are built here as an EdgeList),
//   global  — token 0 of its sentence, a [CLS]-like global token, which in turn attends to every token.
// The three relations are disjoint (dilated and global skip the pairs a window already holds), so no pair
// is counted twice in the one softmax that to_block builds over all of them.
//
// The task: each token is a digit 0..9, marked or not; predict the sum of the marked digits of each
// sentence (the masked-summation probe in small). Exits 1 if the loss did not fall.
//
// Without C++: the same pattern is configs/topologies/custom_topology.json, trained by
// `topo-train --model graph --topology configs/topologies/custom_topology.json` (docs/topologies.md). This
// example stays as the walk-through of the builders and layers a file drives.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "graph/block.hpp"
#include "graph/builders.hpp"
#include "graph/heterograph.hpp"
#include "nn/attention.hpp"
#include "nn/layers.hpp"
#include "nn/ops.hpp"
#include "nn/optim.hpp"
#include "nn/readout.hpp"

using namespace topo;

namespace {

constexpr std::int64_t kWindow = 3;               // width of the plain window (radius 1)
constexpr std::int64_t kRadius = (kWindow - 1) / 2;
constexpr std::int64_t kDilation = 3, kReach = 3;  // dilated offsets +-3, +-6, +-9

// Whether j -> i is already in the window or dilated relation (offset = j - i).
bool in_windows(std::int64_t offset) {
  const std::int64_t d = offset < 0 ? -offset : offset;
  return d <= kRadius || (d % kDilation == 0 && d / kDilation <= kReach);
}

// Edges j -> i ("i attends to j") for every sentence of the batch, numbered as the builders number them
// (sentence b's tokens after those of sentences 0..b-1), with the per-sentence edge counts a batched
// relation needs. `edges_of(n, add)` calls add(j, i) for each edge of one sentence of n tokens.
template <class EdgesOf>
EdgeList batch_edges(const std::vector<std::int64_t>& lengths, EdgesOf edges_of) {
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
  std::vector<std::int64_t> counts;
  std::int64_t first = 0;
  for (std::int64_t n : lengths) {
    const std::size_t before = pairs.size();
    edges_of(n, [&](std::int64_t j, std::int64_t i) { pairs.emplace_back(first + j, first + i); });
    counts.push_back(static_cast<std::int64_t>(pairs.size() - before));
    first += n;
  }
  EdgeList edges = EdgeList::from_pairs(pairs);
  edges.batch_num_edges = std::move(counts);
  return edges;
}

EdgeList dilated_window_batch(const std::vector<std::int64_t>& lengths) {
  return batch_edges(lengths, [](std::int64_t n, auto add) {
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t m = -kReach; m <= kReach; ++m) {
        const std::int64_t j = i + m * kDilation;
        if (m != 0 && (m * kDilation > kRadius || m * kDilation < -kRadius) && j >= 0 && j < n) add(j, i);
      }
  });
}

EdgeList global_token_batch(const std::vector<std::int64_t>& lengths) {
  return batch_edges(lengths, [](std::int64_t n, auto add) {
    for (std::int64_t j = 1; j < n; ++j)
      if (!in_windows(j)) add(j, 0);  // the global token reads every token
    for (std::int64_t i = 1; i < n; ++i)
      if (!in_windows(i)) add(0, i);  // and every token reads it
  });
}

// The user's topology: lengths in, the one block the attention runs over out.
Block sparse_attention_block(const std::vector<std::int64_t>& lengths, Device device) {
  HeteroGraph g({builders::node_type("tok", lengths)},
                {{{"tok", "window", "tok"}, builders::window_batch(lengths, kWindow)},
                 {{"tok", "dilated", "tok"}, dilated_window_batch(lengths)},
                 {{"tok", "global", "tok"}, global_token_batch(lengths)}});
  return to_block(g.to(device), "tok", {"window", "dilated", "global"});  // one softmax over all three
}

// Token ids: digit + 10 * marked; id 20 is the global token that opens every sentence.
constexpr std::int64_t kVocab = 21, kGlobalToken = 20;

struct Batch {
  std::vector<std::int64_t> lengths, ids;
  std::vector<float> targets;  // [B]: the sum of the marked digits / 10
};

Batch make_batch(std::mt19937& rng, std::int64_t sentences) {
  std::uniform_int_distribution<std::int64_t> length(8, 24), digit(0, 9);
  std::bernoulli_distribution marked(0.3);
  Batch b;
  for (std::int64_t s = 0; s < sentences; ++s) {
    const std::int64_t n = length(rng);
    b.lengths.push_back(n);
    b.ids.push_back(kGlobalToken);
    float sum = 0.f;
    for (std::int64_t t = 1; t < n; ++t) {
      const std::int64_t d = digit(rng);
      const bool m = marked(rng);
      b.ids.push_back(d + (m ? 10 : 0));
      if (m) sum += static_cast<float>(d);
    }
    b.targets.push_back(sum / 10.f);
  }
  return b;
}

// embedding -> sparse attention over the block (+ residual) -> sum per sentence -> linear.
class MarkedSumModel : public nn::Module {
 public:
  explicit MarkedSumModel(std::int64_t dim) {
    embedding = register_module("embedding", std::make_shared<nn::Embedding>(kVocab, dim));
    attention = register_module("attention", std::make_shared<nn::GraphMultiHeadAttention>(dim, 4));
    output = register_module("output", std::make_shared<nn::Linear>(dim, 1));
  }
  nn::Var forward(const Block& block, const Tensor& ids, const std::vector<std::int64_t>& lengths) const {
    nn::Var h = embedding->forward(ids);                                          // [tokens, dim]
    h = h + nn::relu(attention->forward(block, h, {{"tok", h}}));                 // [tokens, dim]
    return output->forward(nn::readout_nodes(h, lengths, nn::Readout::Sum));    // [sentences, 1]
  }
  std::shared_ptr<nn::Embedding> embedding;
  std::shared_ptr<nn::GraphMultiHeadAttention> attention;
  std::shared_ptr<nn::Linear> output;
};

}  // namespace

int main() {
  const Device device = built_with_cuda() && cuda_available() ? Device::cuda(0) : Device::cpu();
  std::printf("custom_topology: Topograph %s CUDA, running on %s\n", built_with_cuda() ? "with" : "without",
              device.is_cuda() ? "CUDA" : "the CPU");

  MarkedSumModel model(32);
  model.reset_parameters(7);
  model.to(device);
  nn::Adam optimizer(model.parameters(), {.lr = 1e-2f});

  constexpr int kSteps = 80, kBatch = 16, kAverage = 10;
  std::mt19937 rng(19);
  std::vector<float> losses;
  for (int step = 0; step < kSteps; ++step) {
    const Batch batch = make_batch(rng, kBatch);
    const Block block = sparse_attention_block(batch.lengths, device);
    const Tensor ids = Tensor::from_vector(batch.ids, {static_cast<std::int64_t>(batch.ids.size())}, device);
    const nn::Var target(Tensor::from_vector(batch.targets, {kBatch, 1}, device));
    if (step == 0)
      std::printf("first batch: %lld tokens, %lld attention edges (window + dilated + global)\n",
                  static_cast<long long>(block.num_dst), static_cast<long long>(block.num_edges()));

    nn::Var loss = nn::mse(model.forward(block, ids, batch.lengths), target);
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    losses.push_back(loss.item());
    if (step % 10 == 0 || step == kSteps - 1) std::printf("step %3d  loss %.4f\n", step, losses.back());
  }

  auto mean = [&](int from) {
    float s = 0.f;
    for (int i = from; i < from + kAverage; ++i) s += losses[static_cast<std::size_t>(i)];
    return s / kAverage;
  };
  const float first = mean(0), last = mean(kSteps - kAverage);
  std::printf("mean loss of the first %d steps %.4f, of the last %d %.4f\n", kAverage, first, kAverage, last);
  if (!(last < 0.5f * first)) {
    std::fprintf(stderr, "custom_topology: the loss did not fall to half (%.4f -> %.4f)\n", first, last);
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}

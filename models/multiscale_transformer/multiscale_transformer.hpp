#pragma once
// The Multi-Scale Transformer (Guo et al., AAAI 2020) as ../shared/docs/models.md §2:
//   X = [CLS; E]  per sentence (E: token embedding + learned positions; [CLS] a learned vector, an ordinary
//                 position in the windows; SequenceEmbedding's lead row: the embedding dropout covers it too)
//   layer l:  H^{l+1} = LayerNorm(H^l + ReLU(MSMSA(H^l))),  no feed-forward
//   MSMSA:    heads split into groups by scale (head_distribution, α rule), each group attending over the
//             window graph of its scale (GraphMultiHeadAttention head groups), concatenated, one W_O
//   readout:  tokens H^L without [CLS]; sentence feature H^L_[CLS] + max_i H^L_i (the task head's MLP follows),
//             or with config.summary Mean: mean_i H^L_i + max_i H^L_i ([CLS] still a position in the windows)
// The topology is multiscale_topology(): one window relation per scale over the [CLS]-extended sentences.
// Two paths compute the same layer with the same parameters (config.band):
//   band  (default) — each head's window as a band of the fused dense attention kernel (nn::flash_attention
//         with one radius per (sentence, head): (width - 1) / 2 of its group's scale), no graph built; the wide
//         N/k windows run as GEMM tiles instead of per-edge sparse kernels;
//   graph — GraphMultiHeadAttention head groups over multiscale_topology()'s window blocks (encode(batch,
//         topology)), the per-edge sparse kernels: the reference the band path is tested against.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "models/encoder_config.hpp"
#include "models/model.hpp"
#include "models/multiscale_transformer/scales.hpp"
#include "models/sequence_embedding.hpp"
#include "nn/attention.hpp"

namespace topo::models {

// What the sentence feature adds to the max over the tokens' final states: the [CLS] state (the paper's), which
// the windows let see only the sentence's first ~N/8 positions per layer, or the mean of the tokens' states.
enum class SentenceSummary { Cls, Mean };

struct MultiScaleConfig {
  EncoderConfig encoder{.hidden = 300, .heads = 10};  // hidden = heads * head_dim(); dropout: the embedding output
  std::vector<Scale> scales = parse_scales("1,3,N/16,N/8,N/4");
  double alpha = 0.5;
  SentenceSummary summary = SentenceSummary::Cls;
  bool band = true;  // encode() runs the band path (false: the window graph)
  std::int64_t head_dim() const { return encoder.heads > 0 ? encoder.hidden / encoder.heads : 0; }
};

struct MultiScaleTopology {
  std::vector<std::int64_t> lengths;  // tokens per sentence (without [CLS])
  HeteroGraph graph;                  // node type "pos" ([CLS] first in each sentence), relation "scale<k>" per scale
  std::vector<Block> scales;          // per scale: dst pos, sources pos
  std::int64_t num_positions() const { return graph.num_nodes(0); }
};
MultiScaleTopology multiscale_topology(const std::vector<std::int64_t>& lengths, const std::vector<Scale>& scales,
                                       Device device = Device::cpu());

class MultiScaleTransformer : public SequenceEncoder {
 public:
  explicit MultiScaleTransformer(const MultiScaleConfig& config);
  Encoding encode(const SequenceBatch& batch) override;  // the path config().band chooses
  Encoding encode(const SequenceBatch& batch, const MultiScaleTopology& topology);  // the graph path
  Encoding encode_band(const SequenceBatch& batch);                                  // the band path
  // Layer l's band radius per (sentence, head), [lengths.size() * heads]: head h of scale k's group sees the
  // positions within (width_k(n) - 1) / 2 of it, n the sentence's token count — multiscale_topology's window.
  std::vector<std::int64_t> band_radii(std::size_t l, const std::vector<std::int64_t>& lengths) const;
  std::int64_t hidden_size() const override { return config_.encoder.hidden; }
  const MultiScaleConfig& config() const { return config_; }
  // [layers][scales] heads per scale (the α rule).
  const std::vector<std::vector<std::int64_t>>& head_counts() const { return head_counts_; }

  struct Layer : nn::Module {
    Layer(std::int64_t hidden, std::int64_t heads);
    std::shared_ptr<nn::GraphMultiHeadAttention> attention;
    std::shared_ptr<nn::LayerNorm> norm;
  };
  std::shared_ptr<SequenceEmbedding> embedding;
  nn::Var cls;  // [1, hidden]
  std::shared_ptr<nn::ModuleList> layers;
  const Layer& layer(std::size_t i) const { return *layers->at<Layer>(i); }

 private:
  struct Positions;  // the [CLS]-extended position rows of a batch (multiscale_transformer.cpp)
  Positions positions(const SequenceBatch& batch, Device device) const;
  Encoding readout(const nn::Var& h, const Positions& p, const SequenceBatch& batch) const;
  MultiScaleConfig config_;
  std::vector<std::vector<std::int64_t>> head_counts_;
};

}  // namespace topo::models

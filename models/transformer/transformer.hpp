#pragma once
// The standard Transformer baseline (models.md §4): every token attends to every token of its sentence;
// post-LN blocks  h = LN(h + Dropout(MultiAtt(h))),  h = LN(h + Dropout(W2 ReLU(W1 h))),  learned positions.
// Readout (the same kind of sentence feature as Star's s + max H): mean_i h_i + max_i h_i.
//
// Two computations of the same function, sharing parameters:
//   encode()       — the graph path: a full graph per sentence (builders::full_batch) and the fused sparse
//                    attention kernel, batching by disjoint union (no padding);
//   encode_dense() — the dense path (the speed baseline for the sparse models): the fused dense attention
//                    kernel (nn::flash_attention: tiles of queries x keys, online softmax, no [L, L] scores,
//                    sentences packed by length so no padded row is computed);
//   encode_padded() — the former dense path, kept as an independent reference for both: sentences padded to
//                    the longest, per-head batched GEMMs [B, L, L] with a -inf key-padding mask.
#include <cstdint>
#include <memory>

#include "graph/graph.hpp"
#include "models/blocks/post_ln_block.hpp"
#include "models/encoder_config.hpp"
#include "models/model.hpp"
#include "models/sequence_embedding.hpp"

namespace topo::models {

struct TransformerConfig {
  EncoderConfig encoder{.hidden = 300, .heads = 6};  // dropout: the embedding output and both sublayers
  std::int64_t ffn = 0;  // feed-forward width; 0 means 4 * hidden
  bool dense = false;    // encode() runs encode_dense (the fused dense kernel) instead of the graph path
  bool padded = false;   // with dense: encode() runs encode_padded (padded batched GEMMs) instead
};

// The graph side of the baseline: one full graph per sentence (readouts go through nn::readout_nodes).
struct FullTopology {
  std::vector<std::int64_t> lengths;
  HeteroGraph graph;  // node type tok; relation full (tok->tok, self included)
  Block attention;    // dst tok, sources tok
};
FullTopology full_topology(const std::vector<std::int64_t>& lengths, Device device = Device::cpu());

class Transformer : public SequenceEncoder {
 public:
  explicit Transformer(const TransformerConfig& config);
  Encoding encode(const SequenceBatch& batch) override;
  Encoding encode(const SequenceBatch& batch, const FullTopology& topology);
  Encoding encode_dense(const SequenceBatch& batch);
  Encoding encode_padded(const SequenceBatch& batch);
  std::int64_t hidden_size() const override { return config_.encoder.hidden; }
  const TransformerConfig& config() const { return config_; }

  // Each layer is the shared post-LN block: h = LN(h + drop(att)); h = LN(h + drop(ffn(h))).
  using Layer = PostLnBlock;
  std::shared_ptr<SequenceEmbedding> embedding;
  std::shared_ptr<nn::ModuleList> layers;
  const Layer& layer(std::size_t i) const { return *layers->at<Layer>(i); }

 private:
  TransformerConfig config_;
};

}  // namespace topo::models

#pragma once
// `--model graph`: the shared attention layer stack on the graph a topology file describes (docs/topologies.md).
//
//   tok^0 = [learned in_sequence rows; E] per sentence (E: token embedding + learned positions, dropout)
//   emb   = E (a source only); another type starts as learned vectors ("learned") or mean_i E_i ("mean")
//   layer l, per destination type t (tok first, then the file's order):
//     x_t <- LayerNorm(x_t + ReLU(MultiAtt_t(x_t, sources)))        (residual; LayerNorm(ReLU(.)) without)
//     MultiAtt_t's heads split into the file's head groups, each over its relations into t (one softmax)
//     sources: the previous layer's states (schedule parallel) or the newest ones (sequential)
//   readout: tokens tok^L without the in_sequence rows; sentence feature = sum over the other node types of
//            the mean of its nodes + max_i tok^L_i
// Separate weights per layer and per destination type. The star file (configs/topologies/star.json) is Star's
// satellites-then-relay with sequential updates and residual off; the multiscale file is Multi-Scale's windows
// with a [CLS] in_sequence node: both give those models' outputs with the same weights (a test).
//
// Two paths (config.band). graph: the head groups' blocks on the sparse attention kernel. band: when tok is the
// only destination and each head group is one window or full relation over tok, every head's window is a band
// of the fused dense attention kernel (Multi-Scale's band path, no graph built) — the same numbers.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/encoder_config.hpp"
#include "models/model.hpp"
#include "models/sequence_embedding.hpp"
#include "models/topology_transformer/topology_graph.hpp"
#include "nn/attention.hpp"

namespace topo::models {

struct TopologyTransformerConfig {
  EncoderConfig encoder;  // dropout: on the embedding output
  TopologySpec topology;
  bool residual = true;
  bool band = true;  // use the band path where the pattern allows it (false: always the graph)
};

class TopologyTransformer : public SequenceEncoder {
 public:
  explicit TopologyTransformer(const TopologyTransformerConfig& config);
  Encoding encode(const SequenceBatch& batch) override;  // band path when config().band and band_runs()
  Encoding encode(const SequenceBatch& batch, const TopologyGraph& graph);  // the graph path
  Encoding encode_band(const SequenceBatch& batch);
  std::int64_t hidden_size() const override { return config_.encoder.hidden; }
  const TopologyTransformerConfig& config() const { return config_; }

  // One layer's weights: an attention and a LayerNorm per destination type ("<type>_attention", "<type>_norm").
  struct Layer : nn::Module {
    Layer(const std::vector<std::string>& types, std::int64_t hidden, std::int64_t heads);
    std::vector<std::shared_ptr<nn::GraphMultiHeadAttention>> attention;  // [destination types]
    std::vector<std::shared_ptr<nn::LayerNorm>> norm;
  };
  std::shared_ptr<SequenceEmbedding> embedding;
  std::shared_ptr<nn::ModuleList> layers;
  // Learned initial states of the other node types ("node_<type>", [count, hidden]), in file order; null for
  // "mean" types.
  std::vector<nn::Var> node_init;
  const Layer& layer(std::size_t i) const { return *layers->at<Layer>(i); }

 private:
  struct Rows;  // where the in_sequence and token rows of tok sit (topology_transformer.cpp)
  Rows rows(const SequenceBatch& batch, Device device) const;
  nn::Var lead() const;  // the in_sequence types' rows [c, hidden]; undefined when c = 0
  Encoding readout(const nn::Var& tok, const std::map<std::string, nn::Var>& states, const Rows& rows,
                   const SequenceBatch& batch) const;
  nn::Var epilogue(const nn::LayerNorm& norm, const nn::Var& x, const nn::Var& update) const;
  TopologyTransformerConfig config_;
  std::vector<std::string> dst_types_;
  bool band_ = false;  // encode() takes the band path: config.band and band_runs(topology)
};

}  // namespace topo::models

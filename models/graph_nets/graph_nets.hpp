#pragma once
// Node classifiers over a given graph, as DGL's examples build them from GraphConv, GATConv and SAGEConv
// (nn/graph_layers.hpp): the encoders of `--task node-classify`. They read SequenceBatch::graph (one relation,
// self loops included by the task) and the node features [num_nodes, input_dim] in SequenceBatch::features,
// and end in their output layer: Encoding::tokens is [num_nodes, output_dim] (the class scores), as the papers'
// two-layer networks end in the class layer; Encoding::sentences is undefined (there are no sentences).
// A sampled batch (SequenceBatch::blocks) runs layer l over block l instead, its destinations the first rows of
// its sources: the scores are then the last block's destinations'.
#include <cstdint>
#include <memory>
#include <vector>

#include "models/model.hpp"
#include "nn/graph_layers.hpp"

namespace topo::models {

struct GraphNetConfig {
  std::int64_t input_dim = 0;
  std::int64_t hidden = 16;     // GCN: features of a hidden layer; GAT: features per head
  std::int64_t heads = 1;       // GAT: heads of each hidden layer (the output layer has one)
  std::int64_t layers = 2;      // graph layers, the output layer included (>= 1)
  std::int64_t output_dim = 0;  // features out of the last layer (the classes); 0: hidden
  float dropout = 0.f;          // GCN: between layers; GAT: feature and attention dropout of every layer;
                                // SAGE: on the input and between layers
  nn::SageAggregator aggregator = nn::SageAggregator::Mean;  // SAGE's neighbourhood reduction
  nn::Activation activation = nn::Activation::Relu;  // after every layer but the last (GAT's paper: elu)
  nn::Generator* generator = nullptr;  // dropout masks (null: nn::default_generator())
};

// Kipf & Welling (2017): GraphConv layers with symmetric normalisation; relu and dropout between them.
// Parameters conv1 ... convL.
class GcnEncoder : public SequenceEncoder {
 public:
  explicit GcnEncoder(const GraphNetConfig& config);
  Encoding encode(const SequenceBatch& batch) override;
  std::int64_t hidden_size() const override;
  StepMemoryEstimate step_memory(const SequenceBatch& batch) const override;

 private:
  GraphNetConfig config_;
  std::vector<std::shared_ptr<nn::GraphConv>> convs_;
};

// Velickovic et al. (2018): GATConv layers of `heads` heads concatenated with relu, then one head of outputs;
// feature and attention dropout `dropout`. Parameters conv1 ... convL.
class GatEncoder : public SequenceEncoder {
 public:
  explicit GatEncoder(const GraphNetConfig& config);
  Encoding encode(const SequenceBatch& batch) override;
  std::int64_t hidden_size() const override;
  StepMemoryEstimate step_memory(const SequenceBatch& batch) const override;

 private:
  GraphNetConfig config_;
  std::vector<std::shared_ptr<nn::GATConv>> convs_;
};

// Hamilton et al. (2017), full-graph as DGL's graphsage example trains it: SAGEConv layers (mean or max-pool
// aggregator) with relu between them, dropout on the input and between layers. Over node-classify's graph the
// neighbourhood includes the node itself (the task adds self loops). Parameters conv1 ... convL.
class SageEncoder : public SequenceEncoder {
 public:
  explicit SageEncoder(const GraphNetConfig& config);
  Encoding encode(const SequenceBatch& batch) override;
  std::int64_t hidden_size() const override;
  StepMemoryEstimate step_memory(const SequenceBatch& batch) const override;

 private:
  GraphNetConfig config_;
  std::vector<std::shared_ptr<nn::SAGEConv>> convs_;
};

}  // namespace topo::models

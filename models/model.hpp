#pragma once
// What the apps train: a model maps a batch of variable-length sequences to task outputs.
// Sentences are concatenated without padding (lengths say where each ends): batching by disjoint union
// makes padding unnecessary, and every topology builder takes the same lengths.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/heterograph.hpp"
#include "kernels/tensor.hpp"
#include "nn/module.hpp"

namespace topo::models {

// A node type of the batch beside its tokens (BiG's lexicon words, a sentence node, ...): how many nodes each
// example has, their rows concatenated example by example, and what each node carries.
struct NodeSet {
  std::vector<std::int64_t> counts;  // nodes per example, 0 allowed
  Tensor ids = {};                   // int64 [total] (e.g. vocabulary ids); undefined when unused
  Tensor features = {};              // float32 [total, dim]; undefined when unused
  Tensor spans = {};                 // int64 [total, 2]: [first, last] token of the node within its example

  std::int64_t total() const;
  std::vector<std::int64_t> offsets() const;  // [examples + 1]: example b owns rows [offsets[b], offsets[b+1])
  NodeSet to(Device device) const;
};

struct SequenceBatch {
  std::vector<std::int64_t> lengths;  // tokens per sentence, each >= 1
  Tensor token_ids;                   // int64 [total tokens] for text; undefined for feature inputs
  Tensor features;                    // float32 [total tokens, in_dim] for continuous inputs (masked summation)
  std::map<std::string, NodeSet> node_sets = {};  // further node types per example, by type name
  // int64 [total tokens]: a class per token (the tagging task's capitalisation class, text::case_class) for
  // encoders built with case_classes > 0; undefined otherwise.
  Tensor token_case = {};
  // The characters of every token (the tagging task's character features) for encoders built with
  // char_classes > 0: int64 [total characters], token t's chars_per_token[t] (>= 1) class ids in order; int64
  // [total tokens] token_suffix: a class per token's ending (suffix_classes > 0). Undefined / empty otherwise.
  Tensor token_chars = {};
  std::vector<std::int64_t> chars_per_token = {};
  Tensor token_suffix = {};
  // int64 [total tokens, 2]: token t's two bigram classes, (t-1, t) then (t, t+1) (bigram_classes > 0: Chinese
  // character tagging); undefined otherwise.
  Tensor token_bigrams = {};
  // The input graph of graph tasks (node classification: one "sentence" whose tokens are the graph's nodes,
  // features [num_nodes, in_dim]); null for sequence tasks, whose models build their graphs from the lengths.
  std::shared_ptr<const HeteroGraph> graph = nullptr;
  // Sampled mini-batches of a graph task (node-classify --fanouts): one block per graph layer, input layer
  // first, each with two node types (its sources, then its destinations: graph/to_block.hpp's block_graph)
  // and one relation between them (DGL's blocks: a block's destinations are its first source rows, and the
  // next block's sources). features are then the first
  // block's source rows, and lengths = {the last block's destinations}. Empty otherwise.
  std::vector<std::shared_ptr<const HeteroGraph>> blocks = {};

  std::int64_t size() const { return static_cast<std::int64_t>(lengths.size()); }
  std::int64_t num_tokens() const;
  // Sentence index of every token: int64 [total tokens].
  Tensor sentence_ids(Device device = Device::cpu()) const;
  // The node set of `type`; throws naming the type and the batch's types. The tokens are node set "token".
  const NodeSet& node_set(const std::string& type) const;
  NodeSet tokens() const;  // counts = lengths, ids = token_ids, features = features
  // Every node set has one count per example and rows that match its counts (topo::Error names the type).
  void validate() const;
  SequenceBatch to(Device device) const;
};

// The model-specific part: token states and one feature vector per sentence.
struct Encoding {
  nn::Var tokens;     // [total tokens, hidden]
  nn::Var sentences;  // [batch, hidden] (the paper's readout feature, e.g. s^T + max_i h_i^T for Star)
};

// What one training step of an encoder would allocate, estimated before it runs, so a run that cannot fit stops
// with an error instead of an OOM kill (node-classify checks it against the memory there is).
struct StepMemoryEstimate {
  std::int64_t bytes = 0;  // activations kept for backward plus their gradients and the step's temporaries
  std::string detail;      // what the bytes are, for the error ("8 heads x 21,000,000 edges of attention ...")
  std::string lower_with;  // the flags that lower it ("--heads, --hidden")
};

class SequenceEncoder : public nn::Module {
 public:
  virtual Encoding encode(const SequenceBatch& batch) = 0;
  virtual std::int64_t hidden_size() const = 0;
  // One training step on `batch` (its shapes only; nothing is computed). bytes 0: the encoder gives no estimate.
  virtual StepMemoryEstimate step_memory(const SequenceBatch& /*batch*/) const { return {}; }
};

}  // namespace topo::models

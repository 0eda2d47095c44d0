#pragma once
// The standard layers, PyTorch-shaped: Linear, Embedding, LayerNorm, Dropout, MLP, plus an Activation
// enum for configs. Forward takes and returns Vars; parameters are registered with PyTorch's default
// initialisers (call reset_parameters(seed) on the top-level model for a seeded, reproducible draw).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/module.hpp"
#include "nn/ops.hpp"

namespace topo::nn {

enum class Activation { Identity, Relu, Gelu, Tanh, LeakyRelu, Elu };  // Elu: alpha 1
Var apply(Activation act, const Var& x, float leaky_slope = 0.01f);
// act(row_scale * x + bias): one fused op (nn::scale_bias_act) when the activation's gradient follows from its
// output (all but gelu; leaky relu with a positive slope), else mul, add and apply. row_scale: x.size(0)
// elements, a constant, or undefined; bias: numel / x.size(0) elements or undefined.
Var scale_bias_apply(Activation act, const Var& x, const Tensor& row_scale, const Var& bias, float leaky_slope = 0.01f);
// "relu", "gelu", "tanh", "leaky_relu", "elu", "identity" (as in configs); throws naming an unknown one.
Activation parse_activation(const std::string& name);
std::string activation_name(Activation act);

// y = x @ W^T + b over x [..., in] -> [..., out]; W [out, in], b [out] (PyTorch's layout and default
// init: W ~ kaiming_uniform(a = sqrt 5) = U(+-1/sqrt(in)), b ~ U(+-1/sqrt(in)); `weight_init` replaces W's).
class Linear : public Module {
 public:
  Linear(std::int64_t in_features, std::int64_t out_features, bool bias = true,
         init::InitSpec weight_init = init::InitSpec::kaiming_uniform(2.2360679775f));  // a = sqrt(5)
  Var forward(const Var& x) const;
  Var operator()(const Var& x) const { return forward(x); }
  std::int64_t in_features() const { return in_; }
  std::int64_t out_features() const { return out_; }
  Var weight, bias;  // bias undefined without bias

 private:
  std::int64_t in_, out_;
};

// ids (int32/int64, any shape) -> ids.shape + [dim]; weight [num, dim] ~ N(0, 1) as PyTorch.
class Embedding : public Module {
 public:
  // trained_rows in (0, num_embeddings): rows [trained_rows, num) are ids training never reads (a vocabulary's
  // words that only pre-trained vectors or other files have). They live in `tail`, a frozen table outside
  // the optimizer, so they cost neither gradient nor optimizer state; `weight` holds the first trained_rows.
  // 0 (or num_embeddings): one table.
  Embedding(std::int64_t num_embeddings, std::int64_t dim, bool frozen = false, std::int64_t trained_rows = 0);
  // Pretrained vectors [num, dim] (float32; copied to a fresh tensor); reset_parameters keeps them.
  static std::shared_ptr<Embedding> from_pretrained(const Tensor& weights, bool frozen = true);
  // Drawn like a fresh Embedding(num, dim, frozen, trained_rows) (N(0, 1), redrawn by reset_parameters),
  // except rows i with rows[i] != 0, which are vectors' row i: at construction and after every reset, so
  // pre-trained vectors replace exactly the rows they cover. vectors float32 [num, dim], rows [num].
  static std::shared_ptr<Embedding> with_pretrained_rows(const Tensor& vectors, std::vector<std::uint8_t> rows,
                                                         bool frozen = false, std::int64_t trained_rows = 0);
  // ids of any shape -> ids.shape + [dim]; an id past the last row is an error naming it.
  Var forward(const Tensor& ids) const;
  // With a tail: ids [M] as the look-ups of weight and of tail (int64 [M] each, on ids' device), an id in the
  // table it does not belong to marked kNoRow, for embedding_sum({weight, tail, ...}, ...); an id that is
  // kNoRow itself (a row no table fills) stays kNoRow in both when allow_no_row. The tail's are undefined
  // when no id reaches it. Without a tail: {ids, undefined}.
  std::pair<Tensor, Tensor> split_ids(const Tensor& ids, bool allow_no_row = false) const;
  Var operator()(const Tensor& ids) const { return forward(ids); }
  std::int64_t num_embeddings() const { return weight.size(0) + (tail.defined() ? tail.size(0) : 0); }
  std::int64_t dim() const { return weight.size(1); }
  Var weight;
  Var tail;  // [num - trained_rows, dim], frozen; undefined with one table

 protected:
  void after_reset() override;

 private:
  explicit Embedding(Tensor weights, bool frozen);
  Tensor pretrained_;                        // [num, dim] on the CPU; undefined without with_pretrained_rows
  std::vector<std::uint8_t> pretrained_rows_;  // [num]
};

// Normalises the last dimension (size dim); affine adds gamma (ones) and beta (zeros).
class LayerNorm : public Module {
 public:
  explicit LayerNorm(std::int64_t dim, float eps = 1e-5f, bool affine = true);
  Var forward(const Var& x) const;
  Var operator()(const Var& x) const { return forward(x); }
  // forward(h + relu(update)) in one op: a post-norm layer's residual epilogue (nn::residual_relu_layer_norm).
  Var forward_residual_relu(const Var& h, const Var& update) const;
  float eps() const { return eps_; }
  Var weight, bias;  // undefined when !affine

 private:
  std::int64_t dim_;
  float eps_;
};

// Inverted dropout with the module's training flag; masks come from `gen` (default_generator() when
// null), so reseeding or restoring that generator reproduces them. Identity in eval mode.
class Dropout : public Module {
 public:
  explicit Dropout(float p, Generator* gen = nullptr);
  Var forward(const Var& x) const;
  Var operator()(const Var& x) const { return forward(x); }
  float p() const { return p_; }

 private:
  float p_;
  Generator* gen_;
};

// The classification / regression head: in -> hidden[0] -> ... -> out, each hidden layer
// Linear -> activation -> dropout; the last Linear has no activation. Submodules "layers.i".
class MLP : public Module {
 public:
  MLP(std::int64_t in, const std::vector<std::int64_t>& hidden, std::int64_t out,
      Activation activation = Activation::Relu, float dropout = 0.f, Generator* gen = nullptr);
  Var forward(const Var& x) const;
  Var operator()(const Var& x) const { return forward(x); }
  std::size_t num_linear() const { return linears_.size(); }
  const Linear& linear(std::size_t i) const { return *linears_.at(i); }

 private:
  Activation act_;
  std::vector<std::shared_ptr<Linear>> linears_;
  std::vector<std::shared_ptr<Dropout>> dropouts_;
};

}  // namespace topo::nn

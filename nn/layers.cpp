// Layers: thin compositions of the differentiable ops (nn/ops.hpp); no kernels of their own.
#include "nn/layers.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "kernels/dense/indexing.hpp"

namespace topo::nn {

Var apply(Activation act, const Var& x, float leaky_slope) {
  switch (act) {
    case Activation::Identity: return x;
    case Activation::Relu: return relu(x);
    case Activation::Gelu: return gelu(x);
    case Activation::Tanh: return tanh(x);
    case Activation::LeakyRelu: return leaky_relu(x, leaky_slope);
    case Activation::Elu: return elu(x);
  }
  fail("apply: unknown activation {}", static_cast<int>(act));
}

namespace {
// The fused epilogue computing `act`, or none where its gradient does not follow from its output (gelu; leaky
// relu with a slope <= 0). A switch, so that a new activation is a -Wswitch warning here, not a silent identity.
std::optional<EpilogueAct> epilogue_of(Activation act, float leaky_slope) {
  switch (act) {
    case Activation::Identity: return EpilogueAct::Identity;
    case Activation::Relu: return EpilogueAct::Relu;
    case Activation::Gelu: return std::nullopt;
    case Activation::Tanh: return EpilogueAct::Tanh;
    case Activation::LeakyRelu: return leaky_slope > 0.f ? std::optional(EpilogueAct::LeakyRelu) : std::nullopt;
    case Activation::Elu: return EpilogueAct::Elu;
  }
  return std::nullopt;
}
}  // namespace

Var scale_bias_apply(Activation act, const Var& x, const Tensor& row_scale, const Var& bias, float leaky_slope) {
  if (const std::optional<EpilogueAct> e = epilogue_of(act, leaky_slope))
    return scale_bias_act(x, row_scale, bias, *e, leaky_slope);
  Var out = x;
  if (row_scale.defined()) {
    Shape column(static_cast<std::size_t>(x.ndim()), 1);
    column[0] = x.size(0);
    out = mul(out, Var(row_scale.reshape(column)));
  }
  if (bias.defined()) {
    Shape row = x.shape();
    row[0] = 1;
    out = add(out, reshape(bias, row));
  }
  return apply(act, out, leaky_slope);
}

Activation parse_activation(const std::string& name) {
  if (name == "identity" || name == "none") return Activation::Identity;
  if (name == "relu") return Activation::Relu;
  if (name == "gelu") return Activation::Gelu;
  if (name == "tanh") return Activation::Tanh;
  if (name == "leaky_relu") return Activation::LeakyRelu;
  if (name == "elu") return Activation::Elu;
  fail("unknown activation '{}' (expected relu, gelu, tanh, leaky_relu, elu or identity)", name);
}

std::string activation_name(Activation act) {
  switch (act) {
    case Activation::Identity: return "identity";
    case Activation::Relu: return "relu";
    case Activation::Gelu: return "gelu";
    case Activation::Tanh: return "tanh";
    case Activation::LeakyRelu: return "leaky_relu";
    case Activation::Elu: return "elu";
  }
  return "?";
}

// ---- Linear

Linear::Linear(std::int64_t in_features, std::int64_t out_features, bool with_bias, init::InitSpec weight_init)
    : in_(in_features), out_(out_features) {
  TOPO_CHECK(in_features > 0 && out_features > 0, "Linear: sizes must be positive, got in={} out={}",
             in_features, out_features);
  const float bound = 1.f / std::sqrt(static_cast<float>(in_features));
  weight = register_parameter("weight", {out_, in_}, weight_init);
  if (with_bias) bias = register_parameter("bias", {out_}, init::InitSpec::uniform(-bound, bound));
}

Var Linear::forward(const Var& x) const {
  TOPO_CHECK(x.ndim() >= 1 && x.size(-1) == in_, "Linear: input {} does not end in in_features = {}",
             shape_str(x.shape()), in_);
  Shape out_shape = x.shape();
  out_shape.back() = out_;
  // [..., in] -> [N, in] @ W^T (+ b) -> [N, out]: one GEMM with W read transposed (onto the bias rows). A 2-D
  // input goes as it is (a lazy one, nn::dropout of a leaf, is then projected without being made whole).
  if (x.ndim() == 2) return linear(x, weight, bias);
  return reshape(linear(reshape(x, {-1, in_}), weight, bias), out_shape);
}

// ---- Embedding

Embedding::Embedding(std::int64_t num_embeddings, std::int64_t dim, bool frozen, std::int64_t trained_rows) {
  TOPO_CHECK(num_embeddings > 0 && dim > 0, "Embedding: sizes must be positive, got num={} dim={}",
             num_embeddings, dim);
  TOPO_CHECK(trained_rows >= 0 && trained_rows <= num_embeddings,
             "Embedding: trained_rows {} must be in [0, num = {}]", trained_rows, num_embeddings);
  const bool split = trained_rows > 0 && trained_rows < num_embeddings;
  weight = register_parameter("weight", {split ? trained_rows : num_embeddings, dim}, init::InitSpec::normal(0.f, 1.f),
                              !frozen);
  // The tail continues the table's draw: splitting it changes no initial value, here or in later parameters.
  if (split) tail = register_continuation("tail", num_embeddings - trained_rows, false);
}

Embedding::Embedding(Tensor weights, bool frozen) {
  weight = register_parameter("weight", std::move(weights), !frozen, init::InitSpec::keep());
}

std::shared_ptr<Embedding> Embedding::from_pretrained(const Tensor& weights, bool frozen) {
  TOPO_CHECK(weights.defined() && weights.ndim() == 2 && weights.numel() > 0,
             "Embedding::from_pretrained: weights must be a non-empty [num, dim] tensor, got {}",
             weights.defined() ? weights.str() : std::string("undefined"));
  check_dtype(weights, DType::F32, "Embedding::from_pretrained", "weights");
  return std::shared_ptr<Embedding>(new Embedding(weights.clone(), frozen));
}

std::shared_ptr<Embedding> Embedding::with_pretrained_rows(const Tensor& vectors, std::vector<std::uint8_t> rows,
                                                           bool frozen, std::int64_t trained_rows) {
  TOPO_CHECK(vectors.defined() && vectors.ndim() == 2 && vectors.numel() > 0,
             "Embedding::with_pretrained_rows: vectors must be a non-empty [num, dim] tensor, got {}",
             vectors.defined() ? vectors.str() : std::string("undefined"));
  check_dtype(vectors, DType::F32, "Embedding::with_pretrained_rows", "vectors");
  TOPO_CHECK(static_cast<std::int64_t>(rows.size()) == vectors.size(0),
             "Embedding::with_pretrained_rows: {} row flags for {} vectors", rows.size(), vectors.size(0));
  auto e = std::make_shared<Embedding>(vectors.size(0), vectors.size(1), frozen, trained_rows);
  e->pretrained_ = vectors.to(Device::cpu()).clone();
  e->pretrained_rows_ = std::move(rows);
  e->after_reset();
  return e;
}

void Embedding::after_reset() {
  if (!pretrained_.defined()) return;
  // One host round trip per reset (not per step): each table out, its covered rows replaced, back in place.
  const std::vector<float> v = pretrained_.to_vector<float>();
  const auto dim = static_cast<std::size_t>(weight.size(1));
  std::size_t first = 0;  // the table's first row in the vocabulary
  for (Var* table : {&weight, &tail}) {
    if (!table->defined()) continue;
    std::vector<float> w = table->data().to(Device::cpu()).to_vector<float>();
    const auto n = static_cast<std::size_t>(table->size(0));
    for (std::size_t r = 0; r < n; ++r)
      if (pretrained_rows_[first + r])
        std::copy(v.begin() + (first + r) * dim, v.begin() + (first + r + 1) * dim, w.begin() + r * dim);
    table->set_data(Tensor::from_vector(w, table->shape(), table->device()));
    first += n;
  }
}

std::pair<Tensor, Tensor> Embedding::split_ids(const Tensor& ids, bool allow_no_row) const {
  if (!tail.defined()) return {ids, Tensor()};
  const std::int64_t trained = weight.size(0), num = num_embeddings();
  const Tensor host = ids.to(Device::cpu());
  std::vector<std::int64_t> all;
  if (host.dtype() == DType::I32) {
    const std::vector<std::int32_t> narrow = host.to_vector<std::int32_t>();
    all.assign(narrow.begin(), narrow.end());
  } else {
    check_dtype(host, DType::I64, "Embedding", "ids");
    all = host.to_vector<std::int64_t>();
  }
  bool any_tail = false;
  for (const std::int64_t id : all) {
    TOPO_CHECK((id >= 0 && id < num) || (allow_no_row && id == kNoRow), "Embedding: id {} out of range [0, {})", id,
               num);
    any_tail = any_tail || id >= trained;
  }
  if (!any_tail) return {ids, Tensor()};
  std::vector<std::int64_t> head_ids(all.size()), tail_ids(all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    head_ids[i] = all[i] < trained ? all[i] : kNoRow;  // kNoRow itself stays kNoRow in both
    tail_ids[i] = all[i] < trained ? kNoRow : all[i] - trained;
  }
  const auto m = static_cast<std::int64_t>(all.size());
  return {Tensor::from_vector(head_ids, {m}).to(ids.device()), Tensor::from_vector(tail_ids, {m}).to(ids.device())};
}

Var Embedding::forward(const Tensor& ids) const {
  // Two tables: an id reads weight below trained_rows and tail from there on; embedding_sum takes each row
  // from the one table whose id is not kNoRow. A batch of training ids never reaches the tail (one look-up).
  const auto [head_ids, tail_ids] = split_ids(ids);
  if (!tail_ids.defined()) return embedding(weight, ids);
  const Var rows = embedding_sum({weight, tail}, {head_ids, tail_ids});
  Shape shape = ids.shape();
  shape.push_back(weight.size(1));
  return reshape(rows, shape);
}

// ---- LayerNorm

LayerNorm::LayerNorm(std::int64_t dim, float eps, bool affine) : dim_(dim), eps_(eps) {
  TOPO_CHECK(dim > 0, "LayerNorm: dim must be positive, got {}", dim);
  TOPO_CHECK(eps > 0.f, "LayerNorm: eps must be positive, got {}", eps);
  if (affine) {
    weight = register_parameter("weight", {dim}, init::InitSpec::ones());
    bias = register_parameter("bias", {dim}, init::InitSpec::zeros());
  }
}

Var LayerNorm::forward(const Var& x) const {
  TOPO_CHECK(x.ndim() >= 1 && x.size(-1) == dim_, "LayerNorm: input {} does not end in dim = {}",
             shape_str(x.shape()), dim_);
  return layer_norm(x, weight, bias, eps_);
}

Var LayerNorm::forward_residual_relu(const Var& h, const Var& update) const {
  TOPO_CHECK(h.ndim() >= 1 && h.size(-1) == dim_ && update.shape() == h.shape(),
             "LayerNorm: residual {} and update {} must be alike and end in dim = {}", shape_str(h.shape()),
             shape_str(update.shape()), dim_);
  return residual_relu_layer_norm(h, update, weight, bias, eps_);
}

// ---- Dropout

Dropout::Dropout(float p, Generator* gen) : p_(p), gen_(gen) {
  TOPO_CHECK(p >= 0.f && p < 1.f, "Dropout: p must be in [0, 1), got {}", p);
}

Var Dropout::forward(const Var& x) const {
  if (!is_training() || p_ == 0.f) return x;
  return dropout(x, p_, true, gen_ ? *gen_ : default_generator());
}

// ---- MLP

MLP::MLP(std::int64_t in, const std::vector<std::int64_t>& hidden, std::int64_t out, Activation activation,
         float dropout_p, Generator* gen)
    : act_(activation) {
  auto layers = register_module("layers", std::make_shared<ModuleList>());
  std::int64_t width = in;
  for (std::int64_t h : hidden) {
    linears_.push_back(layers->push_back(std::make_shared<Linear>(width, h)));
    // A dropout has no parameters; it is registered so train()/eval() reach it.
    dropouts_.push_back(register_module("dropout" + std::to_string(dropouts_.size()),
                                        std::make_shared<Dropout>(dropout_p, gen)));
    width = h;
  }
  linears_.push_back(layers->push_back(std::make_shared<Linear>(width, out)));
}

Var MLP::forward(const Var& x) const {
  Var h = x;
  for (std::size_t i = 0; i + 1 < linears_.size(); ++i) h = dropouts_[i]->forward(apply(act_, linears_[i]->forward(h)));
  return linears_.back()->forward(h);
}

}  // namespace topo::nn

#pragma once
// An independent reference for the Star-Transformer: the same equations (models.md §1) computed per
// sentence with dense matrices, per-head GEMMs and explicit -inf masks over the context [H; E; s], using
// the model's own parameters but neither its graph nor its sparse kernels. Slow by design; the tests hold
// the graph model to it (outputs and every parameter gradient). A test oracle, built only into the tests:
// product code keeps one dense attention, the Transformer baseline's encode_dense.
#include "models/star_transformer/star_transformer.hpp"

namespace topo::models {

Encoding star_dense_reference(const StarTransformer& model, const SequenceBatch& batch);

// Dense masked multi-head attention with the layer's weights: queries [n, d] over context [m, d] where
// mask [n, m] holds 0 (attend) or -inf (not). Returns [n, d].
nn::Var dense_masked_attention(const nn::GraphMultiHeadAttention& attention, const nn::Var& queries,
                               const nn::Var& context, const Tensor& mask);

}  // namespace topo::models

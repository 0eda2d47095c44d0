// GraphConv / GATConv / SAGEConv over the public message-passing API only (GraphFeatures + update_all, and
// GATConv's fused nn::gat_attention): no kernel of their own.
#include "nn/graph_layers.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "nn/message_passing.hpp"
#include "nn/sparse_ops.hpp"

namespace topo::nn {
namespace {

// degrees^power per node as a constant [N] (degrees clamped to >= 1, as DGL), read in the degrees' own dtype.
// The two powers the norms use avoid std::pow (at 100k nodes and four norms a step, pow was 5% of a GCN epoch),
// and the file builds with -fno-math-errno -fno-trapping-math so that the loop vectorizes (nn/CMakeLists.txt).
Tensor degree_scale(const Tensor& degrees, double power, Device device) {
  const std::int64_t n = degrees.numel();
  Tensor s = Tensor::empty({n}, DType::F32);
  float* out = s.data<float>();
  const Tensor host = degrees.to(Device::cpu());
  const auto fill = [&](const auto* deg) {
    if (power == -0.5) {
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(1.0 / std::sqrt(std::max(static_cast<double>(deg[i]), 1.0)));
    } else if (power == -1.0) {
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(1.0 / std::max(static_cast<double>(deg[i]), 1.0));
    } else {
      for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(std::pow(std::max(static_cast<double>(deg[i]), 1.0), power));
    }
  };
  if (host.dtype() == DType::I64) fill(host.data<std::int64_t>());
  else fill(host.data<std::int32_t>());
  return s.to(device);
}

// DGL's zero-in-degree error, naming the layer, the relation and the first such node.
void check_in_degrees(const HeteroGraph& g, int r, const char* layer) {
  const Tensor deg = g.in_degrees(r).to(Device::cpu());
  const auto first_zero = [&](const auto* d) { return static_cast<std::int64_t>(std::find(d, d + deg.numel(), 0) - d); };
  const std::int64_t v = deg.dtype() == DType::I64 ? first_zero(deg.data<std::int64_t>()) : first_zero(deg.data<std::int32_t>());
  TOPO_CHECK(v == deg.numel(),
             "{}: node {} of type '{}' has no in-edges along {} (its output would be the bias alone); add self "
             "loops (add_self_loop) or set allow_zero_in_degree",
             layer, v, g.canonical_etype(r).dst_type, g.canonical_etype(r).str());
}

void check_features(const HeteroGraph& g, const std::string& ntype, const Var& x, std::int64_t in, const char* layer,
                    const char* which) {
  TOPO_CHECK(x.defined() && x.ndim() == 2 && x.size(0) == g.num_nodes(ntype) && x.size(1) == in,
             "{}: {} features must be [num_nodes('{}') = {}, {}], got {}", layer, which, ntype, g.num_nodes(ntype), in,
             x.defined() ? shape_str(x.shape()) : std::string("an undefined Var"));
}

}  // namespace

GraphNorm parse_graph_norm(const std::string& name) {
  if (name == "none") return GraphNorm::None;
  if (name == "both") return GraphNorm::Both;
  if (name == "left") return GraphNorm::Left;
  if (name == "right") return GraphNorm::Right;
  fail("unknown GraphConv norm '{}': expected none, both, left or right", name);
}

SageAggregator parse_sage_aggregator(const std::string& name) {
  if (name == "mean") return SageAggregator::Mean;
  if (name == "pool") return SageAggregator::Pool;
  fail("unknown SAGEConv aggregator '{}': expected mean or pool", name);
}

// ---- GraphConv

GraphConv::GraphConv(std::int64_t in, std::int64_t out, const GraphConvOptions& options)
    : in_(in), out_(out), opt_(options) {
  TOPO_CHECK(in > 0 && out > 0, "GraphConv: sizes must be positive, got {} -> {}", in, out);
  TOPO_CHECK(opt_.weight || in == out, "GraphConv: without a weight the output width is the input's ({} != {})", in, out);
  if (opt_.weight) weight = register_parameter("weight", {in, out}, init::InitSpec::xavier_uniform());
  if (opt_.bias) bias = register_parameter("bias", {out}, init::InitSpec::zeros());
}

Var GraphConv::forward(const HeteroGraph& g, const std::string& etype, const Var& x_src, const Var& edge_weight) const {
  const int r = g.relation_id(etype);
  const CanonicalEType& ce = g.canonical_etype(r);
  check_features(g, ce.src_type, x_src, in_, "GraphConv", "source");
  if (!opt_.allow_zero_in_degree) check_in_degrees(g, r, "GraphConv");
  const GraphNorm norm = opt_.norm;
  const bool weight_first = opt_.weight && in_ > out_;  // multiply on the narrower side (as DGL)
  // The source norm scales rows, so it commutes with the weight: (D X) W = D (X W). Applied after the
  // weight it scales [N, out] instead of [N, in], and the product keeps the caller's X for its backward
  // rather than a scaled copy ([1M, 128] floats: 0.5 GiB that DGL's order holds).
  // The scales, bias and activation are fused passes (scale_bias_act), which keep nothing of their input.
  Var h = weight_first ? matmul(x_src, weight) : x_src;
  if (norm == GraphNorm::Left || norm == GraphNorm::Both)
    h = scale_bias_act(h, degree_scale(g.out_degrees(r), norm == GraphNorm::Left ? -1.0 : -0.5, x_src.device()), Var(),
                       EpilogueAct::Identity);
  GraphFeatures f(g);
  f.set_ndata(ce.src_type, "h", h);
  MessageFn message = fn::copy_u("h", "m");
  if (edge_weight.defined()) {
    TOPO_CHECK(edge_weight.numel() == g.num_edges(r) && edge_weight.size(0) == g.num_edges(r),
               "GraphConv: edge weights must be [num_edges = {}] or [{}, 1], got {}", g.num_edges(r), g.num_edges(r),
               shape_str(edge_weight.shape()));
    f.set_edata(etype, "w", reshape(edge_weight, {g.num_edges(r), 1}));
    message = fn::u_mul_e("h", "w", "m");
  }
  Var out = update_all(f, etype, message, fn::sum("m", "h"));
  if (opt_.weight && !weight_first) out = matmul(out, weight);
  Tensor dst_scale;
  if (norm == GraphNorm::Right || norm == GraphNorm::Both)
    dst_scale = degree_scale(g.in_degrees(r), norm == GraphNorm::Right ? -1.0 : -0.5, x_src.device());
  return scale_bias_apply(opt_.activation, out, dst_scale, bias);
}

// ---- GATConv

GATConv::GATConv(std::int64_t in, std::int64_t out, std::int64_t heads, const GATConvOptions& options, Generator* gen)
    : in_(in), out_(out), heads_(heads), opt_(options), gen_(gen) {
  TOPO_CHECK(in > 0 && out > 0 && heads > 0, "GATConv: sizes must be positive, got in {}, out {}, heads {}", in, out,
             heads);
  fc = register_module("fc", std::make_shared<Linear>(in, heads * out, false));
  const float gain = std::sqrt(2.f);  // DGL's calculate_gain('relu')
  attn_l = register_parameter("attn_l", {1, heads, out}, init::InitSpec::xavier_normal(gain));
  attn_r = register_parameter("attn_r", {1, heads, out}, init::InitSpec::xavier_normal(gain));
  if (opt_.residual && in != heads * out) res_fc = register_module("res_fc", std::make_shared<Linear>(in, heads * out, false));
  if (opt_.bias) bias = register_parameter("bias", {heads * out}, init::InitSpec::zeros());
}

Var GATConv::forward(const HeteroGraph& g, const std::string& etype, const Var& x_src, const Var& x_dst) const {
  const int r = g.relation_id(etype);
  const CanonicalEType& ce = g.canonical_etype(r);
  check_features(g, ce.src_type, x_src, in_, "GATConv", "source");
  check_features(g, ce.dst_type, x_dst, in_, "GATConv", "destination");
  if (!opt_.allow_zero_in_degree) check_in_degrees(g, r, "GATConv");
  Generator& gen = gen_ ? *gen_ : default_generator();
  const bool shared = x_src.same(x_dst);  // a homogeneous relation: one dropout mask, one projection
  const std::int64_t ns = x_src.size(0), nd = x_dst.size(0);
  const Var h_src = dropout(x_src, opt_.feat_drop, is_training(), gen);
  const Var h_dst = shared ? h_src : dropout(x_dst, opt_.feat_drop, is_training(), gen);
  const Var z_src = reshape(fc->forward(h_src), {ns, heads_, out_});            // [Ns, H, F]
  const Var z_dst = shared ? z_src : reshape(fc->forward(h_dst), {nd, heads_, out_});
  // The attention as one fused op (nn::gat_attention): the composition (apply_edges u_add_v -> leaky_relu ->
  // edge_softmax -> dropout -> update_all u_mul_e + sum) gives the same output and masks but keeps [E, H] tensors
  // from forward to backward (tests/nn/test_graph_layers.cpp checks the two against each other).
  const Var el = sum(mul(z_src, attn_l), -1, true);  // [Ns, H, 1]
  const Var er = sum(mul(z_dst, attn_r), -1, true);  // [Nd, H, 1]
  Var out = gat_attention(relation_block(g, r), el, er, z_src, opt_.negative_slope, opt_.attn_drop, is_training(),
                          gen);  // [Nd, H, F]
  if (res_fc) out = add(out, reshape(res_fc->forward(h_dst), {nd, heads_, out_}));
  else if (opt_.residual) out = add(out, reshape(h_dst, {nd, heads_, out_}));
  return scale_bias_apply(opt_.activation, out, Tensor(), bias);
}

// ---- SAGEConv

SAGEConv::SAGEConv(std::int64_t in, std::int64_t out, SageAggregator aggregator, bool with_bias, Activation activation)
    : agg_(aggregator), act_(activation) {
  TOPO_CHECK(in > 0 && out > 0, "SAGEConv: sizes must be positive, got {} -> {}", in, out);
  if (agg_ == SageAggregator::Pool) fc_pool = register_module("fc_pool", std::make_shared<Linear>(in, in, true));
  fc_self = register_module("fc_self", std::make_shared<Linear>(in, out, false));
  fc_neigh = register_module("fc_neigh", std::make_shared<Linear>(in, out, false));
  if (with_bias) bias = register_parameter("bias", {out}, init::InitSpec::zeros());
}

Var SAGEConv::forward(const HeteroGraph& g, const std::string& etype, const Var& x_src, const Var& x_dst) const {
  const int r = g.relation_id(etype);
  const CanonicalEType& ce = g.canonical_etype(r);
  const std::int64_t in = fc_self->in_features();
  check_features(g, ce.src_type, x_src, in, "SAGEConv", "source");
  check_features(g, ce.dst_type, x_dst, in, "SAGEConv", "destination");
  GraphFeatures f(g);
  const bool pool = agg_ == SageAggregator::Pool;
  // Mean is linear and fc_neigh has no bias: mean(x) W = mean(x W). Project first when that narrows what the
  // messages carry (in > out, as DGL's lin_before_mp): a 128 -> 16 layer moves 8x fewer bytes per edge.
  const bool project_first = !pool && in > fc_neigh->out_features();
  // One input for both projections (a homogeneous relation): one product by [W_neigh; W_self], so the input is
  // read once, and a lazy one (nn::dropout of the features) is made slab by slab once forward and once back.
  // The mean of the first half and the second half added in one op (nn::sage_mean): no split copies forward and
  // no padded gradients back.
  if (project_first && x_src.same(x_dst)) {
    const Var both = linear(x_src, concat({fc_neigh->weight, fc_self->weight}, 0), Var());
    return scale_bias_apply(act_, sage_mean(gspmm_block(g, r, MessageOp::CopyU, SpmmReduce::Mean), both), Tensor(),
                            bias);
  }
  f.set_ndata(ce.src_type, "h", pool ? relu(fc_pool->forward(x_src)) : project_first ? fc_neigh->forward(x_src) : x_src);
  const Var neigh = update_all(f, etype, fn::copy_u("h", "m"), pool ? fn::max("m", "n") : fn::mean("m", "n"));
  const Var out = add(fc_self->forward(x_dst), project_first ? neigh : fc_neigh->forward(neigh));
  return scale_bias_apply(act_, out, Tensor(), bias);
}

}  // namespace topo::nn

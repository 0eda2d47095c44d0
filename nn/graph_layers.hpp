#pragma once
// DGL's GraphConv, GATConv and SAGEConv, written only with the public message-passing API (GraphFeatures,
// update_all, and the fused nn::gat_attention, itself equal to apply_edges + edge_softmax + update_all) and
// dense ops: the proof that a user outside the engine can write a graph layer over an arbitrary topology. Each
// runs over one relation `etype` of a HeteroGraph: x_src [num_nodes(src type), in], x_dst [num_nodes(dst type),
// in] (pass x_src twice on a homogeneous relation) -> [num_nodes(dst type), ...]. Multi-edges count once per
// edge, as in DGL.
//
// Zero in-degree: GraphConv and GATConv refuse a destination without in-edges (DGL's DGLError: its output
// would be only the bias), naming the first such node, unless allow_zero_in_degree is set, when such a
// node gets the empty sum, 0 (then the bias / residual). SAGEConv, like DGL's, gives 0 for the neighbour
// term of such a node. add_self_loop (graph/structure.hpp) is the usual fix.
#include <cstdint>
#include <memory>
#include <string>

#include "graph/heterograph.hpp"
#include "nn/layers.hpp"

namespace topo::nn {

// norm: None (sum), Both (D_in^-1/2 A D_out^-1/2, Kipf & Welling), Left (divide by the source's
// out-degree), Right (divide by the destination's in-degree: a mean). Degrees are the relation's edge
// counts clamped to >= 1, and stay unweighted when edge weights are given (as DGL).
enum class GraphNorm : std::uint8_t { None, Both, Left, Right };
GraphNorm parse_graph_norm(const std::string& name);  // "none", "both", "left", "right"

struct GraphConvOptions {
  GraphNorm norm = GraphNorm::Both;
  bool weight = true, bias = true;
  Activation activation = Activation::Identity;
  bool allow_zero_in_degree = false;
};

// out = act(norm_dst * sum_{u -> v, e} w_e * norm_src_u * x_u @ W + b). Parameters "weight" [in, out]
// (Xavier uniform, DGL's layout) and "bias" [out] (zeros). Without `weight`, out = in.
class GraphConv : public Module {
 public:
  GraphConv(std::int64_t in, std::int64_t out, const GraphConvOptions& options = {});
  // edge_weight: [num_edges(etype)] or [num_edges, 1], or undefined.
  Var forward(const HeteroGraph& g, const std::string& etype, const Var& x_src, const Var& edge_weight = {}) const;
  Var weight, bias;
  const GraphConvOptions& options() const { return opt_; }

 private:
  std::int64_t in_, out_;
  GraphConvOptions opt_;
};

struct GATConvOptions {
  float feat_drop = 0.f, attn_drop = 0.f, negative_slope = 0.2f;
  bool residual = false, bias = true;
  Activation activation = Activation::Identity;
  bool allow_zero_in_degree = false;
};

// Multi-head GAT (Velickovic et al. 2018) as DGL's GATConv: z = x @ W viewed [N, H, F]; per edge
// e_uv = LeakyReLU(a_l . z_u + a_r . z_v); alpha = edge_softmax(e) over v's in-edges, dropped out with
// attn_drop in training; out_v = sum_u alpha_uv z_u + residual(x_v) + b -> [N_dst, H, F]. The attention is one
// fused op (nn::gat_attention): nothing per edge is kept for the backward, which at 21M edges and 8 heads
// saves 0.63 GiB per [E, H] tensor the composition would keep. Residual: identity when in == H * F, else a
// Linear without bias ("res_fc"). Parameters: "fc" (Linear in -> H*F, no bias), "attn_l", "attn_r" [1, H, F],
// "bias" [H * F].
class GATConv : public Module {
 public:
  GATConv(std::int64_t in, std::int64_t out, std::int64_t heads, const GATConvOptions& options = {},
          Generator* gen = nullptr);
  Var forward(const HeteroGraph& g, const std::string& etype, const Var& x_src, const Var& x_dst) const;
  std::shared_ptr<Linear> fc, res_fc;  // res_fc null unless residual with in != H * F
  Var attn_l, attn_r, bias;
  std::int64_t heads() const { return heads_; }
  std::int64_t out_features() const { return out_; }

 private:
  std::int64_t in_, out_, heads_;
  GATConvOptions opt_;
  Generator* gen_;
};

enum class SageAggregator : std::uint8_t { Mean, Pool };
SageAggregator parse_sage_aggregator(const std::string& name);  // "mean", "pool"

// GraphSAGE (Hamilton et al. 2017) as DGL's SAGEConv: out_v = fc_self(x_v) + fc_neigh(h_N(v)) + b with
// h_N(v) the mean of x_u over v's in-edges (Mean) or the max of relu(fc_pool(x_u)) (Pool, "max-pool").
// Parameters: "fc_self", "fc_neigh" (Linear, no bias), "fc_pool" (Linear in -> in, Pool only), "bias".
// Mean with in > out projects before the messages (DGL's lin_before_mp): the same sums in another order.
class SAGEConv : public Module {
 public:
  SAGEConv(std::int64_t in, std::int64_t out, SageAggregator aggregator, bool bias = true,
           Activation activation = Activation::Identity);
  Var forward(const HeteroGraph& g, const std::string& etype, const Var& x_src, const Var& x_dst) const;
  std::shared_ptr<Linear> fc_self, fc_neigh, fc_pool;  // fc_pool null for Mean
  Var bias;

 private:
  SageAggregator agg_;
  Activation act_;
};

}  // namespace topo::nn

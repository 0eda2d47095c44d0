"""dgl.nn's graph transformer blocks (DGL 2.1's dgl.nn.pytorch.gt: names, parameters and equations, so its
state_dicts load): the encoders that turn graph structure into features or attention biases (DegreeEncoder,
SpatialEncoder, SpatialEncoder3d, PathEncoder, LapPosEncoder) and the dense attention layers they feed
(BiasedMHA, GraphormerLayer, EGTLayer). As DGL's, these take padded batches, not graphs: node features
[B, N, D] (N the batch's largest graph), attention biases [B, N, N, H] and masks [B, N, N] (True: masked);
the distances and paths come from topograph.shortest_dist, the degrees from g.in_degrees / g.out_degrees,
the eigenpairs from topograph.lap_pe. Plain torch: attention over every pair of a padded graph is dense by
their design (Graphormer's biases are per pair); the sparse alternatives are GraphMultiHeadAttention and
topograph.sparse. Checked against DGL 2.1 with the same weights (tests/test_graph_transformer.py)."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .._base import DGLRuntimeError


class DegreeEncoder(torch.nn.Module):
    """Degree embeddings (Graphormer's centrality encoding): degrees [B, N] ('in' / 'out') or [2, B, N]
    ('both': in and out, one table each, summed), clamped to [0, max_degree]; row 0 of each table is padding
    (zero, no gradient) -> [B, N, embedding_dim]."""

    def __init__(self, max_degree: int, embedding_dim: int, direction: str = "both"):
        super().__init__()
        if direction not in ("in", "out", "both"):
            raise ValueError(f"DegreeEncoder: direction must be 'in', 'out' or 'both', got {direction!r}")
        self.direction, self.max_degree = direction, max_degree
        if direction == "both":
            self.encoder1 = torch.nn.Embedding(max_degree + 1, embedding_dim, padding_idx=0)
            self.encoder2 = torch.nn.Embedding(max_degree + 1, embedding_dim, padding_idx=0)
        else:
            self.encoder = torch.nn.Embedding(max_degree + 1, embedding_dim, padding_idx=0)

    def forward(self, degrees: torch.Tensor) -> torch.Tensor:
        degrees = torch.clamp(degrees, min=0, max=self.max_degree)
        if self.direction == "both":
            if degrees.dim() != 3 or degrees.shape[0] != 2:
                raise ValueError(f"DegreeEncoder('both'): degrees must be [2, B, N], got {tuple(degrees.shape)}")
            return self.encoder1(degrees[0]) + self.encoder2(degrees[1])
        if degrees.dim() != 2:
            raise ValueError(f"DegreeEncoder({self.direction!r}): degrees must be [B, N], got {tuple(degrees.shape)}")
        return self.encoder(degrees)


class SpatialEncoder(torch.nn.Module):
    """A learned bias per head for each shortest-path distance: dist [B, N, N] (-1 unreachable or padding, the
    padding row; distances past max_dist share its row) -> [B, N, N, num_heads]."""

    def __init__(self, max_dist: int, num_heads: int = 1):
        super().__init__()
        self.max_dist, self.num_heads = max_dist, num_heads
        self.embedding_table = torch.nn.Embedding(max_dist + 2, num_heads, padding_idx=0)

    def forward(self, dist: torch.Tensor) -> torch.Tensor:
        return self.embedding_table(torch.clamp(dist, min=-1, max=self.max_dist) + 1)


def _check_padded(what: str, name: str, x, dims: int, layout: str, last=None) -> None:
    """x [B, N, ...] of `dims` dimensions (and last size `last`): a DGLRuntimeError naming the argument and its
    layout otherwise, before an unpacking or broadcast error deep in the layer (DGL 2.1's layers let torch raise
    that RuntimeError)."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{what}: {name} must be a tensor {layout}, got {type(x).__name__}")
    if x.dim() != dims or (last is not None and x.shape[-1] != last):
        raise DGLRuntimeError(f"{what}: {name} must be {layout}, got {tuple(x.shape)}")


def _check_broadcasts(what: str, name: str, x, shape, layout: str) -> None:
    """An optional bias or mask that must broadcast to `shape` (else torch's RuntimeError there, as in DGL 2.1)."""
    if x is None:
        return
    try:
        ok = torch.broadcast_shapes(tuple(x.shape), shape) == shape
    except RuntimeError:
        ok = False
    if not ok:
        raise DGLRuntimeError(f"{what}: {name} must be {layout} = {list(shape)} (or broadcast to it), got "
                         f"{tuple(x.shape)}")


def _gaussian(x: torch.Tensor, mean: torch.Tensor, std: torch.Tensor) -> torch.Tensor:
    return torch.exp(-0.5 * ((x - mean) / std) ** 2) / (math.sqrt(2 * math.pi) * std)


class SpatialEncoder3d(torch.nn.Module):
    """3-D distances through Gaussian kernels (Graphormer's 3-D variant): coord [B, N, 3] (node_type [B, N]
    optional, its per-pair affine gamma, beta) -> [B, N, N, num_heads]."""

    def __init__(self, num_kernels: int, num_heads: int = 1, max_node_type: int = 100):
        super().__init__()
        self.num_kernels, self.num_heads, self.max_node_type = num_kernels, num_heads, max_node_type
        self.means = torch.nn.Parameter(torch.empty(num_kernels))
        self.stds = torch.nn.Parameter(torch.empty(num_kernels))
        self.linear_layer_1 = torch.nn.Linear(num_kernels, num_kernels)
        self.linear_layer_2 = torch.nn.Linear(num_kernels, num_heads)
        self.gamma = torch.nn.Embedding(2 * max_node_type + 3, 1, padding_idx=0)
        self.beta = torch.nn.Embedding(2 * max_node_type + 3, 1, padding_idx=0)
        torch.nn.init.uniform_(self.means, 0, 3)
        torch.nn.init.uniform_(self.stds, 0, 3)
        torch.nn.init.constant_(self.gamma.weight, 1)
        torch.nn.init.constant_(self.beta.weight, 0)

    def forward(self, coord: torch.Tensor, node_type=None) -> torch.Tensor:
        bsz, n = coord.shape[:2]
        dist = torch.cdist(coord, coord, p=2.0)
        if node_type is None:
            pair_type = torch.zeros(bsz, n, n, 2, dtype=torch.int64, device=coord.device)
        else:  # (source's type, destination's type) index disjoint halves of the tables
            pair_type = torch.stack([node_type.unsqueeze(-1).expand(bsz, n, n) + 2,
                                     node_type.unsqueeze(1).expand(bsz, n, n) + self.max_node_type + 3], dim=-1)
        scaled = self.gamma(pair_type).sum(-2) * dist.unsqueeze(-1) + self.beta(pair_type).sum(-2)
        kernels = _gaussian(scaled.expand(-1, -1, -1, self.num_kernels), self.means, self.stds.abs() + 0.01)
        return self.linear_layer_2(F.gelu(self.linear_layer_1(kernels)))


class PathEncoder(torch.nn.Module):
    """Graphormer's edge encoding: the mean over a shortest path's first max_len edges of (edge feature .
    a learned vector per position and head): dist [B, N, N], path_data [B, N, N, max_len, feat_dim] (the
    path's edge features, zeros past its end) -> [B, N, N, num_heads]."""

    def __init__(self, max_len: int, feat_dim: int, num_heads: int = 1):
        super().__init__()
        self.max_len, self.feat_dim, self.num_heads = max_len, feat_dim, num_heads
        self.embedding_table = torch.nn.Embedding(max_len * num_heads, feat_dim)

    def forward(self, dist: torch.Tensor, path_data: torch.Tensor) -> torch.Tensor:
        length = torch.clamp(dist, min=1, max=self.max_len).unsqueeze(-1)  # [B, N, N, 1]
        table = self.embedding_table.weight.reshape(self.max_len, self.num_heads, -1)
        return torch.einsum("bxyld,lhd->bxyh", path_data, table) / length


class LapPosEncoder(torch.nn.Module):
    """Learned Laplacian positional encoding (SAN's): each (eigenvector entry, eigenvalue) pair [N, k, 2]
    through Linear(2, dim), then a Transformer over the k pairs ('Transformer') or an MLP ('DeepSet'), NaN
    pairs (padding) masked and zeroed, summed over k, optionally a post-MLP: eigvals [N, k], eigvecs [N, k] ->
    [N, dim]. Submodule names as DGL's."""

    def __init__(self, model_type: str, num_layer: int, k: int, dim: int, n_head: int = 1, batch_norm: bool = False,
                 num_post_layer: int = 0):
        super().__init__()
        if model_type not in ("Transformer", "DeepSet"):
            raise ValueError(f"LapPosEncoder: model_type must be 'Transformer' or 'DeepSet', got {model_type!r}")
        self.model_type = model_type
        self.linear = torch.nn.Linear(2, dim)
        if model_type == "Transformer":
            layer = torch.nn.TransformerEncoderLayer(d_model=dim, nhead=n_head, batch_first=True)
            self.pe_encoder = torch.nn.TransformerEncoder(layer, num_layers=num_layer)
        elif num_layer == 1:
            self.pe_encoder = torch.nn.Sequential(torch.nn.ReLU())
        else:
            self.linear = torch.nn.Linear(2, 2 * dim)
            self.pe_encoder = torch.nn.Sequential(*_mlp(2 * dim, 2 * dim, dim, num_layer - 1, leading_relu=True))
        self.raw_norm = torch.nn.BatchNorm1d(k) if batch_norm else None
        if num_post_layer == 1:
            self.post_mlp = torch.nn.Sequential(torch.nn.Linear(dim, dim), torch.nn.ReLU())
        elif num_post_layer > 1:
            self.post_mlp = torch.nn.Sequential(*_mlp(dim, 2 * dim, dim, num_post_layer, leading_relu=False))
        else:
            self.post_mlp = None

    def forward(self, eigvals: torch.Tensor, eigvecs: torch.Tensor) -> torch.Tensor:
        # [N, k, 2] in the layer's dtype (DGL's .float(): the same for a float32 layer; .double() works too)
        pairs = torch.stack([eigvecs, eigvals], dim=2).to(self.linear.weight.dtype)
        empty = torch.isnan(pairs)
        pairs = pairs.masked_fill(empty, 0)
        if self.raw_norm is not None:
            pairs = self.raw_norm(pairs)
        enc = self.linear(pairs)
        if self.model_type == "Transformer":
            enc = self.pe_encoder(src=enc, src_key_padding_mask=empty[:, :, 1])
        else:
            enc = self.pe_encoder(enc)
        enc = enc.masked_fill(empty[:, :, 1:2], 0).sum(1)
        return self.post_mlp(enc) if self.post_mlp is not None else enc


def _mlp(d_in: int, d_hidden: int, d_out: int, linears: int, leading_relu: bool) -> list:
    """[ReLU,] Linear(d_in, d_hidden), ReLU, (Linear(d_hidden, d_hidden), ReLU) ..., Linear(., d_out), ReLU:
    `linears` Linears in all, as LapPosEncoder's DeepSet and post-MLP stacks are laid out (their indices in
    the Sequential are DGL's state_dict keys)."""
    layers = [torch.nn.ReLU()] if leading_relu else []
    width = d_in
    for _ in range(linears - 1):
        layers += [torch.nn.Linear(width, d_hidden), torch.nn.ReLU()]
        width = d_hidden
    return layers + [torch.nn.Linear(width, d_out), torch.nn.ReLU()]


class BiasedMHA(torch.nn.Module):
    """Dense multi-head self-attention with a per-pair bias: ndata [B, N, D], attn_bias [B, N, N, H] added to
    (attn_bias_type 'add') or multiplied into ('mul') the scaled scores, attn_mask [B, N, N] (True: -inf, so a
    fully masked row gives NaN, as DGL's) -> [B, N, D]. Xavier-uniform projections (gain 2^-1/2 for q, k, v),
    the output bias 0, attention dropout attn_drop."""

    def __init__(self, feat_size: int, num_heads: int, bias: bool = True, attn_bias_type: str = "add",
                 attn_drop: float = 0.1):
        super().__init__()
        if feat_size % num_heads:
            raise ValueError(f"BiasedMHA: feat_size {feat_size} must be divisible by num_heads {num_heads}")
        if attn_bias_type not in ("add", "mul"):
            raise ValueError(f"BiasedMHA: attn_bias_type must be 'add' or 'mul', got {attn_bias_type!r}")
        self.feat_size, self.num_heads, self.attn_bias_type = feat_size, num_heads, attn_bias_type
        self.head_dim = feat_size // num_heads
        self.scaling = self.head_dim ** -0.5
        self.q_proj = torch.nn.Linear(feat_size, feat_size, bias=bias)
        self.k_proj = torch.nn.Linear(feat_size, feat_size, bias=bias)
        self.v_proj = torch.nn.Linear(feat_size, feat_size, bias=bias)
        self.out_proj = torch.nn.Linear(feat_size, feat_size, bias=bias)
        self.dropout = torch.nn.Dropout(p=attn_drop)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for proj in (self.q_proj, self.k_proj, self.v_proj):
            torch.nn.init.xavier_uniform_(proj.weight, gain=2 ** -0.5)
        torch.nn.init.xavier_uniform_(self.out_proj.weight)
        if self.out_proj.bias is not None:
            torch.nn.init.constant_(self.out_proj.bias, 0.0)

    def forward(self, ndata: torch.Tensor, attn_bias=None, attn_mask=None) -> torch.Tensor:
        _check_padded("BiasedMHA", "ndata", ndata, 3, f"[B, N, {self.feat_size}]", self.feat_size)
        bsz, n, _ = ndata.shape
        _check_broadcasts("BiasedMHA", "attn_bias", attn_bias, (bsz, n, n, self.num_heads), "[B, N, N, num_heads]")
        _check_broadcasts("BiasedMHA", "attn_mask", attn_mask, (bsz, n, n), "[B, N, N]")
        heads = lambda x: x.view(bsz, n, self.num_heads, self.head_dim)  # noqa: E731
        q, k, v = heads(self.q_proj(ndata) * self.scaling), heads(self.k_proj(ndata)), heads(self.v_proj(ndata))
        scores = torch.einsum("bxhd,byhd->bxyh", q, k)  # [B, N, N, H]
        if attn_bias is not None:
            scores = scores + attn_bias if self.attn_bias_type == "add" else scores * attn_bias
        if attn_mask is not None:
            scores = scores.masked_fill(attn_mask.to(torch.bool).unsqueeze(-1), float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=2))
        return self.out_proj(torch.einsum("bxyh,byhd->bxhd", weights, v).reshape(bsz, n, self.feat_size))


class GraphormerLayer(torch.nn.Module):
    """A Graphormer block: BiasedMHA then a feed-forward network, each with a residual and LayerNorm (after,
    or before with norm_first): nfeat [B, N, D] -> [B, N, D]."""

    def __init__(self, feat_size: int, hidden_size: int, num_heads: int, attn_bias_type: str = "add",
                 norm_first: bool = False, dropout: float = 0.1, attn_dropout: float = 0.1,
                 activation=torch.nn.ReLU()):
        super().__init__()
        self.norm_first = norm_first
        self.attn = BiasedMHA(feat_size=feat_size, num_heads=num_heads, attn_bias_type=attn_bias_type,
                              attn_drop=attn_dropout)
        self.ffn = torch.nn.Sequential(torch.nn.Linear(feat_size, hidden_size), activation,
                                       torch.nn.Dropout(p=dropout), torch.nn.Linear(hidden_size, feat_size),
                                       torch.nn.Dropout(p=dropout))
        self.dropout = torch.nn.Dropout(p=dropout)
        self.attn_layer_norm = torch.nn.LayerNorm(feat_size)
        self.ffn_layer_norm = torch.nn.LayerNorm(feat_size)

    def forward(self, nfeat: torch.Tensor, attn_bias=None, attn_mask=None) -> torch.Tensor:
        def block(x, f, norm):
            y = f(norm(x) if self.norm_first else x)
            return x + y if self.norm_first else norm(x + y)
        nfeat = block(nfeat, lambda x: self.dropout(self.attn(x, attn_bias, attn_mask)), self.attn_layer_norm)
        return block(nfeat, self.ffn, self.ffn_layer_norm)


class EGTLayer(torch.nn.Module):
    """The Edge-augmented Graph Transformer layer (Hussain et al.): node features nfeat [B, N, D] and pair
    ("edge") features efeat [B, N, N, De]; scores clamped to [-5, 5] plus an edge bias, softmax over the
    keys times sigmoid edge gates, values scaled by log(1 + the gates' sum) (1 for the first
    num_virtual_nodes), then residual feed-forwards for nodes and (edge_update) pairs; mask [B, N, N] is added
    to scores and gates (-inf to mask). Returns nfeat, or (nfeat, efeat) with edge_update."""

    def __init__(self, feat_size: int, edge_feat_size: int, num_heads: int, num_virtual_nodes: int,
                 dropout: float = 0, attn_dropout: float = 0, activation=torch.nn.ELU(), edge_update: bool = True):
        super().__init__()
        if feat_size % num_heads:
            raise ValueError(f"EGTLayer: feat_size {feat_size} must be divisible by num_heads {num_heads}")
        self.num_heads, self.num_virtual_nodes, self.edge_update = num_heads, num_virtual_nodes, edge_update
        self.dot_dim = feat_size // num_heads
        self.mha_ln_h, self.mha_ln_e = torch.nn.LayerNorm(feat_size), torch.nn.LayerNorm(edge_feat_size)
        self.edge_input = torch.nn.Linear(edge_feat_size, num_heads)
        self.qkv_proj = torch.nn.Linear(feat_size, feat_size * 3)
        self.gate = torch.nn.Linear(edge_feat_size, num_heads)
        self.attn_dropout = torch.nn.Dropout(attn_dropout)
        self.node_output = torch.nn.Linear(feat_size, feat_size)
        self.mha_dropout_h = torch.nn.Dropout(dropout)
        self.node_ffn = _egt_ffn(feat_size, activation, dropout)
        if edge_update:
            self.edge_output = torch.nn.Linear(num_heads, edge_feat_size)
            self.mha_dropout_e = torch.nn.Dropout(dropout)
            self.edge_ffn = _egt_ffn(edge_feat_size, activation, dropout)

    def forward(self, nfeat: torch.Tensor, efeat: torch.Tensor, mask=None):
        _check_padded("EGTLayer", "nfeat", nfeat, 3, f"[B, N, {self.mha_ln_h.normalized_shape[0]}]",
                      self.mha_ln_h.normalized_shape[0])
        bsz, n = nfeat.shape[:2]
        edge_dim = self.mha_ln_e.normalized_shape[0]
        _check_padded("EGTLayer", "efeat", efeat, 4, f"[B, N, N, {edge_dim}]", edge_dim)
        _check_broadcasts("EGTLayer", "efeat", efeat, (bsz, n, n, edge_dim), f"[B, N, N, {edge_dim}]")
        _check_broadcasts("EGTLayer", "mask", mask, (bsz, n, n), "[B, N, N]")
        qkv = self.qkv_proj(self.mha_ln_h(nfeat))
        e_ln = self.mha_ln_e(efeat)
        bsz, n, _ = qkv.shape
        # DGL's layout: the projection's output viewed [B, N, 3 * dot_dim, H], split into q, k, v along dim 2
        q, k, v = qkv.view(bsz, n, -1, self.num_heads).split(self.dot_dim, dim=2)
        scores = torch.einsum("bldh,bmdh->blmh", q, k).clamp(-5, 5) + self.edge_input(e_ln)  # [B, N, N, H]
        gates = self.gate(e_ln)
        masked = scores
        if mask is not None:  # the edge update reads the scores before the mask, as DGL's
            masked, gates = scores + mask.unsqueeze(-1), gates + mask.unsqueeze(-1)
        gates = torch.sigmoid(gates)
        weights = self.attn_dropout(torch.softmax(masked, dim=2) * gates)
        v_attn = torch.einsum("blmh,bmkh->blkh", weights, v)
        scale = torch.log1p(gates.sum(dim=2, keepdim=True))  # [B, N, 1, H]
        scale = torch.cat([torch.ones_like(scale[:, :self.num_virtual_nodes]), scale[:, self.num_virtual_nodes:]], 1)
        h = nfeat + self.mha_dropout_h(self.node_output((v_attn * scale).reshape(bsz, n, -1)))
        h = h + self.node_ffn(h)
        if not self.edge_update:
            return h
        e = efeat + self.mha_dropout_e(self.edge_output(scores))
        return h, e + self.edge_ffn(e)


def _egt_ffn(width: int, activation, dropout: float) -> torch.nn.Sequential:
    return torch.nn.Sequential(torch.nn.LayerNorm(width), torch.nn.Linear(width, width), activation,
                               torch.nn.Linear(width, width), torch.nn.Dropout(dropout))

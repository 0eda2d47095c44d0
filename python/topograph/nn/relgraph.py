"""dgl.nn.TypedLinear and dgl.nn.RelGraphConv (Schlichtkrull et al., R-GCN) for a graph whose edges carry a
relation id each (a homogeneous graph of a heterograph's relations, as topograph.to_homogeneous makes it:
edata[ETYPE]).

A message is the source's features times its edge's relation weight: TypedLinear groups the rows by type (one
matmul per type present, no [E, in, out] gather of weights), and the messages are summed at each destination
by one Topograph kernel (copy_e_sum)."""
from __future__ import annotations

import math
from typing import Optional

import torch

from .. import ops
from .._segment import rows_by_group
from .._base import DGLError


def _type_ids(types, count: int, num_types: int, what: str, device) -> torch.Tensor:
    """Per-row type ids (a tensor or a list) as int64 [count] on `device`; DGLError naming a bad one."""
    t = types if isinstance(types, torch.Tensor) else torch.as_tensor(types, dtype=torch.int64)
    if t.dtype.is_floating_point or t.dtype.is_complex or t.dtype == torch.bool:
        raise TypeError(f"{what}: type ids must be integers, got {t.dtype}")
    if tuple(t.shape) != (count,):
        raise DGLError(f"{what}: expected one type id per row ({count}), got shape {tuple(t.shape)}")
    bad = ((t < 0) | (t >= num_types)).nonzero().flatten()
    if bad.numel():
        i = int(bad[0])
        raise DGLError(f"{what}: type id {int(t[i])} at position {i} is not in [0, {num_types})")
    return t.to(device=device, dtype=torch.int64)


class TypedLinear(torch.nn.Module):
    """y_i = x_i W_{t_i}: a linear map per type, as dgl.nn.TypedLinear (no bias). regularizer None: W [T, in,
    out]; 'basis': W_t = sum_b coeff[t, b] V_b, V = W [num_bases, in, out], coeff [T, num_bases]; 'bdd': W_t block
    diagonal, num_bases blocks of [in / num_bases, out / num_bases], W [T, num_bases * (in / B) * (out / B)].
    Initialisation as DGL's: W uniform in +-1/sqrt(in) (+-1/sqrt(in / B) for bdd), coeff Xavier-uniform (ReLU
    gain)."""

    def __init__(self, in_size: int, out_size: int, num_types: int, regularizer: Optional[str] = None,
                 num_bases: Optional[int] = None):
        super().__init__()
        self.in_size, self.out_size, self.num_types, self.regularizer = in_size, out_size, num_types, regularizer
        if regularizer is None:
            self.W = torch.nn.Parameter(torch.empty(num_types, in_size, out_size))
        elif regularizer in ("basis", "bdd"):
            if num_bases is None:
                raise ValueError(f"TypedLinear: regularizer {regularizer!r} needs num_bases")
            self.num_bases = num_bases
            if regularizer == "basis":
                self.W = torch.nn.Parameter(torch.empty(num_bases, in_size, out_size))
                self.coeff = torch.nn.Parameter(torch.empty(num_types, num_bases))
            else:
                if in_size % num_bases or out_size % num_bases:
                    raise ValueError(f"TypedLinear: bdd needs in_size ({in_size}) and out_size ({out_size}) divisible "
                                     f"by num_bases ({num_bases})")
                self.submat_in, self.submat_out = in_size // num_bases, out_size // num_bases
                self.W = torch.nn.Parameter(torch.empty(num_types, num_bases * self.submat_in * self.submat_out))
        else:
            raise ValueError(f"TypedLinear: regularizer must be None, 'basis' or 'bdd', got {regularizer!r}")
        self.reset_parameters()

    def reset_parameters(self) -> None:
        with torch.no_grad():
            fan_in = self.submat_in if self.regularizer == "bdd" else self.in_size
            torch.nn.init.uniform_(self.W, -1 / math.sqrt(fan_in), 1 / math.sqrt(fan_in))
            if self.regularizer == "basis":
                torch.nn.init.xavier_uniform_(self.coeff, gain=torch.nn.init.calculate_gain("relu"))

    def get_weight(self) -> torch.Tensor:
        """Each type's weight: [T, in, out] (bdd: its blocks, [T, num_bases * (in / B) * (out / B)], as DGL's)."""
        if self.regularizer == "basis":
            return (self.coeff @ self.W.view(self.num_bases, -1)).view(self.num_types, self.in_size, self.out_size)
        return self.W

    def __repr__(self) -> str:  # DGL's text, which print(model) shows
        text = f"TypedLinear(in_size={self.in_size}, out_size={self.out_size}, num_types={self.num_types}"
        if self.regularizer is not None:
            text += f", regularizer={self.regularizer}, num_bases={self.num_bases}"
        return text + ")"

    def forward(self, x: torch.Tensor, x_type, sorted_by_type: bool = False) -> torch.Tensor:
        """x [N, in], x_type [N] type ids -> [N, out]. sorted_by_type is accepted for DGL's signature (the rows
        are grouped by type either way)."""
        if x.dim() != 2 or x.shape[1] != self.in_size:
            raise ValueError(f"TypedLinear: x must be [N, {self.in_size}], got {tuple(x.shape)}")
        types = _type_ids(x_type, x.shape[0], self.num_types, "TypedLinear", x.device)
        weight = self.get_weight()
        if self.regularizer == "bdd":  # [T, B, in / B, out / B]
            weight = weight.view(self.num_types, self.num_bases, self.submat_in, self.submat_out)
        if self.regularizer != "bdd":
            return rows_by_group(x, types, self.num_types, self.out_size, lambda t, rows: rows @ weight[t])
        # block b of the input -> block b of the output
        return rows_by_group(x, types, self.num_types, self.out_size, lambda t, rows: torch.einsum(
            "nbi,bio->nbo", rows.view(-1, self.num_bases, self.submat_in), weight[t]).reshape(-1, self.out_size))


class RelGraphConv(torch.nn.Module):
    """R-GCN (Schlichtkrull et al.), as dgl.nn.RelGraphConv: h_d = sum_{s -> d} norm_{s->d} h_s W_{r(s->d)}, then
    layer_norm (if set), + h_bias, + h_d W_loop (self_loop), activation, dropout; r(e) the edge's relation id
    (etypes [E]), W_r from a TypedLinear `linear_r` (regularizer None, 'basis' or 'bdd'; num_bases defaults to
    num_rels when a regularizer is named, as DGL's). h_bias zeros, loop_weight Xavier-uniform (ReLU gain).
    A destination without in-edges gets 0 from the sum. On a block, h_d is the first num_dst_nodes rows."""

    def __init__(self, in_feat: int, out_feat: int, num_rels: int, regularizer: Optional[str] = None,
                 num_bases: Optional[int] = None, bias: bool = True, activation=None, self_loop: bool = True,
                 dropout: float = 0.0, layer_norm: bool = False):
        super().__init__()
        if regularizer is not None and num_bases is None:
            num_bases = num_rels
        self.linear_r = TypedLinear(in_feat, out_feat, num_rels, regularizer, num_bases)
        self.num_rels, self.bias, self.activation = num_rels, bias, activation
        self.self_loop, self.layer_norm = self_loop, layer_norm
        if bias:
            self.h_bias = torch.nn.Parameter(torch.zeros(out_feat))
        if layer_norm:
            self.layer_norm_weight = torch.nn.LayerNorm(out_feat, elementwise_affine=True)
        if self_loop:
            self.loop_weight = torch.nn.Parameter(torch.empty(in_feat, out_feat))
            torch.nn.init.xavier_uniform_(self.loop_weight, gain=torch.nn.init.calculate_gain("relu"))
        self.dropout = torch.nn.Dropout(dropout)

    def forward(self, g, feat: torch.Tensor, etypes, norm: Optional[torch.Tensor] = None, *,
                presorted: bool = False) -> torch.Tensor:
        """feat [num_src, in]; etypes [E] relation ids (a tensor or a list); norm [E] or [E, 1] per-edge scale
        (e.g. 1 / in-degree) or None -> [num_dst, out]. presorted: accepted for DGL's signature."""
        num_edges = g.num_edges()
        if feat.dim() != 2 or feat.shape[0] != g.num_src_nodes():
            raise ValueError(f"RelGraphConv: feat must be [num_src_nodes ({g.num_src_nodes()}), in], got "
                             f"{tuple(feat.shape)}")
        types = _type_ids(etypes, num_edges, self.num_rels, "RelGraphConv: etypes", feat.device)
        src, _ = g.all_edges()
        messages = self.linear_r(feat.index_select(0, src.to(device=feat.device, dtype=torch.int64)), types)  # [E, out]
        if norm is None and len(g.canonical_etypes) == 1 and "norm" in g.edata:
            # DGL 2.1's message function scales by edges.data['norm'] whenever the graph carries it
            norm = g.edata["norm"]
        if norm is not None:
            if norm.dim() == 0 or norm.shape[0] != num_edges or norm.numel() != num_edges:
                raise ValueError(f"RelGraphConv: norm must be [E] or [E, 1] (E = {num_edges}), got {tuple(norm.shape)}")
            messages = messages * norm.reshape(num_edges, 1)
        h = ops.copy_e_sum(g, messages)  # [num_dst, out]
        if self.layer_norm:
            h = self.layer_norm_weight(h)
        if self.bias:
            h = h + self.h_bias
        if self.self_loop:
            h = h + feat[: g.num_dst_nodes()] @ self.loop_weight
        if self.activation is not None:
            h = self.activation(h)
        return self.dropout(h)

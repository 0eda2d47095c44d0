"""dgl.nn.PNAConv (Corso et al., principal neighbourhood aggregation; DGL 2.1's names, parameters and equations):
per tower, messages M([h_src, h_dst(, e)]) reduced by several aggregators (mean, sum, max, min, var, std, and
the 3rd-5th central moments), each scaled by the degree scalers (identity, amplification log(D + 1) / delta,
attenuation delta / log(D + 1)), then U, the graph-size norm, BatchNorm and dropout; towers mixed by a Linear +
LeakyReLU, with a residual when the widths agree. DGL reduces in degree buckets through a Python reducer; here
every aggregator is one of Topograph's gspmm reductions over all edges at once (moments from the per-edge
deviation from the destination's mean). A node without in-edges aggregates to 0, as DGL's."""
from __future__ import annotations

import torch

from .. import ops

_AGGREGATORS = ("mean", "sum", "max", "min", "std", "var", "moment3", "moment4", "moment5")
_SCALERS = ("identity", "amplification", "attenuation")


def _aggregate(g, msg: torch.Tensor, name: str) -> torch.Tensor:
    """[N_dst, d] of the messages [E, d] into each destination (0 without in-edges)."""
    if name in ("mean", "sum", "max", "min"):
        return ops.gspmm_zero_empty(g, "copy_rhs", name, None, msg)
    mean = ops.gspmm_zero_empty(g, "copy_rhs", "mean", None, msg)
    if name in ("var", "std"):
        var = torch.relu(ops.gspmm_zero_empty(g, "copy_rhs", "mean", None, msg * msg) - mean * mean)
        return var if name == "var" else torch.sqrt(var + 1e-30)
    n = int(name[-1])
    central = ops.gspmm_zero_empty(g, "copy_rhs", "mean", None, torch.pow(msg - ops.copy_v(g, mean), n))
    return torch.sign(central) * torch.pow(central.abs() + 1e-30, 1.0 / n)


class PNAConvTower(torch.nn.Module):
    """One tower: M Linear(2 in (+ edge_feat_size), in), U Linear((aggregators x scalers + 1) in, out), BatchNorm."""

    def __init__(self, in_size: int, out_size: int, aggregators, scalers, delta: float, dropout: float = 0.0,
                 edge_feat_size: int = 0):
        super().__init__()
        self.in_size, self.out_size, self.delta, self.edge_feat_size = in_size, out_size, delta, edge_feat_size
        self.aggregators, self.scalers = list(aggregators), list(scalers)
        self.M = torch.nn.Linear(2 * in_size + edge_feat_size, in_size)
        self.U = torch.nn.Linear((len(self.aggregators) * len(self.scalers) + 1) * in_size, out_size)
        self.dropout = torch.nn.Dropout(dropout)
        self.batchnorm = torch.nn.BatchNorm1d(out_size)

    def forward(self, graph, node_feat: torch.Tensor, edge_feat=None) -> torch.Tensor:
        msg = self.messages(graph, node_feat, edge_feat)
        return self.update(graph, node_feat, [_aggregate(graph, msg, a) for a in self.aggregators])

    def messages(self, graph, node_feat: torch.Tensor, edge_feat=None) -> torch.Tensor:
        """M([h_src, h_dst(, e)]) per edge: [E, in] (DGNConv's tower reduces them with more aggregators)."""
        parts = [ops.copy_u(graph, node_feat), ops.copy_v(graph, node_feat)]
        if self.edge_feat_size > 0:
            if edge_feat is None:
                raise ValueError(f"{type(self).__name__}: edge_feat_size > 0 needs edge_feat [E, edge_feat_size]")
            parts.append(edge_feat)
        return self.M(torch.cat(parts, dim=-1))  # [E, in]

    def update(self, graph, node_feat: torch.Tensor, aggregated) -> torch.Tensor:
        """The aggregates ([N, in] each, in self.aggregators' order) scaled, then U, size norm, BatchNorm."""
        h = torch.cat(aggregated, dim=1)
        degree = graph.in_degrees().to(h).unsqueeze(1)
        log_degree = torch.log(degree + 1)
        scaled = []
        for s in self.scalers:
            if s == "identity":
                scaled.append(h)
            elif s == "amplification":
                scaled.append(h * (log_degree / self.delta))
            else:  # attenuation; 0 where a node has no in-edge (its aggregate is 0 too)
                attenuation = torch.where(degree > 0, self.delta / log_degree.clamp(min=1e-30),
                                          torch.zeros_like(degree))
                scaled.append(h * attenuation)
        h = self.U(torch.cat([node_feat] + scaled, dim=-1))
        size_norm = torch.cat([torch.full((int(n), 1), 1.0 / int(n)) if n else torch.zeros(0, 1)
                               for n in graph.batch_num_nodes()]).sqrt().to(h)
        return self.dropout(self.batchnorm(h * size_norm))


class PNAConv(torch.nn.Module):
    """PNAConv(in_size, out_size, aggregators, scalers, delta, dropout=0.0, num_towers=1, edge_feat_size=0,
    residual=True): node_feat [N, in] split over num_towers towers, their outputs concatenated and mixed;
    forward(graph, node_feat, edge_feat=None) -> [N, out]. delta: the mean of log(degree + 1) over the training
    graphs, as the paper sets it."""
    _tower, _aggregators = PNAConvTower, _AGGREGATORS  # DGNConv (nn/conv_more.py) swaps both

    def __init__(self, in_size: int, out_size: int, aggregators, scalers, delta: float, dropout: float = 0.0,
                 num_towers: int = 1, edge_feat_size: int = 0, residual: bool = True):
        super().__init__()
        name = type(self).__name__
        unknown = [a for a in aggregators if a not in self._aggregators] + [s for s in scalers if s not in _SCALERS]
        if unknown:
            raise ValueError(f"{name}: unknown aggregators / scalers {unknown} (aggregators "
                             f"{list(self._aggregators)}, scalers {list(_SCALERS)})")
        if in_size % num_towers or out_size % num_towers:
            raise ValueError(f"{name}: in_size {in_size} and out_size {out_size} must divide by num_towers "
                             f"{num_towers}")
        self.in_size, self.out_size, self.edge_feat_size = in_size, out_size, edge_feat_size
        self.tower_in_size, self.tower_out_size = in_size // num_towers, out_size // num_towers
        self.residual = residual and in_size == out_size
        self.towers = torch.nn.ModuleList(
            self._tower(self.tower_in_size, self.tower_out_size, aggregators, scalers, delta, dropout=dropout,
                        edge_feat_size=edge_feat_size) for _ in range(num_towers))
        self.mixing_layer = torch.nn.Sequential(torch.nn.Linear(out_size, out_size), torch.nn.LeakyReLU())

    def forward(self, graph, node_feat: torch.Tensor, edge_feat=None) -> torch.Tensor:
        return self.mix(node_feat, [tower(graph, x, edge_feat) for tower, x in zip(self.towers, self.split(node_feat))])

    def split(self, node_feat: torch.Tensor):
        """node_feat [N, in] cut into the towers' [N, in / num_towers] column blocks."""
        return torch.split(node_feat, self.tower_in_size, dim=1)

    def mix(self, node_feat: torch.Tensor, towers_out) -> torch.Tensor:
        """The towers' outputs [N, out / num_towers] each concatenated, mixed (+ node_feat with the residual)."""
        h = self.mixing_layer(torch.cat(towers_out, dim=1))
        return h + node_feat if self.residual else h

"""dgl.nn.GNNExplainer and dgl.nn.HeteroGNNExplainer (Ying et al.; DGL 2.1's names, defaults and procedure):
learn a soft mask over the edges (sigmoid of a parameter per edge) and one over the feature columns that keep
the model's own prediction while as few edges and columns as possible stay on (an L1 and an entropy penalty on
each mask), with Adam for num_epochs steps. The model is called as model(graph=..., feat=..., eweight=...,
**kwargs) and must weight its messages by eweight (GraphConv(edge_weight=...), or u_mul_e), as DGL requires:
eweight is [E] for GNNExplainer, {canonical etype: [E_t]} for HeteroGNNExplainer. Masks start from torch's
generator in DGL's order (the same seed gives DGL's start, hence DGL's masks)."""
from __future__ import annotations

from collections.abc import Mapping
from math import sqrt

import torch

from .._graph import EID, NID
from .._mutation import khop_in_subgraph


class _MaskExplainer(torch.nn.Module):
    """What both explainers share: DGL's arguments, the regularised loss and the Adam loop over the masks."""

    def __init__(self, model, num_hops: int, lr: float = 0.01, num_epochs: int = 100, *, alpha1: float = 0.005,
                 alpha2: float = 1.0, beta1: float = 1.0, beta2: float = 0.1, log: bool = True):
        super().__init__()
        self.model, self.num_hops, self.lr, self.num_epochs = model, num_hops, lr, num_epochs
        self.alpha1, self.alpha2, self.beta1, self.beta2, self.log = alpha1, alpha2, beta1, beta2, log

    def _regularize(self, loss, feat_masks, edge_masks):
        """L1 and entropy of each mask (after the sigmoid), weighted alpha1, alpha2 (edges: the sum), beta1, beta2
        (features: the mean); edge masks first, as DGL's. An empty mask (a relation without edges) adds nothing
        (DGL's entropy mean of it is NaN, which makes its loss NaN but leaves the gradients alone)."""
        eps = 1e-15
        terms = ([(m, self.alpha1, self.alpha2, True) for m in edge_masks]
                 + [(m, self.beta1, self.beta2, False) for m in feat_masks])
        for mask, size_weight, entropy_weight, total in terms:
            if mask.numel() == 0:
                continue
            m = mask.sigmoid()
            loss = loss + size_weight * (m.sum() if total else m.mean())
            entropy = -m * torch.log(m + eps) - (1 - m) * torch.log(1 - m + eps)
            loss = loss + entropy_weight * entropy.mean()
        return loss

    def _fit(self, device, forward, init_masks, picked, description: str):
        """Adam on the masks so that the model keeps the classes it predicts at `picked` (a row selector).
        forward(feat_weights, edge_weights) -> logits [rows, C], the model with the sigmoids of the masks applied
        ((None, None): unmasked). init_masks() -> ({key: feature mask [1, D]}, {key: edge mask [E]}), drawn after
        the unmasked prediction, as DGL's. Returns the sigmoids: {key: [D]}, {key: [E]}."""
        self.model = self.model.to(device)
        self.model.eval()
        with torch.no_grad():
            target = forward(None, None).argmax(dim=-1)[picked]
        feat_masks, edge_masks = init_masks()
        optimizer = torch.optim.Adam([*feat_masks.values(), *edge_masks.values()], lr=self.lr)
        bar = _progress(self.num_epochs, description) if self.log else None
        for _ in range(self.num_epochs):
            optimizer.zero_grad()
            logits = forward({k: m.sigmoid() for k, m in feat_masks.items()},
                             {k: m.sigmoid() for k, m in edge_masks.items()})
            loss = -logits.log_softmax(dim=-1)[picked, target]
            self._regularize(loss, feat_masks.values(), edge_masks.values()).sum().backward()
            optimizer.step()
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.close()
        return ({k: m.detach().sigmoid().squeeze(0) for k, m in feat_masks.items()},
                {k: m.detach().sigmoid() for k, m in edge_masks.items()})


class GNNExplainer(_MaskExplainer):
    """explain_node(node_id, graph, feat, **kwargs) -> (the node's id in the subgraph, its num_hops in-subgraph,
    feature mask [D], edge mask [E_sub]); explain_graph(graph, feat, **kwargs) -> (feature mask [D], edge mask
    [E]) for a graph-level model (its first prediction). kwargs: the model's other arguments; tensors with a row
    per node or per edge of the graph are cut to the subgraph for explain_node, as DGL's. log: a progress bar
    when tqdm is installed."""

    def _explain(self, graph, feat, picked, description, kwargs):
        def init_masks():  # DGL's draws: the feature mask, then the edge mask
            num_nodes, feat_size = feat.shape
            feat_mask = torch.nn.Parameter(torch.randn(1, feat_size, device=feat.device) * 0.1)
            std = torch.nn.init.calculate_gain("relu") * sqrt(2.0 / (2 * num_nodes))
            return {0: feat_mask}, {0: torch.nn.Parameter(torch.randn(graph.num_edges(), device=feat.device) * std)}

        def forward(feat_weights, edge_weights):
            if feat_weights is None:
                return self.model(graph=graph, feat=feat, **kwargs)
            return self.model(graph=graph, feat=feat * feat_weights[0], eweight=edge_weights[0], **kwargs)

        feat_mask, edge_mask = self._fit(graph.device, forward, init_masks, picked, description)
        return feat_mask[0], edge_mask[0]

    def explain_node(self, node_id, graph, feat: torch.Tensor, **kwargs):
        sg, inverse = khop_in_subgraph(graph, node_id, self.num_hops)
        nodes, edges = sg.ndata[NID].long(), sg.edata[EID].long()
        n, e = graph.num_nodes(), graph.num_edges()
        for key, item in kwargs.items():  # per-node and per-edge tensors cut to the subgraph, as DGL's
            if torch.is_tensor(item) and item.shape[0] == n:
                kwargs[key] = item[nodes]
            elif torch.is_tensor(item) and item.shape[0] == e:
                kwargs[key] = item[edges]
        feat_mask, edge_mask = self._explain(sg, feat[nodes], inverse, f"Explain node {node_id}", kwargs)
        return inverse, sg, feat_mask, edge_mask

    def explain_graph(self, graph, feat: torch.Tensor, **kwargs):
        return self._explain(graph, feat, 0, "Explain graph", kwargs)


class HeteroGNNExplainer(_MaskExplainer):
    """GNNExplainer for a heterograph, as DGL 2.1's: a feature mask per node type in feat and an edge mask per
    canonical edge type. The model takes feat {ntype: [N_t, D_t]} and eweight {canonical etype: [E_t]}.
    explain_node(ntype, node_id, graph, feat, **kwargs) -> (the node's id in the subgraph [1] (a tensor, as
    DGL's), its num_hops in-subgraph over all relations, {ntype: feature mask [D_t]}, {canonical etype: edge
    mask [E_t of the subgraph]}); the model must return {ntype: logits [N_t, C]}. explain_graph(graph, feat,
    **kwargs) -> ({ntype: [D_t]}, {canonical etype: [E_t]}) for a graph-level model returning [B, C] (its first
    prediction is explained). kwargs go to the model unchanged (DGL's HeteroGNNExplainer does not cut them to
    the subgraph, unlike GNNExplainer). Masks lie in (0, 1); higher is more important. Where DGL 2.1 fails,
    ours does not: explain_node on a graph of one node type (DGL's raises AttributeError), several node ids
    (DGL's backward() raises on a non-scalar loss; ours sums it), a feature size of 1 (DGL's mask is 0-d, ours
    [1], as documented; GNNExplainer likewise)."""

    def _check_feat(self, graph, feat):
        if not isinstance(feat, Mapping):
            raise TypeError(f"HeteroGNNExplainer: feat must be a dict {{ntype: [N_t, D_t] tensor}}, got "
                            f"{type(feat).__name__}")
        for ntype, item in feat.items():
            if ntype not in graph.ntypes:
                raise ValueError(f"HeteroGNNExplainer: feat has node type {ntype!r}, not one of the graph's "
                                 f"{graph.ntypes}")
            if not torch.is_tensor(item) or item.dim() != 2 or item.shape[0] != graph.num_nodes(ntype):
                shape = tuple(item.shape) if torch.is_tensor(item) else type(item).__name__
                raise ValueError(f"HeteroGNNExplainer: feat[{ntype!r}] must be [{graph.num_nodes(ntype)}, D] (a row "
                                 f"per {ntype!r} node), got {shape}")

    def _explain(self, graph, feat, output, picked, description, kwargs):
        """feat's masks in feat's order, then the edge masks in graph.canonical_etypes' order: DGL's draws."""
        def init_masks():
            feat_masks = {t: torch.nn.Parameter(torch.randn(1, f.shape[1], device=graph.device) * 0.1)
                          for t, f in feat.items()}
            edge_masks = {}
            for c in graph.canonical_etypes:
                std, ends = torch.nn.init.calculate_gain("relu"), graph.num_nodes(c[0]) + graph.num_nodes(c[2])
                if ends > 0:
                    std *= sqrt(2.0 / ends)
                edge_masks[c] = torch.nn.Parameter(torch.randn(graph.num_edges(c), device=graph.device) * std)
            return feat_masks, edge_masks

        def forward(feat_weights, edge_weights):
            if feat_weights is None:
                return output(self.model(graph=graph, feat=feat, **kwargs))
            masked = {t: f * feat_weights[t] for t, f in feat.items()}
            return output(self.model(graph=graph, feat=masked, eweight=edge_weights, **kwargs))

        return self._fit(graph.device, forward, init_masks, picked, description)

    def explain_node(self, ntype, node_id, graph, feat, **kwargs):
        if ntype not in graph.ntypes:
            raise ValueError(f"HeteroGNNExplainer.explain_node: ntype {ntype!r} is not one of the graph's "
                             f"{graph.ntypes}")
        self._check_feat(graph, feat)
        ids = torch.as_tensor(node_id).reshape(-1)
        if ids.numel() == 0 or ids.is_floating_point() or not bool(((ids >= 0) & (ids < graph.num_nodes(ntype))).all()):
            raise ValueError(f"HeteroGNNExplainer.explain_node: node_id {node_id} must be ids of {ntype!r} nodes "
                             f"in [0, {graph.num_nodes(ntype)})")
        sg, inverse = khop_in_subgraph(graph, {ntype: node_id}, self.num_hops)
        inverse = inverse[ntype]
        # per node type, not sg.ndata[NID]: DGL's reads the latter as a dict, which it is not for a graph of one
        # node type (and several relations), so DGL 2.1 raises there.
        sg_feat = {t: feat[t][sg.nodes[t].data[NID].long()] for t in sg.ntypes if t in feat}

        def output(out):
            if not isinstance(out, Mapping) or ntype not in out:
                raise TypeError(f"HeteroGNNExplainer.explain_node: the model must return {{ntype: logits}} with "
                                f"ntype {ntype!r}, got {type(out).__name__}")
            return out[ntype]

        feat_mask, edge_mask = self._explain(sg, sg_feat, output, inverse,
                                             f"Explain node {node_id} with type {ntype}", kwargs)
        return inverse, sg, feat_mask, edge_mask

    def explain_graph(self, graph, feat, **kwargs):
        self._check_feat(graph, feat)
        return self._explain(graph, feat, lambda out: out, 0, "Explain graph", kwargs)


def _progress(total: int, description: str):
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    bar = tqdm(total=total)
    bar.set_description(description)
    return bar

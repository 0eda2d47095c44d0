"""dgl.nn.GNNExplainer (Ying et al.; DGL 2.1's names, defaults and procedure) for a homogeneous graph: learns
a soft mask over the edges (sigmoid of a parameter per edge) and one over the feature columns that keep the
model's own prediction while as few edges and columns as possible stay on (an L1 and an entropy penalty on each
mask), with Adam for num_epochs steps. The model is called as model(graph=..., feat=..., eweight=..., **kwargs)
and must weight its messages by eweight [E] (GraphConv(edge_weight=...), or u_mul_e), as DGL requires. Masks
start from torch's generator (the same seed gives DGL's start)."""
from __future__ import annotations

from math import sqrt

import torch

from .._graph import EID, NID
from .._mutation import khop_in_subgraph


class GNNExplainer(torch.nn.Module):
    """explain_node(node_id, graph, feat, **kwargs) -> (the node's id in the subgraph, its num_hops in-subgraph,
    feature mask [D], edge mask [E_sub]); explain_graph(graph, feat, **kwargs) -> (feature mask [D], edge mask
    [E]) for a graph-level model (its first prediction). kwargs: the model's other arguments; tensors with a row
    per node or per edge of the graph are cut to the subgraph for explain_node, as DGL's. log: a progress bar
    when tqdm is installed."""

    def __init__(self, model, num_hops: int, lr: float = 0.01, num_epochs: int = 100, *, alpha1: float = 0.005,
                 alpha2: float = 1.0, beta1: float = 1.0, beta2: float = 0.1, log: bool = True):
        super().__init__()
        self.model, self.num_hops, self.lr, self.num_epochs = model, num_hops, lr, num_epochs
        self.alpha1, self.alpha2, self.beta1, self.beta2, self.log = alpha1, alpha2, beta1, beta2, log

    def _init_masks(self, graph, feat: torch.Tensor):
        num_nodes, feat_size = feat.shape
        feat_mask = torch.nn.Parameter(torch.randn(1, feat_size, device=feat.device) * 0.1)
        std = torch.nn.init.calculate_gain("relu") * sqrt(2.0 / (2 * num_nodes))
        edge_mask = torch.nn.Parameter(torch.randn(graph.num_edges(), device=feat.device) * std)
        return feat_mask, edge_mask

    def _loss_regularize(self, loss, feat_mask, edge_mask):
        """L1 and entropy of each mask (after the sigmoid), weighted alpha1, alpha2 (edges), beta1, beta2."""
        eps = 1e-15
        for mask, size_weight, entropy_weight, total in ((edge_mask, self.alpha1, self.alpha2, True),
                                                        (feat_mask, self.beta1, self.beta2, False)):
            m = mask.sigmoid()
            loss = loss + size_weight * (m.sum() if total else m.mean())
            entropy = -m * torch.log(m + eps) - (1 - m) * torch.log(1 - m + eps)
            loss = loss + entropy_weight * entropy.mean()
        return loss

    def _fit(self, graph, feat, picked, description: str, **kwargs):
        """Adam on the two masks so that the model keeps the class it predicts at `picked` (row selector)."""
        self.model = self.model.to(graph.device)
        self.model.eval()
        with torch.no_grad():
            target = self.model(graph=graph, feat=feat, **kwargs).argmax(dim=-1)[picked]
        feat_mask, edge_mask = self._init_masks(graph, feat)
        optimizer = torch.optim.Adam([feat_mask, edge_mask], lr=self.lr)
        bar = _progress(self.num_epochs, description) if self.log else None
        for _ in range(self.num_epochs):
            optimizer.zero_grad()
            logits = self.model(graph=graph, feat=feat * feat_mask.sigmoid(), eweight=edge_mask.sigmoid(), **kwargs)
            loss = -logits.log_softmax(dim=-1)[picked, target]
            self._loss_regularize(loss, feat_mask, edge_mask).sum().backward()
            optimizer.step()
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.close()
        return feat_mask.detach().sigmoid().squeeze(), edge_mask.detach().sigmoid()

    def explain_node(self, node_id, graph, feat: torch.Tensor, **kwargs):
        sg, inverse = khop_in_subgraph(graph, node_id, self.num_hops)
        nodes, edges = sg.ndata[NID].long(), sg.edata[EID].long()
        n, e = graph.num_nodes(), graph.num_edges()
        for key, item in kwargs.items():  # per-node and per-edge tensors cut to the subgraph, as DGL's
            if torch.is_tensor(item) and item.shape[0] == n:
                kwargs[key] = item[nodes]
            elif torch.is_tensor(item) and item.shape[0] == e:
                kwargs[key] = item[edges]
        feat_mask, edge_mask = self._fit(sg, feat[nodes], inverse, f"Explain node {node_id}", **kwargs)
        return inverse, sg, feat_mask, edge_mask

    def explain_graph(self, graph, feat: torch.Tensor, **kwargs):
        return self._fit(graph, feat, 0, "Explain graph", **kwargs)


def _progress(total: int, description: str):
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    bar = tqdm(total=total)
    bar.set_description(description)
    return bar

"""dgl.nn.PGExplainer and dgl.nn.HeteroPGExplainer (Luo et al., "Parameterized Explainer for Graph Neural
Network"; DGL 2.1's names, defaults, attributes and procedure). An MLP (`elayers`, the state_dict keys of DGL's)
reads the model's detached node embeddings at both ends of each edge (and, for a node, the node's own) and gives
a logit per edge; a concrete (binary Gumbel) sample of it, averaged with the reverse edge's, weights the messages
of a second forward pass. Training the MLP on many instances lets one forward pass explain a new one.

The model is called as DGL calls it: model(graph, feat, embed=True, **kwargs) for the node embeddings
([N, num_features], or {ntype: [N_t, num_features]}) and model(graph, feat, edge_weight=mask, **kwargs) for the
logits, so it must weight its messages by edge_weight ([E], or {canonical etype: [E_t]}): GraphConv(edge_weight=)
does, and HeteroGraphConv(mod_kwargs=) keyed by relation name (DGL's docstring example keys it by canonical etype,
which HeteroGraphConv ignores). While training, the loss's gradient also reaches the model's own parameters'
.grad; parameters() leaves them out of the optimizer. The concrete noise is one torch.rand([E]) on the CPU
generator per call, as DGL draws it, so the same seed gives DGL's samples.

Where DGL 2.1 is wrong, this is not (python/tests/test_pgexplainer.py shows what DGL does):
  * DGL detaches the masked prediction while training (probs.data), so the prediction term of the loss sends no
    gradient to the MLP and it learns only the size and entropy penalties; here the prediction stays attached
    while training (the loss's value is DGL's; its gradient is the paper's).
  * DGL looks up each edge's reverse with edge_ids and fails on an edge that has none; here such an edge keeps
    its own sample (an undirected graph gets DGL's mask).
  * HeteroPGExplainer.explain_node takes the centre's self-embedding at its index within its type, which in the
    homogeneous numbering is another node's unless its type comes first; here it is the centre's.
  * HeteroPGExplainer.explain_graph leaves ndata "emb" on the caller's graph; here the graph is left as given."""
from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping
from math import sqrt

import torch
import torch.nn.functional as F

from .._base import ETYPE, NID
from .._construct import batch
from .._convert import to_homogeneous
from .._mutation import khop_in_subgraph

__all__ = ["PGExplainer", "HeteroPGExplainer"]


def _check_number(name: str, value, low=None, low_open=False, high_open=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"PGExplainer: {name} must be a number, got {value!r}")
    if low is not None and (value <= low if low_open else value < low):
        raise ValueError(f"PGExplainer: {name} must be {'>' if low_open else '>='} {low}, got {value!r}")
    if high_open is not None and value >= high_open:
        raise ValueError(f"PGExplainer: {name} must be < {high_open}, got {value!r}")


def _reverse_ids(graph) -> torch.Tensor:
    """[E] int64: the id of each edge's reverse (the lowest, for a pair joined twice), or its own id where the
    graph has no reverse edge, so that averaging over it leaves such an edge's sample as it is."""
    src, dst = graph.edges()
    rev = torch.arange(graph.num_edges(), device=src.device)
    has = graph.has_edges_between(dst, src)
    if not torch.is_tensor(has):
        has = torch.tensor([has], dtype=torch.bool)
    has = has.to(src.device)
    if bool(has.any()):
        rev[has] = graph.edge_ids(dst[has], src[has]).long().to(src.device)
    return rev


class PGExplainer(torch.nn.Module):
    """PGExplainer(model, num_features, num_hops=None, explain_graph=True, coff_budget=0.01, coff_connect=5e-4,
    sample_bias=0.0): num_features, the width of the model's embeddings (the MLP reads 2 of them per edge for a
    graph, 3 for a node: 64 hidden units, 1 output); num_hops, the model's message-passing depth (explain_node
    cuts each centre's num_hops in-subgraph, on which the centre's prediction is the full graph's);
    coff_budget / coff_connect weigh the size and entropy penalties; sample_bias in [0, 0.5) narrows the uniform
    noise to [bias, 1 - bias]. parameters() yields only the MLP's, so an optimizer over it leaves the model be;
    state_dict holds model.* and elayers.*, as DGL's."""

    def __init__(self, model, num_features, num_hops=None, explain_graph=True, coff_budget=0.01,
                 coff_connect=5e-4, sample_bias=0.0):
        super().__init__()
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"PGExplainer: model must be a torch.nn.Module, got {type(model).__name__}")
        if isinstance(num_features, bool) or not isinstance(num_features, numbers.Integral) or num_features < 1:
            raise ValueError(f"PGExplainer: num_features must be an int >= 1, got {num_features!r}")
        if num_hops is not None and (isinstance(num_hops, bool) or not isinstance(num_hops, numbers.Integral)
                                     or num_hops < 0):
            raise ValueError(f"PGExplainer: num_hops must be None or an int >= 0, got {num_hops!r}")
        _check_number("coff_budget", coff_budget)
        _check_number("coff_connect", coff_connect)
        _check_number("sample_bias", sample_bias, low=0.0, high_open=0.5)
        self.model = model
        self.graph_explanation = bool(explain_graph)
        self.num_features = int(num_features) * (2 if self.graph_explanation else 3)
        self.num_hops = num_hops
        self.coff_budget, self.coff_connect, self.sample_bias = coff_budget, coff_connect, sample_bias
        self.init_bias = 0.0
        self.edge_mask = None
        self.elayers = torch.nn.Sequential(torch.nn.Linear(self.num_features, 64), torch.nn.ReLU(),
                                           torch.nn.Linear(64, 1))

    # -- DGL's helpers -------------------------------------------------------------------------------------
    def set_masks(self, graph, edge_mask=None):
        """Keep edge_mask [E] for loss()'s entropy term; None draws one from N(init_bias, std) with DGL's std
        (relu gain * sqrt(1 / N)), one torch.randn([E]) on the CPU generator."""
        if edge_mask is None:
            std = torch.nn.init.calculate_gain("relu") * sqrt(2.0 / (2 * graph.num_nodes()))
            edge_mask = torch.randn(graph.num_edges()) * std + self.init_bias
        self.edge_mask = edge_mask.to(graph.device)

    def clear_masks(self):
        self.edge_mask = None

    def parameters(self, recurse: bool = True):
        """The MLP's parameters only (DGL's override): the model being explained is not to be trained."""
        return self.elayers.parameters(recurse=recurse)

    def _mode(self, graph_level: bool, what: str):
        if self.graph_explanation != graph_level:
            raise ValueError(f"PGExplainer.{what} needs explain_graph={graph_level} at construction; this "
                             f"explainer was built with explain_graph={self.graph_explanation}")
        if not graph_level and self.num_hops is None:
            raise ValueError(f"PGExplainer.{what}: num_hops must be given at construction to cut the subgraphs")

    def loss(self, prob, ori_pred):
        """prob [B, L] (the masked graph's class probabilities), ori_pred [B] (the unmasked prediction) -> a
        scalar: -mean log prob of ori_pred, plus coff_budget * relu(sum of the sampled mask - coff_budget) (or
        coff_budget * sum where coff_budget <= 0), plus coff_connect * the mean entropy of the symmetric mask
        squeezed into [0.01, 0.99] so that its log stays finite. The formula is DGL's."""
        if prob.dim() != 2 or ori_pred.dim() != 1 or ori_pred.shape[0] != prob.shape[0]:
            raise ValueError(f"PGExplainer.loss: prob must be [B, L] and ori_pred [B], got {tuple(prob.shape)} "
                             f"and {tuple(ori_pred.shape)}")
        target = prob.gather(-1, ori_pred.long().unsqueeze(-1)) + 1e-6
        pred_loss = (-torch.log(target)).mean()
        total = self.sparse_mask_values.sum()
        if self.coff_budget <= 0:
            size_loss = self.coff_budget * total
        else:
            size_loss = self.coff_budget * F.relu(total - self.coff_budget)
        scale = 0.99
        m = self.edge_mask * (2 * scale - 1.0) + (1.0 - scale)
        entropy = -m * torch.log(m) - (1 - m) * torch.log(1 - m)
        return pred_loss + size_loss + self.coff_connect * entropy.mean()

    def concrete_sample(self, w, beta=1.0, training=True):
        """w [E] logits -> [E] gates in (0, 1): sigmoid((w + logistic noise) / beta) while training (the binary
        concrete relaxation, differentiable in w; beta is the temperature), sigmoid(w) otherwise."""
        if not training:
            return torch.sigmoid(w)
        bias = self.sample_bias
        noise = bias + (1 - 2 * bias) * torch.rand(w.size()).to(w.device)
        return torch.sigmoid((torch.log(noise) - torch.log(1.0 - noise) + w) / beta)

    def _edge_values(self, emb, temperature, training, graph):
        """emb [E, num_features] -> the mask [E]: each edge's sample averaged with its reverse's, so that both
        directions of an undirected edge get one importance (the samples stay in sparse_mask_values)."""
        values = self.concrete_sample(self.elayers(emb).reshape(-1), beta=temperature, training=training)
        self.sparse_mask_values = values
        edge_mask = (values + values[_reverse_ids(graph)]) / 2
        self.set_masks(graph, edge_mask)
        return edge_mask

    def _prepare(self, graph, temperature):
        _check_number("temperature", temperature, low=0.0, low_open=True)
        self.model = self.model.to(graph.device)
        self.elayers = self.elayers.to(graph.device)

    # -- graph level ---------------------------------------------------------------------------------------
    def train_step(self, graph, feat, temperature, **kwargs):
        """The loss (a scalar) of one step on graph (a batch of B graphs), the model's own argmax as target."""
        self._mode(True, "train_step")
        self._prepare(graph, temperature)
        pred = self.model(graph, feat, embed=False, **kwargs).argmax(-1).detach()
        prob, _ = self.explain_graph(graph, feat, temperature, training=True, **kwargs)
        return self.loss(prob, pred)

    def explain_graph(self, graph, feat, temperature=1.0, training=False, **kwargs):
        """-> (probabilities [B, L] of the model on graph with its edges weighted by the mask, the mask [E] in
        (0, 1), higher the more the edge matters). training: draw the concrete noise and keep what loss()
        reads; otherwise the mask is sigmoid of the MLP, deterministic."""
        self._mode(True, "explain_graph")
        self._prepare(graph, temperature)
        embed = self.model(graph, feat, embed=True, **kwargs).detach()
        src, dst = graph.edges()
        edge_mask = self._edge_values(torch.cat([embed[src.long()], embed[dst.long()]], dim=-1), temperature,
                                      training, graph)
        probs = F.softmax(self.model(graph, feat, edge_weight=self.edge_mask, **kwargs), dim=-1)
        if not training:
            self.clear_masks()
        return probs, edge_mask

    # -- node level ----------------------------------------------------------------------------------------
    def train_step_node(self, nodes, graph, feat, temperature, **kwargs):
        """The loss (a scalar) of one step over the centres `nodes` (an int, ids or a tensor), each on its own
        num_hops in-subgraph, the model's argmax on the unmasked subgraphs as target."""
        self._mode(False, "train_step_node")
        self._prepare(graph, temperature)
        prob, _, batched_graph, centres = self.explain_node(nodes, graph, feat, temperature, training=True,
                                                            **kwargs)
        pred = self.model(batched_graph, self.batched_feats, embed=False, **kwargs).argmax(-1).detach()
        return self.loss(prob[centres], pred[centres])

    def explain_node(self, nodes, graph, feat, temperature=1.0, training=False, **kwargs):
        """-> (probabilities [N_b, L] on the batch of the centres' num_hops in-subgraphs with the mask on, the
        mask [E_b], that batch (ndata NID, "feat", and "train": True at the centres), the centres' ids in the
        batch [len(nodes)]). Each edge's MLP input is [embedding of its source, of its destination, of the
        subgraph's centre], so one MLP serves every centre."""
        self._mode(False, "explain_node")
        self._prepare(graph, temperature)
        nodes = _node_list(nodes, "nodes")
        subgraphs, inputs = [], []
        for nid in nodes:
            sg, inverse = khop_in_subgraph(graph, nid, self.num_hops)
            sg.ndata["feat"] = feat[sg.ndata[NID].long()]
            centre = torch.zeros(sg.num_nodes(), dtype=torch.bool, device=sg.device)
            centre[inverse.long()] = True
            sg.ndata["train"] = centre
            embed = self.model(sg, sg.ndata["feat"], embed=True, **kwargs).detach()
            src, dst = sg.edges()
            own = embed[int(inverse[0])].repeat(sg.num_edges(), 1)
            inputs.append(torch.cat([embed[src.long()], embed[dst.long()], own], dim=-1))
            subgraphs.append(sg)
        bg = batch(subgraphs)
        edge_mask = self._edge_values(torch.cat(inputs), temperature, training, bg)
        feats = bg.ndata["feat"]
        probs = F.softmax(self.model(bg, feats, edge_weight=self.edge_mask, **kwargs), dim=-1)
        centres = bg.ndata["train"].nonzero().squeeze(1)
        if training:
            self.batched_feats = feats
        else:
            self.clear_masks()
        return probs, edge_mask, bg, centres


def _node_list(nodes, name):
    """An int, an iterable of ints or a tensor -> a non-empty list of ints (DGL accepts the same)."""
    if torch.is_tensor(nodes):
        nodes = nodes.reshape(-1).tolist()
    elif isinstance(nodes, numbers.Integral) and not isinstance(nodes, bool):
        nodes = [int(nodes)]
    elif isinstance(nodes, Iterable) and not isinstance(nodes, (str, bytes, Mapping)):
        nodes = [int(n) for n in nodes]
    else:
        raise TypeError(f"PGExplainer: {name} must be an int, ids or a tensor, got {type(nodes).__name__}")
    if not nodes:
        raise ValueError(f"PGExplainer: {name} is empty")
    return nodes


class HeteroPGExplainer(PGExplainer):
    """PGExplainer for a heterograph: the model takes and gives {ntype: tensor}, edge_weight is {canonical etype:
    [E_t]}; the MLP runs over to_homogeneous's numbering of nodes and edges (types in graph.ntypes /
    canonical_etypes order), so a relation's reverse edges may lie in another relation. Every node type must
    get an embedding, all num_features wide (HeteroGraphConv gives one per destination type)."""

    def train_step(self, graph, feat, temperature, **kwargs):
        """As PGExplainer.train_step with feat {ntype: [N_t, D_t]}."""
        return super().train_step(graph, feat, temperature, **kwargs)

    def train_step_node(self, nodes, graph, feat, temperature, **kwargs):
        """As PGExplainer.train_step_node with nodes {ntype: ids}; the centres' terms are taken type by type in
        graph.ntypes order."""
        self._mode(False, "train_step_node")
        self._prepare(graph, temperature)
        prob, _, bg, centres = self.explain_node(nodes, graph, feat, temperature, training=True, **kwargs)
        logits = self.model(bg, self.batched_feats, embed=False, **kwargs)
        pred = {t: logits[t].argmax(-1).detach() for t in logits}
        return self.loss(torch.cat([prob[t][ids] for t, ids in centres.items()]),
                         torch.cat([pred[t][ids] for t, ids in centres.items()]))

    def _homogeneous_embed(self, graph, embed):
        missing = [t for t in graph.ntypes if t not in embed]
        if missing:
            raise ValueError(f"HeteroPGExplainer: the model's embed=True output has no embedding for node type(s) "
                             f"{missing}; every node type needs one (e.g. add reverse relations)")
        return torch.cat([embed[t].detach() for t in graph.ntypes])

    def explain_graph(self, graph, feat, temperature=1.0, training=False, **kwargs):
        """-> (probabilities [B, L] with the mask on, the mask {canonical etype: [E_t]})."""
        self._mode(True, "explain_graph")
        self._prepare(graph, temperature)
        embed = self._homogeneous_embed(graph, self.model(graph, feat, embed=True, **kwargs))
        homo = to_homogeneous(graph)
        src, dst = homo.edges()
        edge_mask = self._edge_values(torch.cat([embed[src.long()], embed[dst.long()]], dim=-1), temperature,
                                      training, homo)
        hetero_mask = self._edge_mask_to_heterogeneous(edge_mask, homo, graph)
        probs = F.softmax(self.model(graph, feat, edge_weight=hetero_mask, **kwargs), dim=-1)
        if not training:
            self.clear_masks()
        return probs, hetero_mask

    def explain_node(self, nodes, graph, feat, temperature=1.0, training=False, **kwargs):
        """nodes {ntype: ids} -> (probabilities {ntype: [N_bt, L]} on the batch of the centres' in-subgraphs
        with the mask on, the mask {canonical etype: [E_bt]}, that batch (ndata NID, "feat", "train"), the
        centres' ids in the batch {ntype: tensor}). Centres are taken type by type in the order of `nodes`."""
        self._mode(False, "explain_node")
        self._prepare(graph, temperature)
        if not isinstance(nodes, Mapping):
            raise TypeError(f"HeteroPGExplainer: nodes must be a dict {{ntype: ids}}, got {type(nodes).__name__}")
        if not isinstance(feat, Mapping):
            raise TypeError(f"HeteroPGExplainer: feat must be a dict {{ntype: tensor}}, got {type(feat).__name__}")
        homos, heteros, inputs = [], [], []
        for ntype, ids in nodes.items():
            if ntype not in graph.ntypes:
                raise ValueError(f"HeteroPGExplainer: nodes names node type {ntype!r}, not one of {graph.ntypes}")
            for nid in _node_list(ids, f"nodes[{ntype!r}]"):
                sg, inverse = khop_in_subgraph(graph, {ntype: nid}, self.num_hops)
                sg_feat = {}
                for t in sg.ntypes:
                    if t in feat:
                        sg_feat[t] = feat[t][sg.nodes[t].data[NID].long()]
                        sg.nodes[t].data["feat"] = sg_feat[t]
                    centre = torch.zeros(sg.num_nodes(t), dtype=torch.bool, device=sg.device)
                    if t in inverse:
                        centre[inverse[t].long()] = True
                    sg.nodes[t].data["train"] = centre
                embed = self._homogeneous_embed(sg, self.model(sg, sg_feat, embed=True, **kwargs))
                homo = to_homogeneous(sg)
                src, dst = homo.edges()
                # the centre in to_homogeneous's numbering: the nodes of the types before its own come first
                offset = sum(sg.num_nodes(t) for t in sg.ntypes[:sg.ntypes.index(ntype)])
                own = embed[offset + int(inverse[ntype][0])].repeat(homo.num_edges(), 1)
                inputs.append(torch.cat([embed[src.long()], embed[dst.long()], own], dim=-1))
                homos.append(homo)
                heteros.append(sg)
        homo_bg, bg = batch(homos), batch(heteros)
        edge_mask = self._edge_values(torch.cat(inputs), temperature, training, homo_bg)
        hetero_mask = self._edge_mask_to_heterogeneous(edge_mask, homo_bg, bg)
        feats = {t: bg.nodes[t].data["feat"] for t in bg.ntypes if "feat" in bg.nodes[t].data}
        logits = self.model(bg, feats, edge_weight=hetero_mask, **kwargs)
        probs = {t: F.softmax(logits[t], dim=-1) for t in logits}
        centres = {t: bg.nodes[t].data["train"].nonzero().squeeze(1) for t in bg.ntypes}
        if training:
            self.batched_feats = feats
        else:
            self.clear_masks()
        return probs, hetero_mask, bg, centres

    def _edge_mask_to_heterogeneous(self, edge_mask, homograph, heterograph):
        """edge_mask [E] over homograph (to_homogeneous of heterograph, or a batch of such, edata ETYPE) ->
        {canonical etype: [E_t]} in heterograph's edge order (which to_homogeneous and batch both keep)."""
        etype = homograph.edata[ETYPE]
        return {c: edge_mask[(etype == heterograph.get_etype_id(c)).nonzero().squeeze(1)]
                for c in heterograph.canonical_etypes}

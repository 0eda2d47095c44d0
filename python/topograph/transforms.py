"""dgl.transforms: the graph transforms as callables (BaseTransform and its subclasses AddSelfLoop, RemoveSelfLoop,
AddReverse, ToSimple, LineGraph, KHopGraph, Compose; the augmentations DropEdge, DropNode, AddEdge, FeatMask,
NodeShuffle; the feature transforms RowFeatNormalizer, GCNNorm, RandomWalkPE, LapPE and its deprecated alias
LaplacianPE), each `transform(g)` returning a graph with DGL 2.1's rules, built on the functions of _transform.py,
_mutation.py, _structure_ops.py and _positional.py, which this module also holds under DGL's names
(dgl.transforms.add_self_loop, ..., random_walk_pe, lap_pe, laplacian_pe, shortest_dist, khop_adj, to_half,
to_float, to_double, to_bfloat16), and re-exports the ones defined in _diffusion.py (PPR, HeatKernel, GDC,
SIGNDiffusion), _levi_metapath.py (ToLevi, AddMetaPaths) and _svd_pe.py (SVDPE, svd_pe). Where a transform
rebuilds the graph from its edges (AddSelfLoop with new_etypes, AddReverse), the result is one graph, as DGL's: a
batch becomes batch_size 1.

As DGL's, FeatMask, RowFeatNormalizer, GCNNorm, RandomWalkPE and LapPE change the graph they are given and
return it (FeatMask and RowFeatNormalizer even change its feature tensors in place); DropEdge, DropNode, AddEdge
and NodeShuffle return a new graph (AddEdge(0) the graph itself). The random draws (Bernoulli masks, randint,
randperm) come from torch's generator in DGL's order, so torch.manual_seed(s) repeats DGL's draws on the CPU."""
from __future__ import annotations

import numbers
import warnings
from typing import Dict

import torch

from ._base import DGLError
from ._block import to_block
from ._construct import heterograph, reverse
from ._graph import DGLGraph
from ._mutation import add_edges, add_nodes, remove_nodes
from ._positional import (khop_adj, lap_pe, laplacian_lambda_max, laplacian_pe, norm_by_dst, random_walk_pe,
                          shortest_dist, to_bfloat16, to_double, to_float, to_half)
from ._structure_ops import khop_graph, knn_graph, line_graph, radius_graph, segmented_knn_graph
from ._transform import _check, add_self_loop, remove_edges, remove_self_loop, to_bidirected, to_simple

to_simple_graph = to_simple  # DGL 2.1's deprecated name

__all__ = ["BaseTransform", "AddSelfLoop", "RemoveSelfLoop", "AddReverse", "ToSimple", "LineGraph", "KHopGraph",
           "Compose", "DropEdge", "DropNode", "AddEdge", "FeatMask", "RowFeatNormalizer", "GCNNorm", "NodeShuffle",
           "RandomWalkPE", "LapPE", "LaplacianPE", "add_self_loop", "remove_self_loop", "remove_edges", "to_simple",
           "to_bidirected", "add_nodes", "add_edges", "remove_nodes", "reverse", "to_block", "line_graph",
           "khop_graph", "knn_graph", "segmented_knn_graph", "random_walk_pe", "lap_pe", "laplacian_pe",
           "shortest_dist", "khop_adj", "to_half", "to_float", "to_double", "to_bfloat16", "norm_by_dst",
           "laplacian_lambda_max", "radius_graph", "to_simple_graph", "PPR", "HeatKernel", "GDC", "SIGNDiffusion",
           "ToLevi", "AddMetaPaths", "SVDPE", "svd_pe", "adj_product_graph", "adj_sum_graph",
           "metapath_reachable_graph", "compact_graphs", "double_radius_node_labeling", "reorder_graph",
           "sort_csc_by_tag", "sort_csr_by_tag", "add_reverse_edges"]


def update_graph_structure(g: DGLGraph, data_dict: Dict[tuple, tuple], copy_edata: bool = True) -> DGLGraph:
    """As dgl.transforms.module.update_graph_structure: a heterograph of data_dict's relations over g's node
    types and counts (g's idtype and device), g's node features and (copy_edata) the edge features of g's
    relations it still has."""
    new = heterograph(data_dict, num_nodes_dict={t: g.num_nodes(t) for t in g.ntypes}, idtype=g.idtype,
                      device=g.device)
    for t in g.ntypes:
        for key, feat in g.nodes[t].data.items():
            new.nodes[t].data[key] = feat
    if copy_edata:
        for c in g.canonical_etypes:
            for key, feat in g.edges[c].data.items():
                new.edges[c].data[key] = feat
    return new


class BaseTransform:
    """dgl.transforms.BaseTransform: a callable on a graph."""

    def __call__(self, g):
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.__class__.__name__ + "()"


class AddSelfLoop(BaseTransform):
    """dgl.transforms.AddSelfLoop: for every relation whose source and destination types agree, its self loops
    removed first (unless allow_duplicate) and one loop per node added after its edges (add_self_loop, with
    edge_feat_names and fill_data for the loops' edge features); new_etypes also adds a relation (t, 'self', t)
    of loops for every node type t (the graph rebuilt: one graph, node features and edge features kept)."""

    def __init__(self, allow_duplicate: bool = False, new_etypes: bool = False, edge_feat_names=None,
                 fill_data=1.0):
        self.allow_duplicate, self.new_etypes = allow_duplicate, new_etypes
        self.edge_feat_names, self.fill_data = edge_feat_names, fill_data

    def transform_etype(self, c_etype, g):
        utype, _, vtype = c_etype
        if utype != vtype:
            return g
        if not self.allow_duplicate:
            g = remove_self_loop(g, etype=c_etype)
        return add_self_loop(g, edge_feat_names=self.edge_feat_names, fill_data=self.fill_data, etype=c_etype)

    def __call__(self, g):
        _check(g, "AddSelfLoop")
        for c_etype in g.canonical_etypes:
            g = self.transform_etype(c_etype, g)
        if self.new_etypes:
            data_dict = {}
            for t in g.ntypes:
                nids = torch.arange(g.num_nodes(t), dtype=g.idtype)
                data_dict[(t, "self", t)] = (nids, nids)
            for c in g.canonical_etypes:
                data_dict[c] = g.edges(etype=c)
            g = update_graph_structure(g, data_dict)
        return g


class RemoveSelfLoop(BaseTransform):
    """dgl.transforms.RemoveSelfLoop: every self loop of every relation whose two node types agree removed
    (remove_self_loop: the other edges keep their order and features)."""

    def transform_etype(self, c_etype, g):
        utype, _, vtype = c_etype
        return remove_self_loop(g, etype=c_etype) if utype == vtype else g

    def __call__(self, g):
        _check(g, "RemoveSelfLoop")
        for c_etype in g.canonical_etypes:
            g = self.transform_etype(c_etype, g)
        return g


class AddReverse(BaseTransform):
    """dgl.transforms.AddReverse: a relation (u, e, v) with u != v (or any, with sym_new_etype) gets a relation
    (v, 'rev_e', u) of its edges reversed (edge i reverses edge i; with copy_edata its features, else none);
    a relation (u, e, u) otherwise gets its reversed edges appended (edges E..2E-1, edge E + i reversing edge
    i; their features copy_edata's copies, else zeros). The graph is rebuilt: one graph, node features kept."""

    def __init__(self, copy_edata: bool = False, sym_new_etype: bool = False):
        self.copy_edata, self.sym_new_etype = copy_edata, sym_new_etype

    def transform_symmetric_etype(self, c_etype, g, data_dict):
        if self.sym_new_etype:
            self.transform_asymmetric_etype(c_etype, g, data_dict)
        else:
            src, dst = g.edges(etype=c_etype)
            data_dict[c_etype] = (torch.cat([src, dst]), torch.cat([dst, src]))

    def transform_asymmetric_etype(self, c_etype, g, data_dict):
        utype, etype, vtype = c_etype
        src, dst = g.edges(etype=c_etype)
        data_dict.update({c_etype: (src, dst), (vtype, f"rev_{etype}", utype): (dst, src)})

    def transform_etype(self, c_etype, g, data_dict):
        utype, _, vtype = c_etype
        if utype == vtype:
            self.transform_symmetric_etype(c_etype, g, data_dict)
        else:
            self.transform_asymmetric_etype(c_etype, g, data_dict)

    def __call__(self, g):
        _check(g, "AddReverse")
        data_dict: Dict[tuple, tuple] = {}
        for c_etype in g.canonical_etypes:
            self.transform_etype(c_etype, g, data_dict)
        new = update_graph_structure(g, data_dict, copy_edata=False)
        for c_etype in g.canonical_etypes:
            utype, etype, vtype = c_etype
            if utype != vtype or self.sym_new_etype:
                rev = (vtype, f"rev_{etype}", utype)
                for key, feat in g.edges[c_etype].data.items():
                    new.edges[c_etype].data[key] = feat
                    if self.copy_edata:
                        new.edges[rev].data[key] = feat
            else:
                for key, feat in g.edges[c_etype].data.items():
                    new.edges[c_etype].data[key] = torch.cat([feat, feat if self.copy_edata else
                                                                torch.zeros_like(feat)])
        return new


class ToSimple(BaseTransform):
    """dgl.transforms.ToSimple: to_simple(g, return_counts, copy_edata=True, aggregator): parallel edges merged,
    their features by aggregator ('arbitrary', 'sum', 'mean'), the counts in edata[return_counts]."""

    def __init__(self, return_counts: str = "count", aggregator: str = "arbitrary"):
        self.return_counts, self.aggregator = return_counts, aggregator

    def __call__(self, g):
        return to_simple(g, return_counts=self.return_counts, copy_edata=True, aggregator=self.aggregator)


class LineGraph(BaseTransform):
    """dgl.transforms.LineGraph: line_graph(g, backtracking, shared=True) (g's edge features become the node
    features)."""

    def __init__(self, backtracking: bool = True):
        self.backtracking = backtracking

    def __call__(self, g):
        return line_graph(g, backtracking=self.backtracking, shared=True)


class KHopGraph(BaseTransform):
    """dgl.transforms.KHopGraph: khop_graph(g, k)."""

    def __init__(self, k: int):
        self.k = k

    def __call__(self, g):
        return khop_graph(g, self.k)


class Compose(BaseTransform):
    """dgl.transforms.Compose: the transforms applied in order."""

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, g):
        for transform in self.transforms:
            g = transform(g)
        return g

    def __repr__(self) -> str:
        args = ["  " + str(transform) for transform in self.transforms]
        return self.__class__.__name__ + "([\n" + ",\n".join(args) + "\n])"


def _graph_only(g, what: str) -> None:
    """A topograph graph, not a block: DGL's DropEdge, DropNode and GCNNorm fail on a block too, while its AddEdge,
    FeatMask, RowFeatNormalizer and NodeShuffle accept one; here they are for graphs (apply them before
    to_block)."""
    if not isinstance(g, DGLGraph):
        raise TypeError(f"{what}: expected a topograph graph, got {type(g).__name__}")
    if g.is_block:
        raise DGLError(f"{what}: not defined for a block; apply it to the graph before to_block")


def _probability(p, what: str) -> float:
    """p as a float in [0, 1] (DGLError, a ValueError, otherwise; DGL's Bernoulli raises a ValueError too)."""
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0 <= p <= 1:
        raise DGLError(f"{what} must be a probability in [0, 1], got {p!r}")
    return float(p)


def _bernoulli(p: float, count: int) -> torch.Tensor:
    """count draws of Bernoulli(p) as a bool mask on the CPU, from torch's generator as DGL's
    torch.distributions.Bernoulli(p).sample((count,)) draws them."""
    return torch.bernoulli(torch.full((count,), p)).bool()


def _names(names, what: str) -> list:
    """Feature names as a list (None: none); a lone string is refused, as iterating it would give letters."""
    if names is None:
        return []
    if isinstance(names, str):
        raise DGLError(f"{what} must be a list of feature names, got the string {names!r} (write [{names!r}])")
    return list(names)


def _features_named(g: DGLGraph, name: str, nodes: bool, what: str) -> list:
    """The feature dicts (g.nodes[t].data or g.edges[c].data, in g's type order, as DGL's ndata[name].keys())
    holding feature `name`; DGLError when none does (DGL: a KeyError on one type, nothing on several)."""
    spaces = [g.nodes[t].data for t in g.ntypes] if nodes else [g.edges[c].data for c in g.canonical_etypes]
    holding = [data for data in spaces if name in data]
    if not holding:
        kind = "node" if nodes else "edge"
        raise DGLError(f"{what}: {kind}_feat_names names {name!r}, which is not a {kind} feature of the graph")
    return holding


class DropEdge(BaseTransform):
    """dgl.transforms.DropEdge: a copy of g (g.clone()) without each edge of each relation with probability p
    (one Bernoulli(p) draw per edge, relation by relation); the remaining edges keep their order and features,
    the nodes all stay (remove_edges). p = 0: the copy, no draws."""

    def __init__(self, p: float = 0.5):
        self.p = _probability(p, "DropEdge: p")

    def __call__(self, g):
        _graph_only(g, "DropEdge")
        g = g.clone()
        if self.p == 0:
            return g
        for c_etype in g.canonical_etypes:
            drop = _bernoulli(self.p, g.num_edges(c_etype))
            g.remove_edges(drop.nonzero().flatten(), etype=c_etype)
        return g


class DropNode(BaseTransform):
    """dgl.transforms.DropNode: a copy of g without each node of each type with probability p (one Bernoulli(p)
    draw per node, type by type), with every edge touching it (remove_nodes: the rest renumbered, keeping their
    order and features; DGL's remaining edges come in an order of its own, see remove_nodes). p = 0: the copy."""

    def __init__(self, p: float = 0.5):
        self.p = _probability(p, "DropNode: p")

    def __call__(self, g):
        _graph_only(g, "DropNode")
        g = g.clone()
        if self.p == 0:
            return g
        for ntype in g.ntypes:
            drop = _bernoulli(self.p, g.num_nodes(ntype))
            g.remove_nodes(drop.nonzero().flatten(), ntype=ntype)
        return g


class AddEdge(BaseTransform):
    """dgl.transforms.AddEdge: a copy of g with int(E * ratio) more edges per relation (E its edge count), their
    ends drawn uniformly (torch.randint on g's device, sources then destinations, g's idtype) and appended after
    its edges with zero features (add_edges; as DGL's, a batch becomes one graph). Parallel edges and self loops
    may be drawn. ratio = 0 returns g itself, as DGL's."""

    def __init__(self, ratio: float = 0.2):
        if isinstance(ratio, bool) or not isinstance(ratio, numbers.Real) or ratio < 0:
            raise DGLError(f"AddEdge: ratio must be a number >= 0 (edges to add per edge), got {ratio!r}")
        self.ratio = float(ratio)

    def __call__(self, g):
        _graph_only(g, "AddEdge")
        if self.ratio == 0:
            return g
        g = g.clone()
        for c_etype in g.canonical_etypes:
            count = int(g.num_edges(c_etype) * self.ratio)
            if count == 0:
                continue
            src = torch.randint(0, g.num_nodes(c_etype[0]), (count,), dtype=g.idtype, device=g.device)
            dst = torch.randint(0, g.num_nodes(c_etype[2]), (count,), dtype=g.idtype, device=g.device)
            g.add_edges(src, dst, etype=c_etype)
        return g


class FeatMask(BaseTransform):
    """dgl.transforms.FeatMask: for each feature named in node_feat_names / edge_feat_names (on every type
    holding it), each column (index of the last dimension) set to 0 with probability p, the same columns for
    every row. As DGL's, the feature tensors are changed in place (whoever holds them sees it) and g itself is
    returned; p = 0 returns g untouched. Unlike DGL, a name no type holds is a DGLError (DGL: KeyError, or
    nothing on a heterograph), a 1-D feature is refused (no columns), and a feature of 3 or more dimensions is
    masked on its last one (DGL indexes dimension 1 with a mask as long as the last)."""

    def __init__(self, p: float = 0.5, node_feat_names=None, edge_feat_names=None):
        self.p = _probability(p, "FeatMask: p")
        self.node_feat_names = _names(node_feat_names, "FeatMask: node_feat_names")
        self.edge_feat_names = _names(edge_feat_names, "FeatMask: edge_feat_names")

    def __call__(self, g):
        _graph_only(g, "FeatMask")
        if self.p == 0:
            return g
        for names, nodes in ((self.node_feat_names, True), (self.edge_feat_names, False)):
            for name in names:
                for data in _features_named(g, name, nodes, "FeatMask"):
                    feat = data[name]
                    if feat.dim() < 2:
                        raise DGLError(f"FeatMask: feature {name!r} is {tuple(feat.shape)}: it has no columns to "
                                       f"mask (give it a trailing dimension)")
                    mask = _bernoulli(self.p, feat.shape[-1]).to(feat.device)
                    feat[..., mask] = 0
        return g


class RowFeatNormalizer(BaseTransform):
    """dgl.transforms.RowFeatNormalizer: each feature named in node_feat_names / edge_feat_names (on every type
    holding it), x, replaced by x / max(x.sum(-1), 1) row by row (a row summing to less than 1 is left as it
    is; a 1-D feature is one row); subtract_min first subtracts the feature's minimum over the whole tensor.
    As DGL's, g itself is changed and returned, and without subtract_min the feature tensor is divided in place
    (whoever holds it sees the change). Unlike DGL, a name no type holds and a non-floating feature are DGLErrors
    (DGL: a KeyError or nothing, and torch's error from div_)."""

    def __init__(self, subtract_min: bool = False, node_feat_names=None, edge_feat_names=None):
        self.subtract_min = subtract_min
        self.node_feat_names = _names(node_feat_names, "RowFeatNormalizer: node_feat_names")
        self.edge_feat_names = _names(edge_feat_names, "RowFeatNormalizer: edge_feat_names")

    def row_normalize(self, feat: torch.Tensor) -> torch.Tensor:
        """The feature row-normalised (in place unless subtract_min, as DGL's)."""
        if not feat.is_floating_point():
            raise DGLError(f"RowFeatNormalizer: features must be floating point to divide, got {feat.dtype}")
        if self.subtract_min and feat.numel():
            feat = feat - feat.min()
        return feat.div_(feat.sum(dim=-1, keepdim=True).clamp_(min=1.0))

    def __call__(self, g):
        _graph_only(g, "RowFeatNormalizer")
        for names, nodes in ((self.node_feat_names, True), (self.edge_feat_names, False)):
            for name in names:
                for data in _features_named(g, name, nodes, "RowFeatNormalizer"):
                    data[name] = self.row_normalize(data[name])
        return g


class GCNNorm(BaseTransform):
    """dgl.transforms.GCNNorm: for every relation whose two node types agree, edge u -> v gets the weight
    d(u)^-1/2 * w(u -> v) * d(v)^-1/2 in edata[eweight_name], where, when the relation has that feature, w is it
    and d(x) the sum of the weights of x's in-edges, else w = 1 and d(x) x's in-degree (float32); an infinite
    d^-1/2 (no in-edges) counts as 0. Note d(u) is u's in-degree too, not its out-degree, as DGL's. As DGL's,
    g itself gets the weights (replacing the old ones) and is returned; relations between two types are left
    alone."""

    def __init__(self, eweight_name: str = "w"):
        self.eweight_name = eweight_name

    def calc_etype(self, c_etype, g) -> torch.Tensor:
        """The normalised weights [E, ...] of relation c_etype."""
        u, v = (t.to(torch.int64) for t in g.edges(etype=c_etype))
        data = g.edges[c_etype].data
        if self.eweight_name in data:
            weight = data[self.eweight_name]
            degree = weight.new_zeros((g.num_nodes(c_etype[2]),) + tuple(weight.shape[1:]))
            degree = degree.index_add(0, v.to(weight.device), weight)
        else:
            weight = None
            degree = g.in_degrees(etype=c_etype).to(torch.float32)
        inverse_sqrt = 1.0 / torch.sqrt(degree)
        inverse_sqrt = inverse_sqrt.masked_fill(torch.isinf(inverse_sqrt), 0)
        u, v = u.to(inverse_sqrt.device), v.to(inverse_sqrt.device)
        if weight is None:
            return inverse_sqrt[u] * inverse_sqrt[v]
        return inverse_sqrt[u] * weight * inverse_sqrt[v]

    def __call__(self, g):
        _graph_only(g, "GCNNorm")
        result = {c_etype: self.calc_etype(c_etype, g) for c_etype in g.canonical_etypes if c_etype[0] == c_etype[2]}
        for c_etype, weight in result.items():
            g.edges[c_etype].data[self.eweight_name] = weight
        return g


class NodeShuffle(BaseTransform):
    """dgl.transforms.NodeShuffle: a copy of g whose node features are shuffled among the nodes, one permutation
    per node type (torch.randperm) applied to all its features alike; the structure and edge features are g's
    (so each node's features now belong to another node)."""

    def __call__(self, g):
        _graph_only(g, "NodeShuffle")
        g = g.clone()
        for ntype in g.ntypes:
            perm = torch.randperm(g.num_nodes(ntype))
            data = g.nodes[ntype].data
            for key, feat in list(data.items()):
                data[key] = feat[perm.to(feat.device)]
        return g


class RandomWalkPE(BaseTransform):
    """dgl.transforms.RandomWalkPE: g.ndata[feat_name] = random_walk_pe(g, k, eweight_name) (float32 [N, k]);
    as DGL's, g itself gets it and is returned. A homogeneous graph only."""

    def __init__(self, k: int, feat_name: str = "PE", eweight_name=None):
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
            raise DGLError(f"RandomWalkPE: k must be an int >= 1, got {k!r}")
        self.k, self.feat_name, self.eweight_name = int(k), feat_name, eweight_name

    def __call__(self, g):
        g.ndata[self.feat_name] = random_walk_pe(g, k=self.k, eweight_name=self.eweight_name).to(g.device)
        return g


class LapPE(BaseTransform):
    """dgl.transforms.LapPE: g.ndata[feat_name] = lap_pe(g, k, padding) (float32 [N, k]) and, with eigval_name,
    g.ndata[eigval_name] the k eigenvalues repeated on every node ([N, k]); as DGL's, g itself gets them and is
    returned. With k >= N, padding=False is a DGLError (see lap_pe). A homogeneous, bidirected graph is meant."""

    def __init__(self, k: int, feat_name: str = "PE", eigval_name=None, padding: bool = False):
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
            raise DGLError(f"{type(self).__name__}: k must be an int >= 1, got {k!r}")
        self.k, self.feat_name, self.eigval_name, self.padding = int(k), feat_name, eigval_name, padding

    def __call__(self, g):
        if self.eigval_name:
            encoding, eigval = lap_pe(g, k=self.k, padding=self.padding, return_eigval=True)
            g.ndata[self.eigval_name] = eigval.reshape(1, -1).repeat(g.num_nodes(), 1).to(g.device)
        else:
            encoding = lap_pe(g, k=self.k, padding=self.padding)
        g.ndata[self.feat_name] = encoding.to(g.device)
        return g


class LaplacianPE(LapPE):
    """dgl.transforms.LaplacianPE: DGL's deprecated name of LapPE (a FutureWarning when made)."""

    def __init__(self, k: int, feat_name: str = "PE", eigval_name=None, padding: bool = False):
        super().__init__(k, feat_name, eigval_name, padding)
        warnings.warn("LaplacianPE is deprecated (as dgl's): use LapPE", FutureWarning, stacklevel=2)


# last: these modules subclass BaseTransform and use the helpers above, so they import this module back
from ._diffusion import GDC, PPR, HeatKernel, SIGNDiffusion  # noqa: E402
from ._levi_metapath import AddMetaPaths, ToLevi  # noqa: E402
from ._svd_pe import SVDPE, svd_pe  # noqa: E402
# dgl.transforms also holds these graph functions (dgl.transforms.functional)
from ._adjacency_ops import adj_product_graph, adj_sum_graph, metapath_reachable_graph  # noqa: E402
from ._mutation import compact_graphs  # noqa: E402
from ._node_labeling import double_radius_node_labeling  # noqa: E402
from ._reorder import reorder_graph, sort_csc_by_tag, sort_csr_by_tag  # noqa: E402
from ._transform import add_reverse_edges  # noqa: E402

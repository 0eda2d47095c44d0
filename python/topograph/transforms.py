"""dgl.transforms: the graph transforms as callables (BaseTransform and its subclasses AddSelfLoop, RemoveSelfLoop,
AddReverse, ToSimple, LineGraph, KHopGraph, Compose), each `transform(g)` returning a new graph with DGL 2.1's
rules, built on the functions of _transform.py and _structure_ops.py, which this module also holds under DGL's
names (dgl.transforms.add_self_loop, ...). Where a transform rebuilds the graph from its edges (AddSelfLoop with
new_etypes, AddReverse), the result is one graph, as DGL's: a batch becomes batch_size 1."""
from __future__ import annotations

from typing import Dict

import torch

from ._block import to_block
from ._construct import heterograph, reverse
from ._graph import DGLGraph
from ._mutation import add_edges, add_nodes, remove_nodes
from ._structure_ops import khop_graph, knn_graph, line_graph, segmented_knn_graph
from ._transform import _check, add_self_loop, remove_edges, remove_self_loop, to_bidirected, to_simple

__all__ = ["BaseTransform", "AddSelfLoop", "RemoveSelfLoop", "AddReverse", "ToSimple", "LineGraph", "KHopGraph",
           "Compose", "add_self_loop", "remove_self_loop", "remove_edges", "to_simple", "to_bidirected", "add_nodes",
           "add_edges", "remove_nodes", "reverse", "to_block", "line_graph", "khop_graph", "knn_graph",
           "segmented_knn_graph"]


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

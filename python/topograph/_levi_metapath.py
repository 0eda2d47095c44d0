"""DGL 2.1's structural transforms that change a graph's types: ToLevi (a homogeneous graph's edges made nodes) and
AddMetaPaths (a relation per metapath, as HAN uses), exported by topograph.transforms and at the top level
(dgl.ToLevi, dgl.AddMetaPaths).

Where these differ from DGL 2.1, on purpose:
  * ToLevi keeps every node of g, with or without edges (DGL counts the 'node' type up to the largest node id an
    edge uses, so trailing isolated nodes vanish while their features stay: a graph whose feature rows outnumber
    its nodes);
  * AddMetaPaths names the new relation's end types from the metapath's relations resolved on g, so a metapath
    may list edge type names as well as canonical triples (DGL reads metapath[0][0] and metapath[-1][-1], the
    first and last letters of a name); a metapath that is not a dict of name -> non-empty list is a DGLError.
"""
from __future__ import annotations

import torch

from ._adjacency_ops import metapath_reachable_graph
from ._base import DGLError
from ._construct import heterograph
from ._structure_ops import _homogeneous
from ._transform import _check
from .transforms import BaseTransform, update_graph_structure

__all__ = ["ToLevi", "AddMetaPaths"]


class ToLevi(BaseTransform):
    """dgl.ToLevi: the Levi graph of a homogeneous graph g (N nodes, E edges): node types 'edge' (E nodes, one
    per edge of g, same ids) and 'node' (N nodes, g's), and for edge e = u -> v of g the edges u -> e of relation
    ('node', 'n2e', 'edge') and e -> v of ('edge', 'e2n', 'node'), edge ids e in both. g's node features go to the
    'node' type and its edge features to the 'edge' type (the same tensors); the new edges have no features. A
    new graph of g's idtype and device (a batch becomes one graph)."""

    def __call__(self, g):
        _homogeneous(g, "ToLevi")
        src, dst = g.edges()
        eids = torch.arange(g.num_edges(), dtype=g.idtype, device=g.device)
        levi = heterograph({("node", "n2e", "edge"): (src, eids), ("edge", "e2n", "node"): (eids, dst)},
                           num_nodes_dict={"node": g.num_nodes(), "edge": g.num_edges()}, idtype=g.idtype,
                           device=g.device)
        levi.nodes["node"].data.update(dict(g.ndata))
        levi.nodes["edge"].data.update(dict(g.edata))
        return levi


class AddMetaPaths(BaseTransform):
    """dgl.AddMetaPaths: for each name -> metapath of metapaths (relations, canonical or by edge type name, each
    ending at the type where the next starts), a relation (first source type, name, last destination type) with
    an edge u -> v for every pair a path along the metapath joins (once, sorted by u then v:
    metapath_reachable_graph's edges). keep_orig_edges keeps g's relations and their edge features too (else
    only the new relations remain). Every node type stays, with its node count and features; a new graph (a
    batch becomes one graph)."""

    def __init__(self, metapaths, keep_orig_edges: bool = True):
        if not isinstance(metapaths, dict) or not all(isinstance(name, str) for name in metapaths):
            raise DGLError(f"AddMetaPaths: metapaths must be a dict of relation name -> metapath, got {metapaths!r}")
        for name, path in metapaths.items():
            if isinstance(path, (str, bytes)) or not hasattr(path, "__len__") or len(path) == 0:
                raise DGLError(f"AddMetaPaths: metapaths[{name!r}] must be a non-empty list of relations, "
                               f"got {path!r}")
        self.metapaths, self.keep_orig_edges = metapaths, keep_orig_edges

    def __call__(self, g):
        _check(g, "AddMetaPaths")
        data_dict = {}
        for name, path in self.metapaths.items():
            reach = metapath_reachable_graph(g, path)
            srctype, _, dsttype = reach.canonical_etypes[0]
            data_dict[(srctype, name, dsttype)] = reach.edges()
        if self.keep_orig_edges:
            for c_etype in g.canonical_etypes:
                data_dict[c_etype] = g.edges(etype=c_etype)
        return update_graph_structure(g, data_dict, copy_edata=self.keep_orig_edges)

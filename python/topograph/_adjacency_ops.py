"""DGL 2.1's graphs made from products and sums of adjacency matrices, on topograph.sparse: metapath_reachable_graph
(HAN's metapath neighbours: u -> v when a path of the metapath's relations leads from u to v), adj_product_graph
(A B with the edge weights multiplied along and summed over the two-hop paths) and adj_sum_graph (the weighted
adjacencies summed). Edges come in (source, destination) order, one per non-zero; the weights are
differentiable (DGL's are too)."""
from __future__ import annotations

from typing import Sequence

from ._base import DGLError
from ._construct import heterograph
from ._graph import DGLGraph


def _one_relation(g: DGLGraph, what: str):
    if len(g.canonical_etypes) != 1:
        raise DGLError(f"{what}: takes graphs of one relation, got {g.canonical_etypes}")
    return g.canonical_etypes[0]


def _weighted(g: DGLGraph, weight_name: str, what: str):
    etype = _one_relation(g, what)
    if weight_name not in g.edata:
        raise DGLError(f"{what}: no edge feature {weight_name!r} (it has {sorted(g.edata.keys())})")
    w = g.edata[weight_name]
    if w.dim() != 1:
        raise DGLError(f"{what}: the weights must be one scalar per edge [E], got {tuple(w.shape)}")
    return etype, g.adj(etype, weight_name)


def metapath_reachable_graph(g: DGLGraph, metapath: Sequence) -> DGLGraph:
    """A graph of one relation (first source type, '_E', last destination type) with an edge u -> v for every
    pair joined by a path of the metapath's relations (once, however many paths), and the end types' node
    features, as DGL's."""
    if len(metapath) == 0:
        raise DGLError("metapath_reachable_graph: the metapath is empty")
    product = None
    relations = [g.to_canonical_etype(e) for e in metapath]
    for (s, e, d), nxt in zip(relations, relations[1:] + [None]):
        if nxt is not None and nxt[0] != d:
            raise DGLError(f"metapath_reachable_graph: relation {(s, e, d)} ends at {d!r}, the next {nxt} starts at "
                           f"{nxt[0]!r}")
    for c in relations:
        a = g.adj(c)
        product = a.coalesce() if product is None else product @ a
    srctype, dsttype = relations[0][0], relations[-1][2]
    rows, cols = product.row, product.col
    new = heterograph({(srctype, "_E", dsttype): (rows, cols)},
                      num_nodes_dict={srctype: product.shape[0], dsttype: product.shape[1]}, idtype=g.idtype,
                      device=g.device)
    new.nodes[srctype].data.update(dict(g.nodes[srctype].data))
    if dsttype != srctype:
        new.nodes[dsttype].data.update(dict(g.nodes[dsttype].data))
    return new


def adj_product_graph(A: DGLGraph, B: DGLGraph, weight_name: str, etype: str = "_E") -> DGLGraph:
    """The graph of the product of A's and B's weighted adjacencies (A's source type -> B's destination type,
    relation `etype`): an edge u -> w for every two-hop path u -> v -> w, weight the sum over v of the two
    weights' product, as DGL's."""
    (s, _, _), a = _weighted(A, weight_name, "adj_product_graph")
    (_, _, d), b = _weighted(B, weight_name, "adj_product_graph")
    c = a @ b
    counts = {s: c.shape[0]} if s == d else {s: c.shape[0], d: c.shape[1]}
    new = heterograph({(s, etype, d): (c.row, c.col)}, num_nodes_dict=counts, idtype=A.idtype, device=A.device)
    new.edata[weight_name] = c.val
    return new


def adj_sum_graph(graphs: Sequence[DGLGraph], weight_name: str) -> DGLGraph:
    """The graph of the sum of the graphs' weighted adjacencies (same relation types and node counts): an edge
    per pair any of them joins, weight the sum, as DGL's."""
    if len(graphs) == 0:
        raise ValueError("adj_sum_graph: the list of graphs must not be empty")
    etype, total = _weighted(graphs[0], weight_name, "adj_sum_graph")
    for g in graphs[1:]:
        if _one_relation(g, "adj_sum_graph") != etype:
            raise DGLError(f"adj_sum_graph: relations {etype} and {g.canonical_etypes[0]} differ")
        total = total + _weighted(g, weight_name, "adj_sum_graph")[1]
    total = total.coalesce()
    s, _, d = etype
    counts = {s: total.shape[0]} if s == d else {s: total.shape[0], d: total.shape[1]}
    new = heterograph({etype: (total.row, total.col)}, num_nodes_dict=counts, idtype=graphs[0].idtype,
                      device=graphs[0].device)
    new.edata[weight_name] = total.val
    return new

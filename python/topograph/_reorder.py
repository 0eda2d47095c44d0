"""DGL 2.1's reorderings: sort_csr_by_tag / sort_csc_by_tag (each node's out- or in-edges grouped by a tag, with
the per-node tag offsets as node data) and reorder_graph (nodes renumbered by Reverse Cuthill-McKee or a given
permutation, then edges by source, destination or a given permutation; DGLGraph.reorder_graph too).

Differences from DGL 2.1, on purpose:
  * the core's CSR / CSC keeps each node's edges by edge id, so after sort_*_by_tag the adjacency a user reads
    (out_edges / in_edges, successors / predecessors, adj_tensors) stays in edge-id order; g.edges(), the edge ids,
    the features and the tag offsets are DGL's. A graph without edges gets offsets [N, 1] of zeros (DGL fails
    taking the largest of no tags); a negative tag, node tags not one per node, or edge tags not one per edge
    are DGLErrors (DGL crashes, gathers past the end, or asserts);
  * reorder_graph's 'src' / 'dst' sort is stable (edges to or from one node stay in the order DGL lists them
    before sorting); DGL's NumPy argsort is not, so its order among one node's edges depends on the CPU's sort
    kernel (AVX-512 machines reorder even a few ties). With store_ids=False DGL leaves its scratch edge feature
    '__orig__' on the result; here nothing is added;
  * reorder_graph's custom nodes_perm / edges_perm must be permutations of all the ids (DGL checks only
    nodes_perm's length, and drops or repeats edges for an edges_perm that is not one); 'metis' is a DGLError
    (it needs METIS, which Topograph does not have)."""
from __future__ import annotations

import torch

from ._base import EID, NID, DGLError
from ._external import _module
from ._graph import DGLGraph, _mp
from ._mutation import _on_device, _plain
from ._structure_ops import _homogeneous

NODE_PERMUTE_ALGOS = ("rcmk", "metis", "custom")
EDGE_PERMUTE_ALGOS = ("src", "dst", "custom")


def _tag_offsets(g: DGLGraph, tag, tag_type: str, rows_by_source: bool, what: str) -> torch.Tensor:
    """[rows, T + 1] of g's idtype, T = largest edge tag + 1: row i's edges (out-edges when rows_by_source, else
    in-edges) with tag j are its j-th group, at positions [offsets[i, j], offsets[i, j + 1]) of its edge list.
    A node tag is the tag of the edge's other end."""
    if len(g.canonical_etypes) != 1:
        raise DGLError(f"{what}: takes a graph of one relation (homogeneous or bipartite), got {g.canonical_etypes}")
    if tag_type not in ("node", "edge"):
        raise DGLError(f"{what}: tag_type must be 'node' or 'edge', got {tag_type!r}")
    stype, _, dtype = g.canonical_etypes[0]
    u, v = (t.to(torch.int64) for t in g.edges())
    rows, other = (u, v) if rows_by_source else (v, u)
    num_rows = g.num_nodes(stype if rows_by_source else dtype)
    expected = g.num_nodes(dtype if rows_by_source else stype) if tag_type == "node" else g.num_edges()
    tag = torch.as_tensor(tag)
    if tag.dtype.is_floating_point or tag.dtype.is_complex or tag.dtype == torch.bool or tag.dim() != 1:
        raise DGLError(f"{what}: tag must be a 1-D integer tensor, got {tag.dtype} of shape {tuple(tag.shape)}")
    if tag.shape[0] != expected:
        side = "edge" if tag_type == "edge" else ("destination" if rows_by_source else "source") + " node"
        raise DGLError(f"{what}: tag must hold one tag per {side} ({expected}), got {tag.shape[0]}")
    tag = tag.to(device=u.device, dtype=torch.int64)
    if tag.numel() and int(tag.min()) < 0:
        raise DGLError(f"{what}: tags must be >= 0, got {int(tag.min())}")
    edge_tag = tag[other] if tag_type == "node" else tag
    num_tags = int(edge_tag.max()) + 1 if edge_tag.numel() else 0
    counts = torch.bincount(rows * num_tags + edge_tag, minlength=num_rows * num_tags).view(num_rows, num_tags)
    offsets = torch.zeros(num_rows, num_tags + 1, dtype=torch.int64, device=u.device)
    offsets[:, 1:] = torch.cumsum(counts, 1)
    return offsets.to(g.idtype)


def sort_csr_by_tag(g: DGLGraph, tag, tag_offset_name: str = "_TAG_OFFSET", tag_type: str = "node") -> DGLGraph:
    """g's copy (its own feature dicts over the same tensors, as DGL's clone) with the source nodes' tag offsets
    [num_src, T + 1] as srcdata[tag_offset_name]: out-edges grouped by tag, the tag of a destination node [num_dst]
    or of an edge [E] (tag_type). These offsets are what DGL's tag-aware samplers read; see the module's note on
    the adjacency order."""
    offsets = _tag_offsets(g, tag, tag_type, True, "sort_csr_by_tag")
    new = g.clone()
    new.nodes[g.canonical_etypes[0][0]].data[tag_offset_name] = offsets
    return new


def sort_csc_by_tag(g: DGLGraph, tag, tag_offset_name: str = "_TAG_OFFSET", tag_type: str = "node") -> DGLGraph:
    """sort_csr_by_tag for in-edges: the destination nodes' offsets [num_dst, T + 1] as dstdata[tag_offset_name],
    a node tag being the source's [num_src]."""
    offsets = _tag_offsets(g, tag, tag_type, False, "sort_csc_by_tag")
    new = g.clone()
    new.nodes[g.canonical_etypes[0][2]].data[tag_offset_name] = offsets
    return new


def _rcmk_permutation(g: DGLGraph) -> torch.Tensor:
    """[N] int64: SciPy's reverse Cuthill-McKee order (neighbours close together, so the adjacency's band is
    narrow) of g's adjacency as DGL hands it over: one stored entry per edge (parallel edges repeated), each row
    by edge id, since SciPy's tie-breaks follow the stored entries."""
    _module("scipy")
    import numpy as np
    import scipy.sparse
    import scipy.sparse.csgraph

    indptr, indices, _ = (t.cpu().numpy() for t in g.adj_tensors("csr"))
    n = g.num_nodes()
    adjacency = scipy.sparse.csr_matrix((np.ones(indices.shape[0]), indices, indptr), shape=(n, n))
    return torch.from_numpy(scipy.sparse.csgraph.reverse_cuthill_mckee(adjacency).astype(np.int64))


def _permutation(g: DGLGraph, ids, count: int, what: str) -> torch.Tensor:
    """ids (a list or tensor) as int64 on g's device after checking they hold each of 0..count-1 once."""
    perm = g._checked_ids(ids, count, what)
    if perm.numel() != count or torch.unique(perm).numel() != count:
        raise DGLError(f"{what} must be a permutation of 0..{count - 1} (each id once), got {perm.numel()} ids "
                       f"with {torch.unique(perm).numel()} distinct")
    return perm.to(g.device)


def _config(permute_config, key: str, algo_argument: str):
    if permute_config is None or key not in permute_config:
        raise DGLError(f"reorder_graph: {algo_argument}='custom' needs permute_config[{key!r}]")
    return permute_config[key]


def reorder_graph(g: DGLGraph, node_permute_algo=None, edge_permute_algo: str = "src", store_ids: bool = True,
                  permute_config=None) -> DGLGraph:
    """A new graph (one graph, not a batch), nodes first renumbered (node_permute_algo: None keeps them; 'rcmk';
    'custom': permute_config['nodes_perm'], new node i being old node nodes_perm[i]), then edges reordered ('src' /
    'dst': by their new source / destination; 'custom': permute_config['edges_perm'], new edge i being g's edge
    edges_perm[i]). Features follow their nodes and edges; store_ids puts each one's id in g in ndata[NID] /
    edata[EID] (g's idtype). Locality orders like these make message passing read neighbours' rows close
    together.

    Edge order, as DGL's: renumbering nodes first lists the edges by new source, then edge id (DGL's
    node_subgraph); 'src' / 'dst' then sort that list stably."""
    _homogeneous(g, "reorder_graph")
    if node_permute_algo is not None and node_permute_algo not in NODE_PERMUTE_ALGOS:
        raise DGLError(f"reorder_graph: node_permute_algo must be None or one of {NODE_PERMUTE_ALGOS}, got "
                       f"{node_permute_algo!r}")
    if edge_permute_algo not in EDGE_PERMUTE_ALGOS:
        raise DGLError(f"reorder_graph: edge_permute_algo must be one of {EDGE_PERMUTE_ALGOS}, got "
                       f"{edge_permute_algo!r}")
    if node_permute_algo == "metis":
        raise DGLError("reorder_graph: node_permute_algo='metis' needs METIS graph partitioning, which Topograph "
                       "does not have; use 'rcmk' or 'custom'")
    n, e = g.num_nodes(), g.num_edges()
    u, v = (t.to(torch.int64) for t in g.edges())
    if node_permute_algo is None:
        nodes_perm, listed = torch.arange(n, device=g.device), torch.arange(e, device=g.device)
    else:
        if node_permute_algo == "rcmk":
            nodes_perm = _rcmk_permutation(g).to(g.device)
        else:
            nodes_perm = _permutation(g, _config(permute_config, "nodes_perm", "node_permute_algo"), n,
                                      "reorder_graph: permute_config['nodes_perm']")
        new_id = torch.empty_like(nodes_perm)
        new_id[nodes_perm] = torch.arange(n, device=g.device)
        u, v = new_id[u], new_id[v]
        listed = torch.sort(u, stable=True).indices
    if edge_permute_algo == "custom":
        edges_perm = _permutation(g, _config(permute_config, "edges_perm", "edge_permute_algo"), e,
                                  "reorder_graph: permute_config['edges_perm']")
    else:
        ends = u if edge_permute_algo == "src" else v
        edges_perm = listed[torch.sort(ends[listed], stable=True).indices]
    (ntype,), (relation,) = g._g.ntypes, [tuple(c) for c in g._g.canonical_etypes]
    new = _on_device(g, _plain([ntype], [relation], {ntype: n}, [(u[edges_perm], v[edges_perm])], g.idtype))
    _mp().carry_node_features(g, new, node_ids=None if node_permute_algo is None else {ntype: nodes_perm})
    _mp().carry_edge_features(g, new, [0], [edges_perm])
    if store_ids:
        new.ndata[NID] = nodes_perm.to(g.idtype)
        new.edata[EID] = edges_perm.to(g.idtype)
    return new


DGLGraph.reorder_graph = reorder_graph

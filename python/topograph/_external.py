"""Graphs to and from other libraries' formats, under DGL 2.1's names: from_scipy / bipartite_from_scipy (a SciPy
sparse matrix: entry (i, j) an edge i -> j), from_networkx / to_networkx, and a graph's adjacency matrix as a
torch sparse tensor or a SciPy matrix (adj_external) or as its COO / CSR / CSC tensors (adj_tensors).

SciPy and NetworkX are the caller's: imported only here, when one of these is called (a clear ImportError names
the one missing). Edge ids follow DGL's: a SciPy matrix's edges in its COO order (a CSR matrix row by row), a
NetworkX graph's in its edge iteration order (an undirected one made directed first, each edge both ways; or by
the integer edge attribute edge_id_attr_name), nodes relabelled 0..N-1 in sorted order."""
from __future__ import annotations

from typing import Optional, Sequence

import torch

from ._base import DGLError
from ._construct import graph, heterograph
from ._graph import DGLGraph, EType


def _module(name: str):
    try:
        return __import__(name)
    except ImportError as e:
        raise ImportError(f"topograph: this needs {name}, which is not installed (pip install {name})") from e


def _coo_of(sp_mat, what: str):
    """(row, col, data) of a SciPy sparse matrix in its COO order, as int64 / its values' tensors."""
    scipy = _module("scipy")
    import scipy.sparse  # noqa: F401 (scipy.sparse is a submodule)

    if not scipy.sparse.issparse(sp_mat):
        raise TypeError(f"{what}: expected a SciPy sparse matrix, got {type(sp_mat).__name__}")
    coo = sp_mat.tocoo()
    return (torch.as_tensor(coo.row, dtype=torch.int64), torch.as_tensor(coo.col, dtype=torch.int64),
            torch.as_tensor(coo.data))


def from_scipy(sp_mat, eweight_name: Optional[str] = None, idtype=None, device=None) -> DGLGraph:
    """dgl.from_scipy: a graph of N nodes from a square N x N SciPy sparse matrix, one edge i -> j per stored
    entry (i, j), edge ids in the matrix's COO order; eweight_name stores the entries' values as edata."""
    row, col, data = _coo_of(sp_mat, "from_scipy")
    if sp_mat.shape[0] != sp_mat.shape[1]:
        raise DGLError(f"from_scipy: the matrix must be square (N x N), got shape {tuple(sp_mat.shape)}: use "
                       f"bipartite_from_scipy for a graph of two node types")
    g = graph((row, col), num_nodes=int(sp_mat.shape[0]), idtype=idtype)
    if eweight_name is not None:
        g.edata[eweight_name] = data
    return g if device is None else g.to(device)


def bipartite_from_scipy(sp_mat, utype: str, etype: str, vtype: str, eweight_name: Optional[str] = None,
                         idtype=None, device=None) -> DGLGraph:
    """dgl.bipartite_from_scipy: an N x M matrix as N nodes of utype, M of vtype and an edge (utype, etype, vtype)
    i -> j per stored entry (i, j); eweight_name stores the values."""
    row, col, data = _coo_of(sp_mat, "bipartite_from_scipy")
    if utype == vtype:
        raise DGLError(f"bipartite_from_scipy: utype and vtype must differ, both are {utype!r}")
    g = heterograph({(utype, etype, vtype): (row, col)},
                    {utype: int(sp_mat.shape[0]), vtype: int(sp_mat.shape[1])}, idtype=idtype)
    if eweight_name is not None:
        g.edata[eweight_name] = data
    return g if device is None else g.to(device)


def _stacked(values: list, what: str) -> torch.Tensor:
    """NetworkX attribute values (tensors, numbers, lists) as one tensor, row i the i-th value."""
    if values and isinstance(values[0], torch.Tensor):
        return torch.stack(values, 0)
    try:
        return torch.tensor(values)
    except (TypeError, ValueError) as e:
        raise DGLError(f"from_networkx: {what} cannot make a tensor: {e}") from e


def handle_of_graph_data(data):
    """The store of DGLGraph(data), DGL's deprecated constructor (graphdata2tensors): None an empty graph, a
    networkx graph from_networkx's, a scipy sparse matrix from_scipy's (structure only, as DGL's), else
    graph(data)'s ((u, v) pairs)."""
    from ._construct import graph

    module = type(data).__module__ or ""
    if module.startswith("networkx"):
        return from_networkx(data)._g
    if module.startswith("scipy.sparse"):
        return from_scipy(data)._g
    return graph(([], []) if data is None else data)._g


def from_networkx(nx_graph, node_attrs: Optional[Sequence[str]] = None, edge_attrs: Optional[Sequence[str]] = None,
                  edge_id_attr_name: Optional[str] = None, idtype=None, device=None) -> DGLGraph:
    """dgl.from_networkx: nodes relabelled 0..N-1 in sorted order, then an undirected graph made directed (each
    edge both ways, NetworkX's to_directed; DGL refuses edge attributes there, these take each direction's),
    edges in NetworkX's order or, with edge_id_attr_name, each at the id its
    attribute gives (0..E-1, each once); node_attrs / edge_attrs copied into ndata / edata (every node / edge must
    have each)."""
    nx = _module("networkx")
    if not isinstance(nx_graph, nx.Graph):
        raise TypeError(f"from_networkx: expected a NetworkX graph, got {type(nx_graph).__name__}")
    nx_graph = nx.convert_node_labels_to_integers(nx_graph, ordering="sorted")  # then directed: DGL's edge order
    if not nx_graph.is_directed():
        nx_graph = nx_graph.to_directed()
    edges = _ordered_edges(nx_graph, edge_id_attr_name, "from_networkx")
    src = torch.tensor([u for u, _, _ in edges], dtype=torch.int64)
    dst = torch.tensor([v for _, v, _ in edges], dtype=torch.int64)
    g = graph((src, dst), num_nodes=nx_graph.number_of_nodes(), idtype=idtype)
    _node_attributes(g.ndata, nx_graph, range(g.num_nodes()), node_attrs, "from_networkx")
    _edge_attributes(g.edata, edges, edge_attrs, "from_networkx")
    return g if device is None else g.to(device)


def bipartite_from_networkx(nx_graph, utype: str, etype: str, vtype: str, u_attrs=None, e_attrs=None, v_attrs=None,
                            edge_id_attr_name: Optional[str] = None, idtype=None, device=None) -> DGLGraph:
    """dgl.bipartite_from_networkx: a directed NetworkX graph whose nodes carry 'bipartite' 0 (sources, type
    utype) or 1 (destinations, vtype), each side numbered in sorted node order; edges (utype, etype, vtype) in
    NetworkX's order or at their edge_id_attr_name ids; u_attrs / v_attrs / e_attrs copied as features."""
    nx = _module("networkx")
    if not isinstance(nx_graph, nx.Graph) or not nx_graph.is_directed():
        raise DGLError("bipartite_from_networkx: expected a directed NetworkX graph")
    sides = ([], [])
    for n, attrs in nx_graph.nodes(data=True):
        side = attrs.get("bipartite")
        if side not in (0, 1):
            raise DGLError(f"bipartite_from_networkx: node {n!r} needs attribute 'bipartite' 0 or 1, got {side!r}")
        sides[side].append(n)
    top, bottom = (sorted(nodes) for nodes in sides)
    top_id, bottom_id = {n: i for i, n in enumerate(top)}, {n: i for i, n in enumerate(bottom)}
    edges = _ordered_edges(nx_graph, edge_id_attr_name, "bipartite_from_networkx")
    wrong = [(u, v) for u, v, _ in edges if u not in top_id or v not in bottom_id]
    if wrong:
        raise DGLError(f"bipartite_from_networkx: edge {wrong[0]} does not go from a 'bipartite' 0 node to a 1 node")
    src = torch.tensor([top_id[u] for u, _, _ in edges], dtype=torch.int64)
    dst = torch.tensor([bottom_id[v] for _, v, _ in edges], dtype=torch.int64)
    g = heterograph({(utype, etype, vtype): (src, dst)}, {utype: len(top), vtype: len(bottom)}, idtype=idtype)
    _node_attributes(g.nodes[utype].data, nx_graph, top, u_attrs, "bipartite_from_networkx")
    _node_attributes(g.nodes[vtype].data, nx_graph, bottom, v_attrs, "bipartite_from_networkx")
    _edge_attributes(g.edata, edges, e_attrs, "bipartite_from_networkx")
    return g if device is None else g.to(device)


def _ordered_edges(nx_graph, edge_id_attr_name: Optional[str], what: str) -> list:
    """(u, v, attrs) of every edge, in NetworkX's order or each at the id its edge_id_attr_name gives."""
    edges = list(nx_graph.edges(data=True))
    order = list(range(len(edges)))
    if edge_id_attr_name is not None:
        ids = []
        for u, v, attrs in edges:
            if edge_id_attr_name not in attrs:
                raise DGLError(f"{what}: edge ({u}, {v}) has no attribute {edge_id_attr_name!r} (edge_id_attr_name)")
            ids.append(int(attrs[edge_id_attr_name]))
        if sorted(ids) != order:
            raise DGLError(f"{what}: the {edge_id_attr_name!r} attributes must number the {len(edges)} edges "
                           f"0..{len(edges) - 1}, each once")
        order = sorted(order, key=lambda i: ids[i])
    return [edges[i] for i in order]


def _node_attributes(frame, nx_graph, nodes, names, what: str) -> None:
    nodes = list(nodes)
    for name in names or []:
        missing = [n for n in nodes if name not in nx_graph.nodes[n]]
        if missing:
            raise DGLError(f"{what}: node {missing[0]!r} has no attribute {name!r}")
        frame[name] = _stacked([nx_graph.nodes[n][name] for n in nodes], f"node attribute {name!r}")


def _edge_attributes(frame, edges, names, what: str) -> None:
    for name in names or []:
        missing = [(u, v) for u, v, attrs in edges if name not in attrs]
        if missing:
            raise DGLError(f"{what}: edge {missing[0]} has no attribute {name!r}")
        frame[name] = _stacked([attrs[name] for _, _, attrs in edges], f"edge attribute {name!r}")


def to_networkx(g: DGLGraph, node_attrs: Optional[Sequence[str]] = None,
                edge_attrs: Optional[Sequence[str]] = None, ntype_attr: str = "ntype", etype_attr: str = "etype",
                eid_attr: str = "id"):
    """dgl.to_networkx of a graph of one node type and one relation: a NetworkX MultiDiGraph of nodes 0..N-1
    and one edge per edge, whose attribute 'id' is its edge id; node_attrs / edge_attrs copy those features'
    rows (tensors) onto the nodes / edges. ntype_attr / etype_attr / eid_attr name the type and edge-id
    attributes of a heterograph's conversion in DGL 2.1, which ignores them for a graph of one type (its edge id
    stays 'id'), the only graph converted here; so they are accepted and, as there, unused."""
    nx = _module("networkx")
    if not isinstance(g, DGLGraph) or g.is_block or not g.is_homogeneous:
        raise DGLError("to_networkx: only a graph of one node type and one relation"
                       + ("" if not isinstance(g, DGLGraph) else f" (this one has {g.canonical_etypes})"))
    out = nx.MultiDiGraph()
    out.add_nodes_from(range(g.num_nodes()))
    for n in range(g.num_nodes()):
        out.nodes[n].update({name: g.ndata[name][n] for name in node_attrs or []})
    u, v = (t.tolist() for t in g.edges())
    for e, (a, b) in enumerate(zip(u, v)):
        attrs = {"id": e}
        attrs.update({name: g.edata[name][e] for name in edge_attrs or []})
        out.add_edge(a, b, **attrs)
    return out


def adj_tensors(g: DGLGraph, fmt: str, etype: EType = None):
    """DGLGraph.adj_tensors: the relation's adjacency (rows: sources) as tensors of g's idtype: 'coo' (src, dst) by
    edge id; 'csr' (indptr, indices, edge ids) rows by source; 'csc' the same by destination (indices: sources);
    within a row, edges by edge id."""
    if fmt not in ("coo", "csr", "csc"):
        raise DGLError(f"adj_tensors: fmt must be 'coo', 'csr' or 'csc', got {fmt!r}")
    if fmt == "coo":
        return g.all_edges(form="uv", order="eid", etype=etype)
    return g._g.adjacency(g._relation(etype), fmt == "csr", True)  # the core's formats (built once), copied


def adj_external(g: DGLGraph, transpose: bool = False, ctx=torch.device("cpu"), scipy_fmt: Optional[str] = None,
                 etype: EType = None):
    """DGLGraph.adj_external: the relation's adjacency matrix [sources, destinations] (transpose: [destinations,
    sources]) with a 1 per edge (parallel edges summed where the format sums them), as a torch sparse COO tensor
    (float32, uncoalesced, on ctx: the CPU by default whatever g's device, as DGL 2.1's ctx=F.cpu(); None: g's
    device) or, with scipy_fmt 'coo' / 'csr' / 'csc', a SciPy matrix (int64, as DGL's: arithmetic on it then
    promotes as on DGL's, e.g. a degree normalisation comes out float64)."""
    relation = g.to_canonical_etype(etype)
    u, v = (t.to(device="cpu", dtype=torch.int64) for t in g.all_edges(form="uv", order="eid", etype=relation))
    shape = (g.num_src_nodes(relation[0]), g.num_dst_nodes(relation[2]))
    if transpose:
        u, v, shape = v, u, shape[::-1]
    if scipy_fmt is None:
        device = g.device if ctx is None else torch.device(ctx)
        return torch.sparse_coo_tensor(torch.stack([u, v]), torch.ones(u.numel()), shape).to(device)
    if scipy_fmt not in ("coo", "csr", "csc"):
        raise DGLError(f"adj_external: scipy_fmt must be None, 'coo', 'csr' or 'csc', got {scipy_fmt!r}")
    _module("scipy")
    import numpy as np
    import scipy.sparse

    matrix = scipy.sparse.coo_matrix((np.ones(u.numel(), dtype=np.int64), (u.numpy(), v.numpy())), shape=shape)
    return matrix.asformat(scipy_fmt)


def adj(g: DGLGraph, etype=None, eweight_name: Optional[str] = None):
    """DGL 2's g.adj(): the relation's adjacency as a topograph.sparse SparseMatrix [num_src, num_dst], one entry
    (u, v) per edge in edge-id order, values the edge feature `eweight_name` or ones."""
    from .sparse import spmatrix

    etype = g.to_canonical_etype(etype)
    u, v = g.all_edges(etype=etype)
    val = None
    if eweight_name is not None:
        data = g.edges[etype].data
        if eweight_name not in data:
            raise DGLError(f"adj: no edge feature {eweight_name!r} on {etype} (it has {sorted(data.keys())})")
        val = data[eweight_name]
    return spmatrix(torch.stack([u, v]), val, (g.num_nodes(etype[0]), g.num_nodes(etype[2])))


def adjacency_matrix(g: DGLGraph, etype=None):
    """DGL 2.1's alias of adj (no edge weights)."""
    return adj(g, etype)


def incidence_matrix(g: DGLGraph, typestr: str, ctx=torch.device("cpu"), etype=None) -> torch.Tensor:
    """DGL's g.inc / g.incidence_matrix: a torch sparse COO [nodes, E] of the relation (a relation between two node
    types: 'in' [num_dst, E], 'out' [num_src, E]): 'in' 1 at (v, e) for e = u -> v, 'out' 1 at (u, e), 'both'
    (one node type) -1 at (u, e) and +1 at (v, e), a self loop's two summing to 0; float32, on ctx (the CPU by
    default whatever g's device, as DGL 2.1's ctx=F.cpu(); ctx=None: g's device), coalesced as DGL's."""
    if typestr not in ("in", "out", "both"):
        raise DGLError(f"incidence_matrix: typestr must be 'in', 'out' or 'both', got {typestr!r}")
    etype = g.to_canonical_etype(etype)
    u, v = (t.to(torch.int64).cpu() for t in g.all_edges(etype=etype))
    eid = torch.arange(u.numel())
    if typestr == "both":
        if etype[0] != etype[2]:
            raise DGLError(f"incidence_matrix: 'both' needs one node type at both ends, got {etype}")
        index = torch.stack([torch.cat([u, v]), torch.cat([eid, eid])])
        values = torch.cat([-torch.ones(u.numel()), torch.ones(v.numel())])
        rows = g.num_nodes(etype[0])
    else:
        ends, ntype = (v, etype[2]) if typestr == "in" else (u, etype[0])
        index, values, rows = torch.stack([ends, eid]), torch.ones(u.numel()), g.num_nodes(ntype)
    matrix = torch.sparse_coo_tensor(index, values, (rows, u.numel())).coalesce()
    return matrix.to(g.device if ctx is None else torch.device(ctx))


# DGLGraph's methods of these names, as DGL's; set here to keep _graph.py small.
DGLGraph.inc = DGLGraph.incidence_matrix = incidence_matrix
DGLGraph.to_networkx = lambda self, *args, **kwargs: to_networkx(self, *args, **kwargs)
DGLGraph.adj_tensors = adj_tensors
DGLGraph.adj_external = adj_external
DGLGraph.adj = adj
DGLGraph.adjacency_matrix = adjacency_matrix

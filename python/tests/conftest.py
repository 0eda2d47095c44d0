"""Graphs with the awkward cases (multi-edges, self loops, isolated nodes, empty graphs) and plain-PyTorch
references for the ops: index_select / scatter (index_add, scatter_reduce) and a dense masked softmax."""
import math

import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch

torch.manual_seed(0)

# (src, dst, num_nodes): every graph has a node without in-edges and one without any edge.
GRAPHS = {
    # 0 -> 1 twice (multi-edge), self loops on 2 and 4, node 5 isolated, node 0 has no in-edges
    "multi_loop_isolated": ([0, 0, 1, 2, 2, 3, 4, 4, 3, 1], [1, 1, 2, 2, 0, 4, 4, 1, 1, 3], 6),
    # a denser random multigraph with some isolated nodes
    "random": (None, None, 17),
    # a single node with a self loop twice
    "loops_only": ([0, 0], [0, 0], 1),
    # nodes but no edges at all
    "no_edges": ([], [], 4),
}


def make_edges(name):
    src, dst, n = GRAPHS[name]
    if src is None:
        gen = torch.Generator().manual_seed(3)
        src = torch.randint(0, n - 3, (40,), generator=gen).tolist()  # the last 3 nodes have no out-edges
        dst = torch.randint(0, n - 2, (40,), generator=gen).tolist()  # the last 2 nodes have no in-edges
    return torch.tensor(src, dtype=torch.int64), torch.tensor(dst, dtype=torch.int64), n


@pytest.fixture(params=list(GRAPHS))
def graph_name(request):
    return request.param


@pytest.fixture(params=[torch.int32, torch.int64], ids=["int32", "int64"])
def idtype(request):
    return request.param


def build(name, idtype):
    src, dst, n = make_edges(name)
    g = topograph.graph((src.to(idtype), dst.to(idtype)), num_nodes=n)
    return g, src, dst, n



def typed_graph(lib=topograph, idtype=torch.int64):
    """Three node types (one without nodes), relations without edges, a multi-edge and a self loop, with node
    features "h" on the types with nodes and edge features "w" on the relations with edges; built by `lib`
    (topograph, or dgl in the DGL comparisons)."""
    ids = lambda x: torch.tensor(x, dtype=idtype)  # noqa: E731 (DGL wants the graph's idtype)
    g = lib.heterograph({("user", "follows", "user"): (ids([0, 1, 2, 2]), ids([1, 2, 2, 0])),
                         ("user", "plays", "game"): (ids([0, 0, 2]), ids([1, 1, 0])),
                         ("game", "won_by", "user"): (ids([]), ids([])),
                         ("game", "rated", "tag"): (ids([]), ids([]))},
                        num_nodes_dict={"user": 3, "game": 2, "tag": 0}, idtype=idtype)
    g.nodes["user"].data["h"] = torch.arange(6.0).view(3, 2)
    g.nodes["game"].data["h"] = -torch.arange(4.0).view(2, 2)
    g.edges["follows"].data["w"] = torch.arange(4.0)
    g.edges["plays"].data["w"] = torch.arange(3.0) + 10
    return g


def reviews_graph(lib=topograph):
    """users review items and items are reviewed by users (edge e of either the reverse of edge e of the other),
    users follow users; node features "h", the reviews' "stars". Built by `lib`, as typed_graph."""
    users, items = torch.tensor([0, 1, 2, 3, 3, 4, 0]), torch.tensor([1, 0, 1, 2, 0, 2, 2])
    g = lib.heterograph({("user", "reviews", "item"): (users, items),
                         ("item", "reviewed_by", "user"): (items, users),
                         ("user", "follows", "user"): (torch.tensor([0, 1, 2, 4]), torch.tensor([1, 2, 3, 0]))},
                        num_nodes_dict={"user": 5, "item": 3})
    g.nodes["user"].data["h"] = torch.arange(5.0)
    g.nodes["item"].data["h"] = -torch.arange(3.0)
    g.edges["reviews"].data["stars"] = torch.arange(7.0)
    return g

# --- references, in float64 with torch's own autograd
def dgl_pad(a, b):
    """DGL's reshape_lhs_rhs: 1s after the row dim so the trailing shapes align from the right."""
    if a.dim() == b.dim():
        return a, b
    nd = max(a.dim(), b.dim())
    pa = a.reshape((a.shape[0],) + (1,) * (nd - a.dim()) + tuple(a.shape[1:]))
    pb = b.reshape((b.shape[0],) + (1,) * (nd - b.dim()) + tuple(b.shape[1:]))
    return pa, pb


BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div}


def ref_gspmm(src, dst, num_dst, op, reduce, u, e):
    if op == "copy_lhs":
        msg = u.index_select(0, src)
    elif op == "copy_rhs":
        msg = e
    else:
        a, b = dgl_pad(u.index_select(0, src), e)
        msg = BINARY[op](a, b)
    shape = (num_dst,) + tuple(msg.shape[1:])
    idx = dst.view(-1, *([1] * (msg.dim() - 1))).expand_as(msg)
    if reduce in ("sum", "mean"):
        out = torch.zeros(shape, dtype=msg.dtype).index_add(0, dst, msg)
        if reduce == "mean":
            deg = torch.bincount(dst, minlength=num_dst).clamp(min=1).to(msg.dtype)
            out = out / deg.view(-1, *([1] * (msg.dim() - 1)))
        return out
    red = "amax" if reduce == "max" else "amin"
    out = torch.zeros(shape, dtype=msg.dtype).scatter_reduce(0, idx, msg, red, include_self=False)
    # rows without in-edges: dgl.ops gives -inf (max) / +inf (min)
    empty = torch.bincount(dst, minlength=num_dst) == 0
    return out.masked_fill(empty.view((-1,) + (1,) * (out.dim() - 1)), float("-inf" if reduce == "max" else "inf"))


def ref_gsddmm(src, dst, op, lhs, rhs, lt, rt):
    def pick(x, t):
        return x if t == "e" else x.index_select(0, src if t == "u" else dst)

    if op == "copy_lhs":
        return pick(lhs, lt)
    if op == "copy_rhs":
        return pick(rhs, rt)
    a, b = dgl_pad(pick(lhs, lt), pick(rhs, rt))
    if op == "dot":
        return (a * b).sum(-1, keepdim=True)
    return BINARY[op](a, b)


def ref_edge_softmax(src, dst, logits, norm_by="dst"):
    """Dense masked softmax over edges: edge e normalised over every edge f with the same destination (an
    [E, E] mask, so multi-edges and self loops are plain entries)."""
    key = dst if norm_by == "dst" else src
    mask = key.view(-1, 1) == key.view(1, -1)  # [E, E]
    flat = logits.reshape(logits.shape[0], math.prod(logits.shape[1:]))  # [E, C]
    scores = flat.unsqueeze(0).expand(flat.shape[0], -1, -1)  # [E(e), E(f), C]
    scores = scores.masked_fill(~mask.unsqueeze(-1), float("-inf"))
    out = flat - torch.logsumexp(scores, dim=1)
    return out.exp().reshape(logits.shape)


def ref_attention(src, dst, num_dst, q, k, v, scale):
    """The unfused attention from the references above: scores per edge, masked softmax, weighted sum."""
    scores = ref_gsddmm(src, dst, "dot", q, k, "v", "u") * scale  # [E, H, 1]
    return ref_gspmm(src, dst, num_dst, "mul", "sum", v, ref_edge_softmax(src, dst, scores))


def shared_data(relative: str):
    """A path inside ../shared/data beside the checkout. A missing data set fails the test that needs it (never a
    skip), as the C++ tests' shared_data_path does, in CI and in scripts/test.sh alike."""
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "data" / relative
    if not path.exists():
        pytest.fail(f"data set missing: {path} (the tests read ../shared/data beside the checkout)")
    return str(path)

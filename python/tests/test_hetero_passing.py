"""update_all and apply_edges with etype=None on a graph of several relations (topograph/_hetero_passing.py):
every relation at once, each destination type's relations combined by the reducer, against per-relation float64
references built from conftest's ref_gsddmm / ref_gspmm (values and gradients), and the errors for what DGL 2.1
does not take either. tests/test_against_dgl_hetero.py runs the same calls through DGL 2.1."""
import pytest
import torch

import topograph
import topograph.function as fn
from conftest import ref_gsddmm, ref_gspmm

TOL = dict(rtol=1e-4, atol=1e-4)  # float32 kernels against float64 references

# user 3 gets no message at all, game 1 none either; shop is no relation's destination (nor source)
RELATIONS = {("game", "attracts", "user"): ([0, 1, 1], [1, 1, 2]),
             ("user", "follows", "user"): ([0, 1, 1, 2, 2], [1, 2, 2, 2, 0]),  # a multi-edge, a self loop
             ("user", "plays", "game"): ([0, 2, 2], [0, 0, 0])}
COUNTS = {"game": 2, "shop": 1, "user": 4}
# built-in messages as (function name, lhs target, rhs target, gsddmm op)
MESSAGES = {"copy_u": ("u", None, "copy_lhs"), "copy_e": ("e", None, "copy_lhs"), "u_mul_e": ("u", "e", "mul"),
            "e_add_u": ("e", "u", "add"), "u_add_v": ("u", "v", "add"), "u_dot_v": ("u", "v", "dot"),
            "v_sub_e": ("v", "e", "sub")}


def hetero(with_empty_relation: bool = False, seed: int = 0):
    """RELATIONS as a graph, with float32 features: h [n, 2, 3] on every node type, w [E, 2, 1] on every relation.
    with_empty_relation adds ('user', 'owns', 'item'), no edges, into 2 items."""
    relations, counts = dict(RELATIONS), dict(COUNTS)
    if with_empty_relation:
        relations[("user", "owns", "item")], counts["item"] = ([], []), 2
    g = topograph.heterograph({k: (torch.tensor(u, dtype=torch.int64), torch.tensor(v, dtype=torch.int64))
                               for k, (u, v) in relations.items()}, counts)
    gen = torch.Generator().manual_seed(seed)
    for t in g.ntypes:
        g.nodes[t].data["h"] = torch.randn(g.num_nodes(t), 2, 3, generator=gen).requires_grad_()
    for c in g.canonical_etypes:
        g.edges[c].data["w"] = torch.randn(g.num_edges(c), 2, 1, generator=gen).requires_grad_()
    return g


def built_in(name: str, out: str = "m"):
    lhs, rhs, _ = MESSAGES[name]
    return getattr(fn, name)("h" if lhs in "uv" else "w", out) if rhs is None else \
        getattr(fn, name)("h" if lhs in "uv" else "w", "h" if rhs in "uv" else "w", out)


def leaves(g):
    """{('n', type) / ('e', relation): float64 copy of h / w} and the float32 leaves they copy."""
    ours = {("n", t): g.nodes[t].data["h"] for t in g.ntypes}
    ours.update({("e", c): g.edges[c].data["w"] for c in g.canonical_etypes})
    return ours, {k: v.detach().double().requires_grad_() for k, v in ours.items()}


def ref_messages(g, c, name, ref):
    """Relation c's messages [E, ...] of built-in `name` over the float64 leaves `ref`."""
    lhs, rhs, op = MESSAGES[name]
    s, _, d = c
    src, dst = (t.to(torch.int64) for t in g.edges(etype=c))
    operand = {"u": ref[("n", s)], "v": ref[("n", d)], "e": ref[("e", c)]}
    return ref_gsddmm(src, dst, op, operand[lhs], operand[rhs] if rhs else None, lhs, rhs or lhs)


def ref_update_all(g, name, reduce, ref):
    """{destination type: [n, ...]}: every relation's messages reduced per destination, the relations combined by
    the reducer, 0 for a node with no in-edge at all."""
    per_type = {}
    for c in g.canonical_etypes:
        src, dst = (t.to(torch.int64) for t in g.edges(etype=c))
        reduced = ref_gspmm(src, dst, g.num_nodes(c[2]), "copy_rhs", reduce, None, ref_messages(g, c, name, ref))
        per_type.setdefault(c[2], []).append(reduced)  # max / min: -inf / +inf where the relation sends nothing
    combine = {"sum": lambda v: v.sum(0), "max": lambda v: v.amax(0), "min": lambda v: v.amin(0)}[reduce]
    out = {t: combine(torch.stack(parts)) for t, parts in per_type.items()}
    return {t: v.masked_fill(v.isinf(), 0.0) for t, v in out.items()}


def assert_same_with_grads(got: dict, want: dict, ours: dict, ref: dict):
    assert sorted(got) == sorted(want)
    weights = {k: torch.randn(v.shape, dtype=torch.float64) for k, v in want.items()}
    for k in want:
        torch.testing.assert_close(got[k].double(), want[k], **TOL)
    keys = list(ours)
    grads = torch.autograd.grad(sum((got[k].double() * weights[k]).sum() for k in got), [ours[k] for k in keys],
                                allow_unused=True)
    refs = torch.autograd.grad(sum((want[k] * weights[k]).sum() for k in want), [ref[k] for k in keys],
                               allow_unused=True)
    for k, a, b in zip(keys, grads, refs):
        a = torch.zeros_like(ours[k]) if a is None else a
        b = torch.zeros_like(ref[k]) if b is None else b
        torch.testing.assert_close(a.double(), b, **TOL, msg=lambda m: f"gradient of {k}: {m}")


@pytest.mark.parametrize("reduce", ["sum", "max", "min"])
@pytest.mark.parametrize("message", list(MESSAGES))
def test_update_all_over_every_relation(message, reduce):
    g = hetero(with_empty_relation=True)
    ours, ref = leaves(g)
    shop_before = dict(g.nodes["shop"].data)
    g.update_all(built_in(message), getattr(fn, reduce)("m", "z"))
    got = {t: g.nodes[t].data["z"] for t in g.ntypes if "z" in g.nodes[t].data}
    want = ref_update_all(g, message, reduce, ref)
    # item is reached only by a relation without edges: zeros; shop by none: untouched
    assert sorted(got) == ["game", "item", "user"]
    assert dict(g.nodes["shop"].data) == shop_before
    assert_same_with_grads(got, want, ours, ref)
    assert "m" not in g.nodes["user"].data and all("m" not in g.edges[c].data for c in g.canonical_etypes)


def test_update_all_overwrites_and_applies_per_destination_type():
    g = hetero()
    ours, ref = leaves(g)
    want = ref_update_all(g, "copy_u", "sum", ref)
    g.update_all(fn.copy_u("h", "m"), fn.sum("m", "h"))  # in place of the feature it read, as DGL's
    for t in ("game", "user"):
        torch.testing.assert_close(g.nodes[t].data["h"].double(), want[t], **TOL)
    assert g.nodes["shop"].data["h"] is ours[("n", "shop")]

    g = hetero()
    ours, ref = leaves(g)
    # apply_node_func sees the combined result over the type's features; what it returns is stored instead
    g.update_all(fn.copy_u("h", "m"), fn.max("m", "z"), lambda nodes: {"y": nodes.data["z"] - nodes.data["h"]})
    want = {t: v - ref[("n", t)] for t, v in ref_update_all(g, "copy_u", "max", ref).items()}
    assert all("z" not in g.nodes[t].data for t in g.ntypes)
    assert "y" not in g.nodes["shop"].data
    assert_same_with_grads({t: g.nodes[t].data["y"] for t in ("game", "user")}, want, ours, ref)


def test_update_all_over_the_relations_of_a_block():
    g = hetero()
    block = topograph.to_block(g, {"user": torch.tensor([0, 1, 2, 3]), "game": torch.tensor([0, 1])})
    block.update_all(fn.u_mul_e("h", "w", "m"), fn.sum("m", "z"))
    expect = {t: torch.zeros(block.num_dst_nodes(t), 2, 3) for t in block.dsttypes}
    for c in block.canonical_etypes:  # each relation alone, summed per destination type
        expect[c[2]] = expect[c[2]] + topograph.ops.u_mul_e_sum(
            block[c], block.srcnodes[c[0]].data["h"], block.edges[c].data["w"])
    for t in ("game", "user"):
        torch.testing.assert_close(block.dstnodes[t].data["z"], expect[t])


def test_apply_edges_over_every_relation():
    for message in MESSAGES:
        g = hetero()
        ours, ref = leaves(g)
        g.apply_edges(built_in(message, "s"))
        got = {c: g.edges[c].data["s"] for c in g.canonical_etypes}
        assert_same_with_grads(got, {c: ref_messages(g, c, message, ref) for c in g.canonical_etypes}, ours, ref)


def test_what_several_relations_at_once_do_not_take():
    g = hetero()
    msg, red = fn.copy_u("h", "m"), fn.sum("m", "z")
    with pytest.raises(topograph.DGLError, match="built-in message and reduce functions only"):
        g.update_all(lambda edges: {"m": edges.src["h"]}, red)
    with pytest.raises(topograph.DGLError, match="built-in message and reduce functions only"):
        g.update_all(msg, lambda nodes: {"z": nodes.mailbox["m"].sum(1)})
    with pytest.raises(NotImplementedError, match="'mean' over several relations"):
        g.update_all(msg, fn.mean("m", "z"))
    with pytest.raises(topograph.DGLError, match="a built-in function only"):
        g.apply_edges(lambda edges: {"s": edges.src["h"]})
    with pytest.raises(topograph.DGLError, match=r"apply_edges: edges given on a graph of 3 relations"):
        g.apply_edges(fn.copy_u("h", "s"), edges=[0])
    for verb, call in {"send_and_recv": lambda: g.send_and_recv([0], msg, red),
                       "pull": lambda: g.pull([0], msg, red), "push": lambda: g.push([0], msg, red),
                       "filter_edges": lambda: g.filter_edges(lambda edges: edges.data["w"][:, 0, 0] > 0)}.items():
        with pytest.raises(topograph.DGLError, match=f"{verb}: the graph has 3 relations .* name one"):
            call()
    # a feature missing on one relation's source type: KeyError naming the type, and nothing is written
    del g.nodes["game"].data["h"]
    with pytest.raises(KeyError, match="nodes of 'game' has no feature 'h'"):
        g.update_all(msg, red)
    with pytest.raises(KeyError, match="nodes of 'game' has no feature 'h'"):
        g.apply_edges(fn.copy_u("h", "s"))
    assert all("z" not in g.nodes[t].data for t in g.ntypes)
    assert all("s" not in g.edges[c].data for c in g.canonical_etypes)
    # results of different row shapes into one type cannot be combined
    g.nodes["game"].data["h"] = torch.ones(2, 5)
    g.nodes["user"].data["h"] = torch.ones(4, 3)
    with pytest.raises(topograph.DGLError, match=r"'z' into 'user' has rows of shape \(5,\) from \('game', "
                                                 r"'attracts', 'user'\) but \(3,\) from \('user', 'follows'"):
        g.update_all(msg, red)


# --- topograph.ops.gspmm / gsddmm over several relations at once, as dgl.ops' tuples of per-type features
SPMM_OPS = ["add", "sub", "mul", "div", "copy_lhs", "copy_rhs"]
SDDMM_TARGETS = [("u", "v"), ("u", "e"), ("e", "v"), ("v", "u"), ("e", "u")]


def per_type_leaves(g, edge_width: int = 1, seed: int = 1):
    """(node features per g.ntypes, None for a type no relation reads; edge features per relation): float32
    leaves [n, 2, 3] / [E, 2, edge_width], divisors kept away from 0."""
    gen = torch.Generator().manual_seed(seed)
    sources = {s for s, _, _ in g.canonical_etypes} | {d for _, _, d in g.canonical_etypes}
    x = [(torch.rand(g.num_nodes(t), 2, 3, generator=gen) + 0.5).requires_grad_() if t in sources else None
         for t in g.ntypes]
    e = [(torch.rand(g.num_edges(c), 2, edge_width, generator=gen) + 0.5).requires_grad_()
         for c in g.canonical_etypes]
    return x, e


def doubled(tensors):
    return [None if t is None else t.detach().double().requires_grad_() for t in tensors]


def assert_tuples_match(got, want, ours, refs, gradients: bool = True, tol=TOL):
    """Equal values (infinities included) and, with gradients, equal gradients of one random weighting in the
    leaves ours / refs (the weight 0 on the infinite rows, where DGL 2.1 credits node 0)."""
    assert len(got) == len(want)
    loss_got = loss_want = 0.0
    for a, b in zip(got, want):
        torch.testing.assert_close(a.double(), b.double(), **tol)
        w = torch.randn(b.shape, dtype=torch.float64).masked_fill(b.isinf(), 0.0)
        loss_got = loss_got + (a.double().masked_fill(b.isinf(), 0.0) * w).sum()
        loss_want = loss_want + (b.double().masked_fill(b.isinf(), 0.0) * w).sum()
    if not gradients:
        return
    pairs = [(a, b) for a, b in zip(ours, refs) if a is not None]
    grads = torch.autograd.grad(loss_got, [a for a, _ in pairs], allow_unused=True)
    ref_grads = torch.autograd.grad(loss_want, [b for _, b in pairs], allow_unused=True)
    for (a, b), ga, gb in zip(pairs, grads, ref_grads):
        torch.testing.assert_close((torch.zeros_like(a) if ga is None else ga).double(),
                                   (torch.zeros_like(b) if gb is None else gb).double(), **tol)


@pytest.mark.parametrize("reduce", ["sum", "max", "min"])
@pytest.mark.parametrize("op", SPMM_OPS)
def test_gspmm_over_every_relation(op, reduce):
    g = hetero(with_empty_relation=True)
    x, e = per_type_leaves(g)
    xr, er = doubled(x), doubled(e)
    got = topograph.ops.gspmm(g, op, reduce, x if op != "copy_rhs" else None, e if op != "copy_lhs" else None)
    parts = {}
    for r, c in enumerate(g.canonical_etypes):
        (s, _, d), (src, dst) = c, (t.to(torch.int64) for t in g.edges(etype=c))
        parts.setdefault(d, []).append(ref_gspmm(src, dst, g.num_nodes(d), op, reduce, xr[g.ntypes.index(s)], er[r]))
    combine = {"sum": lambda v: v.sum(0), "max": lambda v: v.amax(0), "min": lambda v: v.amin(0)}[reduce]
    # one entry per node type: the destination types' results (item's from a relation without edges: 0 or
    # -inf / +inf), an empty tensor for shop, no relation's destination
    want = [combine(torch.stack(parts[t])) if t in parts else torch.zeros(0, dtype=torch.float64) for t in g.ntypes]
    assert isinstance(got, tuple) and [tuple(t.shape) for t in got] == [tuple(t.shape) for t in want]
    assert_tuples_match(got, want, x + e, xr + er)


@pytest.mark.parametrize("targets", SDDMM_TARGETS, ids=["".join(t) for t in SDDMM_TARGETS])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "dot", "copy_lhs", "copy_rhs"])
def test_gsddmm_over_every_relation(op, targets):
    g = hetero(with_empty_relation=True)
    x, e = per_type_leaves(g, edge_width=3)
    xr, er = doubled(x), doubled(e)
    lt, rt = targets
    got = topograph.ops.gsddmm(g, op, e if lt == "e" else x, e if rt == "e" else x, lt, rt)
    want = []
    for r, c in enumerate(g.canonical_etypes):
        (s, _, d), (src, dst) = c, (t.to(torch.int64) for t in g.edges(etype=c))
        operand = {"u": xr[g.ntypes.index(s)], "v": xr[g.ntypes.index(d)], "e": er[r]}
        want.append(ref_gsddmm(src, dst, op, operand[lt], operand[rt], lt, rt))
    assert isinstance(got, tuple) and len(got) == len(g.canonical_etypes)
    assert_tuples_match(got, want, x + e, xr + er)


def test_ops_over_several_relations_refuse_clearly():
    g = hetero()
    x, e = per_type_leaves(g)
    with pytest.raises(topograph.DGLError, match=r"gspmm: lhs_data: the graph has several relations, so give a "
                                                 r"tuple of one tensor \(or None\) per node type, in the order "
                                                 r"\['game', 'shop', 'user'\].*got Tensor"):
        topograph.ops.copy_u_sum(g, x[2])
    with pytest.raises(topograph.DGLError, match="per relation, in the order .*got 2 entries"):
        topograph.ops.copy_e_sum(g, e[:2])
    with pytest.raises(topograph.DGLError, match=r"gspmm: lhs_data: no tensor for 'game', which relation "
                                                 r"\('game', 'attracts', 'user'\) reads"):
        topograph.ops.u_mul_e_sum(g, [None, None, x[2]], e)
    with pytest.raises(topograph.DGLError, match=r"gsddmm: rhs_data: no tensor for \('user', 'plays', 'game'\)"):
        topograph.ops.u_add_e(g, x, e[:2] + [None])
    with pytest.raises(NotImplementedError, match="'mean' over several relations"):
        topograph.ops.copy_u_mean(g, x)
    block = topograph.to_block(g, {"user": torch.tensor([0, 1, 2, 3]), "game": torch.tensor([0, 1])})
    with pytest.raises(NotImplementedError, match="gspmm over several relations of a block"):
        topograph.ops.copy_u_sum(block, x)
    with pytest.raises(NotImplementedError, match="gsddmm over several relations of a block"):
        topograph.ops.copy_u(block, x)

"""Several relations at once against DGL 2.1 (skipped where dgl does not import): update_all / apply_edges with
etype=None on a heterograph, values and gradients, and the calls DGL 2.1 refuses, refused alike; gspmm / gsddmm
with tuples of per-type features; relation slices g[s, :, d] merging several relations. The graphs avoid
the cases where DGL 2.1 itself fails there (test_where_dgl_2_1_fails_over_several_relations), which topograph
runs."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch

import topograph.function as tfn
from test_hetero_passing import (COUNTS, MESSAGES, RELATIONS, SDDMM_TARGETS, SPMM_OPS, assert_tuples_match, hetero,
                                 per_type_leaves)
from test_slice import ANY, typed

dgl = pytest.importorskip("dgl")
dfn = pytest.importorskip("dgl.function")

TOL = dict(rtol=1e-4, atol=1e-5)


def both_graphs(seed: int = 0):
    """(topograph graph, DGL graph, [(topograph leaf, DGL leaf)]): test_hetero_passing's graph in both libraries,
    the same feature values in leaves of their own."""
    gt = hetero(seed=seed)
    gd = dgl.heterograph({k: (torch.tensor(u, dtype=torch.int64), torch.tensor(v, dtype=torch.int64))
                          for k, (u, v) in RELATIONS.items()}, COUNTS)
    assert gd.ntypes == gt.ntypes and gd.canonical_etypes == gt.canonical_etypes
    leaves = []
    for t in gt.ntypes:
        gd.nodes[t].data["h"] = gt.nodes[t].data["h"].detach().clone().requires_grad_()
        leaves.append((gt.nodes[t].data["h"], gd.nodes[t].data["h"]))
    for c in gt.canonical_etypes:
        gd.edges[c].data["w"] = gt.edges[c].data["w"].detach().clone().requires_grad_()
        leaves.append((gt.edges[c].data["w"], gd.edges[c].data["w"]))
    return gt, gd, leaves


def built_in(fn, name: str, out: str):
    lhs, rhs, _ = MESSAGES[name]
    field = {"u": "h", "v": "h", "e": "w", None: None}
    return getattr(fn, name)(field[lhs], out) if rhs is None else getattr(fn, name)(field[lhs], field[rhs], out)


def assert_same(outputs_t: dict, outputs_d: dict, leaves, gradients: bool = True):
    """The same outputs, and the same gradients of one random weighting of them in every leaf."""
    assert sorted(outputs_t) == sorted(outputs_d)
    loss_t = loss_d = 0.0
    for k in outputs_d:
        torch.testing.assert_close(outputs_t[k], outputs_d[k], **TOL)
    if not gradients:
        return
    for k in outputs_d:
        w = torch.randn(outputs_d[k].shape)
        loss_t, loss_d = loss_t + (outputs_t[k] * w).sum(), loss_d + (outputs_d[k] * w).sum()
    grads_t = torch.autograd.grad(loss_t, [a for a, _ in leaves], allow_unused=True)
    grads_d = torch.autograd.grad(loss_d, [b for _, b in leaves], allow_unused=True)
    for (a, _), ga, gb in zip(leaves, grads_t, grads_d):
        torch.testing.assert_close(ga if ga is not None else torch.zeros_like(a),
                                   gb if gb is not None else torch.zeros_like(a), **TOL)


@pytest.mark.parametrize("reduce", ["sum", "max", "min"])
@pytest.mark.parametrize("message", list(MESSAGES))
def test_update_all_over_every_relation_matches_dgl(message, reduce):
    gt, gd, leaves = both_graphs()
    gt.update_all(built_in(tfn, message, "m"), getattr(tfn, reduce)("m", "z"))
    gd.update_all(built_in(dfn, message, "m"), getattr(dfn, reduce)("m", "z"))
    for t in gd.ntypes:  # the same names on every type: shop, no relation's destination, gets nothing
        assert sorted(gt.nodes[t].data) == sorted(gd.nodes[t].data)
    # DGL 2.1's backward of a u_mul_e max / min over several relations fails (test_where_dgl_2_1_fails_...)
    dgl_backward_works = not (message == "u_mul_e" and reduce in ("max", "min"))
    assert_same({t: gt.nodes[t].data["z"] for t in gt.ntypes if "z" in gt.nodes[t].data},
                {t: gd.nodes[t].data["z"] for t in gd.ntypes if "z" in gd.nodes[t].data}, leaves,
                gradients=dgl_backward_works)


@pytest.mark.parametrize("message", list(MESSAGES))
def test_apply_edges_over_every_relation_matches_dgl(message):
    gt, gd, leaves = both_graphs()
    gt.apply_edges(built_in(tfn, message, "s"))
    gd.apply_edges(built_in(dfn, message, "s"))
    assert_same({c: gt.edges[c].data["s"] for c in gt.canonical_etypes},
                {c: gd.edges[c].data["s"] for c in gd.canonical_etypes}, leaves)


def test_several_relations_at_once_refused_as_dgl():
    gt, gd, _ = both_graphs()
    for g, fn, library_error in ((gt, tfn, topograph.DGLError), (gd, dfn, dgl.DGLError)):
        msg, red = fn.copy_u("h", "m"), fn.sum("m", "z")
        with pytest.raises(library_error):
            g.update_all(lambda edges: {"m": edges.src["h"]}, red)
        with pytest.raises(library_error):
            g.update_all(msg, lambda nodes: {"z": nodes.mailbox["m"].sum(1)})
        with pytest.raises(NotImplementedError):
            g.update_all(msg, fn.mean("m", "z"))
        with pytest.raises(library_error):
            g.apply_edges(lambda edges: {"s": edges.src["h"]})
        for call in (lambda: g.send_and_recv([0], msg, red), lambda: g.pull([0], msg, red),
                     lambda: g.push([0], msg, red)):
            with pytest.raises(library_error):
                call()


def test_where_dgl_2_1_fails_over_several_relations():
    """What README states of DGL 2.1 here: it hands apply_node_func the per-type tuple, has no backward for a
    u_mul_e max / min, its kernel refuses a relation without edges, and it indexes the edge features by the first
    relation's destination type (IndexError when that type's index is not below the number of relations);
    topograph runs all four (test_hetero_passing.py checks the values and gradients)."""
    _, gd, _ = both_graphs()
    with pytest.raises(TypeError):
        gd.update_all(dfn.copy_u("h", "m"), dfn.sum("m", "z"), lambda nodes: {"y": nodes.data["z"] + 1})
    gd.update_all(dfn.u_mul_e("h", "w", "m"), dfn.max("m", "z"))
    with pytest.raises(AttributeError):
        gd.nodes["user"].data["z"].sum().backward()
    gd = dgl.heterograph({**{k: (torch.tensor(u), torch.tensor(v)) for k, (u, v) in RELATIONS.items()},
                          ("user", "owns", "item"): (torch.tensor([], dtype=torch.int64),
                                                     torch.tensor([], dtype=torch.int64))}, {**COUNTS, "item": 2})
    for t in gd.ntypes:
        gd.nodes[t].data["h"] = torch.ones(gd.num_nodes(t), 2)
    with pytest.raises(dgl.DGLError):
        gd.update_all(dfn.copy_u("h", "m"), dfn.sum("m", "z"))
    gt = hetero(with_empty_relation=True)
    gt.update_all(tfn.copy_u("h", "m"), tfn.sum("m", "z"))
    assert torch.equal(gt.nodes["item"].data["z"], torch.zeros(2, 2, 3))
    # ('a', 'r', 'z') is relation 0, its destination type z has index 2, and there are 2 relations
    relations = {("a", "r", "z"): (torch.tensor([0, 1]), torch.tensor([0, 0])),
                 ("b", "s", "a"): (torch.tensor([0]), torch.tensor([1]))}
    gd, gt = dgl.heterograph(relations), topograph.heterograph(relations)
    for g in (gd, gt):
        g.nodes["a"].data["h"], g.nodes["b"].data["h"] = torch.tensor([1.0, 2.0]), torch.tensor([5.0])
    with pytest.raises(IndexError):
        gd.update_all(dfn.copy_u("h", "m"), dfn.sum("m", "z"))
    gt.update_all(tfn.copy_u("h", "m"), tfn.sum("m", "z"))
    assert gt.nodes["z"].data["z"].tolist() == [3.0] and gt.nodes["a"].data["z"].tolist() == [0.0, 5.0]


def copies(tensors):
    return [None if t is None else t.detach().clone().requires_grad_() for t in tensors]


# DGL 2.1's gspmm backward over several relations runs for these; for a binary op under max / min it fails inside
# DGL (TypeError / AttributeError), so only the values are compared there
DGL_SPMM_BACKWARD = {(op, "sum") for op in SPMM_OPS} | {(op, r) for op in ("copy_lhs", "copy_rhs") for r in ("max", "min")}


@pytest.mark.parametrize("reduce", ["sum", "max", "min"])
@pytest.mark.parametrize("op", SPMM_OPS)
def test_gspmm_over_every_relation_matches_dgl(op, reduce):
    gt, gd, _ = both_graphs()
    x, e = per_type_leaves(gt)  # None for shop, which no relation reads (DGL 2.1's backward fails on a tensor there)
    xd, ed = copies(x), copies(e)
    got = topograph.ops.gspmm(gt, op, reduce, x if op != "copy_rhs" else None, e if op != "copy_lhs" else None)
    want = dgl.ops.gspmm(gd, op, reduce, xd if op != "copy_rhs" else None, ed if op != "copy_lhs" else None)
    assert_tuples_match(got, want, x + e, xd + ed, gradients=(op, reduce) in DGL_SPMM_BACKWARD, tol=TOL)


@pytest.mark.parametrize("targets", SDDMM_TARGETS, ids=["".join(t) for t in SDDMM_TARGETS])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "dot", "copy_lhs", "copy_rhs"])
def test_gsddmm_over_every_relation_matches_dgl(op, targets):
    gt, gd, _ = both_graphs()
    x, e = per_type_leaves(gt, edge_width=3)
    xd, ed = copies(x), copies(e)
    lt, rt = targets
    got = topograph.ops.gsddmm(gt, op, e if lt == "e" else x, e if rt == "e" else x, lt, rt)
    want = dgl.ops.gsddmm(gd, op, ed if lt == "e" else xd, ed if rt == "e" else xd, lt, rt)
    assert_tuples_match(got, want, x + e, xd + ed, tol=TOL)


def test_shorthands_over_every_relation_match_dgl():
    gt, gd, _ = both_graphs()
    x, e = per_type_leaves(gt)
    for name in ("copy_u_sum", "copy_e_max", "u_mul_e_sum", "u_add_e_min"):
        args = {"copy_u_sum": (x,), "copy_e_max": (e,)}.get(name, (x, e))
        assert_tuples_match(getattr(topograph.ops, name)(gt, *args), getattr(dgl.ops, name)(gd, *args), [], [],
                            gradients=False, tol=TOL)
    for name in ("copy_u", "u_dot_v", "e_sub_v"):
        args = {"copy_u": (x,), "u_dot_v": (x, x)}.get(name, ([t[:, :, :1] for t in e], x))
        assert_tuples_match(getattr(topograph.ops, name)(gt, *args), getattr(dgl.ops, name)(gd, *args), [], [],
                            gradients=False, tol=TOL)


def assert_same_slice(t, d):
    """The same types, edges (and dtypes) and features (names in DGL's order, values, dtypes) on both sides."""
    assert (t.ntypes, t.srctypes, t.dsttypes, t.canonical_etypes, t.idtype, t.is_block) == \
        (d.ntypes, d.srctypes, d.dsttypes, d.canonical_etypes, d.idtype, d.is_block)
    for a, b in zip(t.edges(), d.edges()):
        assert a.dtype == b.dtype and a.tolist() == b.tolist()
    for ours, theirs in ((t.srcdata, d.srcdata), (t.dstdata, d.dstdata), (t.edata, d.edata)):
        assert list(ours) == list(theirs)
        for name in theirs:
            assert ours[name].dtype == theirs[name].dtype
            torch.testing.assert_close(ours[name], theirs[name])


@pytest.mark.parametrize("idtype", [torch.int32, torch.int64], ids=["int32", "int64"])
@pytest.mark.parametrize("key", [("A1", ANY, "B"), (ANY, "AB2", ANY), "AB2", ("B", ANY, "B"), (ANY, ANY, ANY),
                                 (ANY, ANY, "B")], ids=["A1_any_B", "any_AB2_any", "AB2", "B_any_B", "any", "any_B"])
def test_merged_relation_slices_match_dgl(key, idtype):
    assert_same_slice(typed(topograph, idtype)[key], typed(dgl, idtype)[key])


def test_merged_relation_slices_of_a_block_match_dgl():
    blocks = [lib.to_block(typed(lib), {"B": torch.arange(7), "A1": torch.arange(4)}) for lib in (topograph, dgl)]
    for key in (("A1", ANY, "B"), (ANY, ANY, "B"), ("B", ANY, ANY), (ANY, ANY, ANY)):
        assert_same_slice(blocks[0][key], blocks[1][key])


def test_relation_slices_refused_as_dgl():
    g_t, g_d = typed(topograph), typed(dgl)
    g_t.nodes["A2"].data["only_a1"] = g_d.nodes["A2"].data["only_a1"] = torch.ones(6, 2)
    for key in (("C", ANY, ANY), "nope", (slice(0, 1), "AB1", "B"), ("A1", "B"), (ANY, "AB2", ANY)):
        with pytest.raises(topograph.DGLError):
            g_t[key]
        with pytest.raises(dgl.DGLError):
            g_d[key]

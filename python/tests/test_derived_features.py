"""Features carried into derived graphs as DGL carries them: batch concatenates (and checks the members agree),
unbatch splits, reverse keeps node features (edge features on request), add_self_loop fills the loops' edge
rows with fill_data, remove_self_loop keeps the other edges' rows, to(device) moves them."""
import pytest
import torch

import topograph


def small(n_nodes, edges, feat_dim=2, seed=0):
    torch.manual_seed(seed)
    u, v = zip(*edges)
    g = topograph.graph((torch.tensor(u), torch.tensor(v)), num_nodes=n_nodes)
    g.ndata["x"] = torch.randn(n_nodes, feat_dim)
    g.edata["w"] = torch.randn(len(edges), 1)
    return g


def test_batch_concatenates_and_unbatch_splits():
    a, b = small(3, [(0, 1), (1, 2)], seed=1), small(2, [(1, 0)], seed=2)
    bg = topograph.batch([a, b])
    torch.testing.assert_close(bg.ndata["x"], torch.cat([a.ndata["x"], b.ndata["x"]]))
    torch.testing.assert_close(bg.edata["w"], torch.cat([a.edata["w"], b.edata["w"]]))
    assert "x" not in topograph.batch([a, b], ndata=None).ndata
    assert list(topograph.batch([a, b], ndata=["x"], edata=[]).edata) == []
    a2, b2 = topograph.unbatch(bg)
    torch.testing.assert_close(a2.ndata["x"], a.ndata["x"])
    torch.testing.assert_close(b2.edata["w"], b.edata["w"])
    # gradients flow back to each member's tensors
    x = torch.randn(3, 2, requires_grad=True)
    a.ndata["x"] = x
    topograph.batch([a, b]).ndata["x"].sum().backward()
    assert x.grad is not None and x.grad.eq(1).all()


def test_batch_members_must_agree_and_empty_ones_are_not_asked():
    a, b = small(3, [(0, 1)]), small(2, [(1, 0)])
    b.ndata["y"] = torch.zeros(2, 1)
    with pytest.raises(ValueError, match=r"graph 1's nodes\['_N'\].data has features \['x', 'y'\]"):
        topograph.batch([a, b])
    assert list(topograph.batch([a, b], ndata=["x"]).ndata) == ["x"]
    b.ndata["x"] = torch.zeros(2, 5)
    with pytest.raises(ValueError, match="per row"):
        topograph.batch([a, b], ndata=["x"])
    with pytest.raises(ValueError, match="no feature 'z'"):
        topograph.batch([a, small(2, [(1, 0)])], ndata=["z"])
    with pytest.raises(TypeError, match="ndata must be"):
        topograph.batch([a], ndata="x")
    empty = topograph.graph((torch.tensor([], dtype=torch.int64), torch.tensor([], dtype=torch.int64)), num_nodes=0)
    bg = topograph.batch([a, empty, small(2, [(1, 0)])])  # a member without nodes has no features: fine (DGL)
    assert bg.ndata["x"].shape == (5, 2)


def test_reverse_add_and_remove_self_loop_and_to_carry_features():
    g = small(3, [(0, 1), (1, 1), (2, 0)])
    r = g.reverse()
    assert r.ndata["x"] is g.ndata["x"] and "w" not in r.edata
    torch.testing.assert_close(g.reverse(copy_edata=True).edata["w"], g.edata["w"])  # same edge ids
    looped = topograph.add_self_loop(g, fill_data=0.5)
    torch.testing.assert_close(looped.edata["w"], torch.cat([g.edata["w"], torch.full((3, 1), 0.5)]))
    assert looped.ndata["x"] is g.ndata["x"]
    kept = topograph.remove_self_loop(g)
    torch.testing.assert_close(kept.edata["w"], g.edata["w"][[0, 2]])
    moved = g.to("cpu")
    torch.testing.assert_close(moved.ndata["x"], g.ndata["x"])


def test_add_self_loop_in_a_batch_puts_each_graphs_loops_after_its_edges():
    a, b = small(2, [(0, 1)], seed=3), small(3, [(1, 0), (2, 1)], seed=4)
    looped = topograph.add_self_loop(topograph.batch([a, b]))
    expect = torch.cat([a.edata["w"], torch.ones(2, 1), b.edata["w"], torch.ones(3, 1)])
    torch.testing.assert_close(looped.edata["w"], expect)
    u, v = looped.all_edges()
    assert u[1:3].tolist() == [0, 1] and v[1:3].tolist() == [0, 1]  # graph 0's loops follow its edge
    for member, original in zip(topograph.unbatch(looped), [a, b]):
        torch.testing.assert_close(member.ndata["x"], original.ndata["x"])

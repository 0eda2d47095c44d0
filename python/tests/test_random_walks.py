"""dgl.sampling.random_walk, node2vec_random_walk and pack_traces (_random_walks.py): every step an out-edge of the step's relation,
uniform or in proportion to prob, stopped walks padded with -1 (dead ends, restart_prob), metapaths over node
types, the laws against their expected frequencies, and clean errors."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch

from topograph.sampling import node2vec_random_walk, pack_traces, random_walk


def check_walks(g, traces, eids, relations):
    """Each step of each trace is the edge eids names, of the step's relation; -1 only as a tail."""
    for i, relation in enumerate(relations):
        u, v = g.edges(etype=relation)
        live = traces[:, i + 1] >= 0
        assert torch.equal(live, eids[:, i] >= 0)
        assert bool((traces[live, i] >= 0).all())  # a live step leaves from a live node
        e = eids[live, i].to(torch.int64)
        assert torch.equal(u[e].to(torch.int64), traces[live, i].to(torch.int64))
        assert torch.equal(v[e].to(torch.int64), traces[live, i + 1].to(torch.int64))
        if i + 1 < len(relations):  # once stopped, stopped
            assert bool((traces[~live, i + 2] == -1).all())


def test_uniform_and_weighted_steps_follow_their_laws():
    star = topograph.graph(([0, 0, 0, 0, 1, 2, 3, 4], [1, 2, 3, 4, 0, 0, 0, 0]))
    torch.manual_seed(0)
    n = 8000
    traces, eids, types = random_walk(star, torch.zeros(n, dtype=torch.int64), length=3, return_eids=True)
    check_walks(star, traces, eids, [star.canonical_etypes[0]] * 3)
    assert types.tolist() == [0, 0, 0, 0] and traces.shape == (n, 4)
    counts = torch.bincount(traces[:, 1], minlength=5)  # one of four leaves, each 1/4: sd ~39
    assert counts[0] == 0 and (counts[1:] - n / 4).abs().max() < 200
    assert bool((traces[:, 2] == 0).all())
    star.edata["p"] = torch.tensor([1.0, 2.0, 3.0, 0.0, 1.0, 1.0, 1.0, 1.0])
    traces, eids, _ = random_walk(star, torch.zeros(n, dtype=torch.int64), length=1, prob="p", return_eids=True)
    counts = torch.bincount(traces[:, 1], minlength=5)
    assert counts[4] == 0 and counts[0] == 0
    for leaf, share in ((1, 1 / 6), (2, 2 / 6), (3, 3 / 6)):
        assert abs(counts[leaf] - n * share) < 250


def test_walks_stop_at_dead_ends_and_by_restart_prob():
    chain = topograph.graph(([0, 1, 2], [1, 2, 3]), num_nodes=5)  # 3 and 4 have no out-edge
    traces, types = random_walk(chain, [0, 2, 4], length=3)
    assert traces.tolist() == [[0, 1, 2, 3], [2, 3, -1, -1], [4, -1, -1, -1]]
    assert random_walk(chain, [0, 1], length=3, restart_prob=torch.ones(3))[0][:, 1:].eq(-1).all()
    traces, _ = random_walk(chain, [0, 1], length=3, restart_prob=torch.tensor([0.0, 1.0, 0.0]))
    assert traces.tolist() == [[0, 1, -1, -1], [1, 2, -1, -1]]
    torch.manual_seed(1)
    traces, _ = random_walk(topograph.graph(([0], [0])), torch.zeros(4000, dtype=torch.int64), length=2,
                            restart_prob=0.25)  # a self loop: stopped only by the restart
    assert abs(int((traces[:, 1] == -1).sum()) - 1000) < 120 and bool((traces[traces[:, 1] == -1, 2] == -1).all())
    traces, _ = random_walk(chain.int(), [0], length=2)
    assert traces.dtype == torch.int32 and traces.tolist() == [[0, 1, 2]]


def test_metapaths_walk_over_node_types():
    h = topograph.heterograph({("user", "follow", "user"): ([0, 1, 1, 2, 3], [1, 2, 3, 0, 0]),
                               ("user", "view", "item"): ([0, 0, 1, 2, 3, 3], [0, 1, 1, 2, 2, 1]),
                               ("item", "viewed-by", "user"): ([0, 1, 1, 2, 2, 1], [0, 0, 1, 2, 3, 3])})
    metapath = ["follow", "view", "viewed-by"] * 2
    torch.manual_seed(2)
    traces, eids, types = random_walk(h, torch.arange(4).repeat(50), metapath=metapath, return_eids=True)
    check_walks(h, traces, eids, [h.to_canonical_etype(e) for e in metapath])
    user, item = h.ntypes.index("user"), h.ntypes.index("item")
    assert types.tolist() == [user, user, item, user, user, item, user]
    vids, vtypes, lengths, offsets = pack_traces(traces, types)
    assert int(lengths.sum()) == vids.numel() == vtypes.numel() and int((traces >= 0).sum()) == vids.numel()
    for row in (0, 7, 199):
        kept = traces[row][traces[row] >= 0]
        assert torch.equal(vids[offsets[row]:offsets[row] + lengths[row]], kept)
        assert torch.equal(vtypes[offsets[row]:offsets[row] + lengths[row]], types[:kept.numel()])


def test_random_walk_errors_name_the_argument():
    h = topograph.heterograph({("user", "follow", "user"): ([0, 1], [1, 0]), ("user", "view", "item"): ([0], [0])})
    g = topograph.graph(([0, 1], [1, 2]))
    with pytest.raises(topograph.DGLError, match="needs a metapath"):
        random_walk(h, [0], length=2)
    with pytest.raises(topograph.DGLError, match="step 1 .* does not start where step 0"):
        random_walk(h, [0], metapath=["view", "follow"])
    with pytest.raises(topograph.DGLError, match="give length or metapath, not both"):
        random_walk(g, [0], metapath=["_E"], length=1)
    with pytest.raises(topograph.DGLError, match="give length"):
        random_walk(g, [0])
    with pytest.raises(ValueError, match="node id 7 out of range"):
        random_walk(g, [7], length=1)
    with pytest.raises(topograph.DGLError, match="prob names 'w', no edge feature"):
        random_walk(g, [0], length=1, prob="w")
    g.edata["w"] = torch.tensor([1.0, -1.0])
    with pytest.raises(topograph.DGLError, match="prob feature 'w' .* finite and >= 0"):
        random_walk(g, [0], length=1, prob="w")
    with pytest.raises(topograph.DGLError, match=r"restart_prob must be a float or hold one value per step \(2\)"):
        random_walk(g, [0], length=2, restart_prob=[0.1, 0.2, 0.3])
    with pytest.raises(topograph.DGLError, match="restart_prob values must be in"):
        random_walk(g, [0], length=1, restart_prob=1.5)
    with pytest.raises(topograph.DGLError, match="traces .* and types"):
        pack_traces(torch.zeros(2, 3, dtype=torch.int64), torch.zeros(2, dtype=torch.int64))


def test_node2vec_walks_follow_the_return_and_in_out_biases():
    # a triangle 0-1-2 and a tail 2-3, both ways: after 1 -> 2 the next is 1 (return: 1/p), 0 (a neighbour of 1:
    # 1) or 3 (two steps from 1: 1/q), in those proportions
    g = topograph.to_bidirected(topograph.graph(([0, 1, 2, 2], [1, 2, 0, 3])))
    torch.manual_seed(3)
    n = 12000
    for p, q in ((1.0, 1.0), (0.5, 2.0), (4.0, 0.25)):
        traces, eids = node2vec_random_walk(g, torch.ones(n, dtype=torch.int64), p, q, 3, return_eids=True)
        check_walks(g, traces, eids, [g.canonical_etypes[0]] * 3)
        via = traces[:, 1] == 2
        share = torch.bincount(traces[via, 2], minlength=4).double() / int(via.sum())
        want = torch.tensor([1.0, 1 / p, 0.0, 1 / q], dtype=torch.float64)
        assert (share - want / want.sum()).abs().max() < 0.025, (p, q, share)
    chain = topograph.graph(([0, 1], [1, 2]), num_nodes=3)  # 2 is a dead end
    assert node2vec_random_walk(chain, [0], 1.0, 1.0, 3).tolist() == [[0, 1, 2, -1]]
    with pytest.raises(topograph.DGLError, match="q must be a number > 0, got 0"):
        node2vec_random_walk(chain, [0], 1.0, 0, 2)


def test_prob_running_sums_follow_the_feature():
    """The running sums are kept between calls (random_walk's cost on large graphs), so a change to the weights
    (in place, a new tensor) or to the structure must be seen by the next call."""
    g = topograph.graph((torch.tensor([0, 0, 1, 2]), torch.tensor([1, 2, 0, 0])), num_nodes=3)
    g.edata["p"] = torch.tensor([1.0, 0.0, 1.0, 1.0])
    starts = torch.zeros(200, dtype=torch.int64)
    first = lambda: topograph.sampling.random_walk(g, starts, length=1, prob="p")[0][:, 1]  # noqa: E731
    assert set(first().tolist()) == {1}
    g.edata["p"][0], g.edata["p"][1] = 0.0, 1.0  # in place
    assert set(first().tolist()) == {2}
    g.edata["p"] = torch.tensor([1.0, 1.0, 1.0, 1.0])  # a new tensor
    assert set(first().tolist()) == {1, 2}
    g.remove_edges(torch.tensor([1]))  # the structure: 0 -> 2 gone
    assert set(first().tolist()) == {1}

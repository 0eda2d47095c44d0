"""Neighbour sampling and neighbour-sampled mini-batches, as dgl.sampling / dgl.dataloading: each seed keeps
min(fanout, in-degree) distinct in-edges of the graph; the draws follow torch's generator (or `seed`); blocks
per layer chain (a layer's sources are the next one's destinations), carry features and the graph's edge ids;
a 2-layer GraphSAGE-style mean over the blocks equals the same mean over the sampled edges."""
import pytest
import torch

import topograph
import topograph.function as fn
from topograph.dataloading import DataLoader, MultiLayerNeighborSampler
from topograph.sampling import sample_neighbors

NID, EID = topograph.NID, topograph.EID


def ring_with_chords(n=30):
    src = list(range(n)) + [(i * 7) % n for i in range(n)] + [0] * 5
    dst = [(i + 1) % n for i in range(n)] + [(i * 3 + 1) % n for i in range(n)] + [5] * 5  # node 5: in-degree 7+
    g = topograph.graph((torch.tensor(src), torch.tensor(dst)), num_nodes=n)
    g.ndata["x"] = torch.randn(n, 4)
    g.edata["w"] = torch.arange(float(len(src))).unsqueeze(1)
    return g


def test_sample_neighbors_fanout_edges_and_features():
    g = ring_with_chords()
    u, v = g.all_edges()
    seeds = torch.tensor([5, 1, 12])
    f = sample_neighbors(g, seeds, 3, seed=1)
    assert f.num_nodes() == g.num_nodes() and torch.equal(f.ndata["x"], g.ndata["x"])
    fu, fv = f.all_edges()
    eid = f.edata[EID]
    assert torch.equal(u[eid], fu) and torch.equal(v[eid], fv)      # real edges, with their ids in g
    assert torch.equal(f.edata["w"].flatten(), eid.float())            # their features
    degrees = g.in_degrees(seeds)
    for s, d in zip(seeds.tolist(), degrees.tolist()):
        picked = eid[fv == s]
        assert picked.numel() == min(3, d) and picked.unique().numel() == picked.numel()
    everything = sample_neighbors(g, seeds, -1)
    assert everything.num_edges() == int(degrees.sum())
    torch.manual_seed(4)
    a = sample_neighbors(g, torch.arange(30), 2).edata[EID]
    torch.manual_seed(4)
    assert torch.equal(sample_neighbors(g, torch.arange(30), 2).edata[EID], a)  # torch's generator decides


def test_sampled_blocks_chain_and_a_two_layer_mean_matches_the_sampled_edges():
    g = ring_with_chords()
    sampler = MultiLayerNeighborSampler([2, 3])
    torch.manual_seed(0)
    seeds = torch.tensor([5, 9])
    input_nodes, output_nodes, blocks = sampler.sample(g, seeds)
    assert torch.equal(output_nodes, seeds) and len(blocks) == 2
    assert torch.equal(blocks[1].dstdata[NID], seeds)
    assert torch.equal(blocks[0].dstdata[NID], blocks[1].srcdata[NID])   # layer l's sources feed layer l+1
    assert torch.equal(blocks[0].srcdata[NID], input_nodes)
    n_dst = blocks[0].num_dst_nodes()
    assert torch.equal(blocks[0].srcdata[NID][:n_dst], blocks[0].dstdata[NID])  # destinations lead the sources
    torch.testing.assert_close(blocks[0].srcdata["x"], g.ndata["x"][input_nodes])
    u, v = g.all_edges()
    for block, fanout in zip(blocks, [2, 3]):
        bu, bv = block.all_edges()
        eid = block.edata[EID]
        assert torch.equal(u[eid], block.srcdata[NID][bu]) and torch.equal(v[eid], block.dstdata[NID][bv])
        assert (block.in_degrees() <= fanout).all()
    # message passing through the blocks = a mean over the sampled in-edges, written out
    h = blocks[0].srcdata["x"]
    for block in blocks:
        with block.local_scope():
            block.srcdata["h"] = h
            block.update_all(fn.copy_u("h", "m"), fn.mean("m", "h"))
            h = block.dstdata["h"]
    x = g.ndata["x"]
    first = {int(d): x[u[blocks[0].edata[EID][blocks[0].all_edges()[1] == i]]].mean(0)
             if (blocks[0].all_edges()[1] == i).any() else torch.zeros(4)
             for i, d in enumerate(blocks[0].dstdata[NID])}
    b1u, b1v = blocks[1].all_edges()
    for i, s in enumerate(seeds.tolist()):
        srcs = blocks[1].srcdata[NID][b1u[b1v == i]].tolist()
        expect = torch.stack([first[j] for j in srcs]).mean(0) if srcs else torch.zeros(4)
        torch.testing.assert_close(h[i], expect)


def test_dataloader_batches_cover_the_seeds_once():
    g = ring_with_chords()
    loader = DataLoader(g, torch.arange(30), MultiLayerNeighborSampler([2]), batch_size=8, shuffle=True)
    assert len(loader) == 4
    seen = torch.cat([out for _, out, _ in loader])
    assert sorted(seen.tolist()) == list(range(30))
    assert len(DataLoader(g, torch.arange(30), MultiLayerNeighborSampler([2]), batch_size=8, drop_last=True)) == 3
    h = topograph.heterograph({("u", "f", "u"): ([0, 1, 2], [1, 2, 0]), ("i", "b", "u"): ([0, 1], [2, 2])})
    loader = DataLoader(h, {"u": torch.arange(3)}, MultiLayerNeighborSampler([{"f": 1, "b": -1}]), batch_size=2)
    batches = list(loader)
    assert [sorted(out["u"].tolist()) for _, out, _ in batches] == [[0, 1], [2]]
    assert batches[1][2][0].num_edges(("i", "b", "u")) == 2  # fanout -1 on b: both items into user 2


def test_sampling_errors():
    g = ring_with_chords()
    with pytest.raises(ValueError, match="repeated"):
        sample_neighbors(g, torch.tensor([1, 1]), 2)
    with pytest.raises(ValueError, match="outside"):
        sample_neighbors(g, torch.tensor([30]), 2)
    with pytest.raises(ValueError, match=">= -1"):
        sample_neighbors(g, torch.tensor([1]), -2)
    with pytest.raises(TypeError, match="must be an int"):
        sample_neighbors(g, torch.tensor([1]), 2.5)
    with pytest.raises(NotImplementedError):
        sample_neighbors(g, torch.tensor([1]), 2, replace=True)
    h = topograph.heterograph({("u", "f", "u"): ([0], [1]), ("i", "b", "u"): ([0], [1])})
    with pytest.raises(ValueError, match="names no value"):
        sample_neighbors(h, {"u": [1]}, {"f": 1})
    with pytest.raises(ValueError, match="at least one layer"):
        MultiLayerNeighborSampler([])

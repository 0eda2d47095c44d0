"""topograph.dataloading.DataLoader under DGL 2.1's arguments (dataloading/dataloader.py): device, use_ddp / ddp_seed,
DGL's GPU pipeline switches (accepted, no effect), torch DataLoader's own (num_workers > 0 samples in worker
processes, whose blocks come back pickled; persistent workers across epochs), and clean errors for the rest."""
import tempfile

import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch
import torch.distributed as dist

from topograph import EID, NID
from topograph.dataloading import DataLoader, NeighborSampler, as_edge_prediction_sampler, negative_sampler


def ring(n=40):
    src = list(range(n)) + [(i * 7) % n for i in range(n)]
    dst = [(i + 1) % n for i in range(n)] + [(i * 3 + 1) % n for i in range(n)]
    g = topograph.graph((torch.tensor(src), torch.tensor(dst)), num_nodes=n)
    g.ndata["x"] = torch.randn(n, 3)
    g.edata["w"] = torch.arange(float(len(src)))
    return g


def check_batch(g, batch):
    """A sampled batch's blocks read g's features by their NID / EID, and chain layer to layer."""
    input_nodes, output_nodes, blocks = batch
    assert all(b.is_block for b in blocks)
    assert torch.equal(blocks[0].srcdata[NID], input_nodes) and torch.equal(blocks[-1].dstdata[NID], output_nodes)
    for b in blocks:
        assert torch.equal(b.srcdata["x"], g.ndata["x"][b.srcdata[NID]])
        assert torch.equal(b.edata["w"], g.edata["w"][b.edata[EID]])
    for lower, upper in zip(blocks, blocks[1:]):
        assert torch.equal(lower.dstdata[NID], upper.srcdata[NID])


def test_dgl_arguments_are_accepted_and_unknown_ones_named():
    g = ring()
    loader = DataLoader(g, torch.arange(40), NeighborSampler([3, 2]), device="cpu", use_ddp=False, ddp_seed=0,
                        batch_size=16, drop_last=False, shuffle=True, use_prefetch_thread=None,
                        use_alternate_streams=None, pin_prefetcher=None, use_uva=False, gpu_cache=None, num_workers=0,
                        pin_memory=False)
    assert len(loader) == 3
    outs = []
    for batch in loader:
        check_batch(g, batch)
        outs.append(batch[1])
    assert sorted(torch.cat(outs).tolist()) == list(range(40))
    with pytest.raises(TypeError, match="unexpected keyword argument 'num_wokers'"):
        DataLoader(g, torch.arange(4), NeighborSampler([2]), num_wokers=2)
    with pytest.raises(ValueError, match="batch_size must be an int >= 1, got 0"):
        DataLoader(g, torch.arange(4), NeighborSampler([2]), batch_size=0)
    with pytest.raises(topograph.DGLError, match="only available when use_ddp is True"):
        DataLoader(g, torch.arange(4), NeighborSampler([2])).set_epoch(1)


def test_worker_processes_sample_the_same_seeds_and_send_blocks_back():
    g = ring()
    sampler = NeighborSampler([3, 2])
    torch.manual_seed(0)
    loader = DataLoader(g, torch.arange(40), sampler, batch_size=12, shuffle=True, num_workers=2,
                        persistent_workers=True)
    orders = []
    for _ in range(2):  # two epochs on the same (persistent) workers: each seed once, a new order
        outs = []
        for batch in loader:
            check_batch(g, batch)
            outs.append(batch[1])
        assert sorted(torch.cat(outs).tolist()) == list(range(40)) and len(outs) == len(loader) == 4
        orders.append(torch.cat(outs).tolist())
    assert orders[0] != orders[1]
    # without shuffle the batches are the main process's, in order, whatever the workers
    plain = [b[1].tolist() for b in DataLoader(g, torch.arange(40), sampler, batch_size=12, num_workers=2)]
    assert plain == [list(range(i, min(i + 12, 40))) for i in range(0, 40, 12)]


def test_edge_prediction_batches_come_back_from_workers():
    g = ring()
    sampler = as_edge_prediction_sampler(NeighborSampler([2]), exclude="self",
                                         negative_sampler=negative_sampler.Uniform(1))
    seen = []
    for input_nodes, pair, neg, blocks in DataLoader(g, torch.arange(g.num_edges()), sampler, batch_size=30,
                                                     num_workers=2):
        assert not pair.is_block and pair.num_edges() == neg.num_edges()
        seeds = pair.edata[EID]
        assert not set(seeds.tolist()) & set(blocks[0].edata[EID].tolist())  # exclude="self"
        seen.append(seeds)
    assert sorted(torch.cat(seen).tolist()) == list(range(g.num_edges()))


def test_ddp_shares_are_contiguous_slices_of_one_order():
    with pytest.raises(topograph.DGLError, match="use_ddp=True needs torch.distributed initialised"):
        DataLoader(ring(), torch.arange(10), NeighborSampler([2]), use_ddp=True)
    store = tempfile.TemporaryDirectory()
    dist.init_process_group("gloo", init_method=f"file://{store.name}/store", rank=0, world_size=1)
    try:
        g = ring()
        for drop_last, shuffle in ((False, True), (True, True), (False, False)):
            loaders = []
            for rank in range(3):  # three processes' loaders, as each would make it (one process here)
                loader = DataLoader(g, torch.arange(40), NeighborSampler([2]), use_ddp=True, ddp_seed=5,
                                    batch_size=4, drop_last=drop_last, shuffle=shuffle)
                loader._rank, loader._world = rank, 3
                loader.set_epoch(2)
                loaders.append(loader)
            shares = [torch.cat([b[1] for b in loader]).tolist() for loader in loaders]
            sizes = [len(s) for s in shares]
            if drop_last:  # shares of 40 // 3 = 13, then 3 full batches of 4 each: no seed twice
                assert sizes == [12] * 3 and len(set(sum(shares, []))) == 36
            else:  # shares of ceil(40 / 3) = 14, the order wrapping round: every seed, two of them twice
                assert sizes == [14] * 3 and set(sum(shares, [])) == set(range(40))
            if shuffle:
                again = DataLoader(g, torch.arange(40), NeighborSampler([2]), use_ddp=True, ddp_seed=5, batch_size=4,
                                   drop_last=drop_last, shuffle=True)
                again._rank, again._world = 0, 3
                again.set_epoch(2)
                assert torch.cat([b[1] for b in again]).tolist() == shares[0]  # the same order on every process
                again.set_epoch(3)
                assert torch.cat([b[1] for b in again]).tolist() != shares[0]
            else:
                assert shares == [list(range(0, 14)), list(range(14, 28)), list(range(28, 40)) + [0, 1]]
    finally:
        dist.destroy_process_group()
        store.cleanup()


def test_sampler_takes_dgl_prefetch_output_device_and_fused():
    g = ring()
    g.ndata["label"] = torch.arange(40) % 3
    sampler = NeighborSampler([3, 2], prefetch_node_feats=["x"], prefetch_labels=["label"], prefetch_edge_feats=["w"],
                              output_device="cpu", fused=True)
    for input_nodes, output_nodes, blocks in DataLoader(g, torch.arange(40), sampler, batch_size=16):
        assert torch.equal(blocks[0].srcdata["x"], g.ndata["x"][input_nodes])  # DGL's example reads these
        assert torch.equal(blocks[-1].dstdata["label"], g.ndata["label"][output_nodes])
    full = topograph.dataloading.MultiLayerFullNeighborSampler(1, prefetch_node_feats=["x"])
    _, _, (block,) = full.sample(g, torch.tensor([3]))
    assert block.num_edges() == int(g.in_degrees(3))
    with pytest.raises(topograph.DGLError, match=r"prefetch_node_feats names 'feat', no node feature of the graph "
                                                 r"\(it has \['label', 'x'\]\)"):
        NeighborSampler([2], prefetch_node_feats=["feat"]).sample(g, torch.tensor([0]))
    with pytest.raises(topograph.DGLError, match="prefetch_edge_feats names 'weight', no edge feature"):
        NeighborSampler([2], prefetch_edge_feats=["weight"]).sample(g, torch.tensor([0]))
    h = topograph.heterograph({("u", "f", "u"): ([0, 1], [1, 2]), ("i", "b", "u"): ([0, 1], [2, 2])})
    h.nodes["u"].data["x"] = torch.ones(3, 2)
    NeighborSampler([2], prefetch_node_feats={"u": ["x"]}).sample(h, {"u": torch.tensor([2])})
    with pytest.raises(topograph.DGLError, match="prefetch_node_feats names 'x', no node feature of i"):
        NeighborSampler([2], prefetch_node_feats={"i": ["x"]}).sample(h, {"u": torch.tensor([2])})

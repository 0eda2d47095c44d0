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
                assert torch.cat([b[1] for b in again]).tolist() != shares[0]  # the next pass: epoch 3
                again.set_epoch(2)
                assert torch.cat([b[1] for b in again]).tolist() == shares[0]
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
    # fanouts not a list (len() of an int was the error); a mask named as mask, not as prob
    with pytest.raises(TypeError, match="fanouts must be a list, one fan-out per layer"):
        NeighborSampler(3)
    with pytest.raises(topograph.DGLError, match="mask names the edge feature 'm', which no relation"):
        NeighborSampler([2], mask="m").sample(g, torch.tensor([0]))
    h = topograph.heterograph({("u", "f", "u"): ([0, 1], [1, 2]), ("i", "b", "u"): ([0, 1], [2, 2])})
    h.nodes["u"].data["x"] = torch.ones(3, 2)
    NeighborSampler([2], prefetch_node_feats={"u": ["x"]}).sample(h, {"u": torch.tensor([2])})
    with pytest.raises(topograph.DGLError, match="prefetch_node_feats names 'x', no node feature of i"):
        NeighborSampler([2], prefetch_node_feats={"i": ["x"]}).sample(h, {"u": torch.tensor([2])})


def test_dgl_minibatch_scripts_train():
    """DGL 2.1's GraphSAGE minibatch node classification (examples/pytorch/graphsage/node_classification.py: prefetch
    lists, device, use_uva, num_workers, layer-wise inference over MultiLayerFullNeighborSampler(1)) and a link
    prediction loop (as_edge_prediction_sampler with exclude='reverse_id', negative_sampler.Uniform, worker
    processes), in their own words on a graph of 4 planted classes: both must learn."""
    import torch.nn.functional as F
    import topograph.function as fn
    from topograph.nn import SAGEConv

    torch.manual_seed(0)
    n = 1200
    labels = torch.randint(0, 4, (n,))
    src, dst = torch.randint(0, n, (12000,)), torch.randint(0, n, (12000,))
    keep = (labels[src] == labels[dst]) | (torch.rand(12000) < 0.2)
    g = topograph.add_self_loop(topograph.to_bidirected(topograph.graph((src[keep], dst[keep]), num_nodes=n)))
    g.ndata["feat"] = torch.randn(n, 16) + F.one_hot(labels, 16).float()
    g.ndata["label"] = labels
    layers = torch.nn.ModuleList([SAGEConv(16, 32, "mean"), SAGEConv(32, 4, "mean")])
    opt = torch.optim.Adam(layers.parameters(), lr=1e-2)
    sampler = NeighborSampler([10, 10], prefetch_node_feats=["feat"], prefetch_labels=["label"])
    loader = DataLoader(g, torch.arange(800), sampler, device="cpu", batch_size=128, shuffle=True, drop_last=False,
                        num_workers=0, use_uva=False)
    losses = []
    for _ in range(4):
        for input_nodes, output_nodes, blocks in loader:
            h = F.relu(layers[0](blocks[0], blocks[0].srcdata["feat"]))
            loss = F.cross_entropy(layers[1](blocks[1], h), blocks[-1].dstdata["label"])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    assert sum(losses[-7:]) < 0.6 * sum(losses[:7])  # measured: 0.39
    full = DataLoader(g, torch.arange(n), topograph.dataloading.MultiLayerFullNeighborSampler(1, prefetch_node_feats=["feat"]),
                      batch_size=300)
    feat = g.ndata["feat"]
    with torch.no_grad():
        for i, layer in enumerate(layers):
            y = torch.empty(n, 32 if i == 0 else 4)
            for input_nodes, output_nodes, blocks in full:
                h = layer(blocks[0], feat[input_nodes])
                y[output_nodes[0]:output_nodes[-1] + 1] = F.relu(h) if i == 0 else h
            feat = y
    assert (feat[800:].argmax(1) == labels[800:]).float().mean() > 0.45  # chance: 0.25; measured: 0.65

    half = g.num_edges() // 2  # link prediction on the same graph's edges, each with its reverse excluded
    u, v = g.edges()
    reverse = torch.full((g.num_edges(),), -1)
    order = {(a, b): e for e, (a, b) in enumerate(zip(u.tolist(), v.tolist()))}
    for e, (a, b) in enumerate(zip(u.tolist(), v.tolist())):
        reverse[e] = order[(b, a)]
    edge_sampler = as_edge_prediction_sampler(NeighborSampler([5, 5]), exclude="reverse_id", reverse_eids=reverse,
                                              negative_sampler=negative_sampler.Uniform(1))
    encoder = torch.nn.ModuleList([SAGEConv(16, 32, "mean"), SAGEConv(32, 32, "mean")])
    opt = torch.optim.Adam(encoder.parameters(), lr=1e-2)
    losses = []
    for _ in range(2):
        for input_nodes, pair, neg, blocks in DataLoader(g, torch.randperm(g.num_edges())[:half], edge_sampler,
                                                         batch_size=512, shuffle=True, num_workers=2):
            h = encoder[1](blocks[1], F.relu(encoder[0](blocks[0], blocks[0].srcdata["feat"])))
            scores = []
            for graph in (pair, neg):
                with graph.local_scope():
                    graph.ndata["h"] = h
                    graph.apply_edges(fn.u_dot_v("h", "h", "s"))
                    scores.append(graph.edata["s"].flatten())
            target = torch.cat([torch.ones_like(scores[0]), torch.zeros_like(scores[1])])
            loss = F.binary_cross_entropy_with_logits(torch.cat(scores), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    assert sum(losses[-3:]) < 0.5 * sum(losses[:3])  # measured: 0.14

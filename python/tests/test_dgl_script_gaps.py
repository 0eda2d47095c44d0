"""What DGL's tutorial-style scripts (python/examples/dgl_scripts) needed that topograph lacked: GraphDataLoader and
GraphCollator, negative_sampler.Uniform, remove_edges (dgl.remove_edges and the in-place g.remove_edges), ndata /
edata / srcdata / dstdata as {type: tensor} on a heterograph, SAGEConv's edge_weight (and its one feature-dropout
mask), pickling a graph (GraphDataLoader's worker processes), MultiLayerFullNeighborSampler and seed. Each is
checked against plain torch / Python references here, and against DGL 2.1 where dgl imports (those cases skip
otherwise)."""
import collections
import pickle

import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)
import topograph.function as fn

import numpy as np
import pytest
import torch

NID, EID = topograph.NID, topograph.EID


def need_dgl():
    return pytest.importorskip("dgl")


def small_graphs(lib, count=10):
    """[(graph, label)]: graph i has 2 + i % 4 nodes, a ring, ndata x [n, 3] and edata w [n]."""
    gen = torch.Generator().manual_seed(1)
    out = []
    for i in range(count):
        n = 2 + i % 4
        g = lib.graph((torch.arange(n), (torch.arange(n) + 1) % n), num_nodes=n)
        g.ndata["x"] = torch.randn(n, 3, generator=gen)
        g.edata["w"] = torch.rand(n, generator=gen)
        out.append((g, torch.tensor(i % 3)))
    return out


# --- GraphDataLoader / GraphCollator
def test_graph_collator_batches_graphs_and_collates_the_rest():
    collate = topograph.dataloading.GraphCollator().collate
    graphs = [g for g, _ in small_graphs(topograph, 3)]
    bg = collate(graphs)
    assert bg.batch_size == 3 and bg.batch_num_nodes().tolist() == [2, 3, 4]
    torch.testing.assert_close(bg.ndata["x"], torch.cat([g.ndata["x"] for g in graphs]))
    out = collate([(g, torch.tensor([i, -i]), i, 0.5 * i, f"s{i}", np.array([i, i])) for i, g in enumerate(graphs)])
    assert isinstance(out, list) and len(out) == 6  # a tuple sample collates to a list of positions, as DGL's
    assert out[0].batch_size == 3
    assert out[1].tolist() == [[0, 0], [1, -1], [2, -2]]
    assert out[2].dtype == torch.int64 and out[2].tolist() == [0, 1, 2]
    assert out[3].dtype == torch.float64 and out[3].tolist() == [0.0, 0.5, 1.0]
    assert out[4] == ["s0", "s1", "s2"] and out[5].tolist() == [[0, 0], [1, 1], [2, 2]]
    d = collate([{"g": g, "y": torch.tensor(float(i))} for i, g in enumerate(graphs)])
    assert d["g"].batch_size == 3 and d["y"].tolist() == [0.0, 1.0, 2.0]
    Item = collections.namedtuple("Item", "graph label")
    nt = collate([Item(g, i) for i, g in enumerate(graphs)])
    assert isinstance(nt, Item) and nt.graph.batch_size == 3 and nt.label.tolist() == [0, 1, 2]
    with pytest.raises(RuntimeError, match="equal size"):
        collate([(graphs[0], 1), (graphs[1],)])
    with pytest.raises(TypeError, match="found object"):
        collate([object(), object()])


def test_graph_dataloader_is_torch_dataloader_with_graph_batches():
    dataset = small_graphs(topograph)
    torch.manual_seed(5)
    order = [int(i) for i in torch.utils.data.DataLoader(range(len(dataset)), batch_size=4, shuffle=True)
             for i in i]  # torch's own shuffle from the same seed
    torch.manual_seed(5)
    loader = topograph.dataloading.GraphDataLoader(dataset, batch_size=4, shuffle=True)
    assert isinstance(loader, torch.utils.data.DataLoader) and len(loader) == 3
    seen = []
    for bg, labels in loader:
        assert bg.batch_size == labels.shape[0]
        seen += labels.tolist()
        assert bg.num_edges() == bg.num_nodes()  # rings
    assert seen == [dataset[i][1].item() for i in order]
    assert len(list(topograph.dataloading.GraphDataLoader(dataset, batch_size=4, drop_last=True))) == 2
    # worker processes send their batches back pickled: the same batches as in-process
    ours = [(bg.batch_num_nodes().tolist(), bg.edata["w"], y) for bg, y in
            topograph.dataloading.GraphDataLoader(dataset, batch_size=3, num_workers=2)]
    for (nodes, w, y), (bg, labels) in zip(ours, topograph.dataloading.GraphDataLoader(dataset, batch_size=3)):
        assert nodes == bg.batch_num_nodes().tolist() and torch.equal(w, bg.edata["w"]) and torch.equal(y, labels)
    with pytest.raises(topograph.DGLError, match="use_ddp"):
        loader.set_epoch(1)


def test_graph_dataloader_matches_dgl():
    dgl = need_dgl()
    batches = []
    for lib in (topograph, dgl):
        torch.manual_seed(2)
        batches.append(list(lib.dataloading.GraphDataLoader(small_graphs(lib), batch_size=3, shuffle=True,
                                                           drop_last=True)))
    assert len(batches[0]) == len(batches[1]) == 3
    for (bt, yt), (bd, yd) in zip(*batches):
        assert torch.equal(yt, yd) and bt.batch_num_nodes().tolist() == bd.batch_num_nodes().tolist()
        assert bt.batch_num_edges().tolist() == bd.batch_num_edges().tolist()
        for a, b in zip(bt.edges(), bd.edges()):
            assert a.tolist() == b.tolist()
        assert torch.equal(bt.ndata["x"], bd.ndata["x"]) and torch.equal(bt.edata["w"], bd.edata["w"])


# --- negative sampling
def hetero(lib):
    return lib.heterograph({("user", "clicks", "item"): ([0, 1, 2, 2], [3, 0, 1, 2]),
                            ("user", "follows", "user"): ([0, 1], [1, 2])}, num_nodes_dict={"user": 3, "item": 5})


def test_uniform_negative_sampler():
    g = topograph.graph(([0, 1, 2, 3], [1, 2, 3, 0]), num_nodes=6)
    sampler = topograph.dataloading.negative_sampler.Uniform(3)
    torch.manual_seed(0)
    src, dst = sampler(g, torch.tensor([2, 0]))
    torch.manual_seed(0)
    assert src.tolist() == [2, 2, 2, 0, 0, 0] and dst.tolist() == torch.randint(0, 6, (6,)).tolist()
    hg = hetero(topograph)
    out = sampler(hg, {"clicks": torch.tensor([3])})
    assert list(out) == [("user", "clicks", "item")] and out[("user", "clicks", "item")][0].tolist() == [2, 2, 2]
    assert int(out[("user", "clicks", "item")][1].max()) < 5
    with pytest.raises(topograph.DGLError, match="relations"):
        sampler(hg, torch.tensor([0]))
    with pytest.raises(ValueError, match="k must be"):
        topograph.dataloading.negative_sampler.PerSourceUniform(0)


def test_uniform_negative_sampler_matches_dgl():
    dgl = need_dgl()
    pairs = []
    for lib in (topograph, dgl):
        torch.manual_seed(4)
        g = lib.graph((torch.tensor([0, 1, 2, 3, 3]), torch.tensor([1, 2, 3, 0, 4])), num_nodes=7)
        sampler = lib.dataloading.negative_sampler.Uniform(2)
        pairs.append([sampler(g, torch.tensor([4, 1, 1])), sampler(hetero(lib), {"clicks": torch.tensor([0, 3])})])
    (t1, t2), (d1, d2) = pairs
    for a, b in zip(t1 + t2[("user", "clicks", "item")], d1 + d2[("user", "clicks", "item")]):
        assert a.dtype == b.dtype and a.tolist() == b.tolist()


# --- remove_edges
def test_remove_edges():
    g = topograph.graph(([0, 1, 2, 3, 0], [1, 2, 3, 0, 2]), num_nodes=5)
    g.ndata["x"], g.edata["w"] = torch.arange(5.0), torch.arange(5.0) * 10
    h = topograph.remove_edges(g, torch.tensor([3, 1]), store_ids=True)
    assert [t.tolist() for t in h.edges()] == [[0, 2, 0], [1, 3, 2]] and h.num_nodes() == 5
    assert h.ndata["x"] is g.ndata["x"] and h.edata["w"].tolist() == [0.0, 20.0, 40.0]
    assert h.edata[EID].tolist() == [0, 2, 4] and g.num_edges() == 5  # g itself unchanged
    assert topograph.remove_edges(g, np.array([0])).num_edges() == 4
    same = topograph.remove_edges(g, [], store_ids=True)
    assert same is not g and same.num_edges() == 5 and same.edata["w"] is g.edata["w"] and EID not in same.edata
    same.edata["v"] = torch.ones(5)
    assert "v" not in g.edata  # a copy's own feature dicts
    with pytest.raises(topograph.DGLError, match="edge id 5 out of range"):
        topograph.remove_edges(g, [5])
    with pytest.raises(topograph.DGLError, match="boolean mask"):
        topograph.remove_edges(g, torch.ones(5, dtype=torch.bool))
    # in place; a batch stays a batch
    b = topograph.batch([g, g])
    b.remove_edges(torch.tensor([0, 6, 7]))
    assert b.batch_size == 2 and b.batch_num_edges().tolist() == [4, 3] and b.batch_num_nodes().tolist() == [5, 5]
    assert b.edata["w"].tolist() == [10.0, 20.0, 30.0, 40.0, 0.0, 30.0, 40.0]
    assert [u.tolist() for u in topograph.unbatch(b)[1].edges()] == [[0, 3, 0], [1, 0, 2]]
    hg = hetero(topograph)
    hg.edges["clicks"].data["w"] = torch.tensor([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(topograph.DGLError, match="relations"):
        topograph.remove_edges(hg, [0])
    hr = topograph.remove_edges(hg, [0, 2], etype="clicks")
    assert hr.num_edges("clicks") == 2 and hr.num_edges("follows") == 2
    assert hr.edges["clicks"].data["w"].tolist() == [2.0, 4.0]


def test_remove_edges_matches_dgl():
    dgl = need_dgl()
    out = []
    for lib in (topograph, dgl):
        g = lib.graph((torch.tensor([0, 1, 2, 3, 0, 2]), torch.tensor([1, 2, 3, 0, 2, 2])), num_nodes=5)
        g.edata["w"] = torch.arange(6.0)
        b = lib.batch([g, g, g])
        b.remove_edges(torch.tensor([1, 7, 8, 17]), store_ids=True)
        hg = lib.remove_edges(hetero(lib), torch.tensor([3, 0]), etype="clicks", store_ids=True)
        out.append((lib.remove_edges(g, torch.tensor([5, 2]), store_ids=True), b, hg,
                    lib.remove_edges(g, torch.tensor([], dtype=torch.int64), store_ids=True)))
    for t, d in zip(*out):
        for c in d.canonical_etypes:
            assert [x.tolist() for x in t.edges(etype=c)] == [x.tolist() for x in d.edges(etype=c)]
            assert t.batch_num_edges(c).tolist() == d.batch_num_edges(c).tolist()
            assert sorted(t.edges[c].data) == sorted(d.edges[c].data)
            for name, value in d.edges[c].data.items():
                assert t.edges[c].data[name].tolist() == value.tolist()


# --- {type: tensor} feature views of a heterograph
def test_heterograph_feature_views():
    hg = hetero(topograph)
    hg.ndata["h"] = {"user": torch.ones(3, 2), "item": torch.zeros(5, 2)}
    assert sorted(hg.ndata["h"]) == ["item", "user"] and hg.nodes["item"].data["h"].shape == (5, 2)
    hg.edata["w"] = {"clicks": torch.ones(4), ("user", "follows", "user"): torch.zeros(2)}
    assert sorted(hg.edata["w"]) == [("user", "clicks", "item"), ("user", "follows", "user")]
    assert hg.edges["follows"].data["w"].tolist() == [0.0, 0.0] and list(hg.edata) == ["w"]
    assert hg.srctypes == hg.dsttypes == ["item", "user"]  # not uni-bipartite: every type on both sides
    with pytest.raises(ValueError, match="unknown edge type 'likes'"):
        hg.edata["w"] = {"likes": torch.ones(1)}
    with pytest.raises(ValueError, match="expected a tensor of 3 rows"):
        hg.ndata["z"] = {"user": torch.ones(4)}
    bip = topograph.heterograph({("user", "clicks", "item"): ([0, 1], [3, 0])})
    assert bip.srctypes == ["user"] and bip.dsttypes == ["item"]
    bip.srcdata["h"] = torch.ones(2, 1)  # one source type: its frame, as DGL's
    assert bip.nodes["user"].data["h"].shape == (2, 1)


def test_heterograph_feature_views_match_dgl():
    dgl = need_dgl()
    views = []
    for lib in (topograph, dgl):
        hg = hetero(lib)
        hg.ndata["h"] = {"user": torch.arange(3.0)}
        hg.edata["w"] = {"clicks": torch.arange(4.0)}
        hg.apply_edges(lib.function.u_add_v("h", "h", "s"), etype="follows")
        views.append((hg.srctypes, hg.dsttypes, {k: v.tolist() for k, v in hg.ndata["h"].items()},
                      {k: v.tolist() for k, v in hg.edata["s"].items()}, sorted(hg.edata), hg.ndata["nope"]))
    assert views[0] == views[1]


# --- SAGEConv: edge weights, and one dropout mask over a single input
SAGE = {"mean": (5, 3), "mean-grow": (3, 5), "gcn": (5, 3), "gcn-grow": (3, 5), "pool": (5, 4)}


@pytest.mark.parametrize("name", list(SAGE))
def test_sage_conv_edge_weight(name):
    torch.manual_seed(0)
    agg = name.split("-")[0]
    conv = topograph.nn.SAGEConv(*SAGE[name], agg)
    u, v = torch.tensor([0, 1, 2, 2, 3]), torch.tensor([1, 2, 0, 1, 1])
    g = topograph.graph((u, v), num_nodes=5)  # node 3, 4: no in-edges
    x, w = torch.randn(5, SAGE[name][0]), torch.rand(5) + 0.5
    torch.testing.assert_close(conv(g, x, edge_weight=torch.ones(5)), conv(g, x))
    msgs = x[u] * w[:, None] if agg != "pool" else torch.relu(conv.fc_pool(x))[u] * w[:, None]
    deg = torch.bincount(v, minlength=5).float()[:, None]
    total = torch.zeros(5, msgs.shape[1]).index_add(0, v, msgs)
    if agg == "mean":
        ref = conv.fc_self(x) + conv.fc_neigh(total / deg.clamp(min=1))
    elif agg == "gcn":
        ref = conv.fc_neigh((total + x) / (deg + 1)) + conv.bias
    else:
        best = torch.zeros(5, msgs.shape[1]).scatter_reduce(0, v[:, None].expand_as(msgs), msgs, "amax",
                                                            include_self=False)
        ref = conv.fc_self(x) + conv.fc_neigh(best)
    torch.testing.assert_close(conv(g, x, edge_weight=w), ref, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="edge_weight must have one row per edge"):
        conv(g, x, edge_weight=torch.ones(4))


@pytest.mark.parametrize("name", list(SAGE))
def test_sage_conv_edge_weight_and_dropout_match_dgl(name):
    need_dgl()
    import dgl.nn.pytorch as dnn
    from test_against_dgl import TOL, conv_graphs, copy_parameters, run_both

    in_feats, out_feats = SAGE[name]
    agg = name.split("-")[0]
    torch.manual_seed(0)
    for gd, gt in conv_graphs():
        mt, md = topograph.nn.SAGEConv(in_feats, out_feats, agg), dnn.SAGEConv(in_feats, out_feats, agg)
        copy_parameters(mt, md)
        run_both(lambda x, w: md(gd, x, edge_weight=w), lambda x, w: mt(gt, x, edge_weight=w),
                 (gt.num_src_nodes(), in_feats), (gt.num_edges(),), positive_last=True)
        # feature dropout in training: one mask over the input, the destinations' rows included, as DGL's
        mt.feat_drop.p = md.feat_drop.p = 0.5
        x = torch.randn(gt.num_src_nodes(), in_feats)
        torch.manual_seed(7)
        ot = mt(gt, x)
        torch.manual_seed(7)
        torch.testing.assert_close(ot, md(gd, x), **TOL)


# --- pickling, the full-neighbour sampler, seed
def test_graphs_pickle_with_their_batch_and_features():
    g = topograph.graph((torch.tensor([0, 1], dtype=torch.int32), torch.tensor([1, 2], dtype=torch.int32)))
    g.ndata["x"], g.edata["w"] = torch.arange(3.0), torch.ones(2)
    empty = topograph.graph((torch.tensor([], dtype=torch.int32), torch.tensor([], dtype=torch.int32)), num_nodes=2)
    empty.ndata["x"] = torch.zeros(2)
    b = topograph.batch([g, empty, g], edata=None)
    c = pickle.loads(pickle.dumps(b))
    assert c.idtype == torch.int32 and c.batch_size == 3 and c.batch_num_edges().tolist() == [2, 0, 2]
    assert [t.tolist() for t in c.edges()] == [[0, 1, 5, 6], [1, 2, 6, 7]] and torch.equal(c.ndata["x"], b.ndata["x"])
    hg = hetero(topograph)
    hg.edges["follows"].data["w"] = torch.tensor([1.0, 2.0])
    h2 = pickle.loads(pickle.dumps(hg))
    assert h2.canonical_etypes == hg.canonical_etypes and h2.num_nodes("item") == 5
    assert h2.edges["follows"].data["w"].tolist() == [1.0, 2.0]
    block = topograph.to_block(g, torch.tensor([1, 2]))  # a block comes back a block (DataLoader workers send them)
    block.srcdata["h"] = torch.tensor([[1.0], [2.0], [3.0]])[: block.num_src_nodes()]
    block.edata["w"] = torch.arange(1.0, block.num_edges() + 1)
    back = pickle.loads(pickle.dumps(block))
    assert back.is_block and (back.num_src_nodes(), back.num_dst_nodes()) == (block.num_src_nodes(), block.num_dst_nodes())
    assert back.srctypes == block.srctypes and back.dsttypes == block.dsttypes and back.idtype == torch.int32
    for a, b in ((back.srcdata, block.srcdata), (back.dstdata, block.dstdata), (back.edata, block.edata)):
        assert sorted(a.keys()) == sorted(b.keys()) and all(torch.equal(a[k], b[k]) for k in b.keys())
    for bl in (block, back):
        bl.update_all(fn.u_mul_e("h", "w", "m"), fn.sum("m", "out"))
    assert torch.equal(back.dstdata["out"], block.dstdata["out"])
    # a tampered or foreign state: an error naming what disagrees, before anything is built (it raised
    # "'zz' is not in list" or IndexError, or built a graph with an edge dropped)
    from topograph._pickle import restore_graph
    edges = [(torch.tensor([0, 1]), torch.tensor([1, 0]))]
    with pytest.raises(topograph.DGLError, match=r"lists 2 sources and 2 destinations against 1 counted edges"):
        restore_graph(["_N"], [("_N", "_E", "_N")], [[2]], [[1]], edges, {}, "cpu")
    with pytest.raises(topograph.DGLError, match=r"names a node type outside \['_N'\]"):
        restore_graph(["_N"], [("_N", "_E", "zz")], [[2]], [[2]], edges, {}, "cpu")
    with pytest.raises(topograph.DGLError, match="per-graph count lists of different lengths"):
        restore_graph(["_N"], [("_N", "_E", "_N")], [[1, 1]], [[2]], edges, {}, "cpu")
    with pytest.raises(topograph.DGLError, match="expected lists"):
        restore_graph(None, None, None, None, None, {}, "cpu")
    wide = block.long()  # astype goes the same way
    assert wide.is_block and wide.idtype == torch.int64 and torch.equal(wide.dstdata["out"], block.dstdata["out"])


def test_astype_int_long_clone():
    g = topograph.graph(([0, 1, 1], [1, 2, 0]), num_nodes=4)
    g.ndata["x"], g.edata["w"] = torch.arange(4.0), torch.ones(3)
    h = g.int()
    assert h.idtype == torch.int32 and h.edges()[0].dtype == torch.int32 and h.num_nodes() == 4
    assert h.ndata["x"] is g.ndata["x"] and h.edata["w"] is g.edata["w"]
    assert g.long() is g and h.long().idtype == torch.int64 and g.cpu().device.type == "cpu"
    b = topograph.batch([g, g]).int()
    assert b.batch_size == 2 and b.batch_num_edges().tolist() == [3, 3] and b.edges()[1].tolist() == [1, 2, 0, 5, 6, 4]
    c = g.clone()
    c.ndata["y"] = torch.ones(4)
    assert "y" not in g.ndata and c.ndata["x"] is g.ndata["x"] and c.edges()[0].tolist() == [0, 1, 1]
    with pytest.raises(topograph.DGLError, match="idtype"):
        g.astype(torch.float32)
    narrow = topograph.to_block(g, torch.tensor([0, 1, 2])).int()  # a block stays a block
    assert narrow.is_block and narrow.idtype == torch.int32 and narrow.num_dst_nodes() == 3


def test_full_neighbor_sampler_takes_every_in_edge():
    g = topograph.graph(([0, 1, 2, 3, 3, 4], [1, 2, 3, 1, 2, 0]), num_nodes=5)
    inputs, outputs, blocks = topograph.dataloading.MultiLayerFullNeighborSampler(2).sample(g, torch.tensor([1]))
    assert outputs.tolist() == [1] and len(blocks) == 2
    assert sorted(blocks[1].edata[EID].tolist()) == [0, 3]  # every in-edge of node 1
    assert sorted(blocks[0].edata[EID].tolist()) == [0, 2, 3, 5]  # ... and of its sources 1, 0, 3
    assert sorted(inputs.tolist()) == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="num_layers"):
        topograph.dataloading.MultiLayerFullNeighborSampler(0)


def test_seed_seeds_torch_generator():
    topograph.seed(11)
    a = torch.rand(3)
    torch.manual_seed(11)
    assert torch.equal(a, torch.rand(3))


def test_dgl_nn_pytorch_paths_name_the_same_layers():
    import topograph.nn.pytorch as dglnn
    from topograph.nn.pytorch.conv import GATConv, RelGraphConv, SAGEConv
    from topograph.nn.pytorch.glob import AvgPooling
    from topograph.nn.pytorch.hetero import HeteroGraphConv
    from topograph.nn.pytorch.softmax import edge_softmax

    assert (SAGEConv, GATConv, RelGraphConv) == (topograph.nn.SAGEConv, topograph.nn.GATConv, topograph.nn.RelGraphConv)
    assert AvgPooling is topograph.nn.AvgPooling and HeteroGraphConv is topograph.nn.HeteroGraphConv
    assert edge_softmax is topograph.nn.functional.edge_softmax is dglnn.edge_softmax
    assert all(getattr(dglnn, name) is getattr(topograph.nn, name) for name in topograph.nn.__all__)


def test_graph_methods_dgl_attaches():
    g = topograph.graph(([0, 1, 1, 2], [1, 2, 2, 0]), num_nodes=4)
    assert g.is_multigraph and not topograph.to_simple(g).is_multigraph
    assert g.number_of_src_nodes() == g.number_of_dst_nodes() == 4 and g.get_ntype_id(None) == 0
    h = hetero(topograph)
    assert [h.get_etype_id(c) for c in h.canonical_etypes] == list(range(len(h.canonical_etypes)))
    assert [h.get_ntype_id(t) for t in h.ntypes] == list(range(len(h.ntypes)))
    with pytest.raises(topograph.DGLError, match="node type 'nope' is not one of"):
        h.get_ntype_id("nope")
    meta = h.metagraph()
    assert sorted(meta.nodes) == sorted(h.ntypes)
    assert sorted(meta.edges(keys=True)) == sorted((s, d, e) for s, e, d in h.canonical_etypes)  # (src, dst, key)
    relation = h.canonical_etypes[0]
    assert h.edge_type_subgraph([relation]).canonical_etypes == [relation]
    sub, where = g.khop_in_subgraph(2, 1)
    assert sorted(sub.ndata[topograph.NID].tolist()) == [1, 2] and int(sub.ndata[topograph.NID][where]) == 2
    sub, _ = g.khop_out_subgraph(0, 1)
    assert sorted(sub.ndata[topograph.NID].tolist()) == [0, 1]


def test_local_var_and_is_unibipartite():
    """Older DGL scripts write `g = g.local_var()` where newer ones use local_scope; layers check
    is_unibipartite. Values as DGL 2.1's (checked there on the same graphs)."""
    g = topograph.graph(([0, 1], [1, 2]))
    g.ndata["h"] = torch.ones(3)
    local = g.local_var()
    local.ndata["h"] = torch.zeros(3)
    local.ndata["x"] = torch.ones(3)
    assert torch.equal(g.ndata["h"], torch.ones(3)) and list(g.ndata.keys()) == ["h"]
    assert torch.equal(local.edges()[0], g.edges()[0])
    block = topograph.to_block(g, torch.tensor([1, 2]))
    assert block.local_var().is_block and block.is_unibipartite and not g.is_unibipartite
    assert topograph.heterograph({("u", "r", "v"): ([0], [1]), ("w", "s", "v"): ([0], [0])}).is_unibipartite
    assert not topograph.heterograph({("u", "r", "v"): ([0], [1]), ("v", "s", "w"): ([0], [0])}).is_unibipartite


def test_deprecated_dglgraph_constructor():
    """DGL 2.1 still takes the old idiom g = dgl.DGLGraph(); g.add_nodes(n); g.add_edges(u, v) (its docs'
    Sequential example uses it) and DGLGraph((u, v))."""
    g = topograph.DGLGraph()
    g.add_nodes(3)
    g.add_edges([0, 1], [1, 2])
    g.ndata["h"] = torch.ones(3)
    assert (g.num_nodes(), g.num_edges()) == (3, 2) and [t.tolist() for t in g.edges()] == [[0, 1], [1, 2]]
    h = topograph.DGLGraph((torch.tensor([0, 2]), torch.tensor([1, 0])))
    assert (h.num_nodes(), h.num_edges()) == (3, 2)


def test_dgl_nn_pytorch_submodule_paths():
    """Scripts import layers by DGL's module paths (from dgl.nn.pytorch.link import EdgePredictor, ...)."""
    from topograph.nn.pytorch.conv import EdgeGATConv, GMMConv, PNAConv  # noqa: F401
    from topograph.nn.pytorch.explain import GNNExplainer  # noqa: F401
    from topograph.nn.pytorch.factory import KNNGraph  # noqa: F401
    from topograph.nn.pytorch.glob import SetTransformerEncoder  # noqa: F401
    from topograph.nn.pytorch.gt import GraphormerLayer  # noqa: F401
    from topograph.nn.pytorch.hetero import HeteroLinear  # noqa: F401
    from topograph.nn.pytorch.link import EdgePredictor, TransE  # noqa: F401
    from topograph.nn.pytorch.network_emb import DeepWalk, MetaPath2Vec  # noqa: F401
    from topograph.nn.pytorch.sparse_emb import NodeEmbedding  # noqa: F401
    from topograph.nn.pytorch.utils import Identity, JumpingKnowledge, Sequential  # noqa: F401

    x = torch.ones(2)
    assert Identity()(x) is x


def test_set_batch_num_nodes_and_edges():
    """A custom collate marks a graph's members: readouts and unbatch then see them; the node counts alone split
    contiguous edges; an edge outside its member, or counts that do not add up, named (DGL 2.1's results where
    it imports)."""
    def make(lib):
        g = lib.graph((torch.tensor([0, 1, 2, 3, 4]), torch.tensor([1, 0, 3, 4, 2])), num_nodes=6)
        g.ndata["h"] = torch.arange(6.0)
        return g

    g = make(topograph)
    g.set_batch_num_nodes(torch.tensor([2, 4]))  # edges contiguous by member: inferred
    assert g.batch_num_edges().tolist() == [2, 3] and topograph.readout_nodes(g, "h").tolist() == [1.0, 14.0]
    g.set_batch_num_edges(torch.tensor([2, 3]))
    parts = topograph.unbatch(g)
    assert [p.ndata["h"].tolist() for p in parts] == [[0.0, 1.0], [2.0, 3.0, 4.0, 5.0]]
    with pytest.raises(topograph.DGLError, match="add up to 5, it has 6"):
        make(topograph).set_batch_num_nodes(torch.tensor([2, 3]))
    bad = make(topograph)
    bad.set_batch_num_nodes(torch.tensor([3, 3]))
    with pytest.raises(topograph.DGLError, match="outside member graph"):
        bad.set_batch_num_edges(torch.tensor([1, 4]))
    try:
        import dgl
    except ImportError:
        return
    d = make(dgl)
    d.set_batch_num_nodes(torch.tensor([2, 4]))
    d.set_batch_num_edges(torch.tensor([2, 3]))
    assert [p.edges()[0].tolist() for p in dgl.unbatch(d)] == [p.edges()[0].tolist() for p in parts]


def test_unbatch_with_node_and_edge_split():
    """DGL's unbatch(g, node_split=, edge_split=): split a graph that was never batched, features by the same
    counts; the graph itself keeps its batch counts; counts of different lengths are a DGLError."""
    g = topograph.graph((torch.tensor([0, 2, 3]), torch.tensor([1, 3, 4])), num_nodes=5)
    g.ndata["x"] = torch.arange(5.0)
    g.edata["w"] = torch.tensor([5.0, 6.0, 7.0])
    parts = topograph.unbatch(g, node_split=torch.tensor([2, 3]), edge_split=torch.tensor([1, 2]))
    assert [p.num_nodes() for p in parts] == [2, 3] and g.batch_size == 1
    assert [p.edges()[0].tolist() for p in parts] == [[0], [0, 1]]
    assert [p.edata["w"].tolist() for p in parts] == [[5.0], [6.0, 7.0]]
    assert [p.ndata["x"].tolist() for p in parts] == [[0.0, 1.0], [2.0, 3.0, 4.0]]
    hg = topograph.heterograph({("a", "r", "b"): ([0, 1], [0, 1])})
    hparts = topograph.unbatch(hg, node_split={"a": [1, 1], "b": [1, 1]}, edge_split={"r": [1, 1]})
    assert [p.num_edges() for p in hparts] == [1, 1]
    with pytest.raises(topograph.DGLError, match="same number"):
        topograph.unbatch(g, node_split=[2, 3])  # the edges' default split is the graph's own: one member

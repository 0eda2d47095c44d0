"""What a sixth round of DGL-style scripts (heterograph mutation with features, k-hop and in/out subgraphs,
dgl.sampling with prob / exclude_edges / fan-out dicts, select_topk, ...) found unlike DGL 2.1. Each case states
DGL 2.1's behaviour, checked with the real DGL 2.1.0."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch

DGLError = topograph.DGLError


# --- dgl.sampling.sample_neighbors
def test_a_fanout_dict_missing_a_relation_is_a_dgl_error():
    # DGL 2.1: DGLError "Fan-out must be specified for each edge type if a dict is provided."
    g = topograph.heterograph({("u", "f", "u"): ([0, 1], [1, 1]), ("g", "r", "u"): ([0], [1])})
    with pytest.raises(DGLError, match=r"fanout names no value for \[\('g', 'r', 'u'\)\]"):
        topograph.sampling.sample_neighbors(g, {"u": [1]}, {"f": 1})
    # a bad value is the same kind of mistake; DGL 2.1 aborts the process on fanout=-2
    with pytest.raises(DGLError, match="fanout must be >= -1"):
        topograph.sampling.sample_neighbors(g, {"u": [1]}, -2)
    with pytest.raises(topograph.DGLTypeError, match=r"fanout\['f'\] must be an int"):
        topograph.sampling.sample_neighbors(g, {"u": [1]}, {"f": 1.5, "r": 1})


# --- wrong options and feature sizes for dgl.nn layers
def test_layer_option_and_size_errors_are_dgls_types():
    nn = topograph.nn
    g = topograph.graph(([0, 1, 2, 3], [1, 2, 3, 0]))
    x = torch.ones(4, 5)
    # DGL 2.1: DGLError 'Invalid norm value. Must be either "none", "both", "right" or "left". ...'
    with pytest.raises(DGLError, match="norm must be"):
        nn.GraphConv(5, 2, norm="bad")
    # DGL 2.1: DGLError "Invalid aggregator_type. Must be one of {...}. But got 'max' instead."
    with pytest.raises(DGLError, match="aggregator_type must be"):
        nn.SAGEConv(5, 2, "max")
    # DGL 2.1: KeyError 'Aggregator type lstm not recognized.' (GMMConv's KeyError already matched)
    with pytest.raises(KeyError, match="aggregator_type must be"):
        nn.GINConv(None, "lstm")
    # DGL 2.1: DGLError "Expect number of features to match number of nodes (len(u)). Got 3 and 4 instead."
    for pool in (nn.SumPooling(), nn.AvgPooling(), nn.MaxPooling()):
        with pytest.raises(DGLError, match="feat has 3 rows, the graph has 4 nodes"):
            pool(g, torch.ones(3, 5))
    # DGL 2.1: an AssertionError for SAGEConv and GraphConv alike; GraphConv's is already a DGLError here
    with pytest.raises(DGLError, match="edge_weight must have one row per edge"):
        nn.SAGEConv(5, 2, "mean")(g, x, edge_weight=torch.ones(3))
    # DGL 2.1: torch's RuntimeError from the size mismatch inside the LSTM step
    with pytest.raises(RuntimeError, match=r"Set2Set: feat must be \[N, 4\]"):
        nn.Set2Set(4, 2, 1)(g, x)


# --- dgl.nn.RelGraphConv
def test_rel_graph_conv_reads_the_graphs_norm_edge_feature_when_none_is_given():
    # DGL 2.1's message function scales by edges.data['norm'] whenever the graph has it, so an R-GCN script that
    # stores g.edata['norm'] and calls conv(g, x, etypes) gets the normalised output; here it was ignored
    torch.manual_seed(0)
    g = topograph.graph(([0, 1, 2, 0, 3], [1, 2, 0, 2, 2]))
    x, etypes = torch.randn(4, 3), torch.tensor([0, 1, 0, 1, 1])
    conv = topograph.nn.RelGraphConv(3, 2, 2, regularizer="basis", num_bases=2)
    norm = topograph.norm_by_dst(g).unsqueeze(1)
    expected = conv(g, x, etypes, norm)
    g.edata["norm"] = norm
    torch.testing.assert_close(conv(g, x, etypes), expected)
    assert not torch.allclose(conv(g, x, etypes, torch.ones(5, 1)), expected)  # a given norm wins, as in DGL


# --- graph transformer layers on padded batches
def test_graph_transformer_shape_errors_are_runtime_errors_as_torchs():
    # DGL 2.1 lets torch's Linear / broadcast raise RuntimeError for a padded batch of the wrong width or a bias
    # of the wrong shape; here they are DGLRuntimeError, still the ValueError they were
    nn = topograph.nn
    layer = nn.GraphormerLayer(feat_size=8, hidden_size=16, num_heads=2)
    with pytest.raises(RuntimeError, match=r"ndata must be \[B, N, 8\], got \(2, 4, 5\)"):
        layer(torch.ones(2, 4, 5))
    with pytest.raises(RuntimeError, match="attn_bias must be"):
        nn.BiasedMHA(8, 2)(torch.ones(2, 4, 8), attn_bias=torch.ones(2, 3, 3, 2))
    with pytest.raises(ValueError):
        layer(torch.ones(2, 4, 5))


# --- dgl.dataloading.ClusterGCNSampler
def test_cluster_gcn_sampler_batches_induced_subgraphs_of_whole_partitions(tmp_path):
    # DGL 2.1 (examples/pytorch/cluster_gcn): k partitions cached at cache_path (partition_offset [k + 1],
    # partition_node_ids [N]); a DataLoader over torch.arange(k) yields the subgraph induced by the union of the
    # batch's partitions, nodes in partition order, with NID / EID and g's features. Topograph has no METIS: the
    # partitions are contiguous runs of a reverse Cuthill-McKee order, so which nodes share one differs from DGL's
    n = 30
    u = torch.arange(n).repeat(2)
    g = topograph.to_bidirected(topograph.graph((u, (u * 7 + torch.arange(2 * n) // n + 1) % n), num_nodes=n))
    g.ndata["x"] = torch.arange(n, dtype=torch.float32)
    cache = tmp_path / "cluster_gcn.pkl"
    sampler = topograph.dataloading.ClusterGCNSampler(g, 5, cache_path=str(cache), prefetch_ndata=["x"])
    assert cache.exists() and sampler.partition_offset.tolist()[0] == 0 and len(sampler.partition_offset) == 6
    assert sorted(sampler.partition_node_ids.tolist()) == list(range(n))
    loader = topograph.dataloading.DataLoader(g, torch.arange(5), sampler, batch_size=2, shuffle=False)
    subgraphs = list(loader)
    assert len(subgraphs) == 3 and sum(sg.num_nodes() for sg in subgraphs) == n
    offsets, ids = sampler.partition_offset, sampler.partition_node_ids
    first = subgraphs[0]
    torch.testing.assert_close(first.ndata[topograph.NID], ids[offsets[0]:offsets[2]])
    torch.testing.assert_close(first.ndata["x"], g.ndata["x"][first.ndata[topograph.NID]])
    assert first.num_edges() == g.subgraph(first.ndata[topograph.NID]).num_edges()
    # the cache is read back, and checked against k and the graph as DGL's
    again = topograph.dataloading.ClusterGCNSampler(g, 5, cache_path=str(cache))
    assert torch.equal(again.partition_node_ids, ids)
    with pytest.raises(DGLError, match="Number of partitions in the cache"):
        topograph.dataloading.ClusterGCNSampler(g, 4, cache_path=str(cache))


# --- print(model)
def test_gcn2conv_prints_as_dgls():
    # DGL 2.1's extra_repr: in, alpha and beta (its bias / activation parts never show: it tests the key
    # "self._bias" in __dict__)
    assert repr(topograph.nn.GCN2Conv(4, 1)) == "GCN2Conv(in=4, alpha=0.1, beta=0.6931471805599453)"
    assert repr(topograph.nn.GCN2Conv(8, 2, alpha=0.2, lambda_=0.5, activation=torch.relu)) == \
        f"GCN2Conv(in=8, alpha=0.2, beta={__import__('math').log(0.5 / 2 + 1)})"


# --- dgl.heterograph
def test_a_relation_key_of_two_names_is_a_value_error_too():
    # DGL 2.1 unpacks each key into (src type, edge type, dst type): ValueError "not enough values to unpack";
    # here a DGLTypeError, so that the TypeError it was and DGL's ValueError both catch it
    with pytest.raises(ValueError, match=r"relation keys are \(src type, edge type, dst type\), got \('a', 'b'\)"):
        topograph.heterograph({("a", "b"): ([0], [1])})
    with pytest.raises(TypeError):
        topograph.heterograph({("a", "b"): ([0], [1])})

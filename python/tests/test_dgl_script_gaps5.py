"""What a fifth round of DGL-style scripts (dgl.sampling random walks, structure transforms, heterograph self
loops, dgl.function broadcasting, more conv layers, dgl.sparse chains, save / load, subgraphs and reordering,
heterograph batches, readouts, link-prediction and full-neighbour data loading) found unlike DGL 2.1. Each case
states DGL 2.1's behaviour, checked with the real DGL 2.1.0; where dgl imports, the comparison is also run."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch

DGLError = topograph.DGLError


# --- dgl.sampling.random_walk
def test_random_walk_types_follow_the_graphs_idtype():
    # DGL 2.1 returns the node-type ids in the graph's idtype, as the traces
    g = topograph.graph((torch.tensor([0, 1]), torch.tensor([1, 0]))).int()
    traces, types = topograph.sampling.random_walk(g, torch.tensor([0], dtype=torch.int32), length=2)
    assert traces.dtype == torch.int32 and types.dtype == torch.int32
    traces, eids, types = topograph.sampling.random_walk(g.long(), [0], length=2, return_eids=True)
    assert types.dtype == torch.int64 and eids.dtype == torch.int64


def test_random_walk_scalar_restart_prob_of_one_is_an_error():
    # DGL 2.1 checks a float restart_prob in [0, 1): 1.0 would end every walk before its first step
    g = topograph.graph((torch.tensor([0, 1]), torch.tensor([1, 0])))
    with pytest.raises(DGLError, match="restart_prob"):
        topograph.sampling.random_walk(g, [0], length=2, restart_prob=1.0)
    traces, _ = topograph.sampling.random_walk(g, [0], length=2, restart_prob=0.0)
    assert traces.tolist() == [[0, 1, 0]]


# --- dgl.to_simple
def test_to_simple_arbitrary_copy_edata_stores_each_kept_edges_parent_id():
    # DGL 2.1's 'arbitrary' picks each merged edge's features by a subframe of the first (lowest) parent edge,
    # which also stores those parent ids under dgl.EID (int64); 'sum' / 'mean' store none
    g = topograph.graph(([0, 0, 1, 2, 0], [1, 1, 2, 0, 2]))
    g.edata["w"] = torch.arange(5.0)
    s = topograph.to_simple(g, copy_edata=True)
    assert sorted(s.edata.keys()) == sorted(["count", "w", topograph.EID])
    assert s.edata[topograph.EID].tolist() == [0, 4, 2, 3] and s.edata[topograph.EID].dtype == torch.int64
    assert topograph.to_simple(g.int(), copy_edata=True).edata[topograph.EID].dtype == torch.int64
    assert sorted(topograph.to_simple(g, copy_edata=True, aggregator="sum").edata.keys()) == ["count", "w"]
    assert topograph.EID not in topograph.to_simple(g).edata  # copy_edata=False: nothing copied


def test_unknown_reducer_names_are_dgl_errors():
    # DGL 2.1: add_self_loop's "Unsupported aggregation" and to_simple's "Aggregator ... not recognized" are
    # DGLError (both still ValueErrors here, as before)
    g = topograph.graph(([0, 1], [1, 1]))
    g.edata["w"] = torch.ones(2)
    with pytest.raises(DGLError, match="median"):
        topograph.add_self_loop(g, fill_data="median")
    with pytest.raises(DGLError, match="median"):
        topograph.to_simple(g, copy_edata=True, aggregator="median")


# --- dgl.function message passing
def test_message_passing_input_errors_are_dgl_errors():
    # DGL 2.1 raises DGLError for integer features in a built-in ("Feature data must be float type") and for a
    # reducer reading a message the message function does not write ("Invalid message ... function pairs")
    import topograph.function as fn
    g = topograph.graph(([0, 1], [1, 2]))
    g.ndata["i"] = torch.arange(3)
    g.ndata["x"] = torch.ones(3, 2)
    with pytest.raises(DGLError, match="float"):
        g.update_all(fn.copy_u("i", "m"), fn.sum("m", "o"))
    with pytest.raises(TypeError):  # still the TypeError it was
        g.update_all(fn.copy_u("i", "m"), fn.sum("m", "o"))
    with pytest.raises(DGLError, match="'mm'"):
        g.update_all(fn.copy_u("x", "m"), fn.sum("mm", "o"))
    with pytest.raises(DGLError, match="'mm'"):
        g.update_all(lambda edges: {"m": edges.src["x"]}, fn.sum("mm", "o"))


# --- batches
def test_batch_num_nodes_and_edges_are_in_the_graphs_idtype():
    # DGL 2.1 keeps the batch counts in the graph's idtype (int32 for an int32 graph), batched or not
    h = topograph.graph(([0, 1], [1, 0]), idtype=torch.int32)
    h.edata["e"] = torch.ones(2, 2)
    for g in (h, topograph.batch([h, h])):
        assert g.batch_num_nodes().dtype == torch.int32 and g.batch_num_edges().dtype == torch.int32
    b = topograph.batch([h, h])
    assert b.batch_num_nodes().tolist() == [2, 2]
    assert topograph.batch([h.long(), h.long()]).batch_num_edges().dtype == torch.int64
    # what reads the counts still works on them: readouts, unbatch, segment ops, re-setting them
    b.ndata["x"] = torch.arange(4.0).view(4, 1)
    assert topograph.sum_nodes(b, "x").tolist() == [[1.0], [5.0]]
    assert topograph.broadcast_edges(b, torch.tensor([[1.0], [2.0]])).tolist() == [[1.0], [1.0], [2.0], [2.0]]
    assert [g.num_edges() for g in topograph.unbatch(b)] == [2, 2]
    b.set_batch_num_nodes(b.batch_num_nodes())
    b.set_batch_num_edges(b.batch_num_edges())
    assert topograph.unbatch(b)[1].edata["e"].shape == (2, 2)
    assert topograph.nn.AvgPooling()(b, b.ndata["x"]).tolist() == [[0.5], [2.5]]


# --- subgraphs
def test_a_mask_of_the_wrong_length_is_a_dgl_error():
    # DGL 2.1 reads a short mask as a mask of the first nodes; topograph refuses it, as a DGLError as its other
    # bad ids are (still a ValueError)
    g = topograph.graph(([0, 1, 2], [1, 2, 3]))
    with pytest.raises(DGLError, match="4 entries"):
        topograph.node_subgraph(g, torch.tensor([True, False]))
    with pytest.raises(DGLError, match="3 entries"):
        topograph.edge_subgraph(g, torch.tensor([True]))


# --- readouts
def test_readout_with_an_unknown_op_is_a_dgl_error():
    # DGL 2.1: "reducer prod not recognized." is a DGLError (still a ValueError here)
    g = topograph.graph(([0], [1]))
    g.ndata["h"] = torch.ones(2, 1)
    g.edata["e"] = torch.ones(1, 1)
    with pytest.raises(DGLError, match="'prod'"):
        topograph.readout_nodes(g, "h", op="prod")
    with pytest.raises(DGLError, match="'prod'"):
        topograph.readout_edges(g, "e", op="prod")


# --- dgl.nn layers' attributes
def test_graph_sage_gat_conv_answer_to_dgls_private_attribute_names():
    # layer-by-layer inference loops size their output buffers by DGL's attributes:
    # torch.zeros(N, layer._out_feats), layer._num_heads, layer._in_src_feats
    nn = topograph.nn
    g = nn.GraphConv(5, 3, norm="right", allow_zero_in_degree=True)
    assert (g._in_feats, g._out_feats, g._norm, g._allow_zero_in_degree) == (5, 3, "right", True)
    g.set_allow_zero_in_degree(False)
    assert g._allow_zero_in_degree is False
    s = nn.SAGEConv((4, 6), 2, "pool")
    assert (s._in_src_feats, s._in_dst_feats, s._out_feats, s._aggre_type) == (4, 6, 2, "pool")
    a = nn.GATConv(5, 3, num_heads=4)
    assert (a._in_src_feats, a._in_dst_feats, a._out_feats, a._num_heads) == (5, 5, 3, 4)
    assert a._allow_zero_in_degree is False


# --- graph utilities
def test_laplacian_lambda_max_gives_numpy_floats():
    # DGL 2.1 returns scipy's eigenvalue, a numpy.float64 (a float that also has .item(), which scripts call)
    np = pytest.importorskip("numpy")
    g = topograph.to_bidirected(topograph.graph(([0, 1, 2], [1, 2, 0])))
    (lmax,) = topograph.laplacian_lambda_max(g)
    assert isinstance(lmax, np.float64) and lmax.item() == pytest.approx(1.5)


def test_edge_weight_norm_and_edge_softmax_input_errors_are_dgl_errors():
    # DGL 2.1's EdgeWeightNorm raises DGLError for weights of more than one column and for non-positive
    # weights under norm='both'; edge_softmax's bad norm_by and logits not one row per edge of eids (silent in
    # DGL 2.1) are DGLError here alike, as the other shape errors of edge_softmax are
    g = topograph.graph(([0, 1, 2], [1, 2, 0]))
    norm = topograph.nn.EdgeWeightNorm(norm="both")
    with pytest.raises(DGLError, match="> 0"):
        norm(g, -torch.ones(3))
    with pytest.raises(DGLError, match="one scalar per edge"):
        norm(g, torch.ones(3, 2))
    with pytest.raises(DGLError, match="norm_by"):
        topograph.nn.functional.edge_softmax(g, torch.ones(3, 1), norm_by="both")
    with pytest.raises(DGLError, match="eids"):
        topograph.nn.functional.edge_softmax(g, torch.ones(3, 1), eids=torch.tensor([0, 1]))


# --- node views
def test_nodes_without_a_type_on_several_node_types_is_a_dgl_error():
    # DGL 2.1: "Node type name must be specified if there are more than one node types." is a DGLError
    hg = topograph.heterograph({("a", "r", "b"): ([0, 1], [1, 2])})
    with pytest.raises(DGLError, match="name one"):
        hg.nodes()
    with pytest.raises(DGLError, match="name one"):
        hg.nodes[None].data  # noqa: B018 (the view's own lookup)
    assert hg.nodes("b").tolist() == [0, 1, 2]


def test_graph_conv_external_weight_on_a_weighted_module_is_a_dgl_error():
    # DGL 2.1: "External weight is provided while at the same time the module has defined its own weight
    # parameter" is a DGLError
    g = topograph.graph(([0, 1], [1, 0]))
    with pytest.raises(DGLError, match="weight=False"):
        topograph.nn.GraphConv(3, 2)(g, torch.ones(2, 3), weight=torch.ones(3, 2))


# --- dgl.sparse
def test_sparse_shape_errors_are_runtime_errors_too():
    # DGL 2.1's dgl.sparse checks shapes in C++ (TORCH_CHECK): a script catches RuntimeError; topograph's
    # errors stay DGLErrors (ValueErrors) with their messages, and are RuntimeErrors as well
    sp = topograph.sparse
    A = sp.spmatrix(torch.tensor([[0, 1], [1, 2]]), shape=(3, 3))
    cases = [
        (lambda: A @ torch.ones(4, 2), "spmm"),  # SpMM: Invalid input shapes
        (lambda: A + sp.identity((4, 4)), "shapes"),  # Elementwise operators ... different shapes
        (lambda: sp.matmul(A, sp.identity((2, 2))), "chain"),  # SpSpMM: the second dim of lhs_mat ...
        (lambda: sp.spmatrix(torch.tensor([[0, 1], [1, 2]]), torch.ones(3), (3, 3)), "nnz"),  # indices.size(1) == ...
        (lambda: A.reduce(0, "prod"), "rtype"),  # unknown reduce function prod
        (lambda: sp.sddmm(A, torch.ones(2, 2), torch.ones(2, 3)), "sddmm"),
    ]
    for call, words in cases:
        with pytest.raises(RuntimeError, match=words):
            call()
        with pytest.raises(DGLError, match=words):
            call()


def test_csr_and_csc_value_indices_of_a_coo_matrix_are_a_tensor_even_in_order():
    # DGL 2.1 gives value indices as a tensor for a matrix built from COO (spmatrix, from_coo, g.adj(), its
    # arithmetic), in order or not; scripts index A.val with them. None (DGL's answer only where the matrix is
    # stored in that very format) made A.val[None] a [1, nnz] tensor without a word
    sp = topograph.sparse
    B = sp.spmatrix(torch.tensor([[0, 0, 2], [1, 3, 0]]), torch.tensor([1.0, 2.0, 3.0]), shape=(3, 4))
    assert B.csr()[2].tolist() == [0, 1, 2] and B.csc()[2].tolist() == [2, 0, 1]
    indptr, cols, order = B.csr()
    assert torch.equal(sp.from_csr(indptr, cols, B.val[order], B.shape).to_dense(), B.to_dense())
    assert topograph.graph(([0, 1], [1, 2])).adj().csr()[2].tolist() == [0, 1]


# --- user-defined functions
def test_a_udf_returning_the_wrong_thing_is_a_dgl_error():
    # DGL 2.1: "Expect dictionary type for feature data" and "Expect number of features to match number of
    # nodes" are DGLErrors (still TypeError / ValueError here)
    g = topograph.graph(([0, 1], [1, 2]))
    g.ndata["x"] = torch.ones(3, 1)
    with pytest.raises(DGLError, match="3 rows"):
        g.apply_nodes(lambda nodes: {"bad": torch.ones(2)})
    with pytest.raises(DGLError, match="dict"):
        g.apply_edges(lambda edges: torch.ones(2))
    with pytest.raises(TypeError, match="dict"):
        g.apply_edges(lambda edges: torch.ones(2))


# --- bad arguments DGL 2.1 does not check cleanly
def test_bad_arguments_without_a_clean_dgl_error_are_dgl_errors():
    # DGL 2.1 answers these with an AssertionError, a bare torch error or nothing at all (multi_update_all takes
    # any cross reducer name, EdgeWeightNorm reads norm='left' as 'right'); topograph's messages name the
    # argument, and a script's `except dgl.DGLError` now catches them (they stay ValueErrors)
    import topograph.function as fn
    from topograph.dataloading import MultiLayerFullNeighborSampler, as_edge_prediction_sampler
    hg = topograph.heterograph({("a", "r", "b"): ([0, 1], [1, 0]), ("b", "s", "a"): ([0], [1])})
    hg.nodes["a"].data["h"] = torch.ones(2, 1)
    with pytest.raises(DGLError, match="cross_reducer"):
        hg.multi_update_all({"r": (fn.copy_u("h", "m"), fn.sum("m", "o"))}, "prod")
    with pytest.raises(DGLError, match="joins two node types"):
        topograph.to_bidirected(hg)
    with pytest.raises(DGLError, match="norm"):
        topograph.nn.EdgeWeightNorm(norm="left")
    g = topograph.batch([topograph.graph(([0], [1])), topograph.graph(([0], [1]))])
    g.ndata["h"] = torch.ones(4, 3)
    with pytest.raises(DGLError, match="one row per graph"):
        topograph.broadcast_nodes(g, torch.ones(3, 3))
    with pytest.raises(DGLError, match="sortby"):
        topograph.topk_nodes(g, "h", 1, sortby=7)
    with pytest.raises(DGLError, match="reverse_eids"):
        as_edge_prediction_sampler(MultiLayerFullNeighborSampler(1), exclude="reverse_id")


def test_a_blocks_ndata_is_a_dgl_error():
    # DGL 2.1's block.ndata reads the source side as a {type: tensor} dict and refuses writes (an AssertionError
    # or a DGLError); topograph points to srcdata / dstdata, now as a DGLError
    g = topograph.graph(([0, 1, 2], [1, 2, 3]))
    block = topograph.to_block(g, torch.tensor([1, 2, 3]))
    with pytest.raises(DGLError, match="srcdata"):
        block.ndata  # noqa: B018


# --- data loading
def test_neighbor_sampler_ids_are_in_the_graphs_idtype():
    # DGL 2.1 hands back input_nodes and output_nodes in the graph's idtype (int32 on an int32 graph), as the
    # blocks' NID / EID already are here
    from topograph.dataloading import DataLoader, MultiLayerFullNeighborSampler, NeighborSampler
    g = topograph.graph((torch.arange(6), (torch.arange(6) + 1) % 6)).int()
    g.ndata["x"] = torch.arange(6.0)
    for sampler in (MultiLayerFullNeighborSampler(2), NeighborSampler([2, 2])):
        (inp, out, blocks), = list(DataLoader(g, torch.tensor([1, 4], dtype=torch.int32), sampler, batch_size=2))
        assert inp.dtype == out.dtype == torch.int32 and out.tolist() == [1, 4]
        assert torch.equal(g.ndata["x"][inp], blocks[0].srcdata["x"])  # int32 ids still index features
    hg = topograph.heterograph({("a", "r", "b"): ([0, 1], [1, 0])}, idtype=torch.int32)
    inp, out, _ = MultiLayerFullNeighborSampler(1).sample(hg, {"b": torch.tensor([0, 1], dtype=torch.int32)})
    assert {t: v.dtype for t, v in inp.items()} == {"a": torch.int32, "b": torch.int32}
    assert out["b"].dtype == torch.int32
    inp, out, _ = MultiLayerFullNeighborSampler(1).sample(g.long(), torch.tensor([1]))
    assert inp.dtype == out.dtype == torch.int64


def test_ids_of_more_than_one_dimension_are_a_dgl_error():
    # DGL 2.1: 'Expect a 1-D tensor for argument "nodes"' is a DGLError, in the data loader and the graph's calls
    from topograph.dataloading import DataLoader, MultiLayerFullNeighborSampler
    g = topograph.graph(([0, 1], [1, 2]))
    with pytest.raises(DGLError, match="1-D"):
        next(iter(DataLoader(g, torch.tensor([[1, 2]]), MultiLayerFullNeighborSampler(1), batch_size=2)))
    with pytest.raises(DGLError, match="1-D"):
        g.in_degrees(torch.tensor([[0, 1]]))


# --- printing features
def test_feature_views_print_as_dgls():
    # a script's print(g.ndata) shows DGL 2.1's repr: the {name: tensor} dict (a defaultdict {name: {type:
    # tensor}} on a graph of several types), whose text the script's output then matches
    import collections
    g = topograph.graph(([0, 1], [1, 2]))
    g.ndata["x"] = torch.ones(3, 2)
    g.edata["w"] = torch.arange(2.0)
    assert repr(g.ndata) == repr({"x": g.ndata["x"]}) and repr(g.edata) == repr({"w": g.edata["w"]})
    assert repr(g.nodes[[0, 2]].data) == repr({"x": torch.ones(2, 2)})
    hg = topograph.heterograph({("a", "r", "b"): ([0, 1], [1, 0]), ("b", "s", "a"): ([0], [1])})
    hg.nodes["a"].data["h"] = torch.ones(2, 1)
    hg.edges["r"].data["e"] = torch.zeros(2)
    assert repr(hg.ndata) == repr(collections.defaultdict(dict, {"h": {"a": torch.ones(2, 1)}}))
    assert repr(hg.edata) == repr(collections.defaultdict(dict, {"e": {("a", "r", "b"): torch.zeros(2)}}))


def test_layers_print_as_dgls():
    # print(model) in a DGL script shows DGL 2.1's text for these layers: GraphConv's summary line, GATConv's
    # LeakyReLU submodule, TypedLinear's sizes
    nn = topograph.nn
    assert repr(nn.GraphConv(5, 3)) == "GraphConv(in=5, out=3, normalization=both, activation=None)"
    act = torch.relu
    assert repr(nn.GraphConv(5, 3, norm="right", activation=act)) == \
        f"GraphConv(in=5, out=3, normalization=right, activation={act})"
    gat = repr(nn.GATConv(5, 3, 2, residual=True)).splitlines()
    assert gat[1:] == ["  (fc): Linear(in_features=5, out_features=6, bias=False)",
                       "  (feat_drop): Dropout(p=0.0, inplace=False)",
                       "  (attn_drop): Dropout(p=0.0, inplace=False)",
                       "  (leaky_relu): LeakyReLU(negative_slope=0.2)",
                       "  (res_fc): Linear(in_features=5, out_features=6, bias=True)", ")"]
    assert repr(nn.TypedLinear(5, 3, 2)) == "TypedLinear(in_size=5, out_size=3, num_types=2)"
    assert repr(nn.TypedLinear(5, 3, 2, regularizer="basis", num_bases=2)) == \
        "TypedLinear(in_size=5, out_size=3, num_types=2, regularizer=basis, num_bases=2)"


def test_a_block_of_several_types_prints_as_dgls():
    # DGL 2.1's Block repr: one line for one relation, else four lines ending with the metagraph's
    # (source type, destination type, edge type) edges, as print(blocks) shows them
    hg = topograph.heterograph({("user", "follows", "user"): ([0], [1]), ("user", "plays", "game"): ([0, 1], [0, 0])})
    block = topograph.to_block(hg, {"game": torch.tensor([0]), "user": torch.tensor([1])})
    assert repr(block) == ("Block(num_src_nodes={'game': 1, 'user': 2},\n"
                           "      num_dst_nodes={'game': 1, 'user': 1},\n"
                           "      num_edges={('user', 'follows', 'user'): 1, ('user', 'plays', 'game'): 2},\n"
                           "      metagraph=[('user', 'user', 'follows'), ('user', 'game', 'plays')])")
    g = topograph.graph(([0, 1], [1, 2]))
    assert repr(topograph.to_block(g, torch.tensor([1, 2]))) == "Block(num_src_nodes=3, num_dst_nodes=2, num_edges=2)"

"""Which node types a one-relation slice g[etype] and edge_type_subgraph keep, and their features shared with
the parent both ways. Every expected value below is DGL 2.1's, read off real DGL 2.1 on this same graph:
  - g[etype] keeps only the relation's types: [src] when both ends are one type, else [src, dst] (source
    first, not the parent's order); num_nodes() counts those types only; no NID / EID;
  - edge_type_subgraph(g, etypes) keeps the types its relations touch, in the parent's order (so
    edge_type_subgraph(g, ['plays']).ntypes is ['game', 'user'] where g['plays'].ntypes is ['user', 'game']),
    its relations in the order given;
  - both share the parent's frames: a feature set through the slice (ndata, srcdata, dstdata, edata, or
    written by update_all) is on the parent's type or relation, and one set on the parent is seen in the slice.
"""
import pytest
import torch

import topograph
import topograph.function as fn
from topograph import DGLError

RELATIONS = {("user", "follows", "user"): ([0, 1, 2], [1, 2, 3]),
             ("user", "plays", "game"): ([0, 1, 3], [0, 1, 1]),
             ("developer", "develops", "game"): ([0, 1], [0, 1]),
             ("user", "wishes", "store"): ([0], [2])}
COUNTS = {"user": 4, "game": 3, "developer": 2, "store": 5}


def hetero(idtype=torch.int64):
    return topograph.heterograph({k: (torch.tensor(u, dtype=idtype), torch.tensor(v, dtype=idtype))
                                  for k, (u, v) in RELATIONS.items()}, COUNTS, idtype=idtype)


# DGL 2.1: (ntypes, srctypes, dsttypes, num_nodes(), num_edges(), num_src_nodes(), num_dst_nodes())
SLICES = {"follows": (["user"], ["user"], ["user"], 4, 3, 4, 4),
          "plays": (["user", "game"], ["user"], ["game"], 7, 3, 4, 3),
          "develops": (["developer", "game"], ["developer"], ["game"], 5, 2, 2, 3),
          "wishes": (["user", "store"], ["user"], ["store"], 9, 1, 4, 5)}


@pytest.mark.parametrize("etype", sorted(SLICES))
def test_slice_keeps_the_relations_types(etype):
    g = hetero()
    s = g[etype]
    ntypes, srctypes, dsttypes, n, e, n_src, n_dst = SLICES[etype]
    assert s.ntypes == ntypes and s.srctypes == srctypes and s.dsttypes == dsttypes
    assert s.num_nodes() == n and s.num_edges() == e
    assert s.num_src_nodes() == n_src and s.num_dst_nodes() == n_dst
    assert s.canonical_etypes == [g.to_canonical_etype(etype)]
    assert s.is_homogeneous == (etype == "follows") and s.is_unibipartite == (etype != "follows")
    assert s.idtype == torch.int64 and s.device == torch.device("cpu")
    for t in ntypes:
        assert s.num_nodes(t) == COUNTS[t] and s.nodes(t).tolist() == list(range(COUNTS[t]))
        assert s.get_ntype_id(t) == ntypes.index(t)
    for t in set(COUNTS) - set(ntypes):  # DGL: 'Node type "store" does not exist.'
        with pytest.raises(DGLError):
            s.num_nodes(t)
        with pytest.raises(DGLError):
            s.nodes[t].data


def test_slice_repr_is_dgls():
    g = hetero()
    assert repr(g["follows"]) == ("Graph(num_nodes=4, num_edges=3,\n      ndata_schemes={}\n"
                                  "      edata_schemes={})")
    assert repr(g["plays"]) == ("Graph(num_nodes={'user': 4, 'game': 3},\n"
                                "      num_edges={('user', 'plays', 'game'): 3},\n"
                                "      metagraph=[('user', 'game', 'plays')])")


# DGL 2.1: etypes -> (ntypes, canonical_etypes, num_nodes(), srctypes, dsttypes); ['develops', 'wishes'] touches
# every type, so it held before the change too (the control case)
SUBGRAPHS = [
    (["follows", "plays"], ["game", "user"], [("user", "follows", "user"), ("user", "plays", "game")], 7,
     ["game", "user"], ["game", "user"]),
    (["plays", "follows"], ["game", "user"], [("user", "plays", "game"), ("user", "follows", "user")], 7,
     ["game", "user"], ["game", "user"]),
    (["develops", "wishes"], ["developer", "game", "store", "user"],
     [("developer", "develops", "game"), ("user", "wishes", "store")], 14, ["developer", "user"], ["game", "store"]),
    (["plays", "develops"], ["developer", "game", "user"],
     [("user", "plays", "game"), ("developer", "develops", "game")], 9, ["developer", "user"], ["game"]),
    ([("user", "wishes", "store"), "follows"], ["store", "user"],
     [("user", "wishes", "store"), ("user", "follows", "user")], 9, ["store", "user"], ["store", "user"]),
    (["plays"], ["game", "user"], [("user", "plays", "game")], 7, ["user"], ["game"]),
]


@pytest.mark.parametrize("etypes, ntypes, canonical, n, srctypes, dsttypes", SUBGRAPHS)
def test_edge_type_subgraph_keeps_the_types_its_relations_touch(etypes, ntypes, canonical, n, srctypes, dsttypes):
    g = hetero(torch.int32)
    for sub in (topograph.edge_type_subgraph(g, etypes), g.edge_type_subgraph(etypes)):
        assert sub.ntypes == ntypes and sub.canonical_etypes == canonical and sub.num_nodes() == n
        assert sub.srctypes == srctypes and sub.dsttypes == dsttypes
        assert sub.idtype == torch.int32
        assert all(not sub.nodes[t].data for t in ntypes)  # no NID (DGL stores none)
        assert all(not sub.edges[c].data for c in canonical)  # no EID
        for c in canonical:
            assert [x.tolist() for x in sub.edges(etype=c)] == [x.tolist() for x in g.edges(etype=c)]


def test_features_are_shared_both_ways():
    g = hetero(torch.int32)
    f, p = g["follows"], g["plays"]
    f.ndata["h"] = torch.arange(4.0).view(4, 1)
    assert g.nodes["user"].data["h"].flatten().tolist() == [0.0, 1.0, 2.0, 3.0]
    g.nodes["user"].data["x"] = torch.ones(4, 2)
    assert sorted(f.ndata.keys()) == ["h", "x"] and f.idtype == torch.int32
    p.srcdata["s"] = torch.full((4, 1), 5.0)
    p.dstdata["d"] = torch.full((3, 1), 7.0)
    assert "s" in g.nodes["user"].data and g.nodes["game"].data["d"].flatten().tolist() == [7.0, 7.0, 7.0]
    h = p.ndata["h"]  # two types: {type: tensor} over those holding it
    assert list(h.keys()) == ["user"] and h["user"].flatten().tolist() == [0.0, 1.0, 2.0, 3.0]
    assert sorted(p.srcdata.keys()) == ["h", "s", "x"] and sorted(p.dstdata.keys()) == ["d"]
    p.update_all(fn.copy_u("h", "m"), fn.sum("m", "hsum"))
    assert g.nodes["game"].data["hsum"].flatten().tolist() == [0.0, 4.0, 0.0]
    f.update_all(fn.copy_u("h", "m"), fn.sum("m", "hf"))
    assert g.nodes["user"].data["hf"].flatten().tolist() == [0.0, 0.0, 1.0, 2.0]
    p.edata["w"] = torch.tensor([1.0, 2.0, 3.0])
    assert g.edges["plays"].data["w"].tolist() == [1.0, 2.0, 3.0]
    assert topograph.NID not in f.ndata and topograph.EID not in f.edata
    with pytest.raises(DGLError):  # DGL: "Expect number of features to match number of nodes"
        f.ndata["bad"] = torch.zeros(5)
    sub = topograph.edge_type_subgraph(g, ["follows", "plays"])
    sub.nodes["game"].data["z"] = torch.zeros(3)
    assert "z" in g.nodes["game"].data and sub.ntypes == ["game", "user"] and sub.num_nodes() == 7


def test_to_homogeneous_of_a_slice():
    g = hetero()
    hom = topograph.to_homogeneous(topograph.edge_type_subgraph(g, ["follows", "plays"]))
    assert hom.ndata[topograph.NTYPE].tolist() == [0, 0, 0, 1, 1, 1, 1]
    assert hom.ndata[topograph.NID].tolist() == [0, 1, 2, 0, 1, 2, 3]
    assert hom.edata[topograph.ETYPE].tolist() == [0, 0, 0, 1, 1, 1]
    hom = topograph.to_homogeneous(g["plays"])  # user (its source) first
    assert hom.ndata[topograph.NTYPE].tolist() == [0, 0, 0, 0, 1, 1, 1]
    assert hom.edata[topograph.ETYPE].tolist() == [0, 0, 0]


def test_block_slice_keeps_its_two_sides():
    g = hetero(torch.int32)
    seeds = {"game": torch.tensor([0, 1], dtype=torch.int32), "user": torch.tensor([1, 3], dtype=torch.int32)}
    block = topograph.to_block(topograph.in_subgraph(g, seeds), seeds)
    plays = block["plays"]
    assert plays.is_block and plays.ntypes == ["user", "game"]
    assert plays.srctypes == ["user"] and plays.dsttypes == ["game"]
    assert plays.num_src_nodes() == 4 and plays.num_dst_nodes() == 2
    assert topograph.NID in plays.srcdata and topograph.NID in plays.dstdata  # the block's, shared
    follows = block["follows"]
    assert follows.srctypes == ["user"] and follows.dsttypes == ["user"]
    assert follows.num_src_nodes() == 4 and follows.num_dst_nodes() == 2
    follows.dstdata["y"] = torch.ones(2)
    assert block.dstnodes["user"].data["y"].tolist() == [1.0, 1.0]


def test_slice_follows_mutation_of_the_parent():
    g = hetero()
    before = g["follows"]
    g.add_nodes(2, ntype="user")
    assert g["follows"].num_nodes() == 6 and before.num_nodes() == 4  # a view taken before keeps the old graph
    g.add_edges(torch.tensor([4]), torch.tensor([5]), etype="follows")
    assert g["follows"].num_edges() == 4 and g["follows"].edges()[1].tolist() == [1, 2, 3, 5]


def test_hetero_message_passing_through_slices():
    """multi_update_all and HeteroGraphConv run on g[relation]: their results (DGL 2.1's) are unchanged by the
    views' fewer node types (this one held before the change too)."""
    g = hetero()
    g.nodes["user"].data["h"] = torch.arange(4.0).view(4, 1)
    g.nodes["developer"].data["h"] = torch.tensor([[10.0], [20.0]])
    g.multi_update_all({"plays": (fn.copy_u("h", "m"), fn.sum("m", "o")),
                        "develops": (fn.copy_u("h", "m"), fn.sum("m", "o"))}, "sum")
    assert g.nodes["game"].data["o"].flatten().tolist() == [10.0, 24.0, 0.0]
    conv = topograph.nn.HeteroGraphConv({e: topograph.nn.GraphConv(1, 1, norm="none", weight=False, bias=False,
                                                                   allow_zero_in_degree=True)
                                         for _, e, _ in g.canonical_etypes}, aggregate="sum")
    x = {"user": g.nodes["user"].data["h"], "developer": g.nodes["developer"].data["h"],
         "game": torch.zeros(3, 1), "store": torch.zeros(5, 1)}
    assert conv(g, x)["game"].flatten().tolist() == [10.0, 24.0, 0.0]

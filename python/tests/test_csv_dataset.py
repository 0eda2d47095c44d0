"""topograph.data.CSVDataset: folders of meta.yaml and CSV files written into each test's tmp_path (homogeneous,
heterogeneous, several graphs with labels, another separator, custom parsers), the cache, each kind of bad input
and its message, and, where dgl imports, the same graphs, features and labels as DGL 2.1's CSVDataset."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import os
import shutil
import sys

import pytest
import torch

pytest.importorskip("yaml")
pytest.importorskip("pandas")

from topograph import DGLError  # noqa: E402
from topograph.data import CSVDataset  # noqa: E402
from topograph.data.dgl_dataset import Subset  # noqa: E402


def write(folder, files):
    """Write {file name: text} into folder (made if missing); returns the folder."""
    os.makedirs(folder, exist_ok=True)
    for name, text in files.items():
        with open(os.path.join(folder, name), "w") as f:
            f.write(text)
    return folder


HOMO = {
    "meta.yaml": "dataset_name: homo\nedge_data:\n- file_name: edges.csv\nnode_data:\n- file_name: nodes.csv\n",
    # ids out of order: nodes are numbered in sorted id order (3 -> 2)
    "nodes.csv": 'node_id,label,feat,flag,score\n3,0,"0.5,1.0",True,0.25\n1,1,"1.5,2.0",False,1.5\n'
                 '2,0,"2.5,3.0",True,2.0\n0,1,"3.5,4.0",False,0.0\n',
    "edges.csv": 'src_id,dst_id,weight,ivec\n3,1,0.5,"1,2"\n1,2,1.0,"3,4"\n0,3,2.0,"5,6"\n3,3,4.0,"7,8"\n',
}
HETERO = {
    "meta.yaml": """dataset_name: hetero
node_data:
- file_name: users.csv
  ntype: user
- file_name: items.csv
  ntype: item
  node_id_field: iid
edge_data:
- file_name: follows.csv
  etype: [user, follows, user]
- file_name: buys.csv
  etype: [user, buys, item]
  src_id_field: uid
  dst_id_field: iid
""",
    "users.csv": "node_id,age\n10,30\n20,40\n30,50\n",
    "items.csv": 'iid,price,emb\nb,2.5,"1,0,0"\na,1.5,"0,1,0"\n',  # text ids, sorted: a -> 0, b -> 1
    "follows.csv": "src_id,dst_id\n10,20\n20,30\n30,10\n",
    "buys.csv": "uid,iid,qty\n10,a,1\n20,b,2\n30,a,3\n30,b,4\n",
}
MULTI = {
    "meta.yaml": """dataset_name: multi
edge_data:
- file_name: edges.csv
node_data:
- file_name: nodes.csv
graph_data:
  file_name: graphs.csv
""",
    "nodes.csv": 'graph_id,node_id,feat\n0,0,"0.1,0.2"\n0,1,"0.3,0.4"\n0,2,"0.5,0.6"\n1,1,"0.7,0.8"\n1,0,"0.9,1.0"\n'
                 '2,5,"1.1,1.2"\n2,7,"1.3,1.4"\n',
    "edges.csv": "graph_id,src_id,dst_id,w\n0,0,1,1.0\n0,1,2,2.0\n1,1,0,3.0\n2,5,7,4.0\n2,7,5,5.0\n2,7,7,6.0\n",
    # graph 3 has no node or edge: an empty graph, as DGL's; graph order is this file's
    "graphs.csv": 'graph_id,label,feat\n2,1,"1,2,3"\n0,0,"4,5,6"\n1,1,"7,8,9"\n3,0,"0,0,0"\n',
}
SEPARATOR = {
    "meta.yaml": "dataset_name: sep\nseparator: '|'\nedge_data:\n- file_name: e.psv\nnode_data:\n- file_name: n.psv\n"
                 "graph_data:\n  file_name: g.psv\n",
    "n.psv": "node_id|feat\n0|1,2\n1|3,4\n2|5,6\n",
    "e.psv": "src_id|dst_id|w\n0|1|1.5\n1|2|2.5\n",
    "g.psv": "graph_id|label|size\n0|7|3\n",  # one row: DGL 2.1 fails on it (see test_single_row_files)
}
FOLDERS = {"homo": HOMO, "hetero": HETERO, "multi": MULTI}


def load(tmp_path, files, name="ds", **kwargs):
    return CSVDataset(write(tmp_path / name, files), verbose=False, **kwargs)


def test_homogeneous_features_and_order(tmp_path):
    ds = load(tmp_path, HOMO)
    assert len(ds) == 1 and ds.data == {} and not hasattr(ds, "labels")
    g = ds[0]  # no graph file: the graph alone
    assert isinstance(g, topograph.DGLGraph) and g.num_nodes() == 4 and g.idtype == torch.int64
    assert g.ntypes == ["_V"] and g.canonical_etypes == [("_V", "_E", "_V")]
    u, v = g.edges()
    assert u.tolist() == [3, 1, 0, 3] and v.tolist() == [1, 2, 3, 3]  # ids 0..3 sorted: position = id
    assert g.ndata["label"].tolist() == [1, 1, 0, 0] and g.ndata["label"].dtype == torch.int64
    assert g.ndata["feat"].dtype == torch.float32 and g.ndata["feat"].shape == (4, 2)
    assert g.ndata["feat"][3].tolist() == [0.5, 1.0]
    assert g.ndata["flag"].dtype == torch.bool and g.ndata["flag"].tolist() == [False, False, True, True]
    assert g.ndata["score"].dtype == torch.float32
    assert g.edata["weight"].tolist() == [0.5, 1.0, 2.0, 4.0]
    assert g.edata["ivec"].dtype == torch.int64 and g.edata["ivec"].tolist() == [[1, 2], [3, 4], [5, 6], [7, 8]]


def test_heterograph(tmp_path):
    g = load(tmp_path, HETERO)[0]
    assert g.ntypes == ["item", "user"] and g.num_nodes("user") == 3 and g.num_nodes("item") == 2
    assert sorted(g.canonical_etypes) == [("user", "buys", "item"), ("user", "follows", "user")]
    u, v = g.edges(etype="buys")
    assert u.tolist() == [0, 1, 2, 2] and v.tolist() == [0, 1, 0, 1]
    assert g.edges(etype="follows")[1].tolist() == [1, 2, 0]
    assert g.nodes["item"].data["price"].tolist() == [1.5, 2.5]  # text ids sorted: a, b
    assert g.nodes["item"].data["emb"].tolist() == [[0, 1, 0], [1, 0, 0]]
    assert g.nodes["user"].data["age"].tolist() == [30, 40, 50]
    assert g.edges["buys"].data["qty"].tolist() == [1, 2, 3, 4]


def test_multi_graph_with_labels(tmp_path):
    ds = load(tmp_path, MULTI)
    assert len(ds) == 4 and sorted(ds.data) == ["feat", "label"]
    assert ds.data["label"].shape == (4, 1) and ds.data["feat"].shape == (4, 3)  # graph data made 2-D, as DGL's
    g, data = ds[0]  # the graph file's first row: graph 2
    assert g.num_nodes() == 2 and g.edges()[0].tolist() == [0, 1, 1] and g.edges()[1].tolist() == [1, 0, 1]
    assert torch.allclose(g.ndata["feat"], torch.tensor([[1.1, 1.2], [1.3, 1.4]]))
    assert data["label"].tolist() == [1] and data["feat"].tolist() == [1, 2, 3]
    g1 = ds[2][0]  # graph 1: ids 1, 0 sorted
    assert torch.allclose(g1.ndata["feat"], torch.tensor([[0.9, 1.0], [0.7, 0.8]])) and g1.edata["w"].tolist() == [3.0]
    empty = ds[3][0]
    assert empty.num_nodes() == 0 and empty.num_edges() == 0
    sub = ds[torch.tensor([1, 2])]
    assert isinstance(sub, Subset) and len(sub) == 2 and sub[0][1]["label"].tolist() == [0]


def test_one_label_column_and_transform(tmp_path):
    files = dict(MULTI, **{"graphs.csv": "graph_id,label\n0,5\n1,6\n2,7\n3,8\n"})
    ds = load(tmp_path, files, transform=lambda g: topograph.add_self_loop(g))
    assert ds.labels.tolist() == [[5], [6], [7], [8]]
    g, label = ds[1]
    assert label.tolist() == [6] and g.num_edges() == 1 + 2 and ds.graphs[1].num_edges() == 1


def test_separator_and_single_row_files(tmp_path):
    ds = load(tmp_path, SEPARATOR)
    g, data = ds[0]  # two graph columns: a dict
    assert g.ndata["feat"].tolist() == [[1, 2], [3, 4], [5, 6]] and g.edata["w"].tolist() == [1.5, 2.5]
    assert data["label"].tolist() == [7] and data["size"].tolist() == [3]
    assert ds.data["label"].tolist() == [[7]] and ds.data["size"].tolist() == [[3]]
    one = {"meta.yaml": HOMO["meta.yaml"], "nodes.csv": "node_id,x\n4,1.5\n", "edges.csv": "src_id,dst_id\n4,4\n"}
    g = load(tmp_path, one, "one")[0]
    assert g.num_nodes() == 1 and g.ndata["x"].tolist() == [1.5] and g.edges()[0].tolist() == [0]


def test_graph_without_edges(tmp_path):
    """DGL 2.1 raises KeyError for a graph with nodes but no edges (test_dgl_bugs); here it has no edges."""
    files = dict(MULTI, **{"graphs.csv": "graph_id,label\n0,0\n1,1\n2,0\n3,1\n4,0\n",
                           "nodes.csv": MULTI["nodes.csv"] + '4,0,"0,0"\n4,1,"0,0"\n'})
    g = load(tmp_path, files)[4][0]
    assert g.num_nodes() == 2 and g.num_edges() == 0 and g.canonical_etypes == [("_V", "_E", "_V")]
    hetero = dict(HETERO, **{"follows.csv": "src_id,dst_id\n", "buys.csv": "uid,iid,qty\n"})
    g = load(tmp_path, hetero, "h")[0]
    assert sorted(g.canonical_etypes) == [("user", "buys", "item"), ("user", "follows", "user")]
    assert g.num_edges() == 0 and g.num_nodes("user") == 3


def test_custom_parsers(tmp_path):
    calls = []

    def nparse(df):
        calls.append(("n", sorted(df.columns)))  # the id columns are gone
        return {"twice": df["age"].to_numpy() * 2}

    def gparse(df):
        return {"y": df["label"].to_numpy() + 100}

    ds = load(tmp_path, HETERO, ndata_parser={"user": nparse},
              edata_parser={("user", "buys", "item"): lambda df: {"q": torch.tensor(df["qty"].tolist()) * 1.5}})
    g = ds[0]
    assert calls == [("n", ["age"])] and g.nodes["user"].data["twice"].tolist() == [60, 80, 100]
    assert "price" in g.nodes["item"].data  # the default parser for the types without their own
    assert g.edges["buys"].data["q"].tolist() == [1.5, 3.0, 4.5, 6.0] and "qty" not in g.edges["buys"].data
    ds = load(tmp_path, MULTI, "m", ndata_parser=lambda df: {}, edata_parser=lambda df: {}, gdata_parser=gparse)
    assert ds.labels.tolist() == [[101], [100], [101], [100]] and list(ds[0][0].ndata.keys()) == []


def test_cache(tmp_path, monkeypatch):
    calls = []
    process = CSVDataset.process
    monkeypatch.setattr(CSVDataset, "process", lambda self: (calls.append(1), process(self))[1])
    folder = write(tmp_path / "ds", MULTI)
    before = set(os.listdir(tmp_path))
    a = CSVDataset(folder, verbose=False)
    b = CSVDataset(folder, verbose=False)
    assert calls == [1] and set(os.listdir(tmp_path)) == before  # written inside the dataset's folder only
    assert b.save_path == os.path.join(folder, "multi")
    assert os.listdir(b.save_path) == [f"multi_topograph_{b.hash}.bin"]
    for x, y in zip(a.graphs, b.graphs):
        assert torch.equal(x.edges()[0], y.edges()[0]) and x.ndata.keys() == y.ndata.keys()
    assert torch.equal(a.data["feat"], b.data["feat"]) and torch.equal(b[0][1]["label"], a[0][1]["label"])
    CSVDataset(folder, verbose=False, force_reload=True)
    assert calls == [1, 1]
    # a changed CSV file is read again (DGL 2.1 reads its stale cache until force_reload=True)
    write(folder, {"graphs.csv": 'graph_id,label,feat\n2,19,"1,2,3"\n0,0,"4,5,6"\n1,1,"7,8,9"\n3,0,"0,0,0"\n'})
    c = CSVDataset(folder, verbose=False)
    assert calls == [1, 1, 1] and c.data["label"][0].tolist() == [19]
    assert os.listdir(c.save_path) == [f"multi_topograph_{c.hash}.bin"] and c.hash != b.hash  # the stale one gone


def test_cache_with_one_label(tmp_path):
    files = dict(MULTI, **{"graphs.csv": "graph_id,label\n0,5\n1,6\n2,7\n3,8\n"})
    load(tmp_path, files)
    ds = load(tmp_path, files)
    assert ds.labels.tolist() == [[5], [6], [7], [8]] and ds[0][1].tolist() == [5]


def test_unnamed_column_is_skipped(tmp_path):
    files = dict(HOMO, **{"nodes.csv": "node_id,,x\n0,1,2\n1,3,4\n2,5,6\n3,7,8\n"})
    with pytest.warns(UserWarning, match="no header"):
        g = load(tmp_path, files)[0]
    assert list(g.ndata.keys()) == ["x"]


BAD = {
    "meta.yaml missing": ({"meta.yaml": None}, r"meta\.yaml cannot be found under"),
    "no dataset_name": ({"meta.yaml": "node_data: []\nedge_data: []\n"}, r"meta\.yaml lacks .*'dataset_name'"),
    "no node_data": ({"meta.yaml": "dataset_name: x\nedge_data: []\n"}, r"meta\.yaml lacks .*'node_data'"),
    "no file_name": ({"meta.yaml": "dataset_name: x\nnode_data:\n- ntype: a\nedge_data: []\n"},
                     r"node_data\[0\] lacks the required field 'file_name'"),
    "bad version": ({"meta.yaml": "version: 2.0.0\n" + HOMO["meta.yaml"]}, r"version '2\.0\.0' is not supported"),
    "not yaml": ({"meta.yaml": "dataset_name: [x\n"}, r"meta\.yaml is not valid YAML"),
    "bad etype": ({"meta.yaml": HOMO["meta.yaml"].replace("edges.csv", "edges.csv\n  etype: [_V, _V]")},
                  r"etype must be a list of three names"),
    "duplicate ntype": ({"meta.yaml": HOMO["meta.yaml"] + "- file_name: nodes.csv\n"},
                        r"each node file needs its own node type, but \['_V'\]"),
    "unknown node type": ({"meta.yaml": HOMO["meta.yaml"].replace("edges.csv", "edges.csv\n  etype: [_V, e, user]")},
                          r"edge file edges\.csv .* node type 'user' no node file declares"),
    "csv missing": ({"edges.csv": None}, r"edges\.csv \(an edge file named in meta\.yaml\) does not exist"),
    "no node_id column": ({"nodes.csv": "id,x\n0,1\n"}, r"nodes\.csv has no column 'node_id'"),
    "empty id cell": ({"edges.csv": "src_id,dst_id\n0,1\n,2\n"}, r"edges\.csv: column 'src_id' has empty cells"),
    "id out of range": ({"edges.csv": "src_id,dst_id\n0,1\n1,9\n"},
                        r"edges\.csv: dst ids \[9\] .* are not ids of '_V' nodes"),
    "duplicate node ids": ({"nodes.csv": "node_id\n0\n1\n1\n3\n"}, r"nodes\.csv: node ids must be unique.*\[1\]"),
    "ragged cells": ({"nodes.csv": 'node_id,feat\n0,"1,2"\n1,"1,2,3"\n2,"1,2"\n3,"0,0"\n'},
                     r"nodes\.csv: column 'feat': row 0 holds 2 numbers but row 1 holds 3 numbers"),
    "text cell": ({"nodes.csv": "node_id,name\n0,ann\n1,bob\n2,cy\n3,di\n"},
                  r"nodes\.csv: column 'name', row 0: 'ann' is not a number"),
    "data length": ({}, r"nodes\.csv: data 'x' has 2 rows but the file has 4"),
    "graph ids not listed": ({"nodes.csv": "graph_id,node_id\n0,0\n1,0\n", "edges.csv": "src_id,dst_id\n0,0\n"},
                             r"graph ids \[1\], but meta\.yaml names no graph_data file"),
    "edges of a graph without nodes": ({"nodes.csv": "graph_id,node_id\n0,0\n", "edges.csv":
                                        "graph_id,src_id,dst_id\n0,0,0\n5,0,0\n"},
                                       r"edges\.csv: edges of type .* of graph 5 need '_V' nodes, but .*nodes\.csv "
                                       r"has none in graph 5"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input(tmp_path, case):
    changes, message = BAD[case]
    folder = write(tmp_path / "ds", HOMO)
    for name, text in changes.items():
        if text is None:
            os.remove(os.path.join(folder, name))
        else:
            write(folder, {name: text})
    kwargs = {"ndata_parser": lambda df: {"x": [1, 2]}} if case == "data length" else {}
    with pytest.raises(DGLError, match=message):
        CSVDataset(folder, verbose=False, **kwargs)


def test_duplicate_graph_ids(tmp_path):
    files = dict(MULTI, **{"graphs.csv": "graph_id,label\n0,1\n1,1\n2,0\n3,0\n1,1\n"})
    with pytest.raises(DGLError, match=r"graphs\.csv: graph ids must be unique, but \[1\] repeat"):
        load(tmp_path, files)


@pytest.mark.parametrize("module,package", [("yaml", "pyyaml"), ("pandas", "pandas")])
def test_missing_package(tmp_path, monkeypatch, module, package):
    folder = write(tmp_path / "ds", HOMO)
    monkeypatch.setitem(sys.modules, module, None)  # import fails as when not installed
    with pytest.raises(ImportError, match=f"needs the package '{package}'"):
        CSVDataset(folder, verbose=False)


# ---- against DGL 2.1 ----

def both(tmp_path, files, name, **kwargs):
    """The same folder loaded by DGL and by topograph, each from its own copy (their caches stay apart)."""
    dgl = pytest.importorskip("dgl")
    src = write(tmp_path / name, files)
    shutil.copytree(src, tmp_path / (name + "_dgl"))
    theirs = dgl.data.CSVDataset(str(tmp_path / (name + "_dgl")), verbose=False, **kwargs)
    return theirs, CSVDataset(src, verbose=False, **kwargs)


def assert_same_tensor(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)


def assert_same_graph(theirs, ours):
    assert list(theirs.ntypes) == list(ours.ntypes)
    assert sorted(theirs.canonical_etypes) == sorted(ours.canonical_etypes)
    for nt in theirs.ntypes:
        assert theirs.num_nodes(nt) == ours.num_nodes(nt)
        assert sorted(theirs.nodes[nt].data.keys()) == sorted(ours.nodes[nt].data.keys())
        for k in theirs.nodes[nt].data.keys():
            assert_same_tensor(theirs.nodes[nt].data[k], ours.nodes[nt].data[k])
    for et in theirs.canonical_etypes:
        for x, y in zip(theirs.edges(etype=et), ours.edges(etype=et)):
            assert torch.equal(x, y)
        assert sorted(theirs.edges[et].data.keys()) == sorted(ours.edges[et].data.keys())
        for k in theirs.edges[et].data.keys():
            assert_same_tensor(theirs.edges[et].data[k], ours.edges[et].data[k])


@pytest.mark.parametrize("name", list(FOLDERS) + ["one_label", "separator"])
def test_same_as_dgl(tmp_path, name):
    files = {"one_label": dict(MULTI, **{"graphs.csv": "graph_id,label\n0,5\n1,6\n2,7\n3,8\n"}),
             "separator": dict(SEPARATOR, **{"g.psv": "graph_id|label|size\n0|7|3\n1|8|0\n"})}.get(name)
    theirs, ours = both(tmp_path, files or FOLDERS[name], name)
    assert len(theirs) == len(ours)
    assert sorted(theirs.data) == sorted(ours.data)
    for k in theirs.data:
        assert_same_tensor(theirs.data[k], ours.data[k])
    for i in range(len(ours)):
        assert_same_graph(theirs.graphs[i], ours.graphs[i])
        a, b = theirs[i], ours[i]
        if isinstance(a, tuple):
            if isinstance(a[1], dict):
                assert {k: v.tolist() for k, v in a[1].items()} == {k: v.tolist() for k, v in b[1].items()}
            else:
                assert_same_tensor(a[1], b[1])


def test_same_as_dgl_with_parsers(tmp_path):
    kwargs = {"ndata_parser": {"item": lambda df: {"p": df["price"].to_numpy()}},
              "edata_parser": lambda df: {"n": df.to_numpy().sum(axis=1)}}
    theirs, ours = both(tmp_path, HETERO, "hetero", **kwargs)
    assert_same_graph(theirs.graphs[0], ours.graphs[0])


def test_dgl_bugs(tmp_path):
    """What DGL 2.1 does where topograph differs: a one-row CSV file (it squeezes the column to a 0-d array and
    takes its len) and a graph with nodes but no edges (KeyError); topograph loads both (tests above)."""
    dgl = pytest.importorskip("dgl")
    with pytest.raises(TypeError, match="unsized object"):
        dgl.data.CSVDataset(write(tmp_path / "sep", SEPARATOR), verbose=False)
    files = dict(MULTI, **{"graphs.csv": "graph_id,label\n0,0\n1,1\n2,0\n3,1\n4,0\n",
                           "nodes.csv": MULTI["nodes.csv"] + '4,0,"0,0"\n4,1,"0,0"\n'})
    with pytest.raises(KeyError):
        dgl.data.CSVDataset(write(tmp_path / "noedge", files), verbose=False)

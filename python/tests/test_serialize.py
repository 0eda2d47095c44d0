"""topograph.save_graphs / load_graphs (_serialize.py), as dgl.save_graphs / dgl.load_graphs: graphs, their
features and the labels dict come back equal; idx_list picks graphs; a batch comes back one graph, as DGL's;
the write is atomic (a failed save leaves the old file and no temporary); bad files and ids are DGLErrors
naming the file. Files are Topograph's own format (DGL's binary files are not read)."""
import os

import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch

from conftest import typed_graph


def plain():
    g = topograph.graph(([0, 1, 1], [1, 2, 0]), num_nodes=4, idtype=torch.int32)
    g.ndata["h"] = torch.randn(4, 3)
    g.edata["w"] = torch.tensor([1, 2, 3])
    return g


def same_graph(a, b):
    assert a.ntypes == b.ntypes and a.canonical_etypes == b.canonical_etypes and a.idtype == b.idtype
    for t in a.ntypes:
        assert a.num_nodes(t) == b.num_nodes(t)
        assert sorted(a.nodes[t].data) == sorted(b.nodes[t].data)
        for k in a.nodes[t].data:
            assert torch.equal(a.nodes[t].data[k], b.nodes[t].data[k])
    for c in a.canonical_etypes:
        assert [x.tolist() for x in a.edges(etype=c)] == [x.tolist() for x in b.edges(etype=c)]
        for k in a.edges[c].data:
            assert torch.equal(a.edges[c].data[k], b.edges[c].data[k])


def test_round_trip_with_labels_and_idx_list(tmp_path):
    g, hg = plain(), typed_graph(topograph)
    path = tmp_path / "sub" / "graphs.bin"  # the folder is made, as DGL's
    labels = {"y": torch.tensor([0, 1]), "score": torch.tensor([[0.5], [1.5]])}
    topograph.save_graphs(str(path), [g, hg], labels)
    graphs, got = topograph.load_graphs(str(path))
    assert len(graphs) == 2 and sorted(got) == ["score", "y"] and torch.equal(got["score"], labels["score"])
    same_graph(graphs[0], g)
    same_graph(graphs[1], hg)
    graphs, got = topograph.load_graphs(str(path), [1, 0])
    same_graph(graphs[0], hg)
    same_graph(graphs[1], g)
    assert torch.equal(got["y"], labels["y"])  # every label, as DGL's
    topograph.save_graphs(str(tmp_path / "one.bin"), g)  # a lone graph, no labels
    graphs, got = topograph.load_graphs(str(tmp_path / "one.bin"))
    assert len(graphs) == 1 and got == {}
    same_graph(graphs[0], g)
    assert [p for p in os.listdir(tmp_path) if p.endswith(".tmp")] == []


def test_a_batch_comes_back_one_graph(tmp_path):
    bg = topograph.batch([plain(), plain()])
    topograph.save_graphs(str(tmp_path / "b.bin"), [bg])
    (back,), _ = topograph.load_graphs(str(tmp_path / "b.bin"))
    assert back.batch_size == 1 and back.num_nodes() == 8 and back.num_edges() == 6
    assert [x.tolist() for x in back.edges()] == [x.tolist() for x in bg.edges()]
    assert torch.equal(back.ndata["h"], bg.ndata["h"])


def test_failed_save_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "g.bin"
    topograph.save_graphs(str(path), [plain()], {"y": torch.tensor([7])})
    before = path.read_bytes()

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", broken)
    with pytest.raises(OSError, match="disk full"):
        topograph.save_graphs(str(path), [plain(), plain()])
    monkeypatch.undo()
    assert path.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["g.bin"]
    assert topograph.load_graphs(str(path))[1]["y"].tolist() == [7]


def test_errors_name_the_file(tmp_path):
    missing = str(tmp_path / "none.bin")
    with pytest.raises(topograph.DGLError, match="none.bin does not exist"):
        topograph.load_graphs(missing)
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"hello")
    with pytest.raises(topograph.DGLError, match="junk.bin is not a file topograph.save_graphs wrote"):
        topograph.load_graphs(str(junk))
    other = tmp_path / "other.pt"
    torch.save({"a": torch.ones(1)}, str(other))
    with pytest.raises(topograph.DGLError, match="other.pt is not a file"):
        topograph.load_graphs(str(other))
    path = str(tmp_path / "g.bin")
    topograph.save_graphs(path, [plain()])
    with pytest.raises(topograph.DGLError, match="id 3.*g.bin holds 1 graphs"):
        topograph.load_graphs(path, [3])
    with pytest.raises(topograph.DGLError, match="id -1"):
        topograph.load_graphs(path, [-1])
    with pytest.raises(topograph.DGLError, match="existing directory"):
        topograph.save_graphs(str(tmp_path), [plain()])
    with pytest.raises(topograph.DGLError, match="empty"):
        topograph.save_graphs(path, [])
    with pytest.raises(topograph.DGLError, match=r"g_list\[1\]"):
        topograph.save_graphs(path, [plain(), "graph"])
    with pytest.raises(topograph.DGLError, match="labels"):
        topograph.save_graphs(path, [plain()], {"y": [1, 2]})


def test_an_altered_file_is_a_clean_error(tmp_path):
    path = str(tmp_path / "g.bin")
    topograph.save_graphs(path, [plain()])
    payload = torch.load(path, weights_only=True)
    records = list(payload["graphs"][0])
    records[4] = [(torch.tensor([0, 99]), torch.tensor([1, 0]))]  # an edge to a node the graph does not have
    payload["graphs"] = [tuple(records)]
    torch.save(payload, path)
    with pytest.raises(topograph.DGLError, match="graph 0 of .*g.bin is malformed"):
        topograph.load_graphs(path)


def test_a_malformed_payload_is_a_clean_error(tmp_path):
    path = str(tmp_path / "g.bin")
    topograph.save_graphs(path, [plain()], {"y": torch.tensor([1])})
    good = torch.load(path, weights_only=True)
    for change in ({"graphs": None}, {"graphs": 5}, {"labels": [1]}, {"labels": {1: torch.tensor([1])}},
                   {"labels": {"y": "x"}}, {"graphs": [5]}, {"graphs": [(1, 2)]}):
        payload = dict(good)
        payload.update(change)
        for key, value in change.items():
            if value is None:
                del payload[key]
        torch.save(payload, path)
        with pytest.raises(topograph.DGLError, match="g.bin"):
            topograph.load_graphs(path)


def test_damaged_bytes_give_a_graph_or_a_dglerror(tmp_path):
    """A mutation sweep over one saved file: bytes flipped, runs overwritten, the file cut short. Each load
    returns graphs (a change torch.load does not notice, inside a tensor's data) or raises DGLError naming the
    file; any other exception is a finding."""
    path = str(tmp_path / "g.bin")
    topograph.save_graphs(path, [plain(), typed_graph(topograph)], {"y": torch.tensor([0, 1])})
    with open(path, "rb") as f:
        original = f.read()
    rng = torch.Generator().manual_seed(38)
    outcomes = {"loaded": 0, "error": 0}
    for trial in range(300):
        data = bytearray(original)
        kind = trial % 3
        at = int(torch.randint(len(data), (1,), generator=rng))
        if kind == 0:
            data[at] ^= 1 << int(torch.randint(8, (1,), generator=rng))
        elif kind == 1:
            run = bytes(torch.randint(256, (16,), generator=rng, dtype=torch.uint8).tolist())
            data[at:at + 16] = run
        else:
            del data[at:]
        damaged = str(tmp_path / f"d{trial}.bin")
        with open(damaged, "wb") as f:
            f.write(bytes(data))
        try:
            topograph.load_graphs(damaged)
            outcomes["loaded"] += 1
        except topograph.DGLError as e:
            assert f"d{trial}.bin" in str(e)
            outcomes["error"] += 1
        os.unlink(damaged)
    assert outcomes["error"] > 0


def test_dgl_data_utils_paths_and_info_files(tmp_path):
    from topograph.data.utils import load_graphs as lg, load_info, save_graphs as sg, save_info

    assert (sg, lg) == (topograph.save_graphs, topograph.load_graphs)
    path = tmp_path / "info.pkl"
    save_info(str(path), {"num_classes": 7, "split": [1, 2]})
    assert load_info(str(path)) == {"num_classes": 7, "split": [1, 2]}
    assert [p.name for p in tmp_path.iterdir()] == ["info.pkl"]  # no temporary file left
    path.write_bytes(path.read_bytes()[:5])
    with pytest.raises(topograph.DGLError, match="info.pkl is not a file save_info wrote"):
        load_info(str(path))
    with pytest.raises(topograph.DGLError, match="does not exist"):
        load_info(str(tmp_path / "missing.pkl"))
    with pytest.raises(topograph.DGLError, match="info must be a dict, got list"):
        save_info(str(path), [1])


def test_a_fifo_is_written_in_place_a_symlink_followed_a_directory_refused(tmp_path):
    """A device or FIFO (/dev/null, /dev/stdout) is written in place, not replaced by a renamed temp file; a
    symlink keeps pointing at the file, which is replaced; a directory is a DGLError."""
    import stat

    g = topograph.graph(([0, 1], [1, 2]))
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # open first, so the writer's open does not wait
    try:
        topograph.save_graphs(str(fifo), [g])  # a few KB: within the pipe's buffer
        got = os.read(reader, 1 << 20)
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert len(got) > 0
    target = tmp_path / "graphs.bin"
    link = tmp_path / "link.bin"
    os.symlink(target, link)
    topograph.save_graphs(str(link), [g])
    assert os.path.islink(link) and topograph.load_graphs(str(target))[0][0].num_edges() == 2
    with pytest.raises(topograph.DGLError, match="is an existing directory"):
        topograph.save_graphs(str(tmp_path), [g])
    from topograph.data.utils import save_info
    with pytest.raises(topograph.DGLError, match="it is a directory"):
        save_info(str(tmp_path), {"a": 1})

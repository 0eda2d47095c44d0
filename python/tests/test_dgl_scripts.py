"""DGL users' scripts, unchanged, on topograph (graph and node classification, link prediction, a heterograph RGCN,
DGL 2's sparse graph transformer): python/examples/dgl_scripts/*.py are written against `dgl` (DGL's
tutorials' style) and pick the module by TOPO_AS_DGL. Each runs here on topograph (always: it must train, with
the shapes DGL gives) and, where dgl imports, on DGL too from the same seed: the losses of every step, the final
logits / scores and the metrics must agree within float32 tolerance (the models' weights are drawn by the same
torch calls in both, so nothing is copied between them)."""
import importlib.util
import math
import os
import pathlib

import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch

SCRIPTS = pathlib.Path(__file__).resolve().parents[1] / "examples" / "dgl_scripts"
NAMES = ["graph_classification", "node_classification", "link_prediction", "hetero_rgcn", "graph_transformer"]
# float32 over 24-30 Adam steps: the two libraries sum in different orders, so the last bits drift a little
TOL = dict(rtol=5e-4, atol=1e-4)


def load(name: str, on_topograph: bool):
    """The script as a fresh module whose `dgl` is topograph (TOPO_AS_DGL=1) or DGL."""
    spec = importlib.util.spec_from_file_location(f"dgl_script_{name}_{'topograph' if on_topograph else 'dgl'}",
                                                  SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    saved = os.environ.get("TOPO_AS_DGL")
    os.environ["TOPO_AS_DGL"] = "1" if on_topograph else "0"
    try:
        spec.loader.exec_module(module)
    finally:
        if saved is None:
            del os.environ["TOPO_AS_DGL"]
        else:
            os.environ["TOPO_AS_DGL"] = saved
    return module


_RESULTS = {}


def topograph_results(name: str) -> dict:
    """main()'s results on topograph, computed once per session (the checks and the comparison share them)."""
    if name not in _RESULTS:
        module = load(name, on_topograph=True)
        assert module.dgl is topograph
        _RESULTS[name] = module.main()
    return _RESULTS[name]


def decreased(losses, factor: float) -> bool:
    """The mean of the last quarter of the steps is under `factor` times that of the first quarter."""
    q = max(1, len(losses) // 4)
    return all(math.isfinite(x) for x in losses) and sum(losses[-q:]) / q < factor * sum(losses[:q]) / q


def test_graph_classification_trains_on_topograph():
    results = topograph_results("graph_classification")
    for name in ("gin", "gcn"):
        r = results[name]
        assert len(r["losses"]) == 4 * 6  # 4 epochs of 48 graphs in batches of 8
        assert r["logits"].shape == (16, 2)  # the 16 test graphs, one row each (readout per graph of the batch)
        assert decreased(r["losses"], 0.8), r["losses"]
        assert r["accuracy"] >= 0.75  # two classes, balanced
    assert decreased(results["gin"]["losses"], 0.4)


def test_node_classification_trains_on_topograph():
    results = topograph_results("node_classification")
    for name in ("gcn", "gat"):
        r = results[name]
        assert len(r["losses"]) == len(r["val_acc"]) == 25
        assert r["logits"].shape == (240, 4)
        assert decreased(r["losses"], 0.5), r["losses"]
        assert r["val_acc"][-1] > 0.6 and r["test_acc"] > 0.8  # 4 classes: chance is 0.25


def test_link_prediction_trains_on_topograph():
    results = topograph_results("link_prediction")
    for name, factor, auc in (("dot", 0.2, 0.55), ("mlp", 0.8, 0.75)):
        r = results[name]
        assert len(r["losses"]) == 30
        assert r["train_edges"] == 600 - 60  # remove_edges took the 10% held out
        assert r["scores"].shape == (2 * 60,)  # the held-out edges and as many non-edges
        assert decreased(r["losses"], factor), r["losses"]
        assert r["auc"] > auc


def test_hetero_rgcn_trains_on_topograph():
    r = topograph_results("hetero_rgcn")
    assert len(r["losses"]) == 30
    assert r["logits"].shape == (60, 3) and r["scores"].shape == (360,)  # users; clicks
    assert decreased(r["losses"], 0.5), r["losses"]
    assert r["accuracy"] > 0.5  # 3 classes: chance is 1/3


def test_graph_transformer_trains_on_topograph():
    """DGL 2's graph transformer tutorial (dgl.sparse attention, random_walk_pe, SumPooling): rings against trees."""
    r = topograph_results("graph_transformer")
    assert len(r["losses"]) == 6 * 6 and r["logits"].shape == (16, 2)
    assert decreased(r["losses"], 0.5), r["losses"]
    assert r["accuracy"] > 0.8  # measured: 1.0 (two classes)


def assert_same(ours, theirs, path: str = "") -> None:
    """The same nested results: floats and tensors within TOL, ints and structure exactly."""
    if isinstance(theirs, dict):
        assert sorted(ours) == sorted(theirs), path
        for key in theirs:
            assert_same(ours[key], theirs[key], f"{path}.{key}")
    elif isinstance(theirs, torch.Tensor):
        assert isinstance(ours, torch.Tensor) and ours.shape == theirs.shape, path
        torch.testing.assert_close(ours, theirs, **TOL, msg=lambda m: f"{path}: {m}")
    elif isinstance(theirs, list):
        assert len(ours) == len(theirs), path
        torch.testing.assert_close(torch.tensor(ours), torch.tensor(theirs), **TOL, msg=lambda m: f"{path}: {m}")
    elif isinstance(theirs, float):
        assert ours == pytest.approx(theirs, rel=TOL["rtol"], abs=TOL["atol"]), path
    else:
        assert ours == theirs, path


@pytest.mark.parametrize("name", NAMES)
def test_script_matches_dgl(name):
    pytest.importorskip("dgl")
    module = load(name, on_topograph=False)
    assert module.dgl.__name__ == "dgl"
    assert_same(topograph_results(name), module.main())

"""`dgl` as a name for topograph (topograph/dgl_alias.py): a DGL script's own imports (`import dgl.nn as dglnn`,
`from dgl.data import CoraGraphDataset`, `from dgl.nn.pytorch.conv import GATConv`, ...) load topograph's modules,
and `python -m topograph.dgl_alias SCRIPT ARGS` runs a script unchanged. Each case runs in a fresh interpreter:
the finder is process-wide, and other tests import the real DGL for comparisons."""
import subprocess
import sys
import textwrap

import topograph  # noqa: F401 (before torch: topograph/__init__.py)


def run_python(args, cwd, timeout=300):
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def run_code(code: str, cwd):
    return run_python(["-c", textwrap.dedent(code)], cwd)


def test_dgl_module_paths_resolve_to_topograph_modules(tmp_path):
    r = run_code("""
        import topograph
        assert topograph.as_dgl() is topograph and topograph.as_dgl() is topograph  # idempotent
        import sys
        assert sum(getattr(f, "topograph_dgl_alias", False) for f in sys.meta_path) == 1
        import dgl
        import dgl.nn as dglnn
        import dgl.function as fn
        import dgl.sparse as dglsp
        import dgl.nn.pytorch as dnn
        from dgl import AddSelfLoop, DGLGraph
        from dgl.data import CoraGraphDataset
        from dgl.data.utils import save_graphs
        from dgl.dataloading import DataLoader, NeighborSampler
        from dgl.nn.pytorch.conv import GATConv
        from dgl.nn.functional import edge_softmax
        from dgl.base import DGLError
        from dgl.heterograph import DGLBlock
        from dgl.udf import EdgeBatch, NodeBatch
        import topograph.nn.pytorch.conv, topograph.data, topograph.dataloading
        assert dgl is topograph and dglnn is topograph.nn and fn is topograph.function
        assert dglsp is topograph.sparse and dnn is topograph.nn.pytorch
        assert AddSelfLoop is topograph.AddSelfLoop and DGLGraph is topograph.DGLGraph
        assert CoraGraphDataset is topograph.data.CoraGraphDataset
        assert DataLoader is topograph.dataloading.DataLoader and GATConv is topograph.nn.pytorch.conv.GATConv
        assert DGLError is topograph.DGLError and DGLBlock is topograph.DGLBlock
        assert sys.modules["dgl.nn"] is topograph.nn and topograph.nn.__name__ == "topograph.nn"
        # DGL's internal module names leave topograph's functions of the same names alone
        assert callable(dgl.heterograph) and callable(topograph.heterograph)
        g = dgl.heterograph({("user", "plays", "game"): ([0, 1], [1, 1])})
        assert g.num_nodes("game") == 2
        print("resolved")
        """, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "resolved" in r.stdout


def test_a_dgl_path_topograph_lacks_is_an_error_naming_both(tmp_path):
    r = run_code("""
        import topograph
        topograph.as_dgl()
        try:
            import dgl.graphbolt
        except ModuleNotFoundError as e:
            print("ERROR", e.name, "|", e)
        """, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "ERROR dgl.graphbolt |" in r.stdout
    assert "topograph.graphbolt does not exist" in r.stdout


def test_a_dgl_imported_before_is_refused(tmp_path):
    r = run_code("""
        import sys, types
        sys.modules["dgl"] = types.ModuleType("dgl")  # as if the real DGL had been imported first
        import topograph
        try:
            topograph.as_dgl()
        except RuntimeError as e:
            print("REFUSED", e)
        """, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "REFUSED dgl is already imported" in r.stdout


# A script as DGL's examples write it: dotted imports of dgl's modules, a GCN on a graph with self loops, a
# plain PyTorch loop; its arguments come through argparse.
SCRIPT = '''
import argparse
import dgl
import dgl.function as fn
import dgl.nn as dglnn
import torch
import torch.nn.functional as F
from dgl import AddSelfLoop

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, required=True)
args = parser.parse_args()
torch.manual_seed(0)
n = 60
src = torch.arange(n)
g = AddSelfLoop()(dgl.graph((torch.cat([src, (src + 1) % n]), torch.cat([(src + 1) % n, src])), num_nodes=n))
label = (src >= n // 2).long()
feat = torch.randn(n, 8) + label[:, None].float()
g.ndata["h"] = feat
g.update_all(fn.copy_u("h", "m"), fn.mean("m", "h_mean"))
assert g.ndata["h_mean"].shape == (n, 8)
conv1, conv2 = dglnn.GraphConv(8, 16, activation=F.relu), dglnn.GraphConv(16, 2)
opt = torch.optim.Adam(list(conv1.parameters()) + list(conv2.parameters()), lr=0.05)
losses = []
for _ in range(args.epochs):
    loss = F.cross_entropy(conv2(g, conv1(g, feat)), label)
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())
print("module", dgl.__name__, "first", round(losses[0], 4), "last", round(losses[-1], 4))
'''


def test_the_runner_runs_a_dgl_script_unchanged(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    r = run_python(["-m", "topograph.dgl_alias", str(script), "--epochs", "40"], tmp_path)
    assert r.returncode == 0, r.stderr
    words = r.stdout.split()
    assert words[:2] == ["module", "topograph"]
    first, last = float(words[words.index("first") + 1]), float(words[words.index("last") + 1])
    assert last < 0.5 * first  # it trained


def test_the_runner_without_a_script_says_how_to_call_it(tmp_path):
    r = run_python(["-m", "topograph.dgl_alias", str(tmp_path / "missing.py")], tmp_path)
    assert r.returncode == 2
    assert "missing.py: no such file" in r.stderr and "usage: python -m topograph.dgl_alias SCRIPT" in r.stderr
    r = run_python(["-m", "topograph.dgl_alias", str(tmp_path)], tmp_path)
    assert r.returncode == 2 and "a directory, not a script" in r.stderr
    r = run_python(["-m", "topograph.dgl_alias"], tmp_path)
    assert r.returncode == 2 and "usage:" in r.stderr
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    r = run_python(["-m", "topograph.dgl_alias", str(script)], tmp_path)  # the script's own argparse error
    assert r.returncode == 2 and "--epochs" in r.stderr

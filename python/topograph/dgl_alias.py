"""`dgl` as a name for topograph, so that a DGL user's script runs without edits.

`import topograph as dgl` serves scripts that reach everything as attributes (`dgl.nn.GraphConv`,
`dgl.function.copy_u`), but most of DGL's own examples also import DGL's modules by their dotted names:
`import dgl.nn as dglnn`, `import dgl.function as fn`, `from dgl.data import CoraGraphDataset`,
`from dgl.nn.pytorch.conv import GATConv`, `from dgl import AddSelfLoop`. Python resolves those through
`sys.modules` and its finders, where no `dgl` exists. `install()` (also `topograph.as_dgl()`) adds a finder
that answers every `dgl` and `dgl.X.Y` import with the topograph module of the same path (`topograph.X.Y`;
DGL's `dgl.nn.pytorch...` paths exist in topograph too), and a few of DGL's internal module names that
scripts import from (`dgl.base`, `dgl.heterograph`, `dgl.convert`, `dgl.udf`) with the topograph module that
holds those names. A path topograph does not have is a ModuleNotFoundError naming both.

    python -m topograph.dgl_alias train.py --dataset cora     # a DGL script, unchanged

runs a script with the finder installed (topograph imported first, so its OpenMP settings precede torch's:
topograph/__init__.py). In a script or notebook of your own, call `topograph.as_dgl()` before the first
`import dgl`. The finder sits first on `sys.meta_path`, so it wins over a DGL installed beside topograph;
a DGL already imported in the process is an error instead (two libraries under one name would mix).
"""
import importlib
import importlib.abc
import importlib.util
import os
import runpy
import sys

import topograph

# DGL's internal modules that scripts import names from, and the topograph module holding those names.
_INTERNAL = {
    "dgl.base": "topograph._base",  # DGLError, ALL, NID, EID, ...
    "dgl.heterograph": "topograph",  # DGLGraph, DGLBlock
    "dgl.convert": "topograph",  # graph, heterograph, to_homogeneous, ...
    "dgl.udf": "topograph._message_passing",  # EdgeBatch, NodeBatch
}


def _target(fullname: str) -> str:
    return _INTERNAL.get(fullname, "topograph" + fullname[len("dgl"):])


class _Loader(importlib.abc.Loader):
    """Hands the import system a topograph module that is already loaded; executes nothing."""

    def __init__(self, module):
        self._module = module

    def create_module(self, spec):
        return self._module

    def exec_module(self, module):
        pass


class _Finder(importlib.abc.MetaPathFinder):
    topograph_dgl_alias = True  # how installed() knows one (this file may run twice: as __main__ and imported)

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "dgl" and not fullname.startswith("dgl."):
            return None
        name = _target(fullname)
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name is not None and name.startswith(e.name):  # the counterpart itself (or a parent) is missing
                raise ModuleNotFoundError(
                    f"No module named '{fullname}': topograph has no counterpart of DGL's {fullname} ({name} does "
                    "not exist); python/README.md lists what topograph has", name=fullname) from None
            raise
        return importlib.util.spec_from_loader(fullname, _Loader(module))


def installed() -> bool:
    return any(getattr(f, "topograph_dgl_alias", False) for f in sys.meta_path)


def install():
    """Makes `import dgl...` load topograph's modules in this process; returns topograph. Idempotent."""
    loaded = sys.modules.get("dgl")
    if loaded is not None and loaded is not topograph:
        where = getattr(loaded, "__file__", None) or repr(loaded)
        raise RuntimeError(f"dgl is already imported in this process (from {where}): call topograph.as_dgl() "
                           "before the first `import dgl`")
    if not installed():
        sys.meta_path.insert(0, _Finder())
        # Registered now, not on first import: a submodule loaded by a finder is also set as an attribute of
        # its parent, which would replace topograph.heterograph (the function) with the module answering
        # `dgl.heterograph`. A module already in sys.modules is returned as it is.
        for name, target in _INTERNAL.items():
            sys.modules.setdefault(name, importlib.import_module(target))
    return topograph


_USAGE = "usage: python -m topograph.dgl_alias SCRIPT [ARGS...]   (runs SCRIPT with `dgl` importing topograph)"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_USAGE, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    script = argv[0]
    if not os.path.isfile(script):
        why = "a directory, not a script" if os.path.isdir(script) else "no such file"
        print(f"topograph.dgl_alias: {script}: {why}\n{_USAGE}", file=sys.stderr)
        return 2
    install()
    sys.argv = argv  # as `python SCRIPT ARGS...` would see them
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""torch.compile and the package: TorchDynamo cannot trace the C++ objects (nanobind) that hold the graphs and
run the kernels, and failed on the first one it met ("expected FunctionType found nb_method"). The functions that
reach them are marked to run as they are, with a graph break around each call (``torch.compiler.disable``), so
``torch.compile(model)`` compiles the model's own torch code and calls the package eagerly, as it does any
library it cannot trace."""
from __future__ import annotations

import inspect

import torch


def eager(fn):
    """fn, run outside any graph torch.compile builds (a graph break around each call)."""
    return torch.compiler.disable(fn)


def eager_methods(cls, *, with_bases: bool = True) -> None:
    """Every method and property of cls (and, with_bases, those it inherits from the package's mixins), eager."""
    for klass in cls.__mro__ if with_bases else (cls,):
        if klass is object or klass.__module__.split(".")[0] != "topograph":
            continue
        for name, attr in list(vars(klass).items()):
            if name in ("__new__", "__init_subclass__", "__class_getitem__"):
                continue
            if isinstance(attr, property):
                setattr(cls, name, property(attr.fget and eager(attr.fget), attr.fset and eager(attr.fset),
                                            attr.fdel and eager(attr.fdel), attr.__doc__))
            elif inspect.isfunction(attr):
                setattr(cls, name, eager(attr))

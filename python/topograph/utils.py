"""dgl.utils's helpers that scripts call: apply_each (a function over a tensor, or each value of a dict or list,
as heterograph layers' outputs are)."""
from __future__ import annotations

from collections.abc import Mapping

__all__ = ["apply_each"]


def apply_each(data, fn, *args, **kwargs):
    """fn(x, *args, **kwargs) for x the tensor, each value of the dict (keys kept) or each item of the list."""
    if isinstance(data, Mapping):
        return {k: fn(v, *args, **kwargs) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [fn(v, *args, **kwargs) for v in data]
    return fn(data, *args, **kwargs)

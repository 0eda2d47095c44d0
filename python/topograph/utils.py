"""dgl.utils's helpers that scripts call: apply_each (a function over a tensor, or each value of a dict or list,
as heterograph layers' outputs are), and expand_as_pair / check_eq_shape, which user-written conv modules in
DGL's style import (`from dgl.utils import expand_as_pair, check_eq_shape`)."""
from __future__ import annotations

from collections.abc import Mapping

from ._base import DGLError

__all__ = ["apply_each", "expand_as_pair", "check_eq_shape"]


def apply_each(data, fn, *args, **kwargs):
    """fn(x, *args, **kwargs) for x the tensor, each value of the dict (keys kept) or each item of the list."""
    if isinstance(data, Mapping):
        return {k: fn(v, *args, **kwargs) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [fn(v, *args, **kwargs) for v in data]
    return fn(data, *args, **kwargs)


def expand_as_pair(input_, g=None):
    """DGL's: (source features, destination features). A tuple is returned as it is; on a block (g given) the
    destinations' features are the first num_dst_nodes rows (per node type for a dict); otherwise the input
    twice."""
    if isinstance(input_, tuple):
        return input_
    if g is not None and g.is_block:
        if isinstance(input_, Mapping):
            return input_, {k: v[: g.num_dst_nodes(k)] for k, v in input_.items()}
        return input_, input_[: g.num_dst_nodes()]
    return input_, input_


def check_eq_shape(input_) -> None:
    """DGL's: a DGLError unless the source and destination features (expand_as_pair's) have the same row shape."""
    src, dst = expand_as_pair(input_)
    if tuple(src.shape[1:]) != tuple(dst.shape[1:]):
        raise DGLError(f"The feature shape of source nodes: {tuple(src.shape[1:])} should be equal to the feature "
                       f"shape of destination nodes: {tuple(dst.shape[1:])}.")

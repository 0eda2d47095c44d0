"""dgl.init: the feature initializers that older scripts hand to g.set_n_initializer / g.set_e_initializer.
Topograph fills the rows of a feature that an update does not reach with zeros, which is zero_initializer."""
import torch


def zero_initializer(shape, dtype, ctx, id_range=None):
    """dgl.init.zero_initializer: zeros of shape, dtype on device ctx (id_range, the rows asked for, unused)."""
    return torch.zeros(shape, dtype=dtype, device=ctx)


__all__ = ["zero_initializer"]

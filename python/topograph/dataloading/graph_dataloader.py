"""dgl.dataloading's GraphDataLoader: mini-batches of whole graphs for graph-level tasks. It is torch's DataLoader
(so batch_size, shuffle, drop_last, sampler, generator, num_workers ... are torch's, and shuffle draws its order
from torch's generator exactly as DGL's does) with DGL's collate function, GraphCollator: graphs are joined by
topograph.batch, tensors stacked, and containers (tuples, lists, dicts, namedtuples) collated element-wise."""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import torch
from torch.utils.data.distributed import DistributedSampler

from .._base import DGLError
from .._construct import batch
from .._graph import DGLGraph


class GraphCollator:
    """DGL's GraphCollator: ``collate(items)`` joins a list of samples into one batch, element by element."""

    _numpy_strings = re.compile(r"[SaUO]")  # numpy dtypes that hold strings or objects: no tensor from them

    def collate(self, items):
        """As dgl.dataloading.GraphCollator.collate (DGL 2.1): graphs -> topograph.batch(items); tensors ->
        torch.stack [B, ...]; numpy arrays -> tensors, then stacked; numpy scalars and ints -> a tensor [B]; floats
        -> a float64 tensor [B]; str / bytes -> the list as it is; a Mapping -> {key: collate of that key}; a
        namedtuple -> the same namedtuple of collated fields; any other sequence (a (graph, label) tuple
        included) -> a *list* of collated positions (so ``for g, labels in loader`` unpacks it), every sample of
        the same length. Anything else: TypeError naming its type."""
        if not items:
            raise ValueError("GraphCollator.collate: no samples to collate")
        elem = items[0]
        if isinstance(elem, DGLGraph):
            return batch(items)
        if isinstance(elem, torch.Tensor):
            return torch.stack(items, 0)
        elem_type = type(elem)
        if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
            if elem_type.__name__ in ("ndarray", "memmap"):
                if self._numpy_strings.search(elem.dtype.str) is not None:
                    raise TypeError(f"GraphCollator.collate: numpy arrays of dtype {elem.dtype} hold strings or "
                                    f"objects, which make no tensor")
                return self.collate([torch.as_tensor(b) for b in items])
            if elem.shape == ():  # numpy scalars
                return torch.tensor(items)
        if isinstance(elem, float):
            return torch.tensor(items, dtype=torch.float64)
        if isinstance(elem, int):
            return torch.tensor(items)
        if isinstance(elem, (str, bytes)):
            return items
        if isinstance(elem, Mapping):
            return {key: self.collate([d[key] for d in items]) for key in elem}
        if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
            return elem_type(*(self.collate(list(samples)) for samples in zip(*items)))
        if isinstance(elem, Sequence):
            size = len(elem)
            if any(len(sample) != size for sample in items):
                raise RuntimeError("GraphCollator.collate: each element in list of batch should be of equal size")
            return [self.collate(list(samples)) for samples in zip(*items)]
        raise TypeError(f"GraphCollator.collate: a batch must hold graphs, tensors, numpy arrays, numbers, dicts or "
                        f"lists; found {elem_type.__name__}")


class GraphDataLoader(torch.utils.data.DataLoader):
    """Batches of graphs from `dataset` (anything indexable with a length: a list of (graph, label) pairs, a
    torch Dataset), as dgl.dataloading.GraphDataLoader: ``for batched_graph, labels in loader`` gets
    topograph.batch of batch_size graphs and their labels stacked [B]. Keyword arguments are torch DataLoader's
    (batch_size, shuffle, drop_last, sampler, generator, num_workers, ...); collate_fn replaces GraphCollator's.
    use_ddp splits the dataset over the processes of torch.distributed with a DistributedSampler seeded by
    ddp_seed (shuffle and drop_last go to it; call set_epoch(epoch) each epoch), as DGL's."""

    def __init__(self, dataset, collate_fn=None, use_ddp: bool = False, ddp_seed: int = 0, **kwargs):
        self.use_ddp = use_ddp
        if use_ddp:
            self.dist_sampler = DistributedSampler(dataset, shuffle=kwargs.get("shuffle", False), seed=ddp_seed,
                                                   drop_last=kwargs.get("drop_last", False))
            kwargs.update(shuffle=False, drop_last=False, sampler=self.dist_sampler)
        if collate_fn is None and kwargs.get("batch_size", 1) is not None:
            collate_fn = GraphCollator().collate
        super().__init__(dataset=dataset, collate_fn=collate_fn, **kwargs)

    def set_epoch(self, epoch: int) -> None:
        """The DistributedSampler's epoch (its shuffle order); only with use_ddp=True, as DGL's."""
        if not self.use_ddp:
            raise DGLError("GraphDataLoader.set_epoch: only available when use_ddp is True")
        self.dist_sampler.set_epoch(epoch)

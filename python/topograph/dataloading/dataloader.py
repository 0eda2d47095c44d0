"""dgl.dataloading.DataLoader: mini-batches of seed nodes (or seed edges, for as_edge_prediction_sampler's
sampler), each sampled by a graph sampler, under DGL 2.1's signature: device, use_ddp / ddp_seed, batch_size,
drop_last, shuffle, DGL's GPU pipeline switches, and torch DataLoader's arguments (num_workers, ...).

Batches are cut in the main process (the order: torch's generator, or `generator`; under use_ddp a permutation
seeded by ddp_seed + epoch, the same on every process, each taking its contiguous share as DGL's DDP dataset
does). With num_workers = 0 the main process samples each batch as it is asked for; with num_workers > 0 torch's
DataLoader runs the sampler in its worker processes over the same batches and sends the blocks back pickled
(graphs and blocks pickle: _pickle.py), the draws then coming from each worker's torch generator."""
from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Optional

import torch

from .._base import DGLError
from .._graph import DGLGraph
from .._subgraph import _node_sets

# torch.utils.data.DataLoader's own arguments that DGL's DataLoader passes on (**kwargs); the ones that decide
# batches (batch_size, shuffle, sampler, batch_sampler, drop_last, collate_fn) are DGL's own or taken over here.
_TORCH_ARGS = set(inspect.signature(torch.utils.data.DataLoader.__init__).parameters) - {
    "self", "dataset", "batch_size", "shuffle", "sampler", "batch_sampler", "drop_last", "collate_fn", "generator"}


def _edge_id_sets(g: DGLGraph, indices) -> dict:
    """Seed edge ids as {etype as given: ids} (checked, CPU); ids alone name the one relation of a graph."""
    if not isinstance(indices, Mapping):
        if len(g.canonical_etypes) != 1:
            raise DGLError(f"DataLoader: the graph has relations {g.canonical_etypes}: give edge ids as "
                           f"{{etype: ids}}")
        return {None: g._checked_ids(indices, g.num_edges(), "DataLoader: edge").cpu()}
    return {etype: g._checked_ids(ids, g.num_edges(etype), f"DataLoader: {etype!r} edge").cpu()
            for etype, ids in indices.items()}


def _as_sampled(batch):
    """torch DataLoader's collate_fn for batches already sampled (its default would turn tuples into lists)."""
    return batch


def to_device(value, device: torch.device):
    """A sampled batch (tensors, graphs and blocks, in tuples, lists and dicts) on `device`."""
    if isinstance(value, (torch.Tensor, DGLGraph)):
        return value.to(device)
    if isinstance(value, Mapping):
        return {k: to_device(v, device) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(to_device(v, device) for v in value)
    return value


class _Sampling(torch.utils.data.Dataset):
    """torch DataLoader's dataset: the "index" is a batch of (type, id) rows, which it samples (in a worker with
    num_workers > 0). It holds only what sampling needs, so spawned workers get it pickled."""

    def __init__(self, graph: DGLGraph, sampler, types: Optional[list]):
        self.graph, self.sampler, self.types = graph, sampler, types  # types: None for untyped seeds

    def __getitem__(self, batch: torch.Tensor):
        if self.types is None:
            return self.sampler.sample(self.graph, batch[:, 1])
        seeds = {t: batch[batch[:, 0] == i, 1] for i, t in enumerate(self.types)}
        return self.sampler.sample(self.graph, {t: ids for t, ids in seeds.items() if ids.numel()})


class _EpochBatches(torch.utils.data.Sampler):
    """torch DataLoader's sampler: each epoch's batches, cut in the main process (so persistent workers see
    every epoch's order)."""

    def __init__(self, loader: "DataLoader"):
        self.loader = loader

    def __iter__(self):
        return iter(self.loader._batches())

    def __len__(self) -> int:
        return len(self.loader)


class DataLoader:
    """Mini-batches of seed nodes `indices` (ids, or {ntype: ids}; edge ids, or {etype: ids}, for
    as_edge_prediction_sampler's sampler, which yields its tuples instead), each sampled by graph_sampler:
    iterating yields graph_sampler.sample(graph, batch) = (input_nodes, output_nodes, blocks), as
    dgl.dataloading.DataLoader (DGL 2.1's arguments, in its order).
      device: where each batch's tensors and blocks go (None: where the sampler made them, the graph's device).
      use_ddp, ddp_seed: split the seeds over the processes of torch.distributed (initialised first), each taking
        a contiguous share of ceil(n / processes) of one order (without drop_last the order wraps round to fill
        the last share; with it, n is cut to a multiple of the processes); with shuffle the order is a
        permutation seeded by ddp_seed + the epoch, the same on every process; the epoch counts the passes
        (a new order each, as DGL's), set_epoch sets the next one.
      batch_size, drop_last (drop a last batch smaller than batch_size), shuffle (a new order each epoch from
        `generator`, torch's default one when None).
      use_prefetch_thread, use_alternate_streams, pin_prefetcher, use_uva, gpu_cache: DGL's switches for its GPU
        feature pipeline; accepted, they change nothing here (sampling and gathering run in the core, on the
        graph's device).
      **kwargs: torch DataLoader's (num_workers, persistent_workers, pin_memory, prefetch_factor, timeout,
        worker_init_fn, multiprocessing_context); num_workers > 0 samples in torch's worker processes."""

    def __init__(self, graph: DGLGraph, indices, graph_sampler, device=None, use_ddp: bool = False,
                 ddp_seed: int = 0, batch_size: int = 1, drop_last: bool = False, shuffle: bool = False,
                 use_prefetch_thread=None, use_alternate_streams=None, pin_prefetcher=None, use_uva: bool = False,
                 gpu_cache=None, generator: Optional[torch.Generator] = None, **kwargs):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"DataLoader: batch_size must be an int >= 1, got {batch_size!r}")
        unknown = sorted(set(kwargs) - _TORCH_ARGS)
        if unknown:
            raise TypeError(f"DataLoader: unexpected keyword argument {unknown[0]!r} (not DGL's DataLoader's nor "
                            f"torch DataLoader's)")
        self.graph, self.graph_sampler = graph, graph_sampler
        self.batch_size, self.shuffle, self.drop_last, self.generator = batch_size, shuffle, drop_last, generator
        self.device = None if device is None else torch.device(device)
        self.use_ddp, self.ddp_seed, self.epoch = use_ddp, int(ddp_seed), 0
        self._torch_args = kwargs
        if use_ddp:
            if not (torch.distributed.is_available() and torch.distributed.is_initialized()):
                raise DGLError("DataLoader: use_ddp=True needs torch.distributed initialised first "
                               "(torch.distributed.init_process_group)")
            self._rank, self._world = torch.distributed.get_rank(), torch.distributed.get_world_size()
        self._typed = isinstance(indices, Mapping)
        if getattr(graph_sampler, "_samples_edges", False):  # as_edge_prediction_sampler's: edge ids
            sets = _edge_id_sets(graph, indices)
        elif getattr(graph_sampler, "_indices_are_node_ids", True):
            sets = _node_sets(graph, indices, "DataLoader")
        else:  # a plain Sampler's own indices (SAINTSampler's count batches): passed through, as DGL's
            sets = {k: torch.as_tensor(v).reshape(-1) for k, v in indices.items()} if isinstance(indices, Mapping) \
                else {None: torch.as_tensor(indices).reshape(-1)}
        # (type, id) pairs in a fixed order: a batch of a heterograph may mix types, as DGL's does
        self._types = list(sets)
        self._items = torch.cat([torch.stack([torch.full((len(ids),), i, dtype=torch.int64),
                                              torch.as_tensor(ids, dtype=torch.int64)], 1)
                                 for i, ids in enumerate(sets.values())]) if sets else torch.zeros(0, 2, dtype=torch.int64)
        self._sampling = _Sampling(graph, graph_sampler, self._types if self._typed else None)
        self._workers = None

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose order the next pass draws under use_ddp's shuffle (ddp_seed + epoch); only with
        use_ddp, as DGL's."""
        if not self.use_ddp:
            raise DGLError("DataLoader.set_epoch: only available when use_ddp is True")
        self.epoch = int(epoch)

    def _share(self) -> int:
        """How many seeds this process takes in an epoch."""
        n = self._items.shape[0]
        if not self.use_ddp:
            return n
        return n // self._world if self.drop_last else -(-n // self._world)

    def __len__(self) -> int:
        n = self._share()
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _epoch_items(self) -> torch.Tensor:
        """This epoch's (type, id) rows for this process, in order."""
        items = self._items
        if not self.use_ddp:
            return items[torch.randperm(items.shape[0], generator=self.generator)] if self.shuffle else items
        if self.shuffle:  # every process draws the same order; the next epoch, another (as DGL's)
            order = torch.Generator().manual_seed(self.ddp_seed + self.epoch)
            items = items[torch.randperm(items.shape[0], generator=order)]
        self.epoch += 1
        share = self._share()
        if share * self._world > items.shape[0]:  # wrap round to fill the last share
            items = torch.cat([items] * -(-share * self._world // max(items.shape[0], 1)))[: share * self._world]
        return items[self._rank * share:(self._rank + 1) * share]

    def _batches(self) -> list:
        """This epoch's batches of (type, id) rows for this process."""
        items = self._epoch_items()
        return [items[start:start + self.batch_size] for start in range(0, len(self) * self.batch_size,
                                                                         self.batch_size)]

    def __iter__(self):
        if self._torch_args.get("num_workers", 0) > 0:
            if self._workers is None:  # one torch DataLoader, so that persistent_workers persist
                self._workers = torch.utils.data.DataLoader(self._sampling, batch_size=None,
                                                            sampler=_EpochBatches(self), collate_fn=_as_sampled,
                                                            **self._torch_args)
            sampled = iter(self._workers)
        else:
            sampled = (self._sampling[batch] for batch in self._batches())
        for out in sampled:
            yield out if self.device is None else to_device(out, self.device)

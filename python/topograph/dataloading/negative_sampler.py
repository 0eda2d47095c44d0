"""dgl.dataloading.negative_sampler: negative edges for link prediction. ``sampler(g, eids)`` returns, for the
edges `eids` of g (ids; {etype: ids} over several relations), the pairs (sources, destinations) of edges that
are taken not to exist, or {canonical etype: (sources, destinations)}.

PerSourceUniform (alias Uniform) is DGL's: k pairs per edge, the edge's source with a destination drawn
uniformly from all nodes of the destination type by torch.randint (the same call as DGL's, so torch's seed
gives DGL's pairs). GlobalUniform is DGL's too: topograph.sampling.global_uniform_negative_sampling's pairs, drawn
uniformly over all (source, destination) pairs that are no edge of the graph (DGL draws them by its own generator,
this one by torch's: the same distribution, not the same pairs)."""
from __future__ import annotations

from collections.abc import Mapping

import torch

from .._base import DGLError
from ..sampling import global_uniform_negative_sampling


class _BaseNegativeSampler:
    def _generate(self, g, eids: torch.Tensor, canonical_etype):
        raise NotImplementedError

    def __call__(self, g, eids):
        """(sources, destinations) for the edges `eids` of g's one relation, or {canonical etype: (sources,
        destinations)} for eids given as {etype: ids}."""
        if isinstance(eids, Mapping):
            return {g.to_canonical_etype(k): self._generate(g, _edge_ids(v), g.to_canonical_etype(k))
                    for k, v in eids.items()}
        if len(g.canonical_etypes) != 1:
            raise DGLError(f"{type(self).__name__}: the graph has relations {g.canonical_etypes}: give eids as "
                           f"{{etype: ids}}")
        return self._generate(g, _edge_ids(eids), g.canonical_etypes[0])


def _edge_ids(eids) -> torch.Tensor:
    t = eids if isinstance(eids, torch.Tensor) else torch.as_tensor(eids, dtype=torch.int64)
    if t.dim() != 1 or t.dtype not in (torch.int32, torch.int64):
        raise DGLError(f"negative sampler: eids must be a 1-D int32 / int64 tensor of edge ids, got "
                       f"{t.dtype} of shape {tuple(t.shape)}")
    return t


class PerSourceUniform(_BaseNegativeSampler):
    """k negative pairs per edge (u, v): (u, v') with v' uniform over the destination type's nodes (it may be
    an existing edge, or v itself), as DGL's. Sources [len(eids) * k] of the graph's idtype, each edge's
    source k times in a row; destinations of eids' dtype, drawn by torch.randint on eids' device."""

    def __init__(self, k: int):
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"PerSourceUniform: k must be an int >= 1, got {k!r}")
        self.k = k

    def _generate(self, g, eids: torch.Tensor, canonical_etype):
        src, _ = g.find_edges(eids, etype=canonical_etype)  # [len(eids)]; out-of-range ids: DGLError
        src = torch.repeat_interleave(src, self.k, 0)  # [len(eids) * k]
        dst = torch.randint(0, g.num_nodes(canonical_etype[2]), (eids.shape[0] * self.k,), dtype=eids.dtype,
                            device=eids.device)
        return src, dst


Uniform = PerSourceUniform  # DGL's alias


class GlobalUniform(_BaseNegativeSampler):
    """At most k negative pairs per edge of eids, as DGL's: topograph.sampling.global_uniform_negative_sampling(g,
    len(eids) * k, exclude_self_loops, replace, etype) (pairs that are no edge of the relation, never a self loop
    with exclude_self_loops when the two types agree, distinct and sorted by (destination, source) unless replace;
    on a small or dense graph fewer than len(eids) * k, as DGL's). Ids of the graph's idtype, on its device."""

    def __init__(self, k: int, exclude_self_loops: bool = True, replace: bool = False):
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"GlobalUniform: k must be an int >= 1, got {k!r}")
        self.k, self.exclude_self_loops, self.replace = k, bool(exclude_self_loops), bool(replace)

    def _generate(self, g, eids: torch.Tensor, canonical_etype):
        return global_uniform_negative_sampling(g, eids.shape[0] * self.k, self.exclude_self_loops, self.replace,
                                                canonical_etype)


__all__ = ["PerSourceUniform", "Uniform", "GlobalUniform"]

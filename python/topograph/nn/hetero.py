"""dgl.nn.HeteroGraphConv: a module per relation of a heterograph, run on the relation's graph g[(s, e, d)]
(which shares g's features and takes every conv of topograph.nn), the relations' outputs into each node type
then aggregated; HeteroLinear and HeteroEmbedding, a Linear / an Embedding per type."""
from __future__ import annotations

from typing import Callable, Dict, List, Union

import torch

from .._base import DGLError


def _stacked(reduce: Callable[[torch.Tensor], torch.Tensor]):
    def aggregate(outputs: List[torch.Tensor], dsttype: str) -> torch.Tensor:  # [relations, N, ...] reduced
        return reduce(torch.stack(outputs, 0))
    return aggregate


# max / min as torch.max / torch.min along a dim (DGL's): a tie's gradient goes to one relation, not shared
_AGGREGATORS = {"sum": _stacked(lambda x: x.sum(0)), "mean": _stacked(lambda x: x.mean(0)),
                "max": _stacked(lambda x: torch.max(x, 0).values), "min": _stacked(lambda x: torch.min(x, 0).values),
                "stack": lambda outputs, dsttype: torch.stack(outputs, 1)}  # [N, relations, ...]


class HeteroGraphConv(torch.nn.Module):
    """out[t] = aggregate over the relations (s, e, t) into t of mods[e]( g[(s, e, t)], (x[s], x[t]) ), as
    dgl.nn.HeteroGraphConv.

    mods: {edge type or canonical edge type: module}; a relation's module is the one under its canonical type,
    else under its name (KeyError naming the relation when neither is there). Registered as `mods` (a ModuleDict
    keyed by str(key), DGL's parameter names). Each module that has set_allow_zero_in_degree gets True (a
    relation may leave nodes without in-edges). aggregate: 'sum', 'max', 'min', 'mean' over the relations
    elementwise, 'stack' ([N, relations, ...] in the graph's relation order), or a callable f(list of [N, ...],
    dsttype).

    forward(g, inputs, mod_args=None, mod_kwargs=None): inputs {ntype: [N, ...]} (a block's: the source rows,
    the destinations being the first num_dst_nodes of each type), or a pair of dicts (source features,
    destination features). A relation whose source type (or, for a pair / block, destination type) has no
    input is skipped; mod_args / mod_kwargs {edge type name: tuple / dict} are passed to that relation's module.
    Returns {ntype: output} for every type that some relation wrote."""

    def __init__(self, mods: Dict, aggregate: Union[str, Callable] = "sum"):
        super().__init__()
        self.mod_dict = dict(mods)
        self.mods = torch.nn.ModuleDict({str(k): v for k, v in mods.items()})
        for module in self.mods.values():
            allow_zero_in_degree = getattr(module, "set_allow_zero_in_degree", None)
            if callable(allow_zero_in_degree):
                allow_zero_in_degree(True)
        if isinstance(aggregate, str):
            if aggregate not in _AGGREGATORS:
                raise DGLError(f"HeteroGraphConv: aggregate must be one of {sorted(_AGGREGATORS)} or a callable, got "
                               f"{aggregate!r}")
            self.agg_fn = _AGGREGATORS[aggregate]
        elif callable(aggregate):
            self.agg_fn = aggregate
        else:
            raise TypeError(f"HeteroGraphConv: aggregate must be a name or a callable, got {type(aggregate).__name__}")

    def _get_module(self, canonical_etype):
        module = self.mod_dict.get(canonical_etype, self.mod_dict.get(canonical_etype[1]))
        if module is None:
            raise KeyError(f"HeteroGraphConv: no module for relation {canonical_etype} (modules for "
                           f"{list(self.mod_dict)})")
        return module

    def forward(self, g, inputs, mod_args=None, mod_kwargs=None) -> Dict[str, torch.Tensor]:
        mod_args, mod_kwargs = mod_args or {}, mod_kwargs or {}
        if isinstance(inputs, (tuple, list)):
            if len(inputs) != 2:
                raise ValueError(f"HeteroGraphConv: inputs as a pair are (source dict, destination dict), got "
                                 f"{len(inputs)} items")
            src_inputs, dst_inputs = inputs
        elif g.is_block:
            src_inputs = inputs
            dst_inputs = {t: x[: g.num_dst_nodes(t)] for t, x in inputs.items() if t in g.dsttypes}
        else:
            src_inputs = dst_inputs = inputs
        pairwise = isinstance(inputs, (tuple, list)) or g.is_block
        outputs: Dict[str, List[torch.Tensor]] = {t: [] for t in g.dsttypes}
        for s, e, d in g.canonical_etypes:
            if s not in src_inputs or (pairwise and d not in dst_inputs):
                continue
            if d not in dst_inputs:  # as DGL: on a graph, a relation with source features needs its destination's
                raise KeyError(f"HeteroGraphConv: relation {(s, e, d)} needs features of its destination type {d!r}; "
                               f"inputs has {sorted(inputs)}")
            module = self._get_module((s, e, d))
            outputs[d].append(module(g[(s, e, d)], (src_inputs[s], dst_inputs[d]), *mod_args.get(e, ()),
                                     **mod_kwargs.get(e, {})))
        return {t: self.agg_fn(out, t) for t, out in outputs.items() if out}


class HeteroLinear(torch.nn.Module):
    """A Linear per type: in_size {type: width} (types: node types, canonical relations, any hashable key) ->
    forward({type: [n, width]}) -> {type: [n, out_size]}; modules linears[str(type)], as DGL's."""

    def __init__(self, in_size: dict, out_size: int, bias: bool = True):
        super().__init__()
        self.linears = torch.nn.ModuleDict({str(t): torch.nn.Linear(w, out_size, bias=bias)
                                            for t, w in in_size.items()})

    def forward(self, feat: dict) -> dict:
        return {t: self.linears[_typed_key(self.linears, t, "HeteroLinear")](x) for t, x in feat.items()}


class HeteroEmbedding(torch.nn.Module):
    """An Embedding per type: num_embeddings {type: rows} -> forward({type: ids}) -> {type: [n, embedding_dim]};
    the property weight gives {type: table}; modules embeds[str(type)], as DGL's."""

    def __init__(self, num_embeddings: dict, embedding_dim: int):
        super().__init__()
        self.embeds = torch.nn.ModuleDict({str(t): torch.nn.Embedding(n, embedding_dim)
                                           for t, n in num_embeddings.items()})
        self.raw_keys = {str(t): t for t in num_embeddings}

    @property  # a property in DGL: scripts write emb.weight[ntype] (e.g. to feed an optimizer or copy a table)
    def weight(self) -> dict:
        return {self.raw_keys[t]: emb.weight for t, emb in self.embeds.items()}

    def reset_parameters(self) -> None:
        for emb in self.embeds.values():
            torch.nn.init.xavier_uniform_(emb.weight)

    def forward(self, input_ids: dict) -> dict:
        return {t: self.embeds[_typed_key(self.embeds, t, "HeteroEmbedding")](ids) for t, ids in input_ids.items()}


def _typed_key(modules: torch.nn.ModuleDict, t, what: str) -> str:
    if str(t) not in modules:
        raise KeyError(f"{what}: no module for type {t!r} (it has {sorted(modules.keys())})")
    return str(t)

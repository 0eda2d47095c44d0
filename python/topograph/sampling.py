"""dgl.sampling: neighbour sampling over the core's sampler (graph/sampling.hpp: the seeds split over the
threads, each seed's draw a function of (seed, relation, node) only, so the thread count changes nothing; in- or
out-edges, uniform or by an edge feature's weights, with or without replacement, as DGL 2.1's), and
global_uniform_negative_sampling (pairs that are no edge, drawn here with torch; also the graph method
g.global_uniform_negative_sampling, attached to DGLGraph below as DGL attaches it, and GlobalUniform's draw)."""
from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Optional, Tuple

import torch

from ._base import DGLError, DGLTypeError
from ._graph import EID, DGLGraph, EType
from ._random_walks import node2vec_random_walk, pack_traces, random_walk  # noqa: F401 (dgl.sampling's names)
from ._neighbor_selection import PinSAGESampler, RandomWalkNeighborSampler, select_topk  # noqa: F401 (the same)
from ._subgraph import _node_sets
from ._transform import _check


EDGE_DIRS = ("in", "out")
# DGL's prob dtypes (its C++ takes these); read as float32 by the core
PROB_DTYPES = (torch.float32, torch.float64, torch.bool, torch.uint8, torch.int8)


def sample_neighbors(g: DGLGraph, nodes, fanout, edge_dir: str = "in", prob: Optional[str] = None,
                     replace: bool = False, copy_ndata: bool = True, copy_edata: bool = True,
                     _dist_training: bool = False, exclude_edges=None, output_device=None, *,
                     seed: Optional[int] = None) -> DGLGraph:
    """dgl.sampling.sample_neighbors over the core's sampler (graph/sampling.hpp). For each node of `nodes` (ids
    or a boolean mask; {ntype: ...} with several types), `fanout` of its in-edges (edge_dir="in") or out-edges
    ("out") in each relation; fanout is one int or {etype: int} naming every relation. As DGL 2.1:
      uniform without replacement: min(fanout, degree) distinct edges (all of them for fanout -1);
      replace=True: fanout draws, repeats possible, none for a node without edges (fanout -1: every edge once);
      prob (an edge feature name, one non-negative value per edge, [E] or [E, 1]; float, bool, uint8 or int8):
      only edges of positive weight, min(fanout, their count) drawn one after another in proportion to the
      weights left, or with replace fanout draws in proportion (fanout -1: each positive edge once). A relation
      without the feature is drawn uniformly, as DGL's; a feature no relation has is an error (DGL samples
      uniformly then). Weights are read as float32, and only on the sampled nodes' edges, where a negative or
      not finite one is an error.
    exclude_edges (edge ids, or {etype: ids}): edges never drawn. The core skips them in the seeds' rows, so a
    seed gets min(fanout, edges left) by the same law as over a graph without them (other edges than without
    an exclusion), where DGL 2.1 drops them from its draws after (fewer edges); g is not copied. The result
    keeps every node of g and only the sampled edges in g's direction (edata[EID]: their ids in g), with g's
    node features (copy_ndata) and the sampled edges' features (copy_edata). The draws come from torch's
    default generator (torch.manual_seed makes them repeat) unless `seed` is given: the same distribution as
    DGL's, not the same edges. The parameters are DGL 2.1's, in its order (exclude_edges after _dist_training,
    DGL's internal flag for its distributed graph, which is not supported here); output_device: where the
    result goes (g's device by default), as DGL's."""
    if _dist_training:
        raise NotImplementedError("sample_neighbors: _dist_training (DGL's internal flag for DistGraph sampling) "
                                  "is not supported by topograph")
    _check(g, "sample_neighbors")
    edge_dir, replace, weights = _sampling_options(g, edge_dir, prob, replace, "sample_neighbors")
    fanouts = _fanouts(g, fanout)
    if seed is None:
        seed = int(torch.randint(0, 2 ** 62, (1,)).item())
    excluded = _exclusions(g, exclude_edges, "sample_neighbors: exclude_edges")
    handle = g._g.sample_neighbors(_node_sets(g, nodes, "sample_neighbors"), fanouts, int(seed), edge_dir, replace,
                                   weights, excluded)
    frontier = DGLGraph(handle)
    from . import _message_passing as mp  # it builds on ops, which builds on _graph

    if copy_ndata:
        mp.carry_node_features(g, frontier)
    edge_ids = [frontier._g.parent_ids(False, r) for r in range(len(fanouts))]
    if copy_edata:
        mp.carry_edge_features(g, frontier, range(len(fanouts)), edge_ids)
    for r, eid in enumerate(edge_ids):
        mp.edge_frame(frontier, r)[EID] = eid.to(g.idtype)
    return frontier if output_device is None else frontier.to(output_device)


# g.sample_neighbors(nodes, fanout, ...), as DGL attaches it (dgl/sampling/neighbor.py)
DGLGraph.sample_neighbors = sample_neighbors


def _sampling_options(g: DGLGraph, edge_dir, prob, replace, what: str, arg: str = "prob") -> tuple:
    """(edge_dir, replace, weights) checked for the core: weights per relation of g, the edge feature `prob` as
    float32 [E] on the CPU (the feature itself when it is one), None where the relation lacks it; [] for
    prob None (uniform everywhere). `arg`: the caller's name for it in errors (NeighborSampler's mask too)."""
    if edge_dir not in EDGE_DIRS:
        raise DGLError(f"{what}: edge_dir must be 'in' or 'out', got {edge_dir!r}")
    if prob is None:
        return edge_dir, bool(replace), []
    if not isinstance(prob, str):
        raise TypeError(f"{what}: {arg} must name an edge feature (a str) or be None, got {prob!r}")
    from . import _message_passing as mp

    frames, weights = mp.frames(g), []
    for r, etype in enumerate(g.canonical_etypes):
        value = getattr(frames.get(("e", r)), "_data", {}).get(prob)
        if value is None:
            weights.append(None)
            continue
        if value.dtype not in PROB_DTYPES:
            raise TypeError(f"{what}: {arg} feature {prob!r} of {etype} must be float32, float64, bool, uint8 or int8 "
                            f"(as DGL's), got {value.dtype}")
        if not (value.dim() == 1 or value.dim() == 2 and value.shape[1] == 1):
            raise DGLError(f"{what}: {arg} feature {prob!r} of {etype} must hold one value per edge ([E] or [E, 1]), "
                           f"got shape {list(value.shape)}")
        weights.append(value.detach().reshape(-1).to(device="cpu", dtype=torch.float32).contiguous())
    if all(w is None for w in weights):
        raise DGLError(f"{what}: {arg} names the edge feature {prob!r}, which no relation of the graph has")
    return edge_dir, bool(replace), weights


def _exclusions(g: DGLGraph, exclude_eids, what: str) -> list:
    """exclude_eids (edge ids, or {etype: ids}) as the core takes them: one int64 id tensor per relation of g (an
    empty one where none is excluded), or [] when nothing is; the core never draws those edges
    (graph/sampling.hpp SamplingOptions::exclude), without a copy of g or a weight per edge."""
    if exclude_eids is None:
        return []
    if not isinstance(exclude_eids, Mapping):
        exclude_eids = {None: exclude_eids}
    relations = g.canonical_etypes
    out = [torch.empty(0, dtype=torch.int64) for _ in relations]
    for etype, ids in exclude_eids.items():
        r = g._relation(etype)
        ids = g._checked_ids(ids, g.num_edges(relations[r]), f"{what} of {relations[r]}: edge")
        out[r] = torch.cat([out[r], ids.to(device="cpu", dtype=torch.int64)])
    return out if any(ids.numel() for ids in out) else []


def _fanouts(g: DGLGraph, fanout) -> list:
    """One fan-out per relation of g, from an int or {etype: int} naming each relation once."""
    relations = g.canonical_etypes
    if not isinstance(fanout, Mapping):
        return [_fanout_value(fanout, "fanout")] * len(relations)
    out = [None] * len(relations)
    for etype, value in fanout.items():
        out[g._relation(etype)] = _fanout_value(value, f"fanout[{etype!r}]")
    missing = [c for c, v in zip(relations, out) if v is None]
    if missing:
        raise DGLError(f"sample_neighbors: fanout names no value for {missing} (give 0 to sample none)")
    return out


def _fanout_value(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) and not (isinstance(value, torch.Tensor) and
                                                                       value.dim() == 0):
        raise DGLTypeError(f"sample_neighbors: {what} must be an int, got {value!r}")
    value = int(value)
    if value < -1:
        raise DGLError(f"sample_neighbors: {what} must be >= -1 (-1: every edge), got {value}")
    return value


NEGATIVE_TRIALS = 3  # draws per slot before it is left empty, DGL's num_trials


def _negative_redundancy(num_samples: int, num_edges: int, num_pairs: int) -> float:
    """DGL's _calc_redundancy: the extra fraction of slots to draw so that, by a binomial lower bound three
    standard deviations down, num_samples of them land on no edge. Solves k = N p - 3 sqrt(N p (1 - p)) for N
    (the larger root of p^2 N^2 - p (2k + 9 (1 - p)) N + k^2), p the fraction of pairs that are no edge."""
    free = 1.0 - num_edges / num_pairs
    a, b, c = free ** 2, -free * (2 * num_samples + 9 * (1.0 - free)), float(num_samples) ** 2
    slots = (-b + math.sqrt(max(b * b - 4 * a * c, 0.0))) / (2 * a)
    return slots / num_samples - 1.0


def global_uniform_negative_sampling(g: DGLGraph, num_samples: int, exclude_self_loops: bool = True,
                                     replace: bool = False, etype: EType = None,
                                     redundancy: Optional[float] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    """dgl.sampling.global_uniform_negative_sampling: at most num_samples pairs (sources, destinations) of the
    relation's source and destination types that are no edge of it, and no self loop with exclude_self_loops
    (when the two types agree); distinct unless replace. DGL's algorithm: num_samples * (1 + redundancy) slots
    of up to three uniform draws each (the first draw that is no edge fills the slot), empty slots dropped, then
    without replace the pairs sorted by (destination, source) (the order of DGL's default, which samples on
    the CSC) and deduplicated; the first num_samples kept. So a small or dense graph gives fewer pairs, as DGL's.
    redundancy: None for DGL's lower bound (_negative_redundancy), or a float >= 0 (which DGL 2.1 ignores).
    Draws from torch's generator (torch.manual_seed / topograph.seed repeat them), where DGL draws from its own:
    the same distribution, not the same pairs. Ids of g's idtype on g's device. etype must be named when g has
    several relations (DGL 2.1 takes the first); num_samples 0 gives no pair (DGL 2.1 raises)."""
    _check(g, "global_uniform_negative_sampling")
    if isinstance(num_samples, bool) or not isinstance(num_samples, numbers.Integral) or num_samples < 0:
        raise DGLError(f"global_uniform_negative_sampling: num_samples must be an int >= 0, got {num_samples!r}")
    if redundancy is not None and (isinstance(redundancy, bool) or not isinstance(redundancy, numbers.Real) or
                                   not redundancy >= 0):
        raise DGLError(f"global_uniform_negative_sampling: redundancy must be None or a number >= 0, got "
                       f"{redundancy!r}")
    relation = g.canonical_etypes[g._relation(etype)]
    src_type, _, dst_type = relation
    num_src, num_dst = g.num_nodes(src_type), g.num_nodes(dst_type)
    u, v = g.all_edges(etype=relation)
    existing = torch.unique(u.cpu().to(torch.int64) * num_dst + v.cpu().to(torch.int64))  # [distinct edges]
    keys = torch.zeros(0, dtype=torch.int64)  # the pairs as source * num_dst + destination
    num_pairs = num_src * num_dst
    if num_samples > 0 and existing.numel() < num_pairs:  # else no pair is free
        if redundancy is None:  # DGL counts every edge; a pair's parallel edges count once here
            redundancy = _negative_redundancy(num_samples, existing.numel(), num_pairs)
        slots = int(int(num_samples) * (1.0 + redundancy))
        draws = torch.randint(0, num_pairs, (slots, NEGATIVE_TRIALS))  # [slots, trials]
        free = ~torch.isin(draws, existing)
        if exclude_self_loops and src_type == dst_type:
            free &= draws // num_dst != draws % num_dst
        filled = free.any(1)  # [slots]
        first_free = free.to(torch.int8).argmax(1, keepdim=True)  # [slots, 1]: the first free draw's trial
        keys = draws.gather(1, first_free).squeeze(1)[filled]
        if not replace:
            by_dst = torch.unique((keys % num_dst) * num_src + keys // num_dst)  # sorted: (destination, source)
            keys = (by_dst % num_src) * num_dst + by_dst // num_src
        keys = keys[:int(num_samples)]
    src, dst = keys // max(num_dst, 1), keys % max(num_dst, 1)
    return src.to(device=g.device, dtype=g.idtype), dst.to(device=g.device, dtype=g.idtype)


# g.global_uniform_negative_sampling(num_samples, ...), as DGL attaches it (dgl/sampling/negative.py)
DGLGraph.global_uniform_negative_sampling = global_uniform_negative_sampling


def sample_labors(g: DGLGraph, nodes, fanout: int, edge_dir: str = "in", prob: Optional[str] = None,
                  importance_sampling: int = 0, random_seed=None, seed2_contribution: float = 0,
                  copy_ndata: bool = True, copy_edata: bool = True, exclude_edges=None, output_device=None):
    """dgl.sampling.sample_labors: one LABOR draw (dataloading/labor_sampler.py's rule, LaborSampler's one layer)
    of the in-edges of `nodes` on a graph of one node type and relation -> (frontier: every node, the kept edges,
    EID their ids in g; [the kept edges' weights w / p scaled to average 1 per node, float32 [E'], or an empty
    tensor without importance sampling or prob]). random_seed (an int, or one or two in a tensor) makes the
    variates a function of it; with two, seed2_contribution in [0, 1] moves them from the first's to the second's
    (DGL's batch dependency). Without random_seed the variates come from torch's generator."""
    from .dataloading.labor_sampler import edge_weights_named, labor_frontier, uniform_between

    _check(g, "sample_labors")
    if edge_dir != "in":
        raise DGLError(f"sample_labors: edge_dir must be 'in' here, got {edge_dir!r} (sample_neighbors samples "
                       f"out-edges)")
    if not g.is_homogeneous:
        raise DGLError(f"sample_labors: a graph of one node type and one relation here, got {g.canonical_etypes}")
    if isinstance(fanout, bool) or not isinstance(fanout, numbers.Integral) or fanout < -1:
        raise DGLError(f"sample_labors: fanout must be an int >= 0, or -1 for every edge, got {fanout!r}")
    if isinstance(importance_sampling, bool) or not isinstance(importance_sampling, numbers.Integral):
        raise DGLError(f"sample_labors: importance_sampling must be an int, got {importance_sampling!r}")
    if not 0 <= float(seed2_contribution) <= 1:
        raise DGLError(f"sample_labors: seed2_contribution must lie in [0, 1], got {seed2_contribution!r}")
    seeds = torch.as_tensor(g._checked_ids(nodes, g.num_nodes(), "sample_labors: node")).to(torch.int64)
    n = g.num_nodes()
    if random_seed is None:
        if seed2_contribution:
            raise DGLError("sample_labors: seed2_contribution needs random_seed holding two seeds")
        r = torch.rand(n)
    else:
        given = torch.as_tensor(random_seed).reshape(-1).tolist()
        if len(given) not in (1, 2) or (seed2_contribution and len(given) != 2):
            raise DGLError(f"sample_labors: random_seed must hold one seed, or two with seed2_contribution, got "
                           f"{given}")
        normals = [torch.randn(n, generator=torch.Generator().manual_seed(int(s)), dtype=torch.float64) for s in given]
        r = uniform_between(normals[0], normals[-1], float(seed2_contribution))
    weight = edge_weights_named(g, prob, "sample_labors")
    frontier, parent, weights = labor_frontier(g, seeds.cpu(), int(fanout), weight, int(importance_sampling), r,
                                               exclude_edges)
    for data, keep in ((frontier.ndata, copy_ndata), (frontier.edata, copy_edata)):
        if not keep:
            for name in [k for k in data.keys() if k != EID]:
                data.pop(name)
    frontier.edata[EID] = parent.to(device=frontier.device, dtype=g.idtype)
    importances = [torch.empty(0) if weights is None else weights.to(torch.float32)]
    if output_device is not None:
        frontier = frontier.to(output_device)
        importances = [t.to(output_device) for t in importances]
    return frontier, importances


DGLGraph.sample_labors = sample_labors

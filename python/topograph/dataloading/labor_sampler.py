"""dgl.dataloading.LaborSampler (Balın & Çatalyürek, layer-neighbour sampling, arXiv:2210.13339): per layer, one
uniform random number r_t per node t, and seed s keeps its in-edge from t when r_t <= p_ts = min(1, c_s pi_t). Each
seed keeps about fanout edges, as neighbour sampling does, but seeds sharing a neighbour draw it together, so a
batch reaches fewer distinct nodes.

  LABOR-0 (importance_sampling=0): pi_t = 1 and c_s = fanout / s's degree; with prob, pi_ts = the edge's
      weight and c_s scaled once to the variance match below (fanout / in-weight would keep too many).
  LABOR-i (importance_sampling=i > 0; -1: until the expected number of distinct sources stops falling): i rounds
      of the paper's fixed point: pi_t is multiplied by max over t's seeds of c_s, then each c_s is scaled until
      the variance of s's estimator, sum over its edges of w^2 / p_ts (w = 1, or the edge's weight), meets that of
      picking fanout of its edges uniformly (d_s^2 / k; with weights, plus sum w^2 - d_s^2 / deg_s), the paper's
      Eq. 22. Sources picked by many seeds get a higher pi, seeds lean on them, and fewer distinct sources remain.
  With importance sampling or prob, block.edata['edge_weights'] holds w / p_ts per kept edge, scaled per seed so
  that its kept edges' weights average 1 (fn.mean over them is the estimator; DGL's normalisation).

The inclusion probabilities and weights are DGL 2.1's (labor_pick's rules); the random numbers are torch's (DGL
hashes (seed, node) with PCG32), so the draws match DGL's in law, not one by one. layer_dependency=True keeps one
r_t per node for every layer of a batch. batch_dependency=k > 1 makes consecutive batches' variates correlated
(DGL's: r_t = Phi(cos(a) z_t + sin(a) z'_t) of two standard normal vectors, a = (pi / 2)(b mod k) / k at batch b, and
every k batches z' becomes z and a fresh z' is drawn: each r_t stays uniform, and batches near each other reach
the same nodes); k = 0 keeps the first batch's variates for ever. set_seed(s) makes the variates a function of s.
Homogeneous graphs and in-edges only."""
from __future__ import annotations

import math
import numbers

import torch

from .._base import DGLError
from .._block import to_block
from .._graph import EID, NID
from .._subgraph import edge_subgraph, in_subgraph
from .base import BlockSampler

_EPS = 1e-4  # DGL's tolerance for the variance match and the fixed point's stop


class LaborSampler(BlockSampler):
    def __init__(self, fanouts, edge_dir: str = "in", prob=None, importance_sampling: int = 0,
                 layer_dependency: bool = False, batch_dependency: int = 1, prefetch_node_feats=None,
                 prefetch_labels=None, prefetch_edge_feats=None, output_device=None):
        super().__init__(prefetch_node_feats, prefetch_labels, prefetch_edge_feats, output_device)
        if edge_dir != "in":
            raise DGLError(f"LaborSampler: edge_dir must be 'in' here, got {edge_dir!r} (NeighborSampler samples "
                           f"out-edges)")
        if isinstance(batch_dependency, bool) or not isinstance(batch_dependency, numbers.Integral) or \
                batch_dependency < 0:
            raise DGLError(f"LaborSampler: batch_dependency must be an int >= 0 (1: independent batches, k > 1: "
                           f"variates drifting over k batches, 0: the same variates every batch), got "
                           f"{batch_dependency!r}")
        if isinstance(importance_sampling, bool) or not isinstance(importance_sampling, numbers.Integral):
            raise DGLError(f"LaborSampler: importance_sampling must be an int (0: LABOR-0, i > 0: i rounds, "
                           f"-1: until it converges), got {importance_sampling!r}")
        if prob is not None and not isinstance(prob, str):
            raise DGLError(f"LaborSampler: prob must be the name of an edge feature, got {prob!r}")
        self.fanouts, self.prob, self.importance_sampling = list(fanouts), prob, int(importance_sampling)
        self.layer_dependency, self.batch_dependency = bool(layer_dependency), int(batch_dependency)
        self.set_seed()

    def set_seed(self, random_seed=None) -> None:
        """DGL's set_seed: the variates from here on come from a generator seeded with random_seed (torch's
        global generator when None), starting a new run of batch_dependency batches."""
        self._generator = None if random_seed is None else torch.Generator().manual_seed(int(random_seed))
        self._normals, self._batch = None, 0

    def _variates(self, layers: int, num_nodes: int) -> torch.Tensor:
        """[layers, num_nodes] uniform r_t of this batch (one row for every layer with layer_dependency)."""
        rows = 1 if self.layer_dependency else layers
        k = self.batch_dependency
        if k == 1:
            return torch.rand(rows, num_nodes, generator=self._generator)
        if self._normals is None or self._normals.shape[1:] != (rows, num_nodes):
            self._normals = torch.randn(2, rows, num_nodes, generator=self._generator, dtype=torch.float64)
        return uniform_between(self._normals[0], self._normals[1], (self._batch % k) / k if k > 1 else 0.0)

    def _next_batch(self) -> None:
        self._batch += 1
        if self.batch_dependency > 1 and self._batch % self.batch_dependency == 0:
            fresh = torch.randn(self._normals.shape[1:], generator=self._generator, dtype=torch.float64)
            self._normals = torch.stack([self._normals[1], fresh])

    def sample_blocks(self, g, seed_nodes, exclude_eids=None):
        if not g.is_homogeneous:
            raise DGLError(f"LaborSampler: a homogeneous graph only here, got relations {g.canonical_etypes}")
        weight = edge_weights_named(g, self.prob, "LaborSampler")
        output_nodes = seeds = torch.as_tensor(seed_nodes, dtype=torch.int64)
        variates = self._variates(len(self.fanouts), g.num_nodes())
        blocks = []
        for layer, fanout in enumerate(reversed(self.fanouts)):
            r = variates[0 if self.layer_dependency else layer]
            frontier, parent, edge_weights = labor_frontier(g, seeds, fanout, weight, self.importance_sampling, r,
                                                            exclude_eids)
            block = to_block(frontier, seeds)
            order = block.edata[EID].long()  # the block's edges as positions among the frontier's
            block.edata[EID] = parent[order]  # g's edge ids, as NeighborSampler's blocks
            if edge_weights is not None:
                block.edata["edge_weights"] = edge_weights[order.cpu()].to(torch.float32).to(block.device)
            seeds = block.srcdata[NID].to(torch.int64)
            blocks.insert(0, block)
        self._next_batch()
        return seeds.to(g.idtype), output_nodes.to(g.idtype), blocks  # in g's idtype, as DGL's samplers


def uniform_between(z0: torch.Tensor, z1: torch.Tensor, contribution: float) -> torch.Tensor:
    """Uniform variates Phi(cos(a) z0 + sin(a) z1), a = (pi / 2) contribution, of standard normal z0, z1: each
    stays uniform while contribution moves it from z0's (0) to z1's (1) (DGL's seed2_contribution)."""
    angle = math.pi / 2 * contribution
    mixed = math.cos(angle) * z0 + math.sin(angle) * z1
    return 0.5 * torch.erfc(-mixed / math.sqrt(2.0))  # the standard normal's CDF


def edge_weights_named(g, prob, what: str):
    """[E] float64 weights of the edge feature `prob` (one per edge, finite, >= 0), or None when prob is None."""
    if prob is None:
        return None
    if prob not in g.edata:
        raise DGLError(f"{what}: prob {prob!r} is not an edge feature (the graph has {sorted(g.edata)})")
    weight = g.edata[prob]
    if weight.dim() != 1 and not (weight.dim() == 2 and weight.shape[1] == 1):
        raise DGLError(f"{what}: prob {prob!r} must hold one weight per edge, got shape {tuple(weight.shape)}")
    weight = weight.reshape(-1).to(torch.float64)
    if not bool(torch.isfinite(weight).all()) or bool((weight < 0).any()):
        raise DGLError(f"{what}: prob {prob!r} must be finite and >= 0")
    return weight


def labor_frontier(g, seeds: torch.Tensor, fanout: int, weight, importance_sampling: int, r: torch.Tensor,
                   exclude_eids=None):
    """One LABOR draw: (the frontier, every node of g and the kept in-edges of `seeds`; g's id of each of its
    edges [E'] int64; the edges' weights w / p scaled per seed [E'] float64, or None without importance sampling
    or weights). r: [num_nodes] uniform variates; fanout -1 keeps every edge."""
    frontier = in_subgraph(g, seeds)  # every in-edge of the seeds, EID their ids in g
    parent = frontier.edata[EID].long()
    if exclude_eids is not None:
        kept = torch.nonzero(~torch.isin(parent, torch.as_tensor(exclude_eids).long().to(parent.device)))
        frontier = edge_subgraph(frontier, kept.reshape(-1), relabel_nodes=False)
        parent = parent[kept.reshape(-1)]
    if fanout < 0:
        return frontier, parent, None
    u, v = (t.to(torch.int64).cpu() for t in frontier.edges())
    w = None if weight is None else weight[parent.to(weight.device)].cpu()
    p = inclusion_probabilities(u, v, g.num_nodes(), fanout, w, importance_sampling)
    kept = torch.nonzero((r[u].double() <= p) & (p > 0)).reshape(-1)  # never a p of 0
    edge_weights = None
    if importance_sampling or w is not None:
        edge_weights = _normalised_weights(v[kept], (1.0 if w is None else w[kept]) / p[kept], g.num_nodes())
    frontier = edge_subgraph(frontier, kept.to(parent.device), relabel_nodes=False)
    return frontier, parent[kept.to(parent.device)], edge_weights


def inclusion_probabilities(u: torch.Tensor, v: torch.Tensor, num_nodes: int, fanout: int, weight,
                            importance_sampling: int) -> torch.Tensor:
    """[E] float64: p = min(1, c_v pi_u) of each edge u -> v of the frontier (the module's doc), v the seeds.
    weight: [E] float64 (prob) or None."""
    weighted = weight is not None
    a = weight if weighted else torch.ones(u.numel(), dtype=torch.float64)
    count = torch.bincount(v, minlength=num_nodes).to(torch.float64)  # deg_s
    d = torch.zeros(num_nodes, dtype=torch.float64).index_add_(0, v, a)  # d_s: degree or in-weight sum
    c = torch.where(d > 0, fanout / torch.where(d > 0, d, torch.ones_like(d)), torch.zeros_like(d))
    if importance_sampling == 0 and not weighted:
        return torch.clamp(c[v] * a, max=1.0)
    k = torch.clamp(count, max=float(fanout))
    var_target = torch.where(count > 0, d * d / torch.where(k > 0, k, torch.ones_like(k)), torch.zeros_like(d))
    if weighted:  # the uniform picker's variance with weights: d^2 / k - d^2 / deg + sum w^2
        square_sum = torch.zeros(num_nodes, dtype=torch.float64).index_add_(0, v, a * a)
        var_target = var_target - torch.where(count > 0, d * d / torch.where(count > 0, count, 1.0), 0.0) + square_sum
    numerator = a * a if weighted else torch.ones_like(a)
    if importance_sampling == 0:  # weighted LABOR-0: fanout / in-weight keeps too many; c matched once, pi = w
        return torch.clamp(_match_variance(v, num_nodes, c, a, numerator, var_target, count)[v] * a, max=1.0)
    pi = None  # per node; None: the first weighted round reads the weights themselves
    sources = torch.unique(u)  # the distinct sources (the nodes pi is read at), found once for every round
    is_source = torch.zeros(num_nodes, dtype=torch.bool)
    is_source[sources] = True
    previous = float(u.numel())  # above any expected count of distinct sources
    rounds = importance_sampling + weighted if importance_sampling >= 0 else None
    i = 0
    while rounds is None or i < rounds:
        if not weighted or i > 0:
            # pi_t times the largest c_s among t's seeds (the first weighted step takes c_s w_ts)
            step = c[v] * (a if weighted and i == 1 else 1.0)
            top = torch.zeros(num_nodes, dtype=torch.float64).scatter_reduce(0, u, step, "amax", include_self=False)
            pi = top if pi is None else pi * torch.where(is_source, top, 1.0)
        ps = a if pi is None else pi[u]
        c = _match_variance(v, num_nodes, c, ps, numerator, var_target, count)
        if not weighted or i > 0:
            expected = torch.clamp(pi[sources], max=1.0).sum().item()  # distinct sources to expect
            if previous > 0 and expected / previous >= 1 - _EPS:
                break
            previous = expected
        i += 1
        if rounds is None and i > 1000:  # the fixed point converges in tens of rounds; never loop for ever
            break
    return torch.clamp(c[v] * pi[u], max=1.0)


def _match_variance(v, num_nodes, c, ps, numerator, var_target, count) -> torch.Tensor:
    """Each seed's c scaled by var / target until its estimator's variance, sum over its edges of
    numerator / min(1, c ps), is within _EPS of var_target (every seed at once; seeds without edges keep c)."""
    active = count > 0
    for _ in range(10000):
        p = torch.clamp(c[v] * ps, max=1.0)
        # an edge of weight 0 adds nothing (0 / 0 where its p is 0 too)
        var = torch.zeros(num_nodes, dtype=torch.float64).index_add_(
            0, v, torch.where(numerator > 0, numerator / torch.where(p > 0, p, 1.0), 0.0))
        ratio = torch.where(active, var / torch.where(var_target > 0, var_target, 1.0), 1.0)
        if bool((torch.minimum(ratio, 1 / ratio) >= 1 - _EPS).all()):
            break
        c = torch.where(active, c * ratio, c)
    return c


def _normalised_weights(seed_of_edge: torch.Tensor, inverse_p: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """w / p per kept edge, times (the seed's kept edges) / (their sum of w / p): each seed's weights average 1."""
    inverse_p = torch.as_tensor(inverse_p, dtype=torch.float64).expand(seed_of_edge.shape)
    kept = torch.bincount(seed_of_edge, minlength=num_nodes).to(torch.float64)
    total = torch.zeros(num_nodes, dtype=torch.float64).index_add_(0, seed_of_edge, inverse_p)
    return inverse_p * (kept / torch.where(total > 0, total, 1.0))[seed_of_edge]

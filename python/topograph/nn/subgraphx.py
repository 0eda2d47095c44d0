"""dgl.nn.SubgraphX and dgl.nn.HeteroSubgraphX (Yuan et al., "On Explainability of Graph Neural Networks via
Subgraph Explorations"; DGL 2.1's names, defaults and procedure). A Monte Carlo tree search over connected
subgraphs: the root is the whole graph; a tree node's children drop one of its num_child highest (high2low) or
lowest degree nodes and keep the largest weakly connected component of what is left; each child is rated once by
a Monte Carlo Shapley estimate: the mean, over shapley_steps random coalitions S drawn from the (num_hops - 1)-hop
region around the subgraph g, of p(S + g) - p(S), p the model's softmax probability of target_class with the
features of the region's other nodes zeroed (nodes outside the region keep theirs). Rollouts descend by an upper
confidence bound until a subgraph of at most node_min nodes; the answer is the best rated such leaf.

Randomness, as DGL's: the coalitions are np.random.permutation draws on numpy's global generator (one per step,
one per node type and step for the heterograph), and HeteroSubgraphX, when a removal leaves no edge, picks the
single node it keeps with np.random.choice; nothing is drawn from torch. So np.random.seed(s) gives DGL's draws,
and SubgraphX gives DGL's explanation for the same seed and model.

Where DGL 2.1 is wrong, this is not (python/tests/test_subgraphx.py shows what DGL does):
  * HeteroSubgraphX's Shapley step adds the subgraph to the coalition's "without" mask instead of the "with"
    one, so every reward is p(S) - p(S + g), the negated value; here it is p(S + g) - p(S), as SubgraphX's.
  * HeteroSubgraphX picks the answer among tree nodes with at most node_min node *types* (len of the dict), so
    any subgraph, the root included, can win; here, as SubgraphX, among those of at most node_min nodes.
  * HeteroSubgraphX fails on a heterograph of one node type (its ids there are tensors, not dicts); here not.
  * HeteroSubgraphX grows the local region relation by relation in place, so one hop can run several relations
    deep, and never into node types the subgraph lacks; here each hop grows from the region at its start, over
    every node type.
  * Tree nodes are keyed by str(ids), which numpy-style summarising makes equal for different sets of more than
    1000 ids (they are merged); here by the ids themselves. The rollout recurses once per removed node (a
    RecursionError past ~1000 nodes); here it loops.
  * model.eval() is left on the caller's model; here the model's training flag is restored afterwards.
As DGL, a child whose reward is exactly 0.0 is rated again whenever a new parent lists it (0.0 marks "unrated"):
kept, since it draws from numpy's generator and changes what follows."""
from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

import numpy as np
import torch

from .._base import NID, NTYPE
from .._convert import to_homogeneous
from .._subgraph import node_subgraph

__all__ = ["SubgraphX", "HeteroSubgraphX"]


def _check_int(owner: str, name: str, value, low: int):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{owner}: {name} must be an int, got {value!r}")
    if value < low:
        raise ValueError(f"{owner}: {name} must be >= {low}, got {value!r}")
    return int(value)


def _target(owner: str, target_class) -> int:
    """target_class as an int: an int, or an integer tensor of one element (a dataset's label, as DGL's example)."""
    if isinstance(target_class, torch.Tensor):
        if target_class.numel() != 1 or target_class.is_floating_point() or target_class.is_complex():
            raise ValueError(f"{owner}: target_class must be one integer, got a tensor of shape "
                             f"{tuple(target_class.shape)} and dtype {target_class.dtype}")
        target_class = target_class.item()
    if isinstance(target_class, bool) or not isinstance(target_class, numbers.Integral):
        raise TypeError(f"{owner}: target_class must be an int, got {target_class!r}")
    if target_class < 0:
        raise ValueError(f"{owner}: target_class must be >= 0, got {target_class}")
    return int(target_class)


def _largest_component(num_nodes: int, src: torch.Tensor, dst: torch.Tensor, removed: int) -> torch.Tensor:
    """The nodes (int64, increasing) of the largest weakly connected component of a graph of num_nodes nodes and
    edges src -> dst ([E] int64, CPU) once node `removed` and its edges are gone. Ties go to the component whose
    smallest node is smallest: networkx's weakly_connected_components yields components in that order and DGL
    takes the first largest. Labels spread as the minimum node id over edges until they settle."""
    keep = (src != removed) & (dst != removed)
    src, dst = src[keep], dst[keep]
    label = torch.arange(num_nodes)
    while True:
        new = label.clone()
        new.scatter_reduce_(0, dst, label[src], reduce="amin")
        new.scatter_reduce_(0, src, label[dst], reduce="amin")
        if torch.equal(new, label):
            break
        label = new
    alive = torch.ones(num_nodes, dtype=torch.bool)
    alive[removed] = False
    size = torch.bincount(label[alive], minlength=num_nodes)
    best = int(torch.argmax(size))  # the first maximum: the component holding the smallest node among the largest
    return (alive & (label == best)).nonzero().flatten()


def _shuffled_split(space: list, split: int) -> torch.Tensor:
    """One coalition as DGL draws it: a np.random.permutation of space (ids and the marker `split`); the ids
    before the marker, as int64 [k]."""
    perm = np.random.permutation(space)
    cut = int(np.flatnonzero(perm == split)[0])
    return torch.from_numpy(perm[:cut].astype(np.int64))


class _TreeNode:
    """A tree node of the search: a connected subgraph's node ids, its visit count, the sum of the rewards
    backed up through it, its own Shapley rating and its children (listed once, when first expanded)."""

    __slots__ = ("nodes", "size", "num_visit", "total_reward", "immediate_reward", "children")

    def __init__(self, nodes, size: int):
        self.nodes, self.size = nodes, size
        self.num_visit, self.total_reward, self.immediate_reward = 0, 0.0, 0.0
        self.children = []


class _Search:
    """What one explain_graph call works on: the graph, the features, the class, the model's extra arguments,
    and the tree nodes met so far keyed by their ids (in the order met: ties go to the first, as DGL's)."""

    def __init__(self, graph, feat, target: int, kwargs: dict):
        self.graph, self.feat, self.target, self.kwargs = graph, feat, target, kwargs
        self.nodes = {}
        self.checked = False


class _SubgraphXBase(torch.nn.Module):
    _name = "SubgraphX"

    def __init__(self, model, num_hops, coef=10.0, high2low=True, num_child=12, num_rollouts=20, node_min=3,
                 shapley_steps=100, log=False):
        super().__init__()
        owner = self._name
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"{owner}: model must be a torch.nn.Module, got {type(model).__name__}")
        self.num_hops = _check_int(owner, "num_hops", num_hops, 0)
        if isinstance(coef, bool) or not isinstance(coef, numbers.Real) or not math.isfinite(coef):
            raise TypeError(f"{owner}: coef must be a finite number, got {coef!r}")
        self.coef = float(coef)
        for name, flag in (("high2low", high2low), ("log", log)):
            if not isinstance(flag, bool):
                raise TypeError(f"{owner}: {name} must be a bool, got {flag!r}")
        self.high2low, self.log = high2low, log
        self.num_child = _check_int(owner, "num_child", num_child, 1)
        # DGL takes 0 rollouts (then fails on its missing answer), node_min 0 (then fails taking the component of
        # an empty graph) and 0 steps (then fails averaging nothing): here they are refused up front
        self.num_rollouts = _check_int(owner, "num_rollouts", num_rollouts, 1)
        self.node_min = _check_int(owner, "node_min", node_min, 1)
        self.shapley_steps = _check_int(owner, "shapley_steps", shapley_steps, 1)
        self.model = model

    # -- hooks: how a node set is held, sized, keyed, rated and cut --------------------------------------------
    def _size(self, nodes) -> int:
        raise NotImplementedError

    def _key(self, nodes):
        raise NotImplementedError

    def _shapley(self, search: _Search, nodes) -> float:
        raise NotImplementedError

    def _cuts(self, search: _Search, nodes) -> list:
        raise NotImplementedError

    # -- the search ------------------------------------------------------------------------------------------
    def _probs(self, search: _Search, feat) -> torch.Tensor:
        """[B] the model's probability of the target class (B = 1 for one graph; a batch gives one per graph)."""
        logits = self.model(search.graph, feat, **search.kwargs)
        if not search.checked:
            if not isinstance(logits, torch.Tensor) or logits.dim() != 2:
                raise ValueError(f"{self._name}: the model must return logits [B, C], got "
                                 f"{tuple(logits.shape) if isinstance(logits, torch.Tensor) else type(logits)}")
            if search.target >= logits.shape[1]:
                raise ValueError(f"{self._name}: target_class must be < {logits.shape[1]} (the model's classes), "
                                 f"got {search.target}")
            search.checked = True
        return logits.softmax(dim=-1)[:, search.target]

    def _node(self, search: _Search, nodes) -> _TreeNode:
        key = self._key(nodes)
        if key not in search.nodes:
            search.nodes[key] = _TreeNode(nodes, self._size(nodes))
        return search.nodes[key]

    def _children(self, search: _Search, parent: _TreeNode) -> list:
        """parent's children, listed (and rated) on first call: one per distinct cut, in the order cut."""
        if parent.children:
            return parent.children
        unique = {}
        for nodes in self._cuts(search, parent.nodes):
            child = self._node(search, nodes)
            unique.setdefault(id(child), child)
        parent.children = list(unique.values())
        for child in parent.children:
            if child.immediate_reward == 0:  # DGL's "unrated" mark (see the module doc)
                child.immediate_reward = self._shapley(search, child.nodes)
        return parent.children

    def _rollout(self, search: _Search, root: _TreeNode) -> None:
        """One descent from the root to a leaf (<= node_min nodes) by the upper confidence bound, then the
        leaf's rating added to every child passed (a loop over DGL's recursion: the same calls, in its order)."""
        path, node = [], root
        while node.size > self.node_min:
            children = self._children(search, node)
            scale = self.coef * math.sqrt(sum(c.num_visit for c in children))
            node = max(children, key=lambda c: c.total_reward / max(c.num_visit, 1)
                       + scale * c.immediate_reward / (1 + c.num_visit))
            path.append(node)
        reward = node.immediate_reward
        for child in path:
            child.num_visit += 1
            child.total_reward += reward

    def _explain(self, graph, feat, target_class, kwargs, root_nodes):
        if graph.num_nodes() <= self.node_min:
            raise ValueError(f"{self._name}: the graph must have more than node_min={self.node_min} nodes, "
                             f"got {graph.num_nodes()}")
        search = _Search(graph, feat, _target(self._name, target_class), kwargs)
        root = self._node(search, root_nodes)
        training = self.model.training
        self.model.eval()
        try:
            for i in range(self.num_rollouts):
                if self.log:
                    print(f"Rollout {i}/{self.num_rollouts}, {len(search.nodes)} subgraphs have been explored.")
                self._rollout(search, root)
        finally:
            self.model.train(training)
        best = None
        for node in search.nodes.values():
            if node.size <= self.node_min and (best is None or node.immediate_reward > best.immediate_reward):
                best = node
        return best.nodes


class SubgraphX(_SubgraphXBase):
    r"""SubgraphX for graph classification on a homogeneous graph (see the module doc for the search).

    model: forward(graph, feat, **kwargs) -> logits [B, C] (B = 1 for one graph). num_hops: the model's number of
    message-passing layers (the Shapley region is the (num_hops - 1)-hop neighbourhood of the subgraph, whose
    other nodes alone are masked). coef: exploration weight of the upper confidence bound. high2low: cut the
    num_child highest degree nodes first (else the lowest). num_rollouts: MCTS descents. node_min: a subgraph of
    at most this many nodes is a leaf (and a candidate answer). shapley_steps: coalitions sampled per rating.
    log: print the progress of each rollout."""

    _name = "SubgraphX"

    def _size(self, nodes) -> int:
        return nodes.numel()

    def _key(self, nodes):
        return tuple(nodes.tolist())

    def _shapley(self, search: _Search, nodes) -> float:
        """The Monte Carlo Shapley value (float) of the subgraph on `nodes` ([n] int64, increasing)."""
        g, n = search.graph, search.graph.num_nodes()
        sub = nodes.tolist()
        region = sub
        for _ in range(self.num_hops - 1):  # built as DGL builds it: the set order feeds the permutations
            ins, _ = g.in_edges(region)
            _, outs = g.out_edges(region)
            region = list(set(region + torch.cat([ins, outs]).tolist()))
        space = list(set(region) - set(sub)) + [n]
        region_ids = torch.tensor(region, dtype=torch.int64)
        device = search.feat.device
        gains = []
        for _ in range(self.shapley_steps):
            chosen = _shuffled_split(space, n)
            without = torch.ones(n)  # float32 [N], as DGL's: 0 on the region less the coalition
            without[region_ids] = 0.0
            without[chosen] = 1.0
            with_g = without.clone()
            with_g[nodes] = 1.0
            with torch.no_grad():
                low = self._probs(search, search.feat * without.unsqueeze(1).to(device))
                high = self._probs(search, search.feat * with_g.unsqueeze(1).to(device))
            gains.append(high - low)
        return torch.cat(gains).mean().item()

    def _cuts(self, search: _Search, nodes) -> list:
        """For each of the num_child nodes picked by degree (in the subgraph on `nodes`, in torch.topk's order),
        the parent ids (increasing) of the largest weakly connected component left without it."""
        sub = node_subgraph(search.graph, nodes)  # node i is nodes[i]
        degree = sub.out_degrees() + sub.in_degrees()
        k = min(sub.num_nodes(), self.num_child)
        picked = torch.topk(degree, k, largest=self.high2low).indices.tolist()
        src, dst = (x.cpu().to(torch.int64) for x in sub.edges())
        return [nodes[_largest_component(sub.num_nodes(), src, dst, c)] for c in picked]

    def explain_graph(self, graph, feat, target_class, **kwargs):
        """The node ids ([n] int64, increasing, n <= node_min, on graph's device) of the connected subgraph that
        best explains why the model puts graph in target_class (an int, or a one-element integer tensor).

        graph: a homogeneous graph of more than node_min nodes. feat: [N, D] node features (a node is masked by
        zeroing its row). kwargs: passed on to every model call. Seed numpy (np.random.seed) for repeatable runs."""
        if not hasattr(graph, "is_homogeneous") or not graph.is_homogeneous:
            raise ValueError("SubgraphX: graph must be a homogeneous graph (one node type and one relation); "
                             "use HeteroSubgraphX for a heterograph")
        if not isinstance(feat, torch.Tensor) or feat.dim() < 1 or feat.shape[0] != graph.num_nodes():
            raise ValueError(f"SubgraphX: feat must be a tensor of {graph.num_nodes()} rows (one per node), got "
                             f"{tuple(feat.shape) if isinstance(feat, torch.Tensor) else type(feat).__name__}")
        root = torch.arange(graph.num_nodes(), dtype=torch.int64)
        return self._explain(graph, feat, target_class, kwargs, root).to(graph.device)


class HeteroSubgraphX(_SubgraphXBase):
    r"""SubgraphX for graph classification on a heterograph (see the module doc; arguments as SubgraphX's).

    model: forward(graph, feat, **kwargs) -> logits [B, C], feat {ntype: [N_t, D_t]}. Node degrees add over
    every relation; a node's removal keeps the largest weakly connected component over all relations together
    (when no edge is left, one remaining node picked at random, as DGL's); the Shapley region and coalitions are
    per node type."""

    _name = "HeteroSubgraphX"

    def _size(self, nodes) -> int:
        return sum(ids.numel() for ids in nodes.values())

    def _key(self, nodes):
        return tuple(tuple(ids.tolist()) for ids in nodes.values())

    def _shapley(self, search: _Search, nodes) -> float:
        """The Monte Carlo Shapley value (float) of the subgraph on nodes ({ntype: [n_t] int64})."""
        g = search.graph
        split = g.num_nodes()  # beyond every type's ids
        regions = {t: ids.tolist() for t, ids in nodes.items()}
        for _ in range(self.num_hops - 1):
            start = {t: list(ids) for t, ids in regions.items()}  # one hop from the region at the hop's start
            for rel in g.canonical_etypes:
                s, _, d = rel
                ins = g.in_edges(start[d], etype=rel)[0].tolist() if start[d] else []
                outs = g.out_edges(start[s], etype=rel)[1].tolist() if start[s] else []
                regions[s] = list(set(regions[s] + ins))
                regions[d] = list(set(regions[d] + outs))
        spaces = {t: list(set(regions[t]) - set(nodes[t].tolist())) + [split] for t in nodes}
        region_ids = {t: torch.tensor(r, dtype=torch.int64) for t, r in regions.items()}
        gains = []
        for _ in range(self.shapley_steps):
            chosen = {t: _shuffled_split(space, split) for t, space in spaces.items()}
            without, with_g = {}, {}
            for t in g.ntypes:
                m = torch.ones(g.num_nodes(t))  # float32 [N_t]: 0 on the region less the coalition
                m[region_ids[t]] = 0.0
                m[chosen[t]] = 1.0
                without[t] = m
                with_g[t] = m.clone()
                with_g[t][nodes[t]] = 1.0  # DGL sets this on `without` (see the module doc)
            feats = [{t: search.feat[t] * m[t].unsqueeze(1).to(search.feat[t].device) for t in g.ntypes}
                     for m in (without, with_g)]
            with torch.no_grad():
                low = self._probs(search, feats[0])
                high = self._probs(search, feats[1])
            gains.append(high - low)
        return torch.cat(gains).mean().item()

    def _cuts(self, search: _Search, nodes) -> list:
        """For each of the num_child nodes picked by degree over all relations (types in graph order, ids in
        order within a type, as DGL flattens them), the {ntype: parent ids} left without it (see the class doc)."""
        g = search.graph
        sub = node_subgraph(g, nodes)  # node i of type t is nodes[t][i]
        degree = {t: torch.zeros(sub.num_nodes(t)) for t in sub.ntypes}
        for rel in sub.canonical_etypes:
            degree[rel[0]] += sub.out_degrees(etype=rel).cpu()
            degree[rel[2]] += sub.in_degrees(etype=rel).cpu()
        flat = [(t, i) for t in sub.ntypes for i in range(sub.num_nodes(t))]
        k = min(sub.num_nodes(), self.num_child)
        picked = torch.topk(torch.cat([degree[t] for t in sub.ntypes]), k, largest=self.high2low).indices.tolist()
        homo = to_homogeneous(sub)  # nodes by type in sub.ntypes order, then by id: DGL's numbering
        src, dst = (x.cpu().to(torch.int64) for x in homo.edges())
        kind, local = homo.ndata[NTYPE].cpu().to(torch.int64), homo.ndata[NID].cpu().to(torch.int64)
        offset = dict(zip(sub.ntypes, [0] + torch.tensor([sub.num_nodes(t) for t in sub.ntypes]).cumsum(0).tolist()))
        empty = torch.zeros(0, dtype=torch.int64)
        cuts = []
        for t, i in (flat[j] for j in picked):
            gone = offset[t] + i
            if bool(((src != gone) & (dst != gone)).any()):
                comp = _largest_component(homo.num_nodes(), src, dst, gone)
                cuts.append({u: nodes[u][local[comp[kind[comp] == r]]] for r, u in enumerate(sub.ntypes)})
                continue
            # no edge left: one node of a random remaining type, at random (DGL's draws)
            left = {u: [j for j in range(sub.num_nodes(u)) if not (u == t and j == i)] for u in sub.ntypes}
            u = str(np.random.choice([u for u in sub.ntypes if left[u]]))
            j = int(np.random.choice(np.asarray(left[u], dtype=np.int64)))
            cuts.append({v: nodes[v][j:j + 1] if v == u else empty for v in sub.ntypes})
        return cuts

    def explain_graph(self, graph, feat, target_class, **kwargs):
        """{ntype: node ids ([n_t] int64, increasing, on graph's device; empty for a type left out)} for every node
        type of graph: the connected subgraph of at most node_min nodes in all that best explains why the model
        puts graph in target_class (an int, or a one-element integer tensor).

        graph: a heterograph of more than node_min nodes in all. feat: {ntype: [N_t, D_t]} for every node type (a
        node is masked by zeroing its row). kwargs: passed on to every model call. Seed numpy for repeatable runs."""
        if not hasattr(graph, "ntypes") or not hasattr(graph, "canonical_etypes"):
            raise TypeError(f"HeteroSubgraphX: graph must be a graph, got {type(graph).__name__}")
        if not isinstance(feat, Mapping):
            raise TypeError(f"HeteroSubgraphX: feat must be a dict {{ntype: [N_t, D_t] tensor}}, got "
                            f"{type(feat).__name__}")
        for t in graph.ntypes:
            x = feat.get(t)
            if not isinstance(x, torch.Tensor) or x.dim() < 1 or x.shape[0] != graph.num_nodes(t):
                raise ValueError(f"HeteroSubgraphX: feat[{t!r}] must be a tensor of {graph.num_nodes(t)} rows, got "
                                 f"{tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__}")
        root = {t: torch.arange(graph.num_nodes(t), dtype=torch.int64) for t in graph.ntypes}
        best = self._explain(graph, feat, target_class, kwargs, root)
        return {t: ids.to(graph.device) for t, ids in best.items()}

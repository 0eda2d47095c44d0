"""dgl.nn's DGNConv (Beaini et al., directional graph networks), AtomicConv (Gomes et al., atomic convolutions),
TWIRLSConv with TWIRLSUnfoldingAndAttention (Yang et al., GNNs inspired by iterative algorithms) and GroupRevRes
(Li et al., grouped reversible residual connections), as DGL 2.1's: the same constructor arguments, parameter
names and shapes (a DGL state_dict loads strictly), forward signatures and outputs. The message passing is
Topograph's ops over all edges at once: DGL's DGNConv and AtomicConv reduce through Python UDFs (DGNConv bucket
by bucket of in-degree). Checked against DGL 2.1 with the same weights (tests/test_conv_more.py), which also
shows where DGL 2.1 goes wrong and these do not."""
from __future__ import annotations

import copy
import math
import weakref

import torch
import torch.nn.functional as F

from .. import ops
from .._base import DGLError
from .pna import _AGGREGATORS, PNAConv, PNAConvTower, _aggregate

_DIRECTIONAL = tuple(f"dir{k}-{kind}" for k in (1, 2, 3) for kind in ("av", "dx"))


def _field(graph, eig_vec: torch.Tensor, k: int, like: torch.Tensor):
    """The vector field of eigenvector k along the edges: (F [E] = eig[src, k] - eig[dst, k], the destinations'
    ||F_{v,:}||_1 + 1e-30 [N]); the 1e-30 is DGL's, so that a node whose in-edges are all flat (self loops) divides
    0 by it and gets 0."""
    column = eig_vec[:, k].to(like.dtype)
    diff = ops.u_sub_v(graph, column, column)  # [E]
    return diff, ops.copy_e_sum(graph, diff.abs()) + 1e-30


def _directional(graph, msg: torch.Tensor, node_feat: torch.Tensor, diff: torch.Tensor, l1: torch.Tensor,
                 derivative: bool) -> torch.Tensor:
    """dir-av: sum_e |F_e| msg_e / ||F_v||; dir-dx: |sum_e F_e msg_e - (sum_e F_e) h_v| / ||F_v|| -> [N, d]. The
    norm divides per node after the sum (DGL divides every edge's weight by it first: the same up to rounding),
    so each is one or two sums over all edges."""
    if not derivative:
        return ops.copy_e_sum(graph, msg * diff.abs().unsqueeze(1)) / l1.unsqueeze(1)
    drift = ops.copy_e_sum(graph, msg * diff.unsqueeze(1)) - ops.copy_e_sum(graph, diff).unsqueeze(1) * node_feat
    return drift.abs() / l1.unsqueeze(1)


class DGNConvTower(PNAConvTower):
    """PNAConvTower (nn/pna.py) whose aggregators may also be DGN's directional ones: dir{k}-av and dir{k}-dx
    along the field of the k-th column of eig_vec [N, K >= k]. A node without in-edges aggregates to 0, as DGL's."""

    def forward(self, graph, node_feat: torch.Tensor, edge_feat=None, eig_vec=None) -> torch.Tensor:
        msg = self.messages(graph, node_feat, edge_feat)
        fields, out = {}, []
        for name in self.aggregators:
            if not name.startswith("dir"):
                out.append(_aggregate(graph, msg, name))
                continue
            k = int(name[3]) - 1
            if k not in fields:  # dir{k}-av and dir{k}-dx share the field
                fields[k] = _field(graph, eig_vec, k, msg)
            out.append(_directional(graph, msg, node_feat, *fields[k], derivative=name.endswith("dx")))
        return self.update(graph, node_feat, out)


class DGNConv(PNAConv):
    """DGNConv(in_size, out_size, aggregators, scalers, delta, dropout=0.0, num_towers=1, edge_feat_size=0,
    residual=True): PNAConv (nn/pna.py: towers, scalers, mixing, residual; the same parameters) whose
    aggregators may also be dir1-av ... dir3-dx. forward(graph, node_feat [N, in_size], edge_feat [E,
    edge_feat_size] = None, eig_vec [N, K] = None) -> [N, out_size]. eig_vec: the K smallest non-trivial
    Laplacian eigenvectors (topograph.LaplacianPE), needed with a directional aggregator, K >= its largest k.
    DGL reduces in-degree bucket by bucket through a Python reducer; here each directional aggregator is one or
    two copy_e sums over all edges, the others PNAConv's fused gspmm reductions. Without a directional
    aggregator it is PNAConv (DGL's still reads the eigenvectors in its message function and fails without
    them)."""
    _tower, _aggregators = DGNConvTower, _AGGREGATORS + _DIRECTIONAL

    def __init__(self, in_size: int, out_size: int, aggregators, scalers, delta: float, dropout: float = 0.0,
                 num_towers: int = 1, edge_feat_size: int = 0, residual: bool = True):
        super().__init__(in_size, out_size, aggregators, scalers, delta, dropout=dropout, num_towers=num_towers,
                         edge_feat_size=edge_feat_size, residual=residual)
        directions = [int(a[3]) for a in aggregators if a.startswith("dir")]
        self.use_eig_vec = bool(directions)
        self._eig_columns = max(directions, default=0)

    def forward(self, graph, node_feat: torch.Tensor, edge_feat=None, eig_vec=None) -> torch.Tensor:
        if self.use_eig_vec:
            n = graph.num_nodes()
            if eig_vec is None:
                raise DGLError("DGNConv: the directional aggregators need eig_vec [N, K], the Laplacian's "
                               "eigenvectors (topograph.LaplacianPE)")
            if eig_vec.dim() != 2 or eig_vec.shape[0] != n or eig_vec.shape[1] < self._eig_columns:
                raise DGLError(f"DGNConv: eig_vec must be [{n}, K >= {self._eig_columns}] (one row per node, a "
                               f"column per direction dir1..dir{self._eig_columns}), got {tuple(eig_vec.shape)}")
        return self.mix(node_feat, [tower(graph, x, edge_feat, eig_vec)
                                    for tower, x in zip(self.towers, self.split(node_feat))])


class RadialPooling(torch.nn.Module):
    """AtomicConv's radial filters: parameters interaction_cutoffs c, rbf_kernel_means r, rbf_kernel_scaling
    gamma, each [K, 1, 1] (DGL's shapes, so its state_dict loads). forward(distances [E] or [E, 1]) -> [E, K]:
    exp(-gamma_k (d - r_k)^2) * (0.5 (cos(pi d / c_k) + 1) where d <= c_k, else 0) (DGL returns [K, E, 1]; [E, K]
    is what the message passing takes)."""

    def __init__(self, interaction_cutoffs: torch.Tensor, rbf_kernel_means: torch.Tensor,
                 rbf_kernel_scaling: torch.Tensor):
        super().__init__()
        sizes = {name: t.numel() for name, t in (("interaction_cutoffs", interaction_cutoffs),
                                                 ("rbf_kernel_means", rbf_kernel_means),
                                                 ("rbf_kernel_scaling", rbf_kernel_scaling))}
        if len(set(sizes.values())) != 1:
            raise DGLError(f"AtomicConv: interaction_cutoffs, rbf_kernel_means and rbf_kernel_scaling must have one "
                           f"entry per radial filter each, got sizes {sizes}")
        self.interaction_cutoffs = torch.nn.Parameter(interaction_cutoffs.reshape(-1, 1, 1).clone())
        self.rbf_kernel_means = torch.nn.Parameter(rbf_kernel_means.reshape(-1, 1, 1).clone())
        self.rbf_kernel_scaling = torch.nn.Parameter(rbf_kernel_scaling.reshape(-1, 1, 1).clone())

    def forward(self, distances: torch.Tensor) -> torch.Tensor:
        d = distances.reshape(-1, 1)  # [E, 1] against the filters' [1, K]
        cutoff, mean, gamma = (p.view(1, -1) for p in (self.interaction_cutoffs, self.rbf_kernel_means,
                                                        self.rbf_kernel_scaling))
        rbf = torch.exp(-gamma * (d - mean) ** 2)
        smooth = 0.5 * (torch.cos(math.pi * d / cutoff) + 1)
        return rbf * torch.where(d <= cutoff, smooth, torch.zeros_like(smooth))


class AtomicConv(torch.nn.Module):
    """AtomicConv(interaction_cutoffs [K], rbf_kernel_means [K], rbf_kernel_scaling [K], features_to_use [T] =
    None): forward(graph, feat [N, 1] (atomic numbers; [N] too), distances [E, 1]) -> [N, T * K], where
    out[v, t * K + k] = sum_{u -> v} 1(feat_u == features_to_use_t) e_{uv}^k and e = RadialPooling(distances)
    (without features_to_use, T = feat's width and feat itself in place of the indicator). Laid out type-major
    as DGL's (its docstring says (V, K * T); the values are ordered [t][k]). The sum is one u_mul_e_sum of
    [N, T, 1] by [E, 1, K] over all edges (DGL sends each edge's outer product through a Python message
    function). features_to_use is a frozen Parameter, as DGL's (in the state_dict, never trained). Integer
    atomic numbers work too: the output then takes distances' dtype (DGL casts the filters to feat's dtype,
    truncating them to 0 or 1 for an integer feat)."""

    def __init__(self, interaction_cutoffs: torch.Tensor, rbf_kernel_means: torch.Tensor,
                 rbf_kernel_scaling: torch.Tensor, features_to_use=None):
        super().__init__()
        self.radial_pooling = RadialPooling(interaction_cutoffs, rbf_kernel_means, rbf_kernel_scaling)
        if features_to_use is None:
            self.num_channels, self.features_to_use = 1, None
        else:
            features_to_use = torch.as_tensor(features_to_use).reshape(-1)
            self.num_channels = features_to_use.numel()
            self.features_to_use = torch.nn.Parameter(features_to_use, requires_grad=False)

    def forward(self, graph, feat: torch.Tensor, distances: torch.Tensor) -> torch.Tensor:
        if distances.numel() != graph.num_edges() or (distances.dim() == 2 and distances.shape[1] != 1) \
                or distances.dim() > 2:
            raise DGLError(f"AtomicConv: distances must be one per edge [{graph.num_edges()}, 1], got "
                           f"{tuple(distances.shape)}")
        dtype = feat.dtype if feat.is_floating_point() else distances.dtype
        radial = self.radial_pooling(distances).to(dtype)  # [E, K]
        if feat.dim() == 1:
            feat = feat.unsqueeze(1)
        if self.features_to_use is not None:
            feat = feat == self.features_to_use  # [N, T]
        hv = feat.to(dtype)
        out = ops.u_mul_e_sum(graph, hv.unsqueeze(2), radial.unsqueeze(1))  # [N_dst, T, K]
        return out.reshape(out.shape[0], -1)


class _GroupReversible(torch.autograd.Function):
    """GroupRevRes's step: forward without a tape; backward recomputes the groups with one (DGL's
    InvertibleCheckpoint, but keyed to the input's fate: see GroupRevRes)."""

    @staticmethod
    def forward(ctx, module, graph, x, release, n_args, *rest):
        args, weights = rest[:n_args], rest[n_args:]
        ctx.module, ctx.graph, ctx.args, ctx.weights, ctx.rng = module, graph, args, weights, []
        ctx.released, ctx.output_released = release, False
        ctx.x = x.detach()  # aliases: they share storage, not the tape (no cycle through the outputs)
        y = module._run(graph, x, args, record=ctx.rng)
        ctx.y = y.detach()
        if release:  # x is the output of an earlier GroupRevRes: rebuilt from y in the backward
            x.untyped_storage().resize_(0)
        return y

    @staticmethod
    def backward(ctx, grad_y):
        module, graph, args, x = ctx.module, ctx.graph, ctx.args, ctx.x
        if ctx.released:
            with torch.no_grad():
                rebuilt = module._inverse(graph, ctx.y, args, ctx.rng)
                x.untyped_storage().resize_(rebuilt.numel() * rebuilt.element_size())
                x.copy_(rebuilt)
        if ctx.output_released:  # the next GroupRevRes released y and rebuilt it for this inversion only
            ctx.y.untyped_storage().resize_(0)
        with torch.enable_grad():
            xd = x.detach().requires_grad_(ctx.needs_input_grad[2])
            argsd = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) else a
                     for a in args]
            out = module._run(graph, xd, argsd, replay=ctx.rng)
        wanted = ([xd] if xd.requires_grad else []) + \
            [a for a in argsd if isinstance(a, torch.Tensor) and a.requires_grad] + list(ctx.weights)
        grads = list(torch.autograd.grad(out, wanted, grad_y, allow_unused=True)) if wanted else []
        grad_x = grads.pop(0) if xd.requires_grad else None
        grad_args = [grads.pop(0) if isinstance(a, torch.Tensor) and a.requires_grad else None for a in argsd]
        return (None, None, grad_x, None, None, *grad_args, *grads)


def _rng_state(device: torch.device):
    return torch.get_rng_state(), (torch.cuda.get_rng_state(device) if device.type == "cuda" else None)


class GroupRevRes(torch.nn.Module):
    """GroupRevRes(gnn_module, groups=2): x [N, D] cut into C = groups column blocks x_1..x_C (D must divide by
    C); y_0 = x_2 + ... + x_C, y_i = x_i + f_i(g, y_{i-1}, *args_i), out = [y_1 | ... | y_C] [N, D], f_1 the
    module given and f_2..f_C deep copies (gnn_modules, as DGL's). forward(g, x, *args): a tensor argument of
    2+ dims whose last dim divides by C is cut into C column blocks, one per group, as DGL's; other arguments
    (scalar edge weights [E], non-tensors, ...) go whole to every group (DGL cuts them too, and crashes).

    The point is memory: no activation of f_i is kept for the backward, which recomputes them; and where x is
    the output of another GroupRevRes (a stack of them), its storage is released in the forward and rebuilt by
    inverting this layer in the backward, so a deep stack keeps O(1) layers' features. Unlike DGL's, which
    releases every input (the caller's x too, and for good when no backward follows: under torch.no_grad the
    caller's tensor is gone) and the final output after the backward: here only a GroupRevRes's output fed
    to another GroupRevRes is released (do not read it or feed it elsewhere afterwards; clone it first, or set
    release_inputs = False on the consuming layer, e.g. to collect every layer's output), and without a gradient
    to compute it is a plain forward. The RNG state of each f_i call is replayed in the recomputation and the
    inversion, so dropout inside f_i gets the forward's masks (DGL draws new ones, so its gradients belong to
    another mask); BatchNorm's running statistics see the recomputation, as with torch.utils.checkpoint.
    torch.autograd.grad works (DGL raises)."""

    def __init__(self, gnn_module: torch.nn.Module, groups: int = 2):
        super().__init__()
        if not isinstance(groups, int) or groups < 1:
            raise DGLError(f"GroupRevRes: groups must be a positive int, got {groups!r}")
        if not isinstance(gnn_module, torch.nn.Module):
            raise DGLError(f"GroupRevRes: gnn_module must be a torch.nn.Module, got {type(gnn_module).__name__}")
        self.gnn_modules = torch.nn.ModuleList([gnn_module] + [copy.deepcopy(gnn_module) for _ in range(groups - 1)])
        self.groups, self.release_inputs = groups, True

    def _chunks(self, args):
        """Each group's arguments: [args of group 0, ..., args of group C-1]."""
        per_arg = [torch.chunk(a, self.groups, dim=-1)
                   if isinstance(a, torch.Tensor) and a.dim() >= 2 and a.shape[-1] % self.groups == 0
                   else [a] * self.groups for a in args]
        return [tuple(a[i] for a in per_arg) for i in range(self.groups)]

    def _call(self, i: int, g, h, args, record, replay):
        """f_i(g, h, *args), its RNG state recorded (forward) or replayed (recomputation, inversion)."""
        if record is not None:
            record.append(_rng_state(h.device))
        if replay is None:
            return self.gnn_modules[i](g, h, *args)
        devices = [h.device] if h.device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices):
            cpu, dev = replay[i]
            torch.set_rng_state(cpu)
            if dev is not None:
                torch.cuda.set_rng_state(dev, h.device)
            return self.gnn_modules[i](g, h, *args)

    def _run(self, g, x, args, record=None, replay=None) -> torch.Tensor:
        xs, group_args = torch.chunk(x, self.groups, dim=-1), self._chunks(args)
        h, ys = sum(xs[1:]), []
        for i in range(self.groups):
            h = xs[i] + self._call(i, g, h, group_args[i], record, replay)
            ys.append(h)
        return torch.cat(ys, dim=-1)

    def _inverse(self, g, y, args, replay) -> torch.Tensor:
        """x from y = _run(g, x, args): x_i = y_i - f_i(g, y_{i-1}), last group first; y_0 = x_2 + ... + x_C."""
        ys, group_args = torch.chunk(y, self.groups, dim=-1), self._chunks(args)
        xs = [None] * self.groups
        for i in range(self.groups - 1, -1, -1):
            h = ys[i - 1] if i else sum(xs[1:])
            xs[i] = ys[i] - self._call(i, g, h, group_args[i], None, replay)
        return torch.cat(xs, dim=-1)

    def forward(self, g, x: torch.Tensor, *args) -> torch.Tensor:
        if x.dim() < 1 or x.shape[-1] % self.groups:
            raise DGLError(f"GroupRevRes: x's last dim ({x.shape[-1] if x.dim() else None}) must divide by groups "
                           f"({self.groups})")
        if x.numel() and x.untyped_storage().size() == 0:
            raise DGLError("GroupRevRes: x was released by the GroupRevRes it was fed to before (its storage is "
                           "rebuilt in the backward only); pass a clone to keep it for more than one")
        weights = [p for p in self.parameters() if p.requires_grad]
        tensors = [x] + [a for a in args if isinstance(a, torch.Tensor)] + weights
        if not (torch.is_grad_enabled() and any(t.requires_grad for t in tensors)):
            return self._run(g, x, args)
        producer = x.grad_fn
        release = self.release_inputs and isinstance(producer, _GroupReversible._backward_cls) and \
            x.is_contiguous() and x.storage_offset() == 0 and \
            x.untyped_storage().size() == x.numel() * x.element_size()
        y = _GroupReversible.apply(self, g, x, release, len(args), *args, *weights)
        if release:
            producer.output_released = True
        return y


def _one_graph(graph, what: str) -> None:
    """The propagation repeats over the same nodes: a graph of one node type and one relation, not a block."""
    if graph.is_block or not graph.is_homogeneous:
        raise DGLError(f"{what}: propagates over one set of nodes, so it takes a graph of one node type and one "
                       f"relation (not a block), got node types {graph.ntypes} and relations {graph.canonical_etypes}")


def _looped(graph):
    """graph with its self loops replaced by one per node (TWIRLSConv's propagation graph, as DGL's)."""
    return graph.remove_self_loop().add_self_loop()


class TWIRLSUnfoldingAndAttention(torch.nn.Module):
    """TWIRLSUnfoldingAndAttention(d, alp, lam, prop_step, attn_aft=-1, tau=0.2, T=-1, p=1, use_eta=False,
    init_att=False, attn_dropout=0, precond=True): forward(g, X [N, d]) -> Y [N, d] after prop_step unfolded
    iteratively-reweighted-least-squares steps, Y^0 = X. With precond (the paper's eq. 28, D~ = lam D + (1 - lam) I)
    Y <- (1 - alp) Y + alp lam D~^-1/2 A D~^-1/2 Y + alp D~^-1 X, else (eq. 30) Y <- (1 - alp lam - alp) Y +
    alp lam D^-1/2 A D^-1/2 Y + alp X; alp <= 0 takes 1 / (lam + 1). A starts as g's adjacency (multi-edges
    counted; g should have self loops, as TWIRLSConv gives it) and D as the in-degrees; an attention step
    (before the first step with init_att, after step attn_aft when attn_aft >= 0) reweights every edge u -> v by
    1 / clamp(||eta (y_u - y_v)||^(2 - p), tau, T -> inf) + 1e-9 and sets D to the weights' in-sums (then
    attn_dropout on the weights). etas [d] (use_eta) is the attention's per-dimension weight eta. Each step is
    one u_mul_e_sum over all edges (copy_u_sum while every weight is 1), each attention a u_dot_v, a u_add_v
    and a copy_e_sum (the degrees).

    DGL stores the weights and degrees on the caller's graph (g.edata['w'], g.ndata['deg'], and leaves
    ndata['h']); here the graph is not touched. A node without in-edges would divide by a zero degree (D~ = 0
    needs lam >= 1 with precond): DGL gives nan there, this a DGLError."""

    def __init__(self, d: int, alp: float, lam: float, prop_step: int, attn_aft: int = -1, tau: float = 0.2,
                 T: float = -1, p: float = 1, use_eta: bool = False, init_att: bool = False, attn_dropout: float = 0,
                 precond: bool = True):
        super().__init__()
        if prop_step < 0:
            raise DGLError(f"TWIRLSUnfoldingAndAttention: prop_step must be >= 0, got {prop_step}")
        if not 0 <= attn_dropout < 1:
            raise DGLError(f"TWIRLSUnfoldingAndAttention: attn_dropout must be in [0, 1), got {attn_dropout}")
        self.d, self.lam, self.tau, self.T, self.p = d, lam, tau, T, p
        self.alp = alp if alp > 0 else 1 / (lam + 1)
        self.prop_step, self.attn_aft, self.use_eta, self.init_att = prop_step, attn_aft, use_eta, init_att
        self.attn_dropout, self.precond = attn_dropout, precond
        self.etas = torch.nn.Parameter(torch.ones(d)) if use_eta else None

    def _attention(self, g, Y: torch.Tensor):
        """(edge weights w [E, 1], in-degrees D = the in-sums of w [N, 1]) from the squared distances between
        the ends' rows of Y, as DGL: |y_u|^2 + |y_v|^2 - 2 y_u.y_v (no [E, d] difference made), clamped >= 0."""
        if self.etas is not None:
            if Y.shape[-1] != self.etas.shape[0]:
                raise DGLError(f"TWIRLSUnfoldingAndAttention: the features' width {Y.shape[-1]} is not d = "
                               f"{self.etas.shape[0]}, the size of etas (use_eta)")
            Y = Y * self.etas.view(-1)
        square = (Y ** 2).sum(-1)  # [N]
        dist = ops.u_add_v(g, square, square) - 2 * ops.u_dot_v(g, Y, Y).view(-1)  # [E]
        w = torch.pow(torch.relu(dist) + 1e-7, 1 - 0.5 * self.p)
        w = w.masked_fill(w < self.tau, self.tau)
        if self.T > 0:
            w = w.masked_fill(w > self.T, float("inf"))
        w = 1 / w + 1e-9
        deg = ops.copy_e_sum(g, w)
        if self.attn_dropout > 0:  # after the degrees: they keep their expectation
            w = F.dropout(w, self.attn_dropout, training=self.training)
        return w.unsqueeze(1), deg.unsqueeze(1)

    def _step(self, g, Y: torch.Tensor, X: torch.Tensor, w, deg: torch.Tensor) -> torch.Tensor:
        spread = (lambda h: ops.copy_u_sum(g, h)) if w is None else (lambda h: ops.u_mul_e_sum(g, h, w))
        alp, lam = self.alp, self.lam
        if self.precond:
            shifted = lam * deg + (1 - lam)
            norm = torch.pow(shifted, -0.5)
            return (1 - alp) * Y + alp * lam * (spread(Y * norm) * norm) + alp * (X * torch.pow(shifted, -1))
        norm = torch.pow(deg, -0.5)
        return (1 - alp * lam - alp) * Y + alp * lam * (spread(Y * norm) * norm) + alp * X

    def forward(self, g, X: torch.Tensor) -> torch.Tensor:
        _one_graph(g, "TWIRLSUnfoldingAndAttention")
        if X.dim() != 2 or X.shape[0] != g.num_nodes():
            raise DGLError(f"TWIRLSUnfoldingAndAttention: X must be [{g.num_nodes()}, d], got {tuple(X.shape)}")
        deg = g.in_degrees().to(X).unsqueeze(1)  # [N, 1]
        empty = deg == 0
        if bool(empty.any()) and (not self.precond or self.lam >= 1):
            raise DGLError("TWIRLSUnfoldingAndAttention: a node without in-edges has degree 0, which the "
                           "normalisation divides by; add self loops (topograph.add_self_loop)")
        w, Y = None, X  # None: every weight 1
        if self.init_att:
            w, deg = self._attention(g, Y)
        for k in range(self.prop_step):
            Y = self._step(g, Y, X, w, deg)
            if k == self.attn_aft - 1:
                w, deg = self._attention(g, Y)
        return Y


class TWIRLSMLP(torch.nn.Module):
    """TWIRLSConv's MLP (DGL's twirlsconv.MLP, its parameter names): num_layers Linear layers (input_d ->
    hidden_d ... -> output_d; none: the identity), between them (and first, with init_activate) norm ('batch',
    'layer' or 'none', over hidden_d), ReLU and dropout. Xavier-normal weights, zero biases."""

    def __init__(self, input_d: int, hidden_d: int, output_d: int, num_layers: int, dropout: float, norm: str,
                 init_activate: bool):
        super().__init__()
        self.init_activate, self.norm, self.dropout = init_activate, norm, dropout
        sizes = [input_d] + [hidden_d] * (num_layers - 1) + [output_d] if num_layers > 0 else []
        self.layers = torch.nn.ModuleList(torch.nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))
        self.norm_cnt = num_layers - 1 + int(init_activate)
        if norm == "batch":
            self.norms = torch.nn.ModuleList(torch.nn.BatchNorm1d(hidden_d) for _ in range(self.norm_cnt))
        elif norm == "layer":
            self.norms = torch.nn.ModuleList(torch.nn.LayerNorm(hidden_d) for _ in range(self.norm_cnt))
        self.reset_params()

    def reset_params(self) -> None:
        for layer in self.layers:
            torch.nn.init.xavier_normal_(layer.weight)
            torch.nn.init.zeros_(layer.bias)

    def _activate(self, x: torch.Tensor, i: int) -> torch.Tensor:
        if self.norm != "none":
            x = self.norms[i](x)
        return F.dropout(F.relu(x), self.dropout, training=self.training)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = 0
        if self.init_activate:
            x, n = self._activate(x, 0), 1
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x, n = self._activate(x, n), n + 1
        return x


class TWIRLSConv(torch.nn.Module):
    """TWIRLSConv(input_d, output_d, hidden_d, prop_step, num_mlp_before=1, num_mlp_after=1, norm='none',
    precond=True, alp=0, lam=1, attention=False, tau=0.2, T=-1, p=1, use_eta=False, attn_bef=False,
    dropout=0.0, attn_dropout=0.0, inp_dropout=0.0): forward(graph, feat [N, input_d]) -> [N, output_d]:
    mlp_bef, TWIRLSUnfoldingAndAttention (unfolding; attention after prop_step // 2 steps with attention, before
    the first with attn_bef) over the graph with its self loops replaced by one per node, mlp_aft; the MLPs
    (TWIRLSMLP) have num_mlp_before / num_mlp_after layers (0: none, so the unfolding sees input_d or gives
    output_d columns).

    As DGL's, the unfolding's result is cached when nothing learnable precedes it (no attention, no mlp_bef,
    no inp_dropout) and reused while it stays valid; DGL reuses it for any later graph and features (a stale
    result). Here it is reused only for the same graph object and feature tensor (unchanged in place) when no
    gradient flows through it (feat or etas requiring one; DGL's cached tape fails a second backward).
    etas has the width the unfolding propagates (input_d without mlp_bef, output_d without mlp_aft, hidden_d
    otherwise: DGL always gives hidden_d and fails on the others)."""

    def __init__(self, input_d: int, output_d: int, hidden_d: int, prop_step: int, num_mlp_before: int = 1,
                 num_mlp_after: int = 1, norm: str = "none", precond: bool = True, alp: float = 0, lam: float = 1,
                 attention: bool = False, tau: float = 0.2, T: float = -1, p: float = 1, use_eta: bool = False,
                 attn_bef: bool = False, dropout: float = 0.0, attn_dropout: float = 0.0, inp_dropout: float = 0.0):
        super().__init__()
        if norm not in ("batch", "layer", "none"):
            raise DGLError(f"TWIRLSConv: norm must be 'batch', 'layer' or 'none', got {norm!r}")
        for name, layers in (("num_mlp_before", num_mlp_before), ("num_mlp_after", num_mlp_after)):
            if layers < 0:
                raise DGLError(f"TWIRLSConv: {name} must be >= 0, got {layers}")
        self.input_d, self.output_d, self.hidden_d, self.prop_step = input_d, output_d, hidden_d, prop_step
        self.num_mlp_before, self.num_mlp_after, self.norm, self.precond = num_mlp_before, num_mlp_after, norm, precond
        self.attention, self.alp, self.lam, self.tau, self.T, self.p = attention, alp, lam, tau, T, p
        self.use_eta, self.init_att, self.dropout = use_eta, attn_bef, dropout
        self.attn_dropout, self.inp_dropout = attn_dropout, inp_dropout
        self.attn_aft = prop_step // 2 if attention else -1
        self.cacheable = not attention and num_mlp_before == 0 and inp_dropout <= 0
        self.cached_unfolding, self._cache_key = None, None
        self.size_bef_unf = output_d if num_mlp_after == 0 else hidden_d  # mlp_bef's output
        self.size_aft_unf = input_d if num_mlp_before == 0 else hidden_d  # mlp_aft's input
        self.mlp_bef = TWIRLSMLP(input_d, hidden_d, self.size_bef_unf, num_mlp_before, dropout, norm,
                                 init_activate=False)
        width = self.size_bef_unf if num_mlp_before > 0 else input_d  # what the unfolding propagates
        self.unfolding = TWIRLSUnfoldingAndAttention(width, alp, lam, prop_step, self.attn_aft, tau, T, p, use_eta,
                                                     attn_bef, attn_dropout, precond)
        self.mlp_aft = TWIRLSMLP(self.size_aft_unf, hidden_d, output_d, num_mlp_after, dropout, norm,
                                 init_activate=num_mlp_before > 0 and num_mlp_after > 0)

    def _unfold_cached(self, graph, x: torch.Tensor) -> torch.Tensor:
        tracked = torch.is_grad_enabled() and (x.requires_grad or any(p.requires_grad
                                                                       for p in self.unfolding.parameters()))
        key = self._cache_key
        if not tracked and key is not None and key[0]() is graph and key[1]() is x and key[2] == x._version:
            return self.cached_unfolding
        y = self.unfolding(_looped(graph), x)
        if tracked:
            self.cached_unfolding, self._cache_key = None, None
        else:
            self.cached_unfolding, self._cache_key = y, (weakref.ref(graph), weakref.ref(x), x._version)
        return y

    def forward(self, graph, feat: torch.Tensor) -> torch.Tensor:
        _one_graph(graph, "TWIRLSConv")
        if feat.dim() != 2 or feat.shape[0] != graph.num_nodes() or feat.shape[1] != self.input_d:
            raise DGLError(f"TWIRLSConv: feat must be [{graph.num_nodes()}, input_d = {self.input_d}], got "
                           f"{tuple(feat.shape)}")
        if self.cacheable:
            x = self._unfold_cached(graph, feat)
        else:
            x = F.dropout(feat, self.inp_dropout, training=self.training) if self.inp_dropout > 0 else feat
            x = self.unfolding(_looped(graph), self.mlp_bef(x))
        return self.mlp_aft(x)

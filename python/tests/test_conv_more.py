"""DGNConv, AtomicConv, TWIRLSConv (TWIRLSUnfoldingAndAttention) and GroupRevRes (nn/conv_more.py): DGL's
parameter names, outputs against per-node / dense references written here (runs without DGL) on a graph with a
multi-edge, a self loop, a node without in-edges and an isolated node, and, where dgl imports
(PYTHONPATH=bench/peers/.venv/lib/python3.11/site-packages), outputs and gradients (inputs' and parameters') equal
to dgl.nn's with DGL's own weights loaded, plus what DGL 2.1 gets wrong where these differ on purpose."""
import math

import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch

from test_conv_extra import DST, SRC, TOL, _compare, need_dgl

N = 7  # SRC / DST's nodes: 0 -> 1 twice, a loop on 2, node 5 without in-edges, node 6 without any edge
S, D = torch.tensor(SRC), torch.tensor(DST)
PARTS = [(SRC, DST, N), ([0, 1, 2, 2, 1], [1, 2, 0, 1, 1], 3)]  # a batch of two graphs


def graph(lib=topograph):
    return lib.graph((S, D), num_nodes=N)


def batched(lib=topograph):
    return lib.batch([lib.graph((torch.tensor(s), torch.tensor(d)), num_nodes=n) for s, d, n in PARTS])


def adjacency(src, dst, n):
    """A[v, u]: the number of edges u -> v."""
    return torch.zeros(n, n).index_put_((dst, src), torch.tensor(1.0), accumulate=True)


def looped(src, dst, n):
    """TWIRLSConv's graph: the self loops dropped, one per node added."""
    keep = src != dst
    return torch.cat([src[keep], torch.arange(n)]), torch.cat([dst[keep], torch.arange(n)])


def test_names_and_exports():
    nn = topograph.nn
    from topograph.nn.pytorch import conv

    for name in ("DGNConv", "AtomicConv", "TWIRLSConv", "TWIRLSUnfoldingAndAttention", "GroupRevRes"):
        assert getattr(conv, name) is getattr(nn, name) is getattr(topograph.nn.pytorch, name)
    assert sorted(nn.DGNConv(4, 4, ["dir1-av", "sum"], ["identity"], 1.0).state_dict()) == sorted(
        nn.PNAConv(4, 4, ["mean", "sum"], ["identity"], 1.0).state_dict())
    assert sorted(nn.AtomicConv(torch.ones(3), torch.ones(3), torch.ones(3), torch.tensor([1.0, 6.0])).state_dict()) \
        == ["features_to_use", "radial_pooling.interaction_cutoffs", "radial_pooling.rbf_kernel_means",
            "radial_pooling.rbf_kernel_scaling"]
    assert sorted(nn.TWIRLSConv(4, 3, 5, 2, num_mlp_before=2, norm="batch", use_eta=True,
                                attention=True).state_dict()) == [
        "mlp_aft.layers.0.bias", "mlp_aft.layers.0.weight", "mlp_aft.norms.0.bias",
        "mlp_aft.norms.0.num_batches_tracked",
        "mlp_aft.norms.0.running_mean", "mlp_aft.norms.0.running_var", "mlp_aft.norms.0.weight",
        "mlp_bef.layers.0.bias", "mlp_bef.layers.0.weight", "mlp_bef.layers.1.bias", "mlp_bef.layers.1.weight",
        "mlp_bef.norms.0.bias", "mlp_bef.norms.0.num_batches_tracked", "mlp_bef.norms.0.running_mean",
        "mlp_bef.norms.0.running_var", "mlp_bef.norms.0.weight", "unfolding.etas"]
    assert sorted(nn.GroupRevRes(torch.nn.Linear(2, 2), 3).state_dict()) == [
        f"gnn_modules.{i}.{p}" for i in range(3) for p in ("bias", "weight")]


def test_bad_arguments_name_themselves():
    nn, g = topograph.nn, graph()
    with pytest.raises(ValueError, match="unknown aggregators"):
        nn.DGNConv(4, 4, ["dir4-av"], ["identity"], 1.0)
    conv = nn.DGNConv(4, 4, ["dir2-dx"], ["identity"], 1.0)
    with pytest.raises(topograph.DGLError, match="eig_vec"):
        conv(g, torch.randn(N, 4))
    with pytest.raises(topograph.DGLError, match=r"eig_vec must be \[7, K >= 2\]"):
        conv(g, torch.randn(N, 4), eig_vec=torch.randn(N, 1))
    with pytest.raises(topograph.DGLError, match="rbf_kernel_means"):
        nn.AtomicConv(torch.ones(3), torch.ones(2), torch.ones(3))
    with pytest.raises(topograph.DGLError, match="distances"):
        nn.AtomicConv(torch.ones(3), torch.ones(3), torch.ones(3))(g, torch.ones(N, 1), torch.ones(3, 1))
    with pytest.raises(topograph.DGLError, match="norm"):
        nn.TWIRLSConv(4, 3, 5, 2, norm="batchnorm")
    with pytest.raises(topograph.DGLError, match="num_mlp_after"):
        nn.TWIRLSConv(4, 3, 5, 2, num_mlp_after=-1)
    with pytest.raises(topograph.DGLError, match="input_d"):
        nn.TWIRLSConv(4, 3, 5, 2)(g, torch.randn(N, 5))
    with pytest.raises(topograph.DGLError, match="block"):
        nn.TWIRLSConv(4, 3, 5, 2)(topograph.to_block(g), torch.randn(N, 4))
    with pytest.raises(topograph.DGLError, match="self loops"):  # DGL: nan rows (see test_twirls_dgl_bugs)
        nn.TWIRLSUnfoldingAndAttention(4, 0, 1, 2)(g, torch.randn(N, 4))
    with pytest.raises(topograph.DGLError, match="groups"):
        nn.GroupRevRes(torch.nn.Linear(2, 2), 0)
    with pytest.raises(topograph.DGLError, match="divide by groups"):
        nn.GroupRevRes(nn.GraphConv(2, 2), 2)(g, torch.randn(N, 5))


# --- DGNConv


def dgn_reference(conv, x, eig, src, dst, n, aggregators, delta):
    """One tower, scalers identity and amplification, node by node (BatchNorm in eval mode)."""
    tower = conv.towers[0]
    msg = tower.M(torch.cat([x[src], x[dst]], dim=1))
    rows = []
    for v in range(n):
        es = (dst == v).nonzero().flatten()
        if len(es) == 0:
            rows.append(torch.cat([x[v], torch.zeros(2 * len(aggregators) * x.shape[1])]))
            continue
        m, aggs = msg[es], []
        for name in aggregators:
            if name == "mean":
                aggs.append(m.mean(0))
            elif name == "max":
                aggs.append(m.max(0).values)
            else:
                k = int(name[3]) - 1
                field = eig[src[es], k] - eig[dst[es], k]
                norm = field.abs().sum() + 1e-30
                if name.endswith("av"):
                    aggs.append((field.abs()[:, None] * m).sum(0) / norm)
                else:
                    aggs.append(((field[:, None] * m).sum(0) / norm - field.sum() / norm * x[v]).abs())
        h = torch.cat(aggs)
        rows.append(torch.cat([x[v], h, h * math.log(len(es) + 1) / delta]))
    h = tower.batchnorm(tower.U(torch.stack(rows)) * (1.0 / n) ** 0.5)
    return conv.mixing_layer(h) + x


def test_dgn_conv_by_per_node_reference():
    torch.manual_seed(0)
    aggregators = ["dir1-av", "dir1-dx", "dir2-av", "dir3-dx", "mean", "max"]
    conv = topograph.nn.DGNConv(4, 4, aggregators, ["identity", "amplification"], 1.4).eval()
    with torch.no_grad():
        for bn in (conv.towers[0].batchnorm,):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2)
    x, eig = torch.randn(N, 4), torch.randn(N, 3)
    ref = dgn_reference(conv, x, eig, S, D, N, aggregators, 1.4)
    torch.testing.assert_close(conv(graph(), x, eig_vec=eig), ref, **TOL)


def test_dgn_conv_matches_dgl():
    """Every directional aggregator with PNA's, three scalers, towers, edge features, a batch of two graphs (the
    size norm), in eval mode (BatchNorm's running statistics) and in training mode (the batch's)."""
    dgl = need_dgl()
    import dgl.nn.pytorch as dnn

    torch.manual_seed(1)
    gt, gd = batched(topograph), batched(dgl)
    n, e = gt.num_nodes(), gt.num_edges()
    scalers = ["identity", "amplification", "attenuation"]
    aggregators = ["dir1-av", "dir1-dx", "dir2-av", "dir2-dx", "dir3-av", "dir3-dx", "mean", "sum", "max", "min"]
    for towers, edge_size, train in ((1, 0, False), (2, 3, False), (2, 0, True)):
        made = lambda lib: lib.DGNConv(8, 8, aggregators, scalers, 1.3, num_towers=towers,  # noqa: E731
                                       edge_feat_size=edge_size).train(train)
        inputs = [torch.randn(n, 8), torch.randn(n, 3)] + ([torch.randn(e, edge_size)] if edge_size else [])
        _compare(made(dnn), made(topograph.nn), lambda m, x, eig, *ef: m(gd, x, *ef, eig_vec=eig),
                 lambda m, x, eig, *ef: m(gt, x, *ef, eig_vec=eig), inputs)
    # without a directional aggregator it is PNAConv; DGL's still reads the eigenvectors in its message function
    # and fails (KeyError 'eig') without them, with them it ignores them
    md, mt = dnn.DGNConv(6, 4, ["mean", "sum"], scalers, 1.0).eval(), topograph.nn.DGNConv(6, 4, ["mean", "sum"],
                                                                                          scalers, 1.0).eval()
    x = torch.randn(n, 6)
    with pytest.raises(KeyError, match="eig"):
        md(gd, x)
    pna = dnn.PNAConv(6, 4, ["mean", "sum"], scalers, 1.0).eval()
    pna.load_state_dict(md.state_dict())
    _compare(pna, mt, lambda m, h: m(gd, h), lambda m, h: m(gt, h), [x])


# --- AtomicConv


def atomic_reference(conv, z, dist, src, dst, n):
    c, r, gamma = (p.flatten() for p in (conv.radial_pooling.interaction_cutoffs,
                                         conv.radial_pooling.rbf_kernel_means, conv.radial_pooling.rbf_kernel_scaling))
    types = conv.features_to_use
    out = torch.zeros(n, len(types), len(c))
    for i, (u, v) in enumerate(zip(src.tolist(), dst.tolist())):
        d = dist[i]
        filt = torch.exp(-gamma * (d - r) ** 2) * torch.where(d <= c, 0.5 * (torch.cos(math.pi * d / c) + 1), 0.0)
        out[v] += (z[u] == types).float()[:, None] * filt[None, :]
    return out.reshape(n, -1)


def atomic_args():
    return torch.tensor([1.5, 2.0, 3.0]), torch.tensor([0.5, 1.0, 2.0]), torch.tensor([1.0, 4.0, 0.5])


def test_atomic_conv_by_per_edge_reference():
    torch.manual_seed(2)
    conv = topograph.nn.AtomicConv(*atomic_args(), features_to_use=torch.tensor([1.0, 6.0, 8.0, 7.0]))
    z = torch.tensor([1.0, 6.0, 8.0, 1.0, 6.0, 9.0, 8.0])[:, None]
    dist = torch.rand(len(SRC), 1) * 3.5  # some beyond the cutoffs
    out = conv(graph(), z, dist)
    torch.testing.assert_close(out, atomic_reference(conv, z.flatten(), dist.flatten(), S, D, N), **TOL)
    # integer atomic numbers (DGL casts the filters to them: see test_atomic_conv_matches_dgl)
    torch.testing.assert_close(conv(graph(), z.long(), dist), out)
    plain = topograph.nn.AtomicConv(*atomic_args())  # no types: feat itself weighs the filters
    x = torch.randn(N, 2)
    ref = torch.zeros(N, 2, 3)
    filt = atomic_reference(topograph.nn.AtomicConv(*atomic_args(), features_to_use=torch.tensor([0.0])),
                            torch.zeros(len(SRC)), dist.flatten(), torch.arange(len(SRC)), torch.arange(len(SRC)),
                            len(SRC))  # [E, K]: each edge its own destination
    for i, (u, v) in enumerate(zip(SRC, DST)):
        ref[v] += x[u][:, None] * filt[i][None, :]
    torch.testing.assert_close(plain(graph(), x, dist), ref.reshape(N, -1), **TOL)


def test_atomic_conv_matches_dgl():
    dgl = need_dgl()
    import dgl.nn.pytorch as dnn

    torch.manual_seed(3)
    types = torch.tensor([1.0, 6.0, 8.0])
    for gt, gd in ((graph(), graph(dgl)), (batched(), batched(dgl))):
        n, e = gt.num_nodes(), gt.num_edges()
        z = types[torch.randint(0, 3, (n, 1))]
        dist = torch.rand(e, 1) * 3.5
        _compare(dnn.AtomicConv(*atomic_args(), features_to_use=types.clone()),
                 topograph.nn.AtomicConv(*atomic_args(), features_to_use=types.clone()),
                 lambda m, d: m(gd, z, d), lambda m, d: m(gt, z, d), [dist])
        _compare(dnn.AtomicConv(*atomic_args()), topograph.nn.AtomicConv(*atomic_args()),
                 lambda m, x, d: m(gd, x, d), lambda m, x, d: m(gt, x, d), [torch.randn(n, 1), dist])
    # DGL casts the radial filters to feat's dtype: integer atomic numbers truncate them (to 0 here, all < 1)
    z, dist = torch.tensor([[1], [6], [8], [1], [6], [8], [1]]), torch.full((len(SRC), 1), 1.2)
    md = dnn.AtomicConv(*atomic_args(), features_to_use=types.clone())
    assert not md(graph(dgl), z, dist).is_floating_point()
    mt = topograph.nn.AtomicConv(*atomic_args(), features_to_use=types.clone())
    torch.testing.assert_close(mt(graph(), z, dist), md(graph(dgl), z.float(), dist), **TOL)


# --- TWIRLS


def unfold_reference(A, X, alp, lam, steps, attn_aft=-1, tau=0.2, T=-1, p=1, etas=None, init_att=False,
                     precond=True):
    """Dense: W the weighted adjacency W[v, u], deg its row sums."""
    alp = alp if alp > 0 else 1 / (lam + 1)

    def attention(Y):
        Z = Y * etas if etas is not None else Y
        w = (((Z[None, :, :] - Z[:, None, :]) ** 2).sum(-1) + 1e-7) ** (1 - 0.5 * p)
        w = torch.where(w < tau, torch.tensor(tau), w)
        if T > 0:
            w = torch.where(w > T, torch.tensor(float("inf")), w)
        W = A * (1 / w + 1e-9)
        return W, W.sum(1, keepdim=True)

    W, deg, Y = A, A.sum(1, keepdim=True), X
    if init_att:
        W, deg = attention(Y)
    for k in range(steps):
        if precond:
            dt = lam * deg + 1 - lam
            Y = (1 - alp) * Y + alp * lam * dt ** -0.5 * (W @ (dt ** -0.5 * Y)) + alp * X / dt
        else:
            Y = (1 - alp * lam - alp) * Y + alp * lam * deg ** -0.5 * (W @ (deg ** -0.5 * Y)) + alp * X
        if k == attn_aft - 1:
            W, deg = attention(Y)
    return Y


TWIRLS = {  # name: TWIRLSConv keyword arguments (input 5, output 3, hidden 4)
    "plain": dict(prop_step=3),
    "attention": dict(prop_step=4, attention=True, tau=0.3, T=6.0, p=0.5),
    "attention-eta-before": dict(prop_step=3, attention=True, use_eta=True, attn_bef=True, lam=0.7, alp=0.4),
    "no-precond": dict(prop_step=3, precond=False, lam=0.6, attention=True),
    "deep-batchnorm": dict(prop_step=2, num_mlp_before=2, num_mlp_after=2, norm="batch"),
    "layernorm-no-after": dict(prop_step=2, num_mlp_after=0, norm="layer", num_mlp_before=2, use_eta=True,
                               attention=True),
    "no-before": dict(prop_step=2, num_mlp_before=0),
    "no-before-attention-eta": dict(prop_step=2, num_mlp_before=0, attention=True, use_eta=True),
}


@pytest.mark.parametrize("name", list(TWIRLS))
def test_twirls_conv_by_dense_reference(name):
    torch.manual_seed(4)
    kw = dict(TWIRLS[name])
    conv = topograph.nn.TWIRLSConv(5, 3, 4, **kw).eval()
    if conv.unfolding.etas is not None:
        with torch.no_grad():
            conv.unfolding.etas.uniform_(0.5, 1.5)
    x = torch.randn(N, 5)
    A = adjacency(*looped(S, D, N), N)
    h = conv.mlp_bef(x)
    attn_aft = kw["prop_step"] // 2 if kw.get("attention") else -1
    h = unfold_reference(A, h, kw.get("alp", 0), kw.get("lam", 1), kw["prop_step"], attn_aft, kw.get("tau", 0.2),
                         kw.get("T", -1), kw.get("p", 1), conv.unfolding.etas, kw.get("attn_bef", False),
                         kw.get("precond", True))
    torch.testing.assert_close(conv(graph(), x), conv.mlp_aft(h), **TOL)


def test_twirls_unfolding_by_dense_reference():
    torch.manual_seed(5)
    src, dst = torch.cat([S, torch.arange(N)]), torch.cat([D, torch.arange(N)])  # two loops on node 2
    g, A, x = topograph.graph((src, dst), num_nodes=N), adjacency(src, dst, N), torch.randn(N, 3)
    for kw in (dict(), dict(attn_aft=1, init_att=True, use_eta=True), dict(precond=False, attn_aft=2, p=0.4)):
        unf = topograph.nn.TWIRLSUnfoldingAndAttention(3, 0.3, 0.8, 3, **kw)
        torch.testing.assert_close(unf(g, x), unfold_reference(A, x, 0.3, 0.8, 3, kw.get("attn_aft", -1),
                                                               p=kw.get("p", 1), etas=unf.etas,
                                                               init_att=kw.get("init_att", False),
                                                               precond=kw.get("precond", True)), **TOL)
    # no self loops: fine while lam < 1 (lam D + (1 - lam) I stays positive), as DGL
    unf = topograph.nn.TWIRLSUnfoldingAndAttention(3, 0, 0.5, 2)
    A = adjacency(S, D, N)
    torch.testing.assert_close(unf(graph(), x), unfold_reference(A, x, 0, 0.5, 2), **TOL)


@pytest.mark.parametrize("name", list(TWIRLS))
def test_twirls_conv_matches_dgl(name):
    dgl = need_dgl()
    import dgl.nn.pytorch as dnn

    torch.manual_seed(6)
    kw = TWIRLS[name]
    md, mt = dnn.TWIRLSConv(5, 3, 4, **kw), topograph.nn.TWIRLSConv(5, 3, 4, **kw)
    if md.unfolding.etas is not None:
        if md.unfolding.etas.shape != mt.unfolding.etas.shape:
            pytest.skip("DGL's etas has hidden_d entries against other widths and fails (test_twirls_dgl_bugs)")
        with torch.no_grad():
            md.unfolding.etas.uniform_(0.5, 1.5)
    for gt, gd in ((graph(), graph(dgl)), (batched(), batched(dgl))):
        for train in (True, False):
            md.train(train), mt.train(train)
            md.cached_unfolding = None  # DGL's cache would hand the last graph's result on (test_twirls_dgl_bugs)
            for m in (md, mt):
                m.zero_grad()
            x = torch.randn(gt.num_nodes(), 5)
            _compare(md, mt, lambda m, h: m(gd, h), lambda m, h: m(gt, h), [x])


def test_twirls_unfolding_matches_dgl():
    dgl = need_dgl()
    import dgl.nn.pytorch as dnn

    torch.manual_seed(7)
    src, dst = torch.cat([S, torch.arange(N)]), torch.cat([D, torch.arange(N)])
    gt = topograph.graph((src, dst), num_nodes=N)
    for kw in (dict(), dict(attn_aft=1, init_att=True, use_eta=True, T=3.0), dict(precond=False, attn_aft=2)):
        md, mt = dnn.TWIRLSUnfoldingAndAttention(3, 0.3, 0.8, 3, **kw), \
            topograph.nn.TWIRLSUnfoldingAndAttention(3, 0.3, 0.8, 3, **kw)
        _compare(md, mt, lambda m, h: m(dgl.graph((src, dst), num_nodes=N), h), lambda m, h: m(gt, h),
                 [torch.randn(N, 3)])


def test_twirls_dgl_bugs():
    """Where DGL 2.1's TWIRLS goes wrong and these do not."""
    dgl = need_dgl()
    import dgl.nn.pytorch as dnn

    torch.manual_seed(8)
    x1, x2 = torch.randn(N, 5), torch.randn(N, 5)
    # 1. without learnables before the unfolding, DGL caches its result for whatever graph and features come next
    md, mt = dnn.TWIRLSConv(5, 3, 4, 2, num_mlp_before=0), topograph.nn.TWIRLSConv(5, 3, 4, 2, num_mlp_before=0)
    mt.load_state_dict(md.state_dict())
    md(graph(dgl), x1)
    torch.testing.assert_close(md(graph(dgl), x2), md(graph(dgl), x1))  # x2's output is x1's
    fresh = dnn.TWIRLSConv(5, 3, 4, 2, num_mlp_before=0)
    fresh.load_state_dict(md.state_dict())
    g = graph()
    torch.testing.assert_close(mt(g, x1), md(graph(dgl), x1), **TOL)
    torch.testing.assert_close(mt(g, x2), fresh(graph(dgl), x2), **TOL)
    cached = mt.cached_unfolding  # the same graph and tensor again: the cache
    mt(g, x2)
    assert mt.cached_unfolding is cached
    x2.add_(1.0)  # changed in place: computed again
    fresh = dnn.TWIRLSConv(5, 3, 4, 2, num_mlp_before=0)
    fresh.load_state_dict(md.state_dict())
    torch.testing.assert_close(mt(g, x2), fresh(graph(dgl), x2), **TOL)
    assert mt.cached_unfolding is not cached
    # 2. use_eta without mlp_bef: DGL's etas has hidden_d entries against input_d columns
    md = dnn.TWIRLSConv(5, 3, 4, 2, num_mlp_before=0, attention=True, use_eta=True)
    with pytest.raises(RuntimeError, match="size of tensor"):
        md(graph(dgl), x1)
    assert topograph.nn.TWIRLSConv(5, 3, 4, 2, num_mlp_before=0, attention=True, use_eta=True).unfolding.etas.shape \
        == (5,)  # (its values: test_twirls_conv_by_dense_reference)
    # 3. DGL's unfolding writes its weights and degrees into the caller's graph
    gd, gt = dgl.add_self_loop(graph(dgl)), topograph.add_self_loop(graph())
    dnn.TWIRLSUnfoldingAndAttention(5, 0, 1, 2)(gd, x1)
    assert {"w"} <= set(gd.edata) and {"deg"} <= set(gd.ndata)
    topograph.nn.TWIRLSUnfoldingAndAttention(5, 0, 1, 2)(gt, x1)
    assert not gt.edata and not gt.ndata
    # 4. a node without in-edges (no self loops) and lam = 1: DGL divides by its zero degree (ours raises)
    assert torch.isnan(dnn.TWIRLSUnfoldingAndAttention(5, 0, 1, 2)(graph(dgl), x1)[5]).all()


# --- GroupRevRes


def revres_reference(rev, g, x, *args):
    """Plain autograd through the formula, with rev's modules."""
    xs, C = x.chunk(rev.groups, -1), rev.groups
    args = [a.chunk(C, -1) if isinstance(a, torch.Tensor) and a.dim() >= 2 and a.shape[-1] % C == 0 else [a] * C
            for a in args]
    h, ys = sum(xs[1:]), []
    for i, f in enumerate(rev.gnn_modules):
        h = xs[i] + f(g, h, *[a[i] for a in args])
        ys.append(h)
    return torch.cat(ys, -1)


class Noisy(torch.nn.Module):
    """Dropout then a GraphConv: the recomputation must see the forward's mask."""

    def __init__(self, lib, width):
        super().__init__()
        self.drop, self.conv = torch.nn.Dropout(0.5), lib.GraphConv(width, width, allow_zero_in_degree=True)

    def forward(self, g, h):
        return self.conv(g, self.drop(h))


def grads_of(f, *leaves, params=()):
    """f(*leaves)'s output and the gradients of a fixed projection of it (leaves' and params')."""
    leaves, params = [t.detach().clone().requires_grad_() for t in leaves], list(params)
    for p in params:
        p.grad = None
    out = f(*leaves)
    kept = out.detach().clone()  # (DGL's backward releases its output)
    (out * torch.linspace(-1, 1, out.numel()).view(out.shape)).sum().backward()  # (DGL's refuses autograd.grad)
    return kept, [t.grad for t in leaves + params]


@pytest.mark.parametrize("groups", [2, 3])
def test_group_rev_res_by_reference(groups):
    torch.manual_seed(9)
    nn, g = topograph.nn, graph()
    rev = nn.GroupRevRes(nn.GraphConv(2, 2, allow_zero_in_degree=True), groups)
    with torch.no_grad():
        for p in rev.parameters():
            p.add_(torch.randn(p.shape) * 0.3)  # the copies apart
    x, params = torch.randn(N, 2 * groups), list(rev.parameters())
    got, want = grads_of(lambda h: rev(g, h), x, params=params), \
        grads_of(lambda h: revres_reference(rev, g, h), x, params=params)
    torch.testing.assert_close(got, want, **TOL)
    # a stack: the second releases the first's output and rebuilds it by inversion in the backward
    got = grads_of(lambda h: rev(g, rev(g, rev(g, h))), x, params=params)
    want = grads_of(lambda h: revres_reference(rev, g, revres_reference(rev, g, revres_reference(rev, g, h))), x,
                    params=params)
    torch.testing.assert_close(got, want, **TOL)
    # edge features cut per group, scalar edge weights [E] whole to each (DGL cuts them too and fails:
    # test_group_rev_res_dgl_bugs)
    gine = nn.GroupRevRes(nn.GINEConv(torch.nn.Linear(2, 2)), groups)
    e, w = torch.randn(len(SRC), 2 * groups), torch.rand(len(SRC)) + 0.5
    torch.testing.assert_close(grads_of(lambda h, f: gine(g, h, f), x, e),
                               grads_of(lambda h, f: revres_reference(gine, g, h, f), x, e), **TOL)
    torch.testing.assert_close(grads_of(lambda h, f: rev(g, h, None, f), x, w),
                               grads_of(lambda h, f: revres_reference(rev, g, h, None, f), x, w), **TOL)
    # dropout inside: the recomputation (and the inversion, in a stack) replays the forward's masks
    noisy = nn.GroupRevRes(Noisy(nn, 2), groups).train()
    torch.manual_seed(10)
    got = grads_of(lambda h: noisy(g, noisy(g, h)), x, params=list(noisy.parameters()))
    torch.manual_seed(10)
    want = grads_of(lambda h: revres_reference(noisy, g, revres_reference(noisy, g, h)), x,
                    params=list(noisy.parameters()))
    torch.testing.assert_close(got, want, **TOL)


def test_group_rev_res_keeps_what_the_caller_holds():
    torch.manual_seed(11)
    nn, g = topograph.nn, graph()
    rev = nn.GroupRevRes(nn.GraphConv(2, 2, allow_zero_in_degree=True), 2)
    x = torch.randn(N, 4)
    with torch.no_grad():  # no backward to come: a plain forward, x untouched
        out = rev(g, x)
        torch.testing.assert_close(rev(g, x), out)
    x.requires_grad_()
    h = rev(g, x)
    y = rev(g, h)  # h is released (rebuilt in the backward)
    assert h.untyped_storage().size() == 0 and x.untyped_storage().size() > 0
    with pytest.raises(topograph.DGLError, match="released"):
        rev(g, h)
    y.sum().backward()
    assert y.untyped_storage().size() > 0 and x.grad is not None  # the caller's output stays
    torch.testing.assert_close(y, rev(g, rev(g, x.detach())))
    torch.autograd.grad(rev(g, x).sum(), [x])  # torch.autograd.grad works (DGL raises)
    keep = nn.GroupRevRes(nn.GraphConv(2, 2, allow_zero_in_degree=True), 2)
    keep.release_inputs = False  # e.g. to collect every layer's output
    h = rev(g, x)
    keep(g, h).sum().backward()
    assert h.untyped_storage().size() > 0


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")  # (DGL's)
def test_group_rev_res_matches_dgl():
    dgl = need_dgl()
    import dgl.nn.pytorch as dnn

    torch.manual_seed(12)
    for gt, gd in ((graph(), graph(dgl)), (batched(), batched(dgl))):
        n, e = gt.num_nodes(), gt.num_edges()
        for groups in (2, 3):
            made = lambda lib: lib.GroupRevRes(lib.GraphConv(2, 2, allow_zero_in_degree=True), groups)  # noqa: E731
            md = made(dnn)
            with torch.no_grad():
                for p in md.parameters():
                    p.add_(torch.randn(p.shape) * 0.3)
            _compare(md, made(topograph.nn), lambda m, x: m(gd, x), lambda m, x: m(gt, x),
                     [torch.randn(n, 2 * groups)])
            made = lambda lib: lib.GroupRevRes(lib.GINEConv(torch.nn.Linear(2, 2), learn_eps=True),  # noqa: E731
                                               groups)
            _compare(made(dnn), made(topograph.nn), lambda m, x, f: m(gd, x, f), lambda m, x, f: m(gt, x, f),
                     [torch.randn(n, 2 * groups), torch.randn(e, 2 * groups)])
            # a stack of two (each releasing the other's output in DGL; here the second the first's)
            made = lambda lib: torch.nn.ModuleList(  # noqa: E731
                [lib.GroupRevRes(lib.GraphConv(2, 2, allow_zero_in_degree=True), groups) for _ in range(2)])
            _compare(made(dnn), made(topograph.nn), lambda m, x: m[1](gd, m[0](gd, x)),
                     lambda m, x: m[1](gt, m[0](gt, x)), [torch.randn(n, 2 * groups)])


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")  # (DGL's)
def test_group_rev_res_dgl_bugs():
    """Where DGL 2.1's GroupRevRes goes wrong and this does not."""
    dgl = need_dgl()
    import dgl.nn.pytorch as dnn

    torch.manual_seed(13)
    gd, gt = graph(dgl), graph()
    md = dnn.GroupRevRes(dnn.GraphConv(2, 2, allow_zero_in_degree=True), 2)
    mt = topograph.nn.GroupRevRes(topograph.nn.GraphConv(2, 2, allow_zero_in_degree=True), 2)
    mt.load_state_dict(md.state_dict())
    # 1. DGL releases the caller's x: under no_grad for good (reading it then is a segfault), and the output
    #    after the backward
    x = torch.randn(N, 4)
    with torch.no_grad():
        md(gd, x)
    assert x.untyped_storage().size() == 0
    x = torch.randn(N, 4, requires_grad=True)
    y = md(gd, x)
    y.sum().backward()
    assert y.untyped_storage().size() == 0
    # 2. DGL refuses torch.autograd.grad
    with pytest.raises(RuntimeError, match="not compatible with .grad"):
        torch.autograd.grad(md(gd, torch.randn(N, 4, requires_grad=True)).sum(), list(md.parameters()))
    # 3. DGL cuts every extra argument along its last dim: scalar edge weights [E] are cut across the edges
    w = torch.rand(len(SRC)) + 0.5
    with pytest.raises(Exception):
        md(gd, torch.randn(N, 4, requires_grad=True), None, w)
    mt(gt, torch.randn(N, 4, requires_grad=True), None, w)  # (its values: test_group_rev_res_by_reference)
    # 4. DGL's backward draws new dropout masks: its gradients are not those of its own forward
    md = dnn.GroupRevRes(Noisy(dnn, 2), 2).train()
    x = torch.randn(N, 4)
    torch.manual_seed(14)
    _, dgl_grads = grads_of(lambda h: md(gd, h), x, params=list(md.parameters()))
    torch.manual_seed(14)
    _, plain = grads_of(lambda h: revres_reference(md, gd, h), x, params=list(md.parameters()))
    assert not all(torch.allclose(a, b, **TOL) for a, b in zip(dgl_grads, plain))
    mt = topograph.nn.GroupRevRes(Noisy(topograph.nn, 2), 2).train()
    mt.load_state_dict(md.state_dict())
    torch.manual_seed(14)
    _, ours = grads_of(lambda h: mt(gt, h), x, params=list(mt.parameters()))
    torch.testing.assert_close(ours, plain, **TOL)

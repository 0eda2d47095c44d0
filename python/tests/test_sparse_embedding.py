"""NodeEmbedding with SparseAdam / SparseAdagrad (nn/sparse_emb.py, optim/): only the rows a step read change,
a row read twice in a step gets the mean of its gradients (DGL's rule), the updates equal per-row Adam /
Adagrad written here, state_dict round trips, a DeepWalk-style skip-gram learns, and, where dgl imports, the
tables equal DGL 2.1's after the same steps."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch


def run(lib, opt_name, steps=3, **opt_kwargs):
    torch.manual_seed(0)
    emb = lib.nn.NodeEmbedding(10, 4, f"emb-{opt_name}", init_func=lambda t: t.uniform_(-1, 1))
    opt = getattr(lib.optim, opt_name)([emb], lr=0.1, **opt_kwargs)
    target = torch.randn(6, 4)
    for i in range(steps):
        ids = torch.tensor([1, 3, 3, 7, 8, 1]) if i % 2 == 0 else torch.tensor([0, 3, 9, 9, 2, 5])
        opt.zero_grad()
        ((emb(ids) - target) ** 2).sum().backward()
        opt.step()
    return emb, opt


@pytest.mark.parametrize("name", ["SparseAdam", "SparseAdagrad"])
def test_only_read_rows_change(name):
    torch.manual_seed(0)
    emb = topograph.nn.NodeEmbedding(10, 4, "e", init_func=lambda t: t.uniform_(-1, 1))
    before = emb.weight.clone()
    opt = getattr(topograph.optim, name)([emb], lr=0.1)
    opt.zero_grad()
    emb(torch.tensor([2, 5, 5])).sum().backward()
    opt.step()
    changed = (emb.weight != before).any(1).nonzero().view(-1).tolist()
    assert changed == [2, 5]
    with torch.no_grad():  # a read outside autograd leaves no trace
        emb(torch.tensor([7]))
    assert len(emb.trace) == 0


def test_updates_by_per_row_reference():
    emb, _ = run(topograph, "SparseAdam", steps=1)
    torch.manual_seed(0)
    table = torch.empty(10, 4).uniform_(-1, 1)
    target = torch.randn(6, 4)
    ids = torch.tensor([1, 3, 3, 7, 8, 1])
    grads = 2 * (table[ids] - target)
    for row in (1, 3, 7, 8):
        g = grads[ids == row].mean(0)  # DGL's rule: a row's reads averaged
        m, v = 0.1 * g, 0.001 * g * g  # first step: (1 - beta) g, (1 - beta2) g^2
        step = 0.1 * (m / 0.1) / ((v / 0.001).sqrt() + 1e-8)
        torch.testing.assert_close(emb.weight[row], table[row] - step)
    untouched = [r for r in range(10) if r not in (1, 3, 7, 8)]
    torch.testing.assert_close(emb.weight[untouched], table[untouched])


def test_state_dict_round_trip_and_errors():
    emb, opt = run(topograph, "SparseAdam", steps=2)
    saved = {k: v for k, v in opt.state_dict().items()}
    emb2 = topograph.nn.NodeEmbedding(10, 4, emb.name)
    opt2 = topograph.optim.SparseAdam([emb2], lr=0.5)
    opt2.load_state_dict(saved)
    assert opt2.param_groups == opt.param_groups
    assert all(torch.equal(a, b) for a, b in zip(emb2.optm_state, emb.optm_state))
    with pytest.raises(topograph.DGLError, match="NodeEmbedding"):
        topograph.optim.SparseAdam([torch.nn.Parameter(torch.zeros(2))], lr=0.1)


def test_skip_gram_on_random_walks_learns():
    """DeepWalk's loop: walks, (center, context) pairs within a window, negative sampling, NodeEmbedding +
    SparseAdam; two planted communities must end closer inside than across."""
    torch.manual_seed(1)
    n = 40
    community = torch.arange(n) // 20
    src, dst = torch.randint(0, n, (600,)), torch.randint(0, n, (600,))
    keep = community[src] == community[dst]
    g = topograph.graph((src[keep], dst[keep]), num_nodes=n)
    g = topograph.add_self_loop(topograph.to_bidirected(g))
    emb = topograph.nn.NodeEmbedding(n, 16, "walks", init_func=lambda t: t.normal_(0, 0.1))
    ctx = topograph.nn.NodeEmbedding(n, 16, "context", init_func=lambda t: t.normal_(0, 0.1))
    opt = topograph.optim.SparseAdam([emb, ctx], lr=0.02)
    for _ in range(30):
        traces, _ = topograph.sampling.random_walk(g, torch.arange(n).repeat(2), length=5)
        center, context = traces[:, :-1].reshape(-1), traces[:, 1:].reshape(-1)
        negative = torch.randint(0, n, center.shape)
        opt.zero_grad()
        c = emb(center)
        pos = (c * ctx(context)).sum(1)
        neg = (c * ctx(negative)).sum(1)
        loss = -torch.nn.functional.logsigmoid(pos).mean() - torch.nn.functional.logsigmoid(-neg).mean()
        loss.backward()
        opt.step()
    z = torch.nn.functional.normalize(emb.weight, dim=1)
    sim = z @ z.T
    same = community[:, None] == community[None, :]
    assert sim[same].mean() > sim[~same].mean() + 0.2  # measured: cosine 0.53 inside, -0.51 across


@pytest.mark.parametrize("name", ["SparseAdam", "SparseAdagrad"])
def test_against_dgl(name):
    dgl = pytest.importorskip("dgl")
    ours, _ = run(topograph, name)
    theirs, _ = run(dgl, name)
    torch.testing.assert_close(ours.weight, theirs.weight)


def test_deepwalk_module_learns_and_matches_dgl_loss():
    """dgl.nn.DeepWalk's loop (DataLoader over start nodes, sample as collate_fn, torch.optim.SparseAdam): two
    planted communities end closer inside than across; with the negative term off, the loss equals DGL 2.1's
    for the same embeddings and walks."""
    torch.manual_seed(2)
    n = 40
    community = torch.arange(n) // 20
    src, dst = torch.randint(0, n, (600,)), torch.randint(0, n, (600,))
    keep = community[src] == community[dst]
    g = topograph.add_self_loop(topograph.to_bidirected(topograph.graph((src[keep], dst[keep]), num_nodes=n)))
    model = topograph.nn.DeepWalk(g, emb_dim=16, walk_length=6, window_size=2)
    loader = torch.utils.data.DataLoader(torch.arange(n), batch_size=20, shuffle=True, collate_fn=model.sample)
    opt = torch.optim.SparseAdam(model.parameters(), lr=0.02)
    for _ in range(40):
        for walks in loader:
            opt.zero_grad()
            model(walks).backward()
            opt.step()
    z = torch.nn.functional.normalize(model.node_embed.weight.detach(), dim=1)
    sim = z @ z.T
    same = community[:, None] == community[None, :]
    assert sim[same].mean() > sim[~same].mean() + 0.2  # measured: cosine 0.99 inside, 0.21 across
    with pytest.raises(topograph.DGLError, match="walk_length"):
        topograph.nn.DeepWalk(g, walk_length=3, window_size=5)
    try:
        import dgl
    except ImportError:
        return
    dg = dgl.add_self_loop(dgl.to_bidirected(dgl.graph((src[keep], dst[keep]), num_nodes=n)))
    ours = topograph.nn.DeepWalk(g, emb_dim=8, walk_length=6, window_size=2, neg_weight=0)
    theirs = dgl.nn.DeepWalk(dg, emb_dim=8, walk_length=6, window_size=2, neg_weight=0)
    theirs.context_embed.weight.data.normal_()
    ours.load_state_dict(theirs.state_dict())
    walks = ours.sample(torch.arange(10))
    torch.testing.assert_close(ours(walks), theirs(walks))


def test_metapath2vec_pairs_and_loss():
    """Pairs within the window (never a position with itself), global ids type after type, negatives by the
    walk-visit frequency; the loss equal to DGL 2.1's for the same inputs and weights."""
    torch.manual_seed(3)
    data = {("author", "writes", "paper"): (torch.tensor([0, 0, 1, 2, 2]), torch.tensor([0, 1, 1, 2, 0])),
            ("paper", "written_by", "author"): (torch.tensor([0, 1, 1, 2, 0]), torch.tensor([0, 0, 1, 2, 2]))}
    counts = {"author": 3, "paper": 3}
    g = topograph.heterograph(data, counts)
    path = ["writes", "written_by", "writes", "written_by"]
    model = topograph.nn.MetaPath2Vec(g, path, window_size=2, emb_dim=8, negative_size=3)
    u, v, neg = model.sample(torch.tensor([0, 1, 2]))
    # walks of 5 positions, every one complete; position i pairs with j != i, i - 2 <= j < i + 2: 1+2+3+3+2 = 11
    assert u.numel() == v.numel() == 3 * 11 and neg.shape == (33, 3)
    assert int(max(u.max(), v.max(), neg.max())) < 6  # authors 0-2, papers 3-5 ("author" < "paper")
    assert model.node_embed.weight.shape == (6, 8) and float(model.neg_prob.sum()) == pytest.approx(1.0)
    loss = model(u, v, neg)
    assert loss.dim() == 0 and bool(torch.isfinite(loss))
    try:
        import dgl
    except ImportError:
        return
    theirs = dgl.nn.MetaPath2Vec(dgl.heterograph(data, counts), path, window_size=2, emb_dim=8, negative_size=3)
    theirs.context_embed.weight.data.normal_()
    model.load_state_dict(theirs.state_dict())
    torch.testing.assert_close(model(u, v, neg), theirs(u, v, neg))

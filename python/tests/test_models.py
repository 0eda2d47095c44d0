"""topograph.models against dense masked implementations of the same equations written here (float64, on the
modules' own weights): each encoder's attention pattern is a mask over [destinations, sources] built from the
paper's definition (models.md), not from the graph builders the modules use. Values and input gradients at
rtol = atol = 1e-4 (TOL)."""
import pytest
import torch

import topograph
from topograph.models import BigTransformer, MultiScaleTransformer, StarTransformer, lexicon_spans
from test_ops import TOL

LENGTHS = [1, 2, 5, 9]  # n = 1 and 2: the closed ring keeps each distinct neighbour once


def linear(layer, x):
    return x @ layer.weight.double().t() + layer.bias.double()


def norm(layer, x):
    return torch.nn.functional.layer_norm(x, x.shape[-1:], layer.weight.double(), layer.bias.double(), layer.eps)


def dense_attention(att, x_dst, x_src, mask):
    """GraphMultiHeadAttention's equations with a mask [H or 1, num_dst, num_src] of allowed pairs; a destination
    with none gets 0 before W_O (the sparse kernel's rule)."""
    heads, dh = att.heads, att.dim // att.heads
    q = linear(att.q, x_dst).view(-1, heads, dh).transpose(0, 1)  # [H, Nd, dh]
    k = linear(att.k, x_src).view(-1, heads, dh).transpose(0, 1)
    v = linear(att.v, x_src).view(-1, heads, dh).transpose(0, 1)
    scores = (q @ k.transpose(1, 2) / dh ** 0.5).masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)  # all -inf rows: 0
    return linear(att.o, (weights @ v).transpose(0, 1).reshape(x_dst.shape[0], -1))


def sentence_of(lengths):
    return torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))


def position_of(lengths):
    return torch.cat([torch.arange(n) for n in lengths])


def check_encoder(run, run_ref, x):
    """run(x) and run_ref(x as float64) -> (tokens, sentences): values, then the gradient reaching x."""
    x64 = x.detach().double().requires_grad_()
    tokens, sentences = run(x)
    ref_tokens, ref_sentences = run_ref(x64)
    torch.testing.assert_close(tokens.double(), ref_tokens, **TOL)
    torch.testing.assert_close(sentences.double(), ref_sentences, **TOL)
    w1, w2 = torch.randn_like(ref_tokens), torch.randn_like(ref_sentences)
    (tokens.double() * w1).sum().add((sentences.double() * w2).sum()).backward()
    (ref_tokens * w1).sum().add((ref_sentences * w2).sum()).backward()
    torch.testing.assert_close(x.grad.double(), x64.grad, **TOL)


@pytest.mark.parametrize("variant", ["full", "no-radical", "no-ring"])
@pytest.mark.parametrize("residual", [False, True])
def test_star_transformer_against_the_dense_masked_equations(variant, residual):
    torch.manual_seed(0)
    model = StarTransformer(hidden=12, heads=3, layers=2, input_dim=4, variant=variant, residual=residual)
    n, b = sum(LENGTHS), len(LENGTHS)
    sent, pos = sentence_of(LENGTHS), position_of(LENGTHS)
    length = torch.tensor(LENGTHS)[sent]
    same = sent.view(-1, 1) == sent.view(1, -1)  # [N, N]
    offset = (pos.view(1, -1) - pos.view(-1, 1)) % length.view(-1, 1)  # (j - i) mod n within a sentence
    ring = same & ((offset == 1) | (offset == length.view(-1, 1) - 1)) if variant != "no-ring" else same & False
    itself = torch.eye(n, dtype=torch.bool)
    to_relay = sent.view(-1, 1) == torch.arange(b).view(1, -1)  # [N, B]
    # satellite i over [sat; emb; relay]: ring neighbours and itself, its own embedding, its sentence's relay
    sat_mask = torch.cat([ring | itself, itself, to_relay & (variant != "no-radical")], dim=1).unsqueeze(0)
    # relay b over [sat; relay]: its sentence's satellites and itself
    relay_mask = torch.cat([to_relay.t(), torch.eye(b, dtype=torch.bool)], dim=1).unsqueeze(0)

    def epilogue(layer_norm, x, update):
        return norm(layer_norm, x + torch.relu(update)) if residual else norm(layer_norm, torch.relu(update))

    def reference(e):
        h, s = e, torch.stack([e[sent == i].mean(0) for i in range(b)])
        for layer in model.layers:
            h = epilogue(layer.satellite_norm, h,
                         dense_attention(layer.satellite_attention, h, torch.cat([h, e, s]), sat_mask))
            s = epilogue(layer.relay_norm, s, dense_attention(layer.relay_attention, s, torch.cat([h, s]), relay_mask))
        return h, s + torch.stack([h[sent == i].max(0).values for i in range(b)])

    e = torch.randn(n, 12, requires_grad=True)
    check_encoder(lambda x: model.encode(x, topograph.models.star_topology(LENGTHS, variant)), reference, e)
    features = torch.randn(n, 4)
    tokens, sentences = model(features, LENGTHS)  # the embedding in front
    assert tokens.shape == (n, 12) and sentences.shape == (b, 12)


def test_multiscale_band_and_graph_paths_against_the_dense_masked_equations():
    torch.manual_seed(1)
    lengths = [1, 6, 17, 40]
    model = MultiScaleTransformer(hidden=20, heads=5, layers=2, scales="1,3,N/16,N/4", alpha=0.5, vocab_size=30)
    assert model.head_counts == topograph.models.head_distribution(0.5, 2, 4, 5)
    assert all(sum(c) == 5 for c in model.head_counts)
    ids = torch.randint(0, 30, (sum(lengths),))
    x = model.embedding(ids, lengths, lead=model.cls).detach()  # [N + B, 20]: [CLS] then tokens, per sentence
    positions = [n + 1 for n in lengths]
    sent, pos = sentence_of(positions), position_of(positions)
    same = sent.view(-1, 1) == sent.view(1, -1)
    distance = (pos.view(-1, 1) - pos.view(1, -1)).abs()

    def width(scale, n):  # models.md: a constant odd width, or ceil(n / k) rounded up to odd
        if not scale.startswith("N/"):
            return int(scale)
        w = max(1, -(-n // int(scale[2:])))
        return w + 1 - w % 2

    def reference(h):
        for l, layer in enumerate(model.layers):
            # head h of scale k's group: |i - j| <= (width - 1) / 2 within the sentence, n its token count
            radius = torch.tensor([[(width(s, n) - 1) // 2 for s, c in zip(["1", "3", "N/16", "N/4"],
                                                                            model.head_counts[l]) for _ in range(c)]
                                   for n in lengths])  # [B, H]
            mask = same.unsqueeze(0) & (distance.unsqueeze(0) <= radius.t()[:, sent].unsqueeze(-1))  # [H, P, P]
            h = norm(layer.norm, h + torch.relu(dense_attention(layer.attention, h, h, mask)))
        is_cls = pos == 0
        tokens = h[~is_cls]
        token_sent = sent[~is_cls]
        return tokens, h[is_cls] + torch.stack([tokens[token_sent == i].max(0).values for i in range(len(lengths))])

    def run(h, band):
        model.band = band
        # the layers and readout of forward(), from the embedded rows on
        for l, layer in enumerate(model.layers):
            update = layer.attention.forward_band(h, positions, model.band_radii(l, lengths)) if band else \
                layer.attention([(c, w) for c, w in zip(model.head_counts[l], model.window_graphs(lengths))], h)
            h = layer.norm(h + torch.relu(update))
        token_rows, cls_rows = topograph.models.sequence.lead_layout(lengths, 1)
        return h[token_rows], h[cls_rows] + topograph.ops.copy_u_max(
            topograph.models.sequence.sentence_readout_graph(lengths), h[token_rows])

    for band in (True, False):
        check_encoder(lambda h: run(h, band), reference, x.clone().requires_grad_())
    # forward() is the same computation on either path
    model.band = True
    band_out = model(ids, lengths)
    model.band = False
    graph_out = model(ids, lengths)
    for a, b in zip(band_out, graph_out):
        torch.testing.assert_close(a, b, **TOL)


def test_multiscale_mean_summary_is_the_tokens_mean_plus_their_max():
    torch.manual_seed(3)
    lengths = [1, 6, 17]
    ids = torch.randint(0, 30, (sum(lengths),))
    paper = MultiScaleTransformer(hidden=20, heads=5, layers=2, scales="1,3,N/4", vocab_size=30)
    mean = MultiScaleTransformer(hidden=20, heads=5, layers=2, scales="1,3,N/4", vocab_size=30, summary="mean")
    mean.load_state_dict(paper.state_dict())  # the summary adds no parameter
    tokens, sentences = mean(ids, lengths)
    torch.testing.assert_close(tokens, paper(ids, lengths)[0], **TOL)
    rows = torch.split(tokens, lengths)
    torch.testing.assert_close(sentences, torch.stack([r.mean(0) + r.max(0).values for r in rows]), **TOL)
    assert not torch.allclose(sentences, paper(ids, lengths)[1], atol=1e-2)
    with pytest.raises(ValueError, match="summary"):
        MultiScaleTransformer(hidden=20, heads=5, summary="first")


def test_head_distribution_follows_the_alpha_rule():
    # α = 0: uniform; the top layer is always uniform; each layer sums to the heads; small scales first
    assert topograph.models.head_distribution(0.0, 3, 5, 10) == [[2] * 5] * 3
    rows = topograph.models.head_distribution(0.5, 3, 5, 10)
    assert rows[-1] == [2] * 5 and all(sum(r) == 10 for r in rows)
    assert rows[0] == sorted(rows[0], reverse=True) and rows[0][0] > rows[1][0] > rows[2][0]
    with pytest.raises(ValueError, match="odd width"):
        topograph.models.parse_scales("1,4")
    with pytest.raises(ValueError, match="twice"):
        topograph.models.parse_scales("3,N/8,3")


@pytest.mark.parametrize("variant", ["full", "no-global", "no-local", "radical"])
def test_big_transformer_against_the_dense_masked_equations(variant):
    torch.manual_seed(2)
    lexicon = {"ab", "abc", "bcd", "cd", "de", "xyz"}
    texts = ["abcde", "a", "xyzcd", "dab"]
    vocab = {c: i for i, c in enumerate(sorted(set("".join(texts))))}
    lengths = [len(t) for t in texts]
    words = [lexicon_spans(t, lexicon) for t in texts]
    assert words[0] == [(0, 1), (0, 2), (1, 3), (2, 3), (3, 4)] and words[1] == []
    if variant == "radical":
        words_used = [[(i, i + 1) for i in range(n - 1)] for n in lengths]
    else:
        words_used = words if variant != "no-local" else [[] for _ in lengths]
    model = BigTransformer(len(vocab), hidden=8, heads=2, layers=2, variant=variant)
    ids = torch.tensor([vocab[c] for t in texts for c in t])
    n, b = sum(lengths), len(lengths)
    sent, pos = sentence_of(lengths), position_of(lengths)
    # word j of sentence w_sent[j] spans characters [start, end] of it
    w_sent = torch.tensor([s for s, ws in enumerate(words_used) for _ in ws], dtype=torch.int64)
    w_start = torch.tensor([a for ws in words_used for a, _ in ws], dtype=torch.int64)
    w_end = torch.tensor([e for ws in words_used for _, e in ws], dtype=torch.int64)
    in_word = (sent.view(-1, 1) == w_sent.view(1, -1)) & (w_start <= pos.view(-1, 1)) & (pos.view(-1, 1) <= w_end)
    to_sent = (sent.view(-1, 1) == torch.arange(b).view(1, -1)) & (variant != "no-global")
    mask = torch.cat([in_word, to_sent], dim=1).unsqueeze(0)  # char i over [words; sentences]

    def reference(h):
        for layer in model.layers:
            words_state = in_word.t().double() @ h  # o_j = sum of its characters: [words, d]
            s = linear(layer.sentence, torch.stack([h[sent == i].mean(0) for i in range(b)]))
            a = dense_attention(layer.block.attention, h, torch.cat([words_state, s]), mask)
            blk = layer.block
            h = norm(blk.attention_norm, h + a)
            h = norm(blk.ffn_norm, h + linear(blk.ffn_out, torch.relu(linear(blk.ffn_in, h))))
        return h, torch.stack([h[sent == i].mean(0) for i in range(b)])

    def run(h0):
        # forward() from the embedded characters on (the embedding is a table look-up plus fixed sinusoids)
        topology = topograph.models.big_topology(lengths, words, variant)
        readout = topograph.models.sequence.sentence_readout_graph(lengths)
        h = h0
        for layer in model.layers:
            sources = {}
            if topology.word_sum is not None:
                sources["word"] = topograph.ops.copy_u_sum(topology.word_sum, h)
            if topology.has_sentence:
                sources["sent"] = layer.sentence(topograph.ops.copy_u_mean(readout, h))
            h = layer.block.finish(h, layer.block.attention(topology.chars, h, sources))
        return h, topograph.ops.copy_u_mean(readout, h)

    h0 = (model.char(ids) + model.positions[pos]).detach().requires_grad_()
    check_encoder(run, reference, h0)
    tokens, sentences = model(ids, lengths, words)
    torch.testing.assert_close(tokens, run(h0)[0], **TOL)  # forward() is run() after the embedding
    assert sentences.shape == (b, 8)


def test_model_errors():
    with pytest.raises(ValueError, match="divide"):
        StarTransformer(hidden=10, heads=3, input_dim=2)
    with pytest.raises(ValueError, match="exactly one"):
        StarTransformer(hidden=10, heads=2)
    with pytest.raises(ValueError, match="variant"):
        StarTransformer(hidden=10, heads=2, input_dim=2, variant="no-relay")
    model = StarTransformer(hidden=8, heads=2, input_dim=3, max_length=5)
    with pytest.raises(ValueError, match="max_length"):
        model(torch.randn(6, 3), [6])
    with pytest.raises(ValueError, match="length 0"):
        model(torch.randn(3, 3), [3, 0])
    with pytest.raises(ValueError, match="tokens for sentences"):
        model(torch.randn(4, 3), [3])
    with pytest.raises(ValueError, match="features"):
        model(torch.randn(3, 4), [3])
    big = BigTransformer(5, hidden=8, heads=2)
    with pytest.raises(ValueError, match="word span list"):
        big(torch.tensor([0, 1, 2]), [3])
    with pytest.raises(ValueError):
        big(torch.tensor([0, 1, 2]), [3], [[(1, 3)]])  # a span past the sentence's end

"""topograph.ops.band_attention (the fused dense kernel, banded per sequence and head) against a dense masked
softmax written here in float64, value and gradient (rtol = atol = 1e-4), for every form of the radius; and
against the sparse attention over the window graph of the same bands."""
import pytest
import torch

import topograph
from test_ops import TOL, check, leaf, ref_of

LENGTHS = [1, 7, 33, 2, 20]  # awkward lengths: a single position, odd, just past a 32-row tile


def ref_band_attention(q, k, v, lengths, radii, scale):
    """Per sequence: scores [H, L, L] masked to |i - j| <= radius (one per head), softmax over j, times v.
    radii: [B, H] (None: full)."""
    outs, start = [], 0
    for b, n in enumerate(lengths):
        qs, ks, vs = (x[start:start + n].transpose(0, 1) for x in (q, k, v))  # [H, n, d]
        scores = scale * qs @ ks.transpose(1, 2)  # [H, n, n]
        if radii is not None:
            pos = torch.arange(n)
            dist = (pos.view(-1, 1) - pos.view(1, -1)).abs()  # [n, n]
            r = torch.as_tensor(radii[b]).view(-1, 1, 1)  # [H, 1, 1]
            scores = scores.masked_fill(dist.unsqueeze(0) > r, float("-inf"))
        outs.append((torch.softmax(scores, dim=-1) @ vs).transpose(0, 1))  # [n, H, dv]
        start += n
    return torch.cat(outs)


HEADS = 3
# radius as given -> the [B, H] radii of the reference (None: full attention)
RADII = {
    "full": (None, None),
    "one_int": (2, [[2] * HEADS] * len(LENGTHS)),
    "zero": (0, [[0] * HEADS] * len(LENGTHS)),  # each position attends to itself only
    "per_sequence": ([0, 3, 1, 40, 5], [[r] * HEADS for r in [0, 3, 1, 40, 5]]),
    "per_head": (torch.tensor([[0, 2, 9]]), [[0, 2, 9]] * len(LENGTHS)),
    "per_sequence_and_head": (torch.tensor([[0, 1, 2], [3, 0, 6], [1, 4, 16], [0, 0, 1], [2, 7, 19]]),
                              [[0, 1, 2], [3, 0, 6], [1, 4, 16], [0, 0, 1], [2, 7, 19]]),
}


@pytest.mark.parametrize("form", list(RADII))
@pytest.mark.parametrize("dk,dv", [(4, 4), (9, 5)])
def test_band_attention_against_a_dense_masked_softmax(form, dk, dv):
    radius, ref_radii = RADII[form]
    rows = sum(LENGTHS)
    q, k, v = leaf(rows, (HEADS, dk)), leaf(rows, (HEADS, dk)), leaf(rows, (HEADS, dv))
    out = topograph.ops.band_attention(q, k, v, LENGTHS, radius)
    rq, rk, rv = ref_of(q), ref_of(k), ref_of(v)
    check(out, ref_band_attention(rq, rk, rv, LENGTHS, ref_radii, dk ** -0.5), [q, k, v], [rq, rk, rv])


def test_scale_lengths_as_a_tensor_and_non_contiguous_inputs():
    rows = sum(LENGTHS)
    q = leaf(rows, (4, HEADS)).transpose(1, 2)  # [rows, H, 4], not contiguous
    k, v = leaf(rows, (HEADS, 4)), leaf(rows, (HEADS, 2))
    assert not q.is_contiguous()
    out = topograph.ops.band_attention(q, k, v, torch.tensor(LENGTHS), radius=torch.tensor(3), scale=0.7)
    ref = ref_band_attention(q.detach().double(), k.detach().double(), v.detach().double(), LENGTHS,
                             [[3] * HEADS] * len(LENGTHS), 0.7)
    torch.testing.assert_close(out.double(), ref, **TOL)


def test_band_attention_equals_sparse_attention_over_the_window_graph():
    # radius r per sequence is builders.window's width 2 r + 1: two kernels, one attention
    lengths, radii = [5, 12, 9], [1, 3, 0]
    g = topograph.graph(topograph.builders.window(lengths, [2 * r + 1 for r in radii]), num_nodes=sum(lengths))
    q, k, v = (torch.randn(sum(lengths), 2, 6) for _ in range(3))
    torch.testing.assert_close(topograph.ops.band_attention(q, k, v, lengths, radii),
                               topograph.ops.sparse_attention(g, q, k, v), **TOL)


def test_band_attention_errors():
    q = torch.randn(10, 2, 4)
    with pytest.raises(ValueError, match="lengths sum to"):
        topograph.ops.band_attention(q, q, q, [3, 4], 1)
    with pytest.raises(ValueError, match="must be >= 1"):
        topograph.ops.band_attention(q, q, q, [10, 0], 1)
    with pytest.raises(ValueError, match="must be >= 0"):
        topograph.ops.band_attention(q, q, q, [4, 6], [1, -1])
    with pytest.raises(ValueError, match="3 radii for 2 sequences"):
        topograph.ops.band_attention(q, q, q, [4, 6], [1, 2, 3])
    with pytest.raises(ValueError, match="radius of shape"):
        topograph.ops.band_attention(q, q, q, [4, 6], torch.ones(2, 3, dtype=torch.int64))
    with pytest.raises(TypeError, match="integers"):
        topograph.ops.band_attention(q, q, q, [4, 6], 1.5)
    with pytest.raises(TypeError, match="band_attention: q: features must be float16, bfloat16, float32 or float64"):
        topograph.ops.band_attention(q.to(torch.int32), q, q, [4, 6], 1)
    with pytest.raises(ValueError, match="q must be"):
        topograph.ops.band_attention(torch.randn(10, 8), q, q, [4, 6], 1)
    with pytest.raises(ValueError):
        topograph.ops.band_attention(q, torch.randn(10, 2, 3), q, [4, 6], 1)

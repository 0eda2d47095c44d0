"""The seed models and attention layers as a PyTorch user drives them: a training loop, state_dict / pickle /
deepcopy round trips, eval-mode determinism, batch composition, id dtypes, and the errors for inputs of the
wrong dtype or shape, each a TypeError / ValueError naming the argument (not a truncation, a silent reshape or
an error from deep inside a projection or kernel)."""
import copy
import io
import pickle

import numpy as np
import pytest
import torch

import topograph
from topograph.models import BigTransformer, MultiScaleTransformer, StarTransformer
from topograph.nn import GraphMultiHeadAttention, SetTransformerDecoder, SetTransformerEncoder
from topograph.nn.graph_transformer import BiasedMHA, EGTLayer, LapPosEncoder

VOCAB, HIDDEN = 30, 16


def words_for(lengths):
    return [[(i, min(i + 1, n - 1)) for i in range(0, n, 2)] for n in lengths]


def make(name, dropout=0.0):
    if name == "star":
        return StarTransformer(HIDDEN, 4, 2, vocab_size=VOCAB, dropout=dropout)
    if name == "multiscale":
        return MultiScaleTransformer(HIDDEN, 4, 2, vocab_size=VOCAB, scales="1,3,N/2", dropout=dropout)
    if name == "multiscale-graph":
        return MultiScaleTransformer(HIDDEN, 4, 2, vocab_size=VOCAB, scales="1,3,N/2", dropout=dropout, band=False)
    return BigTransformer(VOCAB, HIDDEN, 4, 2, dropout=dropout)


def run(model, ids, lengths):
    if isinstance(model, BigTransformer):
        return model(ids, lengths, words_for([int(n) for n in lengths]))
    return model(ids, lengths)


MODELS = ["star", "multiscale", "multiscale-graph", "big"]


@pytest.mark.parametrize("name", MODELS)
def test_training_loop_and_round_trips(name):
    torch.manual_seed(0)
    model, head = make(name, dropout=0.1), torch.nn.Linear(HIDDEN, 2)
    lengths = torch.tensor([3, 5, 1, 4])
    ids, y = torch.randint(0, VOCAB, (int(lengths.sum()),)), torch.tensor([0, 1, 1, 0])
    opt = torch.optim.Adam(list(model.parameters()) + list(head.parameters()), lr=1e-2)
    losses = []
    for _ in range(15):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(head(run(model, ids, lengths)[1]), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    model.eval()
    ref = run(model, ids, lengths)[1]
    assert torch.equal(ref, run(model, ids, lengths)[1])  # eval: no dropout
    with torch.inference_mode():
        torch.testing.assert_close(run(model, ids, lengths)[1], ref)
    fresh = make(name)
    fresh.load_state_dict(model.state_dict(), strict=True)
    buf = io.BytesIO()
    torch.save(model, buf)
    buf.seek(0)
    for other in (fresh.eval(), copy.deepcopy(model), pickle.loads(pickle.dumps(model)), torch.load(buf)):
        torch.testing.assert_close(run(other, ids, lengths)[1], ref)
    # int32 ids and lengths, lengths as a list or numpy array, a non-contiguous id tensor: the same outputs
    strided = torch.stack([ids, ids], 1)[:, 0]
    for i, l in ((ids.int(), lengths.int()), (ids, lengths.tolist()), (ids, lengths.numpy()), (strided, lengths),
                 (ids.to(torch.uint8), lengths)):
        torch.testing.assert_close(run(model, i, l)[1], ref)
    # a sentence's features do not depend on the others in its batch
    torch.testing.assert_close(run(model, ids[3:8], [5])[1][0], ref[1], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("lengths,error,match", [
    (torch.tensor([2.0, 3.0]), TypeError, "lengths: expected integers"),
    (np.array([2.7, 2.9]), TypeError, "lengths: expected integers"),  # was truncated to [2, 2]
    ([2.5, 2.5], TypeError, "lengths: expected integers"),
    (torch.tensor([[2, 3]]), ValueError, "lengths: expected a 1-D"),
    (5, ValueError, "lengths: expected a 1-D"),
    ([], ValueError, "empty batch"),
    (torch.tensor([]), ValueError, "empty batch"),
])
def test_lengths_of_the_wrong_dtype_or_shape_are_named(name, lengths, error, match):
    model = make(name)
    with pytest.raises(error, match=match):
        model(torch.zeros(5, dtype=torch.int64), lengths, *([[[(0, 1)], [(0, 1)]]] if name == "big" else []))


@pytest.mark.parametrize("name", MODELS)
def test_token_ids_of_the_wrong_dtype_or_shape_are_named(name):
    model, arg = make(name), "char_ids" if name == "big" else "tokens"
    with pytest.raises(TypeError, match=f"{arg} must be integer token ids"):
        run(model, torch.rand(5), [2, 3])
    with pytest.raises(TypeError, match=f"{arg} must be integer token ids"):
        run(model, torch.ones(5, dtype=torch.bool), [2, 3])
    with pytest.raises(ValueError, match="packed sentence after sentence"):  # a padded [B, L] batch
        run(model, torch.zeros(2, 3, dtype=torch.int64), [2, 3])
    with pytest.raises(ValueError, match="sum of lengths"):
        run(model, torch.zeros(4, dtype=torch.int64), [2, 3])


def test_graph_attention_names_states_of_the_wrong_shape_or_dtype():
    g = topograph.graph((torch.tensor([0, 1, 2]), torch.tensor([1, 2, 0])), num_nodes=3)
    layer = GraphMultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match=r"dst_states must be \[rows, 8\]"):  # was viewed as 6 rows
        layer(g, torch.randn(3, 2, 8))
    with pytest.raises(ValueError, match="dst_states"):
        layer(g, torch.randn(3, 6))
    with pytest.raises(TypeError, match="dst_states must be floating point"):
        layer(g, torch.ones(3, 8, dtype=torch.int64))
    with pytest.raises(ValueError, match="src_states"):
        layer(g, torch.randn(3, 8), torch.randn(3, 4))
    with pytest.raises(ValueError, match=r"states must be \[rows, 8\]"):
        layer.forward_band(torch.randn(3, 2, 8), [3])
    with pytest.raises(ValueError, match="no sequences"):  # [] is float32 to torch: not 'expected integers'
        layer.forward_band(torch.randn(0, 8), [])
    x = torch.randn(8, 3).t()  # non-contiguous rows
    torch.testing.assert_close(layer(g, x), layer(g, x.contiguous()))
    torch.testing.assert_close(layer.forward_band(x, [3]), layer.forward_band(x.contiguous(), [3]))


def test_set_transformer_names_feat_of_the_wrong_width_or_dtype():
    bg = topograph.batch([topograph.graph(([0], [1]), num_nodes=3), topograph.graph(([0], [0]), num_nodes=2)])
    for layer in (SetTransformerEncoder(8, 2, 4, 16), SetTransformerDecoder(8, 2, 4, 16, 1, 2)):
        what = type(layer).__name__
        with pytest.raises(ValueError, match=rf"{what}: feat must be \[N, d_model\]"):
            layer(bg, torch.randn(5, 7))
        with pytest.raises(TypeError, match=f"{what}: feat must be floating point"):
            layer(bg, torch.ones(5, 8, dtype=torch.int64))


def test_dense_graph_transformer_layers_name_inputs_of_the_wrong_shape():
    mha = BiasedMHA(8, 2)
    with pytest.raises(ValueError, match=r"ndata must be \[B, N, 8\]"):
        mha(torch.randn(3, 8))
    with pytest.raises(ValueError, match="attn_bias"):  # no heads dimension
        mha(torch.randn(2, 3, 8), torch.randn(2, 3, 3))
    with pytest.raises(ValueError, match="attn_mask"):
        mha(torch.randn(2, 3, 8), attn_mask=torch.zeros(2, 3, 4, dtype=torch.bool))
    assert mha(torch.randn(2, 3, 8), torch.randn(3, 3, 2)).shape == (2, 3, 8)  # a bias that broadcasts
    egt = EGTLayer(8, 4, 2, 1)
    with pytest.raises(ValueError, match=r"efeat must be \[B, N, N, 4\]"):
        egt(torch.randn(2, 3, 8), torch.randn(2, 3, 4))
    with pytest.raises(ValueError, match="nfeat"):
        egt(torch.randn(3, 8), torch.randn(2, 3, 3, 4))


@pytest.mark.parametrize("model_type,layers", [("Transformer", 1), ("DeepSet", 2)])
def test_lap_pos_encoder_runs_in_float64(model_type, layers):
    torch.manual_seed(0)
    enc = LapPosEncoder(model_type, layers, 3, 8, n_head=2).eval()
    vals, vecs = torch.randn(4, 3), torch.randn(4, 3)
    vecs[0, 2] = float("nan")  # padding
    ref = enc(vals, vecs)
    out = copy.deepcopy(enc).double()(vals.double(), vecs.double())  # was: mat1 and mat2 must have the same dtype
    assert out.dtype == torch.float64
    torch.testing.assert_close(out.float(), ref, atol=1e-5, rtol=1e-5)

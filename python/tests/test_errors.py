"""Bad input raises a Python exception carrying Topograph's message (topo::Error -> ValueError), never a crash."""
import pytest
import torch

import topograph
from conftest import build


def test_bad_ids():
    with pytest.raises(ValueError, match=r"src\[1\] = 7 is not a valid '_N' node id \(there are 3\)"):
        topograph.graph((torch.tensor([0, 7]), torch.tensor([1, 1])), num_nodes=3)
    with pytest.raises(ValueError, match="-1"):
        topograph.graph(([0, -1], [1, 1]), num_nodes=3)
    with pytest.raises(ValueError, match="2 source ids but 1 destination"):
        topograph.graph(([0, 1], [1]))
    with pytest.raises(TypeError, match="integer"):
        topograph.graph((torch.tensor([0.0]), torch.tensor([1.0])))
    with pytest.raises(ValueError, match="1-D"):
        topograph.graph((torch.zeros(2, 2, dtype=torch.int64), torch.zeros(2, 2, dtype=torch.int64)))
    with pytest.raises(ValueError, match="dst"):
        topograph.heterograph({("a", "r", "b"): ([0], [5])}, num_nodes_dict={"a": 1, "b": 2})
    # a node count that is not an integer (2.5 became 2, '3' became 3)
    with pytest.raises(topograph.DGLError, match=r"graph: num_nodes must be an int >= 0, got 2.5"):
        topograph.graph(([0], [0]), num_nodes=2.5)
    with pytest.raises(topograph.DGLError, match=r"num_nodes_dict\['b'\] must be an int >= 0, got '3'"):
        topograph.heterograph({("a", "r", "b"): ([0], [0])}, num_nodes_dict={"b": "3"})
    assert topograph.graph(([0], [0]), num_nodes=torch.tensor(4)).num_nodes() == 4  # an integer tensor is fine
    # int64 ids past int32's range with idtype int32: named, not wrapped to -2**31 by the cast
    with pytest.raises(ValueError, match=r"node id 2147483648 does not fit idtype torch.int32"):
        topograph.graph((torch.tensor([0, 2**31]), torch.tensor([1, 2])), idtype=torch.int32)
    with pytest.raises(ValueError, match=r"node id -2147483649 does not fit"):
        topograph.graph((torch.tensor([0, -2**31 - 1]), torch.tensor([1, 2])), num_nodes=3, idtype=torch.int32)


def test_bad_names():
    hg = topograph.heterograph({("a", "r", "b"): ([0], [1]), ("b", "s", "a"): ([1], [0])})
    with pytest.raises(ValueError, match="nope"):
        hg.num_edges("nope")
    with pytest.raises(ValueError, match="zzz"):
        hg.num_nodes("zzz")
    g = topograph.graph(([0], [1]))
    with pytest.raises(ValueError, match="reduce_op"):
        topograph.ops.gspmm(g, "copy_lhs", "median", torch.ones(2, 1), None)
    with pytest.raises(ValueError, match="op must be"):
        topograph.ops.gsddmm(g, "pow", torch.ones(2, 1), torch.ones(2, 1))
    with pytest.raises(ValueError, match="lhs_target"):
        topograph.ops.gsddmm(g, "add", torch.ones(2, 1), torch.ones(2, 1), "w", "v")
    with pytest.raises(ValueError, match="norm_by"):
        topograph.ops.edge_softmax(g, torch.ones(1, 1), norm_by="both")
    with pytest.raises(TypeError, match="topograph graph"):
        topograph.ops.copy_u_sum("g", torch.ones(2, 1))


def test_bad_shapes_carry_topograph_messages():
    g, src, dst, n = build("multi_loop_isolated", torch.int64)
    E = src.numel()
    with pytest.raises(ValueError, match="rows"):
        topograph.ops.copy_u_sum(g, torch.ones(n + 1, 3))  # one row too many
    with pytest.raises(ValueError, match=r"\[4\].*\[3\]|\[3\].*\[4\]"):
        topograph.ops.u_mul_e_sum(g, torch.ones(n, 4), torch.ones(E, 3))  # rows do not broadcast
    with pytest.raises(ValueError):
        topograph.ops.u_dot_v(g, torch.ones(n, 4), torch.ones(n, 3))  # dot needs equal last dims
    with pytest.raises(ValueError, match="rows"):
        topograph.ops.edge_softmax(g, torch.ones(E - 1, 2))
    with pytest.raises(ValueError, match="scalar"):
        topograph.ops.edge_softmax(g, torch.tensor(1.0))


def test_bad_dtypes_are_type_errors():
    """Integer, bool and complex features are a TypeError naming the operand (DGL refuses them too); float16,
    bfloat16 and float64 are taken, as DGL takes them (test_dtypes.py), and give the input's dtype."""
    g, src, dst, n = build("random", torch.int32)
    with pytest.raises(TypeError, match=r"rhs_data: features must be float16, bfloat16, float32 or float64, got "
                                        r"torch\.int64"):
        topograph.ops.copy_e_sum(g, torch.ones(src.numel(), 2, dtype=torch.int64))
    with pytest.raises(TypeError, match="lhs_data.*torch.int32"):
        topograph.ops.copy_u_sum(g, torch.ones(n, 2, dtype=torch.int32))
    with pytest.raises(TypeError, match="logits.*torch.bool"):
        topograph.ops.edge_softmax(g, torch.ones(src.numel(), 2, dtype=torch.bool))
    with pytest.raises(TypeError, match="complex64"):
        topograph.ops.u_dot_v(g, torch.ones(n, 2), torch.ones(n, 2, dtype=torch.complex64))
    with pytest.raises(TypeError, match="Tensor"):
        topograph.ops.copy_u_sum(g, [[1.0]] * n)
    assert topograph.ops.copy_u_sum(g, torch.ones(n, 2, dtype=torch.float64)).dtype == torch.float64
    assert topograph.ops.edge_softmax(g, torch.ones(src.numel(), 2, dtype=torch.float16)).dtype == torch.float16
    # the C++ boundary takes float32 only, should the Python layer (which casts) be bypassed
    with pytest.raises(TypeError, match="float32"):
        topograph._C.edge_softmax(g._g, 0, torch.ones(src.numel(), 2, dtype=torch.float64), False, False)


def test_the_binding_refuses_codes_and_indices_out_of_range():
    """topograph._C called directly, as a caller bypassing the Python layer's name lookups would (the fuzz
    target fuzz_graph_api drives the same C++ calls): op codes, indices and fan-outs out of range are
    ValueErrors naming them; the codes were cast to enums unchecked and computed some reducer."""
    g = topograph.graph(([0, 1], [1, 2]))
    x = torch.ones(3, 2)
    with pytest.raises(ValueError, match="reducer code 99 is outside"):
        topograph._C.gspmm(g._g, 0, 0, 99, x, None, False, False)
    with pytest.raises(ValueError, match="message op code 6 is outside"):
        topograph._C.gspmm(g._g, 0, 6, 0, x, None, False, False)
    with pytest.raises(ValueError, match="gsddmm: op code 99 is outside"):
        topograph._C.gsddmm(g._g, 0, 99, x, x, 0, 1, False, False)
    with pytest.raises(ValueError, match="target code 9 is outside"):
        topograph._C.gsddmm(g._g, 0, 0, x, x, 9, 1, False, False)
    with pytest.raises(ValueError, match="node type index 5 is outside"):
        g._g.parent_ids(True, 5)
    with pytest.raises(ValueError, match="relation index 5 is outside"):
        g._g.parent_ids(False, 5)
    with pytest.raises(ValueError, match=r"fan-out \[0\] = -5"):  # the Python layer checks it too
        g._g.sample_neighbors({"_N": [2]}, [-5], 1, "in", False, [], [])


@pytest.mark.skipif(topograph.built_with_cuda, reason="this build has the CUDA backend")
def test_cuda_in_a_cpu_only_build_is_a_runtime_error():
    g = topograph.graph(([0], [1]))
    with pytest.raises(RuntimeError, match="no CUDA backend"):
        g.to("cuda")
    if torch.cuda.is_available():  # a real CUDA tensor, where the machine has a GPU
        with pytest.raises(RuntimeError, match="no CUDA backend"):
            topograph.ops.copy_u_sum(g, torch.ones(2, 1, device="cuda"))


def test_many_bad_calls_in_a_row_leave_the_process_working():
    g, src, dst, n = build("random", torch.int64)
    for rows in [0, 1, n - 1, n + 5, 3 * n]:
        for feat in [(), (3,), (2, 5)]:
            x = torch.randn((rows,) + feat)
            try:
                topograph.ops.copy_u_sum(g, x)
            except ValueError:
                assert rows != n
    assert topograph.ops.copy_u_sum(g, torch.ones(n, 1)).sum().item() == src.numel()

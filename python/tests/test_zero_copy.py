"""The zero-copy path: the kernels read the caller's torch memory, and results come back without copies."""
import gc

import pytest
import torch

import topograph
from conftest import build


def test_a_contiguous_tensor_crosses_without_a_copy_both_ways():
    x = torch.randn(5, 3)
    seen = topograph._C._roundtrip(x)  # the topo::Tensor the kernels would get, handed back to torch
    assert seen.data_ptr() == x.data_ptr() and seen.shape == x.shape
    seen[1, 2] = 42.0  # a write through Topograph's view lands in the caller's tensor
    assert x[1, 2].item() == 42.0
    x[0, 0] = -7.0
    assert seen[0, 0].item() == -7.0
    view = x[2:]  # a contiguous view at an offset: still the caller's memory
    assert topograph._C._roundtrip(view).data_ptr() == view.data_ptr()


def test_non_contiguous_tensors_are_refused_by_the_boundary():
    with pytest.raises(ValueError, match="contiguous"):
        topograph._C._roundtrip(torch.randn(3, 4).t())


def test_the_backward_kernel_reads_the_callers_memory():
    # u_mul_e's gradient w.r.t. e is u[src] * grad: computed from u's memory at backward time. Changing u's
    # memory behind autograd's back (.data: no version bump) changes the gradient: no copy was kept.
    g, src, dst, n = build("random", torch.int64)
    u = torch.randn(n, 2)
    e = torch.randn(src.numel(), 2, requires_grad=True)
    out = topograph.ops.u_mul_e_sum(g, u, e)
    u.data.mul_(3.0)
    out.sum().backward()
    torch.testing.assert_close(e.grad, u[src])


def test_an_in_place_change_before_backward_is_caught():
    g, src, dst, n = build("random", torch.int64)
    u = torch.randn(n, 2, requires_grad=True)
    e = torch.randn(src.numel(), 2)
    out = topograph.ops.u_mul_e_sum(g, u, e)
    e.mul_(2.0)  # e is saved for backward: torch's version counter notices
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_outputs_keep_topographs_buffer_alive_and_tapes_are_freed():
    g, src, dst, n = build("random", torch.int64)
    x = torch.randn(n, 4, requires_grad=True)
    out = topograph.ops.copy_u_sum(g, x)
    del g  # the output owns its buffer; the tape owns the graph's formats
    gc.collect()
    out.sum().backward()
    assert x.grad is not None and x.grad.shape == x.shape
    # Many steps, with and without backward: memory does not grow with the number of calls (each tape goes
    # with its autograd graph). A leaked tape would hold its 3.2 MB input and output: 100 steps, 640 MB.
    g, *_ = build("random", torch.int64)
    import resource
    for step in range(100):
        y = topograph.ops.edge_softmax(g, torch.randn(g.num_edges(), 20000, requires_grad=True))
        if step % 2:
            y.sum().backward()
        if step == 10:
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss < 100_000  # KiB


def test_concurrent_calls_from_python_threads_agree():
    # The kernels run with the GIL released; the borrowed inputs are released with it re-acquired. Several
    # threads on one graph (its formats are built once, under call_once) must each get the serial result.
    import threading

    g, src, dst, n = build("random", torch.int64)
    xs = [torch.randn(n, 2, 8, requires_grad=True) for _ in range(4)]
    want = [topograph.ops.copy_u_mean(g, x).detach() for x in xs]
    got, errors = [None] * 4, []

    def work(i):
        try:
            for _ in range(50):
                out = topograph.ops.copy_u_mean(g, xs[i])
                out.sum().backward()
            got[i] = out.detach()
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b)

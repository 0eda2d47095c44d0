"""dgl.backend (`import dgl.backend as F`), the tensor helpers of DGL's PyTorch backend that older examples and
user code call: F.tensor, F.zeros(shape, dtype, ctx), F.cpu(), F.asnumpy, F.gather_row, F.sum(x, dim), F.float32,
... Each is DGL's PyTorch implementation (dgl/backend/pytorch/tensor.py) over plain torch; topograph has the one
backend, so backend_name is 'pytorch'. DGL's internals that take its C NDArray (zerocopy_to_dgl_ndarray, ...)
are not here."""
import builtins
import contextlib
import numbers

import torch as th

backend_name = "pytorch"


def data_type_dict():
    return {"float16": th.float16, "float32": th.float32, "float64": th.float64, "uint8": th.uint8,
            "int8": th.int8, "int16": th.int16, "int32": th.int32, "int64": th.int64, "bool": th.bool}


globals().update(data_type_dict())  # F.float32, F.int64, ... as DGL's backend sets them


def cpu():
    return th.device("cpu")


def tensor(data, dtype=None):
    if isinstance(data, numbers.Number):
        data = [data]
    if isinstance(data, list) and len(data) > 0 and isinstance(data[0], th.Tensor):
        data = th.stack(data) if data[0].ndim > 0 else th.stack([d.reshape(()) for d in data])
    if isinstance(data, th.Tensor):
        return th.as_tensor(data, dtype=dtype, device=data.device)
    return th.as_tensor(data, dtype=dtype)


def as_scalar(data):
    return data.item()


def get_preferred_sparse_format():
    return "coo"


def is_tensor(obj):
    return isinstance(obj, th.Tensor)


def shape(input):
    return input.shape


def dtype(input):
    return input.dtype


def ndim(input):
    return input.dim()


def context(input):
    return input.device


def device_type(ctx):
    return th.device(ctx).type


def device_id(ctx):
    ctx = th.device(ctx)
    if ctx.index is None:
        return 0 if ctx.type == "cpu" else th.cuda.current_device()
    return ctx.index


def to_backend_ctx(ctx):
    return th.device(ctx)


def astype(input, ty):
    return input.type(ty)


def asnumpy(input):
    if isinstance(input, th.Tensor) and input.is_sparse:
        input = input.to_dense()
    return input.cpu().detach().numpy()


zerocopy_to_numpy = asnumpy


def zerocopy_from_numpy(np_array):
    return th.as_tensor(np_array)


def copy_to(input, ctx, **kwargs):
    return input.to(th.device(ctx), **kwargs)


def is_recording():
    return th.is_grad_enabled()


def sum(input, dim, keepdims=False):
    return th.sum(input, dim=dim, keepdim=keepdims)


def reduce_sum(input):
    return input.sum()


def floor_div(in1, in2):
    return in1 // in2


def cumsum(input, dim):
    return th.cumsum(input, dim=dim)


def mean(input, dim):
    return th.mean(input, dim=dim)


def reduce_mean(input):
    return input.mean()


def max(input, dim):
    return th.max(input, dim=dim)[0]  # DGL's: the values only


def reduce_max(input):
    return input.max()


def min(input, dim):
    return th.min(input, dim=dim)[0]


def reduce_min(input):
    return input.min()


def argsort(input, dim, descending):
    return th.argsort(input, dim=dim, descending=descending)


def topk(input, k, dim, descending=True):
    return th.topk(input, k, dim, largest=descending)[0]


def argtopk(input, k, dim, descending=True):
    return th.topk(input, k, dim, largest=descending)[1]


def argmax(input, dim):
    return th.argmax(input, dim=dim)


def argmin(input, dim):
    return th.argmin(input, dim=dim)


def exp(input):
    return th.exp(input)


def inverse(input):
    return th.inverse(input)


def sqrt(input):
    return th.sqrt(input)


def softmax(input, dim=-1):
    return th.softmax(input, dim=dim)


def cat(seq, dim):
    return th.cat(seq, dim=dim)


def stack(seq, dim):
    return th.stack(seq, dim=dim)


def split(input, sizes_or_sections, dim):
    return th.split(input, sizes_or_sections, dim)


def repeat(input, repeats, dim):
    return th.repeat_interleave(input, repeats, dim)


def gather_row(data, row_index):
    return th.index_select(data, 0, row_index.long())


def slice_axis(data, axis, begin, end):
    return th.narrow(data, axis, begin, end - begin)


def take(data, indices, dim):
    new_shape = data.shape[:dim] + indices.shape + data.shape[dim + 1:]
    return th.index_select(data, dim, indices.view(-1)).view(new_shape)


def narrow_row(x, start, stop):
    return x[start:stop]


def index_add_inplace(data, row_idx, value):
    data.index_add_(0, row_idx, value)


def scatter_row(data, row_index, value):
    return data.index_copy(0, row_index.long(), value)


def scatter_row_inplace(data, row_index, value):
    data[row_index.long()] = value


def squeeze(input, dim):
    return th.squeeze(input, dim)


def unsqueeze(input, dim):
    return th.unsqueeze(input, dim)


def reshape(input, shape):
    return th.reshape(input, shape)


def swapaxes(input, axis1, axis2):
    return th.transpose(input, axis1, axis2)


def empty(shape, dtype, ctx):
    return th.empty(shape, dtype=dtype, device=ctx)


def zeros(shape, dtype, ctx):
    return th.zeros(shape, dtype=dtype, device=ctx)


def zeros_like(input):
    return th.zeros_like(input)


def ones(shape, dtype, ctx):
    return th.ones(shape, dtype=dtype, device=ctx)


def uniform(shape, dtype, ctx, low, high):
    return th.empty(shape, dtype=dtype, device=ctx).uniform_(low, high)


def randint(shape, dtype, ctx, low, high):
    return th.randint(low, high, shape, dtype=dtype, device=ctx)


def pad_packed_tensor(input, lengths, value, l_min=None):
    """[sum(lengths), ...] -> [len(lengths), max(lengths) (at least l_min), ...], padded with value."""
    old_shape = input.shape
    if isinstance(lengths, th.Tensor):
        lengths = lengths.tolist()
    max_len = builtins.max(lengths) if len(lengths) else 0
    if l_min is not None:
        max_len = builtins.max(max_len, l_min)
    x = input.new_full((len(lengths) * max_len, *old_shape[1:]), value)
    index = th.cat([th.arange(i * max_len, i * max_len + n) for i, n in enumerate(lengths)]
                   or [th.zeros(0, dtype=th.int64)]).to(input.device)
    return scatter_row(x, index, input).view(len(lengths), max_len, *old_shape[1:])


def pack_padded_tensor(input, lengths):
    """[B, L, ...] padded -> [sum(lengths), ...]: the first lengths[i] rows of each input[i]."""
    if isinstance(lengths, th.Tensor):
        lengths = lengths.tolist()
    max_len = input.shape[1]
    index = th.cat([th.arange(i * max_len, i * max_len + n) for i, n in enumerate(lengths)]
                   or [th.zeros(0, dtype=th.int64)]).to(input.device)
    return gather_row(input.reshape(-1, *input.shape[2:]), index)


def boolean_mask(input, mask):
    if mask.dtype != th.bool:
        mask = th.as_tensor(mask, dtype=th.bool)
    return input[mask]


def equal(x, y):
    return x == y


def allclose(x, y, rtol=1e-4, atol=1e-4):
    return th.allclose(x, y, rtol=rtol, atol=atol)


def logical_not(input):
    return ~input


def logical_and(input1, input2):
    return input1 & input2


def clone(input):
    return input.clone()


def clamp(data, min_val, max_val):
    return th.clamp(data, min_val, max_val)


def replace_inf_with_zero(x):
    return th.masked_fill(x, th.isinf(x), 0)


def count_nonzero(input):
    return int(th.count_nonzero(input))


def unique(input, return_inverse=False, return_counts=False):
    if input.dtype == th.bool:
        input = input.type(th.int8)
    return th.unique(input, return_inverse=return_inverse, return_counts=return_counts)


def full_1d(length, fill_value, dtype, ctx):
    return th.full((length,), fill_value, dtype=dtype, device=ctx)


def nonzero_1d(input):
    x = th.nonzero(input, as_tuple=False).squeeze()
    return x if x.dim() == 1 else x.view(-1)


def sort_1d(input):
    return th.sort(input)


def arange(start, stop, dtype=th.int64, ctx=None):
    return th.arange(start, stop, dtype=dtype, device=ctx)


def rand_shuffle(arr):
    return arr[th.randperm(len(arr))]


def zerocopy_to_dlpack(input):
    return th.utils.dlpack.to_dlpack(input.contiguous())


def zerocopy_from_dlpack(dlpack_tensor):
    return th.utils.dlpack.from_dlpack(dlpack_tensor)


def sync():
    if th.cuda.is_available():
        th.cuda.synchronize()


def attach_grad(x):
    if x.grad is not None:
        x.grad.zero_()
        return x
    return x.requires_grad_()


def backward(x, head_gradient=None):
    if head_gradient is not None and head_gradient.shape[0] == 1 and len(head_gradient.shape) == 1:
        head_gradient = head_gradient.squeeze()  # DGL's: a [1] head gradient of a scalar
    x.backward(head_gradient)


def grad(x):
    return x.grad


def is_no_grad(x):
    return x.grad is None or (x.grad == 0).all()


@contextlib.contextmanager
def record_grad():
    with th.enable_grad():
        yield


no_grad = th.no_grad

__all__ = [n for n in list(globals()) if not n.startswith("_") and n not in ("builtins", "contextlib", "numbers",
                                                                              "np", "th")]

"""Collectives that are differentiable by construction
(``torch.distributed.nn.functional``): each returns new tensors, and its
backward is the collective that is its adjoint:

- ``all_reduce(SUM)``: the gradient is the all-reduce (sum) of the gradients;
- ``all_gather``: each rank's gradient is the sum over ranks of the gradients
  of its block (a reduce-scatter);
- ``broadcast`` from ``src``: the gradients summed onto ``src`` (a reduce),
  zero elsewhere.

PyTorch's plain collectives silently break backward (pytorch#121587,
#190007, #153016); nbgrad's plain ones refuse tensors that require grad and
point here.
"""
from ...autograd.function import Function
from ...creation import empty
from ...ops.joining import stack
from ...tape import grad_mode
from .. import collectives as c
from ..process_group import group_of


def _copy(t):
    with grad_mode.no_grad():
        return t.detach().clone().contiguous()


def _empty_like(t):
    return empty(t.shape, dtype=t.dtype, device=t.device)


class _AllReduce(Function):
    @staticmethod
    def forward(ctx, op, group, tensor):
        if op not in (c.ReduceOp.SUM, c.ReduceOp.AVG):
            raise ValueError("nbgrad.distributed.nn.all_reduce: only SUM and AVG have a gradient")
        ctx.op, ctx.group = op, group
        out = _copy(tensor)
        c.all_reduce(out, op, group)
        return out

    @staticmethod
    def backward(ctx, grad):
        out = _copy(grad)
        c.all_reduce(out, ctx.op, ctx.group)
        return None, None, out


class _AllGather(Function):
    @staticmethod
    def forward(ctx, group, tensor):
        ctx.group = group
        outs = [_empty_like(tensor) for _ in range(group_of(group).size())]
        c.all_gather(outs, _copy(tensor), group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        stacked = _copy(stack(list(grads)))
        out = _empty_like(grads[0])
        c.reduce_scatter_tensor(out, stacked, c.ReduceOp.SUM, ctx.group)
        return None, out


class _Broadcast(Function):
    @staticmethod
    def forward(ctx, src, group, tensor):
        ctx.src, ctx.group = src, group
        out = _copy(tensor)
        c.broadcast(out, src, group)
        return out

    @staticmethod
    def backward(ctx, grad):
        out = _copy(grad)
        c.reduce(out, ctx.src, c.ReduceOp.SUM, ctx.group)
        if group_of(ctx.group).rank() != ctx.src:
            out = out.zero_()
        return None, None, out


class _ReduceScatter(Function):
    @staticmethod
    def forward(ctx, op, group, output, *inputs):
        ctx.op, ctx.group = op, group
        out = _empty_like(output)
        c.reduce_scatter_tensor(out, _copy(stack(list(inputs))), op, group)
        return out

    @staticmethod
    def backward(ctx, grad):
        size = group_of(ctx.group).size()
        outs = [_empty_like(grad) for _ in range(size)]
        c.all_gather(outs, _copy(grad), ctx.group)
        if ctx.op is c.ReduceOp.AVG:
            outs = [o / size for o in outs]
        return (None, None, None, *outs)


def all_reduce(tensor, op=c.ReduceOp.SUM, group=None):
    """The reduction of ``tensor`` over all ranks (SUM or AVG), as a new
    tensor; its gradient is the same reduction of the gradients."""
    return _AllReduce.apply(op, group, tensor)


def all_gather(tensor, group=None):
    """Every rank's ``tensor``, as a tuple in rank order; the gradient of
    this rank's input is the sum over ranks of the gradients of its block."""
    return _AllGather.apply(group, tensor)


def broadcast(tensor, src, group=None):
    """Rank ``src``'s ``tensor`` on every rank, as a new tensor; the
    gradients are summed onto ``src``."""
    return _Broadcast.apply(src, group, tensor)


def reduce_scatter(output, input_list, op=c.ReduceOp.SUM, group=None):
    """The reduction over ranks of ``input_list[rank]`` (one tensor per
    rank), as a new tensor shaped as ``output``; the gradient of each input is
    the all-gather of the gradients."""
    return _ReduceScatter.apply(op, group, output, *input_list)

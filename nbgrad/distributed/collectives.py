"""Collectives on tensors, as ``torch.distributed``'s: MPI's non-blocking
operations on the tensors' own memory.

CPU tensors are handed to MPI without a copy (they must be contiguous, as
PyTorch requires). CUDA tensors go to MPI as device buffers when the MPI
library is CUDA-aware, and are otherwise staged through host memory (copied
out, reduced, copied back); ``transport(tensor)`` says which. Each call is
an in-place write: the tensors it writes get one version bump, named after
the collective, when the write is complete (at ``wait()`` for
``async_op=True``). The plain collectives are not differentiable and refuse
a tensor that requires grad while grad mode is on (the differentiable ones
are ``nbgrad.distributed.nn``'s).
"""
import enum
import time

import numpy as np

from ..tape import grad_mode
from ..tape.graph import describe
from ..tensor import Tensor
from .process_group import group_of, mpi


class ReduceOp(enum.Enum):
    """How ``all_reduce``, ``reduce`` and ``reduce_scatter_tensor`` combine values."""
    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"


def _mpi_op(op):
    MPI = mpi()
    return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
            ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX}[op]


def _wait(request, group, name, status=None):
    """Wait for ``request`` at most the group's timeout; then raise. MPI
    progresses a request only inside MPI calls, so this polls ``Test``,
    yielding the core between polls (ranks may share cores)."""
    if request.Test(status):
        return
    deadline = time.monotonic() + group.timeout.total_seconds()
    spins = 0
    while not request.Test(status):
        spins += 1
        time.sleep(0)
        if spins % 4096 == 0 and time.monotonic() > deadline:
            raise RuntimeError(f"{name}(): timed out after {group.timeout} waiting for the "
                               f"other ranks (rank {group.rank()} of {group.size()})")


class Work:
    """What ``async_op=True`` returns: ``wait()`` blocks until the collective
    has completed (at most the group's timeout) and its results are in place."""

    def __init__(self, requests, group, name, finish=None):
        self.requests, self.group, self.name, self.finish = requests, group, name, finish
        self.done = False

    def is_completed(self):
        if not self.done and all(r.Test() for r in self.requests):
            self._complete()
        return self.done

    def wait(self, timeout=None):
        if not self.done:
            for request in self.requests:
                _wait(request, self.group, self.name)
            self._complete()
        return True

    def _complete(self):
        self.done = True
        if self.finish is not None:
            self.finish()


def _cuda_aware():
    """Whether the MPI library takes device buffers (MPIX_Query_cuda_support)."""
    query = getattr(mpi(), "Query_cuda_support", None)
    try:
        return bool(query()) if query is not None else False
    except Exception:
        return False


def transport(tensor):
    """How collectives move ``tensor``: ``"host"`` (a CPU tensor, zero-copy),
    ``"cuda-aware"`` (a device buffer handed to MPI) or ``"staged"`` (a CUDA
    tensor copied through host memory)."""
    if tensor.device.type == "cpu":
        return "host"
    return "cuda-aware" if _cuda_aware() else "staged"


class _Buffer:
    """A tensor's memory as MPI sees it, and how results get back into it."""

    def __init__(self, tensor, name, written, device_buffer=True):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"{name}(): expected a Tensor, got {type(tensor).__name__}")
        if written and grad_mode.is_grad_enabled() and tensor.requires_grad:
            raise RuntimeError(
                f"{name}(): writes {describe(tensor.shape, tensor.dtype)} in place, which requires "
                f"grad, and the collective has no gradient (in PyTorch it silently breaks "
                f"backward). Use nbgrad.distributed.nn.{name}, which is differentiable, or run "
                f"it on tensor.detach() under nbgrad.no_grad().")
        if not tensor.is_contiguous():
            raise ValueError(f"{name}(): Tensors must be contiguous")
        self.tensor, self.written = tensor, written
        self.how = transport(tensor)
        if self.how == "cuda-aware" and not device_buffer:
            self.how = "staged"  # lists of tensors go through one host buffer
        data = tensor._data
        if self.how == "host":
            self.array = data.reshape(-1) if data.ndim else data.reshape(1)
        elif self.how == "cuda-aware":
            self.array = tensor._backend.kernel_argument(data).reshape(-1)
        else:
            self.array = tensor._backend.to_numpy(data).reshape(-1)

    def done(self, name, scale=None):
        """The collective has written ``array``: finish the write into the tensor."""
        if scale is not None:  # (AVG: a host array, see device_buffer)
            self.array /= self.array.dtype.type(scale)
        if self.how == "staged":
            data = self.tensor._data
            data[...] = self.tensor._backend.asarray(self.array.reshape(data.shape))
        self.tensor._version_counter.bump(name, self.tensor._data)


def _run(name, group, requests, finish, async_op):
    work = Work(requests, group, name, finish)
    if async_op:
        return work
    work.wait()
    return None


def _float_for_avg(buffer, op, name):
    if op is ReduceOp.AVG and not buffer.tensor.dtype.is_floating_point:
        raise ValueError(f"{name}(): ReduceOp.AVG needs a floating point tensor, got "
                         f"{buffer.tensor.dtype}")


def _op(op, name):
    if not isinstance(op, ReduceOp):
        raise TypeError(f"{name}(): op must be a nbgrad.distributed.ReduceOp, not {op!r}")
    return op


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces ``tensor`` across all ranks in place: every rank gets the result."""
    group, op = group_of(group), _op(op, "all_reduce")
    buf = _Buffer(tensor, "all_reduce", True, device_buffer=op is not ReduceOp.AVG)
    _float_for_avg(buf, op, "all_reduce")
    request = group.comm.Iallreduce(mpi().IN_PLACE, buf.array, op=_mpi_op(op))
    scale = group.size() if op is ReduceOp.AVG else None
    return _run("all_reduce", group, [request], lambda: buf.done("all_reduce", scale), async_op)


def broadcast(tensor, src, group=None, async_op=False):
    """Copies ``tensor`` of rank ``src`` into ``tensor`` on every other rank."""
    group = group_of(group)
    buf = _Buffer(tensor, "broadcast", group.rank() != src)
    request = group.comm.Ibcast(buf.array, root=src)
    finish = (lambda: buf.done("broadcast")) if group.rank() != src else None
    return _run("broadcast", group, [request], finish, async_op)


def reduce(tensor, dst, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces ``tensor`` across all ranks into ``tensor`` of rank ``dst``."""
    group, op = group_of(group), _op(op, "reduce")
    root = group.rank() == dst
    buf = _Buffer(tensor, "reduce", root, device_buffer=op is not ReduceOp.AVG)
    _float_for_avg(buf, op, "reduce")
    MPI = mpi()
    request = group.comm.Ireduce(MPI.IN_PLACE if root else buf.array, buf.array if root else None,
                                 op=_mpi_op(op), root=dst)
    scale = group.size() if op is ReduceOp.AVG else None
    return _run("reduce", group, [request], (lambda: buf.done("reduce", scale)) if root else None,
                async_op)


def _same(buffers, reference, name):
    for b in buffers:
        if b.tensor.dtype is not reference.tensor.dtype:
            raise ValueError(f"{name}(): tensors must all have dtype {reference.tensor.dtype}, "
                             f"got {b.tensor.dtype}")


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Gathers each rank's ``input_tensor`` into ``output_tensor`` (world size
    times as many elements), in rank order."""
    group = group_of(group)
    out = _Buffer(output_tensor, "all_gather_into_tensor", True)
    inp = _Buffer(input_tensor, "all_gather_into_tensor", False)
    _same([out], inp, "all_gather_into_tensor")
    if out.array.size != inp.array.size * group.size():
        raise ValueError("all_gather_into_tensor(): output tensor size must be equal to "
                         "world_size times input tensor size")
    request = group.comm.Iallgather(inp.array, out.array)
    return _run("all_gather_into_tensor", group, [request],
                lambda: out.done("all_gather_into_tensor"), async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Gathers each rank's ``tensor`` into ``tensor_list[rank]`` on every rank."""
    group = group_of(group)
    if len(tensor_list) != group.size():
        raise ValueError(f"all_gather(): tensor_list must hold {group.size()} tensors, one per "
                         f"rank, not {len(tensor_list)}")
    inp = _Buffer(tensor, "all_gather", False, device_buffer=False)
    outs = [_Buffer(t, "all_gather", True, device_buffer=False) for t in tensor_list]
    _same(outs, inp, "all_gather")
    n = inp.array.size
    for o in outs:
        if o.array.size != n:
            raise ValueError("all_gather(): every tensor of tensor_list must have the input's size")
    gathered = np.empty(n * group.size(), inp.array.dtype)
    request = group.comm.Iallgather(inp.array, gathered)

    def finish():
        for k, o in enumerate(outs):
            o.array[...] = gathered[k * n:(k + 1) * n]
            o.done("all_gather")
    return _run("all_gather", group, [request], finish, async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces ``input`` (world size times ``output``'s elements) across all
    ranks and gives each rank its block, in rank order, in ``output``."""
    group, op = group_of(group), _op(op, "reduce_scatter_tensor")
    out = _Buffer(output, "reduce_scatter_tensor", True, device_buffer=op is not ReduceOp.AVG)
    inp = _Buffer(input, "reduce_scatter_tensor", False)
    _same([out], inp, "reduce_scatter_tensor")
    _float_for_avg(out, op, "reduce_scatter_tensor")
    if inp.array.size != out.array.size * group.size():
        raise ValueError("reduce_scatter_tensor(): input tensor must be the same size as output "
                         "size times world size")
    request = group.comm.Ireduce_scatter_block(inp.array, out.array, op=_mpi_op(op))
    scale = group.size() if op is ReduceOp.AVG else None
    return _run("reduce_scatter_tensor", group, [request],
                lambda: out.done("reduce_scatter_tensor", scale), async_op)


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False):
    """Gathers each rank's ``tensor`` into ``gather_list`` on rank ``dst``."""
    group = group_of(group)
    inp = _Buffer(tensor, "gather", False, device_buffer=False)
    root = group.rank() == dst
    if root and (gather_list is None or len(gather_list) != group.size()):
        raise ValueError(f"gather(): gather_list on the destination rank must hold "
                         f"{group.size()} tensors")
    if not root and gather_list:
        raise ValueError("gather(): gather_list must be given on the destination rank only")
    outs = [_Buffer(t, "gather", True, device_buffer=False) for t in gather_list] if root else []
    n = inp.array.size
    gathered = np.empty(n * group.size(), inp.array.dtype) if root else None
    request = group.comm.Igather(inp.array, gathered, root=dst)

    def finish():
        for k, o in enumerate(outs):
            o.array[...] = gathered[k * n:(k + 1) * n]
            o.done("gather")
    return _run("gather", group, [request], finish if root else None, async_op)


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False):
    """Gives ``scatter_list[rank]`` of rank ``src`` to each rank's ``tensor``."""
    group = group_of(group)
    out = _Buffer(tensor, "scatter", True, device_buffer=False)
    root = group.rank() == src
    if root and (scatter_list is None or len(scatter_list) != group.size()):
        raise ValueError(f"scatter(): scatter_list on the source rank must hold {group.size()} "
                         "tensors")
    if not root and scatter_list:
        raise ValueError("scatter(): scatter_list must be given on the source rank only")
    send = None
    if root:
        parts = [_Buffer(t, "scatter", False, device_buffer=False) for t in scatter_list]
        send = np.concatenate([p.array for p in parts])
    request = group.comm.Iscatter(send, out.array, root=src)
    return _run("scatter", group, [request], lambda: out.done("scatter"), async_op)


def barrier(group=None, async_op=False, device_ids=None):
    """Waits until every rank of ``group`` has reached this call."""
    group = group_of(group)
    return _run("barrier", group, [group.comm.Ibarrier()], None, async_op)


def isend(tensor, dst, group=None, tag=0):
    """Sends ``tensor`` to rank ``dst`` without waiting: returns a ``Work``."""
    group = group_of(group)
    buf = _Buffer(tensor, "send", False)
    return Work([group.comm.Isend(buf.array, dest=dst, tag=tag)], group, "send")


def irecv(tensor, src=None, group=None, tag=0):
    """Receives into ``tensor`` from rank ``src`` (any rank when None) without waiting."""
    group = group_of(group)
    buf = _Buffer(tensor, "recv", True)
    MPI = mpi()
    return Work([group.comm.Irecv(buf.array, source=MPI.ANY_SOURCE if src is None else src,
                                  tag=tag)], group, "recv", lambda: buf.done("recv"))


def send(tensor, dst, group=None, tag=0):
    """Sends ``tensor`` to rank ``dst``."""
    isend(tensor, dst, group, tag).wait()


def recv(tensor, src=None, group=None, tag=0):
    """Receives into ``tensor`` from rank ``src`` (any rank when None);
    returns the sender's rank."""
    group = group_of(group)
    buf = _Buffer(tensor, "recv", True)
    MPI = mpi()
    status = MPI.Status()
    request = group.comm.Irecv(buf.array, source=MPI.ANY_SOURCE if src is None else src, tag=tag)
    _wait(request, group, "recv", status)
    buf.done("recv")
    return status.Get_source()

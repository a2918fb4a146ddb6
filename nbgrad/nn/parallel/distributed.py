"""``DistributedDataParallel`` on MPI: gradients averaged in buckets that
start all-reducing, asynchronously, as soon as backward has accumulated the
gradients of all their parameters (post-accumulate-grad hooks), so the
communication of early buckets overlaps the rest of backward."""
import contextlib

from ... import distributed as dist
from ...creation import zeros
from ...tape import grad_mode
from ..module import Module

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. This "
    "error indicates that your module has parameters that were not used in producing loss. You "
    "can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `nbgrad.nn.parallel.DistributedDataParallel`, and by "
    "making sure all `forward` function outputs participate in calculating loss.")


class _Bucket:
    """Parameters whose gradients are all-reduced together, as one flat tensor."""

    def __init__(self, params):
        self.params = params
        self.offsets = []
        total = 0
        for p in params:
            self.offsets.append(total)
            total += p.numel()
        self.flat = zeros(total, dtype=params[0].dtype, device=params[0].device)
        self.ready = set()
        self.work = None

    def launch(self, group):
        """Copy the gradients into the flat tensor and start its all-reduce (an average)."""
        flat = self.flat
        for p, offset in zip(self.params, self.offsets):
            part = flat[offset:offset + p.numel()]
            if p.grad is None:
                part.zero_()
            else:
                part.copy_(p.grad.reshape(-1))
        self.work = dist.all_reduce(flat, dist.ReduceOp.AVG, group, async_op=True)

    def finish(self):
        """Wait for the all-reduce and put the averages back into the gradients."""
        self.work.wait()
        self.work = None
        for p, offset in zip(self.params, self.offsets):
            part = self.flat[offset:offset + p.numel()].view(p.shape)
            if p.grad is None:
                p.grad = part.clone()
            else:
                p.grad.copy_(part)
        self.ready.clear()


class DistributedDataParallel(Module):
    r"""Data parallelism over the ranks of a process group, as PyTorch's.

    At construction, rank 0's parameters and buffers are broadcast to every
    rank. In each backward, the gradients are averaged across ranks in
    buckets of about ``bucket_cap_mb`` megabytes (parameters in reverse
    order, as backward produces their gradients): a bucket starts its
    non-blocking all-reduce as soon as all its gradients are accumulated,
    and the last gradient's hook waits for all of them, so ``.grad`` holds
    the averages when ``backward()`` returns.

    Args:
        module (Module): the model; reachable as ``.module`` (state-dict keys
            get the ``module.`` prefix, as PyTorch's).
        broadcast_buffers (bool): broadcast rank 0's buffers (BatchNorm's
            running statistics) at every forward. Default: True.
        process_group: the group (default: the default group).
        bucket_cap_mb (float): bucket size. Default: 25.
        find_unused_parameters (bool): after each forward, find the
            parameters its outputs do not depend on and count their (zero)
            gradients as ready; without it an unused parameter makes the next
            forward raise PyTorch's error. Default: False.

    ``device_ids``, ``output_device``, ``dim``, ``gradient_as_bucket_view``
    and ``static_graph`` are accepted for compatibility. ``no_sync()``
    accumulates gradients locally (no communication) inside its block.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False,
                 check_reduction=False, gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        self.module = module
        self.process_group = process_group
        self._group = dist.process_group.group_of(process_group)
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 2 ** 20)
        self.require_backward_grad_sync = True
        self._overlap = True  # False: every bucket waits for the end of backward (for measurements)
        params = [p for p in module.parameters() if p.requires_grad]
        with grad_mode.no_grad():
            for t in list(module.parameters()) + list(module.buffers()):
                dist.broadcast(t.detach(), 0, process_group)
        self._buckets = self._make_buckets(params)
        self._bucket_of = {}
        for bucket in self._buckets:
            for p in bucket.params:
                self._bucket_of[id(p)] = bucket
        self._launched = 0
        self._expected_unused = ()
        for p in params:
            p.register_post_accumulate_grad_hook(self._gradient_ready)

    def _make_buckets(self, params):
        buckets, current, size = [], [], 0
        for p in reversed(params):
            nbytes = p.numel() * p.element_size()
            if current and (size + nbytes > self.bucket_bytes_cap or p.dtype is not current[0].dtype
                            or p.device != current[0].device):
                buckets.append(_Bucket(current))
                current, size = [], 0
            current.append(p)
            size += nbytes
        if current:
            buckets.append(_Bucket(current))
        return buckets

    # -- backward: buckets fill up and launch
    def _gradient_ready(self, param):
        if not self.require_backward_grad_sync:
            return
        for launched in self._buckets:  # MPI progresses a request only inside MPI calls
            if launched.work is not None:
                launched.work.is_completed()
        bucket = self._bucket_of[id(param)]
        bucket.ready.add(id(param))
        self._launch_full(bucket)

    def _launch_full(self, bucket):
        if len(bucket.ready) == len(bucket.params) and bucket.work is None:
            if self._overlap:
                bucket.launch(self._group)
            self._launched += 1
            if self._launched == len(self._buckets):
                self._finish()

    def _finish(self):
        if not self._overlap:  # the baseline: communication after the whole backward
            for bucket in self._buckets:
                bucket.launch(self._group)
        for bucket in self._buckets:
            bucket.finish()
        self._launched = 0

    # -- forward
    def forward(self, *inputs, **kwargs):
        if any(b.ready for b in self._buckets) and self.require_backward_grad_sync:
            raise RuntimeError(_UNFINISHED)
        if self.broadcast_buffers and self._group.size() > 1:
            with grad_mode.no_grad():
                for b in self.module.buffers():
                    dist.broadcast(b.detach(), 0, self.process_group)
        output = self.module(*inputs, **kwargs)
        if (self.find_unused_parameters and self.require_backward_grad_sync
                and grad_mode.is_grad_enabled()):
            used = _parameters_reached(output)
            for bucket in self._buckets:
                for p in bucket.params:
                    if id(p) not in used:
                        bucket.ready.add(id(p))
            for bucket in self._buckets:
                self._launch_full(bucket)
        return output

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients accumulate locally, without communication, inside this block."""
        previous, self.require_backward_grad_sync = self.require_backward_grad_sync, False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous


def _tensors(value):
    from ...tensor import Tensor
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v)


def _parameters_reached(output):
    """ids of the leaves the outputs' graph leads to."""
    seen, reached = set(), set()
    stack = [t.grad_fn for t in _tensors(output) if t.grad_fn is not None]
    for t in _tensors(output):
        if t.grad_fn is None and t.requires_grad:
            reached.add(id(t))
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            reached.add(id(variable))
        stack.extend(e for e in node.next_edges if e is not None)
    return reached

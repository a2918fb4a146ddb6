"""Shape ops (nbgrad/ops/views.py) on the device: views share the device
buffer and version counter, metadata and gradients as on the CPU."""
import pytest

import nbgrad

from .support import assert_same, on_both, run_both, same_error, values

VIEWS = {
    "view": lambda t: t.view(3, 4),
    "view-infer": lambda t: t.view(-1, 2),
    "reshape": lambda t: t.reshape(2, 6),
    "reshape-copy": lambda t: t.t().reshape(12),
    "reshape-alias": lambda t: t[:, ::2].reshape(4, 2, 1),  # a view of a non-contiguous tensor
    "flatten": lambda t: t.flatten(),
    "flatten-part": lambda t: t.view(2, 2, 3).flatten(1),
    "permute": lambda t: t.view(2, 2, 3).permute(2, 0, 1),
    "transpose": lambda t: t.transpose(0, 1),
    "t": lambda t: t.t(),
    "T": lambda t: t.T,
    "mT": lambda t: t.view(2, 2, 3).mT,
    "squeeze": lambda t: t.view(1, 4, 1, 3).squeeze(),
    "squeeze-dim": lambda t: t.view(1, 4, 1, 3).squeeze(2),
    "unsqueeze": lambda t: t.unsqueeze(1),
    "expand": lambda t: t[:, :1].expand(4, 3),
    "expand-new-dims": lambda t: t[0].expand(2, 3, -1),
    "expand_as": lambda t: t[1:2].expand_as(t),
    "view_as": lambda t: t.view_as(nbgrad.zeros(6, 2)),
    "contiguous": lambda t: t.t().contiguous(),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_values_metadata_and_gradients(name):
    fn = VIEWS[name]

    def run(x):
        out = fn(x)
        return out * 2 + out  # a backward that reads the view's gradient twice
    run_both(run, values((4, 3), 1))
    cpu, cuda = on_both(values((4, 3), 1))
    a, b = fn(cuda), fn(cpu)
    assert (a.stride(), a.storage_offset(), a.is_contiguous()) == (
        b.stride(), b.storage_offset(), b.is_contiguous())
    assert (a._base is cuda) == (b._base is cpu)


def test_writes_through_views_reach_the_base_and_bump_the_shared_version():
    cpu, cuda = on_both(values((2, 3), 2))
    for t in (cpu, cuda):
        v = t.t()[1:]
        v.mul_(10)
        t.view(-1)[0] = 5.0
        assert t._version == v._version == 2
    assert_same(cuda, cpu)


def test_expanded_view_refuses_inplace_writes():
    cpu, cuda = on_both(values((1, 3), 3))
    error = same_error(lambda t: t.expand(2, 3).add_(1), (cpu,), (cuda,))
    assert "more than one element of the written-to tensor" in str(error)


@pytest.mark.parametrize("call", [
    lambda t: t.view(5, -1), lambda t: t.t().view(12), lambda t: t.permute(0, 0),
    lambda t: t.expand(3, 3), lambda t: t.squeeze(5), lambda t: t.t().t().t().view(-1, -1),
], ids=["view-size", "view-stride", "permute-dup", "expand", "squeeze-dim", "two-infers"])
def test_shape_errors_as_on_the_cpu(call):
    cpu, cuda = on_both(values((4, 3), 4))
    same_error(call, (cpu,), (cuda,))


def test_gradient_of_an_expand_is_summed_on_the_device():
    def fn(x):
        return x.unsqueeze(0).expand(3, 2, 3) * nbgrad.arange(3.0, device=x.device).view(3, 1, 1)
    run_both(fn, values((2, 3), 5), dtype=nbgrad.float64)

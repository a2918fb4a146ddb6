"""Forward-mode AD (``nbgrad.autograd.forward_ad``) against PyTorch's
``torch.autograd.forward_ad`` and against reverse mode: every differentiable
row (its fused value-and-tangent kernel, generated from its derivatives),
in place too; every other op by its declared tangent rule; nn layers and
losses; the level's rules and PyTorch's errors."""
import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw

import nbgrad
import nbgrad.autograd.forward_ad as nfw
from helpers import assert_close, on_device
from ops.test_table import DERIVED_SKIP, REFERENCE, number_only, sample

FW = {nbgrad: nfw, torch: tfw}
ROWS = [row for row in nbgrad.ROWS if row.differentiable and row.name in REFERENCE
        and not REFERENCE[row.name].inplace_only and row.name not in DERIVED_SKIP]


def _values(row, seed=0, shape=(2, 3)):
    rng = np.random.default_rng(seed)
    return [rng.random(shape) < 0.5 if k in row.bool_inputs else
            2.5 if (row.name == "pow_number" and k == 1) or k in number_only(row) else
            sample(row, k, rng, shape)
            for k in range(len(row.inputs))]


def _tangents(values, seed=1):
    rng = np.random.default_rng(seed)
    return [None if isinstance(v, float) or v.dtype == bool else rng.standard_normal(v.shape)
            for v in values]


def _duals(lib, values, tangents, device="cpu"):
    out = []
    for v, t in zip(values, tangents):
        if isinstance(v, float):
            out.append(v)
        elif t is None:
            out.append(lib.tensor(v, **on_device(lib, device)))
        else:
            out.append(FW[lib].make_dual(lib.tensor(v, dtype=lib.float64, **on_device(lib, device)),
                                         lib.tensor(t, dtype=lib.float64, **on_device(lib, device))))
    return out


def _tangent_of(lib, fn, values, tangents, device="cpu"):
    with FW[lib].dual_level():
        out = fn(lib, *_duals(lib, values, tangents, device))
        primal, tangent = FW[lib].unpack_dual(out)
        return primal.detach(), tangent


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_every_row_propagates_tangents_like_torch(row, device):
    values = _values(row)
    tangents = _tangents(values)
    call = REFERENCE[row.name].call
    (p, t), (wp, wt) = (_tangent_of(lib, call, values, tangents, device if lib is nbgrad else "cpu")
                        for lib in (nbgrad, torch))
    assert_close(p, wp)
    assert_close(t, wt)


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_a_row_tangent_is_the_jacobian_times_the_tangent_of_reverse_mode(row):
    """J t (forward) against the rows of J (reverse mode), one input at a time."""
    values = _values(row, seed=2, shape=(3,))
    for k, v in enumerate(values):
        if isinstance(v, float) or v.dtype == bool:
            continue
        tangents = [None] * len(values)
        tangents[k] = np.random.default_rng(k).standard_normal(v.shape)
        _, jt = _tangent_of(nbgrad, REFERENCE[row.name].call, values, tangents)
        args = _duals(nbgrad, values, [None] * len(values))
        x = nbgrad.tensor(v, dtype=nbgrad.float64, requires_grad=True)
        args[k] = x
        out = REFERENCE[row.name].call(nbgrad, *args)
        jacobian = np.stack([nbgrad.autograd.grad(out[i], x, retain_graph=True)[0].numpy()
                             for i in range(3)])
        np.testing.assert_allclose(jt.numpy(), jacobian @ tangents[k], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["mul_", "sigmoid_", "pow_", "div_", "clamp_"])
def test_in_place_rows_update_the_tangent_and_its_views_like_torch(name, device):
    def fn(lib, x, w):
        y = x.clone()
        view = y[1:]
        getattr(y, name)(*((0.0, 1.0) if name == "clamp_" else () if name == "sigmoid_" else (w,)))
        return lib.stack([y[1:], view])
    values = [np.array([0.5, 1.5, 2.0]), np.array([1.2, 0.7, 1.1])]
    tangents = [np.array([1.0, -0.5, 0.3]), np.array([0.2, 0.4, -0.1])]
    (p, t), (wp, wt) = (_tangent_of(lib, fn, values, tangents, device if lib is nbgrad else "cpu")
                        for lib in (nbgrad, torch))
    assert_close(p, wp)
    assert_close(t, wt)


OPS = {
    "matmul": lambda L, x, w: x @ w,
    "sum": lambda L, x, w: x.sum(1),
    "mean": lambda L, x, w: x.mean(),
    "views": lambda L, x, w: x.t().reshape(-1)[1:4].unsqueeze(0).expand(2, 3),
    "softmax": lambda L, x, w: x.softmax(1),
    "log_softmax": lambda L, x, w: x.log_softmax(0),
    "max": lambda L, x, w: x.max(),
    "max-dim": lambda L, x, w: x.max(1).values,
    "amin": lambda L, x, w: x.amin(0),
    "cat": lambda L, x, w: L.cat([x, x * 2], 1),
    "stack": lambda L, x, w: L.stack([x, x.sin()]),
    "index": lambda L, x, w: x[[1, 0], 1:],
    "cast": lambda L, x, w: x.float(),
    "where": lambda L, x, w: L.where(x > 0, x, x * x),
    "setitem": lambda L, x, w: _written(L, x, lambda y: y.__setitem__((slice(None), slice(1, None)), x)),
    "copy_": lambda L, x, w: _written(L, x, lambda y: y[:, :3].copy_(x)),
    "fill_": lambda L, x, w: _written(L, x * 1, lambda y: y[0].fill_(2.0), into=x * 1),
    "linear": lambda L, x, w: L.nn.functional.linear(x, w.t()),
    "cross_entropy": lambda L, x, w: L.nn.functional.cross_entropy(x, L.tensor([0, 2], device=x.device)),
    "mse_loss": lambda L, x, w: L.nn.functional.mse_loss(x, x.detach() * 0.5),
    "gelu": lambda L, x, w: L.nn.functional.gelu(x),
}


def _written(L, x, write, into=None):
    y = L.zeros(2, 4, dtype=L.float64) if into is None else into
    write(y)
    return y


@pytest.mark.parametrize("name", sorted(OPS))
def test_ops_propagate_tangents_like_torch(name, device):
    rng = np.random.default_rng(3)
    values = [rng.standard_normal((2, 3)), rng.standard_normal((3, 2))]
    tangents = [rng.standard_normal((2, 3)), rng.standard_normal((3, 2))]
    (p, t), (wp, wt) = (_tangent_of(lib, OPS[name], values, tangents, device if lib is nbgrad
                                    else "cpu") for lib in (nbgrad, torch))
    assert_close(p, wp)
    assert (t is None) == (wt is None)
    if t is not None:
        assert_close(t, wt)


def test_layers_propagate_tangents_like_torch(device):
    rng = np.random.default_rng(4)
    x, tx = rng.standard_normal((2, 3, 5, 5)), rng.standard_normal((2, 3, 5, 5))
    w, b = rng.standard_normal((4, 3, 3, 3)), rng.standard_normal(4)
    results = {}
    for lib in (nbgrad, torch):
        kw = on_device(lib, device)
        F = lib.nn.functional
        with FW[lib].dual_level():
            d = FW[lib].make_dual(lib.tensor(x, **kw), lib.tensor(tx, **kw))
            h = F.conv2d(d, lib.tensor(w, **kw), lib.tensor(b, **kw), padding=1)
            outs = [h, F.max_pool2d(h, 2), F.avg_pool2d(h, 2)]
            results[lib] = [FW[lib].unpack_dual(o).tangent for o in outs]
    for mine, want in zip(results[nbgrad], results[torch]):
        assert_close(mine, want)


# ------------------------------------------------------ the level and errors
def test_tangents_live_only_inside_their_level():
    with nfw.dual_level():
        x = nfw.make_dual(nbgrad.tensor([1.0, 2.0]), nbgrad.tensor([1.0, 0.5]))
        y = x * 3
        assert nfw.unpack_dual(y).tangent is not None
    assert nfw.unpack_dual(y).tangent is None
    assert nfw.unpack_dual(x).tangent is None


def test_make_dual_shares_memory_and_unpack_gives_a_plain_primal():
    base = nbgrad.tensor([1.0, 2.0])
    with nfw.dual_level():
        x = nfw.make_dual(base, nbgrad.tensor([1.0, 0.5]))
        assert x._base is base and not x.requires_grad
        primal, tangent = nfw.unpack_dual(x)
        assert nfw.unpack_dual(primal).tangent is None
        np.testing.assert_array_equal(tangent.numpy(), [1.0, 0.5])
        assert type(nfw.unpack_dual(x)).__name__ == "UnpackedDualTensor"
        assert nfw.unpack_dual(x.detach()).tangent is None  # as torch: detach drops it


def _refusals(lib):
    fw = FW[lib]
    x = lib.tensor([1.0, 2.0])
    return [
        lambda: fw.make_dual(x, lib.ones(2)),  # outside a level
        lambda: _inside(fw, lambda: fw.make_dual(x, lib.ones(3))),
        lambda: _inside(fw, lambda: fw.make_dual(x, lib.ones(2, dtype=lib.int64))),
        lambda: _inside(fw, lambda: fw.make_dual(lib.tensor([1, 2]), lib.ones(2))),
        lambda: _inside(fw, lambda: _inside(fw, lambda: None)),  # nested
    ]


def _inside(fw, fn):
    with fw.dual_level():
        return fn()


@pytest.mark.parametrize("k", range(5))
def test_refusals_match_torch(k):
    with pytest.raises(Exception) as ours:
        _refusals(nbgrad)[k]()
    with pytest.raises(Exception) as theirs:
        _refusals(torch)[k]()
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value).replace("torch.", "nbgrad.") or \
        str(ours.value) == str(theirs.value)


# ------------------------------------------------------ custom Functions
def _functions(lib):
    class Scale(lib.autograd.Function):  # jvp from save_for_forward, two outputs
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_forward(x)
            ctx.k = k
            return x * k, x.sin()

        @staticmethod
        def jvp(ctx, tx, tk):
            (x,) = ctx.saved_tensors
            return tx * ctx.k, tx * x.cos()

        @staticmethod
        def backward(ctx, g1, g2):
            return None, None

    class NoJvp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    return Scale, NoJvp


def test_a_function_gives_tangents_through_its_jvp_like_torch():
    results = []
    for lib in (nbgrad, torch):
        scale, _ = _functions(lib)
        with FW[lib].dual_level():
            d = FW[lib].make_dual(lib.tensor([0.5, 2.0]), lib.tensor([1.0, -1.0]))
            a, b = scale.apply(d, 3.0)
            results.append([FW[lib].unpack_dual(o).tangent for o in (a, b)])
    for mine, want in zip(*results):
        assert_close(mine, want)


def test_a_function_without_jvp_refuses_forward_mode_like_torch():
    for lib in (nbgrad, torch):
        _, no_jvp = _functions(lib)
        assert no_jvp.apply(lib.ones(2))[0].item() == 2.0  # no level: no jvp needed
        with FW[lib].dual_level():
            d = FW[lib].make_dual(lib.ones(2), lib.ones(2))
            with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
                no_jvp.apply(d)

"""Higher-order gradients (``create_graph=True``), driven by the op table:
every differentiable row differentiated twice against PyTorch (the gradient
of the gradient, and the gradients of the first derivatives' own inputs)
and against finite differences (``gradgradcheck``), on every device; the
third derivatives of tanh and sigmoid; the derived derivative rows
themselves; and the engine's graph-mode bookkeeping (accumulation into
``.grad``, hooks, retain_grad, retain_graph)."""
import numpy as np
import pytest
import torch

import nbgrad
from helpers import assert_close, on_device
from nbgrad.autograd import gradgradcheck
from nbgrad.declarations import derivation
from nbgrad.declarations.op_table import BY_NAME
from ops.test_table import DERIVED_SKIP, REFERENCE, ZERO_DERIVATIVE, number_only, sample

# (A row whose derivative is a constant zero, sign's, has no second derivative:
# PyTorch's first derivative does not require grad either.)
ROWS = [row for row in nbgrad.ROWS if row.differentiable and row.name in REFERENCE
        and not REFERENCE[row.name].inplace_only and row.name not in ZERO_DERIVATIVE
        and row.name not in DERIVED_SKIP]
IDS = [row.name for row in ROWS]


def _inputs(row, seed=0, shape=(2, 3)):
    """float64 values per input (a bool mask for ``where``'s condition), away from kinks."""
    rng = np.random.default_rng(seed)
    values = []
    for k in range(len(row.inputs)):
        if k in row.bool_inputs:
            values.append(rng.random(shape) < 0.5)
        elif row.name == "pow_number" and k == 1:
            values.append(2.5)  # a number exponent
        elif k in number_only(row):  # addcmul's value=, nan_to_num's bounds
            values.append(0.5)
        else:
            values.append(sample(row, k, rng, shape))
    return values


def _leaves(lib, row, values, device="cpu"):
    out = []
    for k, v in enumerate(values):
        if isinstance(v, float):
            out.append(v)
        elif k in row.bool_inputs:
            out.append(lib.tensor(v, **on_device(lib, device)))
        else:
            out.append(lib.tensor(v, dtype=lib.float64, requires_grad=True,
                                  **on_device(lib, device)))
    return out


def _second_derivatives(lib, row, values, device="cpu"):
    """First derivatives (with a graph), then the gradients of a weighted sum
    of them with respect to the inputs and the incoming gradient."""
    leaves = _leaves(lib, row, values, device)
    diff = [t for t in leaves if not isinstance(t, float) and t.dtype == lib.float64]
    out = REFERENCE[row.name].call(lib, *leaves)
    rng = np.random.default_rng(7)
    upstream = lib.tensor(rng.standard_normal(tuple(out.shape)), dtype=lib.float64,
                          requires_grad=True, **on_device(lib, device))
    firsts = lib.autograd.grad(out, diff, upstream, create_graph=True)
    weighted = sum((g * lib.tensor(rng.standard_normal(tuple(g.shape)), dtype=lib.float64,
                                   **on_device(lib, device))).sum() for g in firsts)
    seconds = lib.autograd.grad(weighted, diff + [upstream], allow_unused=True)
    return firsts, seconds


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_second_derivatives_match_torch(row, device):
    values = _inputs(row)
    ours = _second_derivatives(nbgrad, row, values, device)
    theirs = _second_derivatives(torch, row, values)
    for mine, want in zip(ours[0], theirs[0]):
        assert_close(mine, want)
    for k, (mine, want) in enumerate(zip(ours[1], theirs[1])):
        if want is not None and want._is_zerotensor():  # PyTorch's symbolic zeros
            want = torch.zeros(want.shape, dtype=want.dtype)
        if want is None:  # PyTorch's graph does not reach it: ours may give zeros or nothing
            assert mine is None or not mine.detach().cpu().numpy().any(), k
        else:
            assert mine is not None, f"gradient {k} missing; torch has one"
            assert_close(mine, want)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_gradgradcheck(row):
    values = _inputs(row, seed=1, shape=(2,))
    leaves = _leaves(nbgrad, row, values)
    positions = [k for k, t in enumerate(leaves) if isinstance(t, nbgrad.Tensor)
                 and t.requires_grad]

    def fn(*diff):
        args = list(leaves)
        for k, t in zip(positions, diff):
            args[k] = t
        return REFERENCE[row.name].call(nbgrad, *args)
    assert gradgradcheck(fn, [leaves[k] for k in positions])


@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
def test_third_derivatives_match_torch(name, device):
    results = []
    for lib in (nbgrad, torch):
        x = lib.tensor([-2.5, -0.3, 0.0, 0.7, 3.0], dtype=lib.float64, requires_grad=True,
                       **on_device(lib, device))
        y = getattr(x, name)()
        grads = []
        for _ in range(3):
            (y,) = lib.autograd.grad(y.sum(), x, create_graph=True)
            grads.append(y)
        results.append(grads)
    for mine, want in zip(*results):
        assert_close(mine, want)


def test_a_derived_row_names_its_node_as_pytorch_does():
    x = nbgrad.tensor([0.5], requires_grad=True)
    (g,) = nbgrad.autograd.grad(x.sigmoid().sum(), x, create_graph=True)
    assert g.grad_fn.name() == "SigmoidBackwardBackward"


def test_derivative_rows_are_derived_once_and_keep_selects():
    relu = BY_NAME["relu"]
    first = derivation.derivative_row(relu, 0)
    assert derivation.derivative_row(relu, 0) is first
    # relu's derivative reads its output only through a test: the derivative
    # for it is a materialized zero (a select), never 0 * g.
    assert first.derivative(1) is derivation._zero_derivative
    x = nbgrad.tensor([-1.0, 2.0], dtype=nbgrad.float64, requires_grad=True)
    (g,) = nbgrad.autograd.grad(x.relu().sum(), x, create_graph=True)
    (gg,) = nbgrad.autograd.grad(g, x, nbgrad.tensor([np.inf, np.inf], dtype=nbgrad.float64),
                                 allow_unused=True)
    assert gg is None or np.array_equal(gg.numpy(), [0.0, 0.0])


def test_a_user_row_is_differentiated_to_any_order():
    cube = nbgrad.elementwise("cube_over_3", lambda a: a * a * a / 3,
                              grads={"a": lambda g, a: g * a * a})
    x = nbgrad.tensor([0.5, -1.0], dtype=nbgrad.float64, requires_grad=True)
    (g,) = nbgrad.autograd.grad(cube(x).sum(), x, create_graph=True)  # x**2
    (g2,) = nbgrad.autograd.grad(g.sum(), x, create_graph=True)  # 2x
    (g3,) = nbgrad.autograd.grad(g2.sum(), x)  # 2
    np.testing.assert_allclose(g.detach().numpy(), [0.25, 1.0])
    np.testing.assert_allclose(g2.detach().numpy(), [1.0, -2.0])
    np.testing.assert_allclose(g3.numpy(), [2.0, 2.0])


def test_a_row_without_source_names_why_it_cannot_be_differentiated_twice():
    namespace = {}
    exec("f = lambda a: a * a\nd = lambda g, a: 2 * g * a", namespace)
    square = nbgrad.elementwise("square_nosource", namespace["f"], grads={"a": namespace["d"]})
    x = nbgrad.tensor([1.5], requires_grad=True)
    (g,) = nbgrad.autograd.grad(square(x).sum(), x)  # first order needs no source
    assert g.item() == 3.0
    with pytest.raises(derivation.CannotDerive, match="source"):
        nbgrad.autograd.grad(square(x).sum(), x, create_graph=True)


# ------------------------------------------------- the engine in graph mode
def test_backward_with_create_graph_accumulates_a_differentiable_grad_like_torch():
    results = []
    for lib in (nbgrad, torch):
        x = lib.tensor([0.3, -1.2, 2.0], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([[1.0], [2.0], [0.5]], dtype=lib.float64, requires_grad=True)
        (x * w).tanh().sum().backward(create_graph=True)
        gx = x.grad
        assert gx.requires_grad and gx.grad_fn is not None
        x.grad = None
        (gx * gx).sum().backward()
        results.append((gx.detach(), x.grad, w.grad.detach()))
    for mine, want in zip(*results):
        assert_close(mine, want)


def test_hooks_and_retained_grads_see_differentiable_gradients():
    seen = {}
    for lib in (nbgrad, torch):
        x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
        y = x.exp()
        y.retain_grad()
        y.register_hook(lambda g: g * 2)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        seen[lib] = (g.detach(), gg)
    for mine, want in zip(seen[nbgrad], seen[torch]):
        assert_close(mine, want)


@pytest.mark.parametrize("lib", [nbgrad, torch], ids=["nbgrad", "torch"])
def test_a_graph_built_by_backward_is_freed_without_retain_graph(lib):
    """retain_graph=False frees the saved values, which the new graph reads too."""
    x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
    y = x.sigmoid().sum()
    (g,) = lib.autograd.grad(y, x, create_graph=True, retain_graph=False)
    for again in (y.backward, g.sum().backward):
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            again()

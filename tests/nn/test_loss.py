"""Losses against torch: values and gradients for every reduction, both dtypes."""
import numpy as np
import pytest
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.nn.functional as F
from nbgrad.autograd import gradcheck, gradgradcheck
from helpers import cuda_only

from ._util import (DTYPE_IDS, DTYPES, Const, assert_close, assert_second_derivatives_match,
                    assert_values_close, make_inputs, run_both, run_on_device)

REDUCTIONS = ["mean", "sum", "none"]


def _check(make_nb, make_torch, inputs, dtype, grads_of=None):
    name = DTYPE_IDS[DTYPES.index(dtype)]
    out, tout, nin, tin = run_both(make_nb, make_torch, inputs, dtype)
    assert_close(out, tout, name)
    for k, (a, e) in enumerate(zip(nin, tin)):
        if (grads_of is None or k in grads_of) and isinstance(e, torch.Tensor) and e.requires_grad:
            assert_close(a.grad, e.grad, name)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse_loss_matches_torch(dtype, reduction):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    _check(nn.MSELoss(reduction=reduction), torch.nn.MSELoss(reduction=reduction), [x, y], dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("options", [
    {}, {"weight": True}, {"ignore_index": 1}, {"label_smoothing": 0.2},
    {"weight": True, "ignore_index": 2, "label_smoothing": 0.1}],
    ids=["plain", "weight", "ignore", "smoothing", "all"])
def test_cross_entropy_class_indices_matches_torch(dtype, reduction, options):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 4)) * 2
    y = np.array([0, 1, 2, 3, 1, 2])
    kwargs = dict(options, reduction=reduction)
    nb_kwargs, t_kwargs = dict(kwargs), dict(kwargs)
    if options.get("weight"):
        w = rng.uniform(0.5, 2.0, 4)
        nb_kwargs["weight"] = nbgrad.tensor(w, dtype=dtype[0])
        t_kwargs["weight"] = torch.tensor(w, dtype=dtype[1])
    _check(nn.CrossEntropyLoss(**nb_kwargs), torch.nn.CrossEntropyLoss(**t_kwargs), [x, y], dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_spatial_and_single_sample_match_torch(dtype, reduction):
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((2, 3, 4, 5)), rng.integers(0, 3, (2, 4, 5))
    _check(lambda a, b: F.cross_entropy(a, b, reduction=reduction),
           lambda a, b: torch.nn.functional.cross_entropy(a, b, reduction=reduction), [x, y], dtype)
    x1, y1 = rng.standard_normal(5), np.array(3)
    _check(lambda a, b: F.cross_entropy(a, b, reduction=reduction),
           lambda a, b: torch.nn.functional.cross_entropy(a, b, reduction=reduction), [x1, y1],
           dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_probability_targets_match_torch(dtype, reduction):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 4))
    p = rng.dirichlet(np.ones(4), 5)
    w = rng.uniform(0.5, 2.0, 4)
    _check(lambda a, b: F.cross_entropy(a, b, weight=nbgrad.tensor(w, dtype=dtype[0]),
                                        reduction=reduction, label_smoothing=0.1),
           lambda a, b: torch.nn.functional.cross_entropy(a, b, weight=torch.tensor(w, dtype=dtype[1]),
                                                          reduction=reduction, label_smoothing=0.1),
           [x, p], dtype)


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_probabilities_of_another_dtype_promote_like_torch(smoothing):
    """float64 probabilities for float32 logits: a float64 loss, both gradients."""
    rng = np.random.default_rng(4)
    x, p = rng.standard_normal((3, 4)).astype(np.float32), rng.dirichlet(np.ones(4), 3)
    results = []
    for lib in (nbgrad, torch):
        logits, target = lib.tensor(x, requires_grad=True), lib.tensor(p, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(logits, target, label_smoothing=smoothing)
        loss.backward()
        results.append((loss, logits.grad, target.grad))
    for ours, theirs in zip(*results):
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        assert_close(ours, theirs, "float32")  # from float32 log-probabilities


def test_cross_entropy_all_ignored_mean_is_nan_like_torch():
    x = np.zeros((2, 3))
    out = F.cross_entropy(nbgrad.tensor(x), nbgrad.tensor([-100, -100]))
    expected = torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor([-100, -100]))
    assert np.isnan(out.item()) and np.isnan(expected.item())


def test_label_smoothing_selects_away_an_ignored_row_holding_minus_inf():
    # The ignored row's smoothing term is log_softmax = -inf: masked by a select, not a product.
    x = np.array([[0.0, -np.inf], [1.0, 2.0]])
    results = []
    for lib in (nbgrad, torch):
        t = lib.tensor(x, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(t, lib.tensor([-100, 1]), label_smoothing=0.1,
                                               reduction="none")
        loss.sum().backward()
        results.append((loss.detach().numpy(), t.grad.numpy()))
    (loss, grad), (expected_loss, expected_grad) = results
    np.testing.assert_allclose(loss, expected_loss, rtol=1e-12)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_matches_torch(dtype, reduction):
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((5, 3)), rng.integers(0, 3, 5)
    _check(nn.NLLLoss(reduction=reduction), torch.nn.NLLLoss(reduction=reduction), [x, y], dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_bce_with_logits_matches_torch(dtype, reduction, weighted):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3)) * 4
    x[0, 0], x[0, 1] = 60.0, -60.0  # far in the tails: stable, no overflow
    y = rng.uniform(0, 1, (4, 3))
    nb_kw, t_kw = {"reduction": reduction}, {"reduction": reduction}
    if weighted:
        w, pw = rng.uniform(0.5, 2, (4, 3)), rng.uniform(0.5, 3, 3)
        nb_kw.update(weight=nbgrad.tensor(w, dtype=dtype[0]), pos_weight=nbgrad.tensor(pw, dtype=dtype[0]))
        t_kw.update(weight=torch.tensor(w, dtype=dtype[1]), pos_weight=torch.tensor(pw, dtype=dtype[1]))
    _check(nn.BCEWithLogitsLoss(**nb_kw), torch.nn.BCEWithLogitsLoss(**t_kw), [x, y], dtype)


def test_bce_with_logits_gradcheck_all_inputs():
    rng = np.random.default_rng(6)
    x = nbgrad.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    y = nbgrad.tensor(rng.uniform(0, 1, (3, 2)), requires_grad=True)
    pw = nbgrad.tensor(rng.uniform(0.5, 2, 2), requires_grad=True)
    assert gradcheck(lambda a, b, c: F.binary_cross_entropy_with_logits(a, b, pos_weight=c),
                     (x, y, pw))


@pytest.mark.parametrize("pos_weight", [None, 2.0], ids=["no-pos-weight", "pos-weight"])
def test_bce_with_logits_target_gradient_at_infinite_logits_matches_torch(pos_weight):
    """d loss / d target is -x (PyTorch's formula): inf at x = -inf, not 0 * inf = nan."""
    grads = {}
    for lib in (nbgrad, torch):
        x = lib.tensor([-float("inf"), float("inf"), -3.0, 0.5])
        y = lib.tensor([0.25, 0.5, 1.0, 0.0], requires_grad=True)
        kw = {} if pos_weight is None else {"pos_weight": lib.full((4,), pos_weight)}
        lib.nn.functional.binary_cross_entropy_with_logits(x, y, reduction="sum", **kw).backward()
        grads[lib] = y.grad.numpy()
    np.testing.assert_allclose(grads[nbgrad], grads[torch], rtol=1e-6)
    assert not np.isnan(grads[nbgrad]).any()


@pytest.mark.parametrize("input_shape,target", [
    ((3,), [1]), ((3,), [[1]]), ((3,), [1, 2]), ((2, 3), [[1, 0]]), ((2, 3), 1),
    ((2, 3, 4), [[0] * 5] * 2), ((2, 3, 4), [0, 0]), ((2, 3, 4), [[[0]] * 4] * 2)])
def test_cross_entropy_target_shapes_match_torch(input_shape, target):
    x = np.random.default_rng(7).standard_normal(input_shape)
    try:
        expected = torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor(target),
                                                     reduction="none")
    except (RuntimeError, ValueError) as error:
        with pytest.raises(type(error)) as actual:
            F.cross_entropy(nbgrad.tensor(x), nbgrad.tensor(target), reduction="none")
        assert str(actual.value) == str(error)
    else:
        out = F.cross_entropy(nbgrad.tensor(x), nbgrad.tensor(target), reduction="none")
        assert_close(out, expected)


def test_cross_entropy_errors_match_torch():
    cases = [
        (lambda m, t: m.nn.functional.cross_entropy(t.zeros(3, 4), t.tensor([0, 1, 4])), IndexError),
        (lambda m, t: m.nn.functional.cross_entropy(t.zeros(3, 4), t.tensor([0, 1])), ValueError),
        (lambda m, t: m.nn.functional.cross_entropy(t.zeros(3, 4), t.tensor([0, 1, 2]),
                                                   reduction="avg"), ValueError),
        (lambda m, t: m.nn.functional.binary_cross_entropy_with_logits(t.zeros(3, 1), t.zeros(3)),
         ValueError),
    ]
    for fn, kind in cases:
        with pytest.raises(kind) as expected:
            fn(torch, torch)
        with pytest.raises(kind) as actual:
            fn(nbgrad, nbgrad)
        assert str(actual.value) == str(expected.value).replace("torch.", "nbgrad.")


def test_losses_repr_like_torch():
    for name in ("MSELoss", "CrossEntropyLoss", "BCEWithLogitsLoss", "NLLLoss"):
        assert repr(getattr(nn, name)()) == repr(getattr(torch.nn, name)())


def _node_chain(fn, depth=2):
    """Names of the first ``depth`` nodes down the first input edges, without
    PyTorch's overload suffix."""
    names = []
    while fn is not None and len(names) < depth:
        names.append(type(fn).__name__.rstrip("0") if isinstance(fn, torch.autograd.graph.Node)
                     else fn.name())
        nxt = [f for f, _ in fn.next_functions if f is not None]
        fn = nxt[0] if nxt else None
    return names


@pytest.mark.parametrize("shape,target", [((5, 4), [0, 3, 1, 2, 3]), ((4,), 2),
                                          ((2, 4, 3, 2), [[[0, 1]] * 3, [[3, 2]] * 3])])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_and_nll_record_the_nodes_torch_records(shape, target, reduction):
    """cross_entropy: NllLoss (NllLoss2D with spatial dims) over LogSoftmax, as PyTorch."""
    x = np.random.default_rng(8).standard_normal(shape)
    for fn in ("cross_entropy", "nll_loss"):
        results = []
        for lib in (nbgrad, torch):
            xt = lib.tensor(x, requires_grad=True)
            results.append(getattr(lib.nn.functional, fn)(xt, lib.tensor(target),
                                                          reduction=reduction))
        ours, theirs = results
        depth = 2 if fn == "cross_entropy" else 1
        assert _node_chain(ours.grad_fn, depth) == _node_chain(theirs.grad_fn, depth)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("options", [{}, {"weight": True, "ignore_index": 1}],
                         ids=["plain", "weight-ignore"])
@pytest.mark.parametrize("shape", [(6, 4), (2, 4, 3)], ids=["2d", "spatial"])
def test_nll_loss_gradcheck(reduction, options, shape):
    """The NllLoss node's gradient by finite differences (float64)."""
    rng = np.random.default_rng(9)
    x = nbgrad.tensor(rng.standard_normal(shape), requires_grad=True)
    y = nbgrad.tensor(rng.integers(0, 4, (shape[0], *shape[2:])))
    kwargs = {"reduction": reduction}
    if options.get("weight"):
        kwargs.update(weight=nbgrad.tensor(rng.uniform(0.5, 2.0, 4)), ignore_index=1)
    assert gradcheck(lambda a: F.nll_loss(a, y, **kwargs), (x,))
    assert gradcheck(lambda a: F.cross_entropy(a, y, **kwargs), (x,))


def test_nll_loss_sees_in_place_writes_to_its_input_like_torch():
    errors = []
    for lib in (nbgrad, torch):
        # clone: nothing but the NllLoss node saves it
        logp = lib.tensor(np.zeros((3, 4)), requires_grad=True).clone()
        loss = lib.nn.functional.nll_loss(logp, lib.tensor([0, 1, 2]))
        with lib.no_grad():
            logp.mul_(2)
        with pytest.raises(RuntimeError) as error:
            loss.backward()
        errors.append(str(error.value))
    # The same message up to the hint each library appends.
    head = errors[1].replace("torch.", "nbgrad.").split(" instead.")[0]
    assert errors[0].split(" instead.")[0] == head


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("shape,ignore", [((6, 4), -100), ((2, 4, 3), -100), ((6, 4), 1)],
                         ids=["2d", "spatial", "ignored"])
def test_nll_reduced_gradient_path_and_values_match_torch(monkeypatch, reduction, shape, ignore):
    """A reduced loss whose samples all weigh the same scatters its one
    gradient value with one kernel (2-D and spatial); ignored samples take the
    per-sample path. Either way the gradient is PyTorch's."""
    from nbgrad.backends.cpu import loops
    module = loops.kernels()
    calls = []
    real = module.put_value
    monkeypatch.setattr(module, "put_value", lambda *args: calls.append(1) or real(*args))
    rng = np.random.default_rng(10)
    x = rng.standard_normal(shape)
    y = np.array([1, 0, 3, 1, 2, 1]) if len(shape) == 2 else rng.integers(0, 4, (2, 3))
    grads = []
    for lib in (nbgrad, torch):
        xt = lib.tensor(x, requires_grad=True)
        lib.nn.functional.cross_entropy(xt, lib.tensor(y), ignore_index=ignore,
                                        reduction=reduction).backward(lib.tensor(1.5,
                                                                                 dtype=xt.dtype))
        grads.append(xt.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-15)
    assert len(calls) == (0 if ignore == 1 else 1)


# ------------------------------------------------------------ on every device
RNG = np.random.default_rng(0)
LOGITS = RNG.standard_normal((5, 4))
TARGET = np.array([0, 3, 1, 3, 2])
WEIGHT = np.array([0.5, 1.0, 2.0, 1.5])
PROBS = RNG.random((5, 4))
PROBS /= PROBS.sum(1, keepdims=True)


def _functional(lib):
    return nbgrad.nn.functional if lib is nbgrad else torch.nn.functional


def _lib(x):
    return nbgrad if isinstance(x, nbgrad.Tensor) else torch


DEVICE_LOSSES = {  # name: (make the loss module from lib.nn, or None; call; inputs)
    "mse-mean": (lambda L: L.nn.MSELoss(), None, [LOGITS, RNG.standard_normal((5, 4))]),
    "mse-sum": (lambda L: L.nn.MSELoss(reduction="sum"), None, [LOGITS, LOGITS[::-1].copy()]),
    "mse-none": (lambda L: L.nn.MSELoss(reduction="none"), None, [LOGITS, LOGITS * 0.5]),
    "ce-mean": (lambda L: L.nn.CrossEntropyLoss(), None, [LOGITS, TARGET]),
    "ce-sum": (lambda L: L.nn.CrossEntropyLoss(reduction="sum"), None, [LOGITS, TARGET]),
    "ce-none": (lambda L: L.nn.CrossEntropyLoss(reduction="none"), None, [LOGITS, TARGET]),
    "ce-ignore": (lambda L: L.nn.CrossEntropyLoss(ignore_index=3), None, [LOGITS, TARGET]),
    "ce-smoothing": (lambda L: L.nn.CrossEntropyLoss(label_smoothing=0.2), None,
                     [LOGITS, TARGET]),
    "ce-ignore-smoothing": (lambda L: L.nn.CrossEntropyLoss(ignore_index=1, label_smoothing=0.1,
                                                            reduction="none"), None,
                            [LOGITS, TARGET]),
    # class weights and pos_weight are constants to torch (it refuses them requiring grad)
    "ce-weights": (None, lambda x, t, w: _functional(_lib(x)).cross_entropy(
        x, t, weight=w.detach(), ignore_index=0, label_smoothing=0.1), [LOGITS, TARGET, WEIGHT]),
    "ce-probabilities": (lambda L: L.nn.CrossEntropyLoss(label_smoothing=0.1), None,
                         [LOGITS, PROBS]),
    "ce-spatial": (lambda L: L.nn.CrossEntropyLoss(), None,
                   [RNG.standard_normal((2, 4, 3, 2)), RNG.integers(0, 4, (2, 3, 2))]),
    "nll-mean": (None, lambda x, t: _functional(_lib(x)).nll_loss(x.log_softmax(1), t),
                 [LOGITS, TARGET]),
    "nll-none": (None, lambda x, t: _functional(_lib(x)).nll_loss(x.log_softmax(1), t,
                                                                   reduction="none"),
                 [LOGITS, TARGET]),
    "bce-logits": (lambda L: L.nn.BCEWithLogitsLoss(), None, [LOGITS * 10, RNG.random((5, 4))]),
    "bce-logits-weights": (None, lambda x, t, w, pw: _functional(_lib(x))
                           .binary_cross_entropy_with_logits(x, t, weight=w.detach(),
                                                             pos_weight=pw.detach()),
                           [LOGITS, RNG.random((5, 4)), RNG.random(4), RNG.random(4) + 0.5]),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("name", sorted(DEVICE_LOSSES))
def test_losses_on_the_device_match_torch(dtype, name, device):
    make, call, inputs = DEVICE_LOSSES[name]
    if make is not None:
        run_on_device(lambda loss, *args: loss(*args), make, inputs, dtype, device)
    else:
        run_on_device(lambda _, *args: call(*args), None, inputs, dtype, device)


@cuda_only
def test_bad_targets_on_the_device_raise_like_on_the_cpu(device):
    x = nbgrad.tensor(LOGITS, dtype=nbgrad.float32, device=device)
    with pytest.raises(IndexError, match="Target 4 is out of bounds."):
        F.cross_entropy(x, nbgrad.tensor([0, 4, 1, 1, 1], device=device))
    with pytest.raises(RuntimeError, match="found at least two devices, cuda:0 and cpu!"):
        F.cross_entropy(x, nbgrad.tensor(TARGET))


# -- higher-order gradients ------------------------------------------------------
_RNG = np.random.default_rng(11)
LOGITS, SPATIAL = _RNG.standard_normal((5, 4)) * 2, _RNG.standard_normal((2, 3, 2, 3))
CLASSES, SPATIAL_CLASSES = np.array([0, 3, 1, 3, 2]), _RNG.integers(0, 3, (2, 2, 3))
CLASS_WEIGHTS = _RNG.uniform(0.5, 2.0, 4)
PROBS = _RNG.dirichlet(np.ones(4), 5)


def _weight(lib, inputs):
    """The class weights, a constant, on the inputs' device."""
    return lib.tensor(CLASS_WEIGHTS, dtype=lib.float64, device=inputs.device) if lib is nbgrad \
        else torch.tensor(CLASS_WEIGHTS, dtype=torch.float64)


LOSSES = {
    # name: (fn(lib, *inputs), arrays); floating arrays are differentiated
    "nll": (lambda lib, x, t: lib.nn.functional.nll_loss(x, t), [LOGITS, CLASSES]),
    "nll-sum": (lambda lib, x, t: lib.nn.functional.nll_loss(x, t, reduction="sum"),
                [LOGITS, CLASSES]),
    "nll-none-weight-ignore": (
        lambda lib, x, t: lib.nn.functional.nll_loss(x, t, _weight(lib, x), ignore_index=3,
                                                     reduction="none"), [LOGITS, CLASSES]),
    "nll-mean-weight": (
        lambda lib, x, t: lib.nn.functional.nll_loss(x, t, _weight(lib, x)), [LOGITS, CLASSES]),
    "nll-spatial": (lambda lib, x, t: lib.nn.functional.nll_loss(x, t),
                    [SPATIAL, SPATIAL_CLASSES]),
    "nll-one-sample": (lambda lib, x, t: lib.nn.functional.nll_loss(x, t),
                       [LOGITS[0], np.array(2)]),
    "cross-entropy": (lambda lib, x, t: lib.nn.functional.cross_entropy(x, t),
                      [LOGITS, CLASSES]),
    "cross-entropy-spatial-none": (
        lambda lib, x, t: lib.nn.functional.cross_entropy(x, t, reduction="none"),
        [SPATIAL, SPATIAL_CLASSES]),
    "cross-entropy-smoothing": (
        lambda lib, x, t: lib.nn.functional.cross_entropy(x, t, _weight(lib, x), ignore_index=1,
                                                          label_smoothing=0.2),
        [LOGITS, CLASSES]),
    "cross-entropy-probabilities": (
        lambda lib, x, p: lib.nn.functional.cross_entropy(x, p, _weight(lib, x),
                                                          label_smoothing=0.1), [LOGITS, PROBS]),
    "mse": (lambda lib, x, y: lib.nn.functional.mse_loss(x, y), [LOGITS, PROBS]),
    "mse-none": (lambda lib, x, y: lib.nn.functional.mse_loss(x, y, reduction="none"),
                 [LOGITS, PROBS]),
    "bce-logits": (lambda lib, x, y: lib.nn.functional.binary_cross_entropy_with_logits(x, y),
                   [LOGITS, PROBS]),
    "bce-logits-weights": (
        lambda lib, x, y, w, pw: lib.nn.functional.binary_cross_entropy_with_logits(
            x, y, w, reduction="sum", pos_weight=pw),
        [LOGITS, PROBS, Const(_RNG.uniform(0.5, 2.0, (5, 4))), Const(_RNG.uniform(0.5, 2.0, 4))]),
}


@pytest.mark.parametrize("name", list(LOSSES))
def test_loss_second_derivatives_match_torch(name, device):
    """First derivatives with a graph (logits, and any floating target or
    weight), then the gradients of a weighted sum of them with respect to all
    of these and the incoming gradient: the gather that is NLL's double
    backward, log_softmax's, the BCE row's derived derivatives."""
    fn, arrays = LOSSES[name]
    assert_second_derivatives_match(fn, arrays, device)


@pytest.mark.parametrize("name", ["nll-none-weight-ignore", "nll-spatial",
                                  "cross-entropy-smoothing", "cross-entropy-probabilities", "mse",
                                  "bce-logits-weights"])
def test_loss_gradgradcheck(name):
    fn, arrays = LOSSES[name]
    inputs, _ = make_inputs(nbgrad, arrays, "cpu")
    assert gradgradcheck(lambda *args: fn(nbgrad, *args), inputs)


def test_nll_gradient_is_linked_to_its_input_as_torchs():
    """NLL's gradient does not depend on the log-probabilities, but PyTorch's
    double backward links them (zeros): ``autograd.grad`` finds them used."""
    results = []
    for lib in (nbgrad, torch):
        x = lib.tensor(LOGITS, dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(lib.nn.functional.nll_loss(x, lib.tensor(CLASSES)), x,
                                 create_graph=True)
        assert g.requires_grad
        results.append(lib.autograd.grad((g * g).sum(), x)[0])
    assert not results[0].numpy().any() and not results[1].numpy().any()


def test_cross_entropy_hessian_matches_torch():
    """The full Hessian of cross entropy in the logits, row by row."""
    hessians = []
    for lib in (nbgrad, torch):
        x = lib.tensor(LOGITS[:2], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(lib.nn.functional.cross_entropy(x, lib.tensor(CLASSES[:2])), x,
                                 create_graph=True)
        rows = [lib.autograd.grad(g.reshape(-1)[k], x, retain_graph=True)[0].reshape(-1)
                for k in range(g.numel())]
        hessians.append(lib.stack(rows))
    assert_values_close(*hessians)


# -- issue 16: the rest of PyTorch's losses -------------------------------------
TESTED_OPS = {"l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy", "kl_div",
              "poisson_nll_loss", "gaussian_nll_loss", "cosine_embedding_loss",
              "margin_ranking_loss", "triplet_margin_loss", "multilabel_soft_margin_loss",
              "mse_loss", "nll_loss", "cross_entropy", "hinge_embedding_loss", "soft_margin_loss",
              "multi_margin_loss", "multilabel_margin_loss", "triplet_margin_with_distance_loss"}

_RNG = np.random.default_rng(11)
_X, _Y = _RNG.standard_normal((4, 3)) * 2, _RNG.standard_normal((4, 3))
_P, _Q = _RNG.uniform(0.05, 0.95, (4, 3)), _RNG.uniform(0.0, 1.0, (4, 3))
_V = _RNG.uniform(0.2, 2.0, (4, 3))
_SIGNS = np.array([1, -1, 1, -1])
_W = _RNG.uniform(0.5, 2.0, 3)
_CLASS = np.array([2, 0, 1, 2])
_LABELS = np.array([[2, 0, -1], [1, -1, 2], [-1, 0, 0], [0, 2, 1]])  # each row up to its -1

# name -> (make(lib, reduction) -> module, inputs, node name of reduction "mean" or None)
NEW_LOSSES = {
    "mse": (lambda L, r: L.nn.MSELoss(reduction=r), [_X, _Y], "MseLossBackward"),
    "l1": (lambda L, r: L.nn.L1Loss(reduction=r), [_X, _Y], "MeanBackward"),
    "smooth_l1": (lambda L, r: L.nn.SmoothL1Loss(reduction=r), [_X, _Y], "SmoothL1LossBackward"),
    "smooth_l1-beta": (lambda L, r: L.nn.SmoothL1Loss(reduction=r, beta=0.5), [_X, _Y], None),
    "smooth_l1-beta0": (lambda L, r: L.nn.SmoothL1Loss(reduction=r, beta=0.0), [_X, _Y], None),
    "huber": (lambda L, r: L.nn.HuberLoss(reduction=r), [_X, _Y], "HuberLossBackward"),
    "huber-delta": (lambda L, r: L.nn.HuberLoss(reduction=r, delta=0.4), [_X, _Y], None),
    "bce": (lambda L, r: L.nn.BCELoss(reduction=r), [_P, _Q], "BinaryCrossEntropyBackward"),
    "bce-weight": (lambda L, r: L.nn.BCELoss(L.tensor(_W), reduction=r), [_P, _Q], None),
    "kl": (lambda L, r: L.nn.KLDivLoss(reduction=r), [_X, _Q], None),
    "kl-log": (lambda L, r: L.nn.KLDivLoss(reduction=r, log_target=True), [_X, _Y], None),
    "poisson": (lambda L, r: L.nn.PoissonNLLLoss(reduction=r), [_X, _Q * 3], None),
    "poisson-full": (lambda L, r: L.nn.PoissonNLLLoss(log_input=False, full=True, reduction=r),
                     [_P, _Q * 3], None),
    "gaussian": (lambda L, r: L.nn.GaussianNLLLoss(full=True, reduction=r), [_X, _Y, _V], None),
    "gaussian-var-1d": (lambda L, r: L.nn.GaussianNLLLoss(reduction=r), [_X, _Y, _V[:, 0]], None),
    "cosine": (lambda L, r: L.nn.CosineEmbeddingLoss(0.1, reduction=r), [_X, _Y, _SIGNS], None),
    "ranking": (lambda L, r: L.nn.MarginRankingLoss(0.2, reduction=r),
                [_X[:, 0], _Y[:, 0], _SIGNS.astype(float)], None),
    "triplet": (lambda L, r: L.nn.TripletMarginLoss(reduction=r), [_X, _Y, _V], None),
    "triplet-swap-p1": (lambda L, r: L.nn.TripletMarginLoss(0.5, p=1.0, swap=True, reduction=r),
                        [_X, _Y, _V], None),
    "multilabel": (lambda L, r: L.nn.MultiLabelSoftMarginLoss(L.tensor(_W), reduction=r),
                   [_X, (_Q > 0.5).astype(float)], None),
    # composed here, one node in PyTorch (MultiMarginLossBackward & co.): no node name compared
    "hinge": (lambda L, r: L.nn.HingeEmbeddingLoss(0.5, reduction=r),
              [_X, (np.sign(_Y) * (np.abs(_Y) > 0.3)).astype(np.int64)], None),
    "soft-margin": (lambda L, r: L.nn.SoftMarginLoss(reduction=r),
                    [_X, np.sign(_Y).astype(np.int64)], None),
    "multi-margin": (lambda L, r: L.nn.MultiMarginLoss(reduction=r), [_X, _CLASS], None),
    "multi-margin-p2-weight": (
        lambda L, r: L.nn.MultiMarginLoss(p=2, margin=0.6, weight=L.tensor(_W), reduction=r),
        [_X, _CLASS], None),
    "multi-margin-unbatched": (lambda L, r: L.nn.MultiMarginLoss(reduction=r),
                               [_X[0], np.array(_CLASS[0])], None),
    "multilabel-margin": (lambda L, r: L.nn.MultiLabelMarginLoss(reduction=r), [_X, _LABELS],
                          None),
    "multilabel-margin-unbatched": (lambda L, r: L.nn.MultiLabelMarginLoss(reduction=r),
                                    [_X[3], _LABELS[3]], None),
    "triplet-distance": (lambda L, r: L.nn.TripletMarginWithDistanceLoss(reduction=r),
                         [_X, _Y, _V], None),
    "triplet-distance-swap-fn": (
        lambda L, r: L.nn.TripletMarginWithDistanceLoss(
            distance_function=lambda a, b: (a - b).abs().sum(-1), margin=2.0, swap=True,
            reduction=r), [_X, _Y, _V], None),
}


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides")
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", list(NEW_LOSSES))
def test_loss_matches_torch(name, reduction, dtype):
    make, inputs, node = NEW_LOSSES[name]
    nb_dtype, t_dtype = dtype
    nb, tm = make(nbgrad, reduction).to(dtype=nb_dtype), make(torch, reduction).to(t_dtype)
    assert repr(nb) == repr(tm)
    _check(nb, tm, inputs, dtype)
    if node is not None and reduction == "mean":
        out = nb(*[nbgrad.tensor(x, dtype=nb_dtype if x.dtype.kind == "f" else None,
                                 requires_grad=x.dtype.kind == "f") for x in inputs])
        assert out.grad_fn.name() == node


def test_kl_div_batchmean_matches_torch():
    _check(lambda a, b: F.kl_div(a, b, reduction="batchmean"),
           lambda a, b: torch.nn.functional.kl_div(a, b, reduction="batchmean"), [_X, _Q],
           DTYPES[1])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_and_cross_entropy_spatial_weight_ignore_match_torch(reduction):
    rng = np.random.default_rng(12)
    x, t = rng.standard_normal((2, 3, 4, 5)), rng.integers(0, 3, (2, 4, 5))
    t[0, 0, 0] = -100
    w = rng.uniform(0.5, 2.0, 3)
    _check(lambda a, b: F.nll_loss(a, b, weight=nbgrad.tensor(w), reduction=reduction),
           lambda a, b: torch.nn.functional.nll_loss(a, b, weight=torch.tensor(w),
                                                     reduction=reduction), [x, t], DTYPES[1])
    t[0, 0, 0] = 1
    _check(lambda a, b: F.cross_entropy(a, b, weight=nbgrad.tensor(w), ignore_index=2,
                                        reduction=reduction),
           lambda a, b: torch.nn.functional.cross_entropy(a, b, weight=torch.tensor(w),
                                                          ignore_index=2, reduction=reduction),
           [x, t], DTYPES[1])


@pytest.mark.parametrize("name", ["mse", "smooth_l1", "huber", "bce"])
def test_fused_loss_gradcheck(name):
    make, inputs, _ = NEW_LOSSES[name]
    module = make(nbgrad, "mean")
    leaves = [nbgrad.tensor(x, requires_grad=True) for x in inputs]
    assert gradcheck(module, leaves) and gradgradcheck(module, leaves)


@pytest.mark.parametrize("name", ["mse", "smooth_l1", "huber", "bce"])
def test_fused_loss_second_derivatives_match_torch(name):
    make, inputs, _ = NEW_LOSSES[name]
    modules = {lib: make(lib, "sum") for lib in (nbgrad, torch)}
    assert_second_derivatives_match(lambda lib, a, b: modules[lib](a, b), inputs, "cpu")


NEW_LOSS_ERRORS = [
    ("bce-range", lambda L: L.nn.functional.binary_cross_entropy(L.ones(2) * 2, L.ones(2))),
    ("bce-size", lambda L: L.nn.functional.binary_cross_entropy(L.ones(2) / 2, L.ones(3))),
    ("smooth-beta", lambda L: L.nn.functional.smooth_l1_loss(L.ones(2), L.ones(2), beta=-1.0)),
    ("huber-delta", lambda L: L.nn.functional.huber_loss(L.ones(2), L.ones(2), delta=0.0)),
    ("reduction", lambda L: L.nn.functional.l1_loss(L.ones(2), L.ones(2), reduction="max")),
    ("triplet-margin", lambda L: L.nn.TripletMarginLoss(margin=0.0)),
    ("gaussian-var", lambda L: L.nn.functional.gaussian_nll_loss(L.ones(2, 3), L.ones(2, 3),
                                                                  L.ones(3))),
    ("gaussian-negative", lambda L: L.nn.functional.gaussian_nll_loss(
        L.ones(2), L.ones(2), -L.ones(2))),
    ("multi-margin-p", lambda L: L.nn.functional.multi_margin_loss(L.ones(2, 3), L.zeros(2).long(),
                                                                   p=3)),
    ("multi-margin-range", lambda L: L.nn.functional.multi_margin_loss(
        L.ones(2, 3), L.tensor([0, 3]))),
    ("multi-margin-size", lambda L: L.nn.functional.multi_margin_loss(
        L.ones(2, 3), L.tensor([0, 1, 1]))),
    ("multi-margin-weight", lambda L: L.nn.functional.multi_margin_loss(
        L.ones(2, 3), L.tensor([0, 1]), weight=L.ones(2))),
    ("multilabel-margin-size", lambda L: L.nn.functional.multilabel_margin_loss(
        L.ones(2, 3), L.zeros(3, 3).long())),
    ("multilabel-margin-range", lambda L: L.nn.functional.multilabel_margin_loss(
        L.ones(2, 3), L.tensor([[3, -1, 0], [0, 1, 2]]))),
    ("triplet-distance-margin", lambda L: L.nn.functional.triplet_margin_with_distance_loss(
        L.ones(2, 3), L.ones(2, 3), L.ones(2, 3), margin=0.0)),
]


@pytest.mark.parametrize("make", [e[1] for e in NEW_LOSS_ERRORS],
                         ids=[e[0] for e in NEW_LOSS_ERRORS])
def test_new_loss_errors_match_torch(make):
    with pytest.raises(Exception) as want:
        make(torch)
    with pytest.raises(type(want.value)) as got:
        make(nbgrad)
    assert str(got.value) == str(want.value).replace("torch.", "nbgrad.")


@pytest.mark.parametrize("name", ["smooth_l1", "bce", "huber"])
def test_fused_losses_on_the_device_match_torch(name, device):
    make, inputs, _ = NEW_LOSSES[name]
    run_on_device(lambda m, a, b: m(a, b), lambda L: make(L, "mean"), inputs, DTYPES[0], device)


@pytest.mark.parametrize("name", ["hinge", "soft-margin", "multi-margin-p2-weight",
                                  "multilabel-margin", "triplet-distance-swap-fn"])
def test_margin_losses_gradcheck(name):
    make, inputs, _ = NEW_LOSSES[name]
    args = [nbgrad.tensor(x, requires_grad=x.dtype.kind == "f") for x in inputs]
    assert gradcheck(make(nbgrad, "sum"), args)


@pytest.mark.parametrize("name", ["multi-margin-p2-weight", "multilabel-margin", "hinge"])
def test_margin_losses_on_the_device_match_torch(name, device):
    make, inputs, _ = NEW_LOSSES[name]
    run_on_device(lambda m, *args: m(*args), lambda L: make(L, "mean"), inputs, DTYPES[1],
                  device)

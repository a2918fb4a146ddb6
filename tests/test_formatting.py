"""``repr(tensor)`` (nbgrad/_formatting.py) equals PyTorch's, with "torch."
read as "nbgrad." and without the overload digits of backward node names."""
import math
import re

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import nbgrad


def torch_repr(t):
    text = repr(t).replace("torch.", "nbgrad.")
    return re.sub(r"(grad_fn=<\w+?)\d+>", r"\1>", text)


def join_suffixes(text):
    """"nbgrad." is one character longer than "torch.", so a suffix can wrap
    onto its own line in one and not the other: compare suffixes unwrapped."""
    return re.sub(r",\s*\n\s*(dtype=|grad_fn=|requires_grad=|size=|device=)", r", \1", text)


def same_repr(make):
    ours, theirs = repr(make(nbgrad)), torch_repr(make(torch))
    assert join_suffixes(ours) == join_suffixes(theirs), f"\n{ours}\n!=\n{theirs}"
    return ours


NAN, INF = math.nan, math.inf

CASES = [
    ("four-decimals", lambda L: L.tensor([1.2345678, -2.0, 0.5])),
    ("integer-valued-floats", lambda L: L.tensor([1.0, 2.0])),
    ("integer-valued-negative", lambda L: L.tensor([-1.0, 20.0, 300.0])),
    ("sci-small-and-large", lambda L: L.tensor([1e-5, 1e6])),
    ("sci-small-fraction", lambda L: L.tensor([1e-5, 1.5])),
    ("sci-integers-over-1e8", lambda L: L.tensor([1e9, 1.0])),
    ("sci-ratio-over-1000", lambda L: L.tensor([1.0, 1001.0])),
    ("no-sci-ratio-1000", lambda L: L.tensor([1.0, 1000.0])),
    ("min-1e-4", lambda L: L.tensor([1e-4, 1.0])),
    ("nan-and-inf", lambda L: L.tensor([NAN, 1.0, INF, -INF])),
    ("nan-with-fraction", lambda L: L.tensor([NAN, 1.5])),
    ("nan-with-zero", lambda L: L.tensor([NAN, 0.0])),
    ("only-nan", lambda L: L.tensor([NAN])),
    ("inf-with-sci", lambda L: L.tensor([INF, 1e-6, 3.0])),
    ("zeros", lambda L: L.zeros(3)),
    ("negative-zero", lambda L: L.tensor([0.0, -0.0])),
    ("wide-values", lambda L: L.tensor([-1.5, 2.25, 100.125])),
    ("2d", lambda L: L.tensor([[1.5, -2.0], [3.0, 4.0]])),
    ("3d", lambda L: L.arange(24.0).reshape(2, 3, 4)),
    ("3d-fractions", lambda L: L.arange(24.0).reshape(2, 3, 4) / 7),
    ("4d", lambda L: L.arange(16).reshape(2, 2, 2, 2)),
    ("0d-float", lambda L: L.tensor(3.5)),
    ("0d-integer-valued", lambda L: L.tensor(3.0)),
    ("0d-negative-zero", lambda L: L.tensor(-0.0)),
    ("0d-nan", lambda L: L.tensor(NAN)),
    ("0d-int", lambda L: L.tensor(7)),
    ("0d-bool", lambda L: L.tensor(True)),
    ("0d-float64", lambda L: L.tensor(2.5, dtype=L.float64)),
    ("empty", lambda L: L.zeros(0)),
    ("empty-2d", lambda L: L.zeros(0, 3)),
    ("empty-3d", lambda L: L.zeros(2, 0, 1)),
    ("empty-int64", lambda L: L.zeros(0, dtype=L.int64)),
    ("empty-bool-2d", lambda L: L.zeros(2, 0, dtype=L.bool)),
    ("empty-float64", lambda L: L.zeros(0, dtype=L.float64)),
    ("empty-requires-grad", lambda L: L.zeros(0, 2, requires_grad=True)),
    ("int64", lambda L: L.tensor([1, -20, 300])),
    ("int64-2d", lambda L: L.tensor([[1, 2], [-30, 4]])),
    ("bool", lambda L: L.tensor([True, False])),
    ("bool-all-true", lambda L: L.tensor([[True], [True]])),
    ("bool-2d", lambda L: L.tensor([[True, False, True], [False, False, True]])),
    ("float64", lambda L: L.tensor([1.5, 2.0], dtype=L.float64)),
    ("float64-thirds", lambda L: L.tensor([1 / 3, 2 / 3], dtype=L.float64)),
    ("float64-2d", lambda L: L.tensor([[0.1, 0.2], [0.3, 0.4]], dtype=L.float64)),
    ("requires-grad", lambda L: L.tensor([1.5, 2.0], requires_grad=True)),
    ("requires-grad-float64", lambda L: L.tensor([1.5, 2.0], dtype=L.float64, requires_grad=True)),
    ("requires-grad-0d", lambda L: L.tensor(2.0, requires_grad=True)),
    ("grad-fn-mul", lambda L: L.tensor([1.5, 2.0], requires_grad=True) * 2),
    ("grad-fn-sum", lambda L: L.tensor([1.5, 2.0], requires_grad=True).sum()),
    ("grad-fn-sigmoid", lambda L: L.tensor([1.5, 2.0], requires_grad=True).sigmoid()),
    ("grad-fn-select", lambda L: L.tensor([1.5, 2.0], requires_grad=True)[0]),
    ("grad-fn-view-float64", lambda L: L.ones(2, 3, dtype=L.float64, requires_grad=True).t()),
    ("grad-fn-copy-slices", lambda L: (lambda y: (y.__setitem__(0, 5.0), y)[1])(
        L.ones(2, requires_grad=True) * 1)),
    ("detached", lambda L: (L.ones(2, requires_grad=True) * 2).detach()),
    ("no-grad-result", lambda L: L.ones(2, requires_grad=True).sum().detach()),
    ("long-1d-wraps", lambda L: L.arange(30.0)),
    ("long-1d-fractions-wrap", lambda L: L.arange(30.0) / 3),
    ("long-1d-int", lambda L: L.arange(100)),
    ("long-1d-float64", lambda L: L.linspace(-1, 1, 20, dtype=L.float64)),
    ("long-rows", lambda L: L.tensor(np.random.default_rng(0).standard_normal((4, 10)),
                                     dtype=L.float32)),
    ("summarized-1d", lambda L: L.arange(2000.0)),
    ("summarized-int", lambda L: L.arange(2000)),
    ("summarized-2d", lambda L: L.arange(3000.0).reshape(30, 100)),
    ("summarized-3d", lambda L: L.arange(1200).reshape(12, 10, 10)),
    ("summarized-requires-grad", lambda L: L.arange(1001.0, requires_grad=True)),
    ("scaled-sci-2d", lambda L: L.arange(12.0).reshape(3, 4) * 1e5),
    ("tiny-sci-2d", lambda L: L.arange(12.0).reshape(3, 4) * 1e-5),
    ("random-normal-2d", lambda L: L.tensor(np.random.default_rng(0).standard_normal((3, 5)),
                                            dtype=L.float32)),
    ("random-4d", lambda L: L.tensor(np.random.default_rng(1).standard_normal((2, 2, 2, 2)))),
    ("bool-long", lambda L: L.ones(30, dtype=L.bool)),
    ("int-range", lambda L: L.arange(-50, 50)),
]


@pytest.mark.parametrize("make", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_repr_matches_torch(make):
    same_repr(make)


def test_a_few_reprs_literally():
    assert repr(nbgrad.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(nbgrad.tensor([1.2345, 2.0])) == "tensor([1.2345, 2.0000])"
    assert repr(nbgrad.tensor([1e-5, 1e6])) == "tensor([1.0000e-05, 1.0000e+06])"
    assert repr(nbgrad.tensor([True, False])) == "tensor([ True, False])"
    assert repr(nbgrad.tensor([1.5], dtype=nbgrad.float64, requires_grad=True)) == \
        "tensor([1.5000], dtype=nbgrad.float64, requires_grad=True)"
    assert repr(nbgrad.tensor([2.0], requires_grad=True).sigmoid()) == \
        "tensor([0.8808], grad_fn=<SigmoidBackward>)"
    assert repr(nbgrad.zeros(0, dtype=nbgrad.int64)) == "tensor([], dtype=nbgrad.int64)"
    assert repr(nbgrad.zeros(2, 0)) == "tensor([], size=(2, 0))"


def test_suffixes_wrap_onto_a_new_line_when_the_line_is_full():
    text = repr(nbgrad.linspace(-1, 1, 7, dtype=nbgrad.float64))
    assert text == ("tensor([-1.0000, -0.6667, -0.3333,  0.0000,  0.3333,  0.6667,  1.0000],\n"
                    "       dtype=nbgrad.float64)")


def test_repr_of_a_view_made_in_no_grad_whose_base_changed():
    """Reading grad_fn raises there, so the repr says grad_fn=<Invalid>, as PyTorch's."""
    def make(L):
        x = L.ones(3, requires_grad=True)
        y = x * 1
        with L.no_grad():
            v = y[1:]
        y.mul_(2)
        return v

    same_repr(make)


def test_repr_does_not_change_the_tensor():
    x = nbgrad.tensor([1.5, 2.0], requires_grad=True)
    y = x * 2
    repr(y), str(y)
    assert y._version == 0 and y.requires_grad and x.grad is None


float_arrays = hnp.arrays(
    dtype=st.sampled_from([np.float32, np.float64]),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
    elements=st.one_of(
        st.floats(-1e3, 1e3, width=32),
        st.floats(allow_nan=True, allow_infinity=True, width=32),
        st.integers(-100, 100).map(float),
        st.sampled_from([0.0, -0.0, 1e-5, 3e-7, 123456789.0]),
    ))


@given(float_arrays)
def test_repr_of_random_floats_matches_torch(array):
    same_repr(lambda L: L.tensor(array, dtype=L.float32 if array.dtype == np.float32 else L.float64))


@given(hnp.arrays(dtype=st.sampled_from([np.int64, np.bool_]),
                  shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6)))
def test_repr_of_random_ints_and_bools_matches_torch(array):
    same_repr(lambda L: L.tensor(array))


# ------------------------------------------- print options (issue 15, item 10)
OPTION_CASES = [
    {"precision": 2}, {"precision": 8}, {"precision": 0}, {"sci_mode": True}, {"sci_mode": False},
    {"threshold": 5}, {"threshold": 5, "edgeitems": 1}, {"threshold": 5, "edgeitems": 0},
    {"linewidth": 30}, {"linewidth": 200}, {"profile": "short"}, {"profile": "full"},
    {"profile": "short", "precision": 6}, {"precision": 3, "sci_mode": True, "linewidth": 40},
]
OPTION_TENSORS = [
    lambda L: L.tensor([1.23456789, -2.5, 100.0]),
    lambda L: L.arange(12.0).reshape(3, 4) / 7,
    lambda L: L.tensor([1.0, 2.0, 3.0]),
    lambda L: L.tensor([1e-5, 1.0, 1e6]),
    lambda L: L.arange(40.0).reshape(2, 20) * 1.5,
    lambda L: L.arange(2000).reshape(40, 50),
    lambda L: L.arange(1500.0),
    lambda L: L.tensor([float("nan"), float("inf"), 0.0, -1.5]),
    lambda L: L.tensor(3.14159),
    lambda L: L.tensor([True, False, True, True, False, False, True]),
]


@pytest.mark.parametrize("options", OPTION_CASES, ids=lambda o: ",".join(f"{k}={v}" for k, v
                                                                         in o.items()))
def test_set_printoptions_matches_torch(options):
    try:
        torch.set_printoptions(**options)
        nbgrad.set_printoptions(**options)
        for make in OPTION_TENSORS:
            same_repr(make)
    finally:
        torch.set_printoptions(profile="default")
        nbgrad.set_printoptions(profile="default")
    same_repr(OPTION_TENSORS[0])  # defaults back


@pytest.mark.parametrize("dtype", ["float16", "int32", "int16", "int8", "uint8"])
def test_repr_of_the_narrow_dtypes_matches_torch(dtype):
    same_repr(lambda L: L.tensor([1.5, -2.25, 100.0, 0.0], dtype=getattr(L, dtype))
              if dtype == "float16" else L.tensor([1, 2, 100, 0], dtype=getattr(L, dtype)))
    same_repr(lambda L: L.zeros(0, dtype=getattr(L, dtype)))


def test_repr_names_the_dtype_against_the_default_dtype():
    for default in ("float64", "float16"):
        try:
            torch.set_default_dtype(getattr(torch, default))
            nbgrad.set_default_dtype(getattr(nbgrad, default))
            for make in (lambda L: L.tensor([1.5, 2.0]), lambda L: L.tensor([1.5], dtype=L.float32),
                         lambda L: L.zeros(0), lambda L: L.zeros(0, dtype=L.float32)):
                same_repr(make)
        finally:
            torch.set_default_dtype(torch.float32)
            nbgrad.set_default_dtype(nbgrad.float32)


def test_format_spec_of_a_zero_dim_tensor():
    for spec in (".4f", "", "10.2e", ">8"):
        assert format(nbgrad.tensor(2.0 / 3), spec) == format(torch.tensor(2.0 / 3), spec)
    loss = nbgrad.tensor(0.123456, requires_grad=True) * 2
    assert f"{loss:.4f}" == "0.2469"
    assert f"{nbgrad.tensor(7):5d}" == "    7"
    assert f"{nbgrad.ones(2)}" == str(nbgrad.ones(2))
    with pytest.raises(TypeError, match="unsupported format string passed to Tensor.__format__"):
        format(nbgrad.ones(2), ".2f")


def test_deterministic_switches_like_torch():
    try:
        for mode, warn_only in ((True, False), (True, True), (False, True), (False, False)):
            torch.use_deterministic_algorithms(mode, warn_only=warn_only)
            nbgrad.use_deterministic_algorithms(mode, warn_only=warn_only)
            assert (nbgrad.are_deterministic_algorithms_enabled(),
                    nbgrad.is_deterministic_algorithms_warn_only_enabled(),
                    nbgrad.get_deterministic_debug_mode()) == (
                torch.are_deterministic_algorithms_enabled(),
                torch.is_deterministic_algorithms_warn_only_enabled(),
                torch.get_deterministic_debug_mode())
        for debug_mode in ("warn", "error", 0, 1, 2, "default"):
            torch.set_deterministic_debug_mode(debug_mode)
            nbgrad.set_deterministic_debug_mode(debug_mode)
            assert nbgrad.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode()
        for bad in (lambda L: L.use_deterministic_algorithms(1),
                    lambda L: L.use_deterministic_algorithms(True, warn_only="x"),
                    lambda L: L.set_deterministic_debug_mode("x"),
                    lambda L: L.set_deterministic_debug_mode(5),
                    lambda L: L.set_deterministic_debug_mode(1.0)):
            with pytest.raises(Exception) as want:  # noqa: PT011 - torch's own type
                bad(torch)
            with pytest.raises(type(want.value)) as got:
                bad(nbgrad)
            assert str(got.value) == str(want.value)
    finally:
        torch.use_deterministic_algorithms(False)
        nbgrad.use_deterministic_algorithms(False)


def test_cudnn_switches_are_accepted_and_checked():
    import torch.backends.cudnn as torch_cudnn

    from nbgrad.backends import cudnn
    assert nbgrad.backends.cudnn is cudnn
    for name in ("deterministic", "benchmark", "enabled", "allow_tf32"):
        assert getattr(cudnn, name) == getattr(torch_cudnn, name)
        before = getattr(cudnn, name)
        setattr(cudnn, name, not before)
        assert getattr(cudnn, name) is (not before)
        setattr(cudnn, name, before)
        with pytest.raises(RuntimeError) as want:
            setattr(torch_cudnn, name, 1)
        with pytest.raises(RuntimeError, match=re.escape(str(want.value))):
            setattr(cudnn, name, 1)
    assert cudnn.is_available() is False and cudnn.version() is None
    with cudnn.flags(enabled=True, benchmark=True, deterministic=True):
        assert cudnn.benchmark and cudnn.deterministic
    assert not cudnn.benchmark and not cudnn.deterministic

"""Shape and joining ops of issue 15 (nbgrad/ops/shapes.py) against PyTorch:
values, dtypes, shapes, strides; views where PyTorch's are views (``_base``
and version counter shared), copies where it copies; backward node names;
gradients (and gradcheck, second derivatives in float64); errors; a few
CUDA cases."""
import re

import numpy as np
import pytest
import torch

import nbgrad
from helpers import (assert_close, assert_same_error, cuda_only, dtype_name, node_name,
                     second_derivatives_like_torch, values)
from nbgrad.autograd import gradcheck, gradgradcheck

TESTED_OPS = {
    "chunk", "split", "split_with_sizes", "unbind", "flip", "fliplr", "flipud", "roll",
    "repeat_interleave", "tril", "triu", "diag", "diagonal", "diag_embed", "narrow", "movedim",
    "moveaxis", "swapaxes", "swapdims", "unflatten", "broadcast_to", "broadcast_tensors",
    "meshgrid", "tile", "hstack", "vstack", "dstack", "column_stack", "row_stack",
    "atleast_1d", "atleast_2d", "atleast_3d", "repeat", "view_as", "reshape_as",
}

NP_DTYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "bool": np.bool_}


def make(lib, spec, seed):
    """A leaf from ``spec``: a shape (float64), or (shape, dtype), or
    (shape, dtype, layout) with layout "t" (transposed last two dims)."""
    shape, dtype, layout = (spec, "float64", None) if not spec or isinstance(spec[0], int) \
        else (tuple(spec) + (None,))[:3]
    data = values(shape[::-1] if layout == "t" else shape, seed=seed)
    if dtype == "bool":
        data = data > 0
    data = data.astype(NP_DTYPES[dtype])
    t = lib.tensor(data, dtype=getattr(lib, dtype))
    if layout == "t":
        t = t.t() if t.ndim == 2 else t.transpose(-1, -2)
        t = t.detach()
    if dtype.startswith("float"):
        t.requires_grad_(True)
    return t


def outputs(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


def base_index(t, leaves):
    """Which leaf ``t`` is a view of (None: not a view)."""
    base = t._base
    if base is None:
        return None
    return next((k for k, x in enumerate(leaves) if base is x), "other")


def name_of(grad_fn):
    """A torch node's name as nbgrad's (``DiagonalBackward0_copy`` too)."""
    return None if grad_fn is None else re.sub(r"Backward\d+_copy$", "Backward_copy",
                                                node_name(grad_fn))


def run_both(fn, specs):
    results = {}
    for lib in (nbgrad, torch):
        leaves = [make(lib, s, seed=k) for k, s in enumerate(specs)]
        results[lib] = leaves, fn(lib, *leaves)
    return results


# (id, fn(lib, *inputs), input specs, is each output a view)
VIEW, COPY = True, False
CASES = [
    # -- several views of one input
    ("chunk", lambda L, x: L.chunk(x, 2), [(5, 4)], VIEW),
    ("chunk-dim1", lambda L, x: x.chunk(3, dim=1), [(2, 7)], VIEW),
    ("chunk-more-than-size", lambda L, x: L.chunk(x, 6), [(4, 2)], VIEW),
    ("chunk-exact", lambda L, x: L.chunk(x, 3, -1), [(2, 6)], VIEW),
    ("chunk-empty-dim", lambda L, x: L.chunk(x, 3), [(0, 2)], VIEW),
    ("chunk-transposed", lambda L, x: L.chunk(x, 2, 1), [((3, 4), "float64", "t")], VIEW),
    ("split-size", lambda L, x: L.split(x, 2), [(5, 3)], VIEW),
    ("split-size-dim1", lambda L, x: x.split(2, dim=1), [(2, 5)], VIEW),
    ("split-size-larger", lambda L, x: L.split(x, 10), [(3, 2)], VIEW),
    ("split-sizes", lambda L, x: L.split(x, [1, 3, 1]), [(5, 2)], VIEW),
    ("split-sizes-zero", lambda L, x: x.split([0, 2, 1], -1), [(2, 3)], VIEW),
    ("split-sizes-tuple", lambda L, x: L.split(x, (2, 2), 1), [(3, 4)], VIEW),
    ("split_with_sizes", lambda L, x: L.split_with_sizes(x, [2, 1]), [(3, 2)], VIEW),
    ("split-int", lambda L, x: L.split(x, 2), [((5,), "int64")], VIEW),
    ("unbind", lambda L, x: L.unbind(x), [(3, 2)], VIEW),
    ("unbind-dim1", lambda L, x: x.unbind(1), [(2, 3, 2)], VIEW),
    ("unbind-last", lambda L, x: L.unbind(x, -1), [((2, 3), "float64", "t")], VIEW),
    ("unbind-1d", lambda L, x: L.unbind(x), [(3,)], VIEW),
    # -- single views
    ("narrow", lambda L, x: L.narrow(x, 0, 1, 2), [(4, 3)], VIEW),
    ("narrow-negative-start", lambda L, x: x.narrow(1, -2, 2), [(2, 4)], VIEW),
    ("narrow-empty", lambda L, x: x.narrow(1, 4, 0), [(2, 4)], VIEW),
    ("diagonal", lambda L, x: L.diagonal(x), [(3, 4)], VIEW),
    ("diagonal-offset", lambda L, x: x.diagonal(1), [(3, 4)], VIEW),
    ("diagonal-negative-offset", lambda L, x: x.diagonal(-2), [(4, 3)], VIEW),
    ("diagonal-off-the-end", lambda L, x: x.diagonal(5), [(3, 4)], VIEW),
    ("diagonal-dims", lambda L, x: L.diagonal(x, 1, 0, 2), [(3, 2, 4)], VIEW),
    ("diagonal-negative-dims", lambda L, x: x.diagonal(dim1=-1, dim2=-3, offset=-1),
     [(3, 2, 4)], VIEW),
    ("diagonal-transposed", lambda L, x: x.diagonal(), [((3, 3), "float64", "t")], VIEW),
    ("movedim", lambda L, x: L.movedim(x, 0, 2), [(2, 3, 4)], VIEW),
    ("movedim-tuple", lambda L, x: x.movedim((0, 1), (2, 0)), [(2, 3, 4)], VIEW),
    ("moveaxis", lambda L, x: L.moveaxis(x, -1, 0), [(2, 3, 4)], VIEW),
    ("swapaxes", lambda L, x: L.swapaxes(x, 0, 2), [(2, 3, 4)], VIEW),
    ("swapdims", lambda L, x: x.swapdims(-1, 0), [(2, 3)], VIEW),
    ("unflatten", lambda L, x: L.unflatten(x, 1, (2, 3)), [(2, 6)], VIEW),
    ("unflatten-infer", lambda L, x: x.unflatten(0, (-1, 2)), [(6, 2)], VIEW),
    ("view_as", lambda L, x, y: x.view_as(y), [(2, 6), (3, 4)], VIEW),
    ("reshape_as", lambda L, x, y: x.reshape_as(y), [(2, 6), (3, 4)], VIEW),
    ("reshape_as-copy", lambda L, x, y: x.reshape_as(y), [((2, 6), "float64", "t"), (3, 4)], COPY),
    ("broadcast_to", lambda L, x: L.broadcast_to(x, (3, 2, 4)), [(2, 1)], VIEW),
    ("broadcast_to-method", lambda L, x: x.broadcast_to((2, -1)), [(3,)], VIEW),
    ("broadcast_tensors", lambda L, x, y: L.broadcast_tensors(x, y), [(3, 1), (1, 4)], VIEW),
    ("meshgrid-ij", lambda L, x, y: L.meshgrid(x, y, indexing="ij"), [(3,), (4,)], VIEW),
    ("meshgrid-xy", lambda L, x, y, z: L.meshgrid(x, y, z, indexing="xy"),
     [(3,), (2,), (4,)], VIEW),
    ("meshgrid-list", lambda L, x, y: L.meshgrid([x, y], indexing="ij"), [(2,), ()], VIEW),
    ("atleast_1d", lambda L, x: L.atleast_1d(x), [()], VIEW),
    ("atleast_2d", lambda L, x, y: L.atleast_2d(x, y), [(3,), ()], VIEW),
    ("atleast_3d", lambda L, x, y, z: L.atleast_3d((x, y, z)), [(3,), (2, 3), ()], VIEW),
    # -- copies
    ("flip", lambda L, x: L.flip(x, (0,)), [(3, 2)], COPY),
    ("flip-both", lambda L, x: x.flip(0, 1), [(3, 2)], COPY),
    ("flip-negative", lambda L, x: L.flip(x, [-1]), [((3, 4), "float64", "t")], COPY),
    ("flip-int", lambda L, x: L.flip(x, (0,)), [((3,), "int64")], COPY),
    ("fliplr", lambda L, x: L.fliplr(x), [(2, 3)], COPY),
    ("flipud", lambda L, x: x.flipud(), [(3, 2)], COPY),
    ("roll-flat", lambda L, x: L.roll(x, 2), [(3, 2)], COPY),
    ("roll-dim", lambda L, x: x.roll(1, 1), [(3, 4)], COPY),
    ("roll-negative", lambda L, x: L.roll(x, -5, 0), [(3, 2)], COPY),
    ("roll-dims", lambda L, x: L.roll(x, (1, 2), (0, 1)), [(3, 4)], COPY),
    ("roll-same-dim-twice", lambda L, x: L.roll(x, (1, 1), (0, 0)), [(3, 4)], COPY),
    ("roll-transposed", lambda L, x: L.roll(x, 1, 0), [((3, 4), "float64", "t")], COPY),
    ("roll-zero", lambda L, x: L.roll(x, 3, 0), [(3, 4)], COPY),
    ("repeat", lambda L, x: x.repeat(2, 1), [(2, 3)], COPY),
    ("repeat-more-dims", lambda L, x: x.repeat((2, 1, 3)), [(2, 3)], COPY),
    ("repeat-zero", lambda L, x: x.repeat(0, 2), [(2, 3)], COPY),
    ("repeat-transposed", lambda L, x: x.repeat(1, 2), [((2, 3), "float64", "t")], COPY),
    ("tile", lambda L, x: L.tile(x, (2,)), [(2, 3)], COPY),
    ("tile-more", lambda L, x: x.tile(2, 1, 2), [(2, 3)], COPY),
    ("repeat_interleave", lambda L, x: L.repeat_interleave(x, 2), [(2, 3)], COPY),
    ("repeat_interleave-dim", lambda L, x: x.repeat_interleave(3, dim=1), [(2, 3)], COPY),
    ("repeat_interleave-tensor", lambda L, x: x.repeat_interleave(
        L.tensor([1, 0, 2]), dim=0), [(3, 2)], COPY),
    ("repeat_interleave-tensor-one", lambda L, x: L.repeat_interleave(
        x, L.tensor([2]), dim=1), [(3, 2)], COPY),
    ("repeat_interleave-tensor-flat", lambda L, x: L.repeat_interleave(
        x, L.tensor([1, 2, 0, 1])), [(2, 2)], COPY),
    ("repeat_interleave-repeats-only", lambda L: L.repeat_interleave(L.tensor([2, 0, 3])), [],
     COPY),
    ("repeat_interleave-output_size", lambda L, x: x.repeat_interleave(
        L.tensor([1, 2, 3]), dim=0, output_size=6), [(3, 2)], COPY),
    ("repeat_interleave-int-output_size", lambda L, x: x.repeat_interleave(2, output_size=12),
     [(3, 2)], COPY),
    ("tril", lambda L, x: L.tril(x), [(3, 4)], COPY),
    ("tril-diagonal", lambda L, x: x.tril(1), [(4, 3)], COPY),
    ("tril-negative", lambda L, x: L.tril(x, diagonal=-1), [(2, 3, 3)], COPY),
    ("triu", lambda L, x: L.triu(x), [(3, 4)], COPY),
    ("triu-diagonal", lambda L, x: x.triu(-1), [((4, 3), "float64", "t")], COPY),
    ("triu-int", lambda L, x: L.triu(x, 1), [((3, 3), "int64")], COPY),
    ("tril-bool", lambda L, x: L.tril(x), [((3, 3), "bool")], COPY),
    ("diag-vector", lambda L, x: L.diag(x), [(3,)], COPY),
    ("diag-vector-offset", lambda L, x: x.diag(2), [(3,)], COPY),
    ("diag-vector-negative", lambda L, x: L.diag(x, -1), [(3,)], COPY),
    ("diag-matrix", lambda L, x: L.diag(x), [(3, 4)], COPY),
    ("diag-matrix-offset", lambda L, x: x.diag(-1), [(3, 4)], COPY),
    ("diag_embed", lambda L, x: L.diag_embed(x), [(2, 3)], COPY),
    ("diag_embed-offset-dims", lambda L, x: L.diag_embed(x, 1, 0, 2), [(2, 3)], COPY),
    ("diag_embed-negative", lambda L, x: x.diag_embed(-1, dim1=-1, dim2=0), [(3,)], COPY),
    ("hstack", lambda L, x, y: L.hstack([x, y]), [(2, 3), (2, 1)], COPY),
    ("hstack-1d", lambda L, x, y: L.hstack((x, y)), [(2,), ()], COPY),
    ("vstack", lambda L, x, y: L.vstack([x, y]), [(3,), (2, 3)], COPY),
    ("row_stack", lambda L, x, y: L.row_stack([x, y]), [(3,), (3,)], COPY),
    ("dstack", lambda L, x, y: L.dstack([x, y]), [(2, 3), (2, 3, 2)], COPY),
    ("dstack-1d", lambda L, x, y: L.dstack([x, y]), [(3,), (3,)], COPY),
    ("column_stack", lambda L, x, y, z: L.column_stack([x, y, z]), [(3,), (3, 2), (3,)], COPY),
    ("column_stack-0d", lambda L, x, y: L.column_stack([x, y]), [(), ()], COPY),
    ("hstack-promotes", lambda L, x, y: L.hstack([x, y]), [((2,), "int64"), ((2,), "float32")],
     COPY),
    # -- the other dtypes
    ("chunk-float32", lambda L, x: x.chunk(2, 1), [((2, 5), "float32")], VIEW),
    ("unbind-bool", lambda L, x: x.unbind(1), [((2, 3), "bool")], VIEW),
    ("narrow-int", lambda L, x: x.narrow(0, 1, 1), [((3, 2), "int64")], VIEW),
    ("diagonal-float32", lambda L, x: x.diagonal(-1), [((3, 3), "float32")], VIEW),
    ("movedim-bool", lambda L, x: L.movedim(x, -1, 0), [((2, 3), "bool")], VIEW),
    ("unflatten-int", lambda L, x: x.unflatten(0, (2, 2)), [((4,), "int64")], VIEW),
    ("broadcast_to-float32", lambda L, x: x.broadcast_to((2, 3)), [((3,), "float32")], VIEW),
    ("meshgrid-int", lambda L, x, y: L.meshgrid(x, y, indexing="ij"),
     [((2,), "int64"), ((3,), "int64")], VIEW),
    ("roll-float32", lambda L, x: x.roll(-1, 0), [((3, 2), "float32")], COPY),
    ("roll-bool", lambda L, x: x.roll(1), [((4,), "bool")], COPY),
    ("repeat-int", lambda L, x: x.repeat(2, 2), [((2,), "int64")], COPY),
    ("tile-float32", lambda L, x: x.tile((2,)), [((3,), "float32")], COPY),
    ("repeat_interleave-float32", lambda L, x: x.repeat_interleave(L.tensor([2, 1]), dim=0),
     [((2, 2), "float32")], COPY),
    ("repeat_interleave-int", lambda L, x: x.repeat_interleave(2), [((3,), "int64")], COPY),
    ("tril-float32", lambda L, x: x.tril(-1), [((3, 4), "float32")], COPY),
    ("diag-int", lambda L, x: L.diag(x, 1), [((3,), "int64")], COPY),
    ("diag-bool", lambda L, x: L.diag(x), [((3, 3), "bool")], COPY),
    ("diag_embed-float32", lambda L, x: L.diag_embed(x), [((2, 2), "float32")], COPY),
    ("flip-bool", lambda L, x: x.flip(0), [((3, 2), "bool")], COPY),
    ("vstack-int-bool", lambda L, x, y: L.vstack([x, y]), [((2,), "int64"), ((2,), "bool")], COPY),
    ("dstack-float32", lambda L, x, y: L.dstack([x, y]), [((2,), "float32"), ((2,), "float64")],
     COPY),
    ("column_stack-int", lambda L, x, y: L.column_stack([x, y]),
     [((2,), "int64"), ((2, 2), "int64")], COPY),
    ("broadcast_tensors-same", lambda L, x, y: L.broadcast_tensors(x, y), [(3, 4), (4,)], VIEW),
    ("flip-0d", lambda L, x: L.flip(x, (0,)), [()], COPY),
    # -- keywords: PyTorch's methods and functions name some arguments differently
    ("split-method-keyword", lambda L, x: x.split(split_size=2, dim=1), [(2, 3)], VIEW),
    ("split-function-keyword", lambda L, x: L.split(x, split_size_or_sections=[1, 2]),
     [(3, 2)], VIEW),
    ("flip-keyword", lambda L, x: x.flip(dims=[0]), [(3, 2)], COPY),
    ("repeat-keyword", lambda L, x: x.repeat(repeats=(2, 1)), [(3, 2)], COPY),
    ("tile-keyword", lambda L, x: x.tile(dims=(2,)), [(3, 2)], COPY),
    ("tile-function-keyword", lambda L, x: L.tile(x, dims=(2, 1, 1)), [(3, 2)], COPY),
    ("movedim-keywords", lambda L, x: x.movedim(source=0, destination=1), [(3, 2)], VIEW),
    ("narrow-keywords", lambda L, x: L.narrow(x, dim=1, start=0, length=1), [(3, 2)], VIEW),
    ("diagonal-keywords", lambda L, x: x.diagonal(offset=1, dim1=1, dim2=0), [(3, 2)], VIEW),
    ("roll-0d", lambda L, x: L.roll(x, 1), [()], COPY),
]


@pytest.mark.parametrize("fn, specs, view", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_matches_torch(fn, specs, view):
    """Values, dtype, shape, strides, view or copy, node name, gradients."""
    results = run_both(fn, specs)
    (leaves, result), (tleaves, tresult) = results[nbgrad], results[torch]
    assert isinstance(result, tuple) == isinstance(tresult, tuple)
    outs, touts = outputs(result), outputs(tresult)
    assert len(outs) == len(touts)
    for k, (o, t) in enumerate(zip(outs, touts)):
        assert dtype_name(o.dtype) == dtype_name(t.dtype), k
        assert tuple(o.shape) == tuple(t.shape), k
        np.testing.assert_array_equal(o.detach().numpy(), t.detach().numpy())
        if t.numel():  # (PyTorch's strides of an empty piece vary)
            assert o.stride() == t.stride(), (k, o.stride(), t.stride())
        assert base_index(o, leaves) == base_index(t, tleaves), k
        assert (t._base is not None) == view or base_index(t, tleaves) == "other" \
            or any(t is x for x in tleaves), k
        assert node_name(o.grad_fn) == name_of(t.grad_fn), k
        assert o.requires_grad == t.requires_grad
    # gradients of a weighted sum of the outputs
    for lib, os_, ls in ((nbgrad, outs, leaves), (torch, touts, tleaves)):
        terms = [(o * lib.tensor(values(tuple(o.shape), seed=9 + k), dtype=o.dtype)).sum()
                 for k, o in enumerate(os_) if o.requires_grad]
        if terms:
            sum(terms).backward()
    for x, tx in zip(leaves, tleaves):
        assert (x.grad is None) == (tx.grad is None)
        if x.grad is not None:
            assert_close(x.grad, tx.grad)
            if tx.numel():
                assert x.grad.stride() == tx.grad.stride()
    # versions: a write into each input shows in exactly the views of it (last: PyTorch
    # refuses to read the history of one of several views whose base was written)
    for x, tx in zip(leaves, tleaves):
        with nbgrad.no_grad():
            x.detach().zero_()
        for o, t in zip(outs, touts):
            if o is not x:
                assert (o._version_counter is x._version_counter) == (t._base is tx)

GRADCHECK = [c for c in CASES if all(
    (not s or isinstance(s[0], int) or s[1] == "float64") for s in c[2]) and c[2]
    and all(s != () for s in c[2])]


@pytest.mark.parametrize("fn, specs", [c[1:3] for c in GRADCHECK], ids=[c[0] for c in GRADCHECK])
def test_gradcheck(fn, specs):
    leaves = [make(nbgrad, s, seed=k) for k, s in enumerate(specs)]

    def f(*xs):
        return fn(nbgrad, *xs)
    assert gradcheck(f, leaves)
    assert gradgradcheck(f, leaves)


SECOND = ["split-sizes", "unbind-dim1", "diagonal-dims", "roll-dims", "repeat-more-dims",
          "repeat_interleave-tensor", "tril-negative", "diag_embed-offset-dims", "flip-both",
          "meshgrid-xy", "column_stack", "chunk-transposed"]


@pytest.mark.parametrize("fn, specs", [c[1:3] for c in CASES if c[0] in SECOND],
                         ids=[c[0] for c in CASES if c[0] in SECOND])
def test_second_derivatives_like_torch(fn, specs):
    arrays = [values(s, seed=k) for k, s in enumerate(
        (s if not s or isinstance(s[0], int) else s[0]) for s in specs)]

    def f(*xs):
        lib = torch if isinstance(xs[0], torch.Tensor) else nbgrad
        outs = outputs(fn(lib, *xs))
        return lib.cat([o.reshape(-1) for o in outs])
    second_derivatives_like_torch(f, *arrays)


ERRORS = [
    lambda L: L.chunk(L.zeros(3), 0),
    lambda L: L.chunk(L.tensor(1.0), 2),
    lambda L: L.chunk(L.zeros(3), 2, 1),
    lambda L: L.chunk(L.zeros(3), 2.0),
    lambda L: L.split(L.zeros(3), -1),
    lambda L: L.split(L.zeros(3), 0),
    lambda L: L.split(L.zeros(3), [1, 1]),
    lambda L: L.split(L.zeros(3), [4, -1]),
    lambda L: L.split(L.tensor(1.), 1),
    lambda L: L.split(L.zeros(3), 1.5),
    lambda L: L.unbind(L.tensor(1.)),
    lambda L: L.unbind(L.zeros(2), 1),
    lambda L: L.flip(L.zeros(2, 3), (0, 0)),
    lambda L: L.flip(L.zeros(2, 3), (0, -2)),
    lambda L: L.flip(L.zeros(2, 3), 2),
    lambda L: L.fliplr(L.zeros(3)),
    lambda L: L.flipud(L.tensor(1.)),
    lambda L: L.roll(L.zeros(2, 3), (1, 2), 0),
    lambda L: L.roll(L.zeros(2, 3), 1, 2),
    lambda L: L.roll(L.zeros(2, 3), (), ()),
    lambda L: L.zeros(2, 3).repeat(2),
    lambda L: L.zeros(2, 3).repeat(-1, 2),
    lambda L: L.zeros(2, 3).repeat(),
    lambda L: L.tile(L.zeros(2), -1),
    lambda L: L.repeat_interleave(L.zeros(2), -1),
    lambda L: L.repeat_interleave(L.zeros(3), L.tensor([1, 2])),
    lambda L: L.repeat_interleave(L.zeros(3), L.tensor([1, -2, 1])),
    lambda L: L.repeat_interleave(L.zeros(3), L.tensor([1., 2, 1])),
    lambda L: L.repeat_interleave(L.zeros(3), L.tensor([[1]])),
    lambda L: L.repeat_interleave(L.zeros(3), 2, dim=1),
    lambda L: L.tril(L.zeros(3)),
    lambda L: L.triu(L.zeros(3)),
    lambda L: L.zeros(3).tril_(),
    lambda L: L.tril(L.zeros(3, 3), 1.5),
    lambda L: L.diag(L.zeros(2, 2, 2)),
    lambda L: L.diag(L.tensor(1.)),
    lambda L: L.diagonal(L.zeros(3, 3), 0, 1, 1),
    lambda L: L.diagonal(L.zeros(3, 3), 0, 0, 2),
    lambda L: L.diagonal(L.zeros(3)),
    lambda L: L.diag_embed(L.zeros(3), 0, 0, 0),
    lambda L: L.diag_embed(L.zeros(3), 0, 0, 3),
    lambda L: L.narrow(L.zeros(3), 0, 2, 2),
    lambda L: L.narrow(L.zeros(3), 0, 4, 0),
    lambda L: L.narrow(L.zeros(3), 0, -4, 1),
    lambda L: L.narrow(L.zeros(3), 0, 0, -1),
    lambda L: L.narrow(L.tensor(1.), 0, 0, 1),
    lambda L: L.narrow(L.zeros(3), 1, 0, 1),
    lambda L: L.movedim(L.zeros(2, 3), (0, 1), (1,)),
    lambda L: L.movedim(L.zeros(2, 3), (0, 0), (1, 0)),
    lambda L: L.movedim(L.zeros(2, 3), (0, 1), (1, 1)),
    lambda L: L.movedim(L.zeros(2, 3), 2, 0),
    lambda L: L.swapaxes(L.zeros(2, 3), 0, 2),
    lambda L: L.unflatten(L.zeros(2, 6), 1, (4, 2)),
    lambda L: L.unflatten(L.zeros(2, 6), 1, (-1, 5)),
    lambda L: L.unflatten(L.zeros(2, 6), 1, ()),
    lambda L: L.unflatten(L.zeros(2, 6), 2, (2, 3)),
    lambda L: L.zeros(2, 6).view_as(L.zeros(5)),
    lambda L: L.zeros(2, 6).t().view_as(L.zeros(12)),
    lambda L: L.broadcast_to(L.zeros(2, 3), (3, 3)),
    lambda L: L.broadcast_to(L.zeros(2, 3), (3,)),
    lambda L: L.broadcast_tensors(L.zeros(2), L.zeros(3)),
    lambda L: L.meshgrid(L.zeros(2), L.zeros(2), indexing="ab"),
    lambda L: L.meshgrid(L.zeros(2), L.zeros(2, dtype=L.int64), indexing="ij"),
    lambda L: L.meshgrid(indexing="ij"),
    lambda L: L.hstack([]),
    lambda L: L.vstack([]),
    lambda L: L.dstack([]),
    lambda L: L.column_stack([]),
    lambda L: L.hstack([L.zeros(2, 3), L.zeros(3, 3)]),
    lambda L: L.vstack([L.zeros(2, 3), L.zeros(2, 2)]),
    lambda L: L.hstack(L.zeros(2)),
    lambda L: L.column_stack([L.zeros(2), L.zeros(3)]),
    lambda L: L.split(L.zeros(3), [1, 2], 1),
    lambda L: L.tile(L.zeros(2)),
    lambda L: L.zeros(2).flip(),
    lambda L: L.roll(L.zeros(2), 1.5),
    lambda L: L.zeros(3).repeat_interleave(2, output_size=5),
    lambda L: L.zeros(3).repeat_interleave(L.tensor([1, 2, 3]), output_size=5),
    lambda L: L.repeat_interleave(L.tensor([1, 2]), output_size=4),
]


@pytest.mark.parametrize("fn", ERRORS, ids=[f"error-{k}" for k in range(len(ERRORS))])
def test_errors_match_torch(fn):
    assert_same_error(fn)


@pytest.mark.parametrize("fn", [
    lambda L: L.unflatten(L.zeros(2, 6), 1, (-1, -1)),
    lambda L: L.meshgrid(L.zeros(2, 2), L.zeros(2), indexing="ij"),
    lambda L: L.atleast_1d(1.0),
], ids=["unflatten-two-inferred", "meshgrid-2d", "atleast_1d-number"])
def test_errors_of_torch_type(fn):
    """PyTorch's exception type; its message quotes C++ internals or its old tensor printout."""
    assert_same_error(fn, exact=False)


def multi_view_not_requiring_grad(L):
    w = L.ones(2, requires_grad=True)
    L.zeros(4).split(2)[0].mul_(w)


def multi_view(L):
    L.zeros(4, requires_grad=True).clone().split(2)[1].mul_(2)


def view_of_multi_view(L):
    L.zeros(4, 3, requires_grad=True).clone().unbind(1)[2][0:1].mul_(2)


def multi_view_base_modified(L):
    x = L.zeros(4, requires_grad=True).clone()
    a = x.chunk(2)[0]
    x.mul_(2)
    a.grad_fn


def multi_view_in_no_grad(L):
    x = L.zeros(4, requires_grad=True).clone()
    with L.no_grad():
        a = x.split(2)[0]
    a.mul_(2)


def view_of_split_with_sizes(L):
    L.zeros(4, requires_grad=True).clone().split([1, 3])[1].view(3).add_(1)


@pytest.mark.parametrize("fn", [multi_view_not_requiring_grad, multi_view, view_of_multi_view,
                                multi_view_base_modified, multi_view_in_no_grad,
                                view_of_split_with_sizes])
def test_in_place_write_into_one_of_several_views_is_refused(fn):
    assert_same_error(fn)


def test_in_place_write_into_one_of_several_views_without_grad():
    x = nbgrad.arange(4.0, requires_grad=True).clone()
    b = x.split(2)[1]
    b.detach().mul_(2)
    with nbgrad.no_grad():
        b.mul_(2)
    np.testing.assert_array_equal(x.detach().numpy(), [0, 1, 8, 12])


@pytest.mark.parametrize("name", ["tril_", "triu_"])
@pytest.mark.parametrize("diagonal", [0, 1, -1])
def test_in_place_triangles(name, diagonal):
    results = []
    for lib in (nbgrad, torch):
        x = lib.tensor(values((2, 3, 4)), requires_grad=True)
        y = x * 2
        r = getattr(y, name)(diagonal)
        assert r is y and y._version == 1
        (y * lib.tensor(values((2, 3, 4), seed=3))).sum().backward()
        results.append((y, x.grad, node_name(y.grad_fn)))
    (y, g, n), (ty, tg, tn) = results
    assert n == tn
    assert_close(y, ty.detach())
    assert_close(g, tg)


def test_in_place_triangle_on_a_leaf_is_refused():
    assert_same_error(lambda L: L.zeros(3, 3, requires_grad=True).tril_())


@pytest.mark.parametrize("fn", [
    lambda L, o: L.tril(L.arange(9.0).reshape(3, 3), 1, out=o),
    lambda L, o: L.triu(L.arange(9.0).reshape(3, 3), out=o),
    lambda L, o: L.diag(L.arange(9.0).reshape(3, 3), out=o),
    lambda L, o: L.hstack([L.arange(3.0), L.ones(2)], out=o),
    lambda L, o: L.vstack([L.arange(3.0), L.ones(3)], out=o),
    lambda L, o: L.dstack([L.arange(3.0), L.ones(3)], out=o),
    lambda L, o: L.column_stack([L.arange(3.0), L.ones(3)], out=o),
], ids=["tril", "triu", "diag", "hstack", "vstack", "dstack", "column_stack"])
def test_out(fn):
    results = []
    for lib in (nbgrad, torch):
        o = lib.zeros(0)
        r = fn(lib, o)
        assert r is o
        results.append(o)
    assert tuple(results[0].shape) == tuple(results[1].shape)
    assert_close(results[0], results[1])


def test_out_refuses_autograd():
    assert_same_error(lambda L: L.tril(L.zeros(3, 3, requires_grad=True), out=L.zeros(3, 3)))


def test_meshgrid_without_indexing_warns_like_torch():
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        grids = nbgrad.meshgrid(nbgrad.zeros(2), nbgrad.zeros(3))
    assert [tuple(g.shape) for g in grids] == [(2, 3), (2, 3)]


def test_split_gradient_with_retained_graph_and_unused_outputs():
    for lib in (nbgrad, torch):
        x = lib.tensor(np.arange(6.0), requires_grad=True)
        a, b, c = x.split(2)
        y = (a * 2).sum() + (c ** 2).sum()
        first, = lib.autograd.grad(y, x, retain_graph=True)
        second, = lib.autograd.grad(y, x)
        np.testing.assert_array_equal(first.numpy(), [2, 2, 0, 0, 8, 10])
        np.testing.assert_array_equal(second.numpy(), [2, 2, 0, 0, 8, 10])
        assert [node_name(f) for f, _ in a.grad_fn.next_functions] == ["AccumulateGrad"]


FORWARD_MODE = [
    lambda L, d: d.split(4),
    lambda L, d: d.reshape(2, 3).unbind(1),
    lambda L, d: d.reshape(2, 3).flip(0),
    lambda L, d: d.roll(1),
    lambda L, d: L.tril(d.reshape(2, 3)),
    lambda L, d: L.meshgrid(d[:2], d[2:4], indexing="xy"),
    lambda L, d: L.diag_embed(d.reshape(2, 3), 1),
    lambda L, d: d.repeat_interleave(2),
    lambda L, d: L.hstack([d, d * 2]),
    lambda L, d: d.reshape(3, 2).diagonal(),
]


@pytest.mark.parametrize("fn", FORWARD_MODE)
def test_forward_mode_like_torch(fn):
    import nbgrad.autograd.forward_ad as ng_ad
    import torch.autograd.forward_ad as torch_ad
    results = []
    for lib, ad in ((nbgrad, ng_ad), (torch, torch_ad)):
        with ad.dual_level():
            d = ad.make_dual(lib.tensor(values(6)), lib.tensor(values(6, seed=2)))
            results.append([ad.unpack_dual(o).tangent for o in outputs(fn(lib, d))])
    for ours, theirs in zip(*results):
        assert_close(ours, theirs)


CUDA_CASES = ["split-sizes", "chunk", "unbind-dim1", "diagonal-dims", "flip-both",
              "roll-dims", "repeat-more-dims", "repeat_interleave-tensor", "tril-negative",
              "diag_embed-offset-dims", "column_stack", "meshgrid-xy"]


@pytest.mark.cuda
@pytest.mark.parametrize("fn, specs", [c[1:3] for c in CASES if c[0] in CUDA_CASES],
                         ids=[c[0] for c in CASES if c[0] in CUDA_CASES])
def test_cuda_matches_torch(fn, specs):
    """Values and gradients on the device; views stay views of the device tensor."""
    results = []
    for lib in (nbgrad, torch):
        leaves = [make(lib, s, seed=k) for k, s in enumerate(specs)]
        if lib is nbgrad:
            leaves = [x.detach().to("cuda").requires_grad_(x.requires_grad) for x in leaves]
        outs = outputs(fn(lib, *leaves))
        sum((o * lib.tensor(values(tuple(o.shape), seed=9 + k), dtype=o.dtype,
                            **({"device": "cuda"} if lib is nbgrad else {}))).sum()
            for k, o in enumerate(outs)).backward()
        results.append((leaves, outs))
    (leaves, outs), (tleaves, touts) = results
    for o, t in zip(outs, touts):
        assert o.device.type == "cuda"
        assert o.stride() == t.stride()
        assert (o._base is not None) == (t._base is not None)
        assert_close(o.detach().cpu(), t.detach())
    for x, tx in zip(leaves, tleaves):
        assert x.grad.device.type == "cuda"
        assert_close(x.grad.cpu(), tx.grad)


@cuda_only
def test_cuda_in_place_triangle(device):
    x = nbgrad.tensor(values((3, 3)), device=device, requires_grad=True)
    y = x * 1
    y.triu_(1)
    (y * 2).sum().backward()
    want = np.triu(values((3, 3)), 1)
    assert y.device.type == "cuda" and y._version == 1
    assert_close(y.detach().cpu(), want)
    assert_close(x.grad.cpu(), np.triu(np.full((3, 3), 2.0), 1))

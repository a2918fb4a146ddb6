"""Inputs that PyTorch refuses, across the public API, refused by nbgrad with
the same built-in exception type (nbgrad's may be a subclass) and, where
nbgrad copies PyTorch's text, the same normalised message; a refused
in-place call changes nothing (values and ``_version``).

Each case is a function of the library module, run against torch and nbgrad.
``TEXT``: the messages must agree; ``TYPE``: only the exception type (PyTorch's
text is its argument parser's overload listing, or names its C++ internals)."""
import numpy as np
import pytest
import torch

import nbgrad
from differential import normalise
from helpers import raised

TEXT, TYPE = True, False


def M(L):
    return L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])


def I(L):  # noqa: E743 - an int64 tensor
    return L.tensor([1, 2, 3])


def _deep(n):
    data = 1.0
    for _ in range(n):
        data = [data]
    return data


CASES = [
    # creation: sizes
    ("zeros-negative", lambda L: L.zeros(-1), TEXT),
    ("ones-negative", lambda L: L.ones(2, -3), TEXT),
    ("zeros-float-size", lambda L: L.zeros(2.5), TEXT),
    ("zeros-None-size", lambda L: L.zeros(None), TEXT),
    ("zeros-str-size", lambda L: L.zeros("a"), TEXT),
    ("zeros-float-in-sizes", lambda L: L.zeros(2, 2.5), TEXT),
    ("zeros-None-in-tuple", lambda L: L.zeros((2, None)), TEXT),
    ("randn-float-size", lambda L: L.randn(1.5), TEXT),
    ("full-float-in-size", lambda L: L.full((2.5,), 1.0), TEXT),
    ("full-int-size", lambda L: L.full(2, 1.0), TEXT),
    ("randint-float-in-size", lambda L: L.randint(2, (2.5,)), TEXT),
    ("zeros-overflowing-storage", lambda L: L.zeros(2 ** 40, 2 ** 40), TEXT),
    ("ones-overflowing-storage", lambda L: L.ones(2 ** 62), TEXT),
    ("rand-overflowing-storage", lambda L: L.rand(2 ** 40, 2 ** 40), TEXT),
    ("empty-more-than-memory", lambda L: L.empty(10 ** 13), TYPE),
    ("ones-size-beyond-int64", lambda L: L.ones(2 ** 63), TYPE),
    # creation: dtypes and values
    ("zeros-str-dtype", lambda L: L.zeros(2, dtype="float32"), TEXT),
    ("zeros-int-dtype", lambda L: L.zeros(2, dtype=3), TEXT),
    ("tensor-str-dtype", lambda L: L.tensor([1.0], dtype="float"), TEXT),
    ("sum-str-dtype", lambda L: M(L).sum(dtype="a"), TYPE),
    ("softmax-str-dtype", lambda L: M(L).softmax(0, dtype="a"), TEXT),
    ("to-str-dtype", lambda L: M(L).to(dtype="float32"), TYPE),
    ("type-bad-name", lambda L: M(L).type("foo"), TEXT),
    ("type-dtype-name", lambda L: M(L).type("float32"), TEXT),
    ("full-None", lambda L: L.full((2,), None), TEXT),
    ("full-str", lambda L: L.full((2,), "a"), TEXT),
    ("full-1d-tensor", lambda L: L.full((2,), L.tensor([3.0])), TEXT),
    ("full-int-beyond-64-bits", lambda L: L.full((2,), 2 ** 70), TEXT),
    ("full-int-beyond-int64", lambda L: L.full((2,), 2 ** 63), TEXT),
    ("full-int-below-int64", lambda L: L.full((2,), -2 ** 63 - 1), TEXT),
    ("full-nan-into-int64", lambda L: L.full((2,), float("nan"), dtype=L.int64), TEXT),
    ("full-1e300-into-int64", lambda L: L.full((2,), 1e300, dtype=L.int64), TEXT),
    ("full-3.5e38-into-float32", lambda L: L.full((2,), 3.5e38), TEXT),
    ("full-2**64-into-float32", lambda L: L.full((2,), 2 ** 64, dtype=L.float32), TEXT),
    ("tensor-None", lambda L: L.tensor(None), TEXT),
    ("tensor-list-of-None", lambda L: L.tensor([1, None]), TEXT),
    ("tensor-dict", lambda L: L.tensor({1: 2}), TEXT),
    ("tensor-set", lambda L: L.tensor({1, 2}), TEXT),
    ("tensor-object", lambda L: L.tensor(object()), TEXT),
    ("tensor-str", lambda L: L.tensor("a"), TEXT),
    ("tensor-bytes", lambda L: L.tensor(b"ab"), TEXT),
    ("tensor-list-of-str", lambda L: L.tensor(["a"]), TEXT),
    ("tensor-str-among-numbers", lambda L: L.tensor([1, "a"]), TEXT),
    ("tensor-str-among-lists", lambda L: L.tensor([[1], "ab"]), TEXT),
    ("tensor-ragged", lambda L: L.tensor([[1, 2], [3]]), TEXT),
    ("tensor-ragged-longer", lambda L: L.tensor([[1], [2, 3]]), TEXT),
    ("tensor-number-where-a-list-was", lambda L: L.tensor([[1, 2], 3]), TYPE),
    ("tensor-list-where-a-number-was", lambda L: L.tensor([1, [2]]), TYPE),
    ("tensor-10000-deep", lambda L: L.tensor(_deep(10000)), TEXT),
    ("tensor-int-2**63", lambda L: L.tensor([2 ** 63]), TEXT),
    ("tensor-int-2**64", lambda L: L.tensor([1, 2 ** 64]), TEXT),
    ("tensor-int-below-int64", lambda L: L.tensor([-2 ** 63 - 1]), TEXT),
    ("tensor-0d-int-2**63", lambda L: L.tensor(2 ** 63), TEXT),
    ("as_tensor-int-2**63", lambda L: L.as_tensor([2 ** 63]), TEXT),
    ("tensor-nan-into-int64", lambda L: L.tensor([float("nan")], dtype=L.int64), TEXT),
    ("tensor-0d-nan-into-int64", lambda L: L.tensor(float("nan"), dtype=L.int64), TEXT),
    ("tensor-inf-into-int64", lambda L: L.tensor([1.0, float("inf")], dtype=L.int64), TEXT),
    ("tensor-9.3e18-into-int64", lambda L: L.tensor([-9.3e18], dtype=L.int64), TEXT),
    ("tensor-int-requires-grad", lambda L: L.tensor([1, 2], requires_grad=True), TEXT),
    ("zeros-int-requires-grad", lambda L: L.zeros(2, dtype=L.int64, requires_grad=True), TEXT),
    ("from_numpy-list", lambda L: L.from_numpy([1, 2]), TEXT),
    ("from_numpy-object-array", lambda L: L.from_numpy(np.array([object()])), TYPE),
    ("from_numpy-str-array", lambda L: L.from_numpy(np.array(["a"])), TYPE),
    ("arange-step-0", lambda L: L.arange(0, 10, 0), TEXT),
    ("arange-wrong-sign", lambda L: L.arange(0, 10, -1), TEXT),
    ("arange-str", lambda L: L.arange("a"), TEXT),
    ("arange-None", lambda L: L.arange(None), TEXT),
    ("arange-nan", lambda L: L.arange(float("nan")), TEXT),
    ("arange-inf", lambda L: L.arange(float("inf")), TEXT),
    ("arange-minus-inf", lambda L: L.arange(0, float("-inf"), -1), TEXT),
    ("arange-int-beyond-64-bits", lambda L: L.arange(2 ** 70), TEXT),
    ("arange-too-many", lambda L: L.arange(0, 1e20, 1e-5), TEXT),
    ("linspace-negative-steps", lambda L: L.linspace(0, 1, -1), TEXT),
    ("linspace-float-steps", lambda L: L.linspace(0, 1, 2.5), TYPE),
    ("linspace-str-end", lambda L: L.linspace(0, "a", 2), TYPE),
    ("eye-negative", lambda L: L.eye(-1), TEXT),
    ("eye-str", lambda L: L.eye("a"), TEXT),
    ("eye-float-m", lambda L: L.eye(2, 2.5), TYPE),
    ("randint-low-not-below-high", lambda L: L.randint(5, 2, (3,)), TEXT),
    ("randint-float-high", lambda L: L.randint(0, 2.5, (2,)), TYPE),
    ("rand-int64", lambda L: L.rand(2, dtype=L.int64), TEXT),
    ("randn-int64", lambda L: L.randn(2, dtype=L.int64), TEXT),
    ("zeros_like-list", lambda L: L.zeros_like([1, 2]), TEXT),
    ("zeros_like-None", lambda L: L.zeros_like(None), TEXT),
    ("full_like-list", lambda L: L.full_like([1], 2), TEXT),
    ("ones_like-ndarray", lambda L: L.ones_like(np.ones(2)), TEXT),
    # reductions
    ("sum-str-dim", lambda L: M(L).sum(dim="a"), TYPE),
    ("sum-float-dim", lambda L: M(L).sum(dim=1.5), TYPE),
    ("sum-bool-dim", lambda L: M(L).sum(dim=True), TYPE),
    ("sum-str-in-dims", lambda L: M(L).sum(dim=[0, "a"]), TEXT),
    ("sum-dim-out-of-range", lambda L: M(L).sum(dim=2), TEXT),
    ("sum-negative-dim-out-of-range", lambda L: M(L).sum(dim=-3), TEXT),
    ("sum-duplicate-dims", lambda L: M(L).sum(dim=(0, 0)), TEXT),
    ("sum-duplicate-dims-negative", lambda L: M(L).sum(dim=(1, -1)), TEXT),
    ("sum-str-keepdim", lambda L: M(L).sum(dim=0, keepdim="a"), TEXT),
    ("sum-int-keepdim", lambda L: M(L).sum(dim=0, keepdim=1), TEXT),
    ("sum-None-keepdim", lambda L: M(L).sum(dim=0, keepdim=None), TEXT),
    ("sum-numpy-bool-keepdim", lambda L: M(L).sum(dim=0, keepdim=np.bool_(True)), TEXT),
    ("sum-numpy-float-dim", lambda L: M(L).sum(dim=np.float64(1)), TYPE),
    ("sum-dim-of-0d", lambda L: L.tensor(1.0).sum(1), TEXT),
    ("mean-int64", lambda L: I(L).mean(), TEXT),
    ("mean-str-dim", lambda L: M(L).mean(dim="x"), TYPE),
    ("mean-dim-out-of-range", lambda L: M(L).mean(dim=5), TEXT),
    ("mean-str-keepdim", lambda L: M(L).mean(0, keepdim="a"), TEXT),
    ("max-dim-out-of-range", lambda L: M(L).max(dim=3), TEXT),
    ("max-str-dim", lambda L: M(L).max(dim="a"), TYPE),
    ("max-float-dim", lambda L: M(L).max(dim=1.0), TYPE),
    ("max-str-keepdim", lambda L: M(L).max(0, keepdim="a"), TEXT),
    ("max-of-empty", lambda L: L.zeros(0).max(), TEXT),
    ("amax-duplicate-dims", lambda L: M(L).amax(dim=(0, 0)), TEXT),
    ("amax-dim-out-of-range", lambda L: M(L).amax(dim=4), TEXT),
    ("amax-str-dim", lambda L: M(L).amax(dim="a"), TYPE),
    ("softmax-dim-out-of-range", lambda L: M(L).softmax(dim=2), TEXT),
    ("softmax-str-dim", lambda L: M(L).softmax(dim="a"), TEXT),
    ("softmax-float-dim", lambda L: M(L).softmax(dim=1.0), TEXT),
    ("softmax-int64", lambda L: I(L).softmax(dim=0), TEXT),
    ("log_softmax-no-dim", lambda L: L.log_softmax(M(L)), TEXT),
    ("size-dim-out-of-range", lambda L: M(L).size(2), TEXT),
    ("size-str-dim", lambda L: M(L).size("a"), TYPE),
    ("stride-dim-out-of-range", lambda L: M(L).stride(5), TEXT),
    # shapes
    ("view-wrong-numel", lambda L: M(L).view(4), TEXT),
    ("view-two-minus-ones", lambda L: M(L).view(-1, -1), TEXT),
    ("view-float-size", lambda L: M(L).view(2.0, 3), TYPE),
    ("reshape-wrong-numel", lambda L: M(L).reshape(5), TEXT),
    ("reshape-str", lambda L: M(L).reshape("a"), TYPE),
    ("permute-too-few-dims", lambda L: M(L).permute(0), TEXT),
    ("permute-repeated-dim", lambda L: M(L).permute(0, 0), TEXT),
    ("permute-dim-out-of-range", lambda L: M(L).permute(0, 2), TEXT),
    ("transpose-dim-out-of-range", lambda L: M(L).transpose(0, 2), TEXT),
    ("transpose-str-dim", lambda L: M(L).transpose(0, "a"), TYPE),
    ("squeeze-dim-out-of-range", lambda L: M(L).squeeze(2), TEXT),
    ("unsqueeze-dim-out-of-range", lambda L: M(L).unsqueeze(3), TEXT),
    ("unsqueeze-str-dim", lambda L: M(L).unsqueeze("a"), TYPE),
    ("expand-wrong-size", lambda L: M(L).expand(3, 3), TEXT),
    ("expand-too-few-sizes", lambda L: M(L).expand(3), TEXT),
    ("flatten-end-before-start", lambda L: M(L).flatten(1, 0), TEXT),
    ("flatten-dim-out-of-range", lambda L: M(L).flatten(0, 5), TEXT),
    ("t-of-3d", lambda L: L.zeros(2, 2, 2).t(), TEXT),
    ("cat-nothing", lambda L: L.cat([]), TEXT),
    ("cat-mismatched-sizes", lambda L: L.cat([M(L), L.zeros(3, 2)]), TEXT),
    ("cat-dim-out-of-range", lambda L: L.cat([M(L), M(L)], dim=2), TEXT),
    ("cat-mismatched-ndim", lambda L: L.cat([M(L), L.zeros(3)]), TEXT),
    ("stack-nothing", lambda L: L.stack([]), TEXT),
    ("stack-mismatched-shapes", lambda L: L.stack([M(L), L.zeros(3, 2)]), TEXT),
    ("stack-dim-out-of-range", lambda L: L.stack([M(L), M(L)], dim=4), TEXT),
    # indexing
    ("index-float", lambda L: M(L)[1.5], TEXT),
    ("index-out-of-range", lambda L: M(L)[5], TEXT),
    ("index-negative-out-of-range", lambda L: M(L)[-3], TEXT),
    ("index-too-many", lambda L: M(L)[0, 0, 0], TEXT),
    ("index-mask-of-wrong-shape", lambda L: M(L)[L.tensor([True, False, True])], TEXT),
    ("index-tensor-out-of-range", lambda L: M(L)[L.tensor([5])], TEXT),
    ("index-float-tensor", lambda L: M(L)[L.tensor([1.0])], TEXT),
    ("index-str", lambda L: M(L)["a"], TEXT),
    ("index-bytes", lambda L: M(L)[b"a"], TEXT),
    ("index-str-in-tuple", lambda L: M(L)[0, "a"], TEXT),
    ("index-object", lambda L: M(L)[object()], TYPE),
    # linear algebra and broadcasting
    ("matmul-mismatched", lambda L: L.matmul(M(L), M(L)), TEXT),
    ("mm-mismatched", lambda L: L.mm(M(L), M(L)), TEXT),
    ("mm-of-1d", lambda L: L.mm(L.zeros(3), M(L)), TEXT),
    ("matmul-of-0d", lambda L: L.matmul(L.tensor(1.0), M(L)), TEXT),
    ("matmul-mixed-dtypes", lambda L: L.matmul(M(L), L.ones(3, 2, dtype=L.float64)), TEXT),
    ("matmul-bool-dot", lambda L: L.ones(2, dtype=L.bool) @ L.ones(2, dtype=L.bool), TEXT),
    ("matmul-bool-mv", lambda L: L.ones(2, 2, dtype=L.bool) @ L.ones(2, dtype=L.bool), TEXT),
    ("matmul-bool-mm", lambda L: L.ones(2, 2, dtype=L.bool) @ L.ones(2, 2, dtype=L.bool), TEXT),
    ("matmul-bool-folded", lambda L: L.ones(3, 2, 2, dtype=L.bool) @ L.ones(2, dtype=L.bool), TEXT),
    ("matmul-bool-bmm", lambda L: L.ones(2, dtype=L.bool) @ L.ones(3, 2, 2, dtype=L.bool), TEXT),
    ("add-mismatched-shapes", lambda L: M(L) + L.zeros(3, 2), TEXT),
    ("add-str", lambda L: M(L) + "a", TYPE),
    ("add-None", lambda L: M(L) + None, TYPE),
    ("mse_loss-mismatched-shapes",
     lambda L: L.nn.functional.mse_loss(L.zeros(2, 3), L.zeros(3, 2)), TEXT),
    # conversions and autograd
    ("requires_grad_-on-int64", lambda L: I(L).requires_grad_(), TEXT),
    ("requires_grad-set-on-int64", lambda L: setattr(I(L), "requires_grad", True), TEXT),
    ("item-of-many", lambda L: M(L).item(), TEXT),
    ("item-of-none", lambda L: L.zeros(0).item(), TEXT),
    ("int-of-many", lambda L: int(M(L)), TEXT),
    ("float-of-many", lambda L: float(M(L)), TEXT),
    ("bool-of-many", lambda L: bool(M(L)), TEXT),
    ("len-of-0d", lambda L: len(L.tensor(1.0)), TEXT),
    ("iter-of-0d", lambda L: iter(L.tensor(1.0)), TEXT),
    ("float-tensor-as-index", lambda L: [1, 2][L.tensor(1.0)], TEXT),
    ("numpy-of-requires-grad", lambda L: L.ones(2, requires_grad=True).numpy(), TEXT),
    ("backward-of-non-scalar", lambda L: (L.ones(2, requires_grad=True) * 2).backward(), TEXT),
    ("backward-wrong-gradient-shape",
     lambda L: (L.ones(2, requires_grad=True) * 2).backward(L.ones(3)), TEXT),
    ("backward-list-gradient",
     lambda L: (L.ones(2, requires_grad=True) * 2).backward([1.0, 1.0]), TEXT),
    ("backward-str-inputs",
     lambda L: (L.ones(2, requires_grad=True) * 2).sum().backward(inputs="a"), TEXT),
    ("backward-empty-inputs",
     lambda L: (L.ones(2, requires_grad=True) * 2).sum().backward(inputs=[]), TEXT),
    ("backward-without-graph", lambda L: L.ones(2).sum().backward(), TEXT),
    ("grad-set-to-str", lambda L: setattr(L.ones(2, requires_grad=True), "grad", "a"), TEXT),
    # nn, init and optim
    ("Linear-negative-features", lambda L: L.nn.Linear(-1, 2), TEXT),
    ("cross_entropy-class-out-of-range",
     lambda L: L.nn.functional.cross_entropy(L.zeros(2, 3), L.tensor([0, 5])), TEXT),
    ("mse_loss-bad-reduction",
     lambda L: L.nn.functional.mse_loss(L.zeros(2), L.zeros(2), reduction="x"), TEXT),
    ("Dropout-p-above-1", lambda L: L.nn.Dropout(p=1.5), TEXT),
    ("dropout-negative-p", lambda L: L.nn.functional.dropout(M(L), p=-0.1), TEXT),
    ("init-fans-of-1d", lambda L: L.nn.init.xavier_uniform_(L.zeros(3)), TEXT),
    ("init-bad-mode", lambda L: L.nn.init.kaiming_uniform_(L.zeros(3, 3), mode="x"), TEXT),
    ("init-bad-nonlinearity", lambda L: L.nn.init.calculate_gain("x"), TEXT),
    ("init-bad-negative-slope", lambda L: L.nn.init.calculate_gain("leaky_relu", "a"), TEXT),
    ("init-eye-of-1d", lambda L: L.nn.init.eye_(L.zeros(2)), TEXT),
    ("init-uniform-a-above-b", lambda L: L.nn.init.uniform_(L.zeros(2), 2, 1), TEXT),
    ("init-trunc_normal-a-above-b", lambda L: L.nn.init.trunc_normal_(L.zeros(2), a=2, b=1),
     TEXT),
    ("init-normal-negative-std", lambda L: L.nn.init.normal_(L.zeros(2), 0, -1), TEXT),
    ("init-normal-of-list", lambda L: L.nn.init.normal_([1.0]), TEXT),
    ("init-constant-str", lambda L: L.nn.init.constant_(L.zeros(2), "a"), TYPE),
    ("Parameter-of-int64", lambda L: L.nn.Parameter(L.zeros(2, dtype=L.int64)), TEXT),
    ("Linear-float-features", lambda L: L.nn.Linear(2.5, 2), TEXT),
    ("Linear-wrong-input-features", lambda L: L.nn.Linear(3, 2)(L.zeros(2, 4)), TYPE),
    ("Linear-int64-input", lambda L: L.nn.Linear(3, 2)(L.zeros(2, 3, dtype=L.int64)), TYPE),
    ("cross_entropy-too-many-targets",
     lambda L: L.nn.functional.cross_entropy(L.zeros(2, 3), L.tensor([0, 1, 2])), TEXT),
    ("cross_entropy-int64-probabilities",
     lambda L: L.nn.functional.cross_entropy(L.zeros(2, 3), L.zeros(2, 3, dtype=L.int64)), TYPE),
    ("cross_entropy-float-class-targets",
     lambda L: L.nn.functional.cross_entropy(L.zeros(2, 3), L.tensor([0.0, 1.0])), TYPE),
    ("nll_loss-negative-class",
     lambda L: L.nn.functional.nll_loss(L.zeros(2, 3), L.tensor([0, -5])), TEXT),
    ("load_state_dict-missing-keys", lambda L: L.nn.Linear(2, 2).load_state_dict({}), TEXT),
    ("SGD-str-lr", lambda L: L.optim.SGD([L.zeros(2, requires_grad=True)], lr="a"), TEXT),
    ("SGD-int-params", lambda L: L.optim.SGD([1, 2], lr=0.1), TEXT),
    ("SGD-negative-lr", lambda L: L.optim.SGD([L.zeros(2, requires_grad=True)], lr=-1), TEXT),
    ("SGD-negative-momentum",
     lambda L: L.optim.SGD([L.zeros(2, requires_grad=True)], lr=0.1, momentum=-1), TEXT),
    ("SGD-no-parameters", lambda L: L.optim.SGD([], lr=0.1), TEXT),
    ("SGD-a-tensor", lambda L: L.optim.SGD(L.zeros(2, requires_grad=True), lr=0.1), TEXT),
    ("Adam-negative-lr", lambda L: L.optim.Adam([L.zeros(2, requires_grad=True)], lr=-1), TEXT),
    ("Adam-beta-above-1",
     lambda L: L.optim.Adam([L.zeros(2, requires_grad=True)], betas=(1.5, 0.9)), TEXT),
    ("Adam-negative-eps", lambda L: L.optim.Adam([L.zeros(2, requires_grad=True)], eps=-1), TEXT),
    # devices and files
    ("to-bad-device-string", lambda L: M(L).to("float33"), TYPE),
    ("to-device-index-without-a-gpu", lambda L: M(L).to(3), TYPE),
    ("device-unknown-type", lambda L: L.device("tpu"), TYPE),
    ("device-negative-index", lambda L: L.device("cuda", -1), TEXT),
    ("clamp-without-bounds", lambda L: M(L).clamp(), TEXT),
    ("clamp-None-bounds", lambda L: L.clamp(M(L), None, None), TEXT),
    ("clip_-without-bounds", lambda L: M(L).clip_(), TEXT),
    ("clamp-str", lambda L: M(L).clamp("a"), TEXT),
    ("clamp-str-max", lambda L: M(L).clamp(max="a"), TEXT),
    ("clamp-number-and-str", lambda L: M(L).clamp(1, "a"), TEXT),
    ("clamp-None-and-str", lambda L: M(L).clamp(None, "a"), TEXT),
    ("clamp-number-and-str-max", lambda L: M(L).clamp(1, max="a"), TEXT),
    ("clamp-tensor-and-number", lambda L: M(L).clamp(L.zeros(3), 4.0), TEXT),
    ("clamp-number-and-tensor", lambda L: M(L).clamp(min=1.0, max=L.zeros(3)), TEXT),
    ("clamp-list", lambda L: M(L).clamp([1.0]), TEXT),
    ("clamp-three-bounds", lambda L: M(L).clamp(1, 2, 3), TEXT),
    ("clamp-unknown-keyword", lambda L: M(L).clamp(mn=1), TEXT),
    ("clip-str", lambda L: M(L).clip("a"), TEXT),
    ("clamp_-str", lambda L: M(L).clamp_("a"), TEXT),
    ("clamp-int64-2**63", lambda L: I(L).clamp(2 ** 63), TEXT),
    ("clamp-bool-2**63", lambda L: L.tensor([True]).clamp(max=2 ** 63), TEXT),
    ("where-int64-2**63", lambda L: L.where(I(L) > 1, I(L), 2 ** 63), TEXT),
    ("relu-str", lambda L: L.nn.functional.relu("a"), TEXT),
    ("relu-number", lambda L: L.nn.functional.relu(1.0), TEXT),
    ("relu-inplace-list", lambda L: L.nn.functional.relu([1.0], inplace=True), TEXT),
    ("exp-str", lambda L: L.exp("a"), TEXT),
    ("sigmoid-number", lambda L: L.sigmoid(2.0), TEXT),
    ("reciprocal-None", lambda L: L.reciprocal(None), TEXT),
    # maximum and minimum take tensors only
    ("maximum-method-number", lambda L: M(L).maximum(2.0), TEXT),
    ("minimum-method-int", lambda L: M(L).minimum(2), TEXT),
    ("maximum-function-number", lambda L: L.maximum(M(L), True), TEXT),
    ("minimum-function-number-first", lambda L: L.minimum(2.0, M(L)), TEXT),
    ("maximum-str", lambda L: M(L).maximum("a"), TEXT),
    # Python ints PyTorch cannot make a Scalar (int64, or uint64 from 2**63)
    ("add-int-2**70", lambda L: M(L) + 2 ** 70, TEXT),
    ("radd-int-2**64", lambda L: 2 ** 64 + M(L), TEXT),
    ("mul-int64-below-int64", lambda L: I(L) * (-2 ** 63 - 1), TEXT),
    ("rdiv-int-2**64", lambda L: 2 ** 64 / I(L), TEXT),
    ("lt-int-2**100", lambda L: M(L) < 2 ** 100, TEXT),
    ("eq-bool-2**63", lambda L: L.tensor([True]) == 2 ** 63, TEXT),
    ("add-bool-2**64-1", lambda L: L.tensor([True]) + (2 ** 64 - 1), TEXT),
    ("div-bool-2**63", lambda L: L.tensor([True]) / 2 ** 63, TEXT),
    ("rpow-bool-2**63", lambda L: (2 ** 63) ** L.tensor([True]), TEXT),
    ("pow-int64-2**63", lambda L: I(L) ** 2 ** 63, TEXT),
    ("pow-bool-2**63", lambda L: L.tensor([True]) ** 2 ** 63, TEXT),
    ("pow-int64-below-int64", lambda L: I(L) ** (-2 ** 63 - 1), TEXT),
    ("pow-int64-2**64", lambda L: L.pow(I(L), 2 ** 64), TEXT),
    ("clamp-float32-2**64", lambda L: M(L).clamp(max=2 ** 64), TEXT),
    ("where-float-condition", lambda L: L.where(M(L), M(L), M(L)), TEXT),
    ("manual_seed-beyond-64-bits", lambda L: L.manual_seed(2 ** 64), TEXT),
    ("manual_seed-str", lambda L: L.manual_seed("a"), TEXT),
    ("load-missing-file", lambda L: L.load("/nonexistent/dir/file.pt"), TEXT),
]


def _builtin(error):
    return next(c for c in type(error).__mro__ if c.__module__ == "builtins")


@pytest.mark.filterwarnings("ignore:Using a target size", "ignore:Using a non-tuple sequence")
@pytest.mark.parametrize("call, text", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_refused_as_pytorch_refuses_it(call, text):
    ours, theirs = raised(call, nbgrad), raised(call, torch)
    assert isinstance(ours, _builtin(theirs)), (type(ours), type(theirs), str(ours))
    if text:
        assert normalise(ours) == normalise(theirs).split(" (Triggered internally")[0]


def test_case_names_are_unique():
    names = [c[0] for c in CASES]
    assert len(names) == len(set(names))


# In-place calls on a target that must come out of a refusal untouched.
INPLACE = [
    ("int64-add_-float", I, lambda L, t: t.add_(1.5), TEXT),
    ("int64-mul_-float-tensor", I, lambda L, t: t.mul_(L.tensor([1.5, 2.0, 3.0])), TEXT),
    ("int64-div_", I, lambda L, t: t.div_(2), TEXT),
    ("int64-sigmoid_", I, lambda L, t: t.sigmoid_(), TYPE),
    ("bool-add_-int", lambda L: L.tensor([True, False]), lambda L, t: t.add_(1), TEXT),
    ("int64-fill_-2**63", I, lambda L, t: t.fill_(2 ** 63), TEXT),
    ("int64-fill_-below-int64", I, lambda L, t: t.fill_(-2 ** 63 - 1), TEXT),
    ("int64-fill_-2**64", I, lambda L, t: t.fill_(2 ** 64), TEXT),
    ("int64-fill_-nan", I, lambda L, t: t.fill_(float("nan")), TEXT),
    ("int64-fill_-inf", I, lambda L, t: t.fill_(float("inf")), TEXT),
    ("int64-fill_-1e30", I, lambda L, t: t.fill_(1e30), TEXT),
    ("float32-fill_-1e300", M, lambda L, t: t.fill_(1e300), TEXT),
    ("float32-fill_-2**70", M, lambda L, t: t.fill_(2 ** 70), TEXT),
    ("fill_-str", M, lambda L, t: t.fill_("a"), TYPE),
    ("fill_-1d-tensor", M, lambda L, t: t.fill_(L.zeros(2)), TEXT),
    ("add_-mismatched-shape", M, lambda L, t: t.add_(L.zeros(3, 2)), TEXT),
    ("add_-broadcast-beyond-self", lambda L: L.zeros(3), lambda L, t: t.add_(L.zeros(2, 3)),
     TEXT),
    ("copy_-mismatched-shape", M, lambda L, t: t.copy_(L.zeros(4)), TEXT),
    ("setitem-out-of-range", M, lambda L, t: t.__setitem__(5, 1.0), TEXT),
    ("setitem-mismatched-value", M, lambda L, t: t.__setitem__(0, L.zeros(4)), TEXT),
    ("int64-setitem-2**63", I, lambda L, t: t.__setitem__(0, 2 ** 63), TEXT),
    ("float32-setitem-2**64", M, lambda L, t: t.__setitem__(0, 2 ** 64), TEXT),
    ("int64-setitem-below-int64", I, lambda L, t: t.__setitem__(0, -2 ** 63 - 1), TEXT),
    ("int64-setitem-nan", I, lambda L, t: t.__setitem__(0, float("nan")), TEXT),
    ("int64-setitem-slice-nan", I, lambda L, t: t.__setitem__(slice(None), float("nan")), TEXT),
    ("int64-setitem-1e300", I, lambda L, t: t.__setitem__(0, 1e300), TEXT),
    ("float32-setitem-1e300", M, lambda L, t: t.__setitem__(0, 1e300), TEXT),
    ("init-constant_-beyond-int64", I, lambda L, t: L.nn.init.constant_(t, 2 ** 63), TEXT),
    ("leaf-fill_-2**70", lambda L: L.ones(2, requires_grad=True), lambda L, t: t.fill_(2 ** 70),
     TEXT),
    ("bool-fill_-2**64", lambda L: L.tensor([True]), lambda L, t: t.fill_(2 ** 64), TEXT),
    ("float32-add_-2**70", M, lambda L, t: t.add_(2 ** 70), TEXT),
    ("float32-iadd-2**64", M, lambda L, t: t.__iadd__(2 ** 64), TEXT),
    ("int64-mul_-below-int64", I, lambda L, t: t.mul_(-2 ** 63 - 1), TEXT),
    ("int64-pow_-2**63", I, lambda L, t: t.pow_(2 ** 63), TEXT),
    ("int64-ipow-below-int64", I, lambda L, t: t.__ipow__(-2 ** 63 - 1), TEXT),
    ("int64-clamp_-2**63", I, lambda L, t: t.clamp_(max=2 ** 63), TEXT),
    ("float32-clamp_-2**64", M, lambda L, t: t.clamp_(2 ** 64), TEXT),
    ("bool-add_-2**63", lambda L: L.tensor([True]), lambda L, t: t.add_(2 ** 63), TEXT),
    ("float32-clamp_-tensor-and-number", M, lambda L, t: t.clamp_(L.zeros(3), 4.0), TEXT),
    ("int64-reciprocal_", I, lambda L, t: t.reciprocal_(), TEXT),
]


@pytest.mark.parametrize("make, call, text", [c[1:] for c in INPLACE],
                         ids=[c[0] for c in INPLACE])
def test_refused_in_place_call_changes_nothing(make, call, text):
    errors = {}
    for L in (torch, nbgrad):
        target = make(L)
        before, version = target.detach().numpy().copy(), target._version
        errors[L] = raised(lambda L: call(L, target), L)
        np.testing.assert_array_equal(target.detach().numpy(), before)
        assert target._version == version
        assert target.grad_fn is None
    ours, theirs = errors[nbgrad], errors[torch]
    assert isinstance(ours, _builtin(theirs)), (type(ours), type(theirs), str(ours))
    if text:
        assert normalise(ours) == normalise(theirs)

"""Random numbers (issue 15, item 9): Generator and the default generator's
state, the in-place samplers and the sampling functions. nbgrad draws
PyTorch's distributions from another stream (NumPy's PCG64), so values are
checked by statistics of seeded (derandomized) samples, against the
distribution's moments and against PyTorch's own samples (a two-sample
Kolmogorov-Smirnov distance), and errors by PyTorch's exact texts."""
import math

import numpy as np
import pytest
import torch

import nbgrad
from helpers import assert_same_error, cuda_only

TESTED_OPS = {"uniform_", "normal_", "bernoulli_", "exponential_", "random_", "geometric_",
              "cauchy_", "log_normal_", "randperm", "multinomial", "bernoulli", "poisson",
              "normal", "randint_like", "Generator", "manual_seed", "seed", "initial_seed",
              "get_rng_state", "set_rng_state"}

N = 20000


def _ks(a, b):
    """The two-sample Kolmogorov-Smirnov distance of two samples."""
    a, b = np.sort(np.asarray(a, np.float64)), np.sort(np.asarray(b, np.float64))
    grid = np.concatenate([a, b])
    return np.max(np.abs(np.searchsorted(a, grid, "right") / a.size
                         - np.searchsorted(b, grid, "right") / b.size))


# (sampler, args, mean, variance or None): the distribution's moments
SAMPLERS = [
    ("uniform_", (2.0, 5.0), 3.5, 9 / 12),
    ("normal_", (1.0, 2.0), 1.0, 4.0),
    ("bernoulli_", (0.3,), 0.3, 0.21),
    ("exponential_", (2.0,), 0.5, 0.25),
    ("geometric_", (0.25,), 4.0, 0.75 / 0.0625),
    ("cauchy_", (1.0, 0.5), None, None),  # no moments: median and KS only
    ("log_normal_", (0.0, 0.5), math.exp(0.125), (math.exp(0.25) - 1) * math.exp(0.25)),
    ("random_", (3, 9), 5.5, (36 - 1) / 12),
]


@pytest.mark.parametrize("name, args, mean, variance", SAMPLERS, ids=[s[0] for s in SAMPLERS])
def test_in_place_samplers_draw_pytorchs_distributions(name, args, mean, variance):
    g = nbgrad.Generator().manual_seed(11)
    t = nbgrad.empty(N, dtype=nbgrad.float64)
    version = t._version
    assert getattr(t, name)(*args, generator=g) is t
    assert t._version == version + 1
    ours = t.numpy()
    theirs = getattr(torch.empty(N, dtype=torch.float64), name)(
        *args, generator=torch.Generator().manual_seed(11)).numpy()
    assert _ks(ours, theirs) < 0.03  # same distribution (the 1e-3 critical value is ~0.02)
    if mean is not None:
        se = math.sqrt(variance / N)
        assert abs(ours.mean() - mean) < 5 * se
        assert abs(ours.var() - variance) < 0.1 * variance
    else:
        assert abs(np.median(ours) - args[0]) < 0.05
    again = getattr(nbgrad.empty(N, dtype=nbgrad.float64), name)(
        *args, generator=nbgrad.Generator().manual_seed(11))
    np.testing.assert_array_equal(again.numpy(), ours)  # one seed, one stream


@pytest.mark.parametrize("dtype", ["float16", "float32", "int8", "uint8", "int32", "int64",
                                   "bool"])
def test_random_without_bounds_covers_the_dtype_as_pytorch(dtype):
    nb_dtype, torch_dtype = getattr(nbgrad, dtype), getattr(torch, dtype)
    ours = nbgrad.empty(N, dtype=nb_dtype).random_(generator=nbgrad.Generator().manual_seed(3))
    theirs = torch.empty(N, dtype=torch_dtype).random_(generator=torch.Generator().manual_seed(3))
    assert ours.dtype is nb_dtype
    a, b = ours.numpy().astype(np.float64), theirs.numpy().astype(np.float64)
    assert a.min() >= 0 and a.max() <= b.max() * 1.01 + 1
    assert _ks(a / max(b.max(), 1), b / max(b.max(), 1)) < 0.03


def test_generator_state_and_the_default_generator():
    g = nbgrad.Generator()
    assert g.initial_seed() == torch.Generator().initial_seed()  # PyTorch's default seed
    assert g.device == nbgrad.device("cpu") and g.manual_seed(-1) is g
    assert g.initial_seed() == torch.Generator().manual_seed(-1).initial_seed()
    state = g.get_state()
    assert state.dtype is nbgrad.uint8 and state.ndim == 1
    first = nbgrad.randn(5, generator=g).tolist()
    g.set_state(state)
    assert nbgrad.randn(5, generator=g).tolist() == first
    assert g.initial_seed() == 2 ** 64 - 1
    seeded = g.seed()
    assert g.initial_seed() == seeded and 0 <= seeded < 2 ** 64

    nbgrad.manual_seed(7)
    assert nbgrad.initial_seed() == 7 == nbgrad.default_generator.initial_seed()
    state = nbgrad.get_rng_state()
    drawn = (nbgrad.rand(3).tolist(), nbgrad.randint(0, 9, (3,)).tolist(),
             nbgrad.empty(3).normal_().tolist(), nbgrad.randperm(5).tolist())
    nbgrad.set_rng_state(state)
    assert drawn == (nbgrad.rand(3).tolist(), nbgrad.randint(0, 9, (3,)).tolist(),
                     nbgrad.empty(3).normal_().tolist(), nbgrad.randperm(5).tolist())
    assert nbgrad.seed() == nbgrad.initial_seed()
    assert isinstance(nbgrad.manual_seed(3), nbgrad.Generator)
    nbgrad.manual_seed(0)


def test_generator_passed_to_every_function():
    def draws(lib):
        g = lib.Generator().manual_seed(5)
        probabilities = lib.tensor([[0.2, 0.8, 0.0], [0.5, 0.25, 0.25]])
        return [lib.rand(2, generator=g), lib.randn(2, generator=g),
                lib.randint(0, 5, (3,), generator=g), lib.randperm(4, generator=g),
                lib.multinomial(probabilities, 2, generator=g),
                lib.bernoulli(lib.full((3,), 0.5), generator=g),
                lib.poisson(lib.full((3,), 2.0), generator=g),
                lib.normal(lib.zeros(2), 1.0, generator=g),
                lib.normal(0.0, 1.0, (2,), generator=g),
                lib.randint_like(lib.zeros(3, dtype=lib.int32), 2, 5, generator=g)]
    ours, again, theirs = draws(nbgrad), draws(nbgrad), draws(torch)
    for a, b, t in zip(ours, again, theirs):
        assert a.tolist() == b.tolist()
        assert str(a.dtype).split(".")[1] == str(t.dtype).split(".")[1]
        assert tuple(a.shape) == tuple(t.shape)


def test_sampling_functions_statistics():
    g = nbgrad.Generator().manual_seed(1)
    perm = nbgrad.randperm(1000, generator=g)
    assert sorted(perm.tolist()) == list(range(1000)) and perm.dtype is nbgrad.int64
    assert nbgrad.randperm(5, dtype=nbgrad.float32).dtype is nbgrad.float32
    weights = nbgrad.tensor([1.0, 0.0, 3.0, 4.0])
    drawn = nbgrad.multinomial(weights.expand(500, 4), 3, generator=g)
    assert drawn.shape == (500, 3) and drawn.dtype is nbgrad.int64
    rows = drawn.numpy()
    assert all(len(set(r)) == 3 for r in rows) and not (rows[:, :2] == 1).any()
    counts = np.bincount(nbgrad.multinomial(weights, N, True, generator=g).numpy(), minlength=4)
    np.testing.assert_allclose(counts / N, [0.125, 0, 0.375, 0.5], atol=0.015)
    rates = nbgrad.full((N,), 3.5, dtype=nbgrad.float64)
    assert abs(nbgrad.poisson(rates, generator=g).mean().item() - 3.5) < 0.05
    p = nbgrad.full((N,), 0.25)
    assert abs(nbgrad.bernoulli(p, generator=g).mean().item() - 0.25) < 0.015
    assert abs(nbgrad.bernoulli(p, 0.75, generator=g).mean().item() - 0.75) < 0.015
    mean, std = nbgrad.full((N,), 2.0), nbgrad.full((N,), 3.0)
    for x in (nbgrad.normal(mean, std, generator=g), nbgrad.normal(mean, 3.0, generator=g),
              nbgrad.normal(2.0, std, generator=g), nbgrad.normal(2.0, 3.0, (N,), generator=g)):
        assert abs(x.mean().item() - 2.0) < 0.1 and abs(x.numpy().std() - 3.0) < 0.1
    like = nbgrad.randint_like(nbgrad.zeros(N, dtype=nbgrad.float64), 3, 7, generator=g)
    assert like.dtype is nbgrad.float64 and set(like.tolist()) == {3.0, 4.0, 5.0, 6.0}
    assert nbgrad.randint_like(nbgrad.zeros(3), 5).dtype is nbgrad.float32


def test_float16_samples():
    x = nbgrad.empty(N, dtype=nbgrad.float16).uniform_(generator=nbgrad.Generator())
    assert x.dtype is nbgrad.float16 and 0 <= x.min().item() and x.max().item() <= 1
    assert nbgrad.rand(4, dtype=nbgrad.float16).dtype is nbgrad.float16


def test_a_sampler_writes_as_copy_does():
    leaf = nbgrad.zeros(3, requires_grad=True)
    assert_same_error(lambda lib: lib.zeros(3, requires_grad=True).uniform_())
    with nbgrad.no_grad():
        leaf.normal_()
    x = nbgrad.ones(3, requires_grad=True)
    y = x * 2
    y.uniform_()  # a recorded write: what it replaced gets a zero gradient
    (y * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())


ERRORS = [
    lambda lib: lib.randperm(-1),
    lambda lib: lib.multinomial(lib.tensor(1.0), 1),
    lambda lib: lib.multinomial(lib.tensor([1.0, -1.0]), 1),
    lambda lib: lib.multinomial(lib.tensor([1.0, float("inf")]), 1),
    lambda lib: lib.multinomial(lib.tensor([1.0, 1.0]), 3),
    lambda lib: lib.multinomial(lib.tensor([0.0, 0.0]), 1),
    lambda lib: lib.multinomial(lib.tensor([1, 2]), 1),
    lambda lib: lib.multinomial(lib.tensor([1.0, 2.0]), 0),
    lambda lib: lib.multinomial(lib.ones(2, 2, 2), 1),
    lambda lib: lib.bernoulli(lib.tensor([1.5])),
    lambda lib: lib.zeros(2).bernoulli_(1.5),
    lambda lib: lib.bernoulli(lib.tensor([1])),
    lambda lib: lib.poisson(lib.tensor([-1.0])),
    lambda lib: lib.poisson(lib.tensor([1])),
    lambda lib: lib.normal(0.0, -1.0, size=(2,)),
    lambda lib: lib.zeros(2).normal_(0, -1),
    lambda lib: lib.normal(lib.zeros(2), lib.tensor([1.0, -1.0])),
    lambda lib: lib.normal(lib.tensor([1, 2]), 1.0),
    lambda lib: lib.zeros(2).uniform_(2, 1),
    lambda lib: lib.zeros(2, dtype=lib.int64).uniform_(),
    lambda lib: lib.zeros(2, dtype=lib.int64).normal_(),
    lambda lib: lib.zeros(2).exponential_(-1),
    lambda lib: lib.zeros(2, dtype=lib.int64).exponential_(),
    lambda lib: lib.zeros(2).geometric_(0),
    lambda lib: lib.zeros(2).geometric_(1.5),
    lambda lib: lib.zeros(2, dtype=lib.int64).cauchy_(),
    lambda lib: lib.zeros(2).log_normal_(1, 0),
    lambda lib: lib.zeros(2).log_normal_(1, -1),
    lambda lib: lib.zeros(2).random_(3, 3),
    lambda lib: lib.randint_like(lib.zeros(3), 5, 2),
    lambda lib: lib.Generator().manual_seed("x"),
    lambda lib: lib.manual_seed(2 ** 64),
    lambda lib: lib.Generator().set_state(lib.zeros(3)),
    lambda lib: lib.set_rng_state(lib.zeros(3)),
]


@pytest.mark.parametrize("fn", ERRORS, ids=range(len(ERRORS)))
def test_errors_like_torch(fn):
    assert_same_error(fn)


def test_errors_nbgrad_words_itself():
    with pytest.raises(RuntimeError, match="Expected a PCG64 generator state of size 48 but found "
                                           "the input RNG state size to be 3"):
        nbgrad.set_rng_state(nbgrad.zeros(3, dtype=nbgrad.uint8))
    with pytest.raises(TypeError, match="argument 'generator' must be nbgrad.Generator, not int"):
        nbgrad.rand(2, generator=3)


@cuda_only
def test_cuda_draws_on_the_device(device):
    g = nbgrad.Generator(device="cuda").manual_seed(2)
    assert g.device.type == "cuda"
    x = nbgrad.empty(2000, device="cuda", dtype=nbgrad.float64).uniform_(-1, 1, generator=g)
    assert x.device.type == "cuda" and -1 <= x.min().item() and x.max().item() < 1
    assert abs(x.mean().item()) < 0.05
    theirs = torch.empty(2000, dtype=torch.float64)
    for name, args, _, _ in SAMPLERS:
        ours = getattr(nbgrad.empty(2000, device="cuda", dtype=nbgrad.float64), name)(
            *args, generator=g).cpu().numpy()
        reference = getattr(theirs, name)(*args, generator=torch.Generator().manual_seed(1))
        assert _ks(ours, reference.numpy()) < 0.06, name
    state = g.get_state()
    first = nbgrad.randn(5, generator=g, device="cuda").tolist()
    g.set_state(state)
    assert nbgrad.randn(5, generator=g, device="cuda").tolist() == first
    for t in (nbgrad.rand(4, generator=g, device="cuda"), nbgrad.randint(0, 3, (4,), device="cuda"),
              nbgrad.bernoulli(nbgrad.full((4,), 0.5, device="cuda")),
              nbgrad.normal(nbgrad.zeros(4, device="cuda"), 1.0),
              nbgrad.randperm(4, device="cuda", generator=g),
              nbgrad.zeros(4, dtype=nbgrad.int32, device="cuda").random_(0, 9)):
        assert t.device.type == "cuda"
    nbgrad.manual_seed(5)
    a = nbgrad.rand(3, device="cuda").tolist()
    nbgrad.manual_seed(5)
    assert nbgrad.rand(3, device="cuda").tolist() == a  # manual_seed seeds CUDA's too
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but found "
                                           "'cpu'"):
        nbgrad.rand(2, generator=nbgrad.Generator(), device="cuda")

"""Random numbers (issue 15, item 9): ``Generator``, the default generator's
functions (``manual_seed``, ``seed``, ``initial_seed``, ``get_rng_state``,
``set_rng_state``), the in-place samplers (``uniform_`` ... ``log_normal_``)
and ``randperm``, ``multinomial``, ``bernoulli``, ``poisson``, ``normal``,
``randint_like``.

A Generator holds its backend's stream (``random_stream`` of the backend
contract): on the CPU a NumPy PCG64 generator, on CUDA xoroshiro128+ states
on the device. The distributions are PyTorch's, not its streams of numbers
(PyTorch's CPU generator is a Mersenne Twister, and its state, ``get_state()``,
has another size).
"""
import numbers
import os

import numpy as np

from . import dtypes
from .backends import for_device
from .device import device as Device
from .tensor import Tensor

_DEFAULT_SEED = 67280421310721  # a new Generator's seed, as PyTorch's (c10::default_rng_seed_val)
_ALGORITHMS = {"cpu": "PCG64", "cuda": "xoroshiro128+"}


def _seed_value(seed, fn="manual_seed"):
    """An integer seed in [-2**63, 2**64), counted modulo 2**64 as PyTorch's."""
    if isinstance(seed, Tensor):
        seed = seed.item()
    if isinstance(seed, bool) or not isinstance(seed, (numbers.Integral, float)):
        raise RuntimeError(f"{fn} expected a long, but got {dtypes.type_name(seed)}")
    seed = int(seed)
    if not -2 ** 63 <= seed < 2 ** 64:
        raise ValueError("Overflow when unpacking long long")
    return seed % 2 ** 64


class Generator:
    """Generator(device='cpu') -> Generator

    A source of random numbers, passed as ``generator=`` to the random
    functions and samplers; seeded with ``manual_seed``. On the CPU its
    numbers come from NumPy's PCG64, on CUDA from xoroshiro128+ states on the
    device (drawn there, no host round trip): PyTorch's distributions, not
    its streams."""

    def __init__(self, device="cpu"):
        self._device = Device(device)
        self._backend = for_device(self._device)  # raises where the device cannot be used
        self._initial = _DEFAULT_SEED
        self._stream = self._backend.random_stream(_DEFAULT_SEED)

    @property
    def device(self):
        return self._device

    def manual_seed(self, seed):
        """manual_seed(seed) -> Generator: reseed with ``seed`` (the CPU's stream in place)."""
        seed = _seed_value(seed)
        self._stream = self._backend.random_stream(seed, self._stream)
        self._initial = seed
        return self

    def seed(self):
        """seed() -> int: reseed from the operating system's entropy; returns the seed."""
        seed = int.from_bytes(os.urandom(8), "little") % 2 ** 63
        self.manual_seed(seed)
        return seed

    def initial_seed(self):
        """initial_seed() -> int: the seed last set."""
        return self._initial

    def get_state(self):
        """get_state() -> Tensor: the state, as a uint8 CPU tensor (for ``set_state``)."""
        raw = np.concatenate([self._backend.random_state(self._stream),
                              np.frombuffer(self._initial.to_bytes(8, "little"), np.uint8)])
        return Tensor._wrap(raw, dtypes.uint8)

    def set_state(self, new_state):
        """set_state(new_state) -> Generator: restore a state ``get_state`` gave."""
        if not isinstance(new_state, Tensor) or new_state.dtype is not dtypes.uint8:
            raise TypeError("RNG state must be a nbgrad.ByteTensor")
        raw = new_state.cpu().numpy().reshape(-1)
        if raw.size < 8 or not self._backend.set_random_state(self._stream, raw[:-8]):
            expected = self._backend.random_state(self._stream).size + 8
            raise RuntimeError(f"Expected a {_ALGORITHMS[self._device.type]} generator state of "
                               f"size {expected} but found the input RNG state size to be "
                               f"{raw.size}")
        self._initial = int.from_bytes(raw[-8:].tobytes(), "little")
        return self

    def __repr__(self):
        return f"<nbgrad.Generator object at {id(self):#x}>"


default_generator = Generator()
default_generator.seed()  # a fresh seed per process, as PyTorch's default generator
_device_defaults = {}  # device type -> its default Generator (CUDA's, made on first use)


def default_for(device_type):
    """The default Generator of a device type (seeded as the CPU's when made)."""
    if device_type == "cpu":
        return default_generator
    generator = _device_defaults.get(device_type)
    if generator is None:
        generator = Generator(device_type).manual_seed(default_generator.initial_seed())
        _device_defaults[device_type] = generator
    return generator


def manual_seed(seed):
    """manual_seed(seed) -> Generator

    Seed the default generators (every random op without ``generator=`` draws
    from its device's) with an integer in [-2**63, 2**64): the CPU's, and
    CUDA's as in PyTorch."""
    seed = int(seed)  # as PyTorch's: "3" and 3.5 are accepted, "a" is a ValueError
    for generator in _device_defaults.values():
        generator.manual_seed(seed)
    return default_generator.manual_seed(seed)


def seed():
    """seed() -> int: seed the default generators non-deterministically; returns the seed."""
    return manual_seed(default_generator.seed()).initial_seed()


def initial_seed():
    """initial_seed() -> int: the default generator's seed."""
    return default_generator.initial_seed()


def get_rng_state():
    """get_rng_state() -> Tensor: the default generator's state (uint8)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """set_rng_state(new_state) -> None: restore the default generator's state."""
    default_generator.set_state(new_state)


def stream_for(generator, device, fn=None):
    """``(backend, stream)`` to draw for a tensor on ``device`` from
    ``generator`` (None: the device's default one), checked as PyTorch checks
    it: a Generator of ``device``'s type."""
    device_type = Device(device).type
    if generator is None:
        generator = default_for(device_type)
    elif not isinstance(generator, Generator):
        raise TypeError(f"{fn or 'random'}(): argument 'generator' must be nbgrad.Generator, not "
                        f"{dtypes.type_name(generator)}")
    elif device_type != generator.device.type:
        raise RuntimeError(f"Expected a '{device_type}' device type for generator but found "
                           f"'{generator.device.type}'")
    return generator._backend, generator._stream

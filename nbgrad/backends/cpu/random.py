"""Random numbers on the CPU (the contract's ``random_*``): a stream is a NumPy
``Generator`` over a PCG64 bit generator, and ``random_fill`` draws
PyTorch's distributions from it with NumPy's samplers (float16 drawn in
float32 and rounded once)."""
import numpy as np

_STATE_BYTES = 40  # PCG64: state and increment (128 bits each), the buffered uint32 and its flag


def random_stream(seed, stream=None):
    """A stream seeded with ``seed`` (an int in [0, 2**64)); ``stream``: one to reseed in place."""
    state = np.random.PCG64(seed).state
    if stream is None:
        return np.random.Generator(np.random.PCG64(seed))
    stream.bit_generator.state = state
    return stream


def _drawn(dtype):
    dtype = np.dtype(dtype)
    return np.float32 if dtype == np.float16 else dtype if dtype.kind == "f" else np.float64


def random_fill(stream, shape, dtype, kind, a=0.0, b=1.0):
    """A new array of ``shape`` and ``dtype`` drawn from ``stream``: ``kind``
    "uniform" [a, b), "normal" (mean a, std b), "bernoulli" (p a), "exponential"
    (rate a), "geometric" (p a), "cauchy" (median a, scale b), "log_normal"
    (mean a, std b of the log), "integers" [a, b)."""
    shape = tuple(shape)
    if kind == "integers":
        values = stream.integers(a, b, shape, dtype=np.int64)
    elif kind == "uniform":
        values = stream.random(shape, dtype=_drawn(dtype)) * (b - a) + a
    elif kind == "normal":
        values = stream.standard_normal(shape, dtype=_drawn(dtype)) * b + a
    elif kind == "bernoulli":
        values = stream.random(shape) < a
    elif kind == "exponential":
        values = stream.standard_exponential(shape, dtype=_drawn(dtype)) / a
    elif kind == "geometric":
        values = stream.geometric(a, shape)
    elif kind == "cauchy":
        values = stream.standard_cauchy(shape) * b + a
    elif kind == "log_normal":
        values = stream.lognormal(a, b, shape)
    else:
        raise ValueError(f"unknown distribution {kind!r}")
    return np.asarray(values).astype(dtype, copy=False)


def random_state(stream):
    """The stream's state as uint8 bytes (a NumPy array)."""
    state = stream.bit_generator.state
    raw = b"".join(int(w).to_bytes(16, "little")
                   for w in (state["state"]["state"], state["state"]["inc"]))
    raw += int(state["has_uint32"]).to_bytes(4, "little") + int(state["uinteger"]).to_bytes(
        4, "little")
    return np.frombuffer(raw, np.uint8).copy()


def set_random_state(stream, state):
    """Restore a state ``random_state`` gave (a uint8 NumPy array); False if
    it has the wrong size."""
    raw = np.asarray(state, np.uint8).tobytes()
    if len(raw) != _STATE_BYTES:
        return False
    stream.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": int.from_bytes(raw[:16], "little"),
                  "inc": int.from_bytes(raw[16:32], "little")},
        "has_uint32": int.from_bytes(raw[32:36], "little"),
        "uinteger": int.from_bytes(raw[36:40], "little")}
    return True

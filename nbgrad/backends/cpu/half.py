"""float16 in the CPU's compiled kernels: loaded as float32, rounded once on store.

Numba's CPU target has no float16 type, so a float16 array reaches a kernel
as its raw bits (a ``uint16`` view) and the generated code wraps each read in
``load_half`` and each store in ``store_half``: the row computes in float32 and
the result is rounded to float16 once, as PyTorch's CPU kernels do (they load
``c10::Half`` into float, compute, and convert back).

Two implementations of the conversions, exact to the bit (round to nearest
even, subnormals, inf and NaN as NumPy's ``astype``):

- hardware: LLVM's ``fpext``/``fptrunc`` of ``half``, which LLVM lowers to
  the F16C instructions (x86) or ``fcvt`` (AArch64); vectorised, about as fast
  as a float32 kernel.
- software: integer arithmetic on the bit patterns (F. Giesen's conversions),
  for targets where LLVM would lower ``half`` to compiler-rt calls that
  Numba's JIT does not link (``NUMBA_CPU_NAME=generic`` on x86, for a portable
  cache): about 4x slower, still compiled.

``load_half``/``store_half`` are the ones this machine's target gets.
"""
import platform

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic


@intrinsic
def _half_bits_to_float(typingctx, bits):
    def codegen(context, builder, signature, args):
        return builder.fpext(builder.bitcast(args[0], ir.HalfType()), ir.FloatType())
    return types.float32(types.uint16), codegen


@intrinsic
def _float_to_half_bits(typingctx, value):
    def codegen(context, builder, signature, args):
        return builder.bitcast(builder.fptrunc(args[0], ir.HalfType()), ir.IntType(16))
    return types.uint16(types.float32), codegen


@intrinsic
def _float_bits(typingctx, value):
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return types.uint32(types.float32), codegen


@intrinsic
def _bits_float(typingctx, bits):
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())
    return types.float32(types.uint32), codegen


def load_half_hardware(bits):
    return _half_bits_to_float(numba.uint16(bits))


def store_half_hardware(value):
    return _float_to_half_bits(numba.float32(value))


def load_half_software(bits):
    """float16 bits -> float32: the exponent rebiased, subnormals through a
    float subtraction (exact), inf and NaN kept."""
    h = numba.uint32(bits)
    o = (h & numba.uint32(0x7FFF)) << numba.uint32(13)
    exponent = o & numba.uint32(0x0F800000)
    o = o + numba.uint32(112 << 23)
    if exponent == numba.uint32(0x0F800000):  # inf or NaN
        o = o + numba.uint32(112 << 23)
    elif exponent == numba.uint32(0):  # zero or subnormal
        o = _float_bits(_bits_float(o + numba.uint32(1 << 23))
                        - _bits_float(numba.uint32(113 << 23)))
    return _bits_float(o | ((h & numba.uint32(0x8000)) << numba.uint32(16)))


def store_half_software(value):
    """float32 -> float16 bits, rounded to nearest even (NaN stays NaN)."""
    f = _float_bits(numba.float32(value))
    sign = f & numba.uint32(0x80000000)
    f = f ^ sign
    if f >= numba.uint32(143 << 23):  # beyond float16's range: inf, or NaN
        o = numba.uint32(0x7E00) if f > numba.uint32(255 << 23) else numba.uint32(0x7C00)
    elif f < numba.uint32(113 << 23):  # a float16 subnormal or zero: the FPU rounds it
        o = _float_bits(_bits_float(f) + _bits_float(numba.uint32(126 << 23))) \
            - numba.uint32(126 << 23)
    else:
        odd = (f >> numba.uint32(13)) & numba.uint32(1)
        o = (f + numba.uint32(((15 - 127) << 23) + 0xFFF) + odd) >> numba.uint32(13)
    return numba.uint16(o | (sign >> numba.uint32(16)))


def hardware_conversions():
    """Whether LLVM lowers ``half`` conversions to instructions for the CPU
    Numba compiles for: x86 with F16C for the host CPU (not the ``generic``
    model, where it emits library calls), or AArch64."""
    if numba.config.CPU_NAME not in (None, "host"):
        return False
    machine = platform.machine().lower()
    if machine in ("aarch64", "arm64"):
        return True
    if machine not in ("x86_64", "amd64"):
        return False
    from llvmlite import binding
    features = numba.config.CPU_FEATURES
    if features is None:
        return bool(binding.get_host_cpu_features().get("f16c", False))
    return "+f16c" in features.split(",")


if hardware_conversions():
    load_half, store_half = load_half_hardware, store_half_hardware
else:
    load_half, store_half = load_half_software, store_half_software

FLOAT16 = np.dtype(np.float16)


def bits(a):
    """A float16 array's raw bits (a ``uint16`` view), what kernels take;
    anything else as it is."""
    return a.view(np.uint16) if isinstance(a, np.ndarray) and a.dtype == FLOAT16 else a


def is_half(a):
    return isinstance(a, np.ndarray) and a.dtype == FLOAT16

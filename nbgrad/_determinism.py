"""``use_deterministic_algorithms`` and its queries, as PyTorch's.

nbgrad's kernels give the same result from run to run for the same inputs and
thread count (no atomics race in a CPU kernel; the CUDA reductions combine in
a fixed tree), so the switch is remembered and reported but changes no
kernel. It exists so that scripts which set it run unchanged."""
from .dtypes import type_name

_state = {"mode": False, "warn_only": False, "debug_mode": 0}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """use_deterministic_algorithms(mode, *, warn_only=False) -> None

    Ask for deterministic algorithms (``mode`` True) or allow any (False);
    ``warn_only``: warn instead of raising where an op has no deterministic
    version. nbgrad's ops are deterministic already: the setting only changes
    what ``are_deterministic_algorithms_enabled`` reports."""
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type_name(mode)}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type_name(warn_only)}")
    _state["mode"] = mode
    _state["warn_only"] = warn_only
    _state["debug_mode"] = 0 if not mode else 1 if warn_only else 2


def are_deterministic_algorithms_enabled():
    """are_deterministic_algorithms_enabled() -> bool: whether the switch is on."""
    return _state["mode"]


def is_deterministic_algorithms_warn_only_enabled():
    """is_deterministic_algorithms_warn_only_enabled() -> bool: whether it is on with warn_only."""
    return _state["warn_only"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode):
    """set_deterministic_debug_mode(debug_mode) -> None: 0/"default" off, 1/"warn", 2/"error"."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError("invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """get_deterministic_debug_mode() -> int: 0 off, 1 warn only, 2 on."""
    return _state["debug_mode"]

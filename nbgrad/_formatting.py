"""``repr(tensor)`` in PyTorch's format: a port of the rules of its
``torch/_tensor_str.py``, with its print options (``set_printoptions``:
precision 4, line width 80, summarised above 1000 elements with 3 edge
items, and the choice of scientific notation, by default)."""
import contextlib
import dataclasses
import math

import numpy as np

from . import dtypes


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool = None


PRINT_OPTS = _PrinterOptions()
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None):
    """set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None)

    Set how tensors print, as PyTorch's: ``precision`` digits after the point
    (4), summarise (``...``) tensors of more than ``threshold`` elements
    (1000) showing ``edgeitems`` (3) at each end of every dimension, break
    lines at ``linewidth`` (80) characters; ``profile`` "default", "short" or
    "full" sets all four first. ``sci_mode`` True or False forces scientific
    notation on or off; None (also when not given) lets the values decide."""
    if profile is not None and profile in _PROFILES:
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = _PROFILES[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """get_printoptions() -> dict

    The current print options, as keyword arguments of ``set_printoptions``."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Print options changed inside a ``with`` block (PyTorch's ``_tensor_str.printoptions``)."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """Decides, from all the values shown, the width and the notation of each."""

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not floating:
            for value in flat.tolist():
                self.max_width = max(self.max_width, len(f"{value}"))
            return
        finite = flat[np.isfinite(flat) & (flat != 0)]
        if finite.size == 0:
            return
        magnitudes = np.abs(finite).astype(np.float64)
        lo, hi = magnitudes.min(), magnitudes.max()
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        forced = PRINT_OPTS.sci_mode
        self.sci_mode = (hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4) if forced is None \
            else forced
        precision = PRINT_OPTS.precision
        if self.sci_mode:
            widths = (len(f"{v:.{precision}e}") for v in finite.tolist())
        elif self.int_mode:
            # integers get a trailing "." (added to the width) to show the dtype is floating
            widths = (len(f"{v:.0f}") + 1 for v in finite.tolist())
        else:
            widths = (len(f"{v:.{precision}f}") for v in finite.tolist())
        self.max_width = max(self.max_width, *widths)

    def format(self, value):
        if self.floating:
            precision = PRINT_OPTS.precision
            if self.sci_mode:
                text = f"{value:{self.max_width}.{precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{precision}f}"
        else:
            text = f"{value}"
        return (self.max_width - len(text)) * " " + text


def _summarized(data):
    """The values a summarised print shows (the edge items of every dimension)."""
    edge = PRINT_OPTS.edgeitems
    if data.ndim == 0:
        return data
    if data.ndim == 1:
        if data.shape[0] > 2 * edge:  # (with edgeitems 0, [-0:] is all of it, as PyTorch's)
            return np.concatenate([data[:edge], data[-edge:]])
        return data
    if not edge:
        return data[(slice(0, 0),) * data.ndim]
    if data.shape[0] > 2 * edge:
        rows = list(range(edge)) + list(range(data.shape[0] - edge, data.shape[0]))
        return np.stack([_summarized(data[i]) for i in rows])
    return np.stack([_summarized(row) for row in data])


def _vector_str(data, indent, summarize, formatter):
    edge = PRINT_OPTS.edgeitems
    element_length = formatter.max_width + 2
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / element_length)))
    if summarize and not edge:
        items = ["..."]
    elif summarize and data.shape[0] > 2 * edge:
        items = ([formatter.format(v) for v in data[:edge].tolist()] + [" ..."]
                 + [formatter.format(v) for v in data[-edge:].tolist()])
    else:
        items = [formatter.format(v) for v in data.tolist()]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str(data, indent, summarize, formatter):
    if data.ndim == 0:
        return formatter.format(data.item())
    if data.ndim == 1:
        return _vector_str(data, indent, summarize, formatter)
    edge = PRINT_OPTS.edgeitems
    if summarize and data.shape[0] > 2 * edge:
        rows = ([_tensor_str(data[i], indent + 1, summarize, formatter) for i in range(edge)]
                + ["..."]
                + [_tensor_str(data[i], indent + 1, summarize, formatter)
                   for i in range(data.shape[0] - edge, data.shape[0])])
    else:
        rows = [_tensor_str(data[i], indent + 1, summarize, formatter) for i in range(data.shape[0])]
    return "[" + ("," + "\n" * (data.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _add_suffixes(text, suffixes, indent):
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _body(t, data, indent, suffixes):
    """The values' text; adds the suffixes it implies (size, dtype)."""
    default = dtypes.get_default_dtype()
    if data.size == 0:
        if data.ndim != 1:
            suffixes.append(f"size={tuple(data.shape)}")
        if t.dtype is not default:  # nothing to infer an integer dtype from
            suffixes.append(f"dtype={t.dtype!r}")
        return "[]"
    if not PRINT_OPTS.edgeitems:
        suffixes.append(f"size={tuple(data.shape)}")
    if t.dtype not in (default, dtypes.int64, dtypes.bool_):
        suffixes.append(f"dtype={t.dtype!r}")
    summarize = data.size > PRINT_OPTS.threshold
    formatter = _Formatter(_summarized(data) if summarize else data, t.dtype.is_floating_point)
    return _tensor_str(data, indent, summarize, formatter)


def tensor_repr(t):
    data = t._data if t._backend.name == "cpu" else t._backend.to_numpy(t._data)
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if t._backend.name != "cpu":
        suffixes.append(f"device='{t.device}'")
    body = _body(t, data, indent, suffixes)
    try:
        grad_fn = t.grad_fn
        name = grad_fn.name() if grad_fn is not None else None
    except RuntimeError:  # a view made in no_grad mode whose base was modified in place
        name = "Invalid"
    if name is not None:
        suffixes.append(f"grad_fn=<{name}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    if t._fw_grad is not None:  # a tangent at the open forward-AD level, as PyTorch shows it
        suffixes.append(f"tangent={t._fw_grad!r}")
    return _add_suffixes(prefix + body, suffixes, indent)

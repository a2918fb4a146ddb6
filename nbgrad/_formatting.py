"""``repr(tensor)`` in PyTorch's format: a port of the rules of its
``torch/_tensor_str.py`` with the default print options (precision 4,
line width 80, summarised above 1000 elements with 3 edge items)."""
import math

import numpy as np

PRECISION = 4
LINEWIDTH = 80
THRESHOLD = 1000
EDGEITEMS = 3


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
        if self.int_mode:
            # integers get a trailing "." (added to the width) to show the dtype is floating
            if hi / lo > 1000.0 or hi > 1.0e8:
                self.sci_mode = True
                widths = (len(f"{v:.{PRECISION}e}") for v in finite.tolist())
            else:
                widths = (len(f"{v:.0f}") + 1 for v in finite.tolist())
        elif hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4:
            self.sci_mode = True
            widths = (len(f"{v:.{PRECISION}e}") for v in finite.tolist())
        else:
            widths = (len(f"{v:.{PRECISION}f}") for v in finite.tolist())
        self.max_width = max(self.max_width, *widths)

    def format(self, value):
        if self.floating:
            if self.sci_mode:
                text = f"{value:{self.max_width}.{PRECISION}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{PRECISION}f}"
        else:
            text = f"{value}"
        return (self.max_width - len(text)) * " " + text


def _summarized(data):
    """The values a summarised print shows (the edge items of every dimension)."""
    if data.ndim == 0:
        return data
    if data.shape[0] > 2 * EDGEITEMS:
        data = np.concatenate([data[:EDGEITEMS], data[-EDGEITEMS:]])
    if data.ndim == 1:
        return data
    return np.stack([_summarized(row) for row in data])


def _vector_str(data, indent, summarize, formatter):
    element_length = formatter.max_width + 2
    per_line = max(1, int(math.floor((LINEWIDTH - indent) / element_length)))
    if summarize and data.shape[0] > 2 * EDGEITEMS:
        items = ([formatter.format(v) for v in data[:EDGEITEMS].tolist()] + [" ..."]
                 + [formatter.format(v) for v in data[-EDGEITEMS:].tolist()])
    else:
        items = [formatter.format(v) for v in data.tolist()]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str(data, indent, summarize, formatter):
    if data.ndim == 0:
        return formatter.format(data.item())
    if data.ndim == 1:
        return _vector_str(data, indent, summarize, formatter)
    if summarize and data.shape[0] > 2 * EDGEITEMS:
        rows = ([_tensor_str(data[i], indent + 1, summarize, formatter) for i in range(EDGEITEMS)]
                + ["..."]
                + [_tensor_str(data[i], indent + 1, summarize, formatter)
                   for i in range(data.shape[0] - EDGEITEMS, data.shape[0])])
    else:
        rows = [_tensor_str(data[i], indent + 1, summarize, formatter) for i in range(data.shape[0])]
    return "[" + ("," + "\n" * (data.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _add_suffixes(text, suffixes, indent):
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t):
    data = t._data if t._backend.name == "cpu" else t._backend.to_numpy(t._data)
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if t._backend.name != "cpu":
        suffixes.append(f"device='{t.device}'")
    if data.size == 0:
        body = "[]"
        if data.ndim != 1:
            suffixes.append(f"size={tuple(data.shape)}")
        if t.dtype.name != "float32":  # nothing to infer an integer dtype from
            suffixes.append(f"dtype={t.dtype!r}")
    else:
        if t.dtype.name not in ("float32", "int64", "bool"):
            suffixes.append(f"dtype={t.dtype!r}")
        summarize = data.size > THRESHOLD
        formatter = _Formatter(_summarized(data) if summarize else data, t.dtype.is_floating_point)
        body = _tensor_str(data, indent, summarize, formatter)
    try:
        grad_fn = t.grad_fn
        name = grad_fn.name() if grad_fn is not None else None
    except RuntimeError:  # a view made in no_grad mode whose base was modified in place
        name = "Invalid"
    if name is not None:
        suffixes.append(f"grad_fn=<{name}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)

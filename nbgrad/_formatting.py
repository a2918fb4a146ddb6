"""``repr(tensor)`` in PyTorch's format (its _tensor_str rules, simplified)."""
import numpy as np


def _float_formatter(values):
    finite = np.abs(values[np.isfinite(values)]).astype(np.float64)
    nonzero = finite[finite != 0]
    if nonzero.size == 0:
        fmt = "{:.0f}."
        sci = False
    else:
        lo, hi = nonzero.min(), nonzero.max()
        integral = bool(np.all(np.ceil(finite) == finite))
        sci = hi / lo > 1000.0 or hi > 1.0e8 or (not integral and lo < 1.0e-4)
        fmt = "{:.4e}" if sci else ("{:.0f}." if integral else "{:.4f}")

    def one(x):
        if np.isnan(x):
            return "nan"
        if np.isinf(x):
            return "inf" if x > 0 else "-inf"
        return fmt.format(x)

    width = max((len(one(x)) for x in values.reshape(-1)), default=0)
    return lambda x: one(x).rjust(width)


def tensor_repr(t):
    data = t._data if t._backend.name == "cpu" else t._backend.to_numpy(t._data)
    suffixes = []
    if data.size == 0:
        body = "[]"
        if data.shape != (0,):
            suffixes.append(f"size=({', '.join(map(str, data.shape))}{',' if data.ndim == 1 else ''})")
    else:
        if t.dtype.is_floating_point:
            formatter = _float_formatter(data)
        elif t.dtype.name == "bool":
            formatter = lambda x: "True" if x else "False"
        else:
            width = max(len(str(x)) for x in data.reshape(-1))
            formatter = lambda x: str(x).rjust(width)
        if data.ndim == 0:
            body = formatter(data[()])
        else:
            body = np.array2string(data, separator=", ", prefix="tensor(", max_line_width=80,
                                   threshold=1000, edgeitems=3,
                                   formatter={"all": formatter})
    if t._backend.name != "cpu":
        suffixes.append(f"device='{t.device}'")
    if t.dtype.name not in ("float32", "int64", "bool"):
        suffixes.append(f"dtype={t.dtype!r}")
    grad_fn = t.grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return "tensor(" + ", ".join([body, *suffixes]) + ")"

"""Fused normalization kernels on the device, with the CPU backend's layouts
and meanings (``nbgrad.backends.cpu.normalization``): rows (R, D) with
statistics per row, channels (A, C, B) with statistics per channel.

A thread per row or channel computes its statistics (and its whole backward)
in float64; a thread per element writes the output. The operands are flat
C-contiguous buffers."""
from . import _runtime, codegen
from .array import empty

_SOURCE = '''
@cuda.jit({options})
def row_stats(x, rows, cols, eps, rms, mean, rstd):
    r = cuda.grid(1)
    step = cuda.gridsize(1)
    while r < rows:
        m = 0.0
        if not rms:
            s = 0.0
            for d in range(cols):
                s += x[r * cols + d]
            m = s / cols
        q = 0.0
        for d in range(cols):
            v = x[r * cols + d] - m
            q += v * v
        mean[r] = m
        rstd[r] = 1.0 / math.sqrt(q / cols + eps)
        r += step


@cuda.jit({options})
def row_forward(x, mean, rstd, weight, bias, rows, cols, groups, inner, has_w, has_b, out):
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    per_group = cols // inner
    while i < rows * cols:
        r = i // cols
        d = i - r * cols
        c = (r % groups) * per_group + d // inner
        v = (x[i] - mean[r]) * rstd[r]
        if has_w:
            v = v * weight[c]
        if has_b:
            v = v + bias[c]
        out[i] = v
        i += step


@cuda.jit({options})
def row_backward(g, x, mean, rstd, weight, rows, cols, groups, inner, has_w, rms, want_dx,
                 dx, dw, db):
    r = cuda.grid(1)
    step = cuda.gridsize(1)
    per_group = cols // inner
    while r < rows:
        m = mean[r] + 0.0
        s = rstd[r] + 0.0
        base = (r % groups) * per_group
        sum_gw = 0.0
        sum_gwx = 0.0
        for j in range(per_group):
            w = weight[base + j] + 0.0 if has_w else 1.0
            pg = 0.0
            pgx = 0.0
            for k in range(inner):
                i = r * cols + j * inner + k
                gv = g[i] + 0.0
                pg += gv
                pgx += gv * ((x[i] - m) * s)
            dw[r * per_group + j] = pgx
            db[r * per_group + j] = pg
            sum_gw += w * pg
            sum_gwx += w * pgx
        if want_dx:
            a = 0.0 if rms else sum_gw / cols
            b = sum_gwx / cols
            for j in range(per_group):
                w = weight[base + j] + 0.0 if has_w else 1.0
                for k in range(inner):
                    i = r * cols + j * inner + k
                    dx[i] = s * (w * g[i] - a - (x[i] - m) * s * b)
        r += step


@cuda.jit({options})
def channel_stats(x, outer, channels, inner, eps, mean, var, rstd):
    c = cuda.grid(1)
    step = cuda.gridsize(1)
    count = outer * inner
    while c < channels:
        s = 0.0
        for a in range(outer):
            for b in range(inner):
                s += x[(a * channels + c) * inner + b]
        m = s / count
        q = 0.0
        for a in range(outer):
            for b in range(inner):
                v = x[(a * channels + c) * inner + b] - m
                q += v * v
        mean[c] = m
        var[c] = q / count
        rstd[c] = 1.0 / math.sqrt(q / count + eps)
        c += step


@cuda.jit({options})
def running_update(running, batch, n, keep, take):
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < n:
        running[i] = running[i] * keep + batch[i] * take
        i += step


@cuda.jit({options})
def channel_forward(x, mean, rstd, weight, bias, channels, inner, n, has_w, has_b, out):
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < n:
        c = (i // inner) % channels
        scale = rstd[c] + 0.0
        if has_w:
            scale = scale * weight[c]
        shift = -mean[c] * scale
        if has_b:
            shift = shift + bias[c]
        out[i] = x[i] * scale + shift
        i += step


@cuda.jit({options})
def channel_sums(g, x, mean, rstd, outer, channels, inner, dw, db):
    c = cuda.grid(1)
    step = cuda.gridsize(1)
    while c < channels:
        m = mean[c] + 0.0
        sg = 0.0
        sgx = 0.0
        for a in range(outer):
            for b in range(inner):
                i = (a * channels + c) * inner + b
                gv = g[i] + 0.0
                sg += gv
                sgx += gv * (x[i] - m)
        dw[c] = sgx * rstd[c]
        db[c] = sg
        c += step


@cuda.jit({options})
def channel_input_grad(g, x, mean, rstd, weight, dw, db, channels, inner, count, n, has_w,
                       train, dx):
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < n:
        c = (i // inner) % channels
        s = rstd[c] + 0.0
        w = weight[c] + 0.0 if has_w else 1.0
        if train:
            k1 = db[c] / count
            k2 = dw[c] * s / count
            dx[i] = (g[i] - k1 - (x[i] - mean[c]) * k2) * (s * w)
        else:
            dx[i] = g[i] * (s * w)
        i += step
'''


def _kernels():
    return codegen.cached(("normalization",), lambda: codegen.build(
        "normalization", _SOURCE.format(options=codegen.jit_options())))


def _flat(a):
    from .api import ascontiguous
    a = ascontiguous(a)
    return a.buffer[a.offset:a.offset + a.size]


def _param(p, dtype):
    return _flat(empty((1,), dtype) if p is None else p)


def _launch(kernel, n, *args):
    if n:
        blocks, threads = _runtime.grid_for(n)
        kernel[blocks, threads](*args)


def norm_row_stats(x, eps, rms):
    rows, cols = x.shape
    mean, rstd = empty((rows,), x.dtype), empty((rows,), x.dtype)
    _launch(_kernels().row_stats, rows, _flat(x), rows, cols, float(eps), bool(rms),
            _flat(mean), _flat(rstd))
    return mean, rstd


def norm_row_forward(x, mean, rstd, weight, bias, groups, inner):
    rows, cols = x.shape
    out = empty(x.shape, x.dtype)
    _launch(_kernels().row_forward, x.size, _flat(x), _flat(mean), _flat(rstd),
            _param(weight, x.dtype), _param(bias, x.dtype), rows, cols, int(groups), int(inner),
            weight is not None, bias is not None, _flat(out))
    return out


def norm_row_backward(grad, x, mean, rstd, weight, groups, inner, rms, want_dx):
    from .api import zeros
    rows, cols = x.shape
    per_group = cols // inner if inner else 0
    dx = empty(x.shape, x.dtype) if want_dx else empty((1,), x.dtype)
    dw, db = zeros((rows, per_group), x.dtype), zeros((rows, per_group), x.dtype)
    if x.size:
        _launch(_kernels().row_backward, rows, _flat(grad), _flat(x), _flat(mean), _flat(rstd),
                _param(weight, x.dtype), rows, cols, int(groups), int(inner), weight is not None,
                bool(rms), bool(want_dx), _flat(dx), _flat(dw), _flat(db))
    elif want_dx:
        dx = zeros(x.shape, x.dtype)
    from .reductions import reduce_sum
    channels = groups * per_group
    dw = reduce_sum(dw.reshape(rows // groups if groups else 0, channels), 0, False, x.dtype)
    db = reduce_sum(db.reshape(rows // groups if groups else 0, channels), 0, False, x.dtype)
    return (dx if want_dx else None), dw, db


def norm_channel_stats(x, eps):
    outer, channels, inner = x.shape
    mean, var, rstd = (empty((channels,), x.dtype) for _ in range(3))
    _launch(_kernels().channel_stats, channels, _flat(x), outer, channels, inner, float(eps),
            _flat(mean), _flat(var), _flat(rstd))
    return mean, var, rstd


def norm_running_update(running, batch, momentum, scale):
    # (a view into a tensor's storage: its buffer slice is written in place)
    _launch(_kernels().running_update, running.size, _flat(running), _flat(batch), running.size,
            running.dtype.type(1.0 - momentum), running.dtype.type(momentum * scale))


def norm_channel_forward(x, mean, rstd, weight, bias):
    _, channels, inner = x.shape
    out = empty(x.shape, x.dtype)
    _launch(_kernels().channel_forward, x.size, _flat(x), _flat(mean), _flat(rstd),
            _param(weight, x.dtype), _param(bias, x.dtype), channels, inner, x.size,
            weight is not None, bias is not None, _flat(out))
    return out


def norm_channel_backward(grad, x, mean, rstd, weight, train, want_dx):
    from .api import zeros
    outer, channels, inner = x.shape
    dw, db = zeros((channels,), x.dtype), zeros((channels,), x.dtype)
    k = _kernels()
    if x.size:
        _launch(k.channel_sums, channels, _flat(grad), _flat(x), _flat(mean), _flat(rstd), outer,
                channels, inner, _flat(dw), _flat(db))
    if not want_dx:
        return None, dw, db
    dx = empty(x.shape, x.dtype)
    _launch(k.channel_input_grad, x.size, _flat(grad), _flat(x), _flat(mean), _flat(rstd),
            _param(weight, x.dtype), _flat(dw), _flat(db), channels, inner, outer * inner,
            x.size, weight is not None, bool(train), _flat(dx))
    return dx, dw, db


__all__ = ["norm_row_stats", "norm_row_forward", "norm_row_backward", "norm_channel_stats",
           "norm_running_update", "norm_channel_forward", "norm_channel_backward"]

"""Tensors laid out exactly as a given torch tensor (strides of size-1
dimensions too), for comparing results' and gradients' layouts."""
import numpy as np
import torch

import nbgrad


def strided(lib, t, requires_grad=False):
    """A new leaf of ``lib`` with ``t``'s shape, strides and values (float64)."""
    shape, strides = tuple(t.shape), t.stride()
    extent = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if t.numel() else 0
    buffer = np.zeros(extent)
    view = np.lib.stride_tricks.as_strided(buffer, shape, [8 * s for s in strides])
    if t.numel():
        view[...] = t.detach().double().numpy()
    x = torch.from_numpy(buffer).as_strided(shape, strides) if lib is torch else \
        nbgrad.from_numpy(view)
    return x.requires_grad_(requires_grad)

"""Forward + backward of the normalization layers (BatchNorm2d, LayerNorm,
GroupNorm), in nbgrad and in PyTorch eager, at the demo's sizes (the CNN's
BatchNorm2d, the encoder layer's LayerNorm over 64 x 8 tokens) and at large
ones. The ``torch`` cases are skipped where PyTorch is not installed; to see
both side by side in one run: ``python -m kernels.norm_study``."""
import numpy as np

import nbgrad

# name -> (module factory, input shape)
CASES = {
    "batch_norm2d_demo": (lambda L: L.nn.BatchNorm2d(32), (64, 32, 8, 8)),
    "batch_norm2d_large": (lambda L: L.nn.BatchNorm2d(64), (32, 64, 32, 32)),
    "layer_norm_demo": (lambda L: L.nn.LayerNorm(64), (512, 64)),
    "layer_norm_large": (lambda L: L.nn.LayerNorm(1024), (8192, 1024)),
    "layer_norm_wide": (lambda L: L.nn.LayerNorm(4096), (64, 4096)),
    "group_norm_demo": (lambda L: L.nn.GroupNorm(8, 32), (64, 32, 8, 8)),
    "group_norm_large": (lambda L: L.nn.GroupNorm(8, 64), (32, 64, 16, 16)),
}


def _library(name):
    if name == "nbgrad":
        return nbgrad
    try:
        import torch
    except ImportError:
        raise NotImplementedError("PyTorch is not installed") from None  # asv skips the case
    return torch


class NormalizationForwardBackward:
    params = [list(CASES), ["nbgrad", "torch"]]
    param_names = ["layer", "library"]
    timeout = 300

    def setup(self, layer, library):
        lib = _library(library)
        make, shape = CASES[layer]
        rng = np.random.default_rng(0)
        self.module = make(lib)
        self.x = lib.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
        self.g = lib.tensor(rng.standard_normal(shape).astype(np.float32))
        self.lib = lib
        self.time_forward_backward(layer, library)  # compiles every kernel it uses
        self.time_forward_backward(layer, library)

    def time_forward(self, layer, library):
        with self.lib.no_grad():
            self.module(self.x)

    def time_forward_backward(self, layer, library):
        self.x.grad = None
        for p in self.module.parameters():
            p.grad = None
        self.module(self.x).backward(self.g)

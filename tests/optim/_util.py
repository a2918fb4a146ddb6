"""Run an nbgrad optimizer and torch's side by side on the same gradients."""
import numpy as np
import torch

import nbgrad
import nbgrad.nn as nn
import nbgrad.optim as optim
from nbgrad.backends.cpu.updates import PARALLEL_THRESHOLD

DTYPES = [(np.float32, torch.float32), (np.float64, torch.float64)]
DTYPE_IDS = ["float32", "float64"]
# torch's CPU kernels use fused multiply-adds where nbgrad rounds the product: the two agree to
# about one ulp of the operands (~1 here), so a value that cancels to near zero may differ by
# ~1e-7 absolute. Tolerance: 1e-6 relative to the operands' scale.
TOL = {np.float32: dict(rtol=1e-6, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-12)}
SHAPES = [(3, 4), (5,)]
LARGE = [(3, 4), (PARALLEL_THRESHOLD + 1,)]  # the large one runs the prange kernel


def compare_with_torch(name, kwargs, dtype, steps=6, shapes=SHAPES, seed=0):
    np_dtype, t_dtype = dtype
    rng = np.random.default_rng(seed)
    values = [rng.standard_normal(s).astype(np_dtype) for s in shapes]
    params = [nn.Parameter(nbgrad.tensor(v)) for v in values]
    tparams = [torch.nn.Parameter(torch.tensor(v)) for v in values]
    opt = getattr(optim, name)(params, **kwargs)
    topt = getattr(torch.optim, name)(tparams, **kwargs)
    for step in range(steps):
        for p, tp in zip(params, tparams):
            g = rng.standard_normal(p.shape).astype(np_dtype)
            p.grad = nbgrad.tensor(g)
            tp.grad = torch.tensor(g)
        versions = [p._version for p in params]
        opt.step()
        topt.step()
        assert [p._version for p in params] == [v + 1 for v in versions]
        for k, (p, tp) in enumerate(zip(params, tparams)):
            np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), **TOL[np_dtype],
                                       err_msg=f"{name} {kwargs} param {k} step {step}")
    return opt, topt, params, tparams

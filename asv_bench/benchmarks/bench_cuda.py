"""CUDA benchmarks. Skipped (``NotImplementedError`` in ``setup``) where no GPU
is present, or where nbgrad cannot yet place tensors on ``device='cuda'``."""
import nbgrad

from . import common


def _gpu_available():
    try:
        from numba import cuda
    except ImportError:
        return False
    try:
        return bool(cuda.is_available())
    except Exception:  # a broken driver or toolkit counts as no GPU
        return False


def _require_cuda():
    if not _gpu_available():
        raise NotImplementedError("no CUDA GPU available")


class SigmoidCuda:
    params = [[100_000, 10_000_000], ["float32"]]
    param_names = ["n", "dtype"]
    timeout = 300

    def setup(self, n, dtype):
        _require_cuda()
        row = common.row_by_name("sigmoid")
        dt = getattr(nbgrad, dtype)
        try:
            self.x = nbgrad.randn(n, dtype=dt, device="cuda", requires_grad=True)
            self.g = nbgrad.ones(n, dtype=dt, device="cuda")
        except Exception as exc:  # noqa: BLE001 - the CUDA backend is a later issue
            raise NotImplementedError(f"nbgrad cannot create CUDA tensors yet: {exc}") from exc
        self.row = row
        self.out = self.x.sigmoid()
        self.out.backward(self.g, retain_graph=True)
        self.x.grad = None
        self._sync()

    def _sync(self):
        from numba import cuda
        cuda.synchronize()

    def time_forward(self, n, dtype):
        self.x.sigmoid()
        self._sync()

    def time_backward(self, n, dtype):
        self.out.backward(self.g, retain_graph=True)
        self._sync()

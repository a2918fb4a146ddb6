"""Per-op overhead on tiny tensors: a chain of 10 elementwise ops on 16
elements, where nbgrad's Python dispatch, not the kernels, is the cost."""
import nbgrad

from . import common


class TinyChain:
    def setup(self):
        x, w, b, g = common.chain_inputs()
        self.x, self.w, self.b = (nbgrad.from_numpy(a).requires_grad_() for a in (x, w, b))
        self.g = nbgrad.from_numpy(g)
        self.x_plain, self.w_plain, self.b_plain = (nbgrad.from_numpy(a) for a in (x, w, b))
        self.time_forward_backward()  # compiles every kernel of the chain
        self.time_forward_no_grad()

    def time_forward_backward(self):
        """10 ops forward, then backward into three leaves."""
        self.x.grad = self.w.grad = self.b.grad = None
        common.chain(self.x, self.w, self.b).backward(self.g)

    def time_forward_recording(self):
        """10 ops forward with inputs that require grad (the tape is built)."""
        common.chain(self.x, self.w, self.b)

    def time_forward_no_grad(self):
        """10 ops forward on plain tensors (no tape)."""
        common.chain(self.x_plain, self.w_plain, self.b_plain)

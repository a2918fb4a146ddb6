"""Which op functions are Tensor methods and which are ``nbgrad.<name>``
functions: each op module declares its public ops with :func:`tensor_op`
beside their forward and backward; ``nbgrad.ops`` binds the methods to
Tensor and ``nbgrad`` exports the functions, so a new op is its declaration
alone (rows, the elementwise ops, come from the op table instead)."""
from . import dual
from .out import with_out

METHODS = {}  # name -> function(self, ...), bound to Tensor
FUNCTIONS = {}  # name -> function(input, ...), exported as nbgrad.<name>


def tensor_op(*names, method=True, function=True, attribute=False, tangent=None, out=False):
    """Declare ``fn`` as the op ``names`` (default: its own name): a Tensor
    method (``method``; a read-only property with ``attribute``, ``t.T``)
    and an ``nbgrad`` function (``function``). ``tangent``: its forward-mode
    rule (``nbgrad.ops.dual``); the op as bound computes tangents with it.
    ``out``: the function takes PyTorch's ``out=`` (``nbgrad.ops.out``)."""
    def declare(fn):
        bound = fn if tangent is None else dual.tangent_rule(tangent)(fn)
        for name in names or (fn.__name__,):
            if method:
                METHODS[name] = property(bound) if attribute else bound
            if function:
                FUNCTIONS[name] = with_out(bound, name) if out else bound
        return fn
    return declare

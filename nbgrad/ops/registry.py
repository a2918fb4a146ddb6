"""Which op functions are Tensor methods and which are ``nbgrad.<name>``
functions: each op module declares its public ops with :func:`tensor_op`
beside their forward and backward; ``nbgrad.ops`` binds the methods to
Tensor and ``nbgrad`` exports the functions, so a new op is its declaration
alone (rows, the elementwise ops, come from the op table instead)."""
METHODS = {}  # name -> function(self, ...), bound to Tensor
FUNCTIONS = {}  # name -> function(input, ...), exported as nbgrad.<name>


def tensor_op(*names, method=True, function=True, attribute=False):
    """Declare ``fn`` as the op ``names`` (default: its own name): a Tensor
    method (``method``; a read-only property with ``attribute``, ``t.T``)
    and an ``nbgrad`` function (``function``)."""
    def declare(fn):
        for name in names or (fn.__name__,):
            if method:
                METHODS[name] = property(fn) if attribute else fn
            if function:
                FUNCTIONS[name] = fn
        return fn
    return declare

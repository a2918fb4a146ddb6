"""The tape: graph nodes, saved tensors and gradient accumulators.

Gradients flowing through the graph are raw backend arrays, not Tensors, so a
backward step costs no Tensor bookkeeping. Each node has one output and, per
input, an edge (the input's node, or None when it needs no gradient) and the
input's metadata, which the engine uses to undo broadcasting and casting.
"""
import itertools
import math
import sys
import threading
import traceback
import weakref

from ..backends import backend_of
from . import regions
from .grad_mode import SWITCHES, current_saved_hooks
from .version_counter import WHERE_LINES, VersionCounter, _internal_code, _user_location, user_where

_SECOND_BACKWARD = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")


def describe(shape, dtype):
    """PyTorch's way of naming a tensor in errors: ``[nbgrad.FloatTensor [2, 3]]``."""
    return f"[nbgrad.{dtype.tensor_type} [{', '.join(map(str, shape))}]]"


_SEQUENCE = itertools.count()


# The tape's invariants (where an input's gradient goes; what a SavedTensor
# and a Node hold) are each written once, as lines of Python over the names
# given: the classes below compile their own constructors from them, and the
# op layer's generated fast paths (nbgrad/ops/straight_line.py) paste them in,
# so a slot changes in one place. Generated code runs in TEMPLATE_NAMES.
# ``switches`` (grad_mode.SWITCHES) is read once per op result
# (``Tensor._result_lines``) and in the general path's own constructors: off,
# saved-tensor hooks, anomaly mode and inference mode cost one attribute load
# per op. ``__name__`` marks generated code as nbgrad's own, so the user's
# line an error or anomaly mode names is never inside it.
TEMPLATE_NAMES = {"VersionCounter": VersionCounter, "weak_ref": weakref.ref,
                  "getframe": sys._getframe, "internal_code": _internal_code,
                  "user_where": user_where,
                  "next_sequence": _SEQUENCE.__next__, "new": object.__new__,
                  "switches": SWITCHES, "__name__": "nbgrad.tape.generated"}


def compile_function(source, namespace=None):
    """The function that ``source`` (one ``def``) defines, run in the
    template names plus ``namespace``."""
    names = dict(TEMPLATE_NAMES, **(namespace or {}))
    exec(source, names)
    return names[source[4:source.index("(")]]


def indent(lines, depth=1):
    """``lines`` indented ``depth`` levels, to paste into a block."""
    return ["    " * depth + line for line in lines]


def edge_lines(edge, t):
    """Where the gradient of tensor ``t`` (not a view) goes, as lines that set
    ``edge``: its history, else, for a leaf that requires grad, its
    accumulator (made on first need by ``t._gradient_edge()``), else None.
    A view's edge is ``t._gradient_edge()`` when it requires grad."""
    return [f"{edge} = {t}._grad_fn",
            f"if {edge} is None and {t}._requires_grad:",
            f"    ref = {t}._grad_accumulator",
            f"    {edge} = (ref() if ref is not None else None) or {t}._gradient_edge()"]


edge_of = compile_function("\n".join([
    "def edge_of(t):",
    '    """Where the gradient of ``t`` goes (None: nowhere, or not a tensor)."""',
    "    base = getattr(t, '_base', False)  # False: not a tensor",
    "    if base is None:",
    *indent(edge_lines("edge", "t"), 2),
    "        return edge",
    "    if base is not False and t.requires_grad:",
    "        return t._gradient_edge()",
    "    return None"]))


# Accumulation into a tensor's .grad is atomic with respect to other backward
# passes (PyTorch holds the AccumulateGrad node's mutex): kernels release the
# GIL, so two threads' read-add-write into one buffer would lose updates.
# Striped by tensor: no lock to make per leaf, and every accumulator of a leaf
# (two threads may each make one) takes the same lock.
_GRAD_LOCKS = tuple(threading.Lock() for _ in range(64))


def grad_lock(tensor):
    """The lock to hold while adding into ``tensor.grad``."""
    return _GRAD_LOCKS[id(tensor) >> 4 & 63]


class InputMeta:
    """What the engine needs to know about an input to shape its gradient."""

    __slots__ = ("shape", "dtype", "backend", "np_dtype", "alone", "pairs")

    def __init__(self, tensor):
        self.shape = tensor._data.shape
        self.dtype = dtype = tensor.dtype
        self.np_dtype = dtype.numpy
        self.backend = tensor._backend
        # A node's input_meta when its one or two inputs are alike (``pairs``
        # by gradient mask): shared, as nothing writes to them.
        self.alone = (self,)
        self.pairs = (None, (self, None), (None, self), (self, self))


# Interned InputMeta records, one table of shapes per (dtype, backend): nodes
# share one per (shape, dtype, backend), as nothing writes to them, and a
# caller that knows the dtype and backend finds one by shape alone. Bounded:
# a table is cleared when it grows past _METAS_MAX.
_metas = {}
_METAS_MAX = 4096


def metas_for(dtype, backend):
    """The shape -> InputMeta table of one dtype and backend (filled by ``input_meta``)."""
    table = _metas.get((dtype, backend))
    if table is None:
        table = _metas[(dtype, backend)] = {}
    return table


def input_meta(tensor):
    """``InputMeta(tensor)``, shared with every input of the same shape, dtype and backend."""
    table = metas_for(tensor.dtype, tensor._backend)
    shape = tensor._data.shape
    meta = table.get(shape)
    if meta is None:
        if len(table) >= _METAS_MAX:
            table.clear()
        meta = table[shape] = InputMeta(tensor)
    return meta


class SavedTensor:
    """A tensor value saved for backward, checked against its version counter."""

    __slots__ = ("data", "counter", "version", "tensor_ref", "producer", "history", "__weakref__")

    # A saved output must not hold its own node (a cycle): errors name the
    # node that saved it, as PyTorch does. A saved input is named by its
    # current history, read through a weak reference while it lives, else by
    # the node that made it (``producer``: that node, or a name). ``history``
    # is the input's history when saved (None for an output: the node that
    # saved it), which a backward that builds a graph gives the value back.

    # ``to_tensor(saved, node)``: the saved value as a value of the layer
    # above (a Tensor) with its history, for a backward that builds a graph;
    # ``node`` saved it. Set by that layer (the tape knows no Tensor).
    to_tensor = None
    @staticmethod
    def input_lines(s, t):
        """Lines that fill SavedTensor ``s`` from tensor ``t``, an op's input
        (not a view); its version counter is made on first need."""
        return [f"{s}.data = {t}._data",
                f"c = {t}._vc",
                "if c is None:",
                f"    c = {t}._vc = VersionCounter()",
                f"{s}.counter = c",
                f"{s}.version = c.value",
                f"{s}.tensor_ref = weak_ref({t})",
                f"{s}.producer = {s}.history = {t}._grad_fn"]

    @staticmethod
    def output_lines(s, data, counter, version, producer):
        """Lines that fill SavedTensor ``s`` with an op's output: array
        ``data`` at ``version`` of ``counter``, named by ``producer``."""
        return [f"{s}.data = {data}",
                f"{s}.counter = {counter}",
                f"{s}.version = {version}",
                f"{s}.tensor_ref = None",
                f"{s}.producer = {producer}",
                f"{s}.history = None"]

    @property
    def op_name(self):
        producer = self.producer
        return producer if producer is None or isinstance(producer, str) else producer.op_name

    @property
    def had_history(self):
        return self.tensor_ref is not None and self.producer is not None

    @property
    def shape(self):
        return self.data.shape

    @property
    def dtype(self):
        from ..dtypes import from_numpy_dtype
        return from_numpy_dtype(self.data.dtype)

    def unpack(self, graph=False):
        """The saved array, checked against its version counter. ``graph``:
        read for a backward that builds a graph (saved-tensor hooks see it)."""
        data = self.data
        if data is None:
            raise RuntimeError(_SECOND_BACKWARD)
        tensor_ref = self.tensor_ref
        if tensor_ref is None:  # a saved output: named by the node that saved it
            if self.counter.value != self.version:
                return self._unpack_unlike(data, self.producer, graph)
            return data
        tensor = tensor_ref()
        if tensor is None:
            if self.counter.value != self.version:
                return self._unpack_unlike(data, self.op_name, graph)
            return data
        # As PyTorch's unpack, read the saved input's current history first (a stale
        # view is re-derived here, and one made in no_grad mode raises).
        fn = tensor._grad_fn if tensor._base is None else tensor.grad_fn
        if fn is None and self.producer is not None:
            raise RuntimeError(
                "Trying to use a saved tensor that has been detached in-place, i.e. with "
                ".detach_().This is not supported, please use out-of-place `.detach()` "
                "instead")
        if self.counter.value != self.version:
            return self._unpack_unlike(data, fn.op_name if fn is not None else None, graph)
        return data

    def _unpack_unlike(self, data, producer, graph):
        """``unpack`` where the version read is not the one saved: a value
        packed by saved-tensor hooks (its version is then PACKED, so the
        inlined checks of generated code call ``unpack``), or one written
        since it was saved: stale when a write overlapped its elements
        (``set_version_check``). A packed value is checked against its
        version only when the hook gives back the saved storage itself
        (identity hooks, ``save_on_cpu`` on the CPU): PyTorch checks none,
        and a copy cannot go stale."""
        version, packed = self.version, None
        if data.__class__ is Packed:
            packed, version = data, data.version
            data, counter = packed.unpack(packed.value, self, graph)
            if counter is not self.counter or counter.value == version:
                counter = None
        else:
            counter = self.counter
        if counter is not None:
            write = counter.first_write_over(version, _covers(data))
            if write is not None:
                raise StaleSavedTensorError(self._stale_message(producer, write, version))
        if packed is not None and packed.unpack is _unguard:
            _verify_checksum(self, packed.value, producer)
        return data

    def _stale_message(self, producer, write, version):
        which = f", which is output 0 of {producer}," if producer else ""
        op_name, location = write
        return (
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: {describe(self.shape, self.dtype)}{which} is at version "
            f"{self.counter.value}; expected version {version} instead. It was modified in "
            f"place by {op_name}() at {location}.")

    def release(self):
        self.data = None


def _covers(saved):
    """Whether a write through an array overlapped the elements of ``saved``."""
    backend = backend_of(saved)
    mine = regions.region(backend, saved)
    return lambda written: regions.overlaps(mine, regions.region(backend, written))


class StaleSavedTensorError(RuntimeError):
    """A saved tensor was modified since it was saved (PyTorch's
    RuntimeError); the engine adds the node that saved it and its forward
    call (``saved_by``)."""

    def saved_by(self, node):
        where = getattr(node, "where", None)
        if where is not None and not getattr(self, "named", False):
            self.args = (f"{self.args[0]} It was saved for {node.name()} by the forward call at "
                         f"{where[0].co_filename}:{where[1]}.",)
            self.named = True
        return self


class SavedValue:
    """A number or index array saved for backward where PyTorch saves a tensor
    (a wrapped Python scalar, max's indices, an index key). Kept in a node's
    ``saved`` beside its SavedTensors, it is freed with them, so the node
    refuses a second backward as PyTorch's does."""

    __slots__ = ("data",)

    def __init__(self, data):
        self.data = data

    def unpack(self):
        data = self.data
        if data is None:
            raise RuntimeError(_SECOND_BACKWARD)
        return data

    def release(self):
        self.data = None


# The version a SavedTensor holds once saved-tensor hooks packed its value:
# never a counter's value, so every inlined version check calls ``unpack``.
PACKED = -1


class Packed:
    """A saved value as saved-tensor hooks packed it, kept in the
    SavedTensor's ``data`` (None once freed, as an array would be): what
    ``pack`` returned, the ``unpack`` to call, and the array's version,
    shape, dtype, strides (bytes) and backend when saved."""

    __slots__ = ("value", "unpack", "version", "shape", "dtype", "strides", "backend")

    def __init__(self, value, unpack, version, array):
        self.value, self.unpack, self.version = value, unpack, version
        self.shape, self.dtype, self.strides = array.shape, array.dtype, array.strides
        self.backend = backend_of(array)


def pack_saved(saved, tensor):
    """Hand a value being saved to this thread's saved-tensor hooks, if any:
    ``tensor`` is the tensor saved (None: one the SavedTensor describes alone)."""
    hooks = current_saved_hooks()
    if hooks is None:  # another thread's hooks turned the switch on
        return
    pack, unpack = hooks
    packed = Packed(None, unpack, saved.version, saved.data)
    packed.value = pack(saved, tensor)
    saved.data, saved.version = packed, PACKED


# ---------------------------------------------------- mutation detection
# ``detect_mutation``: each saved value is packed with a checksum of its
# elements, verified when unpacked, after the version check (a write the
# counter saw is named by that check). The engine adds the node and the
# forward call that saved it (``StaleSavedTensorError.saved_by``).
def guard_saved(saved):
    """Checksum ``saved``'s value now (mutation detection is on)."""
    array = saved.data
    packed = Packed(None, _unguard, saved.version, array)
    packed.value = (array, backend_of(array).checksum(array))
    saved.data, saved.version = packed, PACKED


def track_saved(saved):
    """Remember ``saved`` in its storage's counter (``SWITCHES.track_saves``)."""
    counter = saved.counter
    saves = counter.saves
    if saves is None:
        saves = counter.saves = []
    elif len(saves) >= 64 and len(saves) & (len(saves) - 1) == 0:  # at powers of two: prune
        saves[:] = [ref for ref in saves if _live_array(ref()) is not None]
    saves.append(weakref.ref(saved))


def _live_array(saved):
    """The array a saved value still holds for a backward to come, else None."""
    data = None if saved is None else saved.data
    if data.__class__ is Packed:
        return data.value[0] if data.unpack is _unguard else data  # hooks' packing: unknown
    return data


def saved_overlapping(counter, array):
    """A value saved from ``counter``'s storage, still held for backward,
    whose elements overlap ``array``'s; None if there is none."""
    mine = None
    for ref in counter.saves or ():
        saved = ref()
        held = _live_array(saved)
        if held is None:
            continue
        if held.__class__ is Packed:
            return saved
        if mine is None:
            backend = backend_of(array)
            mine = regions.region(backend, array)
        if regions.overlaps(mine, regions.region(backend, held)):
            return saved
    return None


def _unguard(value, saved, graph):
    return value[0], saved.counter


def _verify_checksum(saved, value, producer):
    array, checksum = value
    if backend_of(array).checksum(array) != checksum:
        which = f", output 0 of {producer}," if producer else ""
        raise StaleSavedTensorError(
            f"a tensor saved for backward, {describe(array.shape, saved.dtype)}{which} "
            "was modified after it was saved by a write that bypassed version tracking (through "
            "`.data`, a NumPy, DLPack or __cuda_array_interface__ alias, or a kernel that wrote "
            "its memory): its elements' checksum differs from the one taken when it was saved. "
            "Gradients computed from it would be wrong.")


# ------------------------------------------------------------ anomaly mode
# Where each node was made, recorded in anomaly mode: (the user's file:line,
# the forward's stack outside nbgrad). Keyed weakly: a node's record dies with it.
_CREATION = weakref.WeakKeyDictionary()


def _user_stack(frame):
    """The frames from the outermost down to ``frame``, nbgrad's own left out."""
    frames = []
    while frame is not None:
        if not frame.f_globals.get("__name__", "").startswith("nbgrad."):
            frames.append((frame, frame.f_lineno))
        frame = frame.f_back
    frames.reverse()
    return traceback.StackSummary.extract(frames, lookup_lines=False)


def record_creation(node):
    """Anomaly mode: remember where ``node`` was made."""
    location = _user_location()
    _CREATION[node] = (None if location is None else f"{location[0]}:{location[1]}",
                       _user_stack(sys._getframe(1)))


def creation_of(node):
    """(file:line, stack) where ``node`` was made in anomaly mode, or None."""
    return _CREATION.get(node)


def watch_result(t):
    """A new op result while a switch is on in some thread (the one check
    ``Tensor._result_lines`` makes): inference mode marks it; its node, made
    by generated code that checks nothing, is recorded in anomaly mode, and
    its saved tensors go through this thread's saved-tensor hooks (the
    general path's constructors did both already)."""
    if SWITCHES.inference:
        SWITCHES.mark_inference(t)
    node = t._grad_fn
    if node is None:
        return
    if SWITCHES.anomaly and node not in _CREATION:
        record_creation(node)
    if SWITCHES.saved_hooks:
        for saved in node.saved:
            if saved.__class__ is SavedTensor and saved.version is not PACKED \
                    and saved.data is not None:
                ref = saved.tensor_ref
                tensor = ref() if ref is not None else t if saved.data is t._data else None
                pack_saved(saved, tensor)
    if SWITCHES.mutation or SWITCHES.track_saves:
        for saved in node.saved:
            if saved.__class__ is SavedTensor and saved.data is not None:
                if SWITCHES.mutation and saved.version is not PACKED:
                    guard_saved(saved)
                if SWITCHES.track_saves:
                    track_saved(saved)


TEMPLATE_NAMES["watch_result"] = watch_result


class Node:
    """A backward function. Subclasses set ``op_name`` and implement ``backward``."""

    __slots__ = ("next_edges", "input_meta", "saved", "pre_hooks", "retained", "sequence_nr",
                 "where", "__weakref__")
    op_name = "Node"
    # True when every gradient ``backward`` returns is either the incoming
    # ``grad`` object itself or a new buffer that nothing else references: the
    # engine may then hand such a buffer to a leaf as its ``.grad`` without a
    # copy. Nodes that return views or user-held arrays keep False.
    returns_fresh = False

    @staticmethod
    def field_lines(node, edges, metas, sequence="next_sequence()", where=True):
        """Lines that fill Node ``node``'s tape fields (``saved`` is each
        node's own); among nodes ready to run, the engine runs the latest
        made (the highest ``sequence_nr``) first, as PyTorch's."""
        return [f"{node}.next_edges = {edges}",
                f"{node}.input_meta = {metas}",
                f"{node}.pre_hooks = None",
                f"{node}.retained = None",
                f"{node}.sequence_nr = {sequence}",
                *([line.format(node=node) for line in WHERE_LINES] if where
                  else [f"{node}.where = None"])]

    def save(self, *tensors, output_of=None):
        """Save tensors (None allowed) for backward; returns nothing, read with ``saved_values``."""
        self.saved = tuple(None if t is None else SavedTensor(t, output_of) for t in tensors)

    def saved_values(self, graph=False):
        """The saved values: raw arrays, or with ``graph`` (a backward that
        builds a graph) Tensors with their histories; numbers as they are."""
        if graph:
            return [None if s is None else s.to_tensor(s, self) if s.__class__ is SavedTensor
                    else s.unpack() for s in self.saved]
        return [None if s is None else s.unpack() for s in self.saved]

    def backward_graph(self, grad):
        """``backward`` for a backward that builds a graph: ``grad`` and the
        results are Tensors, computed by taped ops. A formula written against
        ``nbgrad.ops.arrays.ops_for(grad)`` serves both."""
        return self.backward(grad)

    def needs_grad(self, i):
        return self.next_edges[i] is not None

    def backward(self, grad):
        """Return one gradient (raw array or None) per input."""
        raise NotImplementedError

    def backward_and_release(self, grad):
        """``backward``, then the saved tensors freed, as the engine calls a
        node when the graph is not retained (a subclass may do both in one step)."""
        grads = self.backward(grad)
        self.release_saved()
        return grads

    def after_write(self, output):
        """Called once the output exists (after the write, for in-place ops)."""

    def release_saved(self):
        for s in self.saved:
            if s is not None:
                s.release()

    def name(self):
        return self.op_name + "Backward"

    @property
    def next_functions(self):
        return tuple((edge, 0) for edge in self.next_edges)

    def register_prehook(self, hook):
        if self.pre_hooks is None:
            self.pre_hooks = []
        self.pre_hooks.append(hook)

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"

    # ``grad_fn._saved_<name>``: the saved values under PyTorch's names, read
    # by functions the layer above sets (the tape knows no Tensor), through
    # one descriptor per name (``expose_saved``). Not ``__getattr__``: a class
    # that defines it loses CPython's specialized attribute loads, on every
    # node attribute the engine reads.
    saved_attribute = None  # (node, name) -> value, or AttributeError
    saved_names = None  # node -> the names it has

    @classmethod
    def expose_saved(cls, names):
        """Make each of ``names`` (``_saved_self``, ...) an attribute of every node."""
        for name in names:
            if name not in cls.__dict__:
                setattr(cls, name, _SavedAttribute(name))

    def __dir__(self):
        names = [n for n in object.__dir__(self) if not n.startswith(("_saved_", "_raw_saved_"))]
        return names + (Node.saved_names(self) if Node.saved_names is not None else [])


class _SavedAttribute:
    """``node._saved_<name>``: read through ``Node.saved_attribute``, which
    raises AttributeError for a node that saved no such value."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __get__(self, node, owner=None):
        if node is None:
            return self
        return Node.saved_attribute(node, self.name)


class AccumulateGrad(Node):
    """The sink for a leaf: accumulates into ``leaf.grad`` after the leaf's hooks."""

    __slots__ = ("variable",)
    op_name = "AccumulateGrad"


    def name(self):
        return "AccumulateGrad"

    def backward(self, grad):
        self.accumulate(grad)
        return ()

    def accumulate(self, grad, owned=False):
        """``owned``: ``grad`` is a new buffer nothing else holds (the engine
        knows), so the leaf may keep it as its ``.grad`` instead of a copy."""
        variable = self.variable
        if variable._grad_fn is not None:  # it was a leaf when the graph was built
            raise RuntimeError("leaf variable has been moved into the graph interior")
        # Not after requires_grad_(False) or detach_(), as PyTorch.
        if variable._requires_grad or variable.requires_grad:
            with _GRAD_LOCKS[id(variable) >> 4 & 63]:  # grad_lock(variable), inlined
                variable._accumulate_grad(grad, owned)
            if variable._post_accumulate_grad_hooks:
                run_post_accumulate_hooks(variable)


def run_post_accumulate_hooks(variable):
    """``variable``'s post-accumulate-grad hooks, in the order registered,
    once its ``.grad`` holds the new gradient (outside the lock: a hook may
    step an optimizer, or run another backward)."""
    for hook in list(variable._post_accumulate_grad_hooks):
        result = hook(variable)
        if result is not None:
            raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")


# The constructors, compiled from the lines above.
SavedTensor.__init__ = compile_function("\n".join([
    "def __init__(self, tensor, output_of=None):",
    "    if output_of is not None:",
    *indent(SavedTensor.output_lines("self", "tensor._data", "tensor._version_counter",
                                     "self.counter.value", "output_of"), 2),
    "        if switches.saved_hooks:",
    "            pack_saved(self, tensor)",
    "        if switches.mutation and self.version is not PACKED:",
    "            guard_saved(self)",
    "        if switches.track_saves:",
    "            track_saved(self)",
    "        return",
    *indent(SavedTensor.input_lines("self", "tensor")),
    "    if tensor._base is not None and self.producer is not None:",
    "        self.producer = 'AsStrided'  # should it die first: a stale view is re-derived",
    "        self.history = tensor.grad_fn",
    "    if switches.saved_hooks:",
    "        pack_saved(self, tensor)",
    "    if switches.mutation and self.version is not PACKED:",
    "        guard_saved(self)",
    "    if switches.track_saves:",
    "        track_saved(self)"]),
    {"SavedTensor": SavedTensor, "pack_saved": pack_saved, "guard_saved": guard_saved,
     "track_saved": track_saved, "PACKED": PACKED})

Node.__init__ = compile_function("\n".join([
    "def __init__(self, inputs):",
    "    edges = []",
    "    metas = []",
    "    for t in inputs:",  # edge_of(t), written out: this runs for every node
    "        base = getattr(t, '_base', False)  # False: not a tensor",
    "        if base is None:",
    *indent(edge_lines("edge", "t"), 3),
    "        elif base is not False and t.requires_grad:",
    "            edge = t._gradient_edge()",
    "        else:",
    "            edge = None",
    "        edges.append(edge)",
    "        metas.append(None if edge is None else input_meta(t))",
    *indent(Node.field_lines("self", "edges", "metas")),
    "    self.saved = ()",
    "    if switches.anomaly:",
    "        record_creation(self)"]),
    {"input_meta": input_meta, "record_creation": record_creation})

fill_node = compile_function("\n".join([
    "def fill_node(node, edges, metas):",
    '    """A new node\'s tape fields (for nodes made without ``__init__``)."""',
    *indent(Node.field_lines("node", "edges", "metas")),
    "    if switches.anomaly:",
    "        record_creation(node)"]), {"record_creation": record_creation})

AccumulateGrad.__init__ = compile_function("\n".join([
    "def __init__(self, variable):",
    # accumulated as soon as ready, as PyTorch does
    *indent(Node.field_lines("self", "()", "()", sequence="inf", where=False)),
    "    self.saved = ()",
    "    self.variable = variable"]), {"inf": math.inf})

"""Version counters: one per storage, shared by its views and detached aliases.

Each bump records which in-place operation made it, the user's file:line
and the array written through (its elements: the region written), so a
stale saved tensor can be traced to the write that staled it, and a write
to other elements of the storage need not stale it (``set_version_check``).
"""
import sys

_HISTORY = 32  # bumps remembered per counter; older ones count as covering every element

# "region": a saved tensor is stale when a write since it was saved touched
# its elements; "storage": when any write touched its storage (PyTorch's rule).
_CHECKS = ("region", "storage")
_check = ["region"]


def set_version_check(mode):
    """Choose when a saved tensor counts as modified: ``"region"`` (the
    default) when an in-place write since it was saved overlapped the
    elements it covers; ``"storage"`` when anything wrote to its storage,
    PyTorch's rule. ``Tensor._version`` counts every write either way."""
    if mode not in _CHECKS:
        raise ValueError(f"set_version_check(): mode must be 'region' or 'storage', not {mode!r}")
    _check[0] = mode


def get_version_check():
    """The rule ``set_version_check`` chose: ``"region"`` or ``"storage"``."""
    return _check[0]


# code object -> whether it belongs to nbgrad (filled as frames are seen;
# cleared past _INTERNAL_MAX, for programs that keep making new code)
_internal_code = {}
_INTERNAL_MAX = 4096


def _classify(code, frame):
    if len(_internal_code) >= _INTERNAL_MAX:
        _internal_code.clear()
    inside = _internal_code[code] = frame.f_globals.get("__name__", "").startswith("nbgrad.")
    return inside


def _user_location():
    """(file, line) of the innermost frame outside nbgrad's modules; formatted
    only when an error message needs it (a bump runs on every in-place write)."""
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        inside = _internal_code.get(code)
        if inside is None:
            inside = _classify(code, frame)
        if not inside:
            return code.co_filename, frame.f_lineno
        frame = frame.f_back
    return None


def user_where(frame):
    """(code, line) of the first frame from ``frame`` outward that is not
    nbgrad's: where a node was made, named if what it saved goes stale."""
    get = _internal_code.get
    while frame is not None:
        code = frame.f_code
        inside = get(code)
        if inside is None:
            inside = _classify(code, frame)
        if not inside:
            return code, frame.f_lineno
        frame = frame.f_back
    return None


# Lines that set ``{node}.where`` in generated code: the caller's frame,
# inlined where it is the user's (an op called from user code: no call, one
# dict lookup), else the walk of ``user_where``.
WHERE_LINES = ["_wf = getframe(1)",
               "_wc = _wf.f_code",
               "{node}.where = (_wc, _wf.f_lineno) if internal_code.get(_wc) is False "
               "else user_where(_wf)"]


def user_stacklevel():
    """The ``stacklevel`` that makes a warning point at the user's line: the
    caller of ``warnings.warn`` counts 1, and nbgrad's own frames (op
    wrappers, the forward-mode rule of an op) are skipped."""
    frame = sys._getframe(2)
    level = 2
    while frame is not None and frame.f_globals.get("__name__", "").startswith("nbgrad."):
        frame = frame.f_back
        level += 1
    return level


class VersionCounter:
    __slots__ = ("value", "_writes", "_forgotten", "saves")

    def __init__(self):
        self.value = 0
        self.saves = None  # weak references to the values saved from this storage (track_saves)
        # (version after the write, op name, location, array written or None
        # for the whole storage); a list once written
        self._writes = None
        self._forgotten = 0  # the newest version whose write is no longer remembered

    def bump(self, op_name, written=None):
        """Count a write by ``op_name`` through the array ``written`` (None:
        to elements not known, counted as all of them)."""
        self.value += 1
        writes = self._writes
        if writes is None:
            writes = self._writes = []
        elif len(writes) >= _HISTORY:
            self._forgotten = writes.pop(0)[0]
        writes.append((self.value, op_name, _user_location(), written))

    def first_write_over(self, version, covers):
        """The first write after ``version`` whose array ``covers(array)``
        says overlaps (an unknown region always does), as ``(op name,
        file:line)``; None when none did. Writes no longer remembered
        count as overlapping, under the name of the oldest one remembered."""
        writes = self._writes or ()
        if _check[0] == "storage" or self._forgotten > version:
            return self.write_that_made(version + 1) or ("<unknown>", "<unknown>")
        for write in writes:
            if write[0] > version and (write[3] is None or covers(write[3])):
                return _named(write)
        return None

    def write_that_made(self, version):
        """The recorded write that moved the counter to ``version`` (or the
        oldest remembered after it, if that one has been forgotten)."""
        for write in self._writes or ():
            if write[0] >= version:
                return _named(write)
        return None


def _named(write):
    location = write[2]
    return write[1], "<unknown>" if location is None else f"{location[0]}:{location[1]}"

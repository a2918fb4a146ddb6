"""Version counters: one per storage, shared by its views and detached aliases.

Each bump records which in-place operation made it and the user's file:line,
so a stale saved tensor can be traced to the write that staled it.
"""
import sys

_HISTORY = 8  # bumps remembered per counter; enough to name the culprit


# code object -> whether it belongs to nbgrad (filled as frames are seen;
# cleared past _INTERNAL_MAX, for programs that keep making new code)
_internal_code = {}
_INTERNAL_MAX = 4096


def _user_location():
    """(file, line) of the innermost frame outside nbgrad's modules; formatted
    only when an error message needs it (a bump runs on every in-place write)."""
    frame = sys._getframe(2)
    internal = _internal_code
    while frame is not None:
        code = frame.f_code
        inside = internal.get(code)
        if inside is None:
            if len(internal) >= _INTERNAL_MAX:
                internal.clear()
            inside = internal[code] = frame.f_globals.get("__name__", "").startswith("nbgrad.")
        if not inside:
            return code.co_filename, frame.f_lineno
        frame = frame.f_back
    return None


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
    __slots__ = ("value", "_writes")

    def __init__(self):
        self.value = 0
        self._writes = None  # (version after the write, op name, location); a list once written

    def bump(self, op_name):
        self.value += 1
        writes = self._writes
        if writes is None:
            writes = self._writes = []
        elif len(writes) >= _HISTORY:
            del writes[0]
        writes.append((self.value, op_name, _user_location()))

    def write_that_made(self, version):
        """The recorded write that moved the counter to ``version`` (or the
        oldest remembered after it, if that one has been forgotten)."""
        for v, op_name, location in self._writes or ():
            if v >= version:
                return op_name, "<unknown>" if location is None else f"{location[0]}:{location[1]}"
        return None

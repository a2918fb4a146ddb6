"""Version counters: one per storage, shared by its views and detached aliases.

Each bump records which in-place operation made it and the user's file:line,
so a stale saved tensor can be traced to the write that staled it.
"""
import sys

_HISTORY = 8  # bumps remembered per counter; enough to name the culprit


def _user_location():
    """file:line of the innermost frame outside nbgrad's modules (a few frame hops)."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("nbgrad."):
        frame = frame.f_back
    if frame is None:
        return "<unknown>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


class VersionCounter:
    __slots__ = ("value", "_writes")

    def __init__(self):
        self.value = 0
        self._writes = []  # (version after the write, op name, location)

    def bump(self, op_name):
        self.value += 1
        writes = self._writes
        if len(writes) >= _HISTORY:
            del writes[0]
        writes.append((self.value, op_name, _user_location()))

    def write_that_made(self, version):
        """The recorded write that moved the counter to ``version`` (or the
        oldest remembered after it, if that one has been forgotten)."""
        for v, op_name, location in self._writes:
            if v >= version:
                return op_name, location
        return None

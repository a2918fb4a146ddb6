"""The process group: MPI's world (through ``mpi4py``), sub-groups, and what
makes a failing rank fail the others promptly.

MPI gives rank and world size; ``init_process_group`` only checks what the
caller passed against them. Two things stop a job from hanging when one rank
fails: an uncaught exception on any rank prints it (with its rank) and calls
``MPI.COMM_WORLD.Abort``, so ``mpiexec`` ends every rank; and each collective
waits on a non-blocking request for at most the group's ``timeout``, then
raises (and so aborts).
"""
import datetime
import os
import sys
import threading
import traceback

_DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)  # torch.distributed's default
# Where a rank writes its uncaught error for the launcher (torchrun's error files).
ERROR_DIR_VARIABLE = "NBGRAD_ERROR_DIR"


def mpi():
    """``mpi4py.MPI``, imported on first use, with a clear error when missing."""
    try:
        from mpi4py import MPI
    except ImportError:  # pragma: no cover - depends on the install
        raise RuntimeError("nbgrad.distributed runs on MPI through mpi4py, which is not "
                           "installed: pip install 'nbgrad[distributed]' (mpi4py and the mpich "
                           "runtime wheel)") from None
    return MPI


class ProcessGroup:
    """A set of ranks and its MPI communicator (``nbgrad.distributed.new_group``)."""

    def __init__(self, comm, timeout):
        self.comm, self.timeout = comm, timeout

    def rank(self):
        return self.comm.Get_rank()

    def size(self):
        return self.comm.Get_size()

    def __repr__(self):
        return f"<nbgrad.distributed.ProcessGroup rank {self.rank()} of {self.size()}>"


class _State:
    world = None  # the default ProcessGroup once initialized
    previous_excepthook = None


_state = _State()
_lock = threading.Lock()


def is_available():
    """Whether ``nbgrad.distributed`` can run here (``mpi4py`` importable)."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


def is_initialized():
    """Whether ``init_process_group`` has run (and ``destroy_process_group`` not since)."""
    return _state.world is not None


def init_process_group(backend="mpi", init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    r"""Initializes the default process group on MPI's world.

    Args:
        backend (str): ``"mpi"``, the only backend (PyTorch's ``"gloo"`` and
            ``"nccl"`` are refused with ``ValueError``).
        timeout (timedelta): how long a collective waits before it raises
            (default 30 minutes, as PyTorch's).
        world_size, rank (int): if given, checked against MPI's (a launcher
            such as ``mpiexec -n 4`` decides them).

    ``init_method`` and ``store`` are accepted and unused: MPI's launcher
    connects the ranks. After this call an uncaught exception on any rank
    aborts every rank (``MPI.COMM_WORLD.Abort``) instead of leaving the
    others waiting in a collective."""
    if backend not in ("mpi", "MPI"):
        raise ValueError(f"nbgrad.distributed runs on MPI only: backend must be 'mpi', not "
                         f"{backend!r}")
    MPI = mpi()
    with _lock:
        if _state.world is not None:
            raise ValueError("trying to initialize the default process group twice!")
        comm = MPI.COMM_WORLD.Dup()
        if world_size not in (-1, None) and world_size != comm.Get_size():
            raise ValueError(f"world_size={world_size} but MPI started {comm.Get_size()} ranks")
        if rank not in (-1, None) and rank != comm.Get_rank():
            raise ValueError(f"rank={rank} but MPI gave this process rank {comm.Get_rank()}")
        _state.world = ProcessGroup(comm, timeout or _DEFAULT_TIMEOUT)
        if _state.previous_excepthook is None:
            _state.previous_excepthook = sys.excepthook
            sys.excepthook = _abort_on_uncaught


def _abort_on_uncaught(kind, value, tb):
    """Print the error with this rank's number, then end every rank."""
    MPI = mpi()
    rank = MPI.COMM_WORLD.Get_rank()
    text = (f"[nbgrad.distributed rank {rank}] uncaught {kind.__name__}; aborting all ranks:\n"
            + "".join(traceback.format_exception(kind, value, tb)))
    # mpiexec may end the job before it forwards this rank's last stderr (seen
    # on a loaded machine), so the launcher also gets the text in a file.
    errors = os.environ.get(ERROR_DIR_VARIABLE)
    if errors:
        with open(os.path.join(errors, f"rank{rank}.txt"), "w") as f:
            f.write(text)
    sys.stderr.write(text)
    sys.stderr.flush()
    MPI.COMM_WORLD.Abort(1)


def destroy_process_group(group=None):
    """Frees ``group`` (the default group, and every other, when None)."""
    with _lock:
        if group is None or group is _state.world:
            if _state.world is None:
                raise ValueError("Default process group has not been initialized, please make "
                                 "sure to call init_process_group.")
            _state.world.comm.Free()
            _state.world = None
            if _state.previous_excepthook is not None:
                sys.excepthook = _state.previous_excepthook
                _state.previous_excepthook = None
        else:
            group.comm.Free()


def default_group():
    if _state.world is None:
        raise ValueError("Default process group has not been initialized, please make sure to "
                         "call init_process_group.")
    return _state.world


def group_of(group):
    return default_group() if group is None else group


def new_group(ranks=None, timeout=None, backend=None, pg_options=None):
    """A group of ``ranks`` (all, when None). Every rank of the default group
    must call it, as in PyTorch; a rank outside ``ranks`` gets a group it
    cannot use (``GroupMember.NON_GROUP_MEMBER``'s role: None here)."""
    world = default_group()
    MPI = mpi()
    ranks = sorted(range(world.size()) if ranks is None else ranks)
    member = world.rank() in ranks
    comm = world.comm.Split(0 if member else MPI.UNDEFINED, ranks.index(world.rank())
                            if member else 0)
    return ProcessGroup(comm, timeout or world.timeout) if member else None


def get_rank(group=None):
    """This process's rank in ``group`` (the default group when None)."""
    return group_of(group).rank()


def get_world_size(group=None):
    """The number of ranks in ``group`` (the default group when None)."""
    return group_of(group).size()

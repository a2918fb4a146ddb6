"""``python -m nbgrad.distributed.run -n 4 train.py [args]``: torchrun's role
on MPI. Finds the MPI launcher (``mpiexec`` of the ``mpich`` wheel, beside
this Python, else on ``PATH``) and runs ``train.py`` under it with this
Python, so every rank imports the same nbgrad; its exit status is the job's.
A rank that raises aborts the others (``init_process_group`` installs the
hook), so the job ends with that rank's error rather than a hang; as torchrun
does, the launcher then prints that error once more, read from the file the
rank wrote, since MPI may end the job before it forwards the rank's stderr."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

from .process_group import ERROR_DIR_VARIABLE


def find_mpiexec():
    """The ``mpiexec`` beside this Python (the mpich wheel's), else on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    found = here if os.access(here, os.X_OK) else shutil.which("mpiexec")
    if found is None:
        raise SystemExit("nbgrad.distributed.run: no mpiexec found: pip install "
                         "'nbgrad[distributed]' (the mpich wheel brings one)")
    return found


def command(nprocs, script, args, module=False):
    """The launcher's command line for ``nprocs`` ranks of ``script``."""
    target = ["-m", script] if module else [script]
    return [find_mpiexec(), "-n", str(nprocs), sys.executable, *target, *args]


THREAD_VARIABLES = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                    "MKL_NUM_THREADS")


def environment(nprocs, error_dir):
    """The ranks' environment: as torchrun does, each rank gets an equal share
    of this machine's cores for its thread pools (Numba's, OpenMP's, BLAS's)
    unless the caller set them; ranks that each start a thread per core
    oversubscribe the machine, and a rank waiting in a collective then slows
    the others. A rank's uncaught error goes to a file in ``error_dir``."""
    env = dict(os.environ, **{ERROR_DIR_VARIABLE: error_dir})
    share = str(max(1, (os.cpu_count() or 1) // max(1, nprocs)))
    for name in THREAD_VARIABLES:
        env.setdefault(name, share)
    return env


def launch(nprocs, script, args, module=False):
    """Run ``script`` on ``nprocs`` ranks and wait; returns the job's exit
    status. The uncaught error of a rank that failed is printed last."""
    with tempfile.TemporaryDirectory(prefix="nbgrad-ranks-") as errors:
        status = subprocess.call(command(nprocs, script, args, module),
                                 env=environment(nprocs, errors))
        for name in sorted(os.listdir(errors)):
            with open(os.path.join(errors, name)) as f:
                sys.stderr.write(f"nbgrad.distributed.run: the job failed (exit status "
                                 f"{status}) on this error:\n{f.read()}")
    return status


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m nbgrad.distributed.run",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--nproc-per-node", "--nproc_per_node", dest="nprocs", type=int,
                        default=1, help="number of ranks (processes) to start")
    parser.add_argument("-m", "--module", action="store_true",
                        help="run the script as a module (python -m)")
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    return launch(args.nprocs, args.script, args.args, args.module)


if __name__ == "__main__":
    sys.exit(main())

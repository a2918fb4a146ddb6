"""nbgrad.distributed on real MPI ranks: ``ranks_program.py`` runs under the
launcher (``python -m nbgrad.distributed.run -n N``) with 2 and 3 ranks and
checks every collective, the differentiable collectives' gradients, DDP
against one process on the global batch, and DistributedSampler; a rank that
raises must end the job with its error, never a hang. In-process tests cover
what needs no second rank."""
import os
import subprocess
import sys

import pytest
import torch.utils.data as torch_data

import nbgrad
import nbgrad.distributed as dist
from helpers import cuda_only
from nbgrad.distributed import run
from nbgrad.utils.data.distributed import DistributedSampler

pytest.importorskip("mpi4py")
PROGRAM = os.path.join(os.path.dirname(__file__), "ranks_program.py")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _launch(n, *args, out=None, timeout=300):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if out is not None:
        env["NBGRAD_TEST_OUT"] = str(out)
    return subprocess.run([sys.executable, "-m", "nbgrad.distributed.run", "-n", str(n), PROGRAM,
                           *args], capture_output=True, text=True, timeout=timeout, env=env)


EVERY_RANK = ["all_reduce SUM", "all_reduce AVG", "all_reduce MAX", "all_reduce MIN",
              "all_reduce PRODUCT", "all_reduce async", "broadcast", "reduce", "all_gather",
              "all_gather_into_tensor", "reduce_scatter_tensor", "gather", "scatter", "barrier",
              "plain collective refuses a tensor requiring grad", "nn.all_reduce gradient",
              "nn.all_gather gradient", "nn.broadcast gradient",
              "DDP equals one process on the global batch (buckets 1, overlap True)",
              "no_sync", "find_unused_parameters",
              "unused parameter without find_unused_parameters raises",
              "BatchNorm buffers follow rank 0", "DistributedSampler covers the dataset"]


@pytest.mark.parametrize("ranks", [2, 3])
def test_every_check_passes_on_every_rank(ranks, tmp_path):
    result = _launch(ranks, out=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line for r in range(ranks)
             for line in (tmp_path / f"rank{r}.txt").read_text().splitlines()]
    for name in EVERY_RANK:
        assert lines.count(f"ok {name}") == ranks, name
    assert lines.count("ok send/recv") == 1 and lines.count("ok new_group") == 2
    several = [line for line in lines if "overlap" in line and "buckets 1," not in line]
    assert len(several) == 2 * ranks  # the small-bucket runs, with and without overlap


@cuda_only
def test_cuda_tensors_are_staged_through_the_host(device, tmp_path):
    """In the simulator's process the ranks run the CUDA simulator too."""
    result = _launch(2, "cuda", out=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line for r in range(2)
             for line in (tmp_path / f"rank{r}.txt").read_text().splitlines()]
    for name in ("cuda all_reduce AVG", "cuda all_gather", "cuda nn.all_reduce gradient",
                 "cuda DDP gradients equal one process's"):
        assert lines.count(f"ok {name}") == 2, name


def test_the_demo_trains_data_parallel_as_one_process():
    result = subprocess.run([sys.executable, "-m", "nbgrad.demo", "--distributed", "2", "--quick"],
                            capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "parameters equal to the single-process run's" in result.stdout


def test_a_failing_rank_ends_the_job_with_its_error():
    """MPI may end the job before it forwards the rank's stderr (on a loaded
    machine), so the launcher's own report, from the rank's error file, is
    what must be there."""
    result = _launch(3, "fail", timeout=180)
    assert result.returncode != 0
    report = result.stderr[result.stderr.index("nbgrad.distributed.run: the job failed"):]
    assert "[nbgrad.distributed rank 1] uncaught ValueError" in report
    assert "rank 1 fails on purpose" in report and "rank 0]" not in report


def test_the_launcher_runs_mpiexec_with_this_python():
    line = run.command(4, "train.py", ["--epochs", "2"])
    assert os.path.basename(line[0]) == "mpiexec" and line[1:3] == ["-n", "4"]
    assert line[3:] == [sys.executable, "train.py", "--epochs", "2"]
    assert run.command(2, "pkg.train", [], module=True)[3:] == [sys.executable, "-m", "pkg.train"]


def test_using_the_group_before_init_raises_as_pytorch():
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.get_rank()
    with pytest.raises(ValueError, match="backend must be 'mpi'"):
        dist.init_process_group("nccl")
    assert dist.is_available() and not dist.is_initialized()


@pytest.mark.parametrize("n, replicas, drop_last", [(10, 3, False), (10, 3, True), (9, 3, False),
                                                    (2, 4, False), (11, 4, True)])
def test_distributed_sampler_shares_as_pytorch_does(n, replicas, drop_last):
    ours = [list(DistributedSampler(range(n), replicas, r, shuffle=False, drop_last=drop_last))
            for r in range(replicas)]
    theirs = [list(torch_data.DistributedSampler(range(n), replicas, r, shuffle=False,
                                                 drop_last=drop_last)) for r in range(replicas)]
    assert ours == theirs
    shuffled = [DistributedSampler(range(n), replicas, r, seed=5, drop_last=drop_last)
                for r in range(replicas)]
    first = [list(s) for s in shuffled]
    assert [len(x) for x in first] == [len(x) for x in theirs]
    for s in shuffled:
        s.set_epoch(1)
    assert [list(s) for s in shuffled] != first or n < 3  # a new order each epoch
    drawn = sum(first, [])
    assert set(drawn) <= set(range(n)) and len(drawn) == len(sum(theirs, []))
    if not drop_last:
        assert set(drawn) == set(range(n))  # padding repeats indices, never loses one
    with pytest.raises(ValueError, match="Invalid rank 3"):
        DistributedSampler(range(n), 3, 3)


def test_plain_collectives_refuse_a_tensor_requiring_grad_before_any_communication():
    x = nbgrad.ones(3, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="Use nbgrad.distributed.nn.all_reduce"):
        dist.collectives._Buffer(x, "all_reduce", True)

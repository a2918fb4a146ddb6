"""Question: does nbgrad's CUDA backend pass its tests on real hardware, and
what fraction of the GPU's memory bandwidth do its kernels reach?

CI has no GPU: there the CUDA tests run in Numba's simulator and every
kernel is compiled to PTX. This script is the check for a machine that has
a GPU, in one command and under five minutes:

1. the CUDA tests (``pytest -m cuda tests``: the backend's raw arrays in
   ``tests/backends/cuda``, and every device-generic test on CUDA: tensors,
   layers and optimizers on the device) on the hardware
   (``NUMBA_ENABLE_CUDASIM=0``, their own pytest process);
2. the PTX build of every generated kernel for sm_90 and sm_80, and the
   runtime checks (``tests/backends/test_cuda_ptx.py``,
   ``tests/backends/test_cuda_runtime.py``);
3. the roofline study on the GPU (``python -m kernels.roofline --device cuda``);

then prints a summary table (step, result, seconds) and the roofline table.
pytest-xdist, when installed, spreads the tests over a few processes (kernel
compilation is CPU-bound). The exit status is non-zero if a step failed.

Run from the repository root:  python -m kernels.gpu_check [--n N]
(``--simulator`` runs the same steps in the CUDA simulator with tiny sizes,
to check the script itself on a machine without a GPU.)
"""
import argparse
import importlib.util
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUDGET_S = 290


def _run(cmd, env, timeout):
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=timeout)
        output, code = done.stdout + done.stderr, done.returncode
    except subprocess.TimeoutExpired as error:
        output = error.stdout or ""
        if isinstance(output, bytes):
            output = output.decode(errors="replace")
        output, code = output + f"\nTIMEOUT after {timeout:.0f} s", None
    return code, output, time.perf_counter() - start


def _summary(output):
    """pytest's last summary line ("12 passed, 1 skipped in 3.2s")."""
    for line in reversed(output.splitlines()):
        if re.search(r"\d+ (passed|failed|error)", line):
            return line.strip("= ").strip()
    return output.strip().splitlines()[-1] if output.strip() else "(no output)"


def _env(simulator):
    env = dict(os.environ)
    env["NUMBA_ENABLE_CUDASIM"] = "1" if simulator else "0"
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return env


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1 << 26, help="roofline elements per array")
    parser.add_argument("--simulator", action="store_true",
                        help="dry run in the CUDA simulator (no GPU needed; tiny sizes)")
    args = parser.parse_args(argv)

    sim = args.simulator
    if not sim:
        probe = subprocess.run(
            [sys.executable, "-c", "from nbgrad.backends import cuda; cuda.require(); "
             "print(cuda.device_name())"], cwd=ROOT, env=_env(False), capture_output=True, text=True)
        if probe.returncode != 0:
            message = probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else "no GPU"
            sys.exit(f"gpu_check needs a CUDA GPU: {message}")
        device = probe.stdout.strip()
    else:
        device = "CUDA simulator (dry run)"
    print(f"gpu_check on {device}\n", flush=True)

    workers = []
    if importlib.util.find_spec("xdist") is not None and not sim:
        workers = ["-n", str(min(8, max(2, (os.cpu_count() or 2) // 2)))]
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *workers]
    steps = [
        ("CUDA tests on the device" if not sim else "CUDA tests (simulator)",
         pytest + ["-m", "cuda", "tests"], _env(sim), 170, True),
        ("PTX sm_90/sm_80 + runtime", pytest + ["tests/backends/test_cuda_ptx.py",
                                               "tests/backends/test_cuda_runtime.py"],
         _env(False), 100, True),
        ("roofline (cuda)", [sys.executable, "-m", "kernels.roofline", "--device", "cuda",
                             "--n", str(64 if sim else args.n), "--repeat", "1" if sim else "5"]
         + (["--rows", "add,exp,sigmoid"] if sim else []), _env(sim), 90, False),
    ]
    results, roofline, failed = [], "", False
    started = time.perf_counter()
    for name, cmd, env, timeout, is_pytest in steps:
        left = BUDGET_S - (time.perf_counter() - started)
        if left < 10:
            results.append((name, "SKIPPED: out of time", 0.0))
            failed = True
            continue
        print(f"running: {name} ...", flush=True)
        code, output, seconds = _run(cmd, env, min(timeout, left))
        ok = code == 0
        failed |= not ok
        outcome = _summary(output) if is_pytest else ("ok" if ok else "FAILED")
        if not ok and not is_pytest:
            outcome += ": " + (output.strip().splitlines()[-1] if output.strip() else "")
        results.append((name, outcome if ok else f"FAILED ({outcome})", seconds))
        if not ok and is_pytest:
            tail = "\n".join(output.strip().splitlines()[-40:])
            print(f"--- {name}: last lines ---\n{tail}\n", flush=True)
        if not is_pytest and ok:
            roofline = output.strip()

    width = max(len(r[0]) for r in results)
    print(f"\n{'step':<{width}}  {'seconds':>7}  result")
    for name, outcome, seconds in results:
        print(f"{name:<{width}}  {seconds:7.1f}  {outcome}")
    print(f"{'total':<{width}}  {time.perf_counter() - started:7.1f}")
    if roofline:
        print("\n" + roofline)
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()

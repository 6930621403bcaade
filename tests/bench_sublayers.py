#!/usr/bin/python3
"""make bench (and make bench-sublayers alone): certified `linear` forward + backward at GPT-2's MLP
shape (64 tokens, 768 -> 3072) and certified `ffn` forward + backward (gelu_tanh, dropout p = 0.1)
at (64, 768, 3072), each beside PyTorch float64 forward + backward on the same float32 inputs, in
one run (issue 8's performance line).

The certified side is whole `resnorm eval` processes (start-up and .npy I/O included), f64 outputs.
Both sides use the same number of threads: THREADS (default: every core) for PyTorch
(torch.set_num_threads) and for resnorm (OMP_NUM_THREADS: its ball matrix products,
ref/arb_matmul.c).  Wall and CPU seconds, the load average and both ratios are printed: on a shared
machine the wall-clock ratio moves with the load, the CPU ratio much less.  SHAPE=rows,d,ff for
another shape (default 64,768,3072).  PyTorch is warmed up once, then timed over REPS = 5 runs.
Fails (exit 1) if PyTorch float64 and the certified values disagree by more than 1e-9 (both are
within ~1e-13 of the exact result here): a check that the two sides computed the same thing.
Timing lives here, never in tests.  Prints SKIPPED without torch/numpy."""
import os
import resource
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    import torch
except ImportError as e:  # pragma: no cover
    print(f"bench sublayers: SKIPPED (needs Debian's python3-torch and numpy: {e})")
    sys.exit(0)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESNORM = os.environ.get("RESNORM", os.path.join(ROOT, "build", "resnorm"))
THREADS = int(os.environ.get("THREADS", str(os.cpu_count() or 1)))
ENV = dict(os.environ, OMP_NUM_THREADS=str(THREADS))
ROWS, D, FF = (int(v) for v in os.environ.get("SHAPE", "64,768,3072").split(","))
REPS = 5
TOLERANCE = 1e-9
F = torch.nn.functional


def run_timed(cmd):
    """(wall, CPU) seconds of one resnorm run (the CPU time of all its threads)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, env=ENV)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter() - t0, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def torch_timed(arrs, forward):
    """PyTorch float64 on arrs (numpy float32, exactly widened): (forward wall, forward CPU,
    backward wall, backward CPU) seconds averaged over REPS after one warm-up, and the last run's
    output and gradients (by name).  forward(tensors) -> y; the backward seeds y with arrs['dy']."""
    tw = [0.0] * 4
    for rep in range(REPS + 1):
        t = {k: torch.tensor(v, dtype=torch.float64, requires_grad=k not in ("dropout.mask", "dy"))
             for k, v in arrs.items()}
        w0, c0 = time.perf_counter(), time.process_time()
        y = forward(t)
        w1, c1 = time.perf_counter(), time.process_time()
        y.backward(t["dy"])
        w2, c2 = time.perf_counter(), time.process_time()
        if rep:  # rep 0 warms up (first-call allocations, thread pool start)
            for i, v in enumerate((w1 - w0, c1 - c0, w2 - w1, c2 - c1)):
                tw[i] += v / REPS
    grads = {k: v.grad.numpy() for k, v in t.items() if v.grad is not None}
    return tw, y.detach().numpy(), grads


def certified(tmp, op, arrs, attrs):
    """resnorm eval op and op_backward on arrs: (fwd wall, fwd CPU, bwd wall, bwd CPU), outputs."""
    ins = []
    for n, a in arrs.items():
        np.save(os.path.join(tmp, n + ".npy"), a)
        if n != "dy":
            ins += ["--in", f"{n}={tmp}/{n}.npy"]
    common = [*attrs, "--dtype", "f64"]
    wf, cf = run_timed([RESNORM, "eval", op, *ins, *common, "--out", f"{tmp}/{op}_f"])
    wb, cb = run_timed([RESNORM, "eval", op + "_backward", *ins, "--in", f"dy={tmp}/dy.npy", *common,
                        "--out", f"{tmp}/{op}_b"])
    return [wf, cf, wb, cb], lambda sub, name: np.load(f"{tmp}/{op}_{sub}/{name}.npy")


def linear_inputs():
    rng = np.random.default_rng(0)
    return {"x": rng.standard_normal((ROWS, D)), "weight": rng.standard_normal((FF, D)) / np.sqrt(D),
            "bias": rng.standard_normal(FF), "dy": rng.standard_normal((ROWS, FF))}


def ffn_inputs():
    rng = np.random.default_rng(1)
    return {"x": rng.standard_normal((ROWS, D)),
            "linear1.weight": rng.standard_normal((FF, D)) / np.sqrt(D),
            "linear1.bias": 0.5 * rng.standard_normal(FF),
            "linear2.weight": rng.standard_normal((D, FF)) / np.sqrt(FF),
            "linear2.bias": 0.5 * rng.standard_normal(D),
            "dropout.mask": (rng.random((ROWS, FF)) < 0.9) * 1.0, "dy": rng.standard_normal((ROWS, D))}


def ffn_torch(t):
    h = F.gelu(F.linear(t["x"], t["linear1.weight"], t["linear1.bias"]), approximate="tanh")
    return F.linear(h * t["dropout.mask"] / (1 - float(np.float32(0.1))), t["linear2.weight"],
                    t["linear2.bias"])


def main():
    torch.set_num_threads(THREADS)
    load0 = os.getloadavg()[0]
    cases = [  # name, op, inputs, attrs, torch forward, (output, torch grad name, certified name)
        ("linear", "linear", linear_inputs(), [],
         lambda t: F.linear(t["x"], t["weight"], t["bias"]),
         [("x", "dx"), ("weight", "d.weight"), ("bias", "d.bias")]),
        ("ffn gelu_tanh p=0.1", "ffn", ffn_inputs(),
         ["--attr", "activation=gelu_tanh", "--attr", "p=0.1"], ffn_torch,
         [("x", "dx"), ("linear1.weight", "d.linear1.weight"), ("linear2.weight", "d.linear2.weight")]),
    ]
    rows, worst = [], 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for name, op, arrs, attrs, fwd, grads in cases:
            arrs = {k: v.astype(np.float32) for k, v in arrs.items()}
            cert, load = certified(tmp, op, arrs, attrs)
            tt, y, g = torch_timed(arrs, fwd)
            diffs = [("y", float(np.max(np.abs(y - load("f", "y")))))]
            diffs += [(c, float(np.max(np.abs(g[k] - load("b", c))))) for k, c in grads]
            worst = max([worst] + [v for _, v in diffs])
            rows.append((name, cert, tt, diffs))
    load1 = os.getloadavg()[0]
    print(f"sublayers at ({ROWS}, {D}, {FF}), float32 inputs, f64 outputs; {THREADS} thread(s) on "
          f"each side (PyTorch: {torch.get_num_threads()}, resnorm: OMP_NUM_THREADS={THREADS}); "
          f"load average {load0:.1f} .. {load1:.1f} on {os.cpu_count()} cores:")
    print(" " * 39 + "certified (s)      PyTorch f64 (ms)   certified / PyTorch")
    print(" " * 39 + "wall      CPU      wall      CPU        wall      CPU")
    for name, cert, tt, diffs in rows:
        for k, part in ((0, "forward"), (2, "backward")):
            print(f"  {name + ' ' + part:<36} {cert[k]:6.2f}  {cert[k + 1]:7.2f}  {1e3 * tt[k]:8.1f}"
                  f" {1e3 * tt[k + 1]:8.1f}  {cert[k] / tt[k]:8.0f}x {cert[k + 1] / max(tt[k + 1], 1e-9):7.0f}x")
        cw, cc, tw, tc = cert[0] + cert[2], cert[1] + cert[3], tt[0] + tt[2], tt[1] + tt[3]
        print(f"  {name + ' forward+backward':<36} {cw:6.2f}  {cc:7.2f}  {1e3 * tw:8.1f} {1e3 * tc:8.1f}"
              f"  {cw / tw:8.0f}x {cc / max(tc, 1e-9):7.0f}x")
    for name, _, _, diffs in rows:
        print(f"  max |PyTorch f64 - certified|, {name}: " + ", ".join(f"{k} {v:.3g}" for k, v in diffs))
    if worst > TOLERANCE:
        print(f"bench sublayers: FAIL: PyTorch float64 and the certified values differ by {worst:.3g}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

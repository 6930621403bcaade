#!/usr/bin/python3
"""`make bench` (sublayers): certified `linear` forward + backward at GPT-2's MLP shape (64 tokens,
768 -> 3072) beside PyTorch float64 on the same float32 inputs, in one run.  Timing lives here,
never in tests.  Prints SKIPPED without torch/numpy."""
import os
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    import torch
except ImportError as e:  # pragma: no cover
    print(f"SKIPPED: bench_sublayers needs Debian's python3-torch and numpy ({e})")
    sys.exit(0)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESNORM = os.environ.get("RESNORM", os.path.join(ROOT, "build", "resnorm"))
ROWS, IN, OUT = 64, 768, 3072


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((ROWS, IN)).astype(np.float32)
    w = (rng.standard_normal((OUT, IN)) / np.sqrt(IN)).astype(np.float32)
    b = rng.standard_normal(OUT).astype(np.float32)
    dy = rng.standard_normal((ROWS, OUT)).astype(np.float32)
    with tempfile.TemporaryDirectory() as d:
        for n, a in (("x", x), ("w", w), ("b", b), ("dy", dy)):
            np.save(os.path.join(d, n + ".npy"), a)
        ins = ["--in", f"x={d}/x.npy", "--in", f"weight={d}/w.npy", "--in", f"bias={d}/b.npy"]
        t0 = time.perf_counter()
        subprocess.run([RESNORM, "eval", "linear", *ins, "--dtype", "f64", "--out", f"{d}/f"],
                       check=True)
        t1 = time.perf_counter()
        subprocess.run([RESNORM, "eval", "linear_backward", *ins, "--in", f"dy={d}/dy.npy",
                        "--dtype", "f64", "--out", f"{d}/b"], check=True)
        t2 = time.perf_counter()
        ref_y = np.load(f"{d}/f/y.npy")
    torch.set_num_threads(1)
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    wt = torch.tensor(w, dtype=torch.float64, requires_grad=True)
    bt = torch.tensor(b, dtype=torch.float64, requires_grad=True)
    t3 = time.perf_counter()
    y = torch.nn.functional.linear(xt, wt, bt)
    t4 = time.perf_counter()
    y.backward(torch.tensor(dy, dtype=torch.float64))
    t5 = time.perf_counter()
    diff = float(np.max(np.abs(y.detach().numpy() - ref_y)))
    print(f"linear ({ROWS}, {IN} -> {OUT}): certified forward {t1 - t0:.2f} s, backward {t2 - t1:.2f} s; "
          f"torch float64 (1 thread) forward {1e3 * (t4 - t3):.1f} ms, backward {1e3 * (t5 - t4):.1f} ms; "
          f"max |torch f64 - certified| = {diff:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

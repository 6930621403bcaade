#!/usr/bin/python3
"""`make bench` (sublayers): certified `linear` forward + backward at GPT-2's MLP shape (64 tokens,
768 -> 3072), and certified `ffn` forward + backward (gelu_tanh, dropout p = 0.1) at (64, 768, 3072),
each beside PyTorch float64 on the same float32 inputs, in one run.  Timing lives here,
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
    return bench_ffn()


def bench_ffn():
    """Certified ffn (Arb, Ziv over the whole op, rounded once to f64) at (64, 768, 3072)."""
    rng = np.random.default_rng(1)
    arrs = {"x": rng.standard_normal((ROWS, IN)), "linear1.weight": rng.standard_normal((OUT, IN)) / np.sqrt(IN),
            "linear1.bias": 0.5 * rng.standard_normal(OUT),
            "linear2.weight": rng.standard_normal((IN, OUT)) / np.sqrt(OUT),
            "linear2.bias": 0.5 * rng.standard_normal(IN),
            "dropout.mask": (rng.random((ROWS, OUT)) < 0.9) * 1.0, "dy": rng.standard_normal((ROWS, IN))}
    arrs = {k: v.astype(np.float32) for k, v in arrs.items()}
    with tempfile.TemporaryDirectory() as d:
        for n, a in arrs.items():
            np.save(os.path.join(d, n + ".npy"), a)
        ins = [a for n in arrs if n != "dy" for a in ("--in", f"{n}={d}/{n}.npy")]
        attrs = ["--attr", "activation=gelu_tanh", "--attr", "p=0.1", "--dtype", "f64"]
        t0 = time.perf_counter()
        subprocess.run([RESNORM, "eval", "ffn", *ins, *attrs, "--out", f"{d}/f"], check=True)
        t1 = time.perf_counter()
        subprocess.run([RESNORM, "eval", "ffn_backward", *ins, "--in", f"dy={d}/dy.npy", *attrs,
                        "--out", f"{d}/b"], check=True)
        t2 = time.perf_counter()
        ref_y = np.load(f"{d}/f/y.npy")
        ref_dw1 = np.load(f"{d}/b/d.linear1.weight.npy")
    t = {k: torch.tensor(v, dtype=torch.float64, requires_grad=k not in ("dropout.mask", "dy"))
         for k, v in arrs.items()}
    F = torch.nn.functional
    t3 = time.perf_counter()
    h = F.gelu(F.linear(t["x"], t["linear1.weight"], t["linear1.bias"]), approximate="tanh")
    y = F.linear(h * t["dropout.mask"].div(1 - float(np.float32(0.1))), t["linear2.weight"],
                 t["linear2.bias"])
    t4 = time.perf_counter()
    y.backward(t["dy"])
    t5 = time.perf_counter()
    dy_ = float(np.max(np.abs(y.detach().numpy() - ref_y)))
    dw_ = float(np.max(np.abs(t["linear1.weight"].grad.numpy() - ref_dw1)))
    print(f"ffn gelu_tanh p=0.1 ({ROWS}, {IN}, {OUT}): certified forward {t1 - t0:.2f} s, backward "
          f"{t2 - t1:.2f} s; torch float64 (1 thread) forward {1e3 * (t4 - t3):.1f} ms, backward "
          f"{1e3 * (t5 - t4):.1f} ms; max |torch f64 - certified| y {dy_:.3g}, d.linear1.weight {dw_:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

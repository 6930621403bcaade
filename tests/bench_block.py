#!/usr/bin/python3
"""make bench-block: certified block forward+backward golden generation at GPT-2-small width
(batch 1, seq 64, d 768, 12 heads, ff 3072) beside PyTorch float64 forward+backward of the same
layer, on the same input, in one run (issue 9's performance line; target: within 30x).

Both sides use the same number of threads: THREADS (default: every core) for PyTorch
(torch.set_num_threads) and for resnorm (OMP_NUM_THREADS: its ball matrix products,
ref/arb_matmul.c).  Wall and CPU times are printed: on a shared machine the wall-clock ratio moves
with the load (printed too), the CPU ratio much less."""
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

try:
    import torch
except ImportError:
    print("bench block: SKIPPED (no torch)")
    sys.exit(0)

RESNORM = os.environ.get("RESNORM", "build/resnorm")
THREADS = int(os.environ.get("THREADS", str(os.cpu_count() or 1)))
torch.set_num_threads(THREADS)
ENV = dict(os.environ, OMP_NUM_THREADS=str(THREADS))
B, S, d, H, ff = 1, int(os.environ.get("SEQ", "64")), 768, 12, 3072
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(d, H, ff, activation="gelu", batch_first=True,
                                         norm_first=True).double().eval()
x = torch.randn(B, S, d, dtype=torch.float64)
dy = torch.randn(B, S, d, dtype=torch.float64)
load0 = os.getloadavg()[0]


def torch_step():
    xx = x.clone().requires_grad_(True)
    layer.zero_grad()
    layer(xx).backward(dy)


# One untimed call first (as bench_sublayers.py): PyTorch's first forward+backward allocates its
# buffers, 0.70 s against 0.57-0.63 for the next six (6 December 2026, idle AMD host), and a mean
# that included it flattered the ratio by ~6 %.
torch_step()
t, c = time.time(), time.process_time()
reps = 5
for _ in range(reps):
    torch_step()
t_torch, c_torch = (time.time() - t) / reps, (time.process_time() - c) / reps


def run_timed(cmd):
    """(wall, CPU) seconds of one resnorm run (the CPU time of all its threads)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    subprocess.run(cmd, check=True, env=ENV)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.time() - t0, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


with tempfile.TemporaryDirectory() as tmp:
    ins = []
    for name, a in [("x", x), ("dy", dy)] + list(layer.named_parameters()):
        path = os.path.join(tmp, name + ".npy")
        np.save(path, a.detach().numpy())
        ins += ["--in", f"{name}={path}"]
    attrs = ["--attr", "norm=pre", "--attr", f"heads={H}", "--attr", "activation=gelu"]
    fwd = [a for i, a in enumerate(ins) if not (a.startswith("dy=") or
                                                  (a == "--in" and ins[i + 1].startswith("dy=")))]
    t_f, c_f = run_timed([RESNORM, "eval", "block", *fwd, *attrs, "--dtype", "f64", "--out",
                          os.path.join(tmp, "f")])
    t_b, c_b = run_timed([RESNORM, "eval", "block_backward", *ins, *attrs, "--dtype", "f64",
                          "--out", os.path.join(tmp, "b")])
load1 = os.getloadavg()[0]
print(f"block at GPT-2 width (batch {B}, seq {S}, d {d}, {H} heads, ff {ff}), "
      f"{THREADS} thread(s) on each side (PyTorch: {torch.get_num_threads()}, resnorm: "
      f"OMP_NUM_THREADS={THREADS}), load average {load0:.1f} .. {load1:.1f} on {os.cpu_count()} cores:")
print("                                           wall s      CPU s")
print(f"  PyTorch float64 forward+backward     {t_torch:9.3f}  {c_torch:9.3f}")
print(f"  certified block (forward)            {t_f:9.1f}  {c_f:9.1f}")
print(f"  certified block_backward             {t_b:9.1f}  {c_b:9.1f}   "
      "(its forward pass included, computed once)")
print(f"  certified forward+backward / PyTorch {(t_f + t_b) / t_torch:8.0f}x  {(c_f + c_b) / c_torch:8.0f}x"
      "   (target: 30x)")

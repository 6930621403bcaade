#!/usr/bin/python3
"""make bench-block: certified block forward+backward golden generation at GPT-2-small width
(batch 1, seq 64, d 768, 12 heads, ff 3072) beside PyTorch float64 forward+backward of the same
layer, on the same input, in one run (issue 9's performance line; target: within 30x)."""
import os
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
B, S, d, H, ff = 1, int(os.environ.get("SEQ", "64")), 768, 12, 3072
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(d, H, ff, activation="gelu", batch_first=True,
                                         norm_first=True).double().eval()
x = torch.randn(B, S, d, dtype=torch.float64)
dy = torch.randn(B, S, d, dtype=torch.float64)
t = time.time()
reps = 5
for _ in range(reps):
    xx = x.clone().requires_grad_(True)
    layer.zero_grad()
    layer(xx).backward(dy)
t_torch = (time.time() - t) / reps
with tempfile.TemporaryDirectory() as tmp:
    ins = []
    for name, a in [("x", x), ("dy", dy)] + list(layer.named_parameters()):
        path = os.path.join(tmp, name + ".npy")
        np.save(path, a.detach().numpy())
        ins += ["--in", f"{name}={path}"]
    attrs = ["--attr", "norm=pre", "--attr", f"heads={H}", "--attr", "activation=gelu"]
    fwd = [a for i, a in enumerate(ins) if not (a.startswith("dy=") or
                                                  (a == "--in" and ins[i + 1].startswith("dy=")))]
    t = time.time()
    subprocess.run([RESNORM, "eval", "block", *fwd, *attrs, "--dtype", "f64", "--out",
                    os.path.join(tmp, "f")], check=True)
    t_f = time.time() - t
    t = time.time()
    subprocess.run([RESNORM, "eval", "block_backward", *ins, *attrs, "--dtype", "f64", "--out",
                    os.path.join(tmp, "b")], check=True)
    t_b = time.time() - t
print(f"block at GPT-2 width (batch {B}, seq {S}, d {d}, {H} heads, ff {ff}):")
print(f"  PyTorch float64 forward+backward     {t_torch:8.3f} s")
print(f"  certified block (forward)            {t_f:8.1f} s")
print(f"  certified block_backward             {t_b:8.1f} s   (recomputes the forward)")
print(f"  certified forward+backward / PyTorch {(t_f + t_b) / t_torch:8.0f}x   (target: 30x)")

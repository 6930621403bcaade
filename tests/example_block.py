#!/usr/bin/python3
"""README example: check a PyTorch TransformerEncoderLayer, forward and backward, with resnorm.

Builds nn.TransformerEncoderLayer(batch_first=True, norm_first=True) in float32, exports its
state_dict, an input x and an upstream gradient dy to .npy under the names resnorm expects
(self_attn.in_proj_weight, ..., norm2.bias), runs `resnorm eval block_backward` (the certified
exact gradients, rounded once to f32) and `resnorm check block_backward` on PyTorch's autograd
gradients, and prints the verdict.  Usage:
    RESNORM=build/resnorm /usr/bin/python3 tests/example_block.py
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

resnorm = os.environ.get("RESNORM", "build/resnorm")
torch.manual_seed(0)
d, heads, ff, seq = 16, 4, 64, 8
layer = torch.nn.TransformerEncoderLayer(d, heads, ff, activation="gelu",
                                        batch_first=True, norm_first=True).eval()
x = torch.randn(1, seq, d, requires_grad=True)
dy = torch.randn(1, seq, d)
y = layer(x)                         # eval mode: no dropout
y.backward(dy)                       # autograd: x.grad and every parameter's .grad

with tempfile.TemporaryDirectory() as tmp:
    def npy(name, t):
        path = os.path.join(tmp, name + ".npy")
        np.save(path, t.detach().numpy())
        return path
    ins = ["--in", f"x={npy('x', x)}", "--in", f"dy={npy('dy', dy)}"]
    for name, p in layer.named_parameters():           # self_attn.in_proj_weight, ...
        ins += ["--in", f"{name}={npy(name, p)}"]
    attrs = ["--attr", "norm=pre", "--attr", f"heads={heads}", "--attr", "activation=gelu"]
    # the exact gradients, rounded once to f32 (DIR/dx.npy, DIR/d.<parameter>.npy)
    subprocess.run([resnorm, "eval", "block_backward", *ins, *attrs, "--out",
                    os.path.join(tmp, "exact")], check=True)
    exact_dx = np.load(os.path.join(tmp, "exact", "dx.npy"))
    print(f"max |PyTorch dx - exact dx| = {np.abs(x.grad.numpy() - exact_dx).max():.3g}")
    # PyTorch's gradients against the tolerance
    actual = ["--actual", f"dx={npy('got_dx', x.grad)}"]
    for name, p in layer.named_parameters():
        actual += ["--actual", f"d.{name}={npy('got_d.' + name, p.grad)}"]
    r = subprocess.run([resnorm, "check", "block_backward", *ins, *attrs, *actual,
                        "--dtype", "f32"], capture_output=True, text=True)
    for line in r.stdout.splitlines() or r.stderr.splitlines():
        if line.startswith(("PASS", "FAIL", "statistical:", "STATISTICAL")) or "graph" in line:
            print(line)
    print("verdict:", {0: "PASS", 1: "FAIL (outside the rigorous bound)",
                       4: "FAIL (statistical tier)"}.get(r.returncode, f"error {r.returncode}"))
    sys.exit(r.returncode)

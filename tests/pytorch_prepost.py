#!/usr/bin/python3
"""`resnorm experiment prepost` against PyTorch float64: the same stacks built from
torch.nn.TransformerEncoderLayer (eval mode, batch_first, relu, eps = float32(1e-5)), with the
parameters, x and dy the experiment draws (splitmix64 streams of cli/experiment_prepost.c,
replicated here), the same norms.  PyTorch float64 is ~1e-15 from the exact value; the
experiment's numbers are the certified ones: they must agree to 1e-10 relative.

Usage: pytorch_prepost.py RESNORM            the check (small stacks; exit 1 on a mismatch)
       pytorch_prepost.py --explore L SEQ N  PyTorch-only numbers for depth L, N seeds (to choose
                                             the experiment's defaults; not a check)"""
import json
import math
import subprocess
import sys

import numpy as np
import torch

MASK = (1 << 64) - 1


class SplitMix64:
    def __init__(self, state):
        self.s = state & MASK

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & MASK
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def uniform01(self):
        return (self.next() >> 11) * 2.0 ** -53

    def normal(self):  # ref/tanh_stack.c rn_normal: glibc's log and cos, as Python's math uses
        u1 = 1.0 - self.uniform01()
        u2 = self.uniform01()
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(6.283185307179586 * u2)


def f32(v):
    return float(np.float32(v))


def uniform(st, n, bound):
    return [f32((2.0 * st.uniform01() - 1.0) * bound) for _ in range(n)]


def init_shapes(d, ff):
    return [("self_attn.in_proj_weight", (3 * d, d), math.sqrt(6.0 / (4 * d))),
              ("self_attn.in_proj_bias", (3 * d,), 0.0),
              ("self_attn.out_proj.weight", (d, d), 1 / math.sqrt(d)),
              ("self_attn.out_proj.bias", (d,), 0.0),
              ("linear1.weight", (ff, d), 1 / math.sqrt(d)),
              ("linear1.bias", (ff,), 1 / math.sqrt(d)),
              ("linear2.weight", (d, ff), 1 / math.sqrt(ff)),
              ("linear2.bias", (d,), 1 / math.sqrt(ff))]


def layer_params(seed, l, d, ff):
    """PyTorch 1.13's default init, the experiment's draw order (file comment there)."""
    st = SplitMix64((seed << 32) | (l + 1))
    shapes = init_shapes(d, ff)
    out = {}
    for name, shape, bound in shapes:
        n = int(np.prod(shape))
        out[name] = torch.tensor(uniform(st, n, bound), dtype=torch.float64).reshape(shape)
    return out


def inputs(seed, seq, d):
    st = SplitMix64(seed << 32)
    x = [f32(st.normal()) for _ in range(seq * d)]
    dy = [f32(st.normal()) for _ in range(seq * d)]
    t = lambda v: torch.tensor(v, dtype=torch.float64).reshape(1, seq, d)
    return t(x), t(dy)


def build(depth, post, final_norm, seed, d, heads, ff, cloned=False):
    eps = f32(1e-5)
    layers = []
    for l in range(depth):
        m = torch.nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, batch_first=True,
                                             norm_first=not post, layer_norm_eps=eps,
                                             dtype=torch.float64)
        sd = m.state_dict()
        sd.update(layer_params(seed, 0 if cloned else l, d, ff))
        m.load_state_dict(sd)
        layers.append(m.eval())
    norm = torch.nn.LayerNorm(d, eps=eps, dtype=torch.float64) if final_norm else None
    return layers, norm


def run(depth, post, final_norm, seed, d, heads, ff, seq, cloned=False):
    """|dL/dx|, RMS(y), per layer (all, attention, FFN, LayerNorms) parameter-gradient norms."""
    layers, norm = build(depth, post, final_norm, seed, d, heads, ff, cloned)
    x, dy = inputs(seed, seq, d)
    x.requires_grad_(True)
    y = x
    for m in layers:
        y = m(y)
    if norm is not None:
        y = norm(y)
    (y * dy).sum().backward()
    groups = []
    for m in layers:
        g = {n: p.grad for n, p in m.named_parameters()}
        attn = [g[k] for k in g if k.startswith("self_attn.")]
        ffn = [g[k] for k in g if k.startswith("linear")]
        ln = [g[k] for k in g if k.startswith("norm")]
        nrm = lambda ts: math.sqrt(sum(float((t * t).sum()) for t in ts))
        a, f, n = nrm(attn), nrm(ffn), nrm(ln)
        groups.append((math.sqrt(a * a + f * f + n * n), a, f, n))
    return (float(x.grad.norm()), float(y.detach().pow(2).mean().sqrt()), groups)


def rel(a, b):
    return abs(a - b) / abs(b) if b else abs(a)


def check_init(d=64, heads=4, ff=256):
    """The bounds the experiment draws from are PyTorch's own: a layer torch initializes has every
    array within its bound and reaching 95% of it (zero where the bound is 0), LayerNorm 1 and 0."""
    torch.manual_seed(0)
    m = torch.nn.TransformerEncoderLayer(d, heads, ff, batch_first=True)
    params = dict(m.named_parameters())
    bad = []
    for name, shape, bound in init_shapes(d, ff):
        p = params.pop(name).detach().double()
        top = float(p.abs().max())
        if tuple(p.shape) != shape or top > bound or top < 0.95 * bound:
            bad.append("%s: shape %s, max |v| %g, bound %g" % (name, tuple(p.shape), top, bound))
    for name, p in params.items():  # norm1/norm2 weight and bias
        if not torch.equal(p.detach(), torch.ones_like(p) if name.endswith("weight") else torch.zeros_like(p)):
            bad.append(name)
    print("PyTorch's default init: %s" % ("matches the experiment's bounds" if not bad else bad))
    return len(bad)


def check(resnorm):
    if check_init():
        return 1
    worst, n, rows = 0.0, 0, 0
    for cloned in (False, True):
        w, k, r = check_config(resnorm, cloned)
        worst, n, rows = max(worst, w), n + k, rows + r
    print("prepost vs PyTorch float64: %d rows (independent and cloned layers), %d layer norms, "
          "worst relative difference %.3g" % (rows, n, worst))
    return 0 if worst < 1e-10 else 1


def check_config(resnorm, cloned):
    cfg = dict(d=16, heads=4, ff=32, seq=3, cloned=cloned)
    args = [resnorm, "experiment", "prepost", "--depths", "2,5", "--seeds", "2", "--d", "16",
            "--heads", "4", "--ff", "32", "--seq", "3", "--json"] + (["--cloned"] if cloned else [])
    doc = json.loads(subprocess.run(args, check=True, stdout=subprocess.PIPE).stdout)
    worst, n = 0.0, 0
    keys = ["layer_grad_norms", "layer_grad_norms_attn", "layer_grad_norms_ffn", "layer_grad_norms_ln"]
    for r in doc["rows"]:
        post, fin, depth = r["norm"] == "post", r["final_norm"], r["depth"]
        per_seed = [run(depth, post, fin, s, **cfg) for s in (1, 2)]
        gx = sorted(p[0] for p in per_seed)
        worst = max(worst, rel(r["grad_x"]["min"], gx[0]), rel(r["grad_x"]["max"], gx[1]))
        rms = [p[1] for p in per_seed]
        worst = max(worst, rel(r["output_rms"], 0.5 * (rms[0] + rms[1])))
        for gi, key in enumerate(keys):
            for l in range(depth):
                v = sorted(p[2][l][gi] for p in per_seed)
                worst = max(worst, rel(r[key][l]["min"], v[0]), rel(r[key][l]["max"], v[1]))
                n += 2
    return worst, n, len(doc["rows"])


def explore(depth, seq, seeds):
    for post, fin in ((False, False), (False, True), (True, False)):
        for s in range(1, seeds + 1):
            gx, rms, groups = run(depth, post, fin, s, 64, 4, 256, seq)
            print("%s%s seed %d: |dx| %.3g rms %.3g layers %s" % (
                "post" if post else "pre", "+final" if fin else "", s, gx, rms,
                " ".join("%.3g" % g[0] for g in groups)))


if __name__ == "__main__":
    torch.set_num_threads(1)
    if sys.argv[1] == "--explore":
        explore(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit(check(sys.argv[1]))

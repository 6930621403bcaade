#!/usr/bin/python3
"""PyTorch as a real client of `resnorm check` (run by `make check` when Debian's python3-torch is
importable; otherwise it says so and exits 0 with a SKIPPED line, never silently).

1. torch.nn.functional.layer_norm and torch.native_layer_norm (y, mean, rstd) in float32 on every
   f32-input golden LayerNorm case, and their backward (autograd: dx, dgamma, dbeta): every case
   must pass `resnorm check` (exit 0).
2. Known-bad variants, each written the way the bug is usually written, must each fail (exit 1) on
   at least one case: unbiased variance, eps outside the sqrt, one-pass E[x^2]-E[x]^2, missing
   beta, and an output rounded to bf16 while f32 is promised.
3. The residual add (x + f in float32, and its backward dx = df = dy) and skip + LayerNorm
   (s = x + skip + bias, then torch.native_layer_norm; sum = s) on every f32-input golden case must
   pass; an add done in bfloat16, and a skip_layernorm that forgets the bias, must fail.  The
   autograd backward of x + skip + bias then layer_norm (dx, dskip, dbias, dgamma, dbeta) must pass
   every skip_layernorm_backward case; the same backward of a norm of x instead of the sum must fail.
4. RMSNorm written the way Hugging Face's Llama writes it (variance = x.pow(2).mean(-1, keepdim=True);
   x * torch.rsqrt(variance + eps); weight * x; Gemma's (1 + weight) on offset-1 cases) in float32,
   and its autograd backward, on every f32-input golden rmsnorm case must pass; eps outside the sqrt,
   a missing offset, and a one-pass sum of squares in float16 (x.half().pow(2).sum(...)) must each
   fail some case.
5. skip + RMSNorm: s = x + skip (+ bias) in float32, then the HF rms_norm above (sum = s), on every
   f32-input golden skip_rmsnorm case must pass; normalizing x instead of s must fail.  Its autograd
   backward (dx, dskip, dbias, dgamma; dbias of a zero bias when the case has none) must pass every
   skip_rmsnorm_backward case; the same backward of a norm of x instead of s must fail.
6. At production widths (16 rows of n = 768, 2048, 4096, 8192; x = N(0,1) and 0.003 N(0,1), a
   variance next to eps), outputs in float32 and cast once to bfloat16: native_layer_norm and its
   autograd backward, the HF rms_norm and its autograd backward must pass both tiers of `resnorm
   check` (exit 0: no mismatch and no statistical flag, specs/statistical-tier.md); the unbiased
   variance and eps outside the sqrt must be caught (exit 1 or 4) at every width.
Prints a table and '<passed> passed, <failed> failed'."""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"SKIPPED: PyTorch client test needs Debian's python3-torch ({e})")
    sys.exit(0)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESNORM = os.environ.get("RESNORM", os.path.join(ROOT, "build", "resnorm"))


def load(path):
    return torch.from_numpy(np.load(os.path.join(ROOT, path)).astype(np.float32))


def norm_dims(x, axis):
    axis = axis % x.dim()
    return tuple(x.shape[axis:]), tuple(range(axis, x.dim()))


def torch_ln(x, g, b, eps, axis):
    shape, _ = norm_dims(x, axis)
    y, mean, rstd = torch.native_layer_norm(x, shape, g.reshape(shape), b.reshape(shape), eps)
    return {"y": y, "mean": mean, "rstd": rstd}


def variant(kind):
    """A buggy LayerNorm forward returning y only."""
    def f(x, g, b, eps, axis):
        shape, dims = norm_dims(x, axis)
        g, b = g.reshape(shape), b.reshape(shape)
        m = x.mean(dim=dims, keepdim=True)
        if kind == "unbiased_variance":
            y = (x - m) / torch.sqrt(x.var(dim=dims, unbiased=True, keepdim=True) + eps) * g + b
        elif kind == "eps_outside_sqrt":
            y = (x - m) / (x.var(dim=dims, unbiased=False, keepdim=True).sqrt() + eps) * g + b
        elif kind == "one_pass_variance":
            v = (x * x).mean(dim=dims, keepdim=True) - m * m
            y = (x - m) / torch.sqrt(v.clamp_min(0) + eps) * g + b
        elif kind == "missing_beta":
            y = torch.nn.functional.layer_norm(x, shape, g, None, eps)
        elif kind == "bf16_rounded_output":
            y = torch.nn.functional.layer_norm(x, shape, g, b, eps).bfloat16().float()
        return {"y": y}
    return f


def torch_ln_backward(x, g, dy, eps, axis):
    shape, _ = norm_dims(x, axis)
    x = x.clone().requires_grad_(True)
    g = g.reshape(shape).clone().requires_grad_(True)
    b = torch.zeros(shape, requires_grad=True)
    y = torch.nn.functional.layer_norm(x, shape, g, b, eps)
    y.backward(dy)
    return {"dx": x.grad, "dgamma": g.grad, "dbeta": b.grad}


def torch_residual(ins, bf16=False):
    x, f = ins["x"], ins["f"]
    if bf16:
        return {"y": (x.bfloat16() + f.bfloat16()).float()}
    return {"y": x + f}


def torch_residual_backward(ins):
    dy = ins["dy"].clone().requires_grad_(False)
    x = torch.zeros_like(dy, requires_grad=True)
    f = torch.zeros_like(dy, requires_grad=True)
    (x + f).backward(dy)
    return {"dx": x.grad, "df": f.grad}


def torch_skip_ln(case, ins, forget_bias=False):
    eps = float(np.float32(case["attrs"]["eps"]))
    shape, _ = norm_dims(ins["x"], int(case["attrs"]["axis"]))
    s = ins["x"] + ins["skip"]
    if "bias" in ins and not forget_bias:
        s = s + ins["bias"].reshape(shape)
    y, mean, rstd = torch.native_layer_norm(s, shape, ins["gamma"].reshape(shape),
                                            ins["beta"].reshape(shape), eps)
    return {"y": y, "mean": mean, "rstd": rstd, "sum": s}


def rms_weight(case, g, shape, forget_offset=False):
    """HF Llama multiplies by `weight`; HF Gemma by (1 + weight): the golden attr `offset`."""
    g = g.reshape(shape)
    return g if forget_offset or int(case["attrs"].get("offset", 0)) == 0 else 1.0 + g


def hf_rms_norm(case, ins, kind="hf"):
    """LlamaRMSNorm.forward (transformers), over the golden case's axis; float32 throughout.
    kind: 'hf' (correct), 'eps_outside_sqrt', 'missing_offset', 'f16_sum_of_squares'."""
    eps = float(np.float32(case["attrs"]["eps"]))
    shape, dims = norm_dims(ins["x"], int(case["attrs"]["axis"]))
    x = ins["x"]
    if kind == "f16_sum_of_squares":  # one pass, squares and sum in half precision
        n = int(np.prod(shape))
        variance = (x.half().pow(2).sum(dim=dims, keepdim=True) / n).float()
    else:
        variance = x.pow(2).mean(dim=dims, keepdim=True)
    if kind == "eps_outside_sqrt":
        rstd = 1.0 / (torch.sqrt(variance) + eps)
    else:
        rstd = torch.rsqrt(variance + eps)
    w = rms_weight(case, ins["gamma"], shape, forget_offset=(kind == "missing_offset"))
    return {"y": w * (x * rstd), "rstd": rstd}


def hf_rms_norm_backward(case, ins):
    shape, _ = norm_dims(ins["x"], int(case["attrs"]["axis"]))
    x = ins["x"].clone().requires_grad_(True)
    g = ins["gamma"].reshape(shape).clone().requires_grad_(True)
    eps = float(np.float32(case["attrs"]["eps"]))
    _, dims = norm_dims(x, int(case["attrs"]["axis"]))
    variance = x.pow(2).mean(dim=dims, keepdim=True)
    w = g if int(case["attrs"].get("offset", 0)) == 0 else 1.0 + g
    y = w * (x * torch.rsqrt(variance + eps))
    y.backward(ins["dy"])
    return {"dx": x.grad, "dgamma": g.grad}


def torch_skip_rms(case, ins, normalize_x=False):
    shape, _ = norm_dims(ins["x"], int(case["attrs"]["axis"]))
    s = ins["x"] + ins["skip"]
    if "bias" in ins:
        s = s + ins["bias"].reshape(shape)
    outs = hf_rms_norm(case, {"x": ins["x"] if normalize_x else s, "gamma": ins["gamma"]})
    outs["sum"] = s
    return outs


def torch_skip_ln_backward(case, ins, normalize_x=False):
    shape, _ = norm_dims(ins["x"], int(case["attrs"]["axis"]))
    x = ins["x"].clone().requires_grad_(True)
    k = ins["skip"].clone().requires_grad_(True)
    b = (ins["bias"].reshape(shape) if "bias" in ins else torch.zeros(shape)).clone()
    b.requires_grad_(True)
    g = ins["gamma"].reshape(shape).clone().requires_grad_(True)
    beta = torch.zeros(shape, requires_grad=True)
    s = x + k + b
    eps = float(np.float32(case["attrs"]["eps"]))
    y = torch.nn.functional.layer_norm(x if normalize_x else s, shape, g, beta, eps)
    y.backward(ins["dy"])
    grad = lambda t: t.grad if t.grad is not None else torch.zeros_like(t)  # unused: zero
    return {"dx": grad(x), "dskip": grad(k), "dbias": grad(b), "dgamma": grad(g),
            "dbeta": grad(beta)}


def torch_skip_rms_backward(case, ins, normalize_x=False):
    shape, dims = norm_dims(ins["x"], int(case["attrs"]["axis"]))
    x = ins["x"].clone().requires_grad_(True)
    k = ins["skip"].clone().requires_grad_(True)
    b = (ins["bias"].reshape(shape) if "bias" in ins else torch.zeros(shape)).clone()
    b.requires_grad_(True)
    g = ins["gamma"].reshape(shape).clone().requires_grad_(True)
    s = x + k + b
    v = x if normalize_x else s
    eps = float(np.float32(case["attrs"]["eps"]))
    w = g if int(case["attrs"].get("offset", 0)) == 0 else 1.0 + g
    y = w * (v * torch.rsqrt(v.pow(2).mean(dim=dims, keepdim=True) + eps))
    y.backward(ins["dy"])
    grad = lambda t: t.grad if t.grad is not None else torch.zeros_like(t)  # unused: zero
    return {"dx": grad(x), "dskip": grad(k), "dbias": grad(b), "dgamma": grad(g)}


def check(case, outputs, tmp, extra=()):
    args = [RESNORM, "check", case["op"], *extra]
    for name, path in case["inputs"].items():
        args += ["--in", f"{name}={os.path.join(ROOT, path)}"]
    for k, v in case["attrs"].items():
        args += ["--attr", f"{k}={v}"]
    for name, t in outputs.items():
        want_shape = np.load(os.path.join(ROOT, case["expected"]["f32"][name])).shape
        p = os.path.join(tmp, f"{name}.npy")
        np.save(p, t.detach().numpy().astype(np.float32).reshape(want_shape))
        args += ["--actual", f"{name}={p}"]
    r = subprocess.run(args + ["--dtype", "f32"], capture_output=True, text=True)
    if r.returncode not in (0, 1, 4):  # 4: no mismatch, but a statistical flag (specs/cli.md)
        raise SystemExit(f"resnorm check exited {r.returncode} on {case['id']}: {r.stderr}")
    return r.returncode


def bf16_bits(t):
    """A tensor cast once to bfloat16, as the raw bits resnorm reads ('|V2')."""
    return t.detach().to(torch.bfloat16).view(torch.int16).numpy().view("V2")


def check_arrays(op, ins, outs, dtype, tmp):
    """resnorm check of in-memory inputs and outputs (outputs cast once to dtype); the exit code."""
    args = [RESNORM, "check", op, "--dtype", dtype]
    for name, a in ins.items():
        p = os.path.join(tmp, f"in_{name}.npy")
        np.save(p, a)
        args += ["--in", f"{name}={p}"]
    for name, t in outs.items():
        p = os.path.join(tmp, f"out_{name}.npy")
        np.save(p, bf16_bits(t) if dtype == "bf16" else t.detach().numpy().astype(np.float32))
        args += ["--actual", f"{name}={p}"]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode not in (0, 1, 4):
        raise SystemExit(f"resnorm check exited {r.returncode} on {op}: {r.stderr}")
    return r.returncode


def at_widths(tmp):
    """Section 6: PyTorch at production widths (both tiers), and two bugs there."""
    rng = np.random.default_rng(2026)
    eps = float(np.float32(1e-5))
    rows, correct, caught = 16, [], {"unbiased_variance": [], "eps_outside_sqrt": []}
    for n in (768, 2048, 4096, 8192):
        for fam, scale in (("randn", 1.0), ("var_near_eps", 0.003)):
            x = (scale * rng.standard_normal((rows, n))).astype(np.float32)
            g = (1 + 0.1 * rng.standard_normal(n)).astype(np.float32)
            b = (0.1 * rng.standard_normal(n)).astype(np.float32)
            xc = x - x.mean(1, keepdims=True)
            dy = (rng.standard_normal((rows, n)) + 0.5 * xc / xc.std(1, keepdims=True))
            dy = dy.astype(np.float32)
            X, G, B, DY = (torch.from_numpy(a) for a in (x, g, b, dy))
            y, m, r = torch.native_layer_norm(X, [n], G, B, eps)
            ln_bwd = torch_ln_backward(X, G, DY, eps, -1)
            rms = hf_rms_norm({"attrs": {"eps": "1e-5", "axis": -1}}, {"x": X, "gamma": G})
            rms_bwd = hf_rms_norm_backward({"attrs": {"eps": "1e-5", "axis": -1}},
                                           {"x": X, "gamma": G, "dy": DY})
            for dtype in ("f32", "bf16"):
                for op, ins, outs in (
                        ("layernorm", dict(x=x, gamma=g, beta=b),
                         dict(y=y, mean=m.reshape(rows, 1), rstd=r.reshape(rows, 1))),
                        ("layernorm_backward", dict(x=x, gamma=g, dy=dy), ln_bwd),
                        ("rmsnorm", dict(x=x, gamma=g), rms),
                        ("rmsnorm_backward", dict(x=x, gamma=g, dy=dy), rms_bwd)):
                    if check_arrays(op, ins, outs, dtype, tmp) != 0:
                        correct.append(f"{op} n={n} {fam} {dtype}")
            for kind in caught:
                yb = variant(kind)(X, G, B, eps, -1)
                if check_arrays("layernorm", dict(x=x, gamma=g, beta=b), yb, "f32", tmp) != 0:
                    caught[kind].append(n)
    rows_out = [("torch at widths, both tiers", "pass all", 64, len(correct), not correct)]
    for name in correct:
        print(f"    flagged: {name}")
    for kind, ns in caught.items():  # caught at every width (by one family or the other)
        rows_out.append((kind + " at widths", "fail each n", 4, len(set(ns)), len(set(ns)) == 4))
    return rows_out


def main():
    with open(os.path.join(ROOT, "golden", "manifest.json")) as f:
        cases = [c for c in json.load(f)["cases"] if c["input_dtype"] == "f32"]
    fwd = [c for c in cases if c["op"] == "layernorm"]
    bwd = [c for c in cases if c["op"] == "layernorm_backward"]
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        def run(cs, fn, names, extra=()):
            bad = []
            for c in cs:
                ins = {k: load(p) for k, p in c["inputs"].items()}
                eps = float(np.float32(c["attrs"]["eps"]))
                axis = int(c["attrs"]["axis"])
                if "beta" in names:
                    outs = fn(ins["x"], ins["gamma"], ins["beta"], eps, axis)
                else:
                    outs = fn(ins["x"], ins["gamma"], ins["dy"], eps, axis)
                if check(c, outs, tmp, extra) != 0:
                    bad.append(c["id"])
            return bad

        rows = []
        bad = run(fwd, torch_ln, ("x", "gamma", "beta"))
        rows.append(("torch.native_layer_norm f32", "pass all", len(fwd), len(bad), not bad))
        bad = run(bwd, torch_ln_backward, ("x", "gamma", "dy"))
        rows.append(("torch layer_norm backward f32", "pass all", len(bwd), len(bad), not bad))
        for kind in ("unbiased_variance", "eps_outside_sqrt", "one_pass_variance", "missing_beta",
                     "bf16_rounded_output"):
            # The one pass is ONNX Runtime's form, admitted by the default profile at its own
            # error (specs/error-analysis.md §0, §3.2): it is a bug against "moments".
            extra = ("--profile", "moments") if kind == "one_pass_variance" else ()
            bad = run(fwd, variant(kind), ("x", "gamma", "beta"), extra)
            rows.append((kind + (" (moments)" if extra else ""), "fail some", len(fwd), len(bad),
                         bool(bad)))

        def run_ops(op, fn, keep=lambda c: True):
            cs = [c for c in cases if c["op"] == op and keep(c)]
            bad = []
            for c in cs:
                ins = {k: load(p) for k, p in c["inputs"].items()}
                if check(c, fn(c, ins), tmp) != 0:
                    bad.append(c["id"])
            return cs, bad

        cs, bad = run_ops("residual", lambda c, i: torch_residual(i))
        rows.append(("torch x + f f32", "pass all", len(cs), len(bad), not bad))
        cs, bad = run_ops("residual_backward", lambda c, i: torch_residual_backward(i))
        rows.append(("torch residual backward f32", "pass all", len(cs), len(bad), not bad))
        cs, bad = run_ops("residual", lambda c, i: torch_residual(i, bf16=True))
        rows.append(("residual_added_in_bf16", "fail some", len(cs), len(bad), bool(bad)))
        cs, bad = run_ops("skip_layernorm", torch_skip_ln)
        rows.append(("torch x+skip+bias, layer_norm f32", "pass all", len(cs), len(bad), not bad))
        cs, bad = run_ops("skip_layernorm", lambda c, i: torch_skip_ln(c, i, forget_bias=True))
        rows.append(("skip_layernorm_missing_bias", "fail some", len(cs), len(bad), bool(bad)))
        cs, bad = run_ops("skip_layernorm_backward", torch_skip_ln_backward)
        rows.append(("torch skip_layernorm autograd f32", "pass all", len(cs), len(bad), not bad))
        cs, bad = run_ops("skip_layernorm_backward",
                          lambda c, i: torch_skip_ln_backward(c, i, normalize_x=True))
        rows.append(("skip_layernorm_bwd_normalizes_x", "fail some", len(cs), len(bad), bool(bad)))
        cs, bad = run_ops("rmsnorm", hf_rms_norm)
        rows.append(("HF Llama rms_norm f32", "pass all", len(cs), len(bad), not bad))
        # Autograd differentiates rsqrt(variance + eps) as -0.5 (variance + eps)^(-3/2): on rows
        # of x ~ 1e-18 with eps 0 that power (~1e54) overflows float32 and dx is +-Inf while the
        # exact dx (~1e18) is ordinary.  resnorm rightly flags it; the other cases must pass.
        tiny = lambda c: "tiny_scale" in c["flags"]
        cs, bad = run_ops("rmsnorm_backward", hf_rms_norm_backward, lambda c: not tiny(c))
        rows.append(("HF rms_norm autograd backward f32", "pass all", len(cs), len(bad), not bad))
        cs, bad = run_ops("rmsnorm_backward", hf_rms_norm_backward, tiny)
        rows.append(("HF autograd bwd, tiny x, eps 0", "fail some", len(cs), len(bad), bool(bad)))
        for kind in ("eps_outside_sqrt", "missing_offset", "f16_sum_of_squares"):
            cs, bad = run_ops("rmsnorm", lambda c, i, k=kind: hf_rms_norm(c, i, k))
            rows.append(("rms_" + kind, "fail some", len(cs), len(bad), bool(bad)))
        cs, bad = run_ops("skip_rmsnorm", torch_skip_rms)
        rows.append(("torch x+skip+bias, HF rms_norm f32", "pass all", len(cs), len(bad), not bad))
        cs, bad = run_ops("skip_rmsnorm", lambda c, i: torch_skip_rms(c, i, normalize_x=True))
        rows.append(("skip_rmsnorm_normalizes_x", "fail some", len(cs), len(bad), bool(bad)))
        cs, bad = run_ops("skip_rmsnorm_backward", torch_skip_rms_backward)
        rows.append(("torch skip_rmsnorm autograd f32", "pass all", len(cs), len(bad), not bad))
        cs, bad = run_ops("skip_rmsnorm_backward",
                          lambda c, i: torch_skip_rms_backward(c, i, normalize_x=True))
        rows.append(("skip_rmsnorm_bwd_normalizes_x", "fail some", len(cs), len(bad), bool(bad)))
        rows += at_widths(tmp)
    print(f"{'implementation':34} {'expect':10} {'cases':>5} {'failing':>7}  verdict")
    for name, expect, n, nbad, ok in rows:
        print(f"{name:34} {expect:10} {n:5} {nbad:7}  {'ok' if ok else 'WRONG'}")
        passed += ok
        failed += not ok
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

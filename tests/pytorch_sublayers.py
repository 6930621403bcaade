#!/usr/bin/python3
"""PyTorch as a client of the sublayer golden cases (issue 8), checked by `resnorm golden run-check`
(run by `make pytorch-check`; a SKIPPED line if /usr/bin/python3 has no torch, never silently).

For every case of the sublayer ops it runs PyTorch's own implementation -- F.linear and its
autograd backward; F.softmax(x + mask, -1) and its autograd backward; dropout as ATen's _dropout_impl computes it (noise = mask / (1 - p), input *
noise) with its random draw replaced by the case's mask, and its autograd backward; the feed-forward
sublayer as F.linear -> F.relu / F.gelu(approximate='none'|'tanh') -> dropout with the case's
dropout.mask -> F.linear, and its autograd backward -- and writes DIR/<case id>/<output>.npy, then runs
`resnorm golden run-check DIR --dtype D --json`:

  f64:  float64 tensors on every case: must agree with the reference (the exact value rounded
        once, i.e. what `resnorm eval --dtype f64` writes) within the f64 a-priori bound, i.e. within
        f64 rounding of the dot products;
  f32:  float32 tensors on every case whose inputs are f32 values (input dtype f32, f16, bf16):
        every case must pass (0 false alarms).

Then each bug the issue lists for these ops, written as a small edit of the correct PyTorch code,
must fail at least one case at f32 (the bug zoo of the sublayers):
  W not transposed (x @ W on square W), bias dropped, d.weight / d.bias from the last row only
  (not summed over the batch), d.weight / d.bias averaged over the batch, dropout not scaled by
  1/(1 - p), dropout's mask not applied in the backward, softmax over the wrong axis, softmax
  without the max subtracted (the golden case whose logits overflow float32 without it), softmax's
  backward without its -Σ dy·y term; in ffn: gelu and gelu_tanh swapped, linear1's bias dropped,
  the dropout mask not scaled by 1/(1 - p), the mask not applied in the backward, the parameter
  gradients from the last row only (not summed over the batch).
The ffn zoo is also run at GPT-2's full width (2 tokens, d = 768, ff = 3072) with `resnorm check`
on generated inputs, where the table printed says which bugs the f32 bound catches there (gelu vs
gelu_tanh: only in f64; specs/error-analysis-ffn.md §9)."""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"SKIPPED: PyTorch sublayer client needs Debian's python3-torch and numpy ({e})")
    sys.exit(0)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESNORM = os.environ.get("RESNORM", os.path.join(ROOT, "build", "resnorm"))
OPS = ("linear", "linear_backward", "dropout", "dropout_backward", "softmax", "softmax_backward",
       "ffn", "ffn_backward")


def load(path, dt):
    a = np.load(os.path.join(ROOT, path))
    if a.dtype.kind == "V":  # bf16 raw bits
        t = torch.from_numpy(a.view("<i2").astype(np.int16)).view(torch.bfloat16)
    else:
        t = torch.from_numpy(a.astype(np.float64))
    return t.to(dt)


# ---------------------------------------------------------------- the implementations

def linear(c, i, bug=None):
    w = i["weight"]
    if bug == "weight_not_transposed":
        if w.shape[0] != w.shape[1]:
            return None  # the bug only type-checks on square W
        return {"y": i["x"] @ w + (i["bias"] if "bias" in i else 0)}
    b = None if bug == "bias_dropped" else i.get("bias")
    return {"y": F.linear(i["x"], w, b)}


def linear_backward(c, i, bug=None):
    x = i["x"].clone().requires_grad_(True)
    w = i["weight"].clone().requires_grad_(True)
    b = (i["bias"] if "bias" in i else torch.zeros(w.shape[0], dtype=x.dtype)).clone()
    b.requires_grad_(True)
    F.linear(x, w, b).backward(i["dy"])
    out = {"dx": x.grad, "d.weight": w.grad, "d.bias": b.grad}
    if bug in ("dweight_last_row", "dweight_batch_mean"):
        x2, dy2 = i["x"].reshape(-1, x.shape[-1]), i["dy"].reshape(-1, w.shape[0])
        if x2.shape[0] < 2:
            return None  # one row: not a bug there
        if bug == "dweight_last_row":
            out["d.weight"], out["d.bias"] = torch.outer(dy2[-1], x2[-1]), dy2[-1].clone()
        else:
            out["d.weight"], out["d.bias"] = dy2.T @ x2 / x2.shape[0], dy2.mean(0)
    return out


def p_of(case):
    """p as the suite defines it: the attribute's text rounded once to the case's input dtype (as
    eps for the norms; specs/error-analysis-dropout.md §1).  For f32 inputs the Python float of the
    text would pass too (the bound admits p held in binary64, §2); for f16/bf16 inputs it would not
    (p = 0.2 and its f16 value differ by 2.4e-4)."""
    tdt = {"f64": torch.float64, "f32": torch.float32, "f16": torch.float16,
           "bf16": torch.bfloat16}[case["input_dtype"]]
    return float(torch.tensor(float(np.float64(case["attrs"]["p"])), dtype=torch.float64)
                 .to(tdt).to(torch.float64)) if tdt != torch.float32 else float(
                     np.float32(case["attrs"]["p"]))


def dropout_noise(c, i):
    """ATen's _dropout_impl with its Bernoulli draw replaced by the case's mask:
    noise = mask; noise.div_(1 - p); input * noise."""
    return i["mask"].clone().div_(1 - p_of(c))


def dropout(c, i, bug=None):
    if bug == "dropout_not_scaled":
        return {"y": i["x"] * i["mask"]}
    return {"y": i["x"] * dropout_noise(c, i)}


def dropout_backward(c, i, bug=None):
    x = i["x"].clone().requires_grad_(True)
    (x * dropout_noise(c, i)).backward(i["dy"])
    if bug == "dropout_backward_mask_not_applied":
        return {"dx": i["dy"].clone()}
    return {"dx": x.grad}


def softmax(c, i, bug=None):
    z = i["x"] + i["mask"] if "mask" in i else i["x"]
    if bug == "softmax_wrong_axis":
        if z.dim() < 2:
            return None
        return {"y": F.softmax(z, dim=-2)}
    if bug == "softmax_max_not_subtracted":
        e = torch.exp(z)
        return {"y": e / e.sum(-1, keepdim=True)}
    return {"y": F.softmax(z, dim=-1)}


def softmax_backward(c, i, bug=None):
    x = i["x"].clone().requires_grad_(True)
    z = x + i["mask"] if "mask" in i else x
    y = F.softmax(z, dim=-1)
    if bug == "softmax_backward_no_sum_term":  # dx = y * dy (the -Σ dy·y term forgotten)
        return {"dx": y.detach() * i["dy"]}
    y.backward(i["dy"])
    return {"dx": x.grad}


def ffn_act(c, z, bug=None):
    act = c["attrs"]["activation"]
    if bug == "ffn_gelu_tanh_swapped" and act != "relu":
        act = "gelu_tanh" if act == "gelu" else "gelu"
    if act == "relu":
        return F.relu(z)
    return F.gelu(z, approximate="tanh" if act == "gelu_tanh" else "none")


def ffn_noise(c, i):
    """ATen's _dropout_impl noise with the case's dropout.mask: mask / (1 - p)."""
    return i["dropout.mask"].clone().div_(1 - p_of(c))


def ffn_graph(c, i, x, w1, b1, w2, b2, bug=None):
    """torch: linear2(dropout(act(linear1(x)))), the dropout as ATen's _dropout_impl with the
    case's mask (input * mask / (1 - p))."""
    a = ffn_act(c, F.linear(x, w1, None if bug == "ffn_bias_dropped" else b1), bug)
    if "dropout.mask" in i:
        if bug == "ffn_dropout_not_scaled":
            a = a * i["dropout.mask"]
        elif bug == "ffn_mask_not_applied_in_backward":  # forward masked, gradient not
            a = a + (a * ffn_noise(c, i) - a).detach()
        else:
            a = a * ffn_noise(c, i)
    return F.linear(a, w2, b2)


def ffn(c, i, bug=None):
    if bug == "ffn_gelu_tanh_swapped" and c["attrs"]["activation"] == "relu":
        return None
    if bug in ("ffn_dropout_not_scaled",) and "dropout.mask" not in i:
        return None
    return {"y": ffn_graph(c, i, i["x"], i["linear1.weight"], i.get("linear1.bias"),
                           i["linear2.weight"], i.get("linear2.bias"), bug)}


def ffn_backward(c, i, bug=None):
    if bug == "ffn_mask_not_applied_in_backward" and "dropout.mask" not in i:
        return None
    x = i["x"].clone().requires_grad_(True)
    p = {n: i[n].clone().requires_grad_(True) for n in ("linear1.weight", "linear2.weight")}
    for n, k in (("linear1.bias", 0), ("linear2.bias", 1)):  # absent: a zero bias (its gradient is still given)
        shape = i["linear1.weight"].shape[0] if k == 0 else i["linear2.weight"].shape[0]
        p[n] = (i[n] if n in i else torch.zeros(shape, dtype=x.dtype)).clone().requires_grad_(True)
    ffn_graph(c, i, x, p["linear1.weight"], p["linear1.bias"], p["linear2.weight"], p["linear2.bias"],
              bug).backward(i["dy"])
    out = {"dx": x.grad}
    out.update({"d." + n: p[n].grad for n in p})
    if bug == "ffn_dweight_not_summed":  # parameter gradients of the last row only
        d, ff = x.shape[-1], p["linear1.weight"].shape[0]
        if x.reshape(-1, d).shape[0] < 2:
            return None
        j = {k: v.reshape(-1, v.shape[-1])[-1:] for k, v in i.items() if k in ("x", "dy", "dropout.mask")}
        j.update({k: v for k, v in i.items() if k not in j})
        last = ffn_backward(c, j)
        for n in p:
            out["d." + n] = last["d." + n]
    return out


IMPL = {"linear": linear, "linear_backward": linear_backward, "dropout": dropout,
        "dropout_backward": dropout_backward, "softmax": softmax,
        "softmax_backward": softmax_backward, "ffn": ffn, "ffn_backward": ffn_backward}
BUGS = {  # bug -> the op it lives in
    "weight_not_transposed": "linear",
    "bias_dropped": "linear",
    "dweight_last_row": "linear_backward",
    "dweight_batch_mean": "linear_backward",
    "dropout_not_scaled": "dropout",
    "dropout_backward_mask_not_applied": "dropout_backward",
    "softmax_wrong_axis": "softmax",
    "softmax_max_not_subtracted": "softmax",
    "softmax_backward_no_sum_term": "softmax_backward",
    "ffn_gelu_tanh_swapped": "ffn",
    "ffn_bias_dropped": "ffn",
    "ffn_dropout_not_scaled": "ffn",
    "ffn_mask_not_applied_in_backward": "ffn_backward",
    "ffn_dweight_not_summed": "ffn_backward",
}


# ---------------------------------------------------------------- running and checking

def save(path, t, shape, dtype):
    t = t.detach().reshape(shape)
    np.save(path, t.to(torch.float64 if dtype == "f64" else torch.float32).numpy())


def write_suite(cases, out, dtype, bug=None):
    tdt = torch.float64 if dtype == "f64" else torch.float32
    n = 0
    for c in cases:
        if bug and BUGS[bug] != c["op"]:
            continue
        ins = {k: load(p, tdt) for k, p in c["inputs"].items()}
        outs = IMPL[c["op"]](c, ins, bug) if bug else IMPL[c["op"]](c, ins)
        if outs is None:
            continue
        d = os.path.join(out, c["id"])
        os.makedirs(d)
        for name, t in outs.items():
            shape = np.load(os.path.join(ROOT, c["expected"]["f32"][name])).shape
            save(os.path.join(d, name + ".npy"), t, shape, dtype)
        n += 1
    return n


def run_check(out, dtype):
    r = subprocess.run([RESNORM, "golden", "run-check", out, "--dtype", dtype, "--json",
                        "--root", ROOT], capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise SystemExit(f"run-check exited {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


def run(cases, dtype, bug=None):
    with tempfile.TemporaryDirectory() as out:
        n = write_suite(cases, out, dtype, bug)
        rep = run_check(out, dtype) if n else {"cases": [], "passed": 0, "failed": 0, "skipped": 0}
    failed = sorted(e["id"] for e in rep["cases"] if e["verdict"] == "FAIL")
    worst = max((e["max_ratio"] for e in rep["cases"] if e["verdict"] == "pass"
                 and not isinstance(e["max_ratio"], str)), default=0)
    return n, rep, failed, worst


def gpt2_square_weight_check():
    """W not transposed at GPT-2 width (d = 768, square W): too large for golden/, so checked here
    with `resnorm check linear` on generated inputs: F.linear in float32 must pass, x @ W fail."""
    rng = np.random.default_rng(768)
    x = rng.standard_normal((2, 768)).astype(np.float32)
    w = (rng.standard_normal((768, 768)) / np.sqrt(768)).astype(np.float32)
    b = rng.standard_normal(768).astype(np.float32)
    rcs = {}
    with tempfile.TemporaryDirectory() as d:
        for n, a in (("x", x), ("w", w), ("b", b)):
            np.save(os.path.join(d, n + ".npy"), a)
        xt, wt, bt = (torch.from_numpy(a) for a in (x, w, b))
        for name, y in (("correct", F.linear(xt, wt, bt)), ("weight_not_transposed", xt @ wt + bt)):
            np.save(os.path.join(d, "y.npy"), y.numpy())
            r = subprocess.run([RESNORM, "check", "linear", "--in", f"x={d}/x.npy", "--in",
                                f"weight={d}/w.npy", "--in", f"bias={d}/b.npy", "--actual",
                                f"y={d}/y.npy", "--dtype", "f32"], capture_output=True, text=True)
            rcs[name] = r.returncode
    ok = rcs == {"correct": 0, "weight_not_transposed": 1}
    print(f"GPT-2 width square W (2 x 768 by 768 x 768), resnorm check --dtype f32: F.linear "
          f"{'pass' if rcs['correct'] == 0 else 'FAIL'}, x @ W "
          f"{'killed' if rcs['weight_not_transposed'] == 1 else 'NOT KILLED'}")
    return ok


def gpt2_ffn_check():
    """The ffn zoo at GPT-2's full width (2 tokens, d = 768, ff = 3072; golden/ holds slices of it
    to stay small), with `resnorm check ffn` / `ffn_backward` on generated inputs: PyTorch correct must
    pass (f32 and f64), each bug is reported killed or not (f32, and f64 where f32 cannot see it).
    Returns (ok, {bug: verdict})."""
    rng = np.random.default_rng(3072)
    d, ff = 768, 3072
    arrs = {"x": rng.standard_normal((2, d)), "linear1.weight": rng.standard_normal((ff, d)) / np.sqrt(d),
            "linear1.bias": 0.5 * rng.standard_normal(ff),
            "linear2.weight": rng.standard_normal((d, ff)) / np.sqrt(ff),
            "linear2.bias": 0.5 * rng.standard_normal(d), "dropout.mask": (rng.random((2, ff)) < 0.9) * 1.0,
            "dy": rng.standard_normal((2, d))}
    arrs = {k: v.astype(np.float32) for k, v in arrs.items()}
    verdicts, ok = {}, True
    with tempfile.TemporaryDirectory() as tmp:
        for n, a in arrs.items():
            np.save(os.path.join(tmp, n + ".npy"), a)
        # f32: PyTorch correct and every ffn bug (gelu_tanh, GPT-2's activation); the gelu swap also
        # from gelu.  f64: correct, and the swap (which the f32 bound cannot see at this width).
        swap = "ffn_gelu_tanh_swapped"
        plan = [("gelu_tanh", "f32", [(None, "ffn"), (None, "ffn_backward")] +
                 [(b, o) for b, o in BUGS.items() if b.startswith("ffn_")]),
                ("gelu", "f32", [(swap, "ffn")]),
                ("gelu_tanh", "f64", [(None, "ffn"), (None, "ffn_backward"), (swap, "ffn")]),
                ("gelu", "f64", [(swap, "ffn")])]
        for act, dtype, runs in plan:
            c = {"attrs": {"activation": act, "p": "0.1"}, "input_dtype": "f32"}
            tdt = torch.float32 if dtype == "f32" else torch.float64
            i = {k: torch.from_numpy(v).to(tdt) for k, v in arrs.items()}
            for bug, op in runs:
                outs = IMPL[op](c, i, bug)
                args = ["check", op] + [a for n in arrs if n != "dy" or op == "ffn_backward"
                                        for a in ("--in", f"{n}={tmp}/{n}.npy")]
                args += ["--attr", f"activation={act}", "--attr", "p=0.1", "--dtype", dtype]
                for n, t in outs.items():
                    np.save(os.path.join(tmp, "out_" + n + ".npy"), t.detach().numpy())
                    args += ["--actual", f"{n}={tmp}/out_{n}.npy"]
                rc = subprocess.run([RESNORM, *args], capture_output=True, text=True).returncode
                verdicts[f"{bug or 'correct'} ({op}, {act}, {dtype})"] = rc
                if bug is None and rc != 0:
                    ok = False
    print("GPT-2 full width (2 tokens, d = 768, ff = 3072, dropout p = 0.1), resnorm check:")
    for k, rc in verdicts.items():
        what = ("pass" if rc == 0 else f"FAIL (exit {rc})") if k.startswith("correct") else (
            "killed" if rc == 1 else "not killed" if rc == 0 else f"exit {rc}")
        print(f"    {k:64} {what}")
    return ok


def main():
    torch.set_num_threads(1)
    r = subprocess.run([RESNORM, "golden", "list", "--json", "--root", ROOT], capture_output=True,
                       text=True, check=True)
    cases = [c for c in json.loads(r.stdout) if c["op"] in OPS]
    if not cases:
        print("pytorch sublayers: FAILED (no sublayer cases in the golden suite)")
        return 1
    ok = True
    f32_cases = [c for c in cases if c["input_dtype"] in ("f32", "f16", "bf16")]
    for dtype, name, sel in (("f64", "PyTorch float64", cases), ("f32", "PyTorch float32", f32_cases)):
        n, rep, failed, worst = run(sel, dtype)
        print(f"{name:18} run-check --dtype {dtype}: {rep['passed']} passed, {rep['failed']} failed; "
              f"largest err/bound {worst:.3g}")
        for i in failed:
            print(f"    FAIL {i}")
        if failed or rep["passed"] != len(sel):
            ok = False
    print("bug zoo (PyTorch with one bug), run-check --dtype f32: each must fail some case")
    for bug, op in BUGS.items():
        n, rep, failed, _ = run(f32_cases, "f32", bug)
        print(f"    {bug:34} ({op}): {'killed' if failed else 'NOT KILLED'} {len(failed)}/{n} "
              f"cases fail{(': ' + ', '.join(failed[:4])) if failed else ''}")
        if not failed:
            ok = False
    ok = gpt2_square_weight_check() and ok
    ok = gpt2_ffn_check() and ok
    print("pytorch sublayers: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

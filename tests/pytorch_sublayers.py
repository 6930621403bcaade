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
For attention and ffn both tiers count: R (a rigorous mismatch, exit 1) and S (a statistical flag,
exit 4: specs/error-analysis-attention.md §11, specs/error-analysis-ffn.md §10); PyTorch float32 /
float64 and the control must raise neither. Then the attention and ffn zoo at GPT-2 width (d = 768,
12 heads, ff = 3072) with `resnorm check` on generated generic inputs, printed as a table of which
tier kills each mutant (gelu vs gelu_tanh in f32: only the statistical tier's test `act`): attention
seq 16 (PyTorch and the control) and ffn on 2 tokens by default; ATTN_SEQ64=1 runs attention at
seq 64 with its whole zoo and float64, and the ffn zoo on 64 tokens (minutes of CPU)."""
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
       "attention", "attention_backward", "ffn", "ffn_backward")


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


# ---------------------------------------------------------------- attention (nn.MultiheadAttention)

def attn_p(c):
    return p_of(c) if "p" in c["attrs"] else 0.0


def with_given_dropout(c, i, fn):
    """Run fn() with torch.nn.functional.dropout -- the one F.multi_head_attention_forward calls on
    the attention weights -- replaced by ATen's _dropout_impl with its draw replaced by the case's
    attn_dropout.mask: noise = mask / (1 - p), input * noise (the functional form of dropout)."""
    orig = F.dropout

    def given(a, p=0.5, training=True, inplace=False):
        noise = i["attn_dropout.mask"].reshape(a.shape).clone().div_(1 - attn_p(c))
        return a * noise

    F.dropout = given
    try:
        return fn()
    finally:
        F.dropout = orig


def mha_module(c, i):
    """nn.MultiheadAttention(batch_first=True) with the case's weights, self-attention, need_weights
    =False; returns (module, forward callable of x)."""
    x = i["x"]
    d, heads = x.shape[-1], c["attrs"]["heads"]
    m = torch.nn.MultiheadAttention(d, heads, dropout=attn_p(c) if "attn_dropout.mask" in i else 0.0,
                                    bias=True, batch_first=True, dtype=x.dtype)
    with torch.no_grad():
        m.in_proj_weight.copy_(i["in_proj_weight"])
        m.in_proj_bias.copy_(i["in_proj_bias"] if "in_proj_bias" in i else 0)
        m.out_proj.weight.copy_(i["out_proj.weight"])
        m.out_proj.bias.copy_(i["out_proj.bias"] if "out_proj.bias" in i else 0)
    m.train("attn_dropout.mask" in i)
    T = x.shape[-2]
    causal = torch.triu(torch.ones(T, T, dtype=torch.bool), 1) if c["attrs"].get("causal") else None
    kpm = i["key_padding_mask"].to(torch.bool) if "key_padding_mask" in i else None

    def fwd(xx):
        def call():
            return m(xx, xx, xx, key_padding_mask=kpm, need_weights=False, attn_mask=causal)[0]
        return with_given_dropout(c, i, call) if "attn_dropout.mask" in i else call()
    return m, fwd


def attention(c, i, bug=None):
    if bug:
        return attention_bug(c, i, bug)
    m, fwd = mha_module(c, i)
    return {"y": fwd(i["x"])}


def attention_backward(c, i, bug=None):
    m, fwd = mha_module(c, i)
    x = i["x"].clone().requires_grad_(True)
    fwd(x).backward(i["dy"])
    return {"dx": x.grad, "d.in_proj_weight": m.in_proj_weight.grad,
            "d.in_proj_bias": m.in_proj_bias.grad, "d.out_proj.weight": m.out_proj.weight.grad,
            "d.out_proj.bias": m.out_proj.bias.grad}


def attention_bug(c, i, bug):
    """The attention written out (F.linear, views, matmul, softmax, the given dropout), with one bug;
    None where the case cannot show it (no causal mask, no key_padding_mask, no dropout mask)."""
    x = i["x"]
    batched = x.dim() == 3
    if not batched:
        x = x.unsqueeze(0)
    B, T, d = x.shape
    H = c["attrs"]["heads"]
    dh = d // H
    causal = c["attrs"].get("causal")
    if (bug.startswith("causal") and not causal) or (bug == "key_padding_mask_ignored" and
                                                     "key_padding_mask" not in i) or \
       (bug == "attn_dropout_not_scaled" and "attn_dropout.mask" not in i) or \
       (bug == "heads_interleaved" and H == 1):
        return None
    q, k, v = F.linear(x, i["in_proj_weight"], i.get("in_proj_bias")).chunk(3, -1)

    def split(t):  # [B, T, d] -> [B, H, T, dh]
        if bug == "heads_interleaved":  # head h = columns h, h + H, h + 2H, ...
            return t.view(B, T, dh, H).permute(0, 3, 1, 2)
        return t.view(B, T, H, dh).transpose(1, 2)

    q, k, v = split(q), split(k), split(v)
    scale = {"scale_1_over_dh": 1 / dh, "scale_1_over_sqrt_d": 1 / d ** 0.5}.get(bug, 1 / dh ** 0.5)
    s = (q * scale) @ k.transpose(-2, -1)
    if causal:
        diag = {"causal_off_by_one_diag_masked": 0, "causal_off_by_one_next_key": 2}.get(bug, 1)
        s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), diag), float("-inf"))
    if "key_padding_mask" in i and bug != "key_padding_mask_ignored":
        kpm = i["key_padding_mask"].to(torch.bool).reshape(B, 1, 1, T)
        s = s.masked_fill(kpm, float("-inf"))
    a = F.softmax(s, dim=-2 if bug == "attn_softmax_wrong_axis" else -1)
    if "attn_dropout.mask" in i:
        mk = i["attn_dropout.mask"].reshape(a.shape)
        a = a * mk if bug == "attn_dropout_not_scaled" else a * mk.clone().div_(1 - attn_p(c))
    o = a @ v  # [B, H, T, dh]
    if bug == "heads_interleaved":
        o = o.permute(0, 2, 3, 1).reshape(B, T, d)
    else:
        o = o.transpose(1, 2).reshape(B, T, d)
    y = F.linear(o, i["out_proj.weight"], i.get("out_proj.bias"))
    return {"y": y if batched else y.squeeze(0)}


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
        "softmax_backward": softmax_backward, "attention": attention,
        "attention_backward": attention_backward, "ffn": ffn, "ffn_backward": ffn_backward}
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
    "attention_written_out_correct": "attention",  # the control: the same code without a bug
    "scale_1_over_dh": "attention",
    "scale_1_over_sqrt_d": "attention",
    "heads_interleaved": "attention",
    "causal_off_by_one_diag_masked": "attention",
    "causal_off_by_one_next_key": "attention",
    "attn_softmax_wrong_axis": "attention",
    "key_padding_mask_ignored": "attention",
    "attn_dropout_not_scaled": "attention",
    "ffn_gelu_tanh_swapped": "ffn",
    "ffn_bias_dropped": "ffn",
    "ffn_dropout_not_scaled": "ffn",
    "ffn_mask_not_applied_in_backward": "ffn_backward",
    "ffn_dweight_not_summed": "ffn_backward",
}
CONTROLS = ("attention_written_out_correct",)  # must PASS every case (no false alarm)


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
            if name not in c["expected"]["f32"]:
                continue  # an output the case does not keep (no_weight_grads)
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
    flagged = sorted(e["id"] for e in rep["cases"] if e.get("statistical") == "FLAG")
    worst = max((e["max_ratio"] for e in rep["cases"] if e["verdict"] == "pass"
                 and not isinstance(e["max_ratio"], str)), default=0)
    return n, rep, failed, worst, flagged


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


def tier_of(rep):
    """Which tier of `resnorm check --json` rejects: R (rigorous, exit 1), S (statistical, exit 4 or
    flagged beside a rigorous failure), both, or '-' (none)."""
    r, st = not rep["pass"], rep["statistical"]["flag"]
    return "both" if r and st else "R" if r else "S" if st else "-"


def check_tier(op, ins, attrs, outs, dtype, tmp):
    """`resnorm check OP` on the saved inputs `ins` (name -> path) with the actual outputs `outs`
    (name -> tensor); returns (tier, largest graph ratio, act-test z or None)."""
    args = [RESNORM, "check", op, "--dtype", dtype, "--json"]
    for n, path in ins.items():
        args += ["--in", f"{n}={path}"]
    for k, v in attrs.items():
        args += ["--attr", f"{k}={v}"]
    for n, t in outs.items():
        path = os.path.join(tmp, "out_" + n + ".npy")
        np.save(path, t.detach().numpy())
        args += ["--actual", f"{n}={path}"]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode not in (0, 1, 4):
        raise SystemExit(f"resnorm check {op} exited {r.returncode}: {r.stderr}")
    rep = json.loads(r.stdout)
    tests = [t for ts in rep["statistical"]["outputs"].values() for t in ts]
    graph = max((t["z_row"] for t in tests if t["direction"] == "graph"
                 and not isinstance(t["z_row"], str)), default=0)
    act = [t["z_pooled"] for t in tests if t["direction"] == "act"]
    return tier_of(rep), graph, (act[0] if act else None)


def gpt2_tier_table(seq, rows, attention_bugs):
    """The attention and ffn zoo at GPT-2 width (d = 768, 12 heads, ff = 3072) on generated generic
    inputs, with `resnorm check` (too large for golden/): which tier kills each mutant (R rigorous,
    S statistical, both, or missed), and PyTorch float32 / float64 and the written-out control must
    pass both tiers (0 false alarms).  attention_bugs: also the attention mutants (the golden case
    attention/gpt2_causal_masks_f32 kills them all already at seq 16, rigorous tier; this costs ~3 s
    of CPU each).  Attention: batch 1, `seq` tokens, causal, right padding of
    seq/8 keys, attention dropout p = 0.1, in_proj std 0.02 (GPT-2's initialization).  FFN: `rows`
    tokens, dropout p = 0.1, W1 ~ N(0, 1/d), W2 ~ N(0, 1/ff), biases 0.5·randn.
    Returns (ok, table rows)."""
    T, d, H, ff = seq, 768, 12, 3072
    rng = np.random.default_rng(64)
    att = {"x": rng.standard_normal((1, T, d)), "in_proj_weight": rng.standard_normal((3 * d, d)) * 0.02,
           "in_proj_bias": rng.standard_normal(3 * d) * 0.1,
           "out_proj.weight": rng.standard_normal((d, d)) / np.sqrt(d),
           "out_proj.bias": rng.standard_normal(d) * 0.1,
           "key_padding_mask": (np.arange(T) >= T - T // 8).astype(np.float64).reshape(1, T),
           "attn_dropout.mask": (rng.random((1, H, T, T)) < 0.9).astype(np.float64),
           "dy": rng.standard_normal((1, T, d))}
    rng = np.random.default_rng(3072)
    ffa = {"x": rng.standard_normal((rows, d)), "linear1.weight": rng.standard_normal((ff, d)) / np.sqrt(d),
           "linear1.bias": 0.5 * rng.standard_normal(ff),
           "linear2.weight": rng.standard_normal((d, ff)) / np.sqrt(ff),
           "linear2.bias": 0.5 * rng.standard_normal(d), "dropout.mask": (rng.random((rows, ff)) < 0.9) * 1.0,
           "dy": rng.standard_normal((rows, d))}
    table, ok = [], True
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for pre, arrs in (("a_", att), ("f_", ffa)):
            for n, v in arrs.items():
                arrs[n] = v.astype(np.float32)
                paths[pre + n] = os.path.join(tmp, pre + n + ".npy")
                np.save(paths[pre + n], arrs[n])

        def ins_of(pre, arrs, op):
            return {n: paths[pre + n] for n in arrs if n != "dy" or op.endswith("_backward")}

        def tens(arrs, dtype):
            tdt = torch.float32 if dtype == "f32" else torch.float64
            return {k: torch.from_numpy(v).to(tdt) for k, v in arrs.items()}

        ac = {"attrs": {"heads": H, "causal": 1, "p": "0.1"}, "input_dtype": "f32"}
        aattr = {"heads": H, "causal": 1, "p": "0.1"}
        plan = [("attention", None, "f32"), ("attention", "attention_written_out_correct", "f32"),
                ("attention_backward", None, "f32")]
        if attention_bugs:  # (float64 on the golden cases is in the suite run above)
            plan += [("attention", None, "f64"), ("attention_backward", None, "f64")]
            plan += [("attention", b, "f32") for b, o in BUGS.items() if o == "attention" and b not in CONTROLS]
        for op, bug, dtype in plan:
            i = tens({k: v for k, v in att.items() if k != "dy" or op.endswith("_backward")}, dtype)
            outs = IMPL[op](ac, i) if bug is None else attention_bug(ac, i, bug)
            tier, g, _ = check_tier(op, ins_of("a_", att, op), aattr, outs, dtype, tmp)
            table.append((op, bug or "PyTorch (correct)", dtype, tier, g, None))
        # ffn: GPT-2's activation gelu_tanh for every bug; the GELU swap from both sides
        swap = "ffn_gelu_tanh_swapped"
        fplan = [("gelu_tanh", "ffn", None, "f32"), ("gelu", "ffn", None, "f32"),
                 ("gelu_tanh", "ffn_backward", None, "f32"), ("gelu_tanh", "ffn", None, "f64"),
                 ("gelu_tanh", "ffn_backward", None, "f64")]
        fplan += [("gelu_tanh", o, b, "f32") for b, o in BUGS.items() if b.startswith("ffn_")]
        fplan += [("gelu", "ffn", swap, "f32"), ("gelu_tanh", "ffn", swap, "f64"), ("gelu", "ffn", swap, "f64")]
        for act, op, bug, dtype in fplan:
            c = {"attrs": {"activation": act, "p": "0.1"}, "input_dtype": "f32"}
            i = tens({k: v for k, v in ffa.items() if k != "dy" or op == "ffn_backward"}, dtype)
            outs = IMPL[op](c, i, bug)
            tier, g, z = check_tier(op, ins_of("f_", ffa, op), {"activation": act, "p": "0.1"}, outs,
                                    dtype, tmp)
            table.append((f"{op} ({act})", bug or "PyTorch (correct)", dtype, tier, g, z))
    for op, bug, dtype, tier, g, z in table:
        correct = bug.startswith("PyTorch") or bug in CONTROLS
        ok = ok and (tier == "-") == correct
    return ok, table


def print_tier_table(seq, rows, table):
    print(f"GPT-2 width zoo (d = 768, 12 heads, ff = 3072; attention seq {seq}, ffn {rows} tokens; "
          f"resnorm check; R rigorous, S statistical):")
    print(f"    {'op':28} {'variant':36} {'dtype':5} {'killed by':9} {'graph ratio':>11} {'act z':>7}")
    for op, bug, dtype, tier, g, z in table:
        correct = bug.startswith("PyTorch") or bug in CONTROLS
        what = ("pass" if tier == "-" else f"FALSE ALARM ({tier})") if correct else (
            "missed" if tier == "-" else tier)
        zs = "" if z is None else f"{z:.3g}"
        print(f"    {op:28} {bug:36} {dtype:5} {what:9} {g:11.3g} {zs:>7}")


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
        n, rep, failed, worst, flagged = run(sel, dtype)
        print(f"{name:18} run-check --dtype {dtype}: {rep['passed']} passed, {rep['failed']} failed; "
              f"largest err/bound {worst:.3g}; statistical flags {len(flagged)}")
        for i in failed:
            print(f"    FAIL {i}")
        for i in flagged:
            print(f"    STATISTICAL FLAG {i}")
        if failed or flagged or rep["passed"] != len(sel):
            ok = False
    print("bug zoo (PyTorch with one bug), run-check --dtype f32: each must fail some case "
          "(R: rigorous mismatch, S: statistical flag)")
    for bug, op in BUGS.items():
        n, rep, failed, _, flagged = run(f32_cases, "f32", bug)
        if bug in CONTROLS:  # the bug-free written-out code: every case must pass both tiers
            print(f"    {bug:34} ({op}): control, {rep['passed']}/{n} cases pass, "
                  f"{len(flagged)} statistical flags"
                  f"{(' FAILS ' + ', '.join(failed + flagged)) if failed or flagged else ''}")
            ok = ok and not failed and not flagged and rep["passed"] == n
            continue
        if op in ("attention", "attention_backward", "ffn", "ffn_backward"):  # both tiers
            killed = sorted(set(failed) | set(flagged))
            gpt2 = [f for f in killed if "gpt2" in f]
            print(f"    {bug:34} ({op}): {'killed' if killed else 'NOT KILLED'} {len(killed)}/{n} "
                  f"cases (R {len(failed)}, S {len(flagged)}; S only: "
                  f"{', '.join(sorted(set(flagged) - set(failed))[:3]) or '-'})"
                  f"{(' (GPT-2 width: killed)' if gpt2 else ' (GPT-2 width: NOT killed)') if op.startswith('attention') else ''}")
            if not killed or (op.startswith("attention") and not gpt2):
                ok = False
            continue
        gpt2 = [f for f in failed if "gpt2" in f]
        print(f"    {bug:34} ({op}): {'killed' if failed else 'NOT KILLED'} {len(failed)}/{n} "
              f"cases fail{(': ' + ', '.join(failed[:4])) if failed else ''}"
              f"{' (GPT-2 width: killed)' if gpt2 else ''}")
        if not failed:
            ok = False
    ok = gpt2_square_weight_check() and ok
    # GPT-2 width: attention seq 16 (PyTorch and the control only) and the ffn zoo on 2 tokens by
    # default (the make pytorch-check budget); ATTN_SEQ64=1: attention seq 64 with its whole zoo and
    # the ffn zoo on 64 tokens (minutes of CPU; quoted in the README)
    full = os.environ.get("ATTN_SEQ64") == "1"
    seq, rows = (64, 64) if full else (16, 2)
    tok, table = gpt2_tier_table(seq, rows, full)
    print_tier_table(seq, rows, table)
    ok = tok and ok
    print("pytorch sublayers: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""PyTorch as a client of resnorm's block and stack ops (issue 9).

For each configuration (norm_first True/False, relu/gelu/gelu_tanh, causal or not, masks or not) it
builds torch.nn.TransformerEncoderLayer / nn.TransformerEncoder (batch_first=True), exports the
state_dict, x and dy to .npy under the names resnorm relies on (self_attn.in_proj_weight, ...,
norm2.bias; layers.<i>. for a stack, norm.weight), and
  * float64: runs the layer and autograd, and compares with `resnorm eval block(_backward)` (the
    exact values rounded to f64): `resnorm check --dtype f64` must pass (float64 rounding);
  * float32: `resnorm check --dtype f32` on the layer's outputs and autograd gradients must pass;
  * dropout parity: with dropout masks, PyTorch's functional ops (F.linear, softmax, the masks times
    1/(1 - p)) written as TransformerEncoderLayer's forward, against `resnorm check`;
  * the bug zoo of issue 9 (each mutant written in PyTorch, float32) must FAIL `resnorm check`.
Prints one line per check and 'pytorch block: ok' (exit 0), or the failures (exit 1).
Usage: RESNORM=build/resnorm /usr/bin/python3 tests/pytorch_block.py [--widths=W,...], W among:
  small (the default; make pytorch-check): d = 8, ~15 s;
  gpt2: the GPT-2-width column (d = 768, 12 heads, ff = 3072, batch 1, seq 16): one layer and its
        zoo (~19 min), then gpt2-stack (opt-in, not in make check);
  gpt2-block: only that one layer and its zoo;
  gpt2-stack: only the GPT-2-width stacks of 2 (pre-LN and post-LN, final norm) and their zoo:
        ~27 min wall, ~17 min CPU on the shared 2-core machine (the certified twin's
        stack_backward, ~3 min per check, dominates).
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:  # Debian's python3-torch missing: the client cannot run
    print("pytorch block: SKIPPED (no torch in /usr/bin/python3)")
    sys.exit(0)

RESNORM = os.environ.get("RESNORM", "build/resnorm")
PARAMS = ["self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
          "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight",
          "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"]
MASKS = ["attn_dropout.mask", "dropout.mask", "dropout1.mask", "dropout2.mask"]
ACT = {"relu": F.relu, "gelu": F.gelu, "gelu_tanh": lambda v: F.gelu(v, approximate="tanh")}


# ------------------------------------------------------------------ the model, functional
def layer_norm(v, w, b, eps):
    return F.layer_norm(v, (v.shape[-1],), w, b, eps)


def attention(P, v, cfg, kpm, amask, pre=""):
    """MultiheadAttention(v, v, v), batch_first, need_weights=False, heads split contiguously."""
    B, S, d = v.shape
    h = cfg["heads"]
    dh = d // h
    qkv = F.linear(v, P[pre + "self_attn.in_proj_weight"], P[pre + "self_attn.in_proj_bias"])
    q, k, w = (t.reshape(B, S, h, dh).transpose(1, 2) for t in qkv.split(d, dim=-1))
    s = (q / dh ** 0.5) @ k.transpose(-1, -2)
    if cfg["causal"]:
        s = s.masked_fill(torch.ones(S, S, dtype=torch.bool).triu(1), float("-inf"))
    if kpm is not None:
        s = s.masked_fill(kpm.bool()[:, None, None, :], float("-inf"))
    a = torch.softmax(s, dim=-1)
    if amask is not None:
        a = a * amask / (1 - cfg["p"])
    ctx = (a @ w).transpose(1, 2).reshape(B, S, d)
    return F.linear(ctx, P[pre + "self_attn.out_proj.weight"], P[pre + "self_attn.out_proj.bias"])


def ffn(P, v, cfg, dmask, pre=""):
    t = ACT[cfg["act"]](F.linear(v, P[pre + "linear1.weight"], P[pre + "linear1.bias"]))
    if dmask is not None:
        t = t * dmask / (1 - cfg["p"])
    return F.linear(t, P[pre + "linear2.weight"], P[pre + "linear2.bias"])


def drop(v, m, cfg):
    return v if m is None else v * m / (1 - cfg["p"])


def ln_at(v, point, w, b, eps):
    """Forward LayerNorm(v); backward LayerNorm's vjp evaluated at `point` (a bug when point != v)."""
    z = point.detach() + (v - v.detach())
    out = layer_norm(z, w, b, eps)
    return layer_norm(v, w, b, eps).detach() + out - out.detach()


def identity_grad(v, factor):
    """v in the forward; factor·(the gradient) in the backward (0: dropped, 2: doubled)."""
    return v.detach() + factor * (v - v.detach()) if factor != 1 else v


def block(P, x, cfg, masks, kpm, pre="", bugs=()):
    """TransformerEncoderLayer.forward, written with functional ops; `bugs` inject the zoo's."""
    eps = cfg["eps"]
    m = masks or {}
    n1 = (P[pre + "norm1.weight"], P[pre + "norm1.bias"])
    n2 = (P[pre + "norm2.weight"], P[pre + "norm2.bias"])
    if "norm_swap" in bugs:
        n1, n2 = n2, n1
    post = cfg["norm"] == "post"
    if "pre_post_swapped" in bugs:
        post = not post
    sa = lambda v: attention(P, v, cfg, kpm, m.get("attn_dropout.mask"), pre)
    ff = lambda v: ffn(P, v, cfg, m.get("dropout.mask"), pre)
    d1, d2 = m.get("dropout1.mask"), m.get("dropout2.mask")
    idf = 0 if "identity_grad_dropped" in bugs else 2 if "identity_grad_doubled" in bugs else 1
    if not post:
        a = layer_norm(x, *n1, eps)
        base = a if "residual_on_normalized" in bugs else identity_grad(x, idf)
        if "dropout_after_add" in bugs:
            h = drop(base + sa(a), d1, cfg)
        else:
            h = base + drop(sa(a), d1, cfg)
        b = layer_norm(h, *n2, eps)
        base = b if "residual_on_normalized" in bugs else identity_grad(h, idf)
        if "dropout_after_add" in bugs:
            return drop(base + ff(b), d2, cfg)
        return base + drop(ff(b), d2, cfg)
    s1 = identity_grad(x, idf) + drop(sa(x), d1, cfg)
    if "dropout_after_add" in bugs:
        s1 = drop(x + sa(x), d1, cfg)
    h = ln_at(s1, x, *n1, eps) if "ln_backward_wrong_input" in bugs else layer_norm(s1, *n1, eps)
    s2 = identity_grad(h, idf) + drop(ff(h), d2, cfg)
    if "dropout_after_add" in bugs:
        s2 = drop(h + ff(h), d2, cfg)
    if "ln_backward_wrong_input" in bugs:
        return ln_at(s2, h, *n2, eps)
    return layer_norm(s2, *n2, eps)


def stack(P, x, cfg, L, final, kpm, bugs=()):
    for i in range(L):
        src = 0 if ("wrong_layer_params" in bugs and i == 1) else i
        x = block(P, x, cfg, None, kpm, pre=f"layers.{src}.", bugs=bugs)
    nf = 0 if "final_norm_missing" in bugs else 2 if "final_norm_twice" in bugs else final
    for _ in range(nf):
        x = layer_norm(x, P["norm.weight"], P["norm.bias"], cfg["eps"])
    return x


# ------------------------------------------------------------------ PyTorch modules
def make_layer(cfg, seed):
    torch.manual_seed(seed)
    act = cfg["act"] if cfg["act"] != "gelu_tanh" else ACT["gelu_tanh"]
    return nn.TransformerEncoderLayer(cfg["d"], cfg["heads"], cfg["ff"], dropout=cfg["p"],
                                      activation=act, layer_norm_eps=cfg["eps"], batch_first=True,
                                      norm_first=cfg["norm"] == "pre").double().eval()


def perturb_norms(mod, gen):
    """nn.LayerNorm starts at weight 1, bias 0: perturb them so that norm1/norm2 differ."""
    with torch.no_grad():
        for name, t in mod.named_parameters():
            if "norm" in name:
                t.add_(0.1 * torch.randn(t.shape, generator=gen, dtype=t.dtype))


def make_model(cfg, L, final, seed):
    gen = torch.Generator().manual_seed(seed)
    if L == 0:
        mod = make_layer(cfg, seed)
    else:
        norm = nn.LayerNorm(cfg["d"], eps=cfg["eps"]).double() if final else None
        mod = nn.TransformerEncoder(make_layer(cfg, seed), L, norm=norm,
                                    enable_nested_tensor=False).double().eval()
        with torch.no_grad():  # the clones start identical: make the layers differ
            for name, t in mod.named_parameters():
                t.add_(0.05 * torch.randn(t.shape, generator=gen, dtype=t.dtype))
    perturb_norms(mod, gen)
    return mod


def causal_mask(S):
    return torch.ones(S, S, dtype=torch.bool).triu(1)


def run_module(mod, x, cfg, kpm, L):
    mask = causal_mask(x.shape[1]) if cfg["causal"] else None
    kp = kpm.bool() if kpm is not None else None
    if L == 0:
        return mod(x, src_mask=mask, src_key_padding_mask=kp)
    return mod(x, mask=mask, src_key_padding_mask=kp)


def functional_call(mod, params, fwd, x):
    """fwd(x) with mod's parameters replaced by params (torch 1.13: nn.utils.stateless)."""
    from torch.nn.utils import stateless
    with stateless._reparametrize_module(mod, params):
        return fwd(x)


# ------------------------------------------------------------------ resnorm
def save(dirpath, arrays):
    """name -> array, written as dirpath/name.npy; returns ['--in', 'name=path', ...]."""
    args = []
    for name, a in arrays.items():
        path = os.path.join(dirpath, name + ".npy")
        np.save(path, np.ascontiguousarray(a))
        args += ["--in", f"{name}={path}"]
    return args


def attrs(cfg, L, final):
    a = ["--attr", f"norm={cfg['norm']}", "--attr", f"heads={cfg['heads']}",
         "--attr", f"activation={cfg['act']}", "--attr", f"causal={int(cfg['causal'])}",
         "--attr", f"eps={cfg['eps_text']}", "--attr", f"p={cfg['p_text']}"]
    if L:
        a += ["--attr", f"final_norm={int(final)}"]
    return a


def resnorm_check(op, in_args, actual, dtype, tmp):
    """`resnorm check`; returns (exit code, the JSON report or None)."""
    act_args = []
    for name, a in actual.items():
        path = os.path.join(tmp, "actual_" + name + ".npy")
        np.save(path, np.ascontiguousarray(a))
        act_args += ["--actual", f"{name}={path}"]
    r = subprocess.run([RESNORM, "check", op] + in_args + act_args + ["--dtype", dtype, "--json"],
                       capture_output=True, text=True)
    rep = None
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        pass
    if r.returncode not in (0, 1, 4):
        sys.stderr.write(r.stderr)
    return r.returncode, rep


def worst(rep):
    if not rep:
        return float("nan")
    return max(float(o.get("max_ratio") or 0) for o in rep["outputs"].values())


def void_note(rep):
    """' (k of n unconstrained)' when the rigorous tier is void on k elements (worst err/bound is
    then over the other n - k only; at GPT-2 width y is unconstrained everywhere)."""
    if not rep:
        return ""
    unc = sum(int(o.get("unconstrained") or 0) for o in rep["outputs"].values())
    n = sum(int(o.get("count") or 0) for o in rep["outputs"].values())
    return f" ({unc} of {n} unconstrained)" if unc else ""


def stat_ratio(rep):
    """The largest |err| / statistical bound of the block's graph tier over the outputs."""
    if not rep or "statistical" not in rep:
        return float("nan")
    outs = rep["statistical"].get("outputs", {}).values()
    return max((float(t.get("z_row") or 0) for ts in outs for t in ts), default=float("nan"))


def forward_backward(fn, x, params, dy):
    """y = fn(x, params) and the autograd gradients of sum(dy ⊙ y)."""
    x = x.clone().requires_grad_(True)
    ps = {k: v.clone().requires_grad_(True) for k, v in params.items()}
    y = fn(x, ps)
    y.backward(dy)
    return y.detach(), x.grad, {k: v.grad for k, v in ps.items()}


# ------------------------------------------------------------------ one configuration
class Runner:
    def __init__(self):
        self.failures = []

    def report(self, ok, line):
        print(("  ok    " if ok else "  FAIL  ") + line)
        if not ok:
            self.failures.append(line)

    def case(self, cfg, L=0, final=False, masks=False, kpm_on=False, seed=0, zoo=(), tag=""):
        """L = 0: one TransformerEncoderLayer (ops block / block_backward); L >= 1: a stack."""
        B, S, d = cfg["batch"], cfg["seq"], cfg["d"]
        gen = torch.Generator().manual_seed(1000 + seed)
        mod = make_model(cfg, L, final, seed)
        sd = {k: v.detach().clone() for k, v in mod.state_dict().items()}
        params64 = {k: v for k, v in sd.items() if "weight" in k or "bias" in k}
        x = torch.randn(B, S, d, generator=gen, dtype=torch.float64)
        dy = torch.randn(B, S, d, generator=gen, dtype=torch.float64)
        kpm = None
        if kpm_on:
            kpm = torch.zeros(B, S, dtype=torch.float64)
            kpm[1:, -1] = 1.0
        mk = {}
        if masks:
            p = cfg["p"]
            mk = {"attn_dropout.mask": (torch.rand(B, cfg["heads"], S, S, generator=gen) > p),
                  "dropout.mask": (torch.rand(B, S, cfg["ff"], generator=gen) > p),
                  "dropout1.mask": (torch.rand(B, S, d, generator=gen) > p),
                  "dropout2.mask": (torch.rand(B, S, d, generator=gen) > p)}
            mk = {k: v.double() for k, v in mk.items()}
        op = "stack" if L else "block"
        name = tag or (f"{op}{L or ''} {cfg['norm']}-LN {cfg['act']} d={d} h={cfg['heads']} "
                       f"ff={cfg['ff']} seq={S}" + (" causal" if cfg["causal"] else "")
                       + (" masks" if masks else "") + (" kpm" if kpm_on else "")
                       + (" final" if final else ""))
        with tempfile.TemporaryDirectory() as tmp:
            for dt, tdt, npdt in (("f64", torch.float64, np.float64),
                                  ("f32", torch.float32, np.float32)):
                xin = x.to(tdt)
                P = {k: v.to(tdt) for k, v in params64.items()}
                dyt = dy.to(tdt)
                mkt = {k: v.to(tdt) for k, v in mk.items()}
                kpt = kpm.to(tdt) if kpm is not None else None
                arrays = {"x": xin.numpy().astype(npdt)}
                arrays.update({k: v.numpy().astype(npdt) for k, v in P.items()})
                arrays.update({k: v.numpy().astype(npdt) for k, v in mkt.items()})
                if kpt is not None:
                    arrays["key_padding_mask"] = kpt.numpy().astype(npdt)
                ins = save(tmp, arrays) + attrs(cfg, L, final)
                dyp = os.path.join(tmp, "dy.npy")
                np.save(dyp, dyt.numpy().astype(npdt))
                ins_b = ins + ["--in", f"dy={dyp}"]
                if zoo:
                    self.zoo(cfg, L, final, P, xin, dyt, mkt, kpt, op, ins, ins_b, dt, tmp, name,
                             zoo)
                    continue
                if masks:   # dropout parity: the functional ops with the same masks
                    fn = lambda xx, pp: block(pp, xx, cfg, mkt, kpt)
                    what = "functional ops with masks"
                else:       # the module itself (eval mode)
                    m2 = make_model(cfg, L, final, seed).to(tdt)
                    m2.load_state_dict({k: v.to(tdt) for k, v in sd.items()})
                    def fn(xx, pp, m2=m2):
                        # the module with pp as its parameters (autograd flows to pp)
                        fwd = lambda v: run_module(m2, v, cfg, kpt, L)
                        return functional_call(m2, pp, fwd, xx)
                    what = "nn.TransformerEncoder" if L else "nn.TransformerEncoderLayer"
                    # the functional model is the module's forward (a check of this script)
                    with torch.no_grad():
                        f1 = fn(xin, P)
                        f2 = stack(P, xin, cfg, L, final, kpt) if L else block(P, xin, cfg, None, kpt)
                    tol = 1e-12 if dt == "f64" else 1e-4
                    self.report(torch.allclose(f1, f2, atol=tol * 10, rtol=tol),
                                f"{name} [{dt}]: functional model = {what} (max diff "
                                f"{(f1 - f2).abs().max().item():.2e})")
                y, gx, gp = forward_backward(fn, xin, P, dyt)
                rc, rep = resnorm_check(op, ins, {"y": y.numpy()}, dt, tmp)
                self.report(rc == 0, f"{name} [{dt}] {what}: y passes resnorm check {op} "
                            f"--dtype {dt} (exit {rc}, worst err/bound {worst(rep):.3g}"
                            f"{void_note(rep)}, statistical {stat_ratio(rep):.3g})")
                grads = {"dx": gx.numpy()}
                grads.update({"d." + k: v.numpy() for k, v in gp.items()})
                rc, rep = resnorm_check(op + "_backward", ins_b, grads, dt, tmp)
                self.report(rc == 0, f"{name} [{dt}] {what} autograd: dx and {len(gp)} parameter "
                            f"gradients pass resnorm check {op}_backward --dtype {dt} (exit {rc}, "
                            f"worst err/bound {worst(rep):.3g}{void_note(rep)}, "
                            f"statistical {stat_ratio(rep):.3g})")

    def zoo(self, cfg, L, final, P, xin, dyt, mkt, kpt, op, ins, ins_b, dt, tmp, name, bugs):
        """Each mutant, float32 only: must fail resnorm check (exit 1 rigorous or 4 statistical)."""
        if dt != "f32":
            return
        for bug in bugs:
            if L:
                fn = lambda xx, pp: stack(pp, xx, cfg, L, final, kpt, bugs=(bug,))
            else:
                fn = lambda xx, pp: block(pp, xx, cfg, mkt or None, kpt, bugs=(bug,))
            y, gx, gp = forward_backward(fn, xin, P, dyt)
            backward_bug = bug.startswith("identity_grad") or bug == "ln_backward_wrong_input"
            if backward_bug:
                grads = {"dx": gx.numpy()}
                grads.update({"d." + k: v.numpy() for k, v in gp.items()})
                rc, rep = resnorm_check(op + "_backward", ins_b, grads, dt, tmp)
            else:
                rc, rep = resnorm_check(op, ins, {"y": y.numpy()}, dt, tmp)
            tier = {1: "killed (rigorous tier)", 4: "killed (statistical tier)"}.get(rc, "MISSED")
            self.report(rc in (1, 4), f"zoo {bug:28s} {name}: {tier} (exit {rc}, worst err/bound "
                        f"{worst(rep):.3g}{void_note(rep)}, statistical {stat_ratio(rep):.3g})")


def cfg_of(norm, act, causal, d=8, heads=2, ff=16, batch=2, seq=4, p="0.1"):
    return {"norm": norm, "act": act, "causal": causal, "d": d, "heads": heads, "ff": ff,
            "batch": batch, "seq": seq, "eps": 1e-5, "eps_text": "1e-5", "p": float(p),
            "p_text": p}


def load_npy(path):
    a = np.load(path)
    if a.dtype.kind == "V":  # bf16: raw bits
        a = (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return a


def golden_suite(R):
    """PyTorch (the functional ops, float32 and float64) over golden/block: every case's outputs
    laid out DIR/<case id>/<output>.npy and checked by `resnorm golden run-check`."""
    ops = {"block", "block_backward", "stack", "stack_backward"}
    cases = json.loads(subprocess.run([RESNORM, "golden", "list", "--json"], capture_output=True,
                                      text=True, check=True).stdout)
    cases = [c for c in cases if c["op"] in ops]
    root = os.path.dirname(os.path.dirname(os.path.abspath(RESNORM)))
    if not os.path.exists(os.path.join(root, "golden")):
        root = "."
    for dt, tdt in (("f64", torch.float64), ("f32", torch.float32)):
        sel = [c for c in cases if (c["input_dtype"] == "f64") == (dt == "f64")]
        with tempfile.TemporaryDirectory() as tmp:
            for c in sel:
                ins = {k: torch.tensor(load_npy(os.path.join(root, v)).astype(np.float64)).to(tdt)
                       for k, v in c["inputs"].items()}
                x = ins.pop("x")
                dy = ins.pop("dy", None)
                two_d = x.dim() == 2
                if two_d:
                    x = x.unsqueeze(0)
                    dy = dy.unsqueeze(0) if dy is not None else None
                a = c["attrs"]
                kpm = ins.pop("key_padding_mask", None)
                if kpm is not None:
                    kpm = kpm.reshape(x.shape[0], x.shape[1])
                mk = {k: ins.pop(k).reshape(-1) for k in list(ins) if k.endswith(".mask")}
                w1 = next(v for k, v in ins.items() if k.endswith("linear1.weight"))
                cfg = cfg_of(a["norm"], a["activation"], bool(a["causal"]), d=x.shape[-1],
                             heads=a["heads"], ff=w1.shape[0], batch=x.shape[0], seq=x.shape[1],
                             p=a["p"])
                B, S = x.shape[0], x.shape[1]
                shapes = {"attn_dropout.mask": (B, cfg["heads"], S, S),
                          "dropout.mask": (B, S, cfg["ff"]), "dropout1.mask": (B, S, cfg["d"]),
                          "dropout2.mask": (B, S, cfg["d"])}
                mk = {k: v.reshape(shapes[k]) for k, v in mk.items()}
                if c["op"].startswith("stack"):
                    L = len([k for k in ins if k.endswith("linear1.weight")])
                    fn = lambda xx, pp: stack(pp, xx, cfg, L, bool(a["final_norm"]), kpm)
                else:
                    fn = lambda xx, pp: block(pp, xx, cfg, mk or None, kpm)
                out = os.path.join(tmp, c["id"])
                os.makedirs(out)
                if dy is None:
                    with torch.no_grad():
                        y = fn(x, ins)
                    res = {"y": y}
                else:
                    y, gx, gp = forward_backward(fn, x, ins, dy)
                    res = {"dx": gx}
                    res.update({"d." + k: v for k, v in gp.items()})
                for k, v in res.items():
                    v = v.detach()
                    np.save(os.path.join(out, k + ".npy"), (v[0] if two_d and k in ("y", "dx")
                                                            else v).numpy())
            r = subprocess.run([RESNORM, "golden", "run-check", tmp, "--dtype", dt, "--json",
                                "--root", root], capture_output=True, text=True)
            rep = json.loads(r.stdout)
            R.report(r.returncode == 0 and rep["failed"] == 0 and rep["passed"] == len(sel),
                     f"golden/block, PyTorch functional float{dt[1:]}: run-check --dtype {dt}: "
                     f"{rep['passed']} passed, {rep['failed']} failed (of {len(sel)}; exit "
                     f"{r.returncode})")


BLOCK_BUGS = ["pre_post_swapped", "residual_on_normalized", "norm_swap", "dropout_after_add",
              "identity_grad_dropped", "identity_grad_doubled"]


STACK_BUGS = ["final_norm_missing", "final_norm_twice", "wrong_layer_params"]


def stack_zoo(R, cfg, L, seed, tag, extra=(), control=False):
    """The stack's mutants (STACK_BUGS, then `extra` from the block's zoo) on an L-layer
    nn.TransformerEncoder with the final norm, float32: each must fail resnorm check. With
    `control`, first the same model and inputs (same seed) unmutated: the module in float64 and
    float32, outputs and autograd gradients, must pass (the mutants' failures are then measured
    against a model that is shown to pass)."""
    if control:
        R.case(cfg, L=L, final=True, seed=seed, tag=tag)
    R.case(cfg, L=L, final=True, seed=seed, tag=tag, zoo=STACK_BUGS + list(extra))


def main():
    widths = "small"
    for a in sys.argv[1:]:
        if a.startswith("--widths="):
            widths = a.split("=", 1)[1]
        else:
            sys.exit(__doc__)
    ws = widths.split(",")
    if not set(ws) <= {"small", "gpt2", "gpt2-block", "gpt2-stack"}:
        sys.exit(__doc__)
    R = Runner()
    if "small" in ws:
        print("PyTorch TransformerEncoderLayer / TransformerEncoder against resnorm (float64 and float32):")
        seed = 0
        for norm in ("pre", "post"):
            for act in ("relu", "gelu"):
                for causal in (False, True):
                    seed += 1
                    R.case(cfg_of(norm, act, causal), seed=seed, kpm_on=(act == "gelu" and not causal))
        R.case(cfg_of("pre", "gelu_tanh", True), seed=20, masks=True, kpm_on=True)
        R.case(cfg_of("post", "relu", False), seed=21, masks=True)
        R.case(cfg_of("pre", "gelu", True), L=2, final=True, seed=22)
        R.case(cfg_of("post", "relu", False), L=2, final=True, seed=23)
        R.case(cfg_of("pre", "relu", False), L=4, final=True, seed=24)
        R.case(cfg_of("post", "gelu", True), L=4, final=False, seed=25)
        golden_suite(R)
        print("bug zoo (float32 PyTorch with one bug; each must fail resnorm check):")
        R.case(cfg_of("pre", "gelu", True), seed=30, zoo=BLOCK_BUGS, masks=True, tag="pre d=8")
        R.case(cfg_of("post", "relu", False), seed=31, masks=True, tag="post d=8",
               zoo=[b for b in BLOCK_BUGS if b != "residual_on_normalized"]
               + ["ln_backward_wrong_input"])
        stack_zoo(R, cfg_of("pre", "gelu", False), 2, seed=32, tag="stack2 pre d=8")
        stack_zoo(R, cfg_of("post", "relu", True), 4, seed=33, tag="stack4 post d=8",
                  extra=["identity_grad_dropped", "ln_backward_wrong_input"])
    g = cfg_of("pre", "gelu", True, d=768, heads=12, ff=3072, batch=1, seq=16)
    if "gpt2" in ws or "gpt2-block" in ws:
        print("GPT-2 width (d = 768, 12 heads, ff = 3072, seq 16), float32:")
        R.case(g, seed=40, tag="gpt2 pre")
        R.case(g, seed=41, zoo=BLOCK_BUGS, masks=True, tag="gpt2 pre")
        R.case(dict(g, norm="post"), seed=42, zoo=["ln_backward_wrong_input", "pre_post_swapped"],
               tag="gpt2 post")
    if "gpt2" in ws or "gpt2-stack" in ws:
        print("GPT-2 width stacks (nn.TransformerEncoder, 2 layers, final norm; batch 1, seq 16):")
        stack_zoo(R, g, 2, seed=43, tag="gpt2 stack2 pre", control=True)
        stack_zoo(R, dict(g, norm="post"), 2, seed=44, tag="gpt2 stack2 post", control=True,
                  extra=["identity_grad_dropped", "ln_backward_wrong_input"])
    if R.failures:
        print(f"pytorch block: {len(R.failures)} FAILED")
        sys.exit(1)
    print("pytorch block: ok")


if __name__ == "__main__":
    main()

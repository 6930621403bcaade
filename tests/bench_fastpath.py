"""make bench: PyTorch float64 beside `resnorm eval` and `resnorm check`, same inputs, one run.

For LayerNorm and RMSNorm at 1024 x 768 and 4096 x 4096 (f32 inputs, outputs rounded to f32), with
1 and 2 threads (torch.set_num_threads / resnorm --threads), prints the best wall time of
  torch f64 forward, torch f64 forward + backward (autograd),
  resnorm eval (forward; and the backward op at 1024 x 768: it has no fast path yet),
  resnorm check of PyTorch float32's outputs (forward), and its input rate in MB/s (x's bytes / time).
The resnorm times are whole processes (start-up, .npy reading and writing included).  Timing only:
nothing is asserted.  The machine may be shared: the numbers are as noisy as its load (printed)."""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

RESNORM = os.environ.get("RESNORM", "build/resnorm")
EPS = 1e-5
SIZES = [(1024, 768), (4096, 4096)]
REPEAT = int(os.environ.get("BENCH_REPEAT", "3"))


def best(fn, k):
    ts = []
    for _ in range(k):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return min(ts)


def torch_fwd(op, x, g, b):
    if op == "layernorm":
        return torch.nn.functional.layer_norm(x, (x.shape[-1],), g, b, EPS)
    r = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS)
    return x * r * g


def torch_times(op, x32, g32, b32, threads, k):
    torch.set_num_threads(threads)
    x, g, b = (torch.from_numpy(a).double() for a in (x32, g32, b32))
    fwd = best(lambda: torch_fwd(op, x, g, b), k)
    dy = torch.ones_like(x)

    def fb():
        xr = x.clone().requires_grad_(True)
        gr = g.clone().requires_grad_(True)
        br = b.clone().requires_grad_(True)
        torch_fwd(op, xr, gr, br).backward(dy)

    return fwd, best(fb, k)


def run(args, k):
    def once():
        p = subprocess.run([RESNORM] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if p.returncode != 0:
            sys.exit("bench: resnorm %s failed: %s" % (" ".join(args), p.stderr.decode()))
    return best(once, k)


def main():
    print("load average at start: %.2f %.2f %.2f (2 cores)" % os.getloadavg())
    print("%-9s %-10s %2s  %12s %14s %12s %12s %12s %10s" % (
        "op", "shape", "th", "torch f64", "torch f64 f+b", "resnorm eval", "eval bwd", "check",
        "check MB/s"))
    with tempfile.TemporaryDirectory() as d:
        rng = np.random.default_rng(12)
        for rows, n in SIZES:
            x = rng.standard_normal((rows, n)).astype(np.float32)
            g = (1 + 0.1 * rng.standard_normal(n)).astype(np.float32)
            b = (0.1 * rng.standard_normal(n)).astype(np.float32)
            dy = rng.standard_normal((rows, n)).astype(np.float32)
            for nm, a in (("x", x), ("g", g), ("b", b), ("dy", dy)):
                np.save(os.path.join(d, nm + ".npy"), a)
            k = REPEAT if rows * n < 10**6 else 1
            for op in ("layernorm", "rmsnorm"):
                ins = ["--in", "x=%s/x.npy" % d, "--in", "gamma=%s/g.npy" % d]
                if op == "layernorm":
                    ins += ["--in", "beta=%s/b.npy" % d]
                # PyTorch float32's outputs, the implementation `check` validates
                xt, gt, bt = (torch.from_numpy(a) for a in (x, g, b))
                acts = []
                if op == "layernorm":
                    y, m, r = torch.native_layer_norm(xt, [n], gt, bt, EPS)
                    for nm, a in (("y", y), ("mean", m.reshape(rows, 1)), ("rstd", r.reshape(rows, 1))):
                        np.save(os.path.join(d, "a_" + nm + ".npy"), a.numpy())
                        acts += ["--actual", "%s=%s/a_%s.npy" % (nm, d, nm)]
                else:
                    np.save(os.path.join(d, "a_y.npy"), torch_fwd(op, xt, gt, bt).numpy())
                    acts += ["--actual", "y=%s/a_y.npy" % d]
                for th in (1, 2):
                    tf, tfb = torch_times(op, x, g, b, th, k)
                    te = run(["eval", op] + ins + ["--threads", str(th), "--out", d + "/o"], k)
                    if rows * n < 10**6 or os.environ.get("BENCH_BACKWARD_LARGE"):
                        bins = ["--in", "x=%s/x.npy" % d, "--in", "gamma=%s/g.npy" % d,
                                "--in", "dy=%s/dy.npy" % d]
                        tb = "%10.4f s" % run(["eval", op + "_backward"] + bins +
                                              ["--threads", str(th), "--out", d + "/ob"], 1)
                    else:
                        tb = "%12s" % "-"
                    tc = run(["check", op] + ins + acts + ["--threads", str(th)], k)
                    mb = x.nbytes / 1e6 / tc
                    print("%-9s %-10s %2d  %10.4f s %12.4f s %10.4f s %s %10.4f s %10.1f" % (
                        op, "%dx%d" % (rows, n), th, tf, tfb, te, tb, tc, mb))
                    sys.stdout.flush()
    print("load average at end:   %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()

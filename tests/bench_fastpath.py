"""make bench: PyTorch float64 beside `resnorm eval` and `resnorm check`, same inputs, one run.

For LayerNorm and RMSNorm at 1024 x 768 and 4096 x 4096 (f32 inputs, outputs rounded to f32), with
1 and 2 threads (torch.set_num_threads / resnorm --threads), prints the best wall time of
  torch f64 forward, torch f64 forward + backward (autograd),
  resnorm eval (forward, and the backward op with dy),
  resnorm check of PyTorch float32's outputs (forward), and its input rate in MB/s (x's bytes / time).
The resnorm times are whole processes (start-up, .npy reading and writing included).  Each cell
is the wall time and, in parentheses, the CPU time of all threads (a fairer measure when the
machine is loaded).  Timing only:
nothing is asserted.  The machine may be shared: the numbers are as noisy as its load (printed)."""
import os
import resource
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


def cpu_now():
    """CPU seconds of this process (all threads) and of its finished children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + ch.ru_utime + ch.ru_stime


def best(fn, k):
    """(wall, cpu) of the run with the least wall time among k."""
    ts = []
    for _ in range(k):
        c0, t0 = cpu_now(), time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0, cpu_now() - c0))
    return min(ts)


def cell(t):
    return "%8.4f (%7.4f)" % t


def ratio(a, b):
    """a / b in wall time (and CPU time): how many times slower resnorm is than PyTorch."""
    return "%6.1f (%6.1f)" % (a[0] / b[0], a[1] / max(b[1], 1e-9))


def torch_fwd(op, x, g, b):
    if op == "layernorm":
        return torch.nn.functional.layer_norm(x, (x.shape[-1],), g, b, EPS)
    r = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS)
    return x * r * g


def torch_times(op, x32, g32, b32, dy32, threads, k):
    torch.set_num_threads(threads)
    x, g, b, dy = (torch.from_numpy(a).double() for a in (x32, g32, b32, dy32))
    fwd = best(lambda: torch_fwd(op, x, g, b), k)

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
    print("seconds: wall (CPU of all threads); check MB/s: x's bytes / wall, / CPU;")
    print("x torch: resnorm eval fwd / torch f64 fwd and eval bwd / torch f64 f+b, wall (CPU)")
    print("%-9s %-10s %2s %18s %18s %18s %18s %18s %8s %8s %15s %15s" % (
        "op", "shape", "th", "torch f64 fwd", "torch f64 f+b", "resnorm eval fwd",
        "resnorm eval bwd", "resnorm check", "MB/s", "MB/s cpu", "fwd x torch", "bwd x torch"))
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
                    tf, tfb = torch_times(op, x, g, b, dy, th, k)
                    te = run(["eval", op] + ins + ["--threads", str(th), "--out", d + "/o"], k)
                    bins = ["--in", "x=%s/x.npy" % d, "--in", "gamma=%s/g.npy" % d,
                            "--in", "dy=%s/dy.npy" % d]
                    tb = run(["eval", op + "_backward"] + bins +
                                          ["--threads", str(th), "--out", d + "/ob"], k)
                    tc = run(["check", op] + ins + acts + ["--threads", str(th)], k)
                    mb = x.nbytes / 1e6 / tc[0]
                    print("%-9s %-10s %2d %s %s %s %s %s %8.1f %8.1f %s %s" % (
                        op, "%dx%d" % (rows, n), th, cell(tf), cell(tfb), cell(te), cell(tb),
                        cell(tc), mb, x.nbytes / 1e6 / tc[1], ratio(te, tf), ratio(tb, tfb)))
                    sys.stdout.flush()
    print("load average at end:   %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()

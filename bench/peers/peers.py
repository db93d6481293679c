#!/usr/bin/env python3
"""The Python peers of posenc's benchmarks, timed on the same sizes in one session.

What a user would otherwise run, written as they would write it:

* sinusoidal -- the Vaswani table [L, d] in numpy and in torch (angles, sin, cos, interleave);
* floater    -- FLOATER's dynamics (the reference code's ReLU MLP with a time column on both
                layers, rk4 = 3/8 rule, step delta/5) through torchdiffeq: forward alone, and
                forward + backward by autograd through the steps, f32 and f64, 1 and 18 blocks;
* tupe       -- TUPE's positional term (LayerNorm, the two projections, per-head products, the
                T5 relative bias and the [CLS] reset) in torch: the fast path (the [H, n, n]
                relative bias gathered once, untimed; one baddbmm adds it) and the full module
                (buckets and gather in every call, as posenc's public call does);
* toeplitz   -- B X for an n x n Toeplitz B and X [n, k]: scipy.linalg.matmul_toeplitz and the
                circulant-embedding product with torch.fft (rfft of B and X, product, irfft);
* fft        -- one complex transform of size N: numpy.fft, scipy.fft and torch.fft.

With --bench-dir (the folder of posenc's benchmark programs, e.g. build/bench/bench) it also runs
posenc's matching Google Benchmark cases in the same session, right after the peers, and prints
each row with both figures and their ratio (peer time / posenc time: above 1 means posenc is
faster). Times are wall-clock medians; both sides use --threads threads (torch.set_num_threads
for the peers; the benchmarks' thread argument for posenc, whose programs run with
OMP_NUM_THREADS=1 so that Eigen does not start threads of its own inside posenc's). posenc's
Toeplitz/FFT products are single-threaded; scipy's FFT is too (workers=1), torch.fft may use
--threads threads.

Not run by CI (it takes minutes and needs an idle machine); run by hand:

    /usr/bin/python3 bench/peers/peers.py --bench-dir build/bench/bench            # everything
    /usr/bin/python3 bench/peers/peers.py --only toeplitz --reps 7                   # one section

Needs torch (Debian's python3-torch: /usr/bin/python3), numpy, scipy and torchdiffeq
(scripts/install-deps.sh installs them). Set OPENBLAS_NUM_THREADS like --threads if torch uses
OpenBLAS, which is what docs/performance.md reports.
"""
import argparse
import ctypes
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np
import scipy
import scipy.fft
import scipy.linalg
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tupe_torch import t5_buckets  # noqa: E402  (T5's bucket of j - i, shared with that script)

ROWS = []  # dict(section, case, peer, peer_s, config, posenc filter, posenc_s)
CONFIGS = [(1, 1)]  # (torch intra-op threads, OpenBLAS threads) tried for every peer row
_blas = None


def set_config(torch_threads, blas_threads):
    torch.set_num_threads(torch_threads)
    if _blas is not None:
        _blas.openblas_set_num_threads(blas_threads)


def median_time(fn, reps, warmup=1):
    """The peer's best configuration: the median of `reps` runs under each of CONFIGS, the
    smallest of those medians, and the configuration that gave it."""
    best = None
    for cfg in CONFIGS:
        set_config(*cfg)
        for _ in range(warmup):
            fn()
        ts = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        m = statistics.median(ts)
        if best is None or m < best[0]:
            best = (m, cfg)
    return best


def row(section, case, peer, timing, posenc=None):
    seconds, cfg = timing
    ROWS.append(dict(section=section, case=case, peer=peer, peer_s=seconds, config=cfg, posenc=posenc))
    if seconds != seconds:  # --load: timed earlier
        return
    print("  %-10s %-44s %-34s %10.3f ms  (torch %d, OpenBLAS %d threads)"
          % (section, case, peer, seconds * 1e3, cfg[0], cfg[1]), flush=True)


# ---- sinusoidal -------------------------------------------------------------------------------

def sinusoidal(args):
    for L, d in ((65536, 4096), (16384, 1024)):
        case = "table %d x %d, f32" % (L, d)

        def np_table():
            inv = np.power(10000.0, -np.arange(0, d, 2, dtype=np.float32) / d).astype(np.float32)
            ang = np.arange(L, dtype=np.float32)[:, None] * inv[None, :]
            pe = np.empty((L, d), dtype=np.float32)
            pe[:, 0::2] = np.sin(ang)
            pe[:, 1::2] = np.cos(ang)
            return pe

        def torch_table():
            inv = torch.pow(10000.0, -torch.arange(0, d, 2, dtype=torch.float32) / d)
            ang = torch.arange(L, dtype=torch.float32)[:, None] * inv[None, :]
            pe = torch.empty(L, d, dtype=torch.float32)
            pe[:, 0::2] = torch.sin(ang)
            pe[:, 1::2] = torch.cos(ang)
            return pe

        bench = "BM_table<float>/L:%d/d:%d/threads:%d/half:0$" % (L, d, args.threads)
        row("sinusoidal", case, "numpy", median_time(np_table, args.reps), bench)
        row("sinusoidal", case, "torch", median_time(torch_table, args.reps), bench)


# ---- FLOATER ----------------------------------------------------------------------------------

class LinearT(torch.nn.Module):
    """The reference code's Linear_t: Linear(in + 1, out) on [x; t]."""

    def __init__(self, i, o):
        super().__init__()
        self.linear = torch.nn.Linear(i + 1, o)
        torch.nn.init.xavier_normal_(self.linear.weight)
        torch.nn.init.zeros_(self.linear.bias)

    def forward(self, t, x):
        return self.linear(torch.cat([x, torch.ones(x.shape[:-1] + (1,), dtype=x.dtype) * t], dim=-1))


class Flow(torch.nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.l1, self.l2 = LinearT(d, hidden), LinearT(hidden, d)

    def forward(self, t, x):
        return self.l2(t, torch.relu(self.l1(t, x)))


def floater(args):
    from torchdiffeq import odeint
    d, L, delta = 512, 512, 0.01
    for blocks in args.blocks:
        for dt_name, dt in (("f32", torch.float32), ("f64", torch.float64)):
            torch.manual_seed(0)
            flow = Flow(d, d).to(dt)
            p0 = (torch.rand(blocks, d, dtype=dt) - 0.5) * 0.1
            t = torch.arange(L, dtype=dt) * delta
            G = torch.randn(L, blocks, d, dtype=dt)
            opts = dict(step_size=delta / 5)

            def fwd():
                with torch.no_grad():
                    return odeint(flow, p0, t, method="rk4", options=opts)

            def fwd_bwd():
                flow.zero_grad(set_to_none=True)
                p = p0.clone().requires_grad_(True)
                odeint(flow, p, t, method="rk4", options=opts).backward(G)

            case = "d=%d L=%d rk4 delta/5, N=%d, %s" % (d, L, blocks, dt_name)
            T = "float" if dt_name == "f32" else "double"
            reps = args.floater_reps  # each run takes seconds: no warm-up run per configuration
            row("floater", "forward " + case, "torchdiffeq odeint", median_time(fwd, reps, warmup=0),
                "BM_floater_forward<%s>/N:%d/L:%d/threads:%d/stage_MiB:256$" % (T, blocks, L, args.threads))
            row("floater", "fwd+bwd " + case, "torchdiffeq autograd", median_time(fwd_bwd, reps, warmup=0),
                "BM_floater_forward_backward<%s>/N:%d/L:%d/threads:%d/stage_MiB:256$" % (T, blocks, L, args.threads))


# ---- TUPE -------------------------------------------------------------------------------------

def tupe(args):
    d, H, nb = 768, 12, 32
    for n in (512, 2048):
        for dt_name, dt in (("f32", torch.float32), ("f64", torch.float64)):
            torch.manual_seed(0)
            pos_w = torch.randn(n + 1, d, dtype=dt)
            ln_w, ln_b = torch.ones(d, dtype=dt), torch.zeros(d, dtype=dt)
            qw, kw = torch.randn(d, d, dtype=dt) / d ** 0.5, torch.randn(d, d, dtype=dt) / d ** 0.5
            qb, kb = torch.zeros(d, dtype=dt), torch.zeros(d, dtype=dt)
            rel_w = torch.randn(nb + 1, H, dtype=dt)
            scaling = float(d / H * 2) ** -0.5

            def buckets():
                b = t5_buckets(n, nb)
                b[:, 0] = nb
                b[0, :] = nb // 2
                return b

            # the fast path's [H, n, n] relative bias, gathered once outside the timing
            bias = torch.nn.functional.embedding(buckets(), rel_w).permute(2, 0, 1).contiguous()

            def term(rel):
                w = torch.nn.functional.layer_norm(pos_w[: n + 1], (d,), ln_w, ln_b, 1e-5)
                q = torch.nn.functional.linear(w, qw, qb).view(n + 1, H, -1).transpose(0, 1) * scaling
                k = torch.nn.functional.linear(w, kw, kb).view(n + 1, H, -1).transpose(0, 1)
                out = torch.baddbmm(rel, q[:, 1:], k[:, 1:].transpose(1, 2))
                # [CLS] reset: the first row and column take the [CLS] products (reference)
                c2o = (q[:, 0] * k[:, 0]).sum(-1)
                o2c = (q[:, 1] * k[:, 1]).sum(-1)
                out[:, :, 0] = o2c.view(-1, 1) + rel[:, :, 0]
                out[:, 0, :] = c2o.view(-1, 1) + rel[:, 0, :]
                return out

            def fast():
                with torch.no_grad():
                    return term(bias)

            def full():
                with torch.no_grad():
                    return term(torch.nn.functional.embedding(buckets(), rel_w).permute(2, 0, 1))

            T = "float" if dt_name == "f32" else "double"
            case = "bias n=%d d=%d H=%d, %s" % (n, d, H, dt_name)
            bench = "BM_tupe_bias<%s>/%d/%d$" % (T, n, args.threads)
            row("tupe", case, "torch fast path", median_time(fast, args.reps), bench)
            row("tupe", case, "torch full", median_time(full, args.reps), bench)


# ---- Toeplitz and FFT -------------------------------------------------------------------------

def toeplitz(args):
    rng = np.random.default_rng(1)
    for dt_name, dt in (("f64", np.float64), ("f32", np.float32)):
        T = "double" if dt_name == "f64" else "float"
        for n in args.toeplitz_n:
            c = rng.standard_normal(n).astype(dt)
            r = rng.standard_normal(n).astype(dt)
            r[0] = c[0]
            P = 1 << (2 * n - 1).bit_length()
            for k in args.toeplitz_k:
                X = rng.standard_normal((n, k)).astype(dt)
                Xt = torch.from_numpy(np.ascontiguousarray(X.T))  # columns contiguous: the fast layout
                # circulant embedding: first column [c, 0..., r[n-1..1]] of size P
                emb = np.zeros(P, dtype=dt)
                emb[:n] = c
                emb[P - n + 1:] = r[1:][::-1]
                Bs = torch.fft.rfft(torch.from_numpy(emb))

                def torch_fft():
                    Xs = torch.fft.rfft(Xt, n=P, dim=-1)
                    return torch.fft.irfft(Xs * Bs, n=P, dim=-1)[:, :n]

                case = "B X n=%d k=%d, %s" % (n, k, dt_name)
                bench = "BM_product_fft<%s>/%d/%d$" % (T, n, k)
                reps = args.reps if n * k <= (1 << 20) else max(3, args.reps // 2)
                row("toeplitz", case, "scipy matmul_toeplitz",
                    median_time(lambda: scipy.linalg.matmul_toeplitz((c, r), X), reps), bench)
                row("toeplitz", case, "torch.fft (spectrum of B kept)", median_time(torch_fft, reps), bench)


def fft(args):
    rng = np.random.default_rng(2)
    for n in (1024, 4096, 16384, 65536):
        x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex128)
        xt = torch.from_numpy(x)
        case = "c2c N=%d, f64" % n
        bench = "BM_fft_c2c_posenc<double>/%d$" % n
        row("fft", case, "numpy.fft.fft", median_time(lambda: np.fft.fft(x), args.reps * 5), bench)
        row("fft", case, "scipy.fft.fft", median_time(lambda: scipy.fft.fft(x), args.reps * 5), bench)
        row("fft", case, "torch.fft.fft", median_time(lambda: torch.fft.fft(xt), args.reps * 5), bench)


# ---- posenc's side: its Google Benchmark programs, run in this session ------------------------

PROGRAMS = {"sinusoidal": "bench_sinusoidal", "floater": "bench_floater", "tupe": "bench_tupe",
            "toeplitz": "bench_toeplitz", "fft": "bench_toeplitz"}


def suffixed(f):
    """A row's filter also matches the name Google Benchmark gives it with /real_time and the like."""
    return f[:-1] + "(/[a-z_]+)*$" if f.endswith("$") else f


def posenc_times(args, section, filters):
    exe = os.path.join(args.bench_dir, PROGRAMS[section])
    if not os.path.exists(exe):
        print("posenc: %s not found; build with -DPOSENC_BUILD_BENCHMARKS=ON" % exe, file=sys.stderr)
        return {}
    pattern = "|".join("^" + suffixed(f) for f in sorted(set(filters)))
    # posenc's benchmarks take their thread count as an argument and run it on posenc's own pool;
    # OpenMP (Eigen's GEMM) and OpenBLAS threads inside those would oversubscribe the cores
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([exe, "--benchmark_filter=" + pattern, "--benchmark_format=json",
                                   "--benchmark_repetitions=%d" % args.reps, "--benchmark_min_time=0.05",
                                   "--benchmark_report_aggregates_only=true"], env=env, text=True,
                         stdout=subprocess.PIPE).stdout
    if not out.strip():
        print("posenc: no benchmark of %s matched %s" % (exe, pattern), file=sys.stderr)
        return {}
    times = {}
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    for b in json.loads(out[out.index("{"):])["benchmarks"]:  # after the programs' banner line
        if b.get("aggregate_name") == "median":
            times[b["run_name"]] = b["real_time"] * scale[b["time_unit"]]
    return times


def match(times, f):
    import re
    hits = [v for name, v in times.items() if re.match("^" + suffixed(f), name)]
    return hits[0] if hits else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="+", choices=["sinusoidal", "floater", "tupe", "toeplitz", "fft"],
                    default=["sinusoidal", "floater", "tupe", "toeplitz", "fft"])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--floater-reps", type=int, default=1, help="runs of each torchdiffeq case per configuration")
    ap.add_argument("--configs", nargs="+", default=["1x1", "1x2", "2x1"],
                    help="torch threads x OpenBLAS threads tried for each peer; the fastest is reported")
    ap.add_argument("--blocks", type=int, nargs="+", default=[1, 18])
    ap.add_argument("--toeplitz-n", type=int, nargs="+", default=[512, 4096, 16384, 65536])
    ap.add_argument("--toeplitz-k", type=int, nargs="+", default=[1, 16, 64])
    ap.add_argument("--bench-dir", help="folder of posenc's bench_* programs: run them too and print ratios")
    ap.add_argument("--markdown", help="write the table as Markdown to this file")
    ap.add_argument("--save", help="write the peers' timings (JSON) to this file")
    ap.add_argument("--load", help="take the peers' timings from a file written by --save instead of timing them")
    args = ap.parse_args()
    global _blas, CONFIGS
    CONFIGS = [tuple(int(x) for x in c.split("x")) for c in args.configs]
    try:  # torch's BLAS (Debian: libblas.so.3 -> OpenBLAS when libopenblas is installed)
        _blas = ctypes.CDLL("libblas.so.3")
        _blas.openblas_set_num_threads
    except (OSError, AttributeError):
        _blas = None
        print("# torch's BLAS is not OpenBLAS: only the torch thread counts are varied", flush=True)
    cpu = platform.processor() or "?"
    try:
        cpu = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")][0]
    except (OSError, IndexError):
        pass
    head = ("%s, %d logical CPUs, load %s; torch %s, numpy %s, scipy %s; posenc on %d thread(s), each peer in "
            "its fastest of %s (torch x OpenBLAS threads); wall-clock medians"
            % (cpu, os.cpu_count(), " ".join("%.1f" % x for x in os.getloadavg()), torch.__version__,
               np.__version__, scipy.__version__, args.threads, ", ".join(args.configs)))
    global median_time
    if args.load:  # the rows (and their posenc filters) without timing them, then the saved times
        with open(args.load) as f:
            saved = json.load(f)
        head = saved["head"]
        median_time = lambda fn, reps, warmup=1: (float("nan"), (0, 0))  # noqa: E731
    print("#", head, flush=True)
    for s in args.only:
        globals()[s](args)
    if args.load:
        times = {(r["section"], r["case"], r["peer"]): r for r in saved["rows"]}
        for r in ROWS:
            t = times[(r["section"], r["case"], r["peer"])]
            r["peer_s"], r["config"] = t["peer_s"], tuple(t["config"])
    if args.save:
        with open(args.save, "w") as f:
            json.dump(dict(head=head, rows=[{k: r[k] for k in ("section", "case", "peer", "peer_s", "config")}
                                            for r in ROWS]), f, indent=1)
    if args.bench_dir:
        for s in args.only:
            rows = [r for r in ROWS if r["section"] == s and r["posenc"]]
            times = posenc_times(args, s, [r["posenc"] for r in rows])
            for r in rows:
                r["posenc_s"] = match(times, r["posenc"])
    lines = ["| workload | peer (threads: torch × OpenBLAS) | peer (ms) | posenc (ms) | peer / posenc |",
             "|---|---|---|---|---|"]
    for r in ROWS:
        p = r.get("posenc_s")
        lines.append("| %s %s | %s | %.3f | %s | %s |" % (
            r["section"], r["case"], "%s (%d × %d)" % (r["peer"], *r["config"]), r["peer_s"] * 1e3,
            "%.3f" % (p * 1e3) if p else "—", "%.2f×" % (r["peer_s"] / p) if p else "—"))
    print("\n# " + head + "\n" + "\n".join(lines))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("<!-- " + head + " -->\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

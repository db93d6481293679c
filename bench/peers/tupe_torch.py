#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""PyTorch's fast path for TUPE's positional term, timed beside bench/tupe.bench.cpp.

The same work as posenc::tupe::positional_bias (TUPE-R, reference [CLS] reset, BERT-base:
d = 768, H = 12): LayerNorm of the n + 1 position rows, both nn.Linear projections with bias,
the queries scaled by 1/sqrt(2 d/H), one batched product per head
(torch.baddbmm onto the relative bias precomputed as an [H, n, n] tensor from the T5 buckets,
which is not timed), then the [CLS] row and column reset. No autograd.

Prints, per dtype and n, the median of --repeats timings of --number calls each: wall time and
process CPU time (all threads), in ms. Run by hand, not in CI:

    /usr/bin/python3 bench/peers/tupe_torch.py --threads 2

With --posenc BINARY (build/bench/bench_tupe, and/or bench_tupe_blas), the posenc benchmark
BM_tupe_bias_unchecked runs as well, alternating with torch in --rounds rounds (so both see the
same machine load), and the table gives the median over the rounds of each and their ratio
torch / posenc (> 1: posenc faster). The binaries are run with OMP_NUM_THREADS=1 and
OPENBLAS_NUM_THREADS=1 (posenc's own threads, --posenc-threads, do the parallel work).
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import tempfile
import time

import torch


def t5_buckets(n, num_buckets=32, max_distance=128):
    """T5 bidirectional bucket of j - i for the n x n core (as posenc::tupe::bucket)."""
    ctx = torch.arange(n)[:, None]
    mem = torch.arange(n)[None, :]
    rel = mem - ctx
    nb = num_buckets // 2
    ret = (rel > 0).long() * nb
    a = rel.abs()
    max_exact = nb // 2
    is_small = a < max_exact
    large = max_exact + (torch.log(a.float().clamp(min=1) / max_exact) / math.log(max_distance / max_exact)
                         * (nb - max_exact)).long()
    large = torch.minimum(large, torch.full_like(large, nb - 1))
    return ret + torch.where(is_small, a, large)


def setup(n, dtype, d=768, heads=12, num_buckets=32, seed=1):
    g = torch.Generator().manual_seed(seed)
    randn = lambda *s: (torch.randn(*s, generator=g) * 0.02).to(dtype)
    p = dict(pos=randn(n + 1, d), ln_w=torch.ones(d, dtype=dtype), ln_b=torch.zeros(d, dtype=dtype),
             wq=randn(d, d), bq=torch.zeros(d, dtype=dtype), wk=randn(d, d), bk=torch.zeros(d, dtype=dtype),
             rel=randn(num_buckets + 1, heads))
    buckets = t5_buckets(n, num_buckets)
    p["bias"] = p["rel"][buckets].permute(2, 0, 1).contiguous()  # [H, n, n], precomputed once
    return p


def fast_path(p, n, d=768, heads=12, num_buckets=32):
    dh = d // heads
    scale = 1.0 / math.sqrt(2.0 * dh)
    x = torch.nn.functional.layer_norm(p["pos"][: n + 1], (d,), p["ln_w"], p["ln_b"], 1e-5)
    q = torch.nn.functional.linear(x, p["wq"], p["bq"]) * scale
    k = torch.nn.functional.linear(x, p["wk"], p["bk"])
    qh = q[1:].view(n, heads, dh).transpose(0, 1)
    kh = k[1:].view(n, heads, dh).transpose(0, 1)
    out = torch.baddbmm(p["bias"], qh, kh.transpose(1, 2))
    theta1 = (q[0] * k[0]).view(heads, dh).sum(-1) + p["rel"][num_buckets // 2]
    theta2 = (q[1] * k[1]).view(heads, dh).sum(-1) + p["rel"][num_buckets]
    out[:, :, 0] = theta2[:, None]
    out[:, 0, :] = theta1[:, None]
    return out


def time_torch(dtype_name, n, repeats, number):
    dtype = getattr(torch, dtype_name)
    p = setup(n, dtype)
    fast_path(p, n)  # warm-up
    if number == 0:
        t0 = time.perf_counter()
        fast_path(p, n)
        number = max(1, int(0.5 / max(time.perf_counter() - t0, 1e-6)))
    walls, cpus = [], []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(number):
            fast_path(p, n)
        walls.append((time.perf_counter() - w0) / number)
        cpus.append((time.process_time() - c0) / number)
    return statistics.median(walls), statistics.median(cpus)


def time_posenc(binary, dtypes, sizes, threads, repeats):
    """Median wall time (s) of BM_tupe_bias<T>/n/threads (the public call, validation included) and
    BM_tupe_bias_unchecked<T>/n/threads/0 per (kind, dtype, n), kind "checked" or "unchecked"."""
    ctype = {"float32": "float", "float64": "double"}
    # "/n/threads[/0]/" in this tree; older builds named them "/n/process_time" (one thread)
    filt = "BM_tupe_bias(_unchecked)?<(%s)>/(%s)/(%d/(0/)?)?process" % ("|".join(ctype[d] for d in dtypes),
                                                        "|".join(str(n) for n in sizes), threads)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([binary, "--benchmark_filter=" + filt, "--benchmark_out=" + f.name,
                        "--benchmark_out_format=json", "--benchmark_min_time=0.3",
                        "--benchmark_repetitions=%d" % repeats],
                       env=env, check=True, capture_output=True, text=True)
        report = json.load(f)
    runs = {}
    for b in report["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        name = b["run_name"]
        t = "float32" if "<float>" in name else "float64"
        n = int(name.split(">/")[1].split("/")[0])
        kind = "unchecked" if "_unchecked" in name else "checked"
        scale = {"ms": 1e-3, "us": 1e-6, "ns": 1e-9, "s": 1.0}[b["time_unit"]]
        runs.setdefault((kind, t, n), []).append(b["real_time"] * scale)
    return {key: statistics.median(v) for key, v in runs.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2],
                    help="torch.set_num_threads values; with several, each is timed and the faster taken "
                         "(OpenBLAS keeps its own threads, OPENBLAS_NUM_THREADS, in every case)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[512, 2048])
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--number", type=int, default=0, help="calls per repeat (0: about 0.5 s worth)")
    ap.add_argument("--posenc", nargs="*", default=[], help="bench_tupe / bench_tupe_blas binaries")
    ap.add_argument("--posenc-threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    print(f"torch {torch.__version__}, threads {args.threads}, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}")
    if not args.posenc:
        print(f"{'dtype':8} {'n':>5} {'threads':>7} {'wall ms':>9} {'cpu ms':>9} {'GFLOP/s (wall)':>15}")
        with torch.no_grad():
            for th in args.threads:
                torch.set_num_threads(th)
                for dt in args.dtypes:
                    for n in args.sizes:
                        wall, cpu = time_torch(dt, n, args.repeats, args.number)
                        flops = 4.0 * (n + 1) * 768 * 768 + 2.0 * n * n * 768
                        print(f"{dt:8} {n:5d} {th:7d} {wall * 1e3:9.2f} {cpu * 1e3:9.2f} {flops / wall / 1e9:15.1f}")
        return
    torch_t = {}
    posenc_t = {b: {} for b in args.posenc}
    for r in range(args.rounds):
        with torch.no_grad():
            for dt in args.dtypes:
                for n in args.sizes:
                    best = math.inf
                    for th in args.threads:
                        torch.set_num_threads(th)
                        best = min(best, time_torch(dt, n, args.repeats, args.number)[0])
                    torch_t.setdefault((dt, n), []).append(best)
        for b in args.posenc:
            for key, t in time_posenc(b, args.dtypes, args.sizes, args.posenc_threads, args.repeats).items():
                posenc_t[b].setdefault(key, []).append(t)
        print(f"round {r + 1}/{args.rounds} done, load average {os.getloadavg()[0]:.2f}", flush=True)
    print(f"{'dtype':8} {'n':>5} {'torch ms':>9} {'posenc binary':>22} {'call':>10} {'posenc ms':>10} "
          f"{'torch/posenc':>12}")
    for dt in args.dtypes:
        for n in args.sizes:
            tt = statistics.median(torch_t[(dt, n)])
            for b in args.posenc:
                for kind in ("checked", "unchecked"):
                    if (kind, dt, n) not in posenc_t[b]:
                        continue
                    pt = statistics.median(posenc_t[b][(kind, dt, n)])
                    print(f"{dt:8} {n:5d} {tt * 1e3:9.2f} {os.path.basename(b):>22} {kind:>10} {pt * 1e3:10.2f} "
                          f"{tt / pt:12.2f}")


if __name__ == "__main__":
    main()

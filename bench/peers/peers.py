#!/usr/bin/env python3
"""The Python peers of posenc's benchmarks, timed on the same sizes in one session.

What a user would otherwise run, written as they would write it:

* sinusoidal -- the Vaswani table [L, d] in numpy and in torch (angles, sin, cos, interleave),
                and the torch version under torch.compile (torch 2.x);
* floater    -- FLOATER's dynamics (the reference code's ReLU MLP with a time column on both
                layers, rk4 = 3/8 rule, step delta/5) through torchdiffeq: forward alone, and
                forward + backward by autograd through the steps, f32 and f64, 1 and 18 blocks;
* tupe       -- TUPE's positional term (LayerNorm, the two projections, per-head products, the
                T5 relative bias and the [CLS] reset) in torch: the fast path (the [H, n, n]
                relative bias gathered once, untimed; one baddbmm adds it), the same under
                torch.compile (torch 2.x), and the full module (buckets and gather in every
                call, as posenc's public call does); with bench_tupe_blas (a build with
                -DPOSENC_WITH_BLAS=ON: Eigen's products sent to the BLAS), the fast path again
                against that program (rows 'tupe_blas'; --blas-bench-dir if it is elsewhere);
* rope       -- RoPE on q and k [1, 32, 4096, 128], f32 and bf16: transformers' Llama
                apply_rotary_pos_emb (the rotate_half form; cos/sin from LlamaRotaryEmbedding,
                computed once and not timed, as the model does once per forward) eager and under
                torch.compile, and a torch copy of q and k into buffers of the same size;
                posenc's side: rotary::apply_inplace on q and k (half layout, finite check on)
                and its memcpy of the same bytes (BM_rope_dense / BM_copy);
* multiaxis  -- multi-axis RoPE in place on q and k of the models' real sizes, f32 and bf16:
                FLUX.1 at 1024 x 1024 (4608 tokens, 24 heads) and Wan 2.1 1.3B at 480p, 81 frames
                (32760 tokens, 12 heads), q and k [B, S, H, D], with diffusers 0.42's apply code
                (apply_rotary_emb; Wan's processor's own function), and Qwen2.5-VL-7B's M-RoPE
                (q 28 heads, k 4, 4096 tokens with a 1288-token image) with transformers'
                apply_rotary_pos_emb, eager and under torch.compile (tables computed once, not
                timed); posenc's side is timed in this process: torch.ops.posenc.axes_rope_ through
                posenc.layouts.AxesRope / MultiAxisRotaryEmbedding (the [B, S, H, D] tensors as
                transposed views), beside the in-place floor of the same run, q.mul_(1) and
                k.mul_(1) (the same bytes read and written by torch); needs posenc's package
                (pip install ./python) and diffusers on the path for the FLUX / Wan rows;
* decode     -- a decode step of Llama 3.1 (32 q heads, 8 kv heads, head_dim 128, one new token per
                sequence at position 5000 + b, B = 1, 8, 64 (--decode-batch), f32 and bf16, and
                a 1-head row for the fixed cost of a call): posenc.RotaryEmbedding.apply_ (its
                decode steps gather from posenc's shared table of exact coefficients) against
                transformers' LlamaRotaryEmbedding + apply_rotary_pos_emb (cos/sin in every call),
                each eager and under torch.compile; both sides timed here in Python, printed as
                their own table (posenc bitwise the exact per-position op, checked first);
* ggml       -- ggml's CPU RoPE (ggml_rope_ext_inplace, the call llama.cpp makes) on the same q and
                k, in ggml's two layouts (NORMAL = interleaved pairs, NEOX = half layout) and its two
                float types (f32, f16), from the ggml-python package (bench/peers/install-ggml.sh
                builds its vendored ggml from PyPI's source release with GGML_NATIVE=ON); posenc's
                side: BM_rope_tokens, q and k in ggml's token-major layout [S, H, D], the same
                pair layout and type, finite check on (ggml has none);
* toeplitz   -- B X for an n x n Toeplitz B and X [n, k]: scipy.linalg.matmul_toeplitz and the
                circulant-embedding product with torch.fft (rfft of B and X, product, irfft);
* fft        -- one complex transform of size N: numpy.fft, scipy.fft and torch.fft.

Every peer's arithmetic is checked before it is timed (the script stops if a check fails): the
tables and the RoPE outputs against float64 values from the exact angles, within a bound that the
peer's own float32 angles allow (stated in the output), the TUPE term against the same formula in
float64, every torch.compile result against its eager twin, the Toeplitz products against a
dense product.

Threads. Every peer row is timed under three thread settings and the fastest is reported with
its setting: torch intra-op threads x BLAS threads = 1 x 1, 1 x 2, 2 x 1 (--configs). The BLAS is
the one torch itself calls, found at run time and printed in the header:
  - torch from PyPI (2.x): Intel MKL, linked into libtorch_cpu.so; its threads are set with
    MKL_Set_Num_Threads_Local (mkl_set_num_threads_local in C, the call torch.set_num_threads makes itself), after
    torch.set_num_threads. numpy's and scipy's wheels bring their own OpenBLAS, which none of the
    timed numpy/scipy calls use (sin/cos and FFTs).
  - Debian's torch 1.13: OpenBLAS through libblas.so.3, set with openblas_set_num_threads.
A short check at the start measures, for each setting, on how many threads a GEMM and an
elementwise op actually run (per-thread CPU time from /proc/self/task), and prints it: with MKL,
setting its threads also sets the calling thread's OpenMP count, so 1 x 2 runs everything on
two threads (torch's default), and 2 x 1 runs elementwise ops on two and GEMMs on one.
torch.compile's C++ kernels are built for the intra-op thread count at compile time: each
compiled peer is compiled again for each torch thread count (torch._dynamo.reset()); compile time
is not timed.

With --bench-dir (the folder of posenc's benchmark programs, e.g. build/bench/bench) it also runs
posenc's matching Google Benchmark cases in the same session, right after the peers, and prints
each row with both figures and their ratio (peer time / posenc time: above 1 means posenc is
faster). Times are wall-clock medians; posenc uses --threads threads (the benchmarks' thread
argument, on posenc's own pool; the programs run with OMP_NUM_THREADS=1 so that Eigen does not
start threads of its own inside posenc's). posenc's Toeplitz products with k >= 16 columns run on
--threads threads (BM_product_fft_threads: product_plan::set_threads spreads the columns), with
one column (k = 1) and the single FFTs on one; scipy's FFT is single-threaded (workers=1),
torch.fft uses the setting's threads.

Not run by CI (it takes 15-20 minutes and needs an idle machine); run by hand, with torch 2.x from
the pinned venv of scripts/torch-venv.sh (torch, transformers, torchdiffeq, numpy, scipy):

    py="$(scripts/torch-venv.sh)/bin/python"
    "$py" bench/peers/peers.py --bench-dir build/bench/bench                        # everything
    "$py" bench/peers/peers.py --only rope --rope-shape 1 4 512 128 --reps 3        # one section, small
    PYTHONPATH=<diffusers> "$py" bench/peers/peers.py --only multiaxis --configs 1x1 --reps 3  # needs posenc's package
    "$py" bench/peers/peers.py --only decode --markdown decode.md                   # the decode steps
    "$(bench/peers/install-ggml.sh)/bin/python" bench/peers/peers.py --only ggml --bench-dir build/bench/bench

or with Debian's torch 1.13 (python3-torch, python3-scipy and torchdiffeq; no transformers and
no torch.compile there, so those rows are left out):

    /usr/bin/python3 bench/peers/peers.py --bench-dir build/bench/bench
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

sys.dont_write_bytecode = True  # no __pycache__ beside the script
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tupe_torch import t5_buckets  # noqa: E402  (T5's bucket of j - i, shared with that script)

ROWS = []  # dict(section, case, peer, peer_s, config, posenc filter, posenc_s)
NOTES = []  # dict(text, filters): posenc-only ratios printed under the table (e.g. RoPE / its copy)
CHECKS = []  # the peers' accuracy checks, as printed
CONFIGS = [(1, 1)]  # (torch intra-op threads, BLAS threads) tried for every peer row
BLAS = dict(name="?", detail="", set=None)  # the BLAS torch calls, found by find_blas()


def find_blas():
    """The BLAS torch itself calls and the function that sets its threads."""
    if torch.backends.mkl.is_available():  # torch from PyPI: MKL linked into libtorch_cpu.so
        detail = "MKL"
        for line in torch.__config__.show().splitlines():
            if "Math Kernel Library" in line:
                detail = line.strip(" -")
        try:
            lib = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))
            fn = lib.MKL_Set_Num_Threads_Local  # the C entry (the lower-case one is Fortran's, by reference)
            return dict(name="MKL", detail=detail, set=lambda n: fn(ctypes.c_int(n)))
        except (OSError, AttributeError):
            return dict(name="MKL", detail=detail + " (its thread count not reachable: set with torch's)", set=None)
    try:  # Debian: libblas.so.3 -> OpenBLAS when libopenblas is installed
        lib = ctypes.CDLL("libblas.so.3")
        lib.openblas_get_config.restype = ctypes.c_char_p
        detail = lib.openblas_get_config().decode()
        path = [l.split()[-1] for l in open("/proc/self/maps")
                if l.rsplit("/", 1)[-1].startswith(("libblas", "libopenblas"))]
        if path:
            detail += " (%s)" % os.path.realpath(path[0])
        return dict(name="OpenBLAS", detail=detail, set=lambda n: lib.openblas_set_num_threads(n))
    except (OSError, AttributeError):
        return dict(name="?", detail="torch's BLAS is neither MKL nor OpenBLAS: only torch's threads are varied",
                    set=None)


def set_config(torch_threads, blas_threads):
    torch.set_num_threads(torch_threads)  # sets the OpenMP team and (with MKL) MKL's threads too
    if BLAS["set"] is not None:
        BLAS["set"](blas_threads)  # after torch's call, which would undo it


def _task_ticks():
    """CPU time (clock ticks) of each thread of this process, from /proc/self/task."""
    ticks = {}
    for t in os.listdir("/proc/self/task"):
        try:
            f = open("/proc/self/task/%s/stat" % t).read().rsplit(")", 1)[1].split()
            ticks[t] = int(f[11]) + int(f[12])  # utime + stime
        except (OSError, IndexError, ValueError):
            pass
    return ticks


def threads_used(fn, seconds=0.5):
    """How many of this process's threads did a share (> 1/4 of the busiest's CPU time) of the work
    of fn, run repeatedly for `seconds`: unlike CPU time / wall time, this does not depend on how
    loaded the machine is."""
    fn()
    before, t0 = _task_ticks(), time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        fn()
    after = _task_ticks()
    d = sorted((after[t] - before.get(t, 0) for t in after), reverse=True)
    return sum(1 for x in d if x > 0.25 * d[0]) if d and d[0] > 0 else 0


def thread_check():
    """For each setting, the threads a GEMM (torch.mm 2048^2 f32) and an elementwise op (sin of
    16 M floats) run on: shows what each setting does with this torch and its BLAS."""
    if not os.path.isdir("/proc/self/task"):
        return "(not measured: no /proc/self/task)"
    a = torch.randn(2048, 2048)
    x = torch.randn(1 << 24)
    out = []
    for cfg in CONFIGS:
        set_config(*cfg)
        out.append("%d x %d: GEMM on %d thread(s), elementwise on %d"
                   % (cfg[0], cfg[1], threads_used(lambda: torch.mm(a, a)), threads_used(lambda: torch.sin(x))))
    return "; ".join(out)


def median_time(fn, reps, warmup=1, make=None):
    """The peer's best configuration: the median of `reps` runs under each of CONFIGS, the
    smallest of those medians, and the configuration that gave it. With `make`, the function
    timed under a setting is make() called after the setting is made (torch.compile's kernels
    are specialised on the thread count)."""
    best = None
    for cfg in CONFIGS:
        set_config(*cfg)
        f = make() if make is not None else fn
        if make is not None:
            set_config(*cfg)  # compiling may touch the thread state
        for _ in range(warmup):
            f()
        ts = []
        for _ in range(reps):
            t0 = time.perf_counter()
            f()
            ts.append(time.perf_counter() - t0)
        m = statistics.median(ts)
        if best is None or m < best[0]:
            best = (m, cfg)
    return best


HAVE_COMPILE = hasattr(torch, "compile")
_compiled = {}


def compiled(name, fn):
    """A `make` for median_time: fn under torch.compile, compiled for the torch thread count in
    force (once per count; torch._dynamo.reset() so that the new count is compiled, not the cached
    kernels of another). The compile runs in the first (warm-up) call and is not timed."""
    def make():
        key = (name, torch.get_num_threads())
        if key not in _compiled:
            torch._dynamo.reset()
            _compiled.clear()
            c = torch.compile(fn, dynamic=False)
            t0 = time.perf_counter()
            c()
            print("  (%s: torch.compile for %d thread(s) took %.1f s, not timed)"
                  % (name, key[1], time.perf_counter() - t0), flush=True)
            _compiled[key] = c
        return _compiled[key]
    return make


def check(section, case, peer, err, tol, what):
    """A peer's arithmetic against a reference, before it is timed: stops the run if it fails."""
    line = "check %-10s %-32s %-44s max error %.3g <= %.3g (%s)" % (section, case, peer, err, tol, what)
    CHECKS.append(line)
    print("  " + line, flush=True)
    if not err <= tol:
        sys.exit("peers.py: %s %s %s: error %.3g above the bound %.3g" % (section, case, peer, err, tol))


def row(section, case, peer, timing, posenc=None):
    seconds, cfg = timing
    ROWS.append(dict(section=section, case=case, peer=peer, peer_s=seconds, config=cfg, posenc=posenc))
    if seconds != seconds or section == "tupe_blas":  # --load: timed earlier; tupe_blas: a tupe row again
        return
    print("  %-10s %-44s %-44s %10.3f ms  (%s)" % (section, case, peer, seconds * 1e3, threads_label(section, cfg)),
          flush=True)


def threads_label(section, cfg):
    """A row's thread setting: ggml's own thread count, or torch threads x BLAS threads."""
    if section == "ggml":
        return "ggml on %d thread(s)" % cfg[0]
    return "torch %d, %s %d threads" % (cfg[0], BLAS["name"], cfg[1])


# ---- sinusoidal -------------------------------------------------------------------------------

U32 = 2.0 ** -24  # float32's unit roundoff


def angle_bound(pos, omega, ulps=4):
    """Per-element bound on |fl32 angle - exact angle| for angle = pos * omega formed in float32
    from an inverse frequency with relative error at most `ulps` u: (ulps + 1) u pos omega
    (u = 2^-24; the product's rounding is the + 1)."""
    return (ulps + 1) * U32 * pos * omega


def sinusoidal(args):
    for L, d in args.sinusoidal_sizes:
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

        # the check: every 257th row and the last against sin/cos of the exact angles in float64;
        # bound per element: the float32 angle's error (angle_bound) + 4 u for sin/cos themselves
        rows = np.unique(np.r_[np.arange(0, L, 257), L - 1])
        omega = 10000.0 ** (-np.arange(0, d, 2, dtype=np.float64) / d)
        ang = rows[:, None].astype(np.float64) * omega[None, :]
        ref = np.empty((len(rows), d))
        ref[:, 0::2], ref[:, 1::2] = np.sin(ang), np.cos(ang)
        bound = np.repeat(angle_bound(rows[:, None], omega[None, :]) + 4 * U32, 2, axis=1)

        def check_table(peer, table):
            t = np.asarray(table)[rows].astype(np.float64)
            check("sinusoidal", case, peer, float(np.max(np.abs(t - ref) / bound)), 1.0,
                  "|error| / (5 u pos omega + 4 u), sampled rows, against float64 sin/cos of exact angles")

        bench = "BM_table<float>/L:%d/d:%d/threads:%d/half:0$" % (L, d, args.threads)
        check_table("numpy", np_table())
        row("sinusoidal", case, "numpy", median_time(np_table, args.reps), bench)
        check_table("torch", torch_table())
        row("sinusoidal", case, "torch", median_time(torch_table, args.reps), bench)
        if HAVE_COMPILE:
            make = compiled("sinusoidal %s" % case, torch_table)
            set_config(*CONFIGS[0])  # the check's compile is the first setting's
            check_table("torch.compile", make()())
            row("sinusoidal", case, "torch.compile", median_time(None, args.reps, make=make), bench)
            _compiled.clear()


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


def floater_reference(flow, p0, L, delta, substeps=5):
    """rk4 by the 3/8 rule (torchdiffeq's "rk4"), `substeps` steps per interval, written out: the
    check of torchdiffeq's forward."""
    h = delta / substeps
    y, out = p0, [p0]
    with torch.no_grad():
        for j in range(L - 1):
            for m in range(substeps):
                t = j * delta + m * h
                k1 = flow(t, y)
                k2 = flow(t + h / 3, y + h * k1 / 3)
                k3 = flow(t + 2 * h / 3, y + h * (k2 - k1 / 3))
                k4 = flow(t + h, y + h * (k1 - k2 + k3))
                y = y + h * (k1 + 3 * (k2 + k3) + k4) / 8
            out.append(y)
    return torch.stack(out)


def floater(args):
    from torchdiffeq import odeint
    d, L, delta = 512, args.floater_L, 0.01
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
            if blocks == args.blocks[0] and dt == torch.float64:
                ref = floater_reference(flow, p0, L, delta)
                err = float((fwd() - ref).abs().max() / ref.abs().max())
                check("floater", case, "torchdiffeq odeint", err, 1e-9,
                      "relative to max |p|, against rk4 (3/8 rule) written out in float64")
            T = "float" if dt_name == "f32" else "double"
            reps = args.floater_reps  # each run takes seconds: no warm-up run per configuration
            row("floater", "forward " + case, "torchdiffeq odeint", median_time(fwd, reps, warmup=0),
                "BM_floater_forward<%s>/N:%d/L:%d/threads:%d/stage_MiB:256$" % (T, blocks, L, args.threads))
            row("floater", "fwd+bwd " + case, "torchdiffeq autograd", median_time(fwd_bwd, reps, warmup=0),
                "BM_floater_forward_backward<%s>/N:%d/L:%d/threads:%d/stage_MiB:256$" % (T, blocks, L, args.threads))


# ---- TUPE -------------------------------------------------------------------------------------

def tupe(args):
    d, H, nb = 768, 12, 32
    for n in args.tupe_n:
        torch.manual_seed(0)
        base = dict(pos_w=torch.randn(n + 1, d, dtype=torch.float64), ln_w=torch.ones(d, dtype=torch.float64),
                    ln_b=torch.zeros(d, dtype=torch.float64),
                    qw=torch.randn(d, d, dtype=torch.float64) / d ** 0.5,
                    kw=torch.randn(d, d, dtype=torch.float64) / d ** 0.5,
                    qb=torch.zeros(d, dtype=torch.float64), kb=torch.zeros(d, dtype=torch.float64),
                    rel_w=torch.randn(nb + 1, H, dtype=torch.float64))
        scaling = float(d / H * 2) ** -0.5

        def buckets():
            b = t5_buckets(n, nb)
            b[:, 0] = nb
            b[0, :] = nb // 2
            return b

        def build(dt, stored):
            """The fast path and the full module in dtype dt, on the parameters rounded to `stored`."""
            P = {key: v.to(stored).to(dt) for key, v in base.items()}
            # the fast path's [H, n, n] relative bias, gathered once outside the timing
            bias = torch.nn.functional.embedding(buckets(), P["rel_w"]).permute(2, 0, 1).contiguous()

            def term(rel):
                w = torch.nn.functional.layer_norm(P["pos_w"][: n + 1], (d,), P["ln_w"], P["ln_b"], 1e-5)
                q = torch.nn.functional.linear(w, P["qw"], P["qb"]).view(n + 1, H, -1).transpose(0, 1) * scaling
                k = torch.nn.functional.linear(w, P["kw"], P["kb"]).view(n + 1, H, -1).transpose(0, 1)
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
                    return term(torch.nn.functional.embedding(buckets(), P["rel_w"]).permute(2, 0, 1))
            return fast, full

        for dt_name, dt in (("f32", torch.float32), ("f64", torch.float64)):
            fast, full = build(dt, dt)
            T = "float" if dt_name == "f32" else "double"
            case = "bias n=%d d=%d H=%d, %s" % (n, d, H, dt_name)
            bench = "BM_tupe_bias<%s>/%d/%d$" % (T, n, args.threads)
            # checks: the fast path against the full module (the bias gathered in the call) and
            # against the same term in float64 from the same (rounded) parameters
            out = fast()
            scale = float(out.abs().max())
            check("tupe", case, "torch fast path", float((full() - out).abs().max()) / scale,
                  1e-6 if dt == torch.float32 else 1e-13, "relative to max |bias|, against the full module")
            if dt == torch.float32:
                ref = build(torch.float64, torch.float32)[0]()
                check("tupe", case, "torch fast path", float((out.double() - ref).abs().max()) / scale, 1e-4,
                      "relative to max |bias|, against float64 on the same parameters (sums of 768 products)")
            fast_time = median_time(fast, args.reps)
            row("tupe", case, "torch fast path", fast_time, bench)
            # the same peer time against posenc::blas (bench_tupe_blas: Eigen's products sent to
            # the BLAS, -DPOSENC_WITH_BLAS=ON), when that program is found
            row("tupe_blas", case, "torch fast path", fast_time, bench)
            if HAVE_COMPILE:
                make = compiled("tupe %s" % case, fast)
                set_config(*CONFIGS[0])  # the check's compile is the first setting's
                err = float((make()() - out).abs().max()) / scale
                check("tupe", case, "torch.compile fast path", err, 1e-5 if dt == torch.float32 else 1e-13,
                      "relative to max |bias|, against the eager fast path")
                row("tupe", case, "torch.compile fast path", median_time(None, args.reps, make=make), bench)
                _compiled.clear()
            row("tupe", case, "torch full", median_time(full, args.reps), bench)


# ---- RoPE -------------------------------------------------------------------------------------

def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rope(args):
    B, H, S, D = args.rope_shape
    theta = 500000.0  # as bench/rotary_apply.bench.cpp (Llama 3's base)
    try:
        from transformers import LlamaConfig
        from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb
    except ImportError as e:
        print("  rope: transformers is not importable here (%s): no RoPE peer rows" % e, flush=True)
        return
    cfg = LlamaConfig(hidden_size=H * D, num_attention_heads=H, head_dim=D, rope_theta=theta,
                      max_position_embeddings=S)
    hf_rot = LlamaRotaryEmbedding(cfg)
    omega = theta ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)
    if float((hf_rot.inv_freq.double() / omega - 1).abs().max()) > 4 * U32:
        sys.exit("peers.py: transformers' inverse frequencies are not theta^(-2i/D) with theta = %g" % theta)
    pos = torch.arange(S)
    # exact angles [S, D] (each frequency twice, as rotate_half pairs i with i + D/2) and the
    # per-element bound on the float32 angle's error (angle_bound)
    ang = pos[:, None].double() * torch.cat([omega, omega])[None, :]
    dtheta = torch.as_tensor(angle_bound(pos[:, None].double().numpy(), torch.cat([omega, omega])[None, :].numpy()))
    cos_x, sin_x = ang.cos(), ang.sin()
    for dt_name, dt, T, c in (("f32", torch.float32, "float", 8 * U32),
                              ("bf16", torch.bfloat16, "Eigen::bfloat16", 4 * 2.0 ** -8)):
        case = "q,k [%d,%d,%d,%d] half layout, %s" % (B, H, S, D, dt_name)
        torch.manual_seed(0)
        q, k = torch.randn(B, H, S, D).to(dt), torch.randn(B, H, S, D).to(dt)
        with torch.no_grad():
            cos, sin = hf_rot(q, pos[None])  # [1, S, D] in dt, once per forward in the model: not timed

        def hf():
            with torch.no_grad():
                return apply_rotary_pos_emb(q, k, cos, sin)

        def check_rope(peer, outs):
            # |error| per element against the rotation by the exact angles in float64, over the
            # bound |pair| (dtheta + c): dtheta for the float32 angle, c for the rounding of cos, sin,
            # the two products and the sum (c = 8 u in f32; 4 * 2^-8 in bf16, where cos and sin are
            # stored in bf16 and every operation rounds to it)
            worst = 0.0
            for x, y in zip((q, k), outs):
                for h in range(H):
                    xh, yh = x[:, h].double(), y[:, h].double()
                    ref = xh * cos_x + rotate_half(xh) * sin_x
                    pair = torch.sqrt(xh ** 2 + rotate_half(xh) ** 2)
                    worst = max(worst, float(((yh - ref).abs() / (pair * (dtheta + c) + 1e-300)).max()))
            check("rope", case, peer, worst, 1.0,
                  "|error| / (|pair| (5 u pos omega + %.2g)) against float64 rotation by exact angles" % c)

        bench = "BM_rope_dense<%s>/half_layout:1/check:1/threads:%d$" % (T, args.threads)
        copy = "BM_copy<%s>/threads:%d$" % (T, args.threads)
        check_rope("transformers apply_rotary_pos_emb", hf())
        row("rope", case, "transformers apply_rotary_pos_emb", median_time(hf, args.reps, warmup=2), bench)
        if HAVE_COMPILE:
            make = compiled("rope %s" % dt_name, lambda: apply_rotary_pos_emb(q, k, cos, sin))
            set_config(*CONFIGS[0])  # the check's compile is the first setting's
            with torch.no_grad():
                check_rope("transformers torch.compile", make()())
            row("rope", case, "transformers torch.compile", median_time(None, args.reps, warmup=2, make=make),
                bench)
            _compiled.clear()
        q2, k2 = torch.empty_like(q), torch.empty_like(k)

        def copy_qk():
            q2.copy_(q)
            k2.copy_(k)

        row("rope", "copy " + case, "torch copy_ of q, k", median_time(copy_qk, args.reps, warmup=2), copy)
        NOTES.append(dict(text="rope %s: posenc RoPE in place / posenc copy of the same bytes" % dt_name,
                          section="rope", num=bench, den=copy))
        del q, k, q2, k2, cos, sin


# ---- multi-axis RoPE: FLUX, Wan (diffusers) and Qwen2.5-VL's M-RoPE (transformers) ------------

def multiaxis(args):
    """posenc's multi-axis rotation in place (torch.ops.posenc.axes_rope_, posenc.layouts) on q and k
    of the models' real sizes, beside the peers' own apply code (eager and torch.compile, their
    cos/sin tables computed once and not timed, as the models do once per forward) and the in-place
    floor of the same run: q.mul_(1) and k.mul_(1), the same bytes read and written by torch."""
    try:
        import posenc
        from posenc import layouts
    except ImportError as e:
        print("  multiaxis: posenc's Python package is not importable here (%s): no rows" % e, flush=True)
        return
    cases = []
    try:
        from diffusers.models.embeddings import apply_rotary_emb
    except ImportError as e:
        print("  multiaxis: diffusers is not importable here (%s): no FLUX / Wan rows" % e, flush=True)
    else:
        # FLUX.1 at 1024 x 1024: 512 + 64 x 64 tokens, 24 heads of 128, q and k [B, S, H, D] (its
        # attention processor's layout; diffusers' apply_rotary_emb with sequence_dim=1)
        ids = layouts.flux_ids(512, 64, 64)
        flux = layouts.FluxPosEmbed(10000, [16, 56, 56])
        cs = flux(ids)

        def flux_peer(q, k, cs=cs):
            return apply_rotary_emb(q, cs, sequence_dim=1), apply_rotary_emb(k, cs, sequence_dim=1)

        cases.append(("flux", "FLUX.1 1024x1024 q,k [1,4608,24,128] bshd", (1, 4608, 24, 128), ids.t().contiguous(),
                      layouts.AxesRope("flux"), flux_peer, "diffusers apply_rotary_emb"))
        # Wan 2.1 T2V 1.3B at 480 x 832, 81 frames: 21 x 30 x 52 = 32760 tokens, 12 heads of 128, q and k
        # [B, S, H, D]; WanAttnProcessor's apply_rotary_emb (a local function there, written out here)
        wan = layouts.WanRotaryPosEmbed(128, (1, 2, 2), 1024)
        wc, ws = wan(torch.zeros(1, 1, 21, 60, 104))

        def wan_apply(x, fc=wc, fs=ws):
            x1, x2 = x.unflatten(-1, (-1, 2)).unbind(-1)
            cos, sin = fc[..., 0::2], fs[..., 1::2]
            out = torch.empty_like(x)
            out[..., 0::2] = x1 * cos - x2 * sin
            out[..., 1::2] = x1 * sin + x2 * cos
            return out.type_as(x)

        cases.append(("wan", "Wan 2.1 480p 81 frames q,k [1,32760,12,128] bshd", (1, 32760, 12, 128),
                      wan.positions(21, 60, 104), layouts.AxesRope("wan", [128]),
                      lambda q, k: (wan_apply(q), wan_apply(k)), "diffusers Wan apply_rotary_emb"))
    try:
        from transformers import AutoConfig
        from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import Qwen2_5_VLRotaryEmbedding
        from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import apply_rotary_pos_emb as qwen_apply
    except ImportError as e:
        print("  multiaxis: transformers' Qwen2.5-VL is not importable here (%s): no M-RoPE rows" % e, flush=True)
    else:
        # Qwen2.5-VL-7B's text model: 28 heads of 128 (q; k has 4), M-RoPE sections (16, 24, 24), theta
        # 1e6; a prompt of 4096 tokens: text, a 1288-token image (grid 1 x 46 x 112), text
        cfg = AutoConfig.for_model("qwen2_5_vl", text_config=dict(
            hidden_size=3584, num_attention_heads=28, num_key_value_heads=4, rope_parameters=dict(
                rope_type="default", rope_theta=1000000.0, mrope_section=[16, 24, 24])))
        tt = (torch.arange(4096) >= 100) & (torch.arange(4096) < 100 + 1288)
        pos, _ = posenc.get_rope_index(tt.long()[None], torch.tensor([[1, 46, 112]]))
        rot = posenc.MultiAxisRotaryEmbedding(cfg)
        hf_rot = Qwen2_5_VLRotaryEmbedding(cfg.text_config)

        def qwen_peer(q, k):
            return qwen_apply(q, k, *qwen_cs[q.dtype])

        qwen_cs = {}
        cases.append(("qwen2_5_vl", "Qwen2.5-VL M-RoPE q [1,28,4096,128], k [1,4,4096,128]", None, pos,
                      rot, qwen_peer, "transformers apply_rotary_pos_emb"))

    for key, name, shape, pos, rope, peer, peer_name in cases:
        if key not in args.multiaxis_cases:
            continue
        for dt_name, dt, tol in (("f32", torch.float32, 2.0 ** -20), ("bf16", torch.bfloat16, 2.0 ** -6)):
            case = "%s, %s" % (name, dt_name)
            torch.manual_seed(0)
            if shape is None:  # Qwen2.5-VL: [B, H, S, D], GQA
                q, k = torch.randn(1, 28, 4096, 128).to(dt), torch.randn(1, 4, 4096, 128).to(dt)
                with torch.no_grad():
                    qwen_cs[dt] = hf_rot(q, pos)
                view = lambda x: x  # noqa: E731
            else:
                q, k = torch.randn(*shape).to(dt), torch.randn(*shape).to(dt)
                view = lambda x: x.transpose(1, 2)  # noqa: E731  [B, S, H, D] -> [B, H, S, D] view
            nbytes = 2 * (q.numel() + k.numel()) * q.element_size()
            # the check: the peer's and posenc's outputs against posenc's rotation in float64
            with torch.no_grad():
                ref = [view(rope(view(x.double()), None, pos)[0]) for x in (q, k)]
                outs = peer(q, k)
                err = max(float((o.double() - r).abs().max() / x.abs().max()) for o, r, x in zip(outs, ref, (q, k)))
                # transformers forms Qwen's angles p omega in float32: off by up to ~2 p 2^-24 rad
                # (diffusers' tables are posenc's, bit for bit: the FLUX / Wan peers get posenc's bound)
                ptol = tol + (float(pos.max()) * 2.0 ** -22 if key == "qwen2_5_vl" else 0.0)
                check("multiaxis", case, peer_name, err, ptol, "max |peer - float64 rotation| / max |x|")
                q2, k2 = q.clone(), k.clone()
                rope.apply_(view(q2), view(k2), pos)
                err = max(float((o.double() - r).abs().max() / x.abs().max()) for o, r, x in zip((q2, k2), ref, (q, k)))
                check("multiaxis", case, "posenc axes_rope_", err, tol, "max |posenc - float64 rotation| / max |x|")
                del ref, outs, q2, k2

            def posenc_inplace():
                rope.apply_(view(q), view(k), pos)

            def floor():
                q.mul_(1)
                k.mul_(1)

            t_posenc = median_time(posenc_inplace, args.reps, warmup=1)
            t_floor = median_time(floor, args.reps, warmup=1)
            with torch.no_grad():
                for pname, timing in (
                        (peer_name, median_time(lambda: peer(q, k), args.reps, warmup=1)),
                        ("torch q.mul_(1), k.mul_(1) (in-place floor)", t_floor)):
                    row("multiaxis", case + " (%.0f MB moved)" % (nbytes / 1e6), pname, timing)
                    ROWS[-1]["posenc_s"] = t_posenc[0]
                if HAVE_COMPILE and not args.no_compile:
                    make = compiled("multiaxis %s %s" % (key, dt_name), lambda: peer(q, k))
                    row("multiaxis", case + " (%.0f MB moved)" % (nbytes / 1e6), peer_name + " torch.compile",
                        median_time(None, args.reps, warmup=1, make=make))
                    ROWS[-1]["posenc_s"] = t_posenc[0]
                    _compiled.clear()
                    torch._dynamo.reset()
            NOTES.append(dict(text="multiaxis %s: posenc in place %.3f ms / in-place floor %.3f ms = %.2f× "
                              "(%.0f MB read and written)" % (case, t_posenc[0] * 1e3, t_floor[0] * 1e3,
                                                             t_posenc[0] / t_floor[0], nbytes / 1e6),
                              section="multiaxis", num=None, den=None))
            del q, k
# ---- decode: RoPE of one new token per sequence, from Python ---------------------------------------

DECODE = []  # the decode section's lines (posenc's side timed here too, in Python)


def decode(args):
    """A decode step of a Llama 3.1 model (32 q heads, 8 kv heads, head_dim 128, llama3 rule, base
    500000), one new token per sequence at positions 5000 + b, q [B, 32, 1, 128] and k
    [B, 8, 1, 128]: posenc.RotaryEmbedding.apply_ (in place; decode steps gather from the shared
    table, made once before timing) against transformers' LlamaRotaryEmbedding (cos/sin of the
    positions, computed in every call) + apply_rotary_pos_emb, each eager and under torch.compile.
    Work: the bytes of q and k read and written, 2 (32 + 8) 128 B x element size. The 1-head row
    (q, k [1, 1, 1, 128]) is the fixed cost of a call."""
    try:
        from transformers import LlamaConfig
        from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb
        import posenc
    except ImportError as e:
        print("  decode: transformers or posenc is not importable here (%s): no decode rows" % e, flush=True)
        return
    D = 128
    rp = {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
          "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}
    shapes = [(b, 32, 8) for b in args.decode_batch] + [(1, 1, 1)]
    for B, Hq, Hk in shapes:
        cfg = LlamaConfig(hidden_size=Hq * D, num_attention_heads=Hq, num_key_value_heads=Hk, head_dim=D,
                          max_position_embeddings=131072, rope_parameters=rp)
        hf_rot = LlamaRotaryEmbedding(cfg)
        rot = posenc.RotaryEmbedding(cfg)
        pos = (5000 + torch.arange(B))[:, None]
        for dt_name, dt in (("f32", torch.float32), ("bf16", torch.bfloat16)):
            case = "q [%d,%d,1,%d] k [%d,%d,1,%d] %s at 5000" % (B, Hq, D, B, Hk, D, dt_name)
            torch.manual_seed(0)
            q, k = torch.randn(B, Hq, 1, D).to(dt), torch.randn(B, Hk, 1, D).to(dt)
            work = 2 * (Hq + Hk) * B * D * q.element_size()

            def hf(q=q, k=k, pos=pos):
                with torch.no_grad():
                    cos, sin = hf_rot(q, pos)
                    return apply_rotary_pos_emb(q, k, cos, sin)

            def pe(q=q, k=k, pos=pos):
                with torch.no_grad():
                    return rot.apply_(q, k, position_ids=pos)

            # checks: posenc bitwise the exact per-position op; transformers within its float32
            # angle's bound of posenc's exact rotation (|pair| (9 u pos omega + c), c as in rope)
            freqs = torch.ops.posenc.rope_frequencies_at(pos, rot.config_text, rot.pairs)
            qe = q.clone()
            torch.ops.posenc.rope_(qe, freqs, rot.attention_factor, pos)
            qd = q.clone()
            for _ in range(2):  # the second call makes the table
                qd.copy_(q)
                rot.apply_(qd, position_ids=pos)
            check("decode", case, "posenc apply_ == exact rope_", float((qd.view(torch.uint8) != qe.view(torch.uint8))
                                                                        .sum()), 0, "bytes that differ")
            qh = hf()[0].double()
            omega = torch.cat([rot.inv_freq, rot.inv_freq])
            x = q.double()
            pair = torch.sqrt(x ** 2 + rotate_half(x) ** 2)
            c = 8 * U32 if dt == torch.float32 else 4 * 2.0 ** -8
            bound = pair * (torch.as_tensor(angle_bound(pos[:, None, :, None].double().numpy(), omega.numpy(), 8)) + c)
            check("decode", case, "transformers", float(((qh - qe.double()).abs() / (bound + 1e-300)).max()), 1.0,
                  "|hf - exact| / (|pair| (9 u pos omega + %.2g))" % c)
            t = {}
            t["transformers eager"] = median_time(hf, args.reps, warmup=3)
            t["posenc eager"] = median_time(pe, args.reps, warmup=3)
            if HAVE_COMPILE:
                t["transformers torch.compile"] = median_time(None, args.reps, warmup=3,
                                                              make=compiled("decode hf " + case, hf))
                _compiled.clear()
                t["posenc torch.compile"] = median_time(None, args.reps, warmup=3,
                                                        make=compiled("decode posenc " + case, pe))
                _compiled.clear()
            for peer in ("transformers eager", "transformers torch.compile"):
                if peer in t:
                    row("decode", case, peer, t[peer])
            us = {n: v[0] * 1e6 for n, v in t.items()}
            best_hf = min(v for n, v in us.items() if n.startswith("transformers"))
            line = ("| %d | %d, %d | %s | %s | %s | %s | %s | %.2f× | %.1f |" % (
                B, Hq, Hk, dt_name,
                "%.1f" % us["posenc eager"], "%.1f" % us["posenc torch.compile"] if "posenc torch.compile" in us else "—",
                "%.1f" % us["transformers eager"],
                "%.1f" % us["transformers torch.compile"] if "transformers torch.compile" in us else "—",
                best_hf / max(us["posenc eager"], 1e-9), work / 1024.0))
            DECODE.append(line)
            print("  decode " + line, flush=True)
    print("  decode cache after the section: %s" % posenc.rope_cache_info(), flush=True)


# ---- ggml's CPU RoPE --------------------------------------------------------------------------

def ggml(args):
    """ggml's CPU RoPE (ggml_rope_ext_inplace, as llama.cpp calls it) on q and k, in both of its
    layouts (NORMAL: interleaved pairs; NEOX: the half layout) and both of its float types, through
    the ggml-python package (bench/peers/install-ggml.sh builds its vendored ggml with
    GGML_NATIVE=ON). ggml orders q and k token-major, [S, H, D] (ne = D, H, S); posenc's side is
    BM_rope_tokens, the same layout (one ragged sequence), bytes and work. Timed with ggml's own thread count (1 and --threads; the
    fastest is reported); a graph of the two in-place nodes is built once and computed per call."""
    try:
        import ggml as gg
        import ggml.utils as ggu
    except ImportError as e:
        print("  ggml: ggml-python is not importable here (%s): no ggml rows "
              "(bench/peers/install-ggml.sh installs it)" % e, flush=True)
        return
    B, H, S, D = args.rope_shape
    if B != 1:
        sys.exit("peers.py: the ggml rows take --rope-shape with B = 1")
    theta = 500000.0
    half = D // 2
    omega = theta ** (-np.arange(half, dtype=np.float64) * 2 / D)
    pos = np.arange(S, dtype=np.float64)
    ang = pos[:, None, None] * omega[None, None, :]  # [S, 1, D/2]
    cos_x, sin_x = np.cos(ang), np.sin(ang)
    # ggml's angle for pair i is pos * s^i, s = powf(base, -2/D) (within 1 ulp = 2u of the exact
    # value), the power formed by i float multiplications: relative error at most (3 i + 2) u to
    # first order; cosf, sinf, the two products and the sum add at most c |pair|
    dtheta = (3 * np.arange(half)[None, None, :] + 2) * U32 * ang
    for dt_name, np_dt, gtype, T, c in (("f32", np.float32, gg.GGML_TYPE_F32, "float", 8 * U32),
                                        ("f16", np.float16, gg.GGML_TYPE_F16, "Eigen::half", 4 * 2.0 ** -11)):
        rng = np.random.default_rng(0)
        q0 = rng.standard_normal((S, H, D)).astype(np_dt)
        k0 = rng.standard_normal((S, H, D)).astype(np_dt)
        nbytes = 2 * q0.nbytes + S * 4
        params = gg.ggml_init_params(mem_size=nbytes + 64 * gg.ggml_tensor_overhead() + gg.ggml_graph_overhead()
                                     + (1 << 20), mem_buffer=None, no_alloc=False)
        for mode, layout in ((0, "interleaved"), (gg.GGML_ROPE_TYPE_NEOX, "half layout")):
            case = "q,k [%d,%d,%d,%d] %s, %s" % (B, H, S, D, layout, dt_name)
            ctx = gg.ggml_init(params)
            if not ctx:
                sys.exit("peers.py: ggml_init failed for %d bytes" % params.mem_size)
            tq, tk = ggu.from_numpy(q0, ctx), ggu.from_numpy(k0, ctx)
            tpos = ggu.from_numpy(np.arange(S, dtype=np.int32), ctx)
            gf = gg.ggml_new_graph(ctx)
            for t in (tq, tk):
                gg.ggml_build_forward_expand(gf, gg.ggml_rope_ext_inplace(
                    ctx, t, tpos, None, D, mode, 0, theta, 1.0, 0.0, 1.0, 0.0, 0.0))
            gg.ggml_graph_compute_with_ctx(ctx, gf, 1)
            worst = plain = 0.0
            for x0, t in ((q0, tq), (k0, tk)):
                x, y = x0.astype(np.float64), ggu.to_numpy(t).astype(np.float64)
                for h0 in range(0, H, 8):  # 8 heads at a time: [S, 8, D] in float64
                    xs, ys = x[:, h0:h0 + 8], y[:, h0:h0 + 8]
                    if mode == 0:
                        a, b, ya, yb = xs[..., 0::2], xs[..., 1::2], ys[..., 0::2], ys[..., 1::2]
                    else:
                        a, b, ya, yb = xs[..., :half], xs[..., half:], ys[..., :half], ys[..., half:]
                    err = np.maximum(np.abs(ya - (a * cos_x - b * sin_x)), np.abs(yb - (a * sin_x + b * cos_x)))
                    pair = np.sqrt(a * a + b * b) + 1e-300
                    worst = max(worst, float((err / (pair * (dtheta + c))).max()))
                    plain = max(plain, float((err / pair).max()))
            check("ggml", case, "ggml_rope_ext_inplace", worst, 1.0,
                  "|error| / (|pair| ((3 i + 2) u pos omega_i + %.2g)) against float64 rotation by exact angles; "
                  "max |error| / |pair| = %.3g" % (c, plain))
            best = (float("nan"), (0, 0)) if args.load else None  # --load: timed earlier
            for n in ([] if args.load else sorted({1, args.threads})):
                for _ in range(2):
                    gg.ggml_graph_compute_with_ctx(ctx, gf, n)
                ts = []
                for _ in range(args.reps):
                    t0 = time.perf_counter()
                    gg.ggml_graph_compute_with_ctx(ctx, gf, n)
                    ts.append(time.perf_counter() - t0)
                m = statistics.median(ts)
                if best is None or m < best[0]:
                    best = (m, (n, 0))
            gg.ggml_free(ctx)
            bench = "BM_rope_tokens<%s>/half_layout:%d/threads:%d$" % (T, int(mode != 0), args.threads)
            row("ggml", case, "ggml_rope_ext_inplace", best, bench)
            NOTES.append(dict(text="%s %s, ggml's layout [S, H, D]: posenc RoPE in place / posenc copy of the same bytes"
                              % (layout, dt_name), section="ggml", num=bench,
                              den="BM_copy<%s>/threads:%d$" % (T, args.threads)))


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
                # posenc's product on --threads threads (product_plan::set_threads; the torch.fft
                # peer runs its transforms on as many): one column is one thread's work
                bench = ("BM_product_fft<%s>/%d/%d$" % (T, n, k) if k == 1 else
                         "BM_product_fft_threads<%s>/n:%d/k:%d/threads:%d$" % (T, n, k, args.threads))
                if n <= 4096:  # against the dense product in float64 (128 MiB at n = 4096)
                    ref = scipy.linalg.toeplitz(c.astype(np.float64), r.astype(np.float64)) @ X.astype(np.float64)
                    # FFT products: |error| <= a few u log2(P) |b|_2 |x|_2 per column (u of the type)
                    u = float(np.finfo(dt).eps) / 2
                    bound = 8 * u * math.log2(P) * np.linalg.norm(emb) * np.linalg.norm(X.astype(np.float64), axis=0)
                    for peer, y in (("scipy matmul_toeplitz", scipy.linalg.matmul_toeplitz((c, r), X)),
                                    ("torch.fft", torch_fft().numpy().T)):
                        check("toeplitz", case, peer, float(np.max(np.abs(y - ref) / bound[None, :])), 1.0,
                              "|error| / (8 u log2(P) |b| |x_j|), against the dense product in float64")
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
        # against a DFT summed in float64 (exp(-2 pi i jk/N) from jk mod N: exact angles), rows sampled
        j = np.arange(0, n, max(1, n // 64))
        ref = np.exp(-2j * np.pi * ((j[:, None] * np.arange(n)[None, :]) % n) / n) @ x
        bound = (n + 8 * math.log2(n)) * 2.0 ** -53 * np.abs(x).sum()  # the DFT sum's worst case dominates
        for peer, y in (("numpy.fft.fft", np.fft.fft(x)), ("scipy.fft.fft", scipy.fft.fft(x)),
                        ("torch.fft.fft", torch.fft.fft(xt).numpy())):
            check("fft", case, peer, float(np.max(np.abs(y[j] - ref))) / bound, 1.0,
                  "|error| / ((N + 8 log2 N) u |x|_1), sampled outputs, against a float64 DFT")
        row("fft", case, "numpy.fft.fft", median_time(lambda: np.fft.fft(x), args.reps * 5), bench)
        row("fft", case, "scipy.fft.fft", median_time(lambda: scipy.fft.fft(x), args.reps * 5), bench)
        row("fft", case, "torch.fft.fft", median_time(lambda: torch.fft.fft(xt), args.reps * 5), bench)


# ---- posenc's side: its Google Benchmark programs, run in this session ------------------------

PROGRAMS = {"sinusoidal": "bench_sinusoidal", "floater": "bench_floater", "tupe": "bench_tupe",
            "tupe_blas": "bench_tupe_blas", "rope": "bench_rotary_apply", "ggml": "bench_rotary_apply", "toeplitz": "bench_toeplitz", "fft": "bench_toeplitz"}


def suffixed(f):
    """A row's filter also matches the name Google Benchmark gives it with /real_time and the like."""
    return f[:-1] + "(/[a-z_]+)*$" if f.endswith("$") else f


def posenc_times(args, section, filters):
    exe = os.path.join(args.blas_bench_dir or args.bench_dir if section == "tupe_blas" else args.bench_dir,
                       PROGRAMS[section])
    if not os.path.exists(exe):
        print("posenc: %s not found; build with -DPOSENC_BUILD_BENCHMARKS=ON%s"
              % (exe, " -DPOSENC_WITH_BLAS=ON (or pass --blas-bench-dir)" if section == "tupe_blas" else ""),
              file=sys.stderr)
        return {}
    pattern = "|".join("^" + suffixed(f) for f in sorted(set(filters)))
    # posenc's benchmarks take their thread count as an argument and run it on posenc's own pool;
    # OpenMP (Eigen's GEMM) and OpenBLAS threads inside those would oversubscribe the cores
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([exe, "--benchmark_filter=" + pattern, "--benchmark_format=json",
                                   "--benchmark_repetitions=%d" % args.reps, "--benchmark_min_time=0.05",
                                   "--benchmark_report_aggregates_only=true"], env=env, text=True,
                         stdout=subprocess.PIPE).stdout
    if "{" not in out:
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


def versions(args):
    """The session's header: machine, load, and every version that the figures depend on."""
    cpu = platform.processor() or "?"
    try:
        cpu = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")][0]
    except (OSError, IndexError):
        pass
    v = {"Python": platform.python_version(), "torch": torch.__version__,
         "torch's BLAS": "%s: %s" % (BLAS["name"], BLAS["detail"]), "numpy": np.__version__,
         "scipy": scipy.__version__}
    if hasattr(torch.backends, "cpu") and hasattr(torch.backends.cpu, "get_cpu_capability"):
        v["torch CPU kernels"] = torch.backends.cpu.get_cpu_capability()
    for mod in ("torchdiffeq", "transformers"):
        try:
            v[mod] = __import__(mod).__version__
        except ImportError:
            v[mod] = "not installed"
    cxx = "g++"
    if args.bench_dir:  # the compiler posenc's benchmarks were built with
        try:
            cache = os.path.join(args.bench_dir, os.pardir, "CMakeCache.txt")
            cxx = [l.split("=", 1)[1].strip() for l in open(cache) if l.startswith("CMAKE_CXX_COMPILER:")][0]
        except (OSError, IndexError):
            pass
    try:
        v["posenc's compiler"] = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    except OSError:
        v["posenc's compiler"] = "?"
    return ("%s, %d logical CPUs, load average %s at the start; %s; posenc on %d thread(s), each peer in its "
            "fastest of %s (torch x %s threads); wall-clock medians"
            % (cpu, os.cpu_count(), " ".join("%.2f" % x for x in os.getloadavg()),
               "; ".join("%s %s" % kv for kv in v.items()), args.threads, ", ".join(args.configs), BLAS["name"]))


SECTIONS = ["sinusoidal", "floater", "tupe", "rope", "multiaxis", "decode", "ggml", "toeplitz", "fft"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="+", choices=SECTIONS, default=SECTIONS)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--floater-reps", type=int, default=1, help="runs of each torchdiffeq case per configuration")
    ap.add_argument("--configs", nargs="+", default=["1x1", "1x2", "2x1"],
                    help="torch threads x BLAS threads tried for each peer; the fastest is reported")
    ap.add_argument("--blocks", type=int, nargs="+", default=[1, 18])
    ap.add_argument("--floater-L", type=int, default=512, help="positions (posenc's benchmarks have 512)")
    ap.add_argument("--sinusoidal-sizes", type=int, nargs="+", default=[65536, 4096, 16384, 1024],
                    help="L d pairs")
    ap.add_argument("--tupe-n", type=int, nargs="+", default=[512, 2048])
    ap.add_argument("--rope-shape", type=int, nargs=4, default=[1, 32, 4096, 128])
    ap.add_argument("--no-compile", action="store_true", help="multiaxis: leave out the torch.compile rows")
    ap.add_argument("--multiaxis-cases", nargs="+", choices=["flux", "wan", "qwen2_5_vl"],
                    default=["flux", "wan", "qwen2_5_vl"], help="multiaxis: the models timed")
    ap.add_argument("--decode-batch", type=int, nargs="+", default=[1, 8, 64], help="sequences of a decode step")
    ap.add_argument("--toeplitz-n", type=int, nargs="+", default=[512, 4096, 16384, 65536])
    ap.add_argument("--toeplitz-k", type=int, nargs="+", default=[1, 16, 64])
    ap.add_argument("--bench-dir", help="folder of posenc's bench_* programs: run them too and print ratios")
    ap.add_argument("--blas-bench-dir", help="folder of bench_tupe_blas (a build with -DPOSENC_WITH_BLAS=ON; "
                    "default: --bench-dir): its TUPE times are printed as rows 'tupe_blas'")
    ap.add_argument("--markdown", help="write the table as Markdown to this file")
    ap.add_argument("--save", help="write the peers' timings (JSON) to this file")
    ap.add_argument("--load", help="take the peers' timings from a file written by --save instead of timing them")
    args = ap.parse_args()
    args.sinusoidal_sizes = list(zip(args.sinusoidal_sizes[0::2], args.sinusoidal_sizes[1::2]))
    global CONFIGS
    CONFIGS = [tuple(int(x) for x in c.split("x")) for c in args.configs]
    BLAS.update(find_blas())
    head = versions(args)
    threads = thread_check()
    global median_time
    if args.load:  # the rows (and their posenc filters) without timing them, then the saved times
        with open(args.load) as f:
            saved = json.load(f)
        head, threads = saved["head"], saved.get("threads", "")
        median_time = lambda fn, reps, warmup=1, make=None: (float("nan"), (0, 0))  # noqa: E731
    print("#", head, flush=True)
    print("# threads in effect:", threads, flush=True)
    for s in args.only:
        globals()[s](args)
    if args.load:
        times = {(r["section"], r["case"], r["peer"]): r for r in saved["rows"]}
        ROWS[:] = [r for r in ROWS if (r["section"], r["case"], r["peer"]) in times]  # a run cut short
        for r in ROWS:
            t = times[(r["section"], r["case"], r["peer"])]
            r["peer_s"], r["config"] = t["peer_s"], tuple(t["config"])
    end = "load average %s at the end of the peers" % " ".join("%.2f" % x for x in os.getloadavg())
    print("#", end, flush=True)
    if args.save:
        with open(args.save, "w") as f:
            json.dump(dict(head=head, threads=threads, checks=CHECKS, end=end,
                           rows=[{k: r[k] for k in ("section", "case", "peer", "peer_s", "config")} for r in ROWS]),
                      f, indent=1)
    posenc = {}
    if args.bench_dir:
        for s in args.only + (["tupe_blas"] if "tupe" in args.only else []):
            rows = [r for r in ROWS if r["section"] == s and r["posenc"]]
            filters = [r["posenc"] for r in rows] + [f for n in NOTES if n["section"] == s and n["num"]
                                                     for f in (n["num"], n["den"])]
            if not filters:
                continue
            times = posenc_times(args, s, filters)
            for f in filters:
                posenc[f] = match(times, f)
            for r in rows:
                r["posenc_s"] = posenc[r["posenc"]]
        end += "; %s after posenc's programs" % " ".join("%.2f" % x for x in os.getloadavg())
    ROWS[:] = [r for r in ROWS if r["section"] != "tupe_blas" or r.get("posenc_s")]  # no bench_tupe_blas: no rows
    lines = ["| workload | peer (threads: torch × %s) | peer (ms) | posenc (ms) | peer / posenc |" % BLAS["name"],
             "|---|---|---|---|---|"]
    for r in ROWS:
        p = r.get("posenc_s")
        lines.append("| %s %s | %s | %.3f | %s | %s |" % (
            r["section"], r["case"], "%s (%s)" % (r["peer"], "%d thread(s)" % r["config"][0] if r["section"] == "ggml"
                                                  else "%d × %d" % tuple(r["config"])), r["peer_s"] * 1e3,
            "%.3f" % (p * 1e3) if p else "—", "%.2f×" % (r["peer_s"] / p) if p else "—"))
    notes = []
    for n in NOTES:
        if n["num"] is None:  # measured in this process (multiaxis)
            notes.append("- " + n["text"])
            continue
        a, b = posenc.get(n["num"]), posenc.get(n["den"])
        if a and b:
            notes.append("- %s: %.3f / %.3f ms = %.2f× (`%s` / `%s`)" % (n["text"], a * 1e3, b * 1e3, a / b,
                                                                       n["num"][:-1], n["den"][:-1]))
    text = "\n".join(lines) + ("\n\n" + "\n".join(notes) if notes else "")
    if DECODE:  # posenc's side timed in Python here: its own table (µs per call, each in its fastest setting)
        text += ("\n\nDecode steps (µs per call; q and k rotated; best transformers / posenc eager):\n\n"
                 "| B | heads q, k | dtype | posenc eager | posenc compiled | transformers eager | "
                 "transformers compiled | ahead | KiB moved |\n|---|---|---|---|---|---|---|---|---|\n"
                 + "\n".join(DECODE))
    print("\n# " + head + "\n# threads in effect: " + threads + "\n# " + end + "\n" + text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("<!-- %s\n     threads in effect: %s\n     %s -->\n%s\n\nChecks:\n\n%s\n"
                    % (head, threads, end, text, "\n".join("    " + c for c in CHECKS)))


if __name__ == "__main__":
    main()

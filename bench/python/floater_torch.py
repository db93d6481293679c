#!/usr/bin/env python3
"""FLOATER forward + backward from PyTorch: posenc's op vs torchdiffeq (autograd through the rk4
steps) vs torchdiffeq's odeint_adjoint, and the binding's overhead vs the same C++ call.

Every configuration is the reference code's: rk4 (3/8 rule), step delta / 5, delta = 0.01, ReLU
MLP with d = hidden, time input on both layers; the loss is sum(P * G) for a fixed random G, so
backward receives a dense upstream gradient. All three methods are timed in the same run, one
after the other, on the same module, and the table prints their ratios.

Time is process CPU time with one intra-op thread by default (--threads): on a shared machine it
measures the work rather than the other processes; --wall switches to wall-clock time.

Binding overhead: the op's fwd+bwd against bench/python/floater_cpp_reference.cpp (the same
encoder construction, extend and backprop without Python or libtorch), compiled here with the
extension's flags (-O2) -- and the per-call cost of the op on a tiny input.

With --train-step: one training step of the end-to-end test's model with positions by
torchdiffeq vs by posenc, and the share of the step spent computing the positions.

usage: POSENC_TORCH_LIBRARY=build/python/libposenc_torch.so \\
       /usr/bin/python3 bench/python/floater_torch.py [--quick] [--L 512 2048] [--blocks 1 6] [--train-step] ...
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import time

import torch
from torchdiffeq import odeint, odeint_adjoint

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
import posenc  # noqa: E402

DTYPES = {"f32": torch.float32, "f64": torch.float64}


def clock(wall):
    return time.perf_counter if wall else time.process_time


def timed(fn, reps, wall):
    c = clock(wall)
    ts = []
    for _ in range(reps):
        t0 = c()
        fn()
        ts.append(c() - t0)
    return statistics.median(ts)


def make(d, blocks, dtype):
    torch.manual_seed(0)
    enc = posenc.FloaterEncoder(d, d, blocks=(blocks,), delta=0.01, substeps=5, threads=1).to(dtype)
    return enc


def posenc_step(enc, L, G):
    def f():
        enc.zero_grad(set_to_none=True)
        enc(L).backward(G)
    return f


def torchdiffeq_step(enc, L, G, adjoint):
    t = torch.arange(L, dtype=enc.proj_bias.dtype) * 0.01
    solve = odeint_adjoint if adjoint else odeint

    def f():
        enc.zero_grad(set_to_none=True)
        P = solve(enc.proj_flow, enc.proj_bias, t, method="rk4", options=dict(step_size=0.01 / 5))
        P.backward(G)
    return f


def cpp_reference(args):
    exe = os.path.join(args.build_dir, "floater_cpp_reference")
    src = os.path.join(HERE, "floater_cpp_reference.cpp")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        os.makedirs(args.build_dir, exist_ok=True)
        cmd = [os.environ.get("CXX", "g++"), "-std=c++20", "-O2", "-DNDEBUG", "-I" + os.path.join(ROOT, "include"),
               "-I/usr/include/eigen3", src, "-o", exe]
        print("compiling the C++ reference:", " ".join(cmd), flush=True)
        subprocess.check_call(cmd)
    return exe


def cpp_time(exe, dt, d, blocks, L, reps, wall):
    # the program prints the median wall and CPU seconds of its timed region (one thread)
    out = subprocess.check_output([exe, dt, str(d), str(d), str(blocks), str(L), "1", str(reps)], text=True)
    w, c = (float(x) for x in out.split())
    return w if wall else c


def train_step_share(args):
    """One training step of the end-to-end test's model (python/tests/test_end_to_end.py: FLOATER
    trajectories as q/k/v biases of every layer, the reference code's use), positions by
    torchdiffeq (autograd) or by posenc: step time and the part of it spent in the positions."""
    sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
    import test_end_to_end as e2e
    d, layers, L, batch = args.step_d, args.step_layers, args.step_L, args.step_batch
    dt = torch.float32
    print("\n# one training step (fwd + bwd + Adam) of the end-to-end model: d = %d, %d layers, L = %d, batch %d, "
          "FLOATER blocks (3, %d), f32; %s time" % (d, layers, L, batch, layers, "wall" if args.wall else "CPU"))
    print("| positions by | step (s) | positions fwd+bwd (s) | share of the step |")
    print("|---|---|---|---|")
    for solver in ("torchdiffeq", "posenc"):
        torch.manual_seed(0)
        model = e2e.Model(vocab=16, d=d, heads=4, layers=layers)
        # the reference code's initialisation (xavier), not the test's larger weights
        model.pos = posenc.FloaterEncoder(d, blocks=(3, layers), delta=0.1, threads=1)
        model = model.to(dt)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        x = torch.randint(0, 16, (batch, L))
        t = torch.arange(L, dtype=dt) * 0.1

        def step():
            loss = torch.nn.functional.cross_entropy(model(x, solver).reshape(-1, 16), x.flip(1).reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()

        def positions():
            model.zero_grad(set_to_none=True)
            if solver == "posenc":
                P = model.pos(L)
            else:
                P = odeint(model.pos.proj_flow, model.pos.proj_bias, t, method="rk4", options=dict(step_size=0.1 / 5))
            P.sum().backward()

        step()  # warm-up
        ts, tp = timed(step, args.reps, args.wall), timed(positions, args.reps, args.wall)
        print("| %s | %.3f | %.3f | %.0f %% |" % (solver, ts, tp, 100.0 * tp / ts), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--L", type=int, nargs="+", default=[512, 2048])
    ap.add_argument("--blocks", type=int, nargs="+", default=[1, 6])
    ap.add_argument("--dtypes", nargs="+", default=["f32", "f64"])
    ap.add_argument("--d", type=int, default=512)
    ap.add_argument("--reps", type=int, default=3, help="repetitions of the posenc and C++ runs (median)")
    ap.add_argument("--tdq-reps", type=int, default=1, help="repetitions of the torchdiffeq runs (median)")
    ap.add_argument("--no-adjoint", action="store_true", help="skip odeint_adjoint (the slowest)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--wall", action="store_true")
    ap.add_argument("--quick", action="store_true", help="L = 512 only")
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build", "bench-python"))
    ap.add_argument("--train-step", action="store_true", help="only the training-step share")
    ap.add_argument("--overhead-only", action="store_true",
                    help="only the binding overhead: op and C++ reference alternated rep by rep")
    ap.add_argument("--step-d", type=int, default=128)
    ap.add_argument("--step-layers", type=int, default=2)
    ap.add_argument("--step-L", type=int, default=128)
    ap.add_argument("--step-batch", type=int, default=16)
    args = ap.parse_args()
    if args.quick:
        args.L = [512]
    torch.set_num_threads(args.threads)
    cpu = platform.processor() or "?"
    try:
        cpu = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")][0]
    except (OSError, IndexError):
        pass
    print("# FLOATER fwd+bwd, d = hidden = %d, rk4 (3/8), delta 0.01, 5 substeps; %s time, %d thread(s); "
          "torch %s; %s, %d logical CPUs; load average %s"
          % (args.d, "wall" if args.wall else "CPU", args.threads, torch.__version__, cpu, os.cpu_count(),
             " ".join("%.1f" % x for x in os.getloadavg())), flush=True)
    if args.train_step:
        train_step_share(args)
        return
    exe = cpp_reference(args)

    # per-call overhead on a tiny input (d = 2, L = 2): Python + autograd.Function + dispatcher
    tiny = make(2, 1, torch.float64)
    Gt = torch.ones(2, 1, 2, dtype=torch.float64)
    step = posenc_step(tiny, 2, Gt)
    for _ in range(200):
        step()
    n = 2000
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    tiny_us = (time.perf_counter() - t0) / n * 1e6
    print("# tiny input (d = 2, L = 2): fwd+bwd through the module %.1f us per call" % tiny_us, flush=True)

    if args.overhead_only:
        print("| dtype | blocks | L | posenc op (s) | C++ alone (s) | binding overhead |")
        print("|---|---|---|---|---|---|")
        for L in args.L:
            for blocks in args.blocks:
                for dt in args.dtypes:
                    enc = make(args.d, blocks, DTYPES[dt])
                    G = torch.randn(L, blocks, args.d, dtype=DTYPES[dt])
                    ours, cpp = [], []
                    for _ in range(args.reps):  # alternate, so both see the same machine state
                        ours.append(timed(posenc_step(enc, L, G), 1, args.wall))
                        cpp.append(cpp_time(exe, dt, args.d, blocks, L, 1, args.wall))
                    o, c = statistics.median(ours), statistics.median(cpp)
                    print("| %s | %d | %d | %.3f | %.3f | %+.1f %% |" % (dt, blocks, L, o, c, 100.0 * (o - c) / c),
                          flush=True)
        return

    hdr = ("| dtype | blocks | L | posenc (s) | C++ alone (s) | binding overhead | torchdiffeq autograd (s) "
           "| speed-up | odeint_adjoint (s) | speed-up |")
    print(hdr)
    print("|" + "---|" * 10)
    for L in args.L:
        for blocks in args.blocks:
            for dt in args.dtypes:
                enc = make(args.d, blocks, DTYPES[dt])
                G = torch.randn(L, blocks, args.d, dtype=DTYPES[dt])
                ours = timed(posenc_step(enc, L, G), args.reps, args.wall)
                cpp = cpp_time(exe, dt, args.d, blocks, L, args.reps, args.wall)
                auto = timed(torchdiffeq_step(enc, L, G, False), args.tdq_reps, args.wall)
                if args.no_adjoint:
                    adj_s, adj_r = "-", "-"
                else:
                    adj = timed(torchdiffeq_step(enc, L, G, True), args.tdq_reps, args.wall)
                    adj_s, adj_r = "%.2f" % adj, "%.1fx" % (adj / ours)
                print("| %s | %d | %d | %.3f | %.3f | %+.1f %% | %.2f | %.1fx | %s | %s |"
                      % (dt, blocks, L, ours, cpp, 100.0 * (ours - cpp) / cpp, auto, auto / ours, adj_s, adj_r),
                      flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""RoPE on q and k [1, 32, 4096, 128] (bf16 and f32): posenc's op against transformers'
apply_rotary_pos_emb (Llama's, the rotate_half form) in eager mode and under torch.compile, and a
plain copy of q and k as the memory reference, all in one run on the same tensors.

Work per call: q and k read once and written once: 2 tensors x 32 x 4096 x 128 elements x
(read + write) = 4 x 16.8 M elements (134 MB in bf16, 268 MB in f32). transformers' cos/sin
[1, 4096, 128] are computed once beforehand (its model does that once per forward for all
layers) and not timed; posenc forms its cos/sin from the exact angle inside the call.
The copy reference (q.clone(), k.clone()) moves the same bytes.

Each row: median wall time of --reps calls after --warmup calls, one intra-op thread by default
(--threads), the methods one after the other.

usage: POSENC_TORCH_LIBRARY=build/python/libposenc_torch.so <venv>/bin/python bench/python/rope_torch.py
"""
import argparse
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import posenc  # noqa: E402
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb  # noqa: E402
from transformers import LlamaConfig  # noqa: E402


def timed(fn, reps, warmup):
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", type=int, nargs=4, default=[1, 32, 4096, 128])
    ap.add_argument("--dtypes", nargs="+", default=["bf16", "f32"])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    B, H, S, D = args.shape
    cfg = LlamaConfig(hidden_size=H * D, num_attention_heads=H, head_dim=D, rope_theta=500000.0,
                      max_position_embeddings=S)
    hf_rot = LlamaRotaryEmbedding(cfg)
    rot = posenc.RotaryEmbedding(cfg)
    pos = torch.arange(S)[None]
    compiled = torch.compile(apply_rotary_pos_emb, dynamic=False)
    print("# RoPE q, k [%d, %d, %d, %d]; torch %s; %d thread(s); load average %s"
          % (B, H, S, D, torch.__version__, args.threads, " ".join("%.1f" % x for x in os.getloadavg())))
    print("| dtype | copy q, k (ms) | posenc rope (ms) | posenc rope_ in place (ms) | HF eager (ms) | "
          "HF torch.compile (ms) | HF eager / posenc | HF compiled / posenc |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.dtypes:
        dt = {"bf16": torch.bfloat16, "f32": torch.float32, "f16": torch.float16}[name]
        torch.manual_seed(0)
        q, k = torch.randn(B, H, S, D, dtype=dt), torch.randn(B, H, S, D, dtype=dt)
        with torch.no_grad():
            cos, sin = hf_rot(q, pos)
            ref_q, _ = apply_rotary_pos_emb(q.double(), k.double(), *[t.double() for t in hf_rot(q.double(), pos)])
            ours_q, _ = rot(q, k)
            # sanity: both rotate the same way. HF's angle is float32 (up to 4096 * 2^-24 rad off at the
            # last position, times |x| <= ~5) and bf16 rounds cos/sin too: loose bounds
            assert (ours_q.double() - ref_q).abs().max() < (0.1 if dt == torch.bfloat16 else 5e-3)
            qb, kb = q.clone(), k.clone()
            t_copy = timed(lambda: (q.clone(), k.clone()), args.reps, args.warmup)
            t_ours = timed(lambda: rot(q, k), args.reps, args.warmup)
            t_inpl = timed(lambda: rot.apply_(qb, kb), args.reps, args.warmup)
            t_hf = timed(lambda: apply_rotary_pos_emb(q, k, cos, sin), args.reps, args.warmup)
            t_hfc = timed(lambda: compiled(q, k, cos, sin), args.reps, args.warmup + 1)
        print("| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.2fx | %.2fx |"
              % (name, 1e3 * t_copy, 1e3 * t_ours, 1e3 * t_inpl, 1e3 * t_hf, 1e3 * t_hfc, t_hf / t_ours,
                 t_hfc / t_ours), flush=True)


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: MIT
"""Reference cos/sin of the exact rotary phase p * omega_k (mpmath, 50 digits) for
tests/rotary/exact_phase.test.cpp.

Rules: default, linear, yarn (truncated range), llama3, longrope (head_dim 128 / 96), then ntk,
dynamic (at seq_len 2^20), yarn as transformers 5 with truncate false and proportional (zero
frequencies on the pairs not rotated), with fewer samples each.

omega_k is each rule's exact frequency, evaluated from the configuration's values as real numbers
(the formulas of include/posenc/rotary/rules.hpp and docs/extrapolation.md); nothing is rounded
before the final conversion to the hex literals. Output (C++ initialisers, included by the test):

  rules:   {rule, k, omega as three doubles hi + mid + lo (159 bits)}
  entries: {rule, k, position, cos as hi + lo, sin as hi + lo (double-double, 106 bits)}

Positions: 0, 2^20, 2^24 - 1 and 2^24 for every pair, random (position, pair) samples below
2^24, and for each pair the positions below 2^24 where |cos| or |sin| is smallest (the hardest
entries for a relative, ulp-measured bound; found by a float64 scan, then evaluated exactly).

Run (mpmath and numpy):  python3 tests/rotary/data/exact_phase.py > tests/rotary/data/exact_phase.inc
"""
import random

import mpmath as mp
import numpy as np

mp.mp.dps = 50

RULES = ["default", "linear", "yarn", "llama3", "longrope", "ntk", "dynamic", "yarn_v5_untruncated", "proportional"]
# the rules after the first five: head_dim 64 or fewer samples, so the data stays small
SMALL = {"ntk", "dynamic", "yarn_v5_untruncated", "proportional"}


def default_freqs(theta, dim):
    return [mp.power(mp.mpf(theta), -mp.mpf(2 * k) / dim) for k in range(dim // 2)]


def frequencies(rule):
    """The configurations of exact_phase.test.cpp (keep them in step)."""
    if rule == "default":  # Llama 3 base, no scaling
        return default_freqs(500000.0, 128)
    if rule == "linear":
        return [w / 8 for w in default_freqs(10000.0, 128)]
    if rule == "yarn":  # theta 1e6, factor 4, original 32768, beta 32 / 1 (Qwen-style)
        dim, theta, factor, L = 128, mp.mpf(1000000.0), mp.mpf(4), mp.mpf(32768)

        def corr(rot):
            return dim * mp.log(L / (rot * 2 * mp.pi)) / (2 * mp.log(theta))

        low = max(mp.floor(corr(32)), 0)
        high = min(mp.ceil(corr(1)), dim - 1)
        if low == high:
            high += mp.mpf("0.001")
        out = []
        for k, w in enumerate(default_freqs(theta, dim)):
            ramp = min(max((k - low) / (high - low), 0), 1)
            out.append(w / factor * ramp + w * (1 - ramp))
        return out
    if rule == "llama3":  # theta 500000, factor 8, low 1, high 4, original 8192
        factor, lo, hi, old = mp.mpf(8), mp.mpf(1), mp.mpf(4), mp.mpf(8192)
        out = []
        for w in default_freqs(500000.0, 128):
            wavelen = 2 * mp.pi / w
            if wavelen < old / hi:
                out.append(w)
            elif wavelen > old / lo:
                out.append(w / factor)
            else:
                smooth = (old / wavelen - lo) / (hi - lo)
                out.append((1 - smooth) * w / factor + smooth * w)
        return out
    if rule == "longrope":  # Phi-3-like: head_dim 96, original 4096, max 131072, seq_len 2^20: long factors
        long_factor = [1.0 + 0.375 * k for k in range(48)]  # exact in binary, as the test passes them
        return [w / mp.mpf(f) for w, f in zip(default_freqs(10000.0, 96), long_factor)]
    if rule == "ntk":  # theta 10000, head_dim 64, factor 4: base' = theta factor^(d / (d - 2))
        d = 64
        return default_freqs(mp.mpf(10000) * mp.power(4, mp.mpf(d) / (d - 2)), d)
    if rule == "dynamic":  # theta 10000, head_dim 64, factor 2, max 4096, seq_len 2^20
        d, factor, lmax, L = 64, mp.mpf(2), mp.mpf(4096), mp.mpf(1 << 20)
        s = factor * L / lmax - (factor - 1)
        return default_freqs(mp.mpf(10000) * mp.power(s, mp.mpf(d) / (d - 2)), d)
    if rule == "yarn_v5_untruncated":  # gpt-oss-like: theta 150000, head_dim 64, factor 32, original
        # 4096, beta 32 / 1, truncate false (fractional correction range), mscale 1 / mscale_all_dim 0.5
        dim, theta, factor, L = 64, mp.mpf(150000), mp.mpf(32), mp.mpf(4096)

        def corr(rot):
            return dim * mp.log(L / (rot * 2 * mp.pi)) / (2 * mp.log(theta))

        low = max(corr(32), 0)
        high = min(corr(1), dim - 1)
        out = []
        for k, w in enumerate(default_freqs(theta, dim)):
            ramp = min(max((k - low) / (high - low), 0), 1)
            out.append(w / factor * ramp + w * (1 - ramp))
        return out
    if rule == "proportional":  # Gemma-4-like: head_dim 128, theta 1e6, partial 0.25, factor 8:
        # the first int(0.25 * 128 // 2) = 16 pairs at theta^(-2k / 128) / 8, the others 0
        ws = default_freqs(1000000.0, 128)
        return [w / 8 if k < 16 else mp.mpf(0) for k, w in enumerate(ws)]
    raise ValueError(rule)


def nearest_double(x):
    with mp.workprec(53):
        return float(+x)  # +x rounds to nearest at 53 bits; float() of it is exact


def split(x, parts):
    """x as `parts` doubles hi + ... (each the nearest double of the remainder)."""
    out = []
    for _ in range(parts):
        d = nearest_double(x)
        out.append(d)
        x = x - mp.mpf(d)
    return out


def worst_positions(w, count=2):
    """Positions p < 2^24 where p * w is closest to a multiple of pi / 2 (float64 scan)."""
    c = float(w * 2 / mp.pi)
    best = []
    step = 1 << 22
    for p0 in range(1, 1 << 24, step):
        p = np.arange(p0, min(p0 + step, (1 << 24) + 1), dtype=np.float64)
        t = p * c
        d = np.abs(t - np.rint(t))
        idx = np.argpartition(d, count)[:count]
        best.extend((float(d[i]), int(p[i])) for i in idx)
    best.sort()
    return [p for _, p in best[:count]]


def main():
    rng = random.Random(20261126)
    print("// Generated by tests/rotary/data/exact_phase.py (mpmath, 50 digits); do not edit.")
    print("// clang-format off")
    print("// {rule, k, omega = hi + mid + lo}")
    print("inline const exact_rule exact_rules[] = {")
    rule_rows, entry_rows = [], []
    for r, rule in enumerate(RULES):
        ws = frequencies(rule)
        for k, w in enumerate(ws):
            hi, mid, lo = split(w, 3) if w != 0 else (0.0, 0.0, 0.0)
            rule_rows.append("  {%d, %d, %s, %s, %s}" % (r, k, hi.hex(), mid.hex(), lo.hex()))
        small = rule in SMALL
        samples = set()
        for k in range(0, len(ws), 2 if small else 1):
            for p in (0, 1 << 20, (1 << 24) - 1, 1 << 24):
                samples.add((k, p))
        for _ in range(60 if small else 150):
            samples.add((rng.randrange(len(ws)), rng.randrange(1 << 24)))
        for k in range(0, len(ws), 4 if small else 3):
            if ws[k] != 0:
                for p in worst_positions(ws[k]):
                    samples.add((k, p))
        for k, p in sorted(samples):
            ph = p * ws[k]
            c, s = split(mp.cos(ph), 2), split(mp.sin(ph), 2)
            entry_rows.append("  {%d, %d, %d, %s, %s, %s, %s}" % (r, k, p, c[0].hex(), c[1].hex(), s[0].hex(), s[1].hex()))
    print(",\n".join(rule_rows))
    print("};")
    print("// {rule, k, position, cos = hi + lo, sin = hi + lo}")
    print("inline const exact_entry exact_entries[] = {")
    print(",\n".join(entry_rows))
    print("};")
    print("// clang-format on")


if __name__ == "__main__":
    main()

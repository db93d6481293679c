# SPDX-License-Identifier: MIT
"""The constants of include/posenc/numeric/phase.hpp and numeric/extended.hpp (mpmath, 50 digits):
pi/128, ln 2 and 2 pi as three doubles (hi + mid + lo, each the nearest double of the remainder),
128/pi rounded to double, and sin(j pi / 128), j = 0..255, as two doubles (hi + lo).

Run:  python3 scripts/phase_constants.py
"""
import mpmath as mp

mp.mp.dps = 50


def nearest_double(x):
    with mp.workprec(53):
        return float(+x)


def split(x, parts):
    out = []
    for _ in range(parts):
        d = nearest_double(x)
        out.append(d)
        x = x - mp.mpf(d)
    return out


def main():
    for name, v in (("pi/128", mp.pi / 128), ("ln 2", mp.log(2)), ("2 pi", 2 * mp.pi)):
        print(name, ", ".join(d.hex() for d in split(v, 3)))
    print("128/pi", nearest_double(128 / mp.pi).hex())
    for j in range(256):
        hi, lo = split(mp.sinpi(mp.mpf(j) / 128), 2)  # exact 0 and +-1 at j = 0, 64, 128, 192
        print("    {%s, %s}," % (hi.hex(), lo.hex()))


if __name__ == "__main__":
    main()

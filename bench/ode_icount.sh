#!/bin/sh
# SPDX-License-Identifier: MIT
# Instructions per step of bench/ode_icount (posenc and its hand loop), for euler/rk4/dopri5 on
# every small state type and n in {1, 4, 16, 64}: (Ir(3000 steps) - Ir(1000 steps)) / 2000 under
# callgrind, which counts instructions repeatably on a loaded machine (ode_icount is built for
# AVX2: valgrind does not decode AVX-512).
# Usage: bench/ode_icount.sh build/bench/ode_icount > icount.tsv
exe=${1:?path to ode_icount}
ir() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$exe" "$@" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'; }
per_step() { a=$(ir "$@" 1000); b=$(ir "$@" 3000); echo $(( (b - a) / 2000 )); }
printf 'scheme\tstate\tn\tposenc\thand\tratio\n'
for s in euler rk4 dopri5; do
  for st in scalar array eigen_fixed vector eigen_dynamic; do
    for n in 1 4 16 64; do
      [ "$st" = scalar ] && [ "$n" != 1 ] && continue
      p=$(per_step "$s" "$st" "$n" posenc); h=$(per_step "$s" "$st" "$n" hand)
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$s" "$st" "$n" "$p" "$h" "$(awk "BEGIN{printf \"%.2f\", $p/$h}")"
    done
  done
done

#!/usr/bin/env bash
# Installs the ggml peer of bench/peers/peers.py (its "ggml" section: ggml's CPU RoPE) into the
# torch venv of scripts/torch-venv.sh, and prints the venv's path. A benchmark-only dependency:
# no test needs it, and the test suite never runs this.
#
#   bench/peers/install-ggml.sh
#   "$(bench/peers/install-ggml.sh)/bin/python" bench/peers/peers.py --only ggml --bench-dir build/bench/bench
#
# What it installs: the ggml-python package from PyPI at the pinned version below. Its source
# release vendors ggml and builds it with CMake at install time (a few minutes on 2 cores); the
# build is made with GGML_NATIVE=ON, so that ggml's CPU kernels use this machine's vector units
# (AVX2, F16C, FMA, AVX-512 where present), as a user building ggml for their own machine would.
# A stamp beside the venv records the pin; when it matches and ggml imports, nothing is installed.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
venv=$("$here/scripts/torch-venv.sh")
pin=ggml-python==0.0.45
stamp="$venv/.posenc-ggml-stamp"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$pin" ] && "$venv/bin/python" -c "import ggml" 2>/dev/null; then
  echo "$venv"
  exit 0
fi
echo "posenc: building $pin (ggml from its source release, GGML_NATIVE=ON) into $venv" >&2
CMAKE_ARGS="-DGGML_NATIVE=ON" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-binary ggml-python "$pin" >&2
"$venv/bin/python" -c "import ggml"
echo "$pin" > "$stamp"
echo "$venv"

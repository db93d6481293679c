#!/usr/bin/env bash
# Creates once, and reuses afterwards, the pinned virtualenv the PyTorch package is tested in:
# torch and transformers from PyPI at the versions below (about 5.7 GB and 10-15 minutes to install
# on a fresh machine), numpy, scipy, pytest, torchdiffeq, mpmath, safetensors and setuptools.
#
#   scripts/torch-venv.sh          prints the venv's path (creating or completing it first)
#
# Where: $POSENC_VENV, default /var/cache/posenc/venv-torch-2.15.0 (a machine-level cache: it
# survives the build tree, so later runs of the suite reuse it). Made with $POSENC_VENV_PYTHON
# (default /usr/bin/python3) -m venv. A stamp file records the pinned set; when the stamp matches
# and the packages import, nothing is installed. Runs are serialised with a lock beside the venv.
set -euo pipefail
venv=${POSENC_VENV:-/var/cache/posenc/venv-torch-2.15.0}
py=${POSENC_VENV_PYTHON:-/usr/bin/python3}
pins=(torch==2.15.0 transformers==5.23.0 torchdiffeq==0.2.5 numpy scipy pytest mpmath safetensors "setuptools>=70.1")
stamp="$venv/.posenc-venv-stamp"
want=$(printf '%s\n' "${pins[@]}")

complete() {
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
    "$venv/bin/python" -c "import torch, transformers, torchdiffeq, scipy, numpy, pytest, mpmath, setuptools" 2>/dev/null
}

if complete; then
  echo "$venv"
  exit 0
fi
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
if ! complete; then
  echo "posenc: installing the PyTorch test environment in $venv (${pins[*]}); this takes a while once" >&2
  [ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${pins[@]}" >&2
  "$venv/bin/python" -c "import torch, transformers, torchdiffeq, scipy, numpy, pytest, mpmath, setuptools"
  printf '%s\n' "${pins[@]}" > "$stamp"
fi
echo "$venv"

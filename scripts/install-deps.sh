#!/usr/bin/env bash
# Installs what posenc's build, tests, benchmarks and docs need on a fresh Debian machine.
# Thrust/CCCL come from the CUDA toolkit when it is installed (its lib64/cmake/cccl).
set -euo pipefail
pkgs=(cmake g++ clang libclang-rt-dev make pkg-config libeigen3-dev xtensor-dev libboost-dev doctest-dev
      libbenchmark-dev libfftw3-dev libopenblas-dev doxygen graphviz libjs-mathjax chromium python3 python3-pip
      python3-venv)
# Debian's torch 1.13 for the PyTorch package's optional second route (POSENC_TORCH_DEBIAN=1 in
# scripts/run-tests.sh); the default route is the pinned PyPI venv of scripts/torch-venv.sh.
if [ "${POSENC_TORCH_DEBIAN:-0}" = 1 ]; then
  pkgs+=(libtorch-dev python3-torch python3-pytest python3-scipy python3-setuptools python3-wheel)
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# libclang-rt-dev: the ASan/UBSan, TSan and libFuzzer runtimes of clang, needed by the sanitizer,
# ThreadSanitizer and fuzz test builds.
# libopenblas-dev: the BLAS of the opt-in posenc::blas target (-DPOSENC_WITH_BLAS=ON) and its TUPE
# tests and benchmark; nothing else links it.
# libjs-mathjax: MathJax 2, copied into the docs site so formulas render offline; chromium: the
# docs.browser test opens every page of the site headless (python3 drives it).
# python3-venv: scripts/torch-venv.sh makes the PyTorch package's test venv (torch and
# transformers from PyPI, pinned there) with /usr/bin/python3 -m venv; run-tests.sh calls it.
# With POSENC_TORCH_DEBIAN=1: libtorch-dev, python3-torch (torch 1.13), python3-pytest,
# python3-scipy (torchdiffeq imports it), python3-setuptools/-wheel (an offline
# `pip install --no-build-isolation ./python`), and torchdiffeq from PyPI for Debian's python3.
if [ "${POSENC_TORCH_DEBIAN:-0}" = 1 ]; then
  py=/usr/bin/python3
  if ! "$py" -c "import torchdiffeq" 2>/dev/null; then
    "$py" -m pip install -q --no-deps "torchdiffeq>=0.2.3,<0.3" 2>/dev/null \
      || "$py" -m pip install -q --no-deps --break-system-packages "torchdiffeq>=0.2.3,<0.3" \
      || echo "posenc: could not install torchdiffeq with pip; the Debian-torch route's tests will fail"
  fi
fi

# Conan 2 (for the packaging.conan test) from PyPI. Debian's Python is "externally managed"
# (PEP 668), so fall back to --break-system-packages there. Without network the test is skipped.
if ! conan --version 2>/dev/null | grep -q "Conan version 2\."; then
  python3 -m pip install -q "conan>=2,<3" 2>/dev/null \
    || python3 -m pip install -q --break-system-packages "conan>=2,<3" \
    || echo "posenc: could not install Conan 2 with pip; the packaging.conan test will be skipped"
fi
echo "posenc: dependencies installed"

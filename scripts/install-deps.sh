#!/usr/bin/env bash
# Installs what posenc's build, tests, benchmarks and docs need on a fresh Debian machine.
# Thrust/CCCL come from the CUDA toolkit when it is installed (its lib64/cmake/cccl).
set -euo pipefail
pkgs=(cmake g++ clang libclang-rt-dev make pkg-config libeigen3-dev xtensor-dev libboost-dev doctest-dev
      libbenchmark-dev libfftw3-dev libopenblas-dev doxygen graphviz libjs-mathjax chromium python3 python3-pip
      libtorch-dev python3-torch python3-pytest python3-scipy python3-setuptools python3-wheel)
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
# libtorch-dev, python3-torch: the PyTorch package in python/ (CMake find_package(Torch), torch 1.13);
# python3-pytest runs its tests; python3-scipy is imported by torchdiffeq, the tests' reference
# solver; python3-setuptools/-wheel let `pip install --no-build-isolation ./python` work offline.

# torchdiffeq (pure Python, the reference solver of the PyTorch package's tests) for Debian's
# python3, which is the interpreter that has torch: same PEP 668 fallback as Conan below.
py=/usr/bin/python3
if ! "$py" -c "import torchdiffeq" 2>/dev/null; then
  "$py" -m pip install -q --no-deps "torchdiffeq>=0.2.3,<0.3" 2>/dev/null \
    || "$py" -m pip install -q --no-deps --break-system-packages "torchdiffeq>=0.2.3,<0.3" \
    || echo "posenc: could not install torchdiffeq with pip; the PyTorch package's tests will fail"
fi

# Conan 2 (for the packaging.conan test) from PyPI. Debian's Python is "externally managed"
# (PEP 668), so fall back to --break-system-packages there. Without network the test is skipped.
if ! conan --version 2>/dev/null | grep -q "Conan version 2\."; then
  python3 -m pip install -q "conan>=2,<3" 2>/dev/null \
    || python3 -m pip install -q --break-system-packages "conan>=2,<3" \
    || echo "posenc: could not install Conan 2 with pip; the packaging.conan test will be skipped"
fi
echo "posenc: dependencies installed"

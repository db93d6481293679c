#!/usr/bin/env bash
# Installs what posenc's build, tests, benchmarks and docs need on a fresh Debian machine.
# Thrust/CCCL come from the CUDA toolkit when it is installed (its lib64/cmake/cccl).
set -euo pipefail
pkgs=(cmake g++ clang libclang-rt-dev make pkg-config libeigen3-dev xtensor-dev libboost-dev doctest-dev
      libbenchmark-dev libfftw3-dev doxygen graphviz libjs-mathjax chromium python3 python3-pip)
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
# libjs-mathjax: MathJax 2, copied into the docs site so formulas render offline; chromium: the
# docs.browser test opens every page of the site headless (python3 drives it).

# Conan 2 (for the packaging.conan test) from PyPI. Debian's Python is "externally managed"
# (PEP 668), so fall back to --break-system-packages there. Without network the test is skipped.
if ! conan --version 2>/dev/null | grep -q "Conan version 2\."; then
  python3 -m pip install -q "conan>=2,<3" 2>/dev/null \
    || python3 -m pip install -q --break-system-packages "conan>=2,<3" \
    || echo "posenc: could not install Conan 2 with pip; the packaging.conan test will be skipped"
fi
echo "posenc: dependencies installed"

"""pip install ./python -- builds libposenc_torch.so with CMake against the torch of the interpreter
that runs pip (its headers, libraries, C++ ABI and version: torch.utils.cpp_extension's paths, never
a system libtorch) and installs it inside the `posenc` package, with the torch version it was built
for beside it (the package refuses to load it into another torch).

Inside pip's isolated build environment torch is not importable; the interpreter is then asked in
isolated mode (-I), which sees its own site-packages. `--no-build-isolation` avoids the question.

Environment: POSENC_CMAKE_ARGS (extra arguments for the configure step), POSENC_BUILD_JOBS (parallel
build jobs, default 2).
"""
import json
import os
import shlex
import shutil
import subprocess
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))

_PROBE = r"""
import json, torch, torch.utils.cpp_extension as ce
print(json.dumps({"version": torch.__version__, "abi": int(torch._C._GLIBCXX_USE_CXX11_ABI),
                  "include": ce.include_paths(), "lib": ce.library_paths()}))
"""


def probe_torch():
    """What the running interpreter's torch is built with (in this process, else in isolated mode)."""
    for args in ([sys.executable, "-c", _PROBE], [sys.executable, "-I", "-c", _PROBE]):
        r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode == 0:
            return json.loads(r.stdout.strip().splitlines()[-1])
    raise RuntimeError("posenc: %s cannot import torch (%s); install torch first (`pip install torch`), "
                       "then `pip install ./python`" % (sys.executable, r.stderr.strip().splitlines()[-1:]))


class BuildWithCMake(build_py):
    def run(self):
        super().run()
        t = probe_torch()
        build_temp = os.path.join(os.path.abspath(self.get_finalized_command("build").build_temp), "posenc_torch")
        cfg = ["cmake", "-S", HERE, "-B", build_temp, "-DCMAKE_BUILD_TYPE=Release",
               "-DPOSENC_TORCH_PYTHON=" + sys.executable, "-DPOSENC_TORCH_VERSION=" + t["version"]]
        if t["include"] and os.path.exists(os.path.join(t["include"][0], "torch", "library.h")):
            cfg += ["-DPOSENC_TORCH_CXX11_ABI=" + str(t["abi"]),
                    "-DPOSENC_TORCH_INCLUDE_DIRS=" + ";".join(t["include"]),
                    "-DPOSENC_TORCH_LIBRARY_DIRS=" + ";".join(t["lib"])]
        else:  # a torch without its C++ headers next to it (e.g. a distribution's package with the
            # headers in a -dev package): find_package(Torch), with this torch's version recorded
            cfg += ["-DPOSENC_TORCH_FIND_PACKAGE=ON"]
        cfg += shlex.split(os.environ.get("POSENC_CMAKE_ARGS", ""))
        subprocess.check_call(cfg)
        subprocess.check_call(["cmake", "--build", build_temp, "-j", os.environ.get("POSENC_BUILD_JOBS", "2")])
        dest = os.path.join(self.build_lib, "posenc")
        os.makedirs(dest, exist_ok=True)
        for f in ("libposenc_torch.so", "libposenc_torch.torch-version"):
            shutil.copy2(os.path.join(build_temp, f), os.path.join(dest, f))


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True  # the wheel carries a shared library: platform-specific


setup(
    name="posenc",
    version="0.2.0",
    description="posenc's positional encodings (FLOATER, RoPE family, ALiBi, sinusoidal, TUPE, T5 buckets, Toeplitz) "
                "as PyTorch operators",
    license="MIT",
    packages=["posenc", "posenc._ops", "posenc._fake"],
    python_requires=">=3.9",
    # >= 1.13.0a0: Debian's python3-torch is 1.13.0a0, a pre-release that ">=1.13" would not accept
    # numpy: torch imports without it but warns "Failed to initialize NumPy" (torch/_subclasses,
    # which posenc's fake kernels and torch.compile load), so it is declared here
    install_requires=["torch>=1.13.0a0", "numpy"],
    cmdclass={"build_py": BuildWithCMake},
    distclass=BinaryDistribution,
    zip_safe=False,
)

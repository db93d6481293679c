"""pip install ./python -- builds libposenc_torch.so with CMake (find_package(Torch) against the
system libtorch, e.g. Debian's libtorch-dev) and installs it inside the `posenc` package.

Environment: POSENC_CMAKE_ARGS (extra arguments for the configure step, e.g.
"-DTorch_DIR=/path/to/share/cmake/Torch"), POSENC_BUILD_JOBS (parallel build jobs, default 2).
"""
import os
import shlex
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildWithCMake(build_py):
    def run(self):
        super().run()
        build_temp = os.path.join(os.path.abspath(self.get_finalized_command("build").build_temp), "posenc_torch")
        cfg = ["cmake", "-S", HERE, "-B", build_temp, "-DCMAKE_BUILD_TYPE=Release"]
        cfg += shlex.split(os.environ.get("POSENC_CMAKE_ARGS", ""))
        subprocess.check_call(cfg)
        subprocess.check_call(["cmake", "--build", build_temp, "-j", os.environ.get("POSENC_BUILD_JOBS", "2")])
        dest = os.path.join(self.build_lib, "posenc")
        os.makedirs(dest, exist_ok=True)
        shutil.copy2(os.path.join(build_temp, "libposenc_torch.so"), os.path.join(dest, "libposenc_torch.so"))


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True  # the wheel carries a shared library: platform-specific


setup(
    name="posenc",
    version="0.1.0",
    description="posenc's positional encodings (FLOATER, sinusoidal/RoPE, TUPE, T5 buckets, Toeplitz) as PyTorch operators",
    license="MIT",
    packages=["posenc"],
    python_requires=">=3.9",
    install_requires=["torch>=1.13"],
    cmdclass={"build_py": BuildWithCMake},
    distclass=BinaryDistribution,
    zip_safe=False,
)

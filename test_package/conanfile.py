# SPDX-License-Identifier: MIT
# Conan test_package: builds and runs the consumer programs of tests/install/consumer (the same
# ones the CMake install tests build) against the Conan package, one per enabled component.
import os

from conan import ConanFile
from conan.tools.build import can_run
from conan.tools.cmake import CMake, cmake_layout


class PosencTestConan(ConanFile):
    settings = "os", "arch", "compiler", "build_type"
    generators = "CMakeDeps", "CMakeToolchain", "VirtualRunEnv"
    test_type = "explicit"

    def requirements(self):
        self.requires(self.tested_reference_str)

    def layout(self):
        cmake_layout(self)

    def _components(self):
        opts = self.dependencies["posenc"].options
        return [c for c in ("eigen", "xtensor", "odeint", "thrust", "blas") if opts.get_safe(f"with_{c}")]

    def build(self):
        cmake = CMake(self)
        cmake.configure(variables={"POSENC_CONSUMER_COMPONENTS": ";".join(self._components())})
        cmake.build()

    def test(self):
        if can_run(self):
            for name in ["core"] + self._components():
                self.run(os.path.join(self.cpp.build.bindir, f"consumer_{name}"), env="conanrun")

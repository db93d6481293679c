# SPDX-License-Identifier: MIT
# Conan 2 recipe for posenc, a header-only C++20 library. The package is the include/ tree and the
# licence; the options only choose which optional dependencies the components pull in.
#
#   conan create . -s compiler.cppstd=20 -o "posenc/*:with_xtensor=True"
#
# Components (CMakeDeps targets match the upstream CMake package; PkgConfigDeps names match its
# .pc files):
#   posenc::posenc   posenc-core.pc     core + ODE toolkit (standard library only)
#   posenc::eigen    posenc.pc          encodings and the Eigen state adapter  (option with_eigen, default)
#   posenc::xtensor  posenc-xtensor.pc  xtensor state adapter                   (option with_xtensor)
#   posenc::odeint   posenc-odeint.pc   Boost.Odeint bridge                     (option with_odeint)
#   posenc::thrust   posenc-thrust.pc   Thrust backend; CCCL comes from the CUDA toolkit, found by find_package(CCCL)
#                    in a CMake build module (CCI's thrust recipe is the old 1.x line)   (with_thrust)
#   posenc::blas     posenc-blas.pc     posenc::eigen + EIGEN_USE_BLAS + openblas (option with_blas; never on
#                    by default: EIGEN_USE_BLAS changes Eigen's products for the whole program)
import os
import re

from conan import ConanFile
from conan.errors import ConanException
from conan.tools.build import check_min_cppstd
from conan.tools.files import copy, load, save
from conan.tools.layout import basic_layout

required_conan_version = ">=2.0"


class PosencConan(ConanFile):
    name = "posenc"
    # names every family of cmake/posenc_families.cmake (checked by the ctest layering.lists)
    description = "Header-only C++20 positional-encoding mathematics (sinusoidal, RoPE, ALiBi, FLOATER, " \
                  "TUPE, Toeplitz) on a small ODE toolkit"
    license = "MIT"
    url = "https://github.com/posenc/posenc"
    homepage = "https://github.com/posenc/posenc"
    topics = ("positional-encoding", "transformer", "ode", "runge-kutta", "header-only")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    options = {
        "with_eigen": [True, False],
        "with_xtensor": [True, False],
        "with_odeint": [True, False],
        "with_thrust": [True, False],
        "with_blas": [True, False],
    }
    default_options = {
        "with_eigen": True,
        "with_xtensor": False,
        "with_odeint": False,
        "with_thrust": False,
        "with_blas": False,
    }
    exports_sources = "include/*", "LICENSE"
    no_copy_source = True

    def set_version(self):
        # The version lives in one place: include/posenc/version.hpp.
        text = load(self, os.path.join(self.recipe_folder, "include", "posenc", "version.hpp"))
        parts = [re.search(rf"#define POSENC_VERSION_{p} (\d+)", text) for p in ("MAJOR", "MINOR", "PATCH")]
        if not all(parts):
            raise ConanException("posenc: cannot read the version from include/posenc/version.hpp")
        self.version = self.version or ".".join(m.group(1) for m in parts)

    def configure(self):
        if self.options.with_thrust:
            self.options.with_eigen = True  # posenc::thrust builds on the Eigen-based encodings
        if self.options.with_blas:
            self.options.with_eigen = True  # posenc::blas is posenc::eigen with EIGEN_USE_BLAS

    def layout(self):
        basic_layout(self, src_folder=".")

    def requirements(self):
        if self.options.with_eigen:
            self.requires("eigen/[>=3.4 <6]")
        if self.options.with_xtensor:
            self.requires("xtensor/[>=0.24 <1]")
        if self.options.with_odeint:
            self.requires("boost/[>=1.74 <2]")
        if self.options.with_blas:
            self.requires("openblas/[>=0.3 <1]")

    def package_id(self):
        self.info.clear()

    def validate(self):
        check_min_cppstd(self, 20)

    def source(self):
        pass

    def build(self):
        pass

    def package(self):
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))
        copy(self, "*.hpp", os.path.join(self.source_folder, "include"), os.path.join(self.package_folder, "include"))
        # posenc::thrust takes CCCL from the CUDA toolkit through its own CMake package.
        save(self, os.path.join(self.package_folder, self._thrust_module),
             "# posenc::thrust: link CCCL::Thrust from the CUDA toolkit (-DCCCL_DIR=<toolkit>/lib64/cmake/cccl)\n"
             "# CCCL's version file accepts only its own major version, so the range [2.2, 4) is checked here.\n"
             "if(TARGET posenc::thrust AND NOT TARGET CCCL::Thrust)\n"
             "  find_package(CCCL CONFIG REQUIRED COMPONENTS Thrust\n"
             "               HINTS /usr/local/cuda/lib64/cmake /usr/local/cuda/lib/cmake)\n"
             "  if(CCCL_VERSION VERSION_LESS 2.2 OR NOT CCCL_VERSION VERSION_LESS 4)\n"
             "    message(FATAL_ERROR \"posenc::thrust: CCCL ${CCCL_VERSION} is outside the supported range [2.2, 4)\")\n"
             "  endif()\n"
             "endif()\n"
             "if(TARGET posenc::thrust)\n"
             "  set_property(TARGET posenc::thrust APPEND PROPERTY INTERFACE_LINK_LIBRARIES CCCL::Thrust)\n"
             "endif()\n")

    @property
    def _thrust_module(self):
        return os.path.join("share", "conan", "posenc-thrust.cmake")

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "posenc")
        # The aggregate target; the upstream names are the components' targets below.
        self.cpp_info.set_property("cmake_target_name", "posenc::all")
        # pkg-config names are those of `cmake --install` and the vcpkg port: posenc-core,
        # posenc (the encodings, with eigen3), posenc-<adapter>. The aggregate takes the name of
        # the widest of core/eigen, so PkgConfigDeps writes no extra file for it (a component's
        # file wins over the package's of the same name).
        self.cpp_info.set_property("pkg_config_name", "posenc" if self.options.with_eigen else "posenc-core")
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []

        core = self.cpp_info.components["core"]
        core.set_property("cmake_target_name", "posenc::posenc")
        core.set_property("pkg_config_name", "posenc-core")
        core.bindirs = []
        core.libdirs = []

        def component(name, requires):
            c = self.cpp_info.components[name]
            c.set_property("cmake_target_name", f"posenc::{name}")
            c.set_property("pkg_config_name", "posenc" if name == "eigen" else f"posenc-{name}")
            c.requires = ["core"] + requires
            c.bindirs = []
            c.libdirs = []
            return c

        if self.options.with_eigen:
            component("eigen", ["eigen::eigen"])
        if self.options.with_xtensor:
            component("xtensor", ["xtensor::xtensor"])
        if self.options.with_odeint:
            component("odeint", ["boost::headers"])
        if self.options.with_thrust:
            component("thrust", ["eigen"])
            self.cpp_info.set_property("cmake_build_modules", [self._thrust_module])
        if self.options.with_blas:
            blas = component("blas", ["eigen", "openblas::openblas"])
            blas.defines = ["EIGEN_USE_BLAS"]

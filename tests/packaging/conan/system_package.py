# SPDX-License-Identifier: MIT
# A Conan recipe that stands for a header-only library already installed on the system (Debian's
# Eigen, xtensor, Boost), under the package, file and target names Conan Center uses, so the
# posenc recipe can be created and tested with no remote. Exported as
#   conan export system_package.py --name eigen --version 3.4.0
# with the system include directory in POSENC_SYSTEM_INCLUDEDIR_<NAME> when it is packaged.
import json
import os

from conan import ConanFile
from conan.errors import ConanException
from conan.tools.files import load, save

# name -> (cmake_file_name, cmake_target_name, pkg_config_name, {component: cmake target})
NAMES = {
    "eigen": ("Eigen3", "Eigen3::Eigen", "eigen3", {}),
    "xtensor": ("xtensor", "xtensor", "xtensor", {}),
    "boost": ("Boost", "Boost::boost", "boost", {"headers": "Boost::headers"}),
}


class SystemHeaderPackage(ConanFile):
    package_type = "header-library"
    description = "A system-installed header-only library (test stand-in for the Conan Center package)"
    license = "system"
    settings = "os", "arch", "compiler", "build_type"

    def package_id(self):
        self.info.clear()

    def package(self):
        var = f"POSENC_SYSTEM_INCLUDEDIR_{self.name.upper()}"
        dirs = [d for d in os.environ.get(var, "").split(os.pathsep) if d]
        if not dirs or not all(os.path.isdir(d) for d in dirs):
            raise ConanException(f"{self.name}: set {var} to the system include directory, got {dirs}")
        save(self, os.path.join(self.package_folder, "system.json"), json.dumps({"includedirs": dirs}))

    def package_info(self):
        if self.name not in NAMES:
            raise ConanException(f"system_package.py does not know '{self.name}'")
        file_name, target, pc_name, components = NAMES[self.name]
        dirs = json.loads(load(self, os.path.join(self.package_folder, "system.json")))["includedirs"]
        self.cpp_info.set_property("cmake_file_name", file_name)
        self.cpp_info.set_property("cmake_target_name", target)
        self.cpp_info.set_property("pkg_config_name", pc_name)
        self.cpp_info.includedirs = dirs
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []
        for comp, comp_target in components.items():
            c = self.cpp_info.components[comp]
            c.set_property("cmake_target_name", comp_target)
            c.includedirs = dirs
            c.bindirs = []
            c.libdirs = []

# SPDX-License-Identifier: MIT
# A Conan recipe that stands for a shared library already installed on the system (Debian's
# OpenBLAS), under the package, file, target and pkg-config names Conan Center uses, so the posenc
# recipe's with_blas option can be created and tested with no remote. Exported as
#   conan export system_library.py --name openblas --version 0.3.21
# with the library's full path in POSENC_SYSTEM_LIBRARY_<NAME> when it is packaged. No headers:
# EIGEN_USE_BLAS declares the BLAS routines itself.
import json
import os
import re

from conan import ConanFile
from conan.errors import ConanException
from conan.tools.files import load, save

# name -> (cmake_file_name, cmake_target_name, pkg_config_name)
NAMES = {
    "openblas": ("OpenBLAS", "OpenBLAS::OpenBLAS", "openblas"),
}


class SystemSharedLibrary(ConanFile):
    package_type = "shared-library"
    description = "A system-installed shared library (test stand-in for the Conan Center package)"
    license = "system"
    settings = "os", "arch", "compiler", "build_type"

    def package_id(self):
        self.info.clear()

    def package(self):
        var = f"POSENC_SYSTEM_LIBRARY_{self.name.upper()}"
        path = os.environ.get(var, "")
        m = re.match(r"^lib(.+)\.so(\..*)?$", os.path.basename(path))
        if not os.path.isfile(path) or not m:
            raise ConanException(f"{self.name}: set {var} to the system's lib<name>.so, got '{path}'")
        save(self, os.path.join(self.package_folder, "system.json"),
             json.dumps({"libdir": os.path.dirname(path),
                         "lib": m.group(1)}))

    def package_info(self):
        if self.name not in NAMES:
            raise ConanException(f"system_library.py does not know '{self.name}'")
        file_name, target, pc_name = NAMES[self.name]
        info = json.loads(load(self, os.path.join(self.package_folder, "system.json")))
        self.cpp_info.set_property("cmake_file_name", file_name)
        self.cpp_info.set_property("cmake_target_name", target)
        self.cpp_info.set_property("pkg_config_name", pc_name)
        self.cpp_info.includedirs = []
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = [info["libdir"]]
        self.cpp_info.libs = [info["lib"]]

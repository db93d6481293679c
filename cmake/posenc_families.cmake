# SPDX-License-Identifier: MIT
# The encoding families of posenc, listed once. Adding a family NAME is one entry in
# POSENC_FAMILIES (and writing the family):
#   include/posenc/NAME/      its headers (namespace posenc::NAME; Eigen allowed), installed with
#                             posenc::eigen (CMakeLists.txt, tests/install/install_tree.cmake)
#   include/posenc/NAME.hpp   its umbrella header, included by include/posenc/posenc.hpp
#   tests/NAME/*.test.cpp     its test program posenc_tests_NAME, tests "NAME.*" (tests/CMakeLists.txt)
# and the layering test (tests/layering/check_layers.cmake) places NAME/ above tensor/ and
# below device/, and checks that the folder, the umbrella header and its include in posenc.hpp
# exist. Read with include() by CMake projects and cmake -P scripts alike.
set(POSENC_FAMILIES sinusoidal rotary alibi floater tupe toeplitz)

# Per family NAME, what the lists beside this one are made from or checked against
# (tests/layering/check_lists.cmake, the ctest layering.lists):
#   POSENC_FAMILY_TITLE_NAME  the name a package description gives it (conanfile.py,
#                             packaging/vcpkg/ports/posenc/vcpkg.json must name every title)
#   POSENC_FAMILY_PAGE_NAME   its page of the docs site: the page docs.browser screenshots
#                             (docs/CMakeLists.txt makes the list from these)
# and include/posenc/device/NAME.hpp, included by include/posenc/device/encodings.hpp.
set(POSENC_FAMILY_TITLE_sinusoidal "sinusoidal")
set(POSENC_FAMILY_PAGE_sinusoidal sinusoidal)
set(POSENC_FAMILY_TITLE_rotary "RoPE")
set(POSENC_FAMILY_PAGE_rotary extrapolation)
set(POSENC_FAMILY_TITLE_alibi "ALiBi")
set(POSENC_FAMILY_PAGE_alibi attention-bias)
set(POSENC_FAMILY_TITLE_floater "FLOATER")
set(POSENC_FAMILY_PAGE_floater floater)
set(POSENC_FAMILY_TITLE_tupe "TUPE")
set(POSENC_FAMILY_PAGE_tupe tupe)
set(POSENC_FAMILY_TITLE_toeplitz "Toeplitz")
set(POSENC_FAMILY_PAGE_toeplitz toeplitz)

# The sideways edges between families, "user>used": a family includes another family's headers
# only along an edge declared here (none but these; each must be used, so the list only shrinks).
#   rotary>sinusoidal   rotary/ applies the sinusoidal rotation (sinusoidal::layout, table_ref)
set(POSENC_FAMILY_EDGES "rotary>sinusoidal")

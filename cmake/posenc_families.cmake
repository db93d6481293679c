# SPDX-License-Identifier: MIT
# The encoding families of posenc, listed once. Adding a family NAME is one entry in
# POSENC_FAMILIES (and writing the family):
#   include/posenc/NAME/      its headers (namespace posenc::NAME; Eigen allowed), installed with
#                             posenc::eigen (CMakeLists.txt, tests/install/install_tree.cmake)
#   include/posenc/NAME.hpp   its umbrella header, included by include/posenc/posenc.hpp
#   tests/NAME/*.test.cpp     its test program posenc_tests_NAME, tests "NAME.*" (tests/CMakeLists.txt)
# and the layering test (tests/layering/check_layers.cmake) places NAME/ above encoding/ and
# below device/, and checks that the folder, the umbrella header and its include in posenc.hpp
# exist. Read with include() by CMake projects and cmake -P scripts alike.
set(POSENC_FAMILIES sinusoidal rotary alibi floater tupe toeplitz)

# The sideways edges between families, "user>used": a family includes another family's headers
# only along an edge declared here (none but these; each must be used, so the list only shrinks).
#   rotary>sinusoidal   rotary/ applies the sinusoidal rotation (sinusoidal::layout, table_ref)
set(POSENC_FAMILY_EDGES "rotary>sinusoidal")

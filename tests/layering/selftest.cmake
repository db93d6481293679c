# SPDX-License-Identifier: MIT
# The layering check must fail on each kind of violation: build a small include tree (with its own
# cmake/posenc_families.cmake) with one violation per rule, run check_layers.cmake on it, and
# require every expected diagnostic and no diagnostic on the allowed lines.
#   cmake -DWORK_DIR=<scratch dir> -P tests/layering/selftest.cmake
cmake_minimum_required(VERSION 3.24)
set(root "${WORK_DIR}/layering_selftest")
file(REMOVE_RECURSE "${root}")
set(inc "${root}/include/posenc")
file(WRITE "${inc}/core/error.hpp" "#pragma once\n#include <vector>\nnamespace posenc::detail {\ninline void require(bool) {}\n}  // namespace posenc::detail\n")
# the family list of the tree: three families, one declared edge that no include uses
file(WRITE "${root}/cmake/posenc_families.cmake" "set(POSENC_FAMILIES sinusoidal tupe floater)\nset(POSENC_FAMILY_EDGES \"floater>tupe\")\n")
# 6. the umbrella header misses a family (floater), whose own umbrella header is missing too
file(WRITE "${inc}/posenc.hpp" "#pragma once\n#include <posenc/sinusoidal.hpp>\n#include <posenc/tupe.hpp>\n")
file(WRITE "${inc}/sinusoidal.hpp" "#pragma once\n#include <posenc/sinusoidal/sinusoidal.hpp>\n")
file(WRITE "${inc}/tupe.hpp" "#pragma once\n#include <posenc/tupe/tupe.hpp>\n")
file(WRITE "${inc}/tensor/table.hpp" "#pragma once\nnamespace posenc {\nnamespace detail {\ninline int allocate_x(int n) { return n; }\n}  // namespace detail\n}  // namespace posenc\n")
# 1. a family including another along no declared edge; 7. a tableau read outside ode/ (and one
# in a comment, and one inside ode/, both fine); 5. a posenc::detail name of another family
# (tupe's), next to posenc::detail names of core/ and tensor/ (shared: fine)
file(WRITE "${inc}/floater/x.hpp"
     "#pragma once\n#include <posenc/sinusoidal/sinusoidal.hpp>\ntemplate <class S> double c2() { return S::coefficients.c[2]; }\ninline int y = posenc::detail::tupe_helper();\n// S::coefficients in a comment is fine\ninline int z = posenc::detail::allocate_x(2);\ninline void w() { posenc::detail::require(true); }\n")
file(WRITE "${inc}/ode/tableau.hpp" "#pragma once\ntemplate <class S> double c1() { return S::coefficients.c[1]; }\n")
# 1. a folder including a folder above it
file(WRITE "${inc}/ode/stepper.hpp" "#pragma once\n#include <posenc/core/error.hpp>\n#include <posenc/sinusoidal/sinusoidal.hpp>\n")
# 2. a private header of another module; 5. another module's detail name
file(WRITE "${inc}/io/detail/json.hpp" "#pragma once\nnamespace posenc::io::detail { inline int parse(const char*) { return 0; } }\n")
file(WRITE "${inc}/sinusoidal/sinusoidal.hpp"
     "#pragma once\n#include <Eigen/Core>\n#include <posenc/io/detail/json.hpp>\ninline int x = posenc::io::detail::parse(\"[;]\");\n// io::detail:: in a comment is fine\n")
# 3. an adapter including another adapter; 4. a third-party header outside its place
file(WRITE "${inc}/adapters/eigen.hpp" "#pragma once\n#include <Eigen/Core>\n")
file(WRITE "${inc}/adapters/xtensor.hpp" "#pragma once\n#include <posenc/adapters/eigen.hpp>\n#include <xtensor/xarray.hpp>\n")
file(WRITE "${inc}/tupe/tupe.hpp" "#pragma once\n#include <boost/numeric/odeint.hpp>\n#include <thrust/fill.h>\n#include <posenc/tupe/missing.hpp>\nnamespace posenc::detail {\ninline int tupe_helper() { return 1; }\n}  // namespace posenc::detail\n")
# 9. deprecated forwarding headers: one in encoding/ (fine), a plain header in encoding/, one that
# forwards to two headers, and a family header that includes a forwarding header
file(WRITE "${inc}/encoding/table.hpp" "// Deprecated path: moved\n#pragma once\n#include <posenc/tensor/table.hpp>\n")
file(WRITE "${inc}/encoding/view.hpp" "#pragma once\n#include <posenc/tensor/table.hpp>\n")
file(WRITE "${inc}/tupe/old.hpp" "// Deprecated path: moved\n#pragma once\n#include <posenc/tupe/tupe.hpp>\n#include <posenc/core/error.hpp>\n")
file(WRITE "${inc}/sinusoidal/old.hpp" "#pragma once\n#include <posenc/encoding/table.hpp>\n")
# an unknown folder
file(WRITE "${inc}/misc/x.hpp" "#pragma once\n")
# 8. a header of 601 lines, which also makes core/ the one room above the limit of this tree (90%)
string(REPEAT "// filler\n" 600 filler)
file(WRITE "${inc}/core/big.hpp" "#pragma once\n${filler}")
execute_process(COMMAND "${CMAKE_COMMAND}" -DPOSENC_SOURCE_DIR=${root} -DPOSENC_MAX_ROOM_PERCENT=90 -P "${CMAKE_CURRENT_LIST_DIR}/check_layers.cmake"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "check_layers.cmake passed a tree full of violations:\n${all}")
endif()
foreach(expect
    "ode/stepper.hpp:3: ode/ includes <posenc/sinusoidal/sinusoidal.hpp>, but sinusoidal/ is not below ode/"
    "sinusoidal/sinusoidal.hpp:3: includes the private header <posenc/io/detail/json.hpp> of io/"
    "sinusoidal/sinusoidal.hpp:4: uses io::detail::"
    "adapters/xtensor.hpp:2: an adapter includes another adapter"
    "tupe/tupe.hpp:2: <boost/numeric/odeint.hpp> (boost) is allowed only in"
    "tupe/tupe.hpp:3: <thrust/fill.h> (thrust) is allowed only in"
    "tupe/tupe.hpp:4: includes <posenc/tupe/missing.hpp>, which does not exist"
    "misc/x.hpp: folder 'misc' has no place in the layer order"
    "floater/x.hpp:2: floater/ includes <posenc/sinusoidal/sinusoidal.hpp>, but floater>sinusoidal is no declared edge"
    "floater/x.hpp:3: reads a scheme's tableau (::coefficients) outside ode/"
    "floater/x.hpp:4: uses posenc::detail::tupe_helper of tupe/, which does not share its posenc::detail with floater/"
    "posenc.hpp: does not include <posenc/floater.hpp>"
    "floater.hpp: family 'floater' (cmake/posenc_families.cmake) has no umbrella header"
    "cmake/posenc_families.cmake: the edge 'floater>tupe' is no longer used"
    "core/big.hpp: 601 lines, more than 600"
    "encoding/view.hpp: encoding/ holds deprecated forwarding headers only"
    "tupe/old.hpp: a deprecated forwarding header includes exactly one posenc header (it includes 2)"
    "sinusoidal/old.hpp:2: includes the deprecated forwarding header <posenc/encoding/table.hpp>"
    "core/: holds 606 of the ")
  string(FIND "${all}" "${expect}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "check_layers.cmake did not report: ${expect}\nIt said:\n${all}")
  endif()
endforeach()
foreach(clean "sinusoidal/sinusoidal.hpp:5" "adapters/xtensor.hpp:3" "sinusoidal/sinusoidal.hpp:2" "floater/x.hpp:5"
              "floater/x.hpp:6" "floater/x.hpp:7" "ode/tableau.hpp" " tupe.hpp: " " sinusoidal.hpp: "
              "core/error.hpp: " "sinusoidal/: holds" "tupe/: holds"
              "encoding/table.hpp:")
  string(FIND "${all}" "${clean}" pos)
  if(NOT pos EQUAL -1)
    message(FATAL_ERROR "check_layers.cmake reported an allowed line (${clean}):\n${all}")
  endif()
endforeach()
message(STATUS "layering self-test: every planted violation reported, no allowed line reported")

# SPDX-License-Identifier: MIT
# The lists check must fail on each kind of disagreement: a small tree (its own
# cmake/posenc_families.cmake, two families) with one defect per list, checked by check_lists.cmake.
#   cmake -DWORK_DIR=<scratch dir> -P tests/layering/lists_selftest.cmake
cmake_minimum_required(VERSION 3.24)
set(root "${WORK_DIR}/lists_selftest")
file(REMOVE_RECURSE "${root}")
file(WRITE "${root}/cmake/posenc_families.cmake" "set(POSENC_FAMILIES alpha beta)
set(POSENC_FAMILY_TITLE_alpha \"Alpha\")\nset(POSENC_FAMILY_PAGE_alpha alpha_page)
set(POSENC_FAMILY_TITLE_beta \"Beta\")\nset(POSENC_FAMILY_PAGE_beta no_such_page)\n")
file(WRITE "${root}/include/posenc/posenc.hpp" "#pragma once\n#include <posenc/alpha.hpp>\n")
file(WRITE "${root}/include/posenc/device/encodings.hpp" "#pragma once\n#include <posenc/device/alpha.hpp>\n")
file(WRITE "${root}/include/posenc/device/alpha.hpp" "#pragma once\n")
file(WRITE "${root}/include/posenc/device/table.hpp" "#pragma once\n")
file(WRITE "${root}/conanfile.py" "class C:\n    description = \"Alpha \" \\\n                  \"and more\"\n")
file(WRITE "${root}/packaging/vcpkg/ports/posenc/vcpkg.json" "{\"name\": \"posenc\", \"description\": \"Beta only\"}\n")
file(WRITE "${root}/docs/alpha.md" "# Alpha {#alpha_page}\n")
execute_process(COMMAND "${CMAKE_COMMAND}" -DPOSENC_SOURCE_DIR=${root} -P "${CMAKE_CURRENT_LIST_DIR}/check_lists.cmake"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "check_lists.cmake passed a tree full of defects:\n${all}")
endif()
foreach(expect
    "include/posenc/posenc.hpp: does not include <posenc/beta.hpp>"
    "include/posenc/device/beta.hpp: family 'beta' has no device header"
    "include/posenc/device/encodings.hpp: does not include <posenc/device/table.hpp>"
    "conanfile.py: the description does not name family 'beta'"
    "vcpkg.json: the description does not name family 'alpha'"
    "POSENC_FAMILY_PAGE_beta = no_such_page is no {#id}")
  string(FIND "${all}" "${expect}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "check_lists.cmake did not report: ${expect}\nIt said:\n${all}")
  endif()
endforeach()
foreach(clean "posenc.hpp: does not include <posenc/alpha.hpp>" "<posenc/device/alpha.hpp>"
              "conanfile.py: the description does not name family 'alpha'" "PAGE_alpha")
  string(FIND "${all}" "${clean}" pos)
  if(NOT pos EQUAL -1)
    message(FATAL_ERROR "check_lists.cmake reported a correct entry (${clean}):\n${all}")
  endif()
endforeach()
message(STATUS "lists self-test: every planted disagreement reported, no correct entry reported")

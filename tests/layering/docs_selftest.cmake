# SPDX-License-Identifier: MIT
# The docs check must fail on each kind of broken reference: build a small tree with one broken
# reference per rule, run check_docs.cmake on it, and require every expected diagnostic.
#   cmake -DWORK_DIR=<scratch dir> -P tests/layering/docs_selftest.cmake
cmake_minimum_required(VERSION 3.24)
set(root "${WORK_DIR}/docs_selftest")
file(REMOVE_RECURSE "${root}")
file(WRITE "${root}/include/posenc/core/error.hpp" "#pragma once\nstruct shape_error {};\n")
file(WRITE "${root}/bench/ode.bench.cpp" "static void BM_rk4(int) {}\n")
file(WRITE "${root}/examples/short.cpp" "// [tag]\n#include <cstdio>\n/* a\n   block */\nint main() { return 0; }\n// [tag]\n")
set(long "")
foreach(i RANGE 1 41)
  string(APPEND long "int v${i} = ${i};\n")
endforeach()
file(WRITE "${root}/examples/long.cpp" "${long}// comment\n\nint main() { return 0; }\n")
file(WRITE "${root}/README.md" "Run `cmake --build b --target short` and `--target gone`; see `short.cpp`, `absent.cpp`.\n")
file(WRITE "${root}/docs/a.md"
     "# A {#a}\n\\ref a \\ref page-b \\ref posenc::shape_error \\ref posenc::no_such_name\n"
     "<posenc/core/error.hpp> <posenc/core/missing.hpp> tests/none.test.cpp examples/short.cpp\n"
     "\\snippet examples/short.cpp tag\n\\snippet examples/short.cpp other\n"
     "\\image html short-x.png \"ok\"\n\\image html gone-x.png \"broken\"\n"
     "(bench/ode.bench.cpp, BM_rk4) (bench/ode.bench.cpp, BM_missing)\n"
     "[fine](a.md#x) [broken](sub/b.md) [web](https://example.org/x.md)\n")
# page ids: docs/performance/b.md must be {#perf-b}, its sections perf-b-..., lower-case with '-'
file(WRITE "${root}/docs/performance/b.md" "# B {#perf-bee}\n## S {#perf-b-ok}\n## T {#other}\n\\anchor perf-b-Bad_id\n")
execute_process(COMMAND "${CMAKE_COMMAND}" -DPOSENC_SOURCE_DIR=${root} -P "${CMAKE_CURRENT_LIST_DIR}/check_docs.cmake"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "check_docs.cmake passed a tree of broken references:\n${all}")
endif()
foreach(expect
    "docs/a.md:2: \\ref page-b: no page or section has the anchor"
    "docs/a.md:2: \\ref posenc::no_such_name: 'no_such_name' does not occur"
    "docs/a.md:3: <posenc/core/missing.hpp> does not exist"
    "docs/a.md:3: tests/none.test.cpp does not exist"
    "docs/a.md:5: \\snippet examples/short.cpp other: the file has no [other] marker"
    "docs/a.md:7: picture drawn by examples/gone.cpp"
    "docs/a.md:8: benchmark BM_missing is not defined"
    "docs/a.md:9: link target sub/b.md does not exist"
    "README.md:1: --target gone"
    "README.md:1: absent.cpp is not in examples/"
    "examples/long.cpp: 42 lines of code (limit 40"
    "docs/performance/b.md:1: the page id must be {#perf-b}"
    "docs/performance/b.md: anchor other: a section's anchor starts with its page's id (perf-b-...)"
    "docs/performance/b.md: anchor perf-b-Bad_id: ids are lower-case words joined by '-'")
  string(FIND "${all}" "${expect}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "check_docs.cmake did not report: ${expect}\nIt said:\n${all}")
  endif()
endforeach()
foreach(clean "ref a:" "docs/a.md:1:" "perf-b-ok" "shape_error" "error.hpp>" "[tag]" "short-x" "BM_rk4" "--target short" "examples/short.cpp:" "a.md does not" "example.org")
  string(FIND "${all}" "${clean}" pos)
  if(NOT pos EQUAL -1)
    message(FATAL_ERROR "check_docs.cmake reported a valid reference (${clean}):\n${all}")
  endif()
endforeach()
message(STATUS "docs self-test: every planted broken reference reported, no valid one reported")

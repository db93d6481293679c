# SPDX-License-Identifier: MIT
# Builds the documentation site: runs the examples that draw pictures (each in its own scratch
# directory, collecting the PNG files they write), then Doxygen with warnings as errors, then
# checks the site. Run with cmake -P (see docs/CMakeLists.txt):
#   -DDOXYGEN=<doxygen> -DDOXYFILE=<configured Doxyfile> -DOUT_DIR=<out> -DIMAGE_DIR=<dir>
#   -DDOCS_DIR=<source docs/> -DPROGRAMS=<prog1|prog2|...> -DMATHJAX_DIR=<MathJax 2 directory>
cmake_minimum_required(VERSION 3.24)
string(REPLACE "|" ";" PROGRAMS "${PROGRAMS}")

# ---- pictures from the examples -----------------------------------------------------------------
# Each PNG an example writes is available to \image as <example>-<file>.png, and also as <file>.png
# when no other example writes a file of that name (an ambiguous name is left out, so a page that
# uses it fails instead of showing the wrong picture).
file(REMOVE_RECURSE "${IMAGE_DIR}" "${OUT_DIR}/html" "${OUT_DIR}/run")
file(MAKE_DIRECTORY "${IMAGE_DIR}")
set(made "")
set(ambiguous "")
foreach(p IN LISTS PROGRAMS)
  get_filename_component(name "${p}" NAME)
  set(dir "${OUT_DIR}/run/${name}")
  file(MAKE_DIRECTORY "${dir}")
  execute_process(COMMAND "${p}" WORKING_DIRECTORY "${dir}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "example ${name} failed (exit ${rc}); the docs need its pictures:\n${out}")
  endif()
  file(GLOB_RECURSE pngs RELATIVE "${dir}" "${dir}/*.png")
  foreach(png IN LISTS pngs)
    get_filename_component(base "${png}" NAME)
    file(COPY_FILE "${dir}/${png}" "${IMAGE_DIR}/${name}-${base}")
    list(APPEND made "${name}-${base}")
    if(base IN_LIST ambiguous)
      continue()
    elseif(EXISTS "${IMAGE_DIR}/${base}")
      file(REMOVE "${IMAGE_DIR}/${base}")
      list(APPEND ambiguous "${base}")
    else()
      file(COPY_FILE "${dir}/${png}" "${IMAGE_DIR}/${base}")
    endif()
  endforeach()
endforeach()
list(LENGTH made n)
message(STATUS "pictures from the examples (${n}): ${made}")
# The PNG writer compresses (examples/figures/include/posenc_figures/deflate.hpp): each picture's size against what the same
# image took with stored (uncompressed) deflate blocks, the writer's former output: 8-byte
# signature, IHDR and IEND chunks, one 12-byte chunk frame per MiB of IDAT, and a zlib stream of
# 2 + raw + 5 per 65535-byte block + 4 bytes, raw = height * (3 * width + 1). In all >= 10x.
set(stored_total 0)
set(png_total 0)
foreach(png IN LISTS made)
  file(READ "${IMAGE_DIR}/${png}" ihdr OFFSET 16 LIMIT 8 HEX)
  string(SUBSTRING "${ihdr}" 0 8 w)
  string(SUBSTRING "${ihdr}" 8 8 h)
  math(EXPR w "0x${w}")
  math(EXPR h "0x${h}")
  math(EXPR raw "${h} * (3 * ${w} + 1)")
  math(EXPR z "2 + ${raw} + 5 * ((${raw} + 65534) / 65535) + 4")
  math(EXPR stored "8 + 25 + 12 + 12 * ((${z} + 1048575) / 1048576) + ${z}")
  file(SIZE "${IMAGE_DIR}/${png}" size)
  math(EXPR ratio10 "10 * ${stored} / ${size}")
  string(REGEX REPLACE "([0-9])$" ".\\1" ratio "${ratio10}")
  message(STATUS "  ${png}: ${w} x ${h}, ${size} bytes (stored blocks: ${stored}, ${ratio}x)")
  math(EXPR stored_total "${stored_total} + ${stored}")
  math(EXPR png_total "${png_total} + ${size}")
endforeach()
if(png_total GREATER 0)
  math(EXPR ratio10 "10 * ${stored_total} / ${png_total}")
  string(REGEX REPLACE "([0-9])$" ".\\1" ratio "${ratio10}")
  message(STATUS "pictures: ${png_total} bytes, ${ratio}x smaller than stored blocks (${stored_total} bytes)")
  if(ratio10 LESS 100)
    message(FATAL_ERROR "the examples' pictures compress only ${ratio}x (at least 10x expected)")
  endif()
endif()
if(ambiguous)
  message(STATUS "written by several examples, so only as <example>-<file>.png: ${ambiguous}")
endif()

# ---- Doxygen ------------------------------------------------------------------------------------
execute_process(COMMAND "${DOXYGEN}" "${DOXYFILE}" WORKING_DIRECTORY "${OUT_DIR}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
set(log "")
if(EXISTS "${OUT_DIR}/doxygen-warnings.log")
  file(READ "${OUT_DIR}/doxygen-warnings.log" log)
endif()
string(STRIP "${log}" log)
if(NOT rc EQUAL 0 OR NOT log STREQUAL "")
  message(FATAL_ERROR "Doxygen failed (exit ${rc}); warnings are errors:\n${log}\n${out}")
endif()

# ---- the site -----------------------------------------------------------------------------------
if(NOT EXISTS "${OUT_DIR}/html/index.html")
  message(FATAL_ERROR "no ${OUT_DIR}/html/index.html")
endif()

# MathJax 2 into html/mathjax (MATHJAX_RELPATH): what the TeX input, the HTML-CSS output with its
# TeX fonts and the extensions the pages load need (about 2.5 MB of the package's 54 MB).
if(NOT EXISTS "${MATHJAX_DIR}/MathJax.js")
  message(FATAL_ERROR "MATHJAX_DIR=${MATHJAX_DIR} holds no MathJax.js")
endif()
set(mj "${OUT_DIR}/html/mathjax")
file(MAKE_DIRECTORY "${mj}")
file(COPY "${MATHJAX_DIR}/MathJax.js" DESTINATION "${mj}")
foreach(d extensions jax/input/TeX jax/element/mml jax/output/HTML-CSS fonts/HTML-CSS/TeX/woff
          fonts/HTML-CSS/TeX/otf localization/en)
  get_filename_component(parent "${mj}/${d}" DIRECTORY)
  file(COPY "${MATHJAX_DIR}/${d}" DESTINATION "${parent}" FOLLOW_SYMLINK_CHAIN
       PATTERN "fonts/Asana-Math" EXCLUDE PATTERN "fonts/Gyre-*" EXCLUDE PATTERN "fonts/Latin-Modern" EXCLUDE
       PATTERN "fonts/Neo-Euler" EXCLUDE PATTERN "fonts/STIX*" EXCLUDE)
endforeach()
foreach(f extensions/TeX/AMSmath.js extensions/TeX/AMSsymbols.js extensions/tex2jax.js jax/input/TeX/jax.js
          jax/output/HTML-CSS/jax.js)
  if(NOT EXISTS "${mj}/${f}")
    message(FATAL_ERROR "MathJax in ${MATHJAX_DIR} has no ${f}; the formulas would not render")
  endif()
endforeach()
# Every page loads MathJax from the site (no CDN).
file(STRINGS "${OUT_DIR}/html/index.html" mjline REGEX "MathJax\\.js")
if(NOT mjline MATCHES "src=\"mathjax/MathJax\\.js\"")
  message(FATAL_ERROR "index.html does not load mathjax/MathJax.js from the site: ${mjline}")
endif()
# Every hand-written page became an HTML page (a page without a `# Title {#id}` heading, or a file
# Doxygen skipped, would be missing from the site).
file(GLOB pages RELATIVE "${DOCS_DIR}" "${DOCS_DIR}/*.md" "${DOCS_DIR}/performance/*.md")
set(missing "")
foreach(md IN LISTS pages)
  if(md STREQUAL "index.md")
    continue()
  endif()
  file(STRINGS "${DOCS_DIR}/${md}" head LIMIT_COUNT 1)
  if(NOT head MATCHES "^# .*\\{#([A-Za-z0-9_-]+)\\}")
    string(APPEND missing "  ${md}: the first line must be '# Title {#page-id}'\n")
    continue()
  endif()
  set(id "${CMAKE_MATCH_1}")
  string(REPLACE "-" "_" id2 "${id}")
  string(REGEX REPLACE "([A-Z])" "_\\1" id3 "${id}")
  string(TOLOWER "${id3}" id3)
  if(NOT EXISTS "${OUT_DIR}/html/${id}.html" AND NOT EXISTS "${OUT_DIR}/html/${id2}.html"
     AND NOT EXISTS "${OUT_DIR}/html/${id3}.html")
    string(APPEND missing "  ${md}: no html/${id}.html\n")
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "pages missing from the site:\n${missing}")
endif()
# Every picture a page shows is in the site.
file(GLOB_RECURSE mds "${DOCS_DIR}/*.md")
foreach(md IN LISTS mds)
  file(STRINGS "${md}" imgs REGEX "\\\\image html ")
  foreach(line IN LISTS imgs)
    string(REGEX MATCH "\\\\image html ([^ ]+)" _ "${line}")
    if(NOT EXISTS "${OUT_DIR}/html/${CMAKE_MATCH_1}")
      string(APPEND missing "  ${md}: ${CMAKE_MATCH_1} is not in the site\n")
    endif()
  endforeach()
endforeach()
if(missing)
  message(FATAL_ERROR "pictures missing from the site:\n${missing}")
endif()
list(LENGTH pages np)
message(STATUS "documentation site: ${OUT_DIR}/html/index.html (${np} pages)")

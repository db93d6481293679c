# SPDX-License-Identifier: MIT
# Replays the vcpkg port (packaging/vcpkg/ports/posenc) without vcpkg: the options are read from
# portfile.cmake, the configure/install steps run as vcpkg_cmake_configure/vcpkg_cmake_install
# run them (release only, vcpkg's standard cache variables, absolute install destinations an
# error), vcpkg_cmake_config_fixup's move and prefix correction are applied, and the result is
# checked the way vcpkg's post-build checks and a user's find_package would see it. Run with -P:
#   -DSOURCE_DIR=<posenc source> -DWORK_DIR=<scratch> -DCXX=<compiler> -DGENERATOR=<generator>
#   -DVERSION=<project version>
cmake_minimum_required(VERSION 3.24)
set(port_dir "${SOURCE_DIR}/packaging/vcpkg/ports/posenc")
set(errors "")

# ---- the port's files --------------------------------------------------------------------------
file(READ "${port_dir}/portfile.cmake" portfile)
string(REGEX REPLACE "#[^\n]*" "" portfile "${portfile}")  # drop comments
if(NOT portfile MATCHES "set\\(VCPKG_BUILD_TYPE release\\)")
  string(APPEND errors "  portfile.cmake: expected set(VCPKG_BUILD_TYPE release)\n")
endif()
if(NOT portfile MATCHES "vcpkg_cmake_configure\\(([^)]*)\\)")
  message(FATAL_ERROR "portfile.cmake has no vcpkg_cmake_configure(...)")
endif()
string(REGEX MATCHALL "-D[A-Za-z0-9_]+=[^ \t\n\")]+" port_options "${CMAKE_MATCH_1}")
if(NOT port_options)
  message(FATAL_ERROR "portfile.cmake: no -D options found in vcpkg_cmake_configure")
endif()
if(NOT portfile MATCHES "vcpkg_cmake_config_fixup\\(([^)]*)\\)")
  message(FATAL_ERROR "portfile.cmake has no vcpkg_cmake_config_fixup(...)")
endif()
set(fixup_args "${CMAKE_MATCH_1}")
string(REGEX MATCH "PACKAGE_NAME[ \t\n]+([^ \t\n)]+)" _ "${fixup_args}")
set(package_name "${CMAKE_MATCH_1}")
string(REGEX MATCH "CONFIG_PATH[ \t\n]+([^ \t\n)]+)" _ "${fixup_args}")
set(config_path "${CMAKE_MATCH_1}")
if(NOT package_name STREQUAL "posenc" OR config_path STREQUAL "")
  message(FATAL_ERROR "portfile.cmake: expected vcpkg_cmake_config_fixup(PACKAGE_NAME posenc CONFIG_PATH ...), got (${fixup_args})")
endif()
foreach(step vcpkg_cmake_install vcpkg_install_copyright "share/\\\${PORT}")
  if(NOT portfile MATCHES "${step}")
    string(APPEND errors "  portfile.cmake: expected ${step}\n")
  endif()
endforeach()

file(READ "${port_dir}/vcpkg.json" manifest)
string(JSON port_version GET "${manifest}" version-semver)
if(NOT port_version STREQUAL VERSION)
  string(APPEND errors "  vcpkg.json: version-semver ${port_version}, but the project is ${VERSION}\n")
endif()
string(JSON name GET "${manifest}" name)
if(NOT name STREQUAL "posenc")
  string(APPEND errors "  vcpkg.json: name '${name}'\n")
endif()
foreach(f eigen xtensor odeint thrust)
  string(JSON _ ERROR_VARIABLE err GET "${manifest}" features ${f})
  if(err)
    string(APPEND errors "  vcpkg.json: no feature '${f}' (one per component)\n")
  endif()
endforeach()
file(READ "${port_dir}/usage" usage)
foreach(needle "find_package(posenc CONFIG REQUIRED)" "posenc::posenc" "COMPONENTS eigen" "posenc::eigen")
  string(FIND "${usage}" "${needle}" at)
  if(at LESS 0)
    string(APPEND errors "  usage: does not mention ${needle}\n")
  endif()
endforeach()
if(errors)
  message(FATAL_ERROR "the vcpkg port is inconsistent:\n${errors}")
endif()
message(STATUS "port options: ${port_options}; fixup: PACKAGE_NAME ${package_name} CONFIG_PATH ${config_path}")

# ---- vcpkg_cmake_configure + vcpkg_cmake_install (release only) -------------------------------
set(installed "${WORK_DIR}/installed/x64-linux")  # CURRENT_PACKAGES_DIR and CURRENT_INSTALLED_DIR
set(build "${WORK_DIR}/buildtrees/posenc/x64-linux-rel")
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(
  COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${build}" -G "${GENERATOR}"
          -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_INSTALL_PREFIX=${installed}"
          -DCMAKE_INSTALL_LIBDIR:STRING=lib -DCMAKE_INSTALL_BINDIR:STRING=bin
          -DCMAKE_EXPORT_NO_PACKAGE_REGISTRY=ON -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON
          -DFETCHCONTENT_FULLY_DISCONNECTED=ON -DCMAKE_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION=ON
          -DCMAKE_INSTALL_SYSTEM_RUNTIME_LIBS_SKIP=TRUE -DBUILD_SHARED_LIBS=OFF
          ${port_options}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "vcpkg_cmake_configure step failed:\n${out}")
endif()
# vcpkg reports port options the project ignores; here that is an error (the port drifted).
if(out MATCHES "Manually-specified variables were not used by the project:([^\n]*\n)+")
  foreach(o IN LISTS port_options)
    string(REGEX REPLACE "^-D([A-Za-z0-9_]+)=.*" "\\1" var "${o}")
    if(out MATCHES "\n    ${var}\n")
      string(APPEND errors "  portfile option ${o} is not used by CMakeLists.txt\n")
    endif()
  endforeach()
endif()
foreach(o IN LISTS port_options)
  string(REGEX REPLACE "^-D([A-Za-z0-9_]+)=(.*)$" "\\1;\\2" kv "${o}")
  list(GET kv 0 var)
  list(GET kv 1 val)
  file(STRINGS "${build}/CMakeCache.txt" line REGEX "^${var}:[A-Z]+=")
  if(NOT line MATCHES "=${val}$")
    string(APPEND errors "  portfile option ${o}: the cache has '${line}'\n")
  endif()
endforeach()
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${build}" --target install -j 2
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "vcpkg_cmake_install step failed:\n${out}")
endif()
if(errors)
  message(FATAL_ERROR "the port drifted from the CMake package:\n${errors}")
endif()

# ---- vcpkg_cmake_config_fixup(PACKAGE_NAME posenc CONFIG_PATH <config_path>) ---------------------
set(release_config "${installed}/${config_path}")
set(release_share "${installed}/share/${package_name}")
if(NOT EXISTS "${release_config}/posencConfig.cmake")
  message(FATAL_ERROR "CONFIG_PATH ${config_path} holds no posencConfig.cmake")
endif()
if(NOT release_config STREQUAL release_share)
  file(GLOB files "${release_config}/*")
  file(COPY ${files} DESTINATION "${release_share}")
  file(REMOVE_RECURSE "${release_config}")
  get_filename_component(parent "${release_config}" DIRECTORY)
  get_filename_component(parent_name "${parent}" NAME)
  if(parent_name STREQUAL "cmake")
    file(REMOVE_RECURSE "${parent}")
  endif()
endif()
file(GLOB_RECURSE cmakes "${release_share}/*.cmake")
foreach(f IN LISTS cmakes)
  file(READ "${f}" text)
  # The config files are now two levels below the prefix, whatever depth they were installed at.
  string(REGEX REPLACE
    "get_filename_component\\(_IMPORT_PREFIX \"\\\${CMAKE_CURRENT_LIST_FILE}\" PATH\\)(\nget_filename_component\\(_IMPORT_PREFIX \"\\\${_IMPORT_PREFIX}\" PATH\\))*"
    "get_filename_component(_IMPORT_PREFIX \"\${CMAKE_CURRENT_LIST_FILE}\" PATH)\nget_filename_component(_IMPORT_PREFIX \"\${_IMPORT_PREFIX}\" PATH)\nget_filename_component(_IMPORT_PREFIX \"\${_IMPORT_PREFIX}\" PATH)"
    text "${text}")
  string(REGEX REPLACE "get_filename_component\\(PACKAGE_PREFIX_DIR \"\\\${CMAKE_CURRENT_LIST_DIR}/\\.\\./(\\.\\./)*\" ABSOLUTE\\)"
    "get_filename_component(PACKAGE_PREFIX_DIR \"\${CMAKE_CURRENT_LIST_DIR}/../../\" ABSOLUTE)" text "${text}")
  string(REPLACE "${installed}" "\${_IMPORT_PREFIX}" text "${text}")
  file(WRITE "${f}" "${text}")
endforeach()
# vcpkg_fixup_pkgconfig: posenc.pc computes its prefix from its own location; check that it does.
file(GLOB pcs "${installed}/share/pkgconfig/*.pc" "${installed}/lib/pkgconfig/*.pc")
foreach(pc IN LISTS pcs)
  file(STRINGS "${pc}" prefix_line REGEX "^prefix=")
  if(NOT prefix_line MATCHES "pcfiledir")
    string(APPEND errors "  ${pc}: prefix is not relative to \${pcfiledir}: ${prefix_line}\n")
  endif()
endforeach()
# The rest of the portfile: release only, licence as copyright, usage next to the config.
file(REMOVE_RECURSE "${installed}/debug" "${installed}/share/doc")
file(COPY_FILE "${SOURCE_DIR}/LICENSE" "${release_share}/copyright")
file(COPY_FILE "${port_dir}/usage" "${release_share}/usage")

# ---- vcpkg's post-build expectations -------------------------------------------------------------
foreach(f share/posenc/posencConfig.cmake share/posenc/posencConfigVersion.cmake share/posenc/posencTargets.cmake
          share/posenc/copyright share/posenc/usage include/posenc/version.hpp)
  if(NOT EXISTS "${installed}/${f}")
    string(APPEND errors "  missing ${f}\n")
  endif()
endforeach()
foreach(d share/cmake lib bin debug)
  if(EXISTS "${installed}/${d}")
    string(APPEND errors "  ${d}/ should not exist in a header-only port after fixup\n")
  endif()
endforeach()
file(GLOB_RECURSE all "${installed}/share/*")
foreach(f IN LISTS all)
  file(STRINGS "${f}" hits REGEX "${WORK_DIR}|${SOURCE_DIR}")
  if(hits)
    string(APPEND errors "  ${f} contains an absolute path: ${hits}\n")
  endif()
endforeach()
if(errors)
  message(FATAL_ERROR "the port's installed tree is not what vcpkg expects:\n${errors}")
endif()
message(STATUS "vcpkg-style tree at ${installed} is complete")

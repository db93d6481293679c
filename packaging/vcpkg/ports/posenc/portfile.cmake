# SPDX-License-Identifier: MIT
# vcpkg port for posenc (header-only). Each feature is one CMake component; a feature that is off
# keeps CMake from finding that dependency elsewhere on the system, so the component, its targets
# and its pkg-config file (posenc-core.pc always; posenc.pc with "eigen", posenc-<c>.pc for the
# adapters) are installed exactly when the feature is. "blas" is opt-in the other way round: it
# switches on POSENC_WITH_BLAS (posenc::blas, posenc-blas.pc), which is OFF otherwise.
# tests/packaging/vcpkg_port.cmake replays the configure/install/fixup steps below in the test suite.
set(VCPKG_BUILD_TYPE release)

if(EXISTS "${CMAKE_CURRENT_LIST_DIR}/../../../../include/posenc/version.hpp")
    # Overlay port inside a posenc checkout (vcpkg install posenc --overlay-ports=packaging/vcpkg/ports):
    # package that checkout.
    get_filename_component(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../../../.." ABSOLUTE)
else()
    # Registry copy of the port: the release tarball (the SHA512 is filled in when v${VERSION} is tagged).
    vcpkg_from_github(
        OUT_SOURCE_PATH SOURCE_PATH
        REPO posenc/posenc
        REF "v${VERSION}"
        SHA512 0
        HEAD_REF main
    )
endif()

vcpkg_check_features(OUT_FEATURE_OPTIONS FEATURE_OPTIONS
    FEATURES
        blas    POSENC_WITH_BLAS
    INVERTED_FEATURES
        eigen   CMAKE_DISABLE_FIND_PACKAGE_Eigen3
        xtensor CMAKE_DISABLE_FIND_PACKAGE_xtensor
        odeint  CMAKE_DISABLE_FIND_PACKAGE_boost_headers
        thrust  CMAKE_DISABLE_FIND_PACKAGE_CCCL
)

vcpkg_cmake_configure(
    SOURCE_PATH "${SOURCE_PATH}"
    OPTIONS
        ${FEATURE_OPTIONS}
        -DPOSENC_BUILD_TESTS=OFF
        -DPOSENC_BUILD_EXAMPLES=OFF
        -DPOSENC_BUILD_BENCHMARKS=OFF
        -DPOSENC_BUILD_DOCS=OFF
        -DPOSENC_INSTALL=ON
)
vcpkg_cmake_install()
vcpkg_cmake_config_fixup(PACKAGE_NAME posenc CONFIG_PATH share/cmake/posenc)
vcpkg_fixup_pkgconfig()

file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/debug" "${CURRENT_PACKAGES_DIR}/share/doc")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")

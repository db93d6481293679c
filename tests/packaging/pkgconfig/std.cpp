// SPDX-License-Identifier: MIT
// pkg-config consumer: compiled with `pkg-config --cflags posenc-core` (or posenc, with
// -DPOSENC_PC_EIGEN) and the -std the user chose; prints the __cplusplus it was compiled with, so
// the test can check that the .pc file did not change the standard.
#include <cstdio>

#if defined(POSENC_PC_EIGEN)
#include <posenc/posenc.hpp>
#else
#include <posenc/io/npy.hpp>
#include <posenc/ode.hpp>
#endif
#include <posenc/version.hpp>

int main() {
  std::printf("__cplusplus=%ld posenc=%d.%d.%d\n", static_cast<long>(__cplusplus), posenc::version_major,
              posenc::version_minor, posenc::version_patch);
  return 0;
}

// SPDX-License-Identifier: MIT
// POSENC_HD marks functions that may run on a GPU: __host__ __device__ under nvcc (or clang
// CUDA), nothing otherwise. Functors handed to a Thrust backend carry it.
// POSENC_ALWAYS_INLINE marks the thin layers of the ODE engine (step -> stage -> stage sum ->
// backend loop): without it g++ stops inlining them once a translation unit instantiates many
// steppers (its unit-growth limits), and a small-state step then pays calls, coefficient arrays
// passed through memory and loop set-up per layer (docs/performance/ode.md).
#pragma once

#include <cmath>
#include <type_traits>

#include <posenc/version.hpp>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define POSENC_HD __host__ __device__
#define POSENC_DEVICE_COMPILER 1
#else
#define POSENC_HD
#define POSENC_DEVICE_COMPILER 0
#endif

// POSENC_INDEPENDENT_ITERATIONS before a loop whose iterations do not depend on each other
// (element-wise stage sums: the output is either one of the inputs, element for element, or
// disjoint from all of them): g++ then emits no run-time overlap checks. Empty elsewhere:
// clang's only equivalent, `loop vectorize(assume_safety)`, also forces vectorisation and warns
// (-Wpass-failed) on loops it cannot vectorise, e.g. long double ones.
#if defined(__CUDACC__) || defined(__HIPCC__) || defined(__clang__)
#define POSENC_INDEPENDENT_ITERATIONS
#elif defined(__GNUC__)
#define POSENC_INDEPENDENT_ITERATIONS _Pragma("GCC ivdep")
#else
#define POSENC_INDEPENDENT_ITERATIONS
#endif

#if defined(__CUDACC__) || defined(__HIPCC__)
// (not __forceinline__: it includes `inline`, which some of the marked functions already say)
#define POSENC_ALWAYS_INLINE __attribute__((always_inline))
#define POSENC_COLD __attribute__((cold, noinline))
#elif defined(__GNUC__) || defined(__clang__)
#define POSENC_ALWAYS_INLINE [[gnu::always_inline]]
#define POSENC_COLD [[gnu::cold, gnu::noinline]]
#elif defined(_MSC_VER)
#define POSENC_ALWAYS_INLINE __forceinline
#define POSENC_COLD __declspec(noinline)
#else
#define POSENC_ALWAYS_INLINE
#define POSENC_COLD
#endif

namespace posenc::detail {

/// The math functions of the device kernels (posenc/device/), written once for host and device:
/// CUDA's ::sin, ::cos, ... in device compilation, std:: on the host.
POSENC_HD inline double sin_hd(double x) {
#if POSENC_DEVICE_COMPILER
  return ::sin(x);
#else
  return std::sin(x);
#endif
}
POSENC_HD inline double cos_hd(double x) {
#if POSENC_DEVICE_COMPILER
  return ::cos(x);
#else
  return std::cos(x);
#endif
}
POSENC_HD inline double exp_hd(double x) {
#if POSENC_DEVICE_COMPILER
  return ::exp(x);
#else
  return std::exp(x);
#endif
}
POSENC_HD inline double fma_hd(double a, double b, double c) {
#if POSENC_DEVICE_COMPILER
  return ::fma(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
POSENC_HD inline double nearbyint_hd(double x) {
#if POSENC_DEVICE_COMPILER
  return ::nearbyint(x);
#else
  return std::nearbyint(x);
#endif
}
template <class T>
POSENC_HD inline T sqrt_hd(T v) {
#if POSENC_DEVICE_COMPILER
  return ::sqrt(v);
#else
  return std::sqrt(v);
#endif
}
/// |x| as x < 0 ? -x : x (-0.0 stays -0.0).
POSENC_HD inline double fabs_hd(double x) { return x < 0 ? -x : x; }

/// a * b rounded on its own: never fused with a neighbouring addition into a multiply-add.
/// nvcc contracts a * b + c into one FMA in device code by default (-fmad=true), which breaks
/// the error-free transformations (two_prod's p = a * b must be the rounded product that its
/// error term fma(a, b, -p) completes: contracted into theta - a * b, the error is counted twice)
/// and makes device results differ from the host's, whose kernels round each product. In device
/// code this is __dmul_rn / __fmul_rn, which the compiler never contracts; on the host a * b.
template <class T>
POSENC_HD inline T mul_rn(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, double>)
    return __dmul_rn(a, b);
  else if constexpr (std::is_same_v<T, float>)
    return __fmul_rn(a, b);
  else
    return a * b;
#else
  return a * b;
#endif
}

}  // namespace posenc::detail

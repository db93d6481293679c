// SPDX-License-Identifier: MIT
// The butterflies: DFTs of radix 2, 3, 4, 5 and 8 (forward sign) on R values held in registers,
// each value a scalar T or a lane pack V of W scalars (fft/lanes.hpp). Part of
// <posenc/numeric/fft.hpp>.
#pragma once

namespace posenc::fft::detail {

template <class T, class V>
inline void bfly2(V* ar, V* ai) {
  const V r = ar[0] - ar[1], i = ai[0] - ai[1];
  ar[0] += ar[1];
  ai[0] += ai[1];
  ar[1] = r;
  ai[1] = i;
}

template <class T, class V>
inline void bfly3(V* ar, V* ai) {
  constexpr T s = static_cast<T>(0.866025403784438646763723170752936183L);  // sin(2 pi / 3)
  const V t1r = ar[1] + ar[2], t1i = ai[1] + ai[2];
  const V t2r = ar[1] - ar[2], t2i = ai[1] - ai[2];
  const V mr = ar[0] - T(0.5) * t1r, mi = ai[0] - T(0.5) * t1i;
  ar[0] += t1r;
  ai[0] += t1i;
  ar[1] = mr + s * t2i;
  ai[1] = mi - s * t2r;
  ar[2] = mr - s * t2i;
  ai[2] = mi + s * t2r;
}

template <class T, class V>
inline void bfly4(V* ar, V* ai) {
  const V t0r = ar[0] + ar[2], t0i = ai[0] + ai[2];
  const V t1r = ar[0] - ar[2], t1i = ai[0] - ai[2];
  const V t2r = ar[1] + ar[3], t2i = ai[1] + ai[3];
  const V t3r = ar[1] - ar[3], t3i = ai[1] - ai[3];
  ar[0] = t0r + t2r;
  ai[0] = t0i + t2i;
  ar[2] = t0r - t2r;
  ai[2] = t0i - t2i;
  ar[1] = t1r + t3i;  // t1 - i t3
  ai[1] = t1i - t3r;
  ar[3] = t1r - t3i;  // t1 + i t3
  ai[3] = t1i + t3r;
}

template <class T, class V>
inline void bfly5(V* ar, V* ai) {
  constexpr T c1 = static_cast<T>(0.309016994374947424102293417182819059L);   // cos(2 pi / 5)
  constexpr T c2 = static_cast<T>(-0.809016994374947424102293417182819059L);  // cos(4 pi / 5)
  constexpr T s1 = static_cast<T>(0.951056516295153572116439333379382143L);   // sin(2 pi / 5)
  constexpr T s2 = static_cast<T>(0.587785252292473129168705954639072769L);   // sin(4 pi / 5)
  const V t1r = ar[1] + ar[4], t1i = ai[1] + ai[4];
  const V t2r = ar[2] + ar[3], t2i = ai[2] + ai[3];
  const V t3r = ar[1] - ar[4], t3i = ai[1] - ai[4];
  const V t4r = ar[2] - ar[3], t4i = ai[2] - ai[3];
  const V m1r = ar[0] + c1 * t1r + c2 * t2r, m1i = ai[0] + c1 * t1i + c2 * t2i;
  const V m2r = ar[0] + c2 * t1r + c1 * t2r, m2i = ai[0] + c2 * t1i + c1 * t2i;
  const V n1r = s1 * t3r + s2 * t4r, n1i = s1 * t3i + s2 * t4i;
  const V n2r = s2 * t3r - s1 * t4r, n2i = s2 * t3i - s1 * t4i;
  ar[0] += t1r + t2r;
  ai[0] += t1i + t2i;
  ar[1] = m1r + n1i;  // m1 - i n1
  ai[1] = m1i - n1r;
  ar[4] = m1r - n1i;  // m1 + i n1
  ai[4] = m1i + n1r;
  ar[2] = m2r + n2i;  // m2 - i n2
  ai[2] = m2i - n2r;
  ar[3] = m2r - n2i;  // m2 + i n2
  ai[3] = m2i + n2r;
}

// Radix 8 as two radix-4 DFTs (even and odd samples) combined with w8^k = exp(-i pi k / 4).
template <class T, class V>
inline void bfly8(V* ar, V* ai) {
  constexpr T h = static_cast<T>(0.707106781186547524400844362104849039L);  // 1/sqrt(2)
  V er[4] = {ar[0], ar[2], ar[4], ar[6]}, ei[4] = {ai[0], ai[2], ai[4], ai[6]};
  V orr[4] = {ar[1], ar[3], ar[5], ar[7]}, oi[4] = {ai[1], ai[3], ai[5], ai[7]};
  bfly4<T>(er, ei);
  bfly4<T>(orr, oi);
  // o_k <- w8^k o_k
  const V o1r = h * (orr[1] + oi[1]), o1i = h * (oi[1] - orr[1]);
  const V o2r = oi[2], o2i = -orr[2];
  const V o3r = h * (oi[3] - orr[3]), o3i = -h * (orr[3] + oi[3]);
  ar[0] = er[0] + orr[0];
  ai[0] = ei[0] + oi[0];
  ar[4] = er[0] - orr[0];
  ai[4] = ei[0] - oi[0];
  ar[1] = er[1] + o1r;
  ai[1] = ei[1] + o1i;
  ar[5] = er[1] - o1r;
  ai[5] = ei[1] - o1i;
  ar[2] = er[2] + o2r;
  ai[2] = ei[2] + o2i;
  ar[6] = er[2] - o2r;
  ai[6] = ei[2] - o2i;
  ar[3] = er[3] + o3r;
  ai[3] = ei[3] + o3i;
  ar[7] = er[3] - o3r;
  ai[7] = ei[3] - o3i;
}

template <unsigned R, class T, class V>
inline void bfly(V* ar, V* ai) {
  if constexpr (R == 2) bfly2<T>(ar, ai);
  else if constexpr (R == 3) bfly3<T>(ar, ai);
  else if constexpr (R == 4) bfly4<T>(ar, ai);
  else if constexpr (R == 5) bfly5<T>(ar, ai);
  else bfly8<T>(ar, ai);
}

}  // namespace posenc::fft::detail

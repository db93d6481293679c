// SPDX-License-Identifier: MIT
// posenc::device::rotary::apply_inplace / apply_ragged_inplace and posenc::device::alibi against
// the host implementations (posenc/rotary/apply.hpp, posenc/alibi/alibi.hpp) on the same inputs,
// on device memory of the Thrust device system (CPP/OMP here, CUDA in the nvcc build).
//
// Tolerances: host and device each are within 2^-50 (|a| + |b|) f of the exact rotation (plus
// 0.5 ulp for float storage), with |a|, |b| <= 2 and f the attention factor (times the xPos scale):
// so |device - host| <= 32 eps_64 f for double and <= 8 eps_32 f for float (two roundings of
// values of magnitude <= 4 f). Device ragged and device dense run the same functor on the same
// positions: equal bitwise. ALiBi: bitwise on the CPP/OMP systems, within 1 ulp under nvcc
// (fused multiply-add).
#include <doctest/doctest.h>

#include <thrust/copy.h>
#include <thrust/device_vector.h>

#include <posenc/device/alibi.hpp>
#include <posenc/device/rotary.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace {

template <class T>
std::vector<T> random_host(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(u(rng));
  return v;
}

template <class T>
std::vector<T> to_std(const thrust::device_vector<T>& d) {
  std::vector<T> h(d.size());
  thrust::copy(d.begin(), d.end(), h.begin());
  return h;
}

template <class T>
T* raw(thrust::device_vector<T>& v) {
  return thrust::raw_pointer_cast(v.data());
}

template <class T>
std::size_t count_outside(const std::vector<T>& a, const std::vector<T>& b, double tol) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
    if (!(d <= tol)) ++n;
  }
  return n;
}

template <class T>
void device_dense_and_ragged() {
  namespace pr = posenc::rotary;
  namespace dr = posenc::device::rotary;
  const std::size_t B = 3, Hq = 4, Hk = 2, S = 21, D = 20, half = 8;
  pr::frequencies f = pr::default_frequencies(2 * half, 1e4);
  f.attention_factor = 1.25;
  const std::vector<std::int64_t> off{0, 77, (std::int64_t{1} << 24) + 5};
  const double eps = std::numeric_limits<T>::epsilon();
  // + the host's phase rounding: numeric::sincos_angle rounds position * inv_freq to long double
  // (0.5 ulp = 2^-64 n w relative, w <= 1) while the device forms it in double-double (exact to
  // ~2^-100): at n ~ 2^24 that is 2^-40 absolute in the angle, times |a| + |b| <= 4 and f.
  const double n_max = static_cast<double>(off.back()) + S;
  const double tol = (std::is_same_v<T, double> ? 32 : 8) * eps * f.attention_factor +
                     std::ldexp(n_max, -64) * 4 * f.attention_factor;
  for (auto lay : {pr::layout::interleaved, pr::layout::half}) {
    const auto q0 = random_host<T>(B * Hq * S * D, 1), k0 = random_host<T>(B * Hk * S * D, 2);
    // host
    auto qh = q0, kh = k0;
    pr::apply_inplace<T>(pr::dense_view<T>::contiguous(qh.data(), {B, Hq, S, D}),
                         pr::dense_view<T>::contiguous(kh.data(), {B, Hk, S, D}), f, off, {.layout = lay});
    // device dense
    thrust::device_vector<T> qd(q0.begin(), q0.end()), kd(k0.begin(), k0.end());
    dr::apply_inplace<T>(pr::dense_view<T>::contiguous(raw(qd), {B, Hq, S, D}),
                         pr::dense_view<T>::contiguous(raw(kd), {B, Hk, S, D}), f, off, {.layout = lay});
    const auto qdh = to_std(qd), kdh = to_std(kd);
    CHECK(count_outside(qdh, qh, tol) == 0);
    CHECK(count_outside(kdh, kh, tol) == 0);
    // device ragged over the same tokens: a [B*S, H, D] view with token stride D and head stride S*D
    // is not ragged-contiguous, so use one ragged call per sequence on the dense buffers
    thrust::device_vector<T> qr(q0.begin(), q0.end()), kr(k0.begin(), k0.end());
    for (std::size_t b = 0; b < B; ++b) {
      pr::ragged_view<T> qv{raw(qr) + b * Hq * S * D, {S, Hq, D}, {static_cast<std::ptrdiff_t>(D), static_cast<std::ptrdiff_t>(S * D), 1}};
      pr::ragged_view<T> kv{raw(kr) + b * Hk * S * D, {S, Hk, D}, {static_cast<std::ptrdiff_t>(D), static_cast<std::ptrdiff_t>(S * D), 1}};
      const std::vector<std::int64_t> cu{0, static_cast<std::int64_t>(S)}, o{off[b]};
      dr::apply_ragged_inplace<T, std::int64_t>(qv, kv, cu, o, f, {.layout = lay});
    }
    CHECK(to_std(qr) == qdh);
    CHECK(to_std(kr) == kdh);
  }
}

}  // namespace

TEST_CASE("device rotary apply: dense equals the host within the bound and ragged equals dense bitwise") {
  SUBCASE("double") { device_dense_and_ragged<double>(); }
  SUBCASE("float") { device_dense_and_ragged<float>(); }
}

TEST_CASE("device rotary apply: a ragged batch with empty sequences and KV-cache offsets with xPos") {
  namespace pr = posenc::rotary;
  namespace dr = posenc::device::rotary;
  const std::size_t T = 14, H = 2, D = 16;
  const auto f = pr::default_frequencies(D);
  const std::vector<int> cu{0, 3, 3, 13, 14}, off{5, 0, 1000, 4095};
  pr::apply_options o;
  o.xpos.enabled = true;
  o.xpos.center = 2000;
  const auto q0 = random_host<double>(T * H * D, 3), k0 = random_host<double>(T * H * D, 4);
  auto qh = q0, kh = k0;
  pr::apply_ragged_inplace<double, int>(pr::ragged_view<double>::contiguous(qh.data(), {T, H, D}),
                                        pr::ragged_view<double>::contiguous(kh.data(), {T, H, D}), cu, off, f, o);
  thrust::device_vector<double> qd(q0.begin(), q0.end()), kd(k0.begin(), k0.end());
  dr::apply_ragged_inplace<double, int>(pr::ragged_view<double>::contiguous(raw(qd), {T, H, D}),
                                        pr::ragged_view<double>::contiguous(raw(kd), {T, H, D}), cu, off, f, o);
  // xPos scales up to 0.29^(-4) ~ 150 at |n - center| = 2000, scale_base 512: tolerance scaled by 200
  CHECK(count_outside(to_std(qd), qh, 200 * 32 * std::numeric_limits<double>::epsilon()) == 0);
  CHECK(count_outside(to_std(kd), kh, 200 * 32 * std::numeric_limits<double>::epsilon()) == 0);
}

TEST_CASE("device rotary apply: bad input is rejected with the host's messages and NaN leaves q and k unchanged") {
  namespace pr = posenc::rotary;
  namespace dr = posenc::device::rotary;
  const std::size_t T = 4, H = 1, D = 8;
  std::vector<float> h(T * H * D, 0.5f);
  h[13] = std::numeric_limits<float>::quiet_NaN();
  thrust::device_vector<float> q(h.begin(), h.end());
  const auto f = pr::default_frequencies(D);
  const auto v = pr::ragged_view<float>::contiguous(raw(q), {T, H, D});
  const std::vector<int> cu{0, 4}, off{0};
  try {
    dr::apply_ragged_inplace<float, int>(v, {}, cu, off, f);
    FAIL_CHECK("no exception");
  } catch (const posenc::non_finite_error& e) {
    CHECK(std::string(e.what()).find("device::rotary::apply_ragged_inplace: q/k: expected finite values") != std::string::npos);
  }
  const auto back = to_std(q);
  CHECK(std::memcmp(back.data(), h.data(), h.size() * sizeof(float)) == 0);
  try {
    dr::apply_ragged_inplace<float, int>(v, {}, std::vector<int>{0, 3}, off, f);
    FAIL_CHECK("no exception");
  } catch (const posenc::shape_error& e) {
    CHECK(std::string(e.what()).find("cu_seqlens: expected the last offset to equal the token count 4, got 3") != std::string::npos);
  }
  auto odd = [&] { dr::apply_ragged_inplace<float, int>(v, {}, cu, off, f, {.rotary_dim = 5}); };
  CHECK_THROWS_AS(odd(), posenc::invalid_argument);
}

TEST_CASE("device ALiBi: dense and ragged equal the host's") {
  namespace pa = posenc::alibi;
  namespace da = posenc::device::alibi;
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
  const double tol_ulps = 1;
#else
  const double tol_ulps = 0;
#endif
  const std::size_t B = 2, H = 6, Lq = 5, Lk = 40;
  const auto m = pa::slopes(H);
  const std::vector<std::int64_t> off{35, 3};
  for (auto form : {pa::bias_form::relative, pa::bias_form::key_position, pa::bias_form::symmetric}) {
    const pa::bias_options o{form, form != pa::bias_form::symmetric};
    auto h = random_host<float>(B * H * Lq * Lk, 5);
    thrust::device_vector<float> d(h.begin(), h.end());
    pa::add_bias<float>(pa::scores_view<float>::contiguous(h.data(), {B, H, Lq, Lk}), m, off, o);
    da::add_bias<float>(pa::scores_view<float>::contiguous(raw(d), {B, H, Lq, Lk}), m, off, o);
    const auto got = to_std(d);
    std::size_t bad = 0;
    for (std::size_t i = 0; i < h.size(); ++i) {
      if (std::isinf(h[i]) && got[i] == h[i]) continue;
      if (!(std::abs(got[i] - h[i]) <= tol_ulps * std::abs(h[i]) * std::numeric_limits<float>::epsilon())) ++bad;
    }
    CHECK(bad == 0);
  }
  // ragged
  const std::vector<int> cq{0, 4, 5, 9}, ck{0, 10, 22, 34};
  auto h = random_host<double>(9 * H * 12, 6);
  thrust::device_vector<double> d(h.begin(), h.end());
  pa::add_bias_ragged<double, int>(pa::ragged_scores_view<double>::contiguous(h.data(), {9, H, 12}), m, cq, ck);
  da::add_bias_ragged<double, int>(pa::ragged_scores_view<double>::contiguous(raw(d), {9, H, 12}), m, cq, ck);
  const auto got = to_std(d);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < h.size(); ++i)
    if (!(std::abs(got[i] - h[i]) <= tol_ulps * std::abs(h[i]) * std::numeric_limits<double>::epsilon())) ++bad;
  CHECK(bad == 0);
  auto too_long = [&] {
    da::add_bias_ragged<double, int>(pa::ragged_scores_view<double>::contiguous(raw(d), {9, H, 12}), m, cq,
                                     std::vector<int>{0, 10, 22, 35});
  };
  CHECK_THROWS_WITH_AS(too_long(), doctest::Contains("sequence 2 has 13 keys, expected <= k_max = 12"), posenc::shape_error);
}

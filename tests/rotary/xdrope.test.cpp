// SPDX-License-Identifier: MIT
// HunYuan-VL's xdrope (split-half multi-axis RoPE: posenc/rotary/axes.hpp axis_second,
// axes_apply.hpp, mrope.hpp hunyuan_rope_index, mrope_config.hpp) against transformers 5.23
// (tests/rotary/mrope/hunyuan_vl/, scripts/gen_mrope_reference.py) and closed forms.
//
// Tolerances:
//  - position ids and rope deltas: equal (integers).
//  - cos/sin against transformers' float64 evaluation (ntk_alpha base, float64 pow and division:
//    <= 2 ulp of the frequency, one more rounding of the phase p w): |posenc - reference| <=
//    2^-51 (1 + p w) + 2^-52 (posenc's own 1 ulp included), as tests/rotary/mrope.test.cpp.
//  - rotated q in double storage: (|a| + |b|) times that bound for both angles, plus 2^-51 (|a| +
//    |b|) for the two products and the sum of each side's evaluation; float storage: 2^-24 |y|
//    more (half an ulp: the output's rounding to float); bfloat16: 2^-8 |y| against the double map of its input.
//  - float tables against transformers' float32 forward: 2^-21 (1 + p w) (its float32 inv_freq and phase).
//  - the split-half map's norm: |(a', b')|^2 = a^2 (cos^2 A + sin^2 B) + b^2 (sin^2 A + cos^2 B)
//    + 2ab (cos B sin B - cos A sin A) in long double, 1e-13 relative (a few double roundings).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Core>

#include <posenc/io/npy.hpp>
#include <posenc/rotary.hpp>

#ifndef POSENC_MROPE_REFERENCE_DIR
#error "POSENC_MROPE_REFERENCE_DIR must name tests/rotary/mrope"
#endif

namespace pr = posenc::rotary;
namespace fs = std::filesystem;

namespace {

const fs::path hy_dir = fs::path(POSENC_MROPE_REFERENCE_DIR) / "hunyuan_vl";

std::string hy_slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::int64_t> hy_ints(const fs::path& p) {
  const auto a = posenc::io::read_npy<double>(p);
  std::vector<std::int64_t> out;
  for (const double v : a.data) out.push_back(static_cast<std::int64_t>(v));
  return out;
}

constexpr std::size_t B = 2, S = 24, D = 128, M = 64, A = 4;

/// The bound of one cos/sin entry against the float64 reference at phase p w.
double entry_bound(std::int64_t p, long double w) {
  return std::ldexp(1.0, -51) * (1.0 + std::fabs(static_cast<double>(p) * static_cast<double>(w))) +
         std::ldexp(1.0, -52);
}

}  // namespace

TEST_CASE("xdrope: load_mrope_config reads hunyuan_vl (ntk_alpha base, four axes, split-half)") {
  const pr::mrope_model m = pr::load_mrope_config(hy_slurp(hy_dir / "config.json"));
  CHECK(m.model_type == "hunyuan_vl");
  CHECK(m.style == pr::mrope_style::xdrope);
  CHECK(m.layout == pr::layout::half);
  CHECK(m.head_dim == D);
  CHECK(m.freqs.axes == A);
  CHECK(m.index.spatial_merge_size == 2);
  REQUIRE(m.freqs.axis.size() == M);
  REQUIRE(m.freqs.axis_second.size() == M);
  // [c | c] split into chunks of 2 * 16 columns: columns 0..31 axis 0, 32..63 axis 1 (first
  // halves), 64..95 axis 2, 96..127 axis 3 (second halves)
  for (std::size_t k = 0; k < M; ++k) {
    CHECK(m.freqs.axis[k] == (k < 32 ? 0 : 1));
    CHECK(m.freqs.axis_second[k] == (k < 32 ? 2 : 3));
  }
  // the frequencies: theta' = 10000 * 1000^(128 / 126) (as Python forms it), theta'^(-2k / 128)
  const double base = 10000.0 * std::pow(1000.0, 128.0 / 126.0);
  const pr::frequencies ref = pr::default_frequencies(D, base);
  for (std::size_t k = 0; k < M; ++k) CHECK(m.freqs.freqs.inv_freq[k] == ref.inv_freq[k]);
}

TEST_CASE("xdrope: hunyuan_rope_index equals transformers' get_rope_index") {
  // the generator's inputs (meta.json): sequence 0 as written, sequence 1 set below
  const auto types = std::vector<std::int64_t>{
      0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0,   // text, image (8 + 2), text, image (3)
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0};  // padding, text, image (6 + 2), text
  std::vector<std::int64_t> mask(B * S, 1);
  for (std::size_t s = 0; s < 9; ++s) mask[S + s] = 0;
  const std::vector<pr::vision_grid> grids = {{1, 4, 6}, {1, 2, 4}, {1, 4, 4}};
  // sequence 1: 9 padding tokens (24 - (4 + 8 + 3)) then text, image, text
  std::vector<std::int64_t> types1(types);
  for (std::size_t s = 0; s < S; ++s) types1[S + s] = s < 13 ? 0 : s < 21 ? 1 : 0;
  const pr::rope_index r = pr::hunyuan_rope_index(types1, B, S, grids, mask, A, 2);
  CHECK(r.position_ids == hy_ints(hy_dir / "position_ids.npy"));
  CHECK(r.deltas == hy_ints(hy_dir / "deltas.npy"));

  SUBCASE("errors name the argument") {
    const std::vector<pr::vision_grid> two = {{1, 4, 6}, {1, 2, 4}};
    CHECK_THROWS_WITH_AS(pr::hunyuan_rope_index(types1, B, S, two, mask, A, 2),
                         doctest::Contains("image_grid_thw"), posenc::invalid_argument);
    const std::vector<pr::vision_grid> wrong = {{1, 4, 6}, {1, 4, 4}, {1, 4, 4}};
    CHECK_THROWS_AS(pr::hunyuan_rope_index(types1, B, S, wrong, mask, A, 2), posenc::shape_error);
    CHECK_THROWS_WITH_AS(pr::hunyuan_rope_index(types1, B, S, grids, mask, 5, 2), doctest::Contains("axes"),
                         posenc::invalid_argument);
    const std::vector<std::int64_t> none(B * S, 0);
    CHECK_THROWS_WITH_AS(pr::hunyuan_rope_index(types1, B, S, grids, none, A, 2),
                         doctest::Contains("attention_mask"), posenc::invalid_argument);
  }
}

TEST_CASE("xdrope: split-half tables and rotation equal transformers' float64 evaluation") {
  const pr::mrope_model m = pr::load_mrope_config(hy_slurp(hy_dir / "config.json"));
  const auto pos = hy_ints(hy_dir / "positions.npy");  // [4, 2, 24], sequence 1 moved by 123456789
  const auto cos = posenc::io::read_npy<double>(hy_dir / "cos.npy");
  const auto sin = posenc::io::read_npy<double>(hy_dir / "sin.npy");
  const auto q = posenc::io::read_npy<float>(hy_dir / "q.npy");
  const auto q_rot = posenc::io::read_npy<double>(hy_dir / "q_rot.npy");
  REQUIRE(pos.size() == A * B * S);
  const std::size_t n = B * S;
  auto axis_of = [&](std::size_t c) { return c < M ? m.freqs.axis[c] : m.freqs.axis_second[c - M]; };

  const auto t = pr::table<double>(m.freqs, pr::axis_positions(pos, A), pr::table_layout::duplicated);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t c = 0; c < D; ++c) {
      const std::int64_t p = pos[axis_of(c) * n + i];
      const double tol = entry_bound(p, m.freqs.freqs.inv_freq[c % M]);
      bad += std::fabs(t.cos.data()[i * D + c] - cos.data[i * D + c]) > tol;
      bad += std::fabs(t.sin.data()[i * D + c] - sin.data[i * D + c]) > tol;
    }
  CHECK(bad == 0);
  CHECK_THROWS_WITH_AS(pr::table<double>(m.freqs, pr::axis_positions(pos, A), pr::table_layout::pairs),
                       doctest::Contains("layout"), posenc::invalid_argument);

  auto rot_tol = [&](std::size_t i, std::size_t c, double a, double b) {
    const std::size_t k = c % M;
    const double e = entry_bound(pos[m.freqs.axis[k] * n + i], m.freqs.freqs.inv_freq[k]) +
                     entry_bound(pos[m.freqs.axis_second[k] * n + i], m.freqs.freqs.inv_freq[k]);
    return (std::fabs(a) + std::fabs(b)) * (e + std::ldexp(1.0, -51));
  };
  SUBCASE("double storage, dense and ragged (bitwise the same)") {
    std::vector<double> x(q.data.begin(), q.data.end());  // [2, 1, 24, 128]
    std::vector<double> y = x;
    pr::apply_inplace(pr::dense_view<double>::contiguous(x.data(), {B, 1, S, D}), pr::dense_view<double>{}, m.freqs,
                      pr::axis_positions(pos, A), {.layout = pr::layout::half});
    std::size_t worst = 0;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t c = 0; c < D; ++c) {
        const double a = q.data[i * D + c % M], b = q.data[i * D + c % M + M];
        if (std::fabs(x[i * D + c] - q_rot.data[i * D + c]) > rot_tol(i, c, a, b) && worst++ < 5)
          MESSAGE(i, " ", c, " ", x[i * D + c] - q_rot.data[i * D + c], " ", rot_tol(i, c, a, b), " ", a, " ", b);
      }
    CHECK(worst == 0);
    pr::apply_ragged_inplace(pr::ragged_view<double>::contiguous(y.data(), {n, 1, D}), pr::ragged_view<double>{},
                             pr::axis_positions(pos, A), m.freqs, {.layout = pr::layout::half, .threads = 2});
    CHECK(x == y);
  }
  SUBCASE("float storage") {
    std::vector<float> x(q.data.begin(), q.data.end());
    pr::apply_inplace(pr::dense_view<float>::contiguous(x.data(), {B, 1, S, D}), pr::dense_view<float>{}, m.freqs,
                      pr::axis_positions(pos, A), {.layout = pr::layout::half});
    std::size_t worst = 0;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t c = 0; c < D; ++c) {
        const double a = q.data[i * D + c % M], b = q.data[i * D + c % M + M], y = q_rot.data[i * D + c];
        worst += std::fabs(x[i * D + c] - y) > rot_tol(i, c, a, b) + std::ldexp(std::fabs(y), -24);
      }
    CHECK(worst == 0);
  }
}

TEST_CASE("xdrope: float tables against transformers' own float32 forward (its first 8 tokens)") {
  // transformers forms inv_freq and the phase p w in float32: within 2^-21 (1 + p w) of the exact
  // values (errata D6's bound for these modules); posenc's float entries are the exact ones rounded
  const pr::mrope_model m = pr::load_mrope_config(hy_slurp(hy_dir / "config.json"));
  const auto ids = hy_ints(hy_dir / "position_ids.npy");  // [4, 2, 24]
  const auto c32 = posenc::io::read_npy<double>(hy_dir / "cos_f32.npy");  // [8, 128]
  const auto s32 = posenc::io::read_npy<double>(hy_dir / "sin_f32.npy");
  std::vector<std::int64_t> first(A * 8);
  for (std::size_t a = 0; a < A; ++a)
    for (std::size_t t = 0; t < 8; ++t) first[a * 8 + t] = ids[a * B * S + t];
  const auto t = pr::table<float>(m.freqs, pr::axis_positions(first, A), pr::table_layout::duplicated);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < 8; ++i)
    for (std::size_t c = 0; c < D; ++c) {
      const std::size_t k = c % M, ax = c < M ? m.freqs.axis[k] : m.freqs.axis_second[k];
      const double pw = std::fabs(static_cast<double>(first[ax * 8 + i]) * static_cast<double>(m.freqs.freqs.inv_freq[k]));
      const double tol = std::ldexp(1.0, -21) * (1 + pw);
      bad += std::fabs(t.cos.data()[i * D + c] - c32.data[i * D + c]) > tol;
      bad += std::fabs(t.sin.data()[i * D + c] - s32.data[i * D + c]) > tol;
    }
  CHECK(bad == 0);
}

TEST_CASE("xdrope: interleaved layout, threads and bfloat16 storage") {
  const pr::mrope_model m = pr::load_mrope_config(hy_slurp(hy_dir / "config.json"));
  const auto pos = hy_ints(hy_dir / "positions.npy");
  const auto q = posenc::io::read_npy<float>(hy_dir / "q.npy");
  const std::size_t n = B * S;
  std::vector<double> half(q.data.begin(), q.data.end()), inter(n * D), threaded = half;
  pr::apply_inplace(pr::dense_view<double>::contiguous(half.data(), {B, 1, S, D}), pr::dense_view<double>{}, m.freqs,
                    pr::axis_positions(pos, A), {.layout = pr::layout::half});
  // the same pairs in the interleaved layout: pair k at columns 2k, 2k + 1; the same arithmetic, bitwise
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < M; ++k) {
      inter[i * D + 2 * k] = q.data[i * D + k];
      inter[i * D + 2 * k + 1] = q.data[i * D + k + M];
    }
  pr::apply_inplace(pr::dense_view<double>::contiguous(inter.data(), {B, 1, S, D}), pr::dense_view<double>{}, m.freqs,
                    pr::axis_positions(pos, A), {.layout = pr::layout::interleaved});
  std::size_t differ = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < M; ++k)
      differ += inter[i * D + 2 * k] != half[i * D + k] || inter[i * D + 2 * k + 1] != half[i * D + k + M];
  CHECK(differ == 0);
  pr::apply_inplace(pr::dense_view<double>::contiguous(threaded.data(), {B, 1, S, D}), pr::dense_view<double>{},
                    m.freqs, pr::axis_positions(pos, A), {.layout = pr::layout::half, .threads = 3});
  CHECK(threaded == half);
  // bfloat16 storage: the double result rounded through float to bfloat16, within 2^-8 |y| plus the
  // double result's own error (far below it)
  std::vector<Eigen::bfloat16> bf(n * D);
  for (std::size_t i = 0; i < n * D; ++i) bf[i] = Eigen::bfloat16(q.data[i]);
  std::vector<double> ref(n * D);
  for (std::size_t i = 0; i < n * D; ++i) ref[i] = static_cast<double>(static_cast<float>(bf[i]));
  pr::apply_inplace(pr::dense_view<double>::contiguous(ref.data(), {B, 1, S, D}), pr::dense_view<double>{}, m.freqs,
                    pr::axis_positions(pos, A), {.layout = pr::layout::half});
  pr::apply_inplace(pr::dense_view<Eigen::bfloat16>::contiguous(bf.data(), {B, 1, S, D}),
                    pr::dense_view<Eigen::bfloat16>{}, m.freqs, pr::axis_positions(pos, A), {.layout = pr::layout::half});
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n * D; ++i)
    bad += std::fabs(static_cast<double>(static_cast<float>(bf[i])) - ref[i]) > std::ldexp(std::fabs(ref[i]), -8) + 1e-30;
  CHECK(bad == 0);
}

TEST_CASE("xdrope: the split-half map is not a rotation (norms change), and is one where the angles agree") {
  // one pair, two axes: A = 3 omega, B = 11 omega for the pair, a = 1, b = 0.5
  pr::axis_frequencies f;
  f.freqs = pr::default_frequencies(2, 10000.0);
  f.axes = 2;
  f.axis = {0};
  f.axis_second = {1};
  const std::vector<std::int64_t> ids = {3, 11};
  std::vector<double> x = {1.0, 0.5};
  pr::apply_ragged_inplace(pr::ragged_view<double>::contiguous(x.data(), {1, 1, 2}), pr::ragged_view<double>{},
                           pr::axis_positions(ids, 2), f, {.layout = pr::layout::half});
  const long double w = f.freqs.inv_freq[0], ca = std::cos(3 * w), sa = std::sin(3 * w), cb = std::cos(11 * w),
                    sb = std::sin(11 * w);
  const long double a = 1, b = 0.5;
  const long double expect = a * a * (ca * ca + sb * sb) + b * b * (sa * sa + cb * cb) + 2 * a * b * (cb * sb - ca * sa);
  const double norm2 = x[0] * x[0] + x[1] * x[1];
  CHECK(std::fabs(norm2 - static_cast<double>(expect)) <= 1e-13 * static_cast<double>(expect));
  CHECK(std::fabs(norm2 - 1.25) > 0.1);  // |(1, 0.5)|^2 = 1.25: not preserved (closed form ~1.2 + ...)
  // equal coordinates: the ordinary rotation (the 1-D path through axis_second cleared), 2 ulp
  const std::vector<std::int64_t> same = {7, 7};
  std::vector<double> y = {1.0, 0.5}, z = {1.0, 0.5};
  pr::apply_ragged_inplace(pr::ragged_view<double>::contiguous(y.data(), {1, 1, 2}), pr::ragged_view<double>{},
                           pr::axis_positions(same, 2), f, {.layout = pr::layout::half});
  pr::axis_frequencies g = f;
  g.axis_second.clear();
  pr::apply_ragged_inplace(pr::ragged_view<double>::contiguous(z.data(), {1, 1, 2}), pr::ragged_view<double>{},
                           pr::axis_positions(same, 2), g, {.layout = pr::layout::half});
  CHECK(std::fabs(y[0] - z[0]) <= 4e-16);
  CHECK(std::fabs(y[1] - z[1]) <= 4e-16);
  CHECK(std::fabs(y[0] * y[0] + y[1] * y[1] - 1.25) <= 1e-15);
}

TEST_CASE("xdrope: bad split-half input raises a typed error naming the argument") {
  pr::axis_frequencies f = pr::mrope_axes(pr::default_frequencies(8, 10000.0), std::vector<std::size_t>{1, 1, 1, 1},
                                          pr::mrope_style::xdrope);
  CHECK(f.axes == 4);
  CHECK(f.axis == std::vector<std::uint8_t>{0, 0, 1, 1});
  CHECK(f.axis_second == std::vector<std::uint8_t>{2, 2, 3, 3});
  pr::axis_frequencies g = f;
  g.axis_second.pop_back();
  CHECK_THROWS_WITH_AS(pr::validate(g, "t"), doctest::Contains("axis_second"), posenc::shape_error);
  g = f;
  g.axis_second[0] = 4;
  CHECK_THROWS_WITH_AS(pr::validate(g, "t"), doctest::Contains("axis_second[0]"), posenc::invalid_argument);
  CHECK_THROWS_WITH_AS(pr::mrope_axes(pr::default_frequencies(10, 10000.0), std::vector<std::size_t>{1, 1, 1, 1, 1},
                                      pr::mrope_style::xdrope),
                       doctest::Contains("section"), posenc::invalid_argument);
  // config: dynamic NTK without alpha is not read
  std::string cfg = hy_slurp(hy_dir / "config.json");
  const auto at = cfg.find("\"alpha\"");
  REQUIRE(at != std::string::npos);
  cfg.replace(at, 7, "\"alpha_\"");
  CHECK_THROWS_WITH_AS(pr::load_mrope_config(cfg), doctest::Contains("alpha_"), pr::config_error);
}

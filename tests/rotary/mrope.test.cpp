// SPDX-License-Identifier: MIT
// Multi-axis RoPE and M-RoPE (posenc/rotary/axes/axes.hpp, axes_apply.hpp, mrope.hpp) against
// transformers 5.23 (tests/rotary/mrope/, scripts/gen_mrope_reference.py) and against the long
// double reference of the exact phase (exact_reference.hpp).
//
// Tolerances:
//  - position ids and rope deltas: equal (integers).
//  - cos/sin against transformers' float64 evaluation: that reference forms theta^(-2k/d) by a
//    float64 pow and a division (<= 2 ulp: 2^-52 relative) and the phase p * w in one more
//    rounding, so its phase is within 2^-51 p w of the exact one, and cos/sin add 1 ulp:
//    |posenc - reference| <= 2^-51 (1 + p w) + 2^-52 (posenc's own 1 ulp included).
//  - cos/sin against the exact phase: <= 1 ulp of double (the tables' stated bound).
//  - rotated q in double storage: (|a| + |b|) times the cos/sin bound above, plus 1 ulp of each
//    output; float storage: 2^-23 (|a| + |b|) more (the float rounding of the output and of the
//    work); half types: against the rotation of their own rounded input, 2^-11 |y| (half) / 2^-8 |y|
//    (bfloat16) for the output rounding plus 2^-20 (|a| + |b|) for the float work.
#include <doctest/doctest.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <posenc/io/json.hpp>
#include <posenc/io/npy.hpp>
#include <posenc/rotary.hpp>

#include "exact_reference.hpp"

#ifndef POSENC_MROPE_REFERENCE_DIR
#error "POSENC_MROPE_REFERENCE_DIR must name tests/rotary/mrope"
#endif

namespace pr = posenc::rotary;
namespace fs = std::filesystem;
namespace js = posenc::io::json;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// One model's reference files.
struct reference {
  std::string name, style, layout;
  std::size_t head_dim = 0, rotary_dim = 0, batch = 0, seq = 0;
  double theta = 0;
  std::vector<std::size_t> section;
  pr::rope_index_options index_opt;
  std::vector<std::int64_t> types, mask;
  std::vector<pr::vision_grid> images, videos;
  std::vector<float> seconds;
  std::vector<std::int64_t> position_ids, deltas, positions;
  posenc::io::array<double> cos, sin, q_rot, cos_f32, sin_f32;
  posenc::io::array<float> q;
};

std::vector<std::int64_t> flat_ints(const js::value& v) {
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const js::value x = v.item(i);
    if (x.is_array()) {
      const auto inner = flat_ints(x);
      out.insert(out.end(), inner.begin(), inner.end());
    } else {
      out.push_back(std::stoll(std::string(x.text())));
    }
  }
  return out;
}

/// An int64 .npy file (read as double: its values, below 2^31, are exact there).
std::vector<std::int64_t> ints(const fs::path& p) {
  const auto a = posenc::io::read_npy<double>(p);
  std::vector<std::int64_t> out;
  for (const double v : a.data) out.push_back(static_cast<std::int64_t>(v));
  return out;
}

reference load(const std::string& name) {
  const fs::path d = fs::path(POSENC_MROPE_REFERENCE_DIR) / name;
  const std::string text = slurp(d / "meta.json");
  const auto doc = js::parse(text, [](std::size_t, std::string_view m) { throw std::runtime_error(std::string(m)); });
  const js::value root = doc.root();
  const auto num = [&](const char* k) { return std::stod(std::string(root.find(k)->text())); };
  const auto str = [&](const char* k) { return std::string(root.find(k)->text()); };
  reference r;
  r.name = name;
  r.style = str("style");
  r.layout = str("layout");
  r.head_dim = static_cast<std::size_t>(num("head_dim"));
  r.rotary_dim = static_cast<std::size_t>(num("rotary_dim"));
  r.batch = static_cast<std::size_t>(num("batch"));
  r.seq = static_cast<std::size_t>(num("seq"));
  r.theta = num("rope_theta");
  for (const auto s : flat_ints(*root.find("mrope_section"))) r.section.push_back(static_cast<std::size_t>(s));
  r.index_opt.spatial_merge_size = static_cast<std::size_t>(num("spatial_merge_size"));
  r.index_opt.temporal_merge_size = static_cast<std::size_t>(num("temporal_merge_size"));
  r.index_opt.tokens_per_second = num("tokens_per_second");
  r.index_opt.split_video_frames = root.find("split_video_frames")->boolean();
  r.types = flat_ints(*root.find("mm_token_type_ids"));
  r.mask = flat_ints(*root.find("attention_mask"));
  const auto grids = [](const std::vector<std::int64_t>& v) {
    std::vector<pr::vision_grid> g;
    for (std::size_t i = 0; i + 2 < v.size(); i += 3) g.push_back({v[i], v[i + 1], v[i + 2]});
    return g;
  };
  r.images = grids(flat_ints(*root.find("image_grid_thw")));
  r.videos = grids(flat_ints(*root.find("video_grid_thw")));
  const js::value sec = *root.find("second_per_grid_ts");
  for (std::size_t i = 0; i < sec.size(); ++i) r.seconds.push_back(std::stof(std::string(sec.item(i).text())));
  r.position_ids = ints(d / "position_ids.npy");
  r.deltas = ints(d / "deltas.npy");
  r.positions = ints(d / "positions.npy");
  r.cos = posenc::io::read_npy<double>(d / "cos.npy");
  r.sin = posenc::io::read_npy<double>(d / "sin.npy");
  r.q_rot = posenc::io::read_npy<double>(d / "q_rot.npy");
  r.cos_f32 = posenc::io::read_npy<double>(d / "cos_f32.npy");
  r.sin_f32 = posenc::io::read_npy<double>(d / "sin_f32.npy");
  r.q = posenc::io::read_npy<float>(d / "q.npy");
  return r;
}

std::vector<std::string> models() {
  std::ifstream in(fs::path(POSENC_MROPE_REFERENCE_DIR) / "models.txt");
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

pr::mrope_style style_of(const std::string& s) {
  return s == "interleaved" ? pr::mrope_style::interleaved : s == "ernie" ? pr::mrope_style::ernie : pr::mrope_style::sections;
}

pr::axis_frequencies freqs_of(const reference& r) {
  return pr::mrope_axes(pr::default_frequencies(r.rotary_dim, r.theta), r.section, style_of(r.style));
}

/// Column of cos/sin in transformers' [.., rotary_dim] form holding pair k (first of its two).
std::size_t column(const reference& r, std::size_t k, bool second) {
  const std::size_t half = r.rotary_dim / 2;
  if (r.layout == "half") return k + (second ? half : 0);
  return 2 * k + (second ? 1 : 0);
}

template <class T>
pr::dense_view<T> dense(std::vector<T>& v, std::size_t B, std::size_t H, std::size_t S, std::size_t D) {
  return {v.data(), {B, H, S, D}, {static_cast<std::ptrdiff_t>(H * S * D), static_cast<std::ptrdiff_t>(S * D),
                                   static_cast<std::ptrdiff_t>(D), 1}};
}

template <class T>
double to_double(T v) {
  if constexpr (std::is_same_v<T, double>)
    return v;
  else
    return static_cast<double>(static_cast<float>(v));
}

double ulp(double x) { return std::nextafter(std::abs(x), INFINITY) - std::abs(x); }

}  // namespace

TEST_CASE("mrope: get_rope_index gives transformers' position ids and rope deltas") {
  const auto names = models();
  REQUIRE(names.size() == 5);
  for (const auto& name : names) {
    const reference r = load(name);
    INFO("model ", name);
    const pr::rope_index idx = pr::get_rope_index(r.types, r.batch, r.seq, r.images, r.videos, r.mask, r.seconds,
                                                  r.index_opt);
    REQUIRE(r.position_ids.size() == 3 * r.batch * r.seq);
    CHECK(idx.position_ids == r.position_ids);
    CHECK(idx.deltas == r.deltas);
  }
}

TEST_CASE("mrope: cos/sin tables match transformers' float64 evaluation and the exact phase") {
  double worst_hf = 0, worst_exact_ulps = 0, worst_f32 = 0;
  for (const auto& name : models()) {
    const reference r = load(name);
    INFO("model ", name);
    const pr::axis_frequencies af = freqs_of(r);
    const std::size_t n = r.batch * r.seq, m = r.rotary_dim / 2;
    const auto t = pr::table<double>(af, pr::axis_positions(r.positions, 3));
    REQUIRE(static_cast<std::size_t>(t.cos.rows()) == n);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < m; ++k) {
        const std::int64_t p = r.positions[af.axis[k] * n + i];
        const double w = static_cast<double>(af.freqs.inv_freq[k]);
        const double bound = 0x1p-51 * (1 + static_cast<double>(p) * w) + 0x1p-52;
        for (const bool second : {false, true}) {
          const std::size_t col = i * r.rotary_dim + column(r, k, second);
          const double dc = std::abs(t.cos(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(k)) - r.cos.data[col]);
          const double ds = std::abs(t.sin(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(k)) - r.sin.data[col]);
          CHECK(dc <= bound);
          CHECK(ds <= bound);
          worst_hf = std::max({worst_hf, dc, ds});
        }
        long double ec, es;
        posenc_test::exact_cos_sin(af.freqs, k, static_cast<long double>(p), ec, es);
        const double uc = static_cast<double>(std::abs(t.cos(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(k)) - ec)) / ulp(static_cast<double>(ec));
        const double us = static_cast<double>(std::abs(t.sin(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(k)) - es)) / ulp(static_cast<double>(es));
        CHECK(uc <= 1.0);
        CHECK(us <= 1.0);
        worst_exact_ulps = std::max({worst_exact_ulps, uc, us});
      }
    // transformers' own float32 module (first sequence, first 8 tokens, positions <= 18): its
    // phase is fl32(p) * fl32(w) rounded to float32 (2^-23 p w) and cos/sin 1 ulp of float
    const auto tf = pr::table<float>(af, pr::axis_positions(r.positions, 3));
    for (std::size_t i = 0; i < 8; ++i)
      for (std::size_t k = 0; k < m; ++k) {
        const std::int64_t p = r.positions[af.axis[k] * n + i];
        const double w = static_cast<double>(af.freqs.inv_freq[k]);
        const double bound = 0x1p-22 * (1 + static_cast<double>(p) * w) + 0x1p-23;
        const std::size_t col = i * r.rotary_dim + column(r, k, false);
        const double dc = std::abs(static_cast<double>(tf.cos(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(k))) - r.cos_f32.data[col]);
        const double ds = std::abs(static_cast<double>(tf.sin(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(k))) - r.sin_f32.data[col]);
        CHECK(dc <= bound);
        CHECK(ds <= bound);
        worst_f32 = std::max({worst_f32, dc, ds});
      }
  }
  MESSAGE("mrope tables: max |posenc f64 - transformers f64| = ", worst_hf, ", max ulps from the exact phase = ",
          worst_exact_ulps, ", max |posenc f32 - transformers f32 module| = ", worst_f32);
}

namespace {

/// Rotate r.q (all batch rows, one head) in storage T with posenc and return it as double.
template <class T>
std::vector<double> rotate(const reference& r, const pr::axis_frequencies& af, std::size_t q_heads = 1,
                           std::size_t k_heads = 0, std::vector<double>* k_out = nullptr, std::size_t threads = 1) {
  const std::size_t B = r.batch, S = r.seq, D = r.head_dim;
  std::vector<T> q(B * q_heads * S * D), k(B * k_heads * S * D);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t d = 0; d < D; ++d) {
        const float v = r.q.data[(b * S + s) * D + d];
        for (std::size_t h = 0; h < q_heads; ++h) q[((b * q_heads + h) * S + s) * D + d] = static_cast<T>(v);
        for (std::size_t h = 0; h < k_heads; ++h) k[((b * k_heads + h) * S + s) * D + d] = static_cast<T>(v);
      }
  pr::apply_options opt;
  opt.layout = r.layout == "half" ? pr::layout::half : pr::layout::interleaved;
  opt.threads = threads;
  pr::dense_view<T> kv{};
  if (k_heads > 0) kv = dense(k, B, k_heads, S, D);
  pr::apply_inplace<T>(dense(q, B, q_heads, S, D), kv, af, pr::axis_positions(r.positions, 3), opt);
  std::vector<double> out(B * S * D);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < q_heads; ++h)
      for (std::size_t i = 0; i < S * D; ++i) {
        const double v = to_double(q[(b * q_heads + h) * S * D + i]);
        if (h == 0) out[b * S * D + i] = v;
        CHECK(v == out[b * S * D + i]);  // every q head alike
      }
  if (k_out != nullptr) {
    k_out->assign(B * S * D, 0.0);
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t i = 0; i < S * D; ++i) (*k_out)[b * S * D + i] = to_double(k[b * k_heads * S * D + i]);
  }
  return out;
}

/// For output column d of token (b, s): |a| + |b| of its pair and its pair index.
struct pair_info {
  double mag;
  std::size_t k;
};

pair_info pair_of(const reference& r, std::size_t b, std::size_t s, std::size_t d, const std::vector<double>& in) {
  const std::size_t D = r.head_dim, half = r.rotary_dim / 2, base = (b * r.seq + s) * D;
  std::size_t k, d2;
  if (r.layout == "half") {
    k = d % half;
    d2 = d < half ? d + half : d - half;
  } else {
    k = d / 2;
    d2 = d ^ 1;
  }
  return {std::abs(in[base + d]) + std::abs(in[base + d2]), k};
}

}  // namespace

TEST_CASE("mrope: q rotated in place matches transformers' apply_rotary_pos_emb (f64, f32, GQA, k)") {
  double worst64 = 0, worst32 = 0, small64 = 0;  // small64: the first sequence (positions <= 18)
  for (const auto& name : models()) {
    const reference r = load(name);
    INFO("model ", name);
    const pr::axis_frequencies af = freqs_of(r);
    std::vector<double> in(r.q.data.begin(), r.q.data.end());
    std::vector<double> k64;
    const auto y64 = rotate<double>(r, af, 2, 1, &k64);
    const auto y32 = rotate<float>(r, af, 4, 1, nullptr, 2);
    const std::size_t n = r.batch * r.seq;
    for (std::size_t b = 0; b < r.batch; ++b)
      for (std::size_t s = 0; s < r.seq; ++s)
        for (std::size_t d = 0; d < r.head_dim; ++d) {
          const std::size_t at = (b * r.seq + s) * r.head_dim + d;
          const double ref = r.q_rot.data[at];
          if (d >= r.rotary_dim) {  // the columns past rotary_dim (GLM-4V's partial rotary) are untouched
            CHECK(y64[at] == in[at]);
            CHECK(y32[at] == in[at]);
            CHECK(ref == in[at]);
            continue;
          }
          const pair_info pi = pair_of(r, b, s, d, in);
          const std::int64_t p = r.positions[af.axis[pi.k] * n + b * r.seq + s];
          const double cs = 0x1p-51 * (1 + static_cast<double>(p) * static_cast<double>(af.freqs.inv_freq[pi.k])) + 0x1p-52;
          const double b64 = pi.mag * cs + 2 * ulp(ref);
          const double b32 = b64 + 0x1p-23 * pi.mag;
          CHECK(std::abs(y64[at] - ref) <= b64);
          CHECK(k64[at] == y64[at]);  // k takes q's arithmetic
          CHECK(std::abs(y32[at] - ref) <= b32);
          worst64 = std::max(worst64, std::abs(y64[at] - ref));
          if (b == 0) small64 = std::max(small64, std::abs(y64[at] - ref));
          worst32 = std::max(worst32, std::abs(y32[at] - ref));
        }
  }
  MESSAGE("mrope apply: max |posenc - transformers f64| = ", worst64, " (double storage; ", small64,
          " at positions <= 18), ", worst32, " (float storage)");
}

TEST_CASE("mrope: f16 and bf16 storage are within their rounding bound of the exact rotation of their input") {
  for (const auto& name : models()) {
    const reference r = load(name);
    INFO("model ", name);
    const pr::axis_frequencies af = freqs_of(r);
    const auto t = pr::table<double>(af, pr::axis_positions(r.positions, 3));
    auto check = [&](auto tag, double out_rel) {
      using T = decltype(tag);
      std::vector<double> in(r.q.data.size());
      for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<double>(static_cast<float>(static_cast<T>(r.q.data[i])));
      const auto y = rotate<T>(r, af);
      const std::size_t D = r.head_dim, half = r.rotary_dim / 2;
      for (std::size_t b = 0; b < r.batch; ++b)
        for (std::size_t s = 0; s < r.seq; ++s) {
          const auto row = static_cast<Eigen::Index>(b * r.seq + s);
          for (std::size_t k = 0; k < half; ++k) {
            const std::size_t i0 = r.layout == "half" ? k : 2 * k, i1 = r.layout == "half" ? k + half : 2 * k + 1;
            const std::size_t base = (b * r.seq + s) * D;
            const double a = in[base + i0], bb = in[base + i1];
            const double c = t.cos(row, static_cast<Eigen::Index>(k)), sn = t.sin(row, static_cast<Eigen::Index>(k));
            const double e0 = a * c - bb * sn, e1 = bb * c + a * sn;
            const double mag = std::abs(a) + std::abs(bb);
            CHECK(std::abs(y[base + i0] - e0) <= out_rel * std::abs(e0) + 0x1p-20 * mag + 0x1p-24);
            CHECK(std::abs(y[base + i1] - e1) <= out_rel * std::abs(e1) + 0x1p-20 * mag + 0x1p-24);
          }
        }
    };
    check(Eigen::half{}, 0x1p-11);
    check(Eigen::bfloat16{}, 0x1p-8);
  }
}

TEST_CASE("mrope: ragged [3, tokens] equals dense [3, batch, seq]; one axis equals the 1-D rotation") {
  const reference r = load("qwen2_5_vl");
  const pr::axis_frequencies af = freqs_of(r);
  const std::size_t B = r.batch, S = r.seq, D = r.head_dim;
  pr::apply_options opt;
  opt.layout = pr::layout::half;
  // double storage: every coefficient is an exact phase, so ragged and dense agree bitwise
  std::vector<double> qd(r.q.data.begin(), r.q.data.end()), qr = qd;
  pr::apply_inplace<double>(dense(qd, B, 1, S, D), {}, af, pr::axis_positions(r.positions, 3), opt);
  pr::ragged_view<double> rv{qr.data(), {B * S, 1, D}, {static_cast<std::ptrdiff_t>(D), static_cast<std::ptrdiff_t>(D), 1}};
  pr::apply_ragged_inplace<double>(rv, {}, pr::axis_positions(r.positions, 3), af, opt);
  CHECK(qd == qr);
  // float storage: the runs of a chunk may start elsewhere; within 2^-23 (|a| + |b|)
  std::vector<float> qf(r.q.data.begin(), r.q.data.end()), qg = qf;
  pr::apply_inplace<float>(dense(qf, B, 1, S, D), {}, af, pr::axis_positions(r.positions, 3), opt);
  pr::ragged_view<float> rf{qg.data(), {B * S, 1, D}, {static_cast<std::ptrdiff_t>(D), static_cast<std::ptrdiff_t>(D), 1}};
  pr::apply_ragged_inplace<float>(rf, {}, pr::axis_positions(r.positions, 3), af, opt);
  for (std::size_t i = 0; i < qf.size(); ++i) CHECK(std::abs(qf[i] - qg[i]) <= 0x1p-22f * (std::abs(qf[i]) + 8.0f));
  // one axis, consecutive positions: bitwise the 1-D rotation at the same explicit positions
  const pr::frequencies f = pr::default_frequencies(64, 10000.0);
  const pr::axis_frequencies one = pr::single_axis(f);
  std::mt19937 g(7);
  std::normal_distribution<float> nd;
  for (const std::int64_t first : {std::int64_t{0}, std::int64_t{1} << 40}) {
    std::vector<float> a(2 * 3 * 300 * 64);
    for (auto& v : a) v = nd(g);
    auto b = a;
    std::vector<std::int64_t> ids(300);
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = first + static_cast<std::int64_t>(i);
    pr::apply_inplace<float>(dense(a, 2, 3, 300, 64), {}, f, pr::position_ids(ids));
    pr::apply_inplace<float>(dense(b, 2, 3, 300, 64), {}, one, pr::axis_positions(ids, 1));
    CHECK(a == b);
  }
}

TEST_CASE("mrope: negative and large positions in double storage are within 1 ulp + 2^-51 (|a| + |b|) of the exact rotation") {
  const pr::axis_frequencies af = pr::mrope(128, 1e6, std::vector<std::size_t>{16, 24, 24});
  const std::size_t S = 70, D = 128, m = 64;
  std::vector<std::int64_t> pos(3 * S);
  for (std::size_t s = 0; s < S; ++s) {
    pos[s] = -static_cast<std::int64_t>(s) * 977 - 5;                               // t: negative
    pos[S + s] = (std::int64_t{1} << 45) + static_cast<std::int64_t>(s / 7);          // h: large, repeated
    pos[2 * S + s] = -(std::int64_t{1} << 50) + static_cast<std::int64_t>(s % 7);     // w: large negative runs
  }
  std::mt19937 g(11);
  std::normal_distribution<double> nd;
  std::vector<double> q(S * D);
  for (auto& v : q) v = static_cast<float>(nd(g));
  const auto in = q;
  pr::apply_options opt;
  opt.layout = pr::layout::half;
  pr::apply_inplace<double>(dense(q, 1, 1, S, D), {}, af, pr::axis_positions(pos, 3), opt);
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t k = 0; k < m; ++k) {
      long double c, sn;
      posenc_test::exact_cos_sin(af.freqs, k, static_cast<long double>(pos[af.axis[k] * S + s]), c, sn);
      const long double a = in[s * D + k], b = in[s * D + k + m];
      const double e0 = static_cast<double>(a * c - b * sn), e1 = static_cast<double>(b * c + a * sn);
      const double mag = static_cast<double>(std::abs(a) + std::abs(b));
      CHECK(std::abs(q[s * D + k] - e0) <= ulp(e0) + 0x1p-51 * mag);
      CHECK(std::abs(q[s * D + k + m] - e1) <= ulp(e1) + 0x1p-51 * mag);
    }
}

TEST_CASE("mrope: layouts assign pairs to axes as transformers' recomposition does") {
  const auto q2 = pr::mrope(128, 1e6, std::vector<std::size_t>{16, 24, 24});
  CHECK(q2.axes == 3);
  CHECK((q2.axis[0] == 0 && q2.axis[15] == 0 && q2.axis[16] == 1 && q2.axis[39] == 1 && q2.axis[40] == 2 && q2.axis[63] == 2));
  const auto q3 = pr::mrope(128, 5e6, std::vector<std::size_t>{24, 20, 20}, true);
  CHECK((q3.axis[0] == 0 && q3.axis[1] == 1 && q3.axis[2] == 2 && q3.axis[3] == 0 && q3.axis[58] == 1 &&
         q3.axis[59] == 2 && q3.axis[60] == 0 && q3.axis[61] == 0 && q3.axis[62] == 0 && q3.axis[63] == 0));
  const std::vector<std::size_t> es{22, 22, 20};
  const auto er = pr::mrope_axes(pr::default_frequencies(128, 5e5), es, pr::mrope_style::ernie);
  CHECK((er.axis[0] == 1 && er.axis[1] == 2 && er.axis[42] == 1 && er.axis[43] == 2 && er.axis[44] == 0 && er.axis[63] == 0));
}

TEST_CASE("mrope: invalid input throws typed errors naming the argument") {
  using posenc::invalid_argument;
  using posenc::shape_error;
  const std::vector<std::size_t> sec{16, 24, 24};
  auto msg = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const posenc::error& e) {
      return e.what();
    }
    return "no exception";
  };
  auto bad_axes = pr::mrope(128, 1e6, sec);
  bad_axes.axes = 5;
  CHECK(msg([&] { (void)pr::validate(bad_axes, "t"); }).find("freqs.axes") != std::string::npos);
  bad_axes.axes = 0;
  CHECK_THROWS_AS((void)pr::validate(bad_axes, "t"), invalid_argument);
  auto bad_axis = pr::mrope(128, 1e6, sec);
  bad_axis.axis[7] = 3;
  CHECK(msg([&] { (void)pr::validate(bad_axis, "t"); }).find("freqs.axis[7]") != std::string::npos);
  bad_axis.axis.pop_back();
  CHECK_THROWS_AS((void)pr::validate(bad_axis, "t"), shape_error);
  CHECK(msg([&] { (void)pr::mrope(128, 1e6, std::vector<std::size_t>{16, 24, 23}); }).find("section") != std::string::npos);
  CHECK(msg([&] { (void)pr::mrope(128, 1e6, std::vector<std::size_t>{16, 48}, true); }).find("section") != std::string::npos);
  CHECK(msg([&] {
          (void)pr::mrope_axes(pr::default_frequencies(128, 1e6), std::vector<std::size_t>{20, 24, 20},
                               pr::mrope_style::ernie);
        }).find("section[0] == section[1]") != std::string::npos);
  const auto af = pr::mrope(128, 1e6, sec);
  std::vector<float> q(2 * 4 * 128);
  std::vector<std::int64_t> pos(3 * 4, 1);
  const auto qv = dense(q, 1, 2, 4, 128);
  CHECK(msg([&] { pr::apply_inplace<float>(qv, {}, af, pr::axis_positions(pos, 2)); }).find("positions.axes") != std::string::npos);
  std::vector<std::int64_t> short_pos(3 * 3, 1);
  CHECK_THROWS_AS(pr::apply_inplace<float>(qv, {}, af, pr::axis_positions(short_pos, 3)), shape_error);
  pos[5] = std::int64_t{1} << 53;
  CHECK(msg([&] { pr::apply_inplace<float>(qv, {}, af, pr::axis_positions(pos, 3)); }).find("positions[1, 1]") != std::string::npos);
  pos[5] = -9;
  pr::apply_options opt;
  opt.max_positions = 8;
  CHECK(msg([&] { pr::apply_inplace<float>(qv, {}, af, pr::axis_positions(pos, 3), opt); }).find("max_positions") != std::string::npos);
  opt = {};
  opt.xpos.enabled = true;
  CHECK(msg([&] { pr::apply_inplace<float>(qv, {}, af, pr::axis_positions(pos, 3), opt); }).find("xpos") != std::string::npos);
  pr::ragged_view<float> rv{q.data(), {8, 1, 128}, {128, 128, 1}};
  CHECK_THROWS_AS(pr::apply_ragged_inplace<float>(rv, {}, pr::axis_positions(pos, 3), af), shape_error);
  // get_rope_index
  const std::vector<std::int64_t> types{0, 1, 1, 0};
  const std::vector<pr::vision_grid> img{{1, 2, 4}};
  CHECK(msg([&] { (void)pr::get_rope_index(types, 1, 4, {}, {}); }).find("image_grid_thw") != std::string::npos);
  CHECK_NOTHROW((void)pr::get_rope_index(types, 1, 4, img, {}));
  const std::vector<pr::vision_grid> img_big{{1, 4, 4}};
  CHECK_THROWS_AS((void)pr::get_rope_index(types, 1, 4, img_big, {}), shape_error);
  const std::vector<std::int64_t> bad_types{0, 3, 3, 0};
  CHECK(msg([&] { (void)pr::get_rope_index(bad_types, 1, 4, img, {}); }).find("mm_token_type_ids[0, 1]") != std::string::npos);
  CHECK_THROWS_AS((void)pr::get_rope_index(types, 2, 4, img, {}), shape_error);
  const std::vector<std::int64_t> none(4, 0);
  CHECK(msg([&] { (void)pr::get_rope_index(types, 1, 4, img, {}, none); }).find("attention_mask") != std::string::npos);
}

TEST_CASE("mrope: load_mrope_config reads transformers' serialized configs to the reference layouts") {
  for (const auto& name : models()) {
    const reference r = load(name);
    INFO("model ", name);
    const pr::mrope_model m = pr::load_mrope_config(slurp(fs::path(POSENC_MROPE_REFERENCE_DIR) / name / "config.json"));
    const pr::axis_frequencies want = freqs_of(r);
    CHECK(m.model_type == name);
    CHECK(m.head_dim == r.head_dim);
    CHECK(m.freqs.axes == 3);
    CHECK(m.freqs.axis == want.axis);
    CHECK(m.freqs.freqs.inv_freq == want.freqs.inv_freq);
    CHECK(m.freqs.freqs.inv_freq_lo == want.freqs.inv_freq_lo);
    CHECK(m.layout == (r.layout == "half" ? pr::layout::half : pr::layout::interleaved));
    CHECK(m.section == r.section);
    CHECK(m.index.spatial_merge_size == r.index_opt.spatial_merge_size);
    CHECK(m.index.temporal_merge_size == r.index_opt.temporal_merge_size);
    CHECK(m.index.tokens_per_second == r.index_opt.tokens_per_second);
    CHECK(m.index.split_video_frames == r.index_opt.split_video_frames);
  }
}

TEST_CASE("mrope: load_mrope_config refuses what it cannot read exactly, naming the key") {
  auto msg = [](const std::string& text) -> std::string {
    try {
      (void)pr::load_mrope_config(text);
    } catch (const pr::config_error& e) {
      return e.what();
    }
    return "no config_error";
  };
  const std::string tail = R"(,"text_config":{"head_dim":128,"rope_parameters":{"rope_type":"default","rope_theta":1e6,"mrope_section":[16,24,24]}}})";
  CHECK(msg(R"({"model_type":"qwen2_vl")" + tail) == "no config_error");
  CHECK(msg(R"({"model_type":"hunyuan_vl")" + tail) == "no config_error");  // xdrope: tests/rotary/xdrope.test.cpp
  CHECK(msg(R"({"model_type":"hunyuan_vl","text_config":{"head_dim":128,"rope_parameters":{"rope_theta":1e6}}})")
            .find("mrope_section") != std::string::npos);
  CHECK(msg(R"({"model_type":"llava")" + tail).find("model_type") != std::string::npos);
  CHECK(msg(R"({"model_type":"qwen2_vl","text_config":{"head_dim":128,"rope_parameters":{"rope_type":"yarn","rope_theta":1e6}}})")
            .find("text_config.rope_parameters.rope_type") != std::string::npos);
  CHECK(msg(R"({"model_type":"qwen2_vl","text_config":{"head_dim":128,"rope_parameters":{"rope_theta":1e6,"mrope_section":[16,24,20]}}})")
            .find("mrope_section") != std::string::npos);
  CHECK(msg(R"({"model_type":"qwen2_vl","text_config":{"head_dim":128,"rope_parameters":{"rope_theta":1e6,"mrope_interleaved":true}}})")
            .find("mrope_interleaved") != std::string::npos);
  CHECK(msg(R"({"model_type":"qwen2_vl","text_config":{"head_dim":128,"rope_parameters":{"rope_type":"default"}}})")
            .find("rope_theta") != std::string::npos);
  CHECK(msg(R"({"model_type":"qwen2_vl","text_config":{"head_dim":128,"rope_parameters":{"rope_theta":1e6,"factor":2}}})")
            .find("rope_parameters.factor") != std::string::npos);
  // the legacy form: rope_scaling {"type": "mrope"} and a top-level rope_theta; default section
  const pr::mrope_model legacy = pr::load_mrope_config(
      R"({"model_type":"qwen2_vl","hidden_size":3584,"num_attention_heads":28,"rope_theta":1000000.0,"rope_scaling":{"type":"mrope","mrope_section":[16,24,24]}})");
  CHECK(legacy.head_dim == 128);
  CHECK(legacy.freqs.axis == pr::mrope(128, 1e6, std::vector<std::size_t>{16, 24, 24}).axis);
}

TEST_CASE("mrope: shared [3, seq] positions equal [3, batch, seq]; the result does not depend on the thread count; empty calls") {
  const auto af = pr::mrope(64, 1e6, std::vector<std::size_t>{8, 12, 12});
  const std::size_t B = 3, H = 2, S = 600, D = 64;
  std::vector<std::int64_t> shared(3 * S), per_batch(3 * B * S);
  for (std::size_t s = 0; s < S; ++s) {  // text, then a 20 x 25 grid, then text
    const auto i = static_cast<std::int64_t>(s);
    const bool img = s >= 50 && s < 550;
    shared[s] = img ? 50 : (s < 50 ? i : i - 475);
    shared[S + s] = img ? 50 + (i - 50) / 25 : shared[s];
    shared[2 * S + s] = img ? 50 + (i - 50) % 25 : shared[s];
  }
  for (std::size_t a = 0; a < 3; ++a)
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t s = 0; s < S; ++s) per_batch[(a * B + b) * S + s] = shared[a * S + s];
  std::mt19937 g(5);
  std::normal_distribution<float> nd;
  std::vector<float> q0(B * H * S * D);
  for (auto& v : q0) v = nd(g);
  auto q1 = q0, q2 = q0;
  pr::apply_options opt;
  opt.layout = pr::layout::half;
  pr::apply_inplace<float>(dense(q0, B, H, S, D), {}, af, pr::axis_positions(shared, 3), opt);
  pr::apply_inplace<float>(dense(q1, B, H, S, D), {}, af, pr::axis_positions(per_batch, 3), opt);
  opt.threads = 2;
  pr::apply_inplace<float>(dense(q2, B, H, S, D), {}, af, pr::axis_positions(per_batch, 3), opt);
  CHECK(q0 == q1);
  CHECK(q1 == q2);
  // nothing to rotate: no error, nothing read
  std::vector<std::int64_t> none;
  CHECK_NOTHROW(pr::apply_inplace<float>(pr::dense_view<float>{nullptr, {1, 2, 0, 64}, {0, 0, 64, 1}}, {}, af,
                                         pr::axis_positions(none, 3)));
  CHECK_NOTHROW(pr::apply_ragged_inplace<float>(pr::ragged_view<float>{nullptr, {0, 2, 64}, {128, 64, 1}}, {},
                                                pr::axis_positions(none, 3), af));
}

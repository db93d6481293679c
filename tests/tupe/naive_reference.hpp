// SPDX-License-Identifier: MIT
// Test-only, independent transcriptions of the reference code (guolinke/TUPE) in long double:
// plain loops, one statement of the Python per block, no Eigen arithmetic. The library is
// checked against these entry by entry.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

#include <posenc/tupe.hpp>

namespace tupe_test {

using ld = long double;
using posenc::tupe::cls_reset;
using posenc::tupe::config;
using Eigen::Index;

/// T5's relative_position_bucket, transcribed in long double.
inline long t5_bucket_long_double(long relative_position, int num_buckets, int max_distance, bool bidirectional) {
  long ret = 0;
  long n = -relative_position;
  if (bidirectional) {
    num_buckets /= 2;
    ret += (n < 0 ? 1 : 0) * num_buckets;
    n = std::labs(n);
  } else {
    n = n > 0 ? n : 0;
  }
  const long max_exact = num_buckets / 2;
  const bool is_small = n < max_exact;
  if (is_small) return ret + n;  // torch.where picks n; the log branch is not needed here
  const ld v = std::log(static_cast<ld>(n) / static_cast<ld>(max_exact)) /
               std::log(static_cast<ld>(max_distance) / static_cast<ld>(max_exact)) *
               static_cast<ld>(num_buckets - max_exact);
  long val_if_large = max_exact + static_cast<long>(v);
  if (val_if_large > num_buckets - 1) val_if_large = num_buckets - 1;
  return ret + val_if_large;
}

/// The same formula written again in double, with the direction handled by cases.
inline int t5_bucket_double(long rel, int num_buckets, int max_distance) {
  const int half = num_buckets / 2;
  const int offset = rel > 0 ? half : 0;  // key after the query
  const long dist = rel > 0 ? rel : -rel;
  const int exact = half / 2;
  if (dist < exact) return offset + static_cast<int>(dist);
  const double frac = std::log(double(dist) / exact) / std::log(double(max_distance) / exact);
  const long b = exact + static_cast<long>(frac * (half - exact));
  return offset + static_cast<int>(b < half - 1 ? b : half - 1);
}

/// Dense [H][n][n] values.
struct dense {
  Index H = 0, n = 0;
  std::vector<ld> v;
  ld& at(Index h, Index i, Index j) { return v[static_cast<std::size_t>((h * n + i) * n + j)]; }
  ld at(Index h, Index i, Index j) const { return v[static_cast<std::size_t>((h * n + i) * n + j)]; }
};

/// TransformerSentenceEncoder's positional bias for a length-n sequence, line by line.
template <class T>
dense naive_bias(const config& cfg, const posenc::tupe::parameters<T>& p, const posenc::table<T>& pos, Index n) {
  const Index d = cfg.d, H = cfg.heads, dh = d / H;
  const bool ref = cfg.cls == cls_reset::reference;
  const Index L = ref ? n + 1 : n;  // self.pos.weight[:seq_len + 1, :]
  const ld scaling = cfg.scale == posenc::tupe::scale_convention::reference
                         ? 1.0L / std::sqrt(static_cast<ld>(d) / static_cast<ld>(H) * 2.0L)
                         : 1.0L / std::sqrt(2.0L * static_cast<ld>(d));
  // weight = self.pos_ln(...)
  std::vector<std::vector<ld>> weight(L, std::vector<ld>(d));
  for (Index r = 0; r < L; ++r) {
    ld mean = 0;
    for (Index c = 0; c < d; ++c) mean += pos(r, c);
    mean /= d;
    ld var = 0;
    for (Index c = 0; c < d; ++c) var += (pos(r, c) - mean) * (pos(r, c) - mean);
    var /= d;
    for (Index c = 0; c < d; ++c)
      weight[r][c] = (pos(r, c) - mean) / std::sqrt(var + static_cast<ld>(cfg.ln_eps)) * ld(p.pos_ln_weight[c]) +
                     ld(p.pos_ln_bias[c]);
  }
  // pos_q = self.pos_q_linear(weight) * self.pos_scaling ; pos_k = self.pos_k_linear(weight)
  std::vector<std::vector<ld>> q(L, std::vector<ld>(d)), k(L, std::vector<ld>(d));
  for (Index r = 0; r < L; ++r)
    for (Index o = 0; o < d; ++o) {
      ld sq = p.pos_q_bias.size() ? ld(p.pos_q_bias[o]) : 0, sk = p.pos_k_bias.size() ? ld(p.pos_k_bias[o]) : 0;
      for (Index c = 0; c < d; ++c) {
        sq += weight[r][c] * ld(p.pos_q_weight(o, c));
        sk += weight[r][c] * ld(p.pos_k_weight(o, c));
      }
      q[r][o] = sq * scaling;
      k[r][o] = sk;
    }
  // abs_pos_bias = torch.bmm(pos_q, pos_k.transpose(1, 2))   [H, L, L]
  dense abs{H, L, std::vector<ld>(static_cast<std::size_t>(H * L * L))};
  for (Index h = 0; h < H; ++h)
    for (Index a = 0; a < L; ++a)
      for (Index b = 0; b < L; ++b) {
        ld s = 0;
        for (Index t = 0; t < dh; ++t) s += q[a][h * dh + t] * k[b][h * dh + t];
        abs.at(h, a, b) = s;
      }
  dense out{H, n, std::vector<ld>(static_cast<std::size_t>(H * n * n))};
  if (ref) {
    for (Index h = 0; h < H; ++h) {
      const ld cls_2_other = abs.at(h, 0, 0), other_2_cls = abs.at(h, 1, 1);
      for (Index i = 0; i < n; ++i)
        for (Index j = 0; j < n; ++j) out.at(h, i, j) = abs.at(h, i + 1, j + 1);  // abs_pos_bias[:, 1:, 1:]
      for (Index i = 0; i < n; ++i) out.at(h, i, 0) = other_2_cls;
      for (Index j = 0; j < n; ++j) out.at(h, 0, j) = cls_2_other;
    }
  } else {
    out.v = abs.v;
  }
  if (cfg.relative) {
    // rp_bucket built once for max_seq_len, [CLS] buckets assigned, then sliced [:n, :n]
    const Index M = pos.rows() - (ref ? 1 : 0);
    std::vector<std::vector<long>> rp(M, std::vector<long>(M));
    for (Index i = 0; i < M; ++i)
      for (Index j = 0; j < M; ++j)
        rp[i][j] = t5_bucket_long_double(static_cast<long>(j - i), cfg.buckets.num_buckets, cfg.buckets.max_distance,
                                         cfg.buckets.bidirectional);
    if (ref) {
      for (Index i = 0; i < M; ++i) rp[i][0] = cfg.buckets.num_buckets;
      for (Index j = 0; j < M; ++j) rp[0][j] = cfg.buckets.num_buckets / 2;
    }
    for (Index h = 0; h < H; ++h)
      for (Index i = 0; i < n; ++i)
        for (Index j = 0; j < n; ++j) out.at(h, i, j) += ld(p.relative_attention_bias(rp[i][j], h));
  }
  if (cfg.cls == cls_reset::free) {  // paper eq. (9), applied to the whole term
    for (Index h = 0; h < H; ++h) {
      for (Index i = 1; i < n; ++i) out.at(h, i, 0) = ld(p.theta2[h]);
      for (Index j = 0; j < n; ++j) out.at(h, 0, j) = ld(p.theta1[h]);
    }
  }
  return out;
}

/// Parameters with every entry random and O(1) (LN gamma/beta and biases included), so no term
/// is trivially zero.
template <class T>
posenc::tupe::parameters<T> random_parameters(const config& cfg, Index max_len, std::uint64_t seed) {
  auto p = posenc::tupe::make_parameters<T>(cfg, max_len, seed);
  std::mt19937_64 gen(seed + 99);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  auto fill = [&](auto& m) {
    for (Index i = 0; i < m.size(); ++i) m.data()[i] = static_cast<T>(u(gen));
  };
  fill(p.pos);
  fill(p.pos_ln_weight);
  fill(p.pos_ln_bias);
  fill(p.pos_q_weight);
  fill(p.pos_k_weight);
  fill(p.pos_q_bias);
  fill(p.pos_k_bias);
  fill(p.relative_attention_bias);
  fill(p.theta1);
  fill(p.theta2);
  return p;
}

}  // namespace tupe_test

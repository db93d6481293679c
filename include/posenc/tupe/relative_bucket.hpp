// SPDX-License-Identifier: MIT
// T5 relative-position buckets (Raffel et al.), as TUPE's reference code (guolinke/TUPE,
// `relative_position_bucket`, "this is from T5") computes them: bidirectional by default,
// num_buckets = 32, max_distance = 128, exact below max_exact = num_buckets / 4, logarithmic
// bins up to max_distance, everything farther in the last bucket of its direction.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>
#include <vector>

#include <Eigen/Core>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/core/hd.hpp>

namespace posenc::tupe {

/// The bucketing of a relative position j - i (key minus query).
///
/// Bidirectional (the reference): `num_buckets / 2` buckets per direction; keys before the
/// query (j < i) use buckets [0, num_buckets/2), keys after it (j > i) use
/// [num_buckets/2, num_buckets). In each direction the first `max_exact = num_buckets / 4`
/// distances have their own bucket and the remaining buckets cover [max_exact, max_distance)
/// logarithmically; distances >= max_distance share the direction's last bucket.
/// Unidirectional (T5 decoder): only j <= i is distinguished (j > i maps to bucket 0),
/// `num_buckets` buckets, max_exact = num_buckets / 2.
struct bucket_spec {
  int num_buckets = 32;
  int max_distance = 128;
  bool bidirectional = true;

  /// Buckets per direction (num_buckets / 2 when bidirectional).
  [[nodiscard]] POSENC_HD constexpr int per_direction() const noexcept { return bidirectional ? num_buckets / 2 : num_buckets; }
  /// Distances below this value get one bucket each.
  [[nodiscard]] POSENC_HD constexpr int max_exact() const noexcept { return per_direction() / 2; }
};

/// Upper bound on bucket_spec::num_buckets (so num_buckets + 1 rows of biases cannot overflow int).
inline constexpr int max_num_buckets = 1 << 20;

/// Throws posenc::invalid_argument unless `spec` is usable: bidirectional needs an even
/// num_buckets >= 4 (the reference asserts evenness; with 2 buckets max_exact = 0 and the log
/// branch divides by zero), unidirectional needs num_buckets >= 2, and max_distance must exceed
/// max_exact (otherwise log(max_distance / max_exact) <= 0 and the bins are undefined).
inline void validate(const bucket_spec& spec, std::string_view where) {
  posenc::detail::require(spec.num_buckets <= max_num_buckets, where, "bucket_spec.num_buckets: expected <= ",
                          max_num_buckets, " (tupe::max_num_buckets), got ", spec.num_buckets);
  if (spec.bidirectional) {
    posenc::detail::require(spec.num_buckets >= 4 && spec.num_buckets % 2 == 0, where,
                    "bucket_spec.num_buckets: expected an even number >= 4 for bidirectional buckets, got ",
                    spec.num_buckets);
  } else {
    posenc::detail::require(spec.num_buckets >= 2, where,
                    "bucket_spec.num_buckets: expected >= 2 for unidirectional buckets, got ", spec.num_buckets);
  }
  posenc::detail::require(spec.max_distance > spec.max_exact(), where,
                  "bucket_spec.max_distance: expected > max_exact = ", spec.max_exact(),
                  " (the exact range; num_buckets = ", spec.num_buckets, "), got ", spec.max_distance);
}

namespace detail {
/// The bucket of relative position `rel` = j - i for a spec that passed validate(spec) (not
/// checked here: noexcept and POSENC_HD, for kernels on the host and the device). Never evaluates log(0):
/// the logarithm is taken only when the distance is >= max_exact >= 1, and distances >=
/// max_distance go straight to the last bucket (the clipped value of the log branch there).
/// The log branch is evaluated in float32 step by step as the reference does on the CPU
/// (`torch.log(n.float() / max_exact) / math.log(max_distance / max_exact) * (nb - max_exact)`,
/// float32 tensor op Python float -> float32), then truncated toward zero like `.to(torch.long)`.
[[nodiscard]] POSENC_HD inline int bucket_unchecked(std::int64_t rel, const bucket_spec& spec) noexcept {
  const int per_dir = spec.per_direction();
  const int max_exact = spec.max_exact();
  int ret = 0;
  // n = -rel (the reference negates first); its magnitude as unsigned, safe for INT64_MIN.
  std::uint64_t mag = 0;
  if (spec.bidirectional) {
    if (rel > 0) ret += per_dir;  // n < 0: key after the query
    mag = rel < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(rel) : static_cast<std::uint64_t>(rel);
  } else {
    mag = rel < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(rel) : 0;  // max(n, 0)
  }
  if (mag < static_cast<std::uint64_t>(max_exact)) return ret + static_cast<int>(mag);
  if (mag >= static_cast<std::uint64_t>(spec.max_distance)) return ret + per_dir - 1;
  const float num = std::log(static_cast<float>(mag) / static_cast<float>(max_exact));
  const auto den = static_cast<float>(std::log(static_cast<double>(spec.max_distance) / max_exact));
  const float scaled = num / den * static_cast<float>(per_dir - max_exact);
  int large = max_exact + static_cast<int>(scaled);  // scaled >= 0: truncation = floor
  if (large > per_dir - 1) large = per_dir - 1;
  return ret + large;
}
}  // namespace detail

/// The T5 bucket of the relative position `relative_position` = j - i (key index minus query
/// index). Throws posenc::invalid_argument for an unusable spec (see validate(bucket_spec)).
[[nodiscard]] inline int relative_position_bucket(std::int64_t relative_position, const bucket_spec& spec = {}) {
  validate(spec, "tupe::relative_position_bucket");
  return detail::bucket_unchecked(relative_position, spec);
}

/// Buckets of every relative position of a length-n sequence: element k is the bucket of
/// j - i = k - (n - 1), k = 0 .. 2n - 2 (so row i of the n x n bucket matrix is the contiguous
/// slice starting at n - 1 - i). Throws for n < 1 or an unusable spec.
[[nodiscard]] inline std::vector<int> relative_bucket_offsets(Eigen::Index n, const bucket_spec& spec = {}) {
  constexpr std::string_view where = "tupe::relative_bucket_offsets";
  validate(spec, where);
  posenc::detail::require(n >= 1, where, "n: expected a sequence length >= 1, got ", n);
  (void)checked::extent(n, where, "n");  // so 2n - 1 cannot overflow
  std::vector<int> out = checked::make_vector<int>(static_cast<std::size_t>(2 * n - 1), where, "2n - 1 offsets");
  for (Eigen::Index k = 0; k < 2 * n - 1; ++k)
    out[static_cast<std::size_t>(k)] = detail::bucket_unchecked(static_cast<std::int64_t>(k - (n - 1)), spec);
  return out;
}

}  // namespace posenc::tupe

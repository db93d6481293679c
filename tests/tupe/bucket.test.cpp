// SPDX-License-Identifier: MIT
// T5 relative buckets: against two separate transcriptions of the T5 formula (long double and
// double), against an integer-only closed form for the defaults, and the structural facts the
// [CLS] reset relies on (buckets num_buckets/2 and num_buckets are never produced).
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <set>

#include "tupe/naive_reference.hpp"

using posenc::tupe::bucket_spec;
using posenc::tupe::relative_position_bucket;

TEST_CASE("tupe buckets equal the T5 formula for every relative position up to 1000") {
  // Exact integer comparison: the formula's value is truncated to an integer, so any difference
  // would be a whole bucket. Configurations: the reference defaults and others with other
  // exact ranges and log ranges (max_distance below, equal to and above the sequence span).
  const bucket_spec specs[] = {{32, 128, true}, {16, 64, true}, {64, 256, true}, {8, 20, true},
                               {4, 10, true},   {128, 1000, true}, {32, 9, true}};
  for (const auto& s : specs) {
    for (long rel = -1000; rel <= 1000; ++rel) {
      const int got = relative_position_bucket(rel, s);
      const long want_ld = tupe_test::t5_bucket_long_double(rel, s.num_buckets, s.max_distance, true);
      const int want_d = tupe_test::t5_bucket_double(rel, s.num_buckets, s.max_distance);
      INFO("num_buckets = " << s.num_buckets << ", max_distance = " << s.max_distance << ", rel = " << rel);
      REQUIRE(got == want_ld);
      REQUIRE(got == want_d);
      REQUIRE(got >= 0);
      REQUIRE(got < s.num_buckets);
    }
  }
}

TEST_CASE("tupe default buckets equal the integer closed form 8 + floor(2 log2(n/8))") {
  // Defaults: 16 buckets per direction, max_exact 8, and log(n/8)/log(16)*8 = 2 log2(n/8), so
  // the bucket is 8 + max{k : n^2 >= 64 * 2^k}, capped at 15: an exact integer test with no
  // floating point at all (catches a log that rounds the wrong way at n = 16, 32, 64, 128).
  for (long n = 0; n <= 1000; ++n) {
    long expect = 0;
    if (n < 8) {
      expect = n;
    } else {
      long k = 0;
      while (k < 7 && n * n >= 64L * (1L << (k + 1))) ++k;
      expect = 8 + k;
    }
    INFO("distance " << n);
    CHECK(relative_position_bucket(-n) == expect);  // key before the query: j - i = -n
    if (n > 0) CHECK(relative_position_bucket(n) == expect + 16);  // key after the query
  }
  CHECK(relative_position_bucket(0) == 0);
}

TEST_CASE("tupe buckets never produce the [CLS] buckets num_buckets/2 and num_buckets") {
  // The reference reuses bucket nb/2 for the [CLS] row ("not used in relative_position_bucket")
  // and nb for the column: checked over every distance up to 1000 for several specs.
  for (const bucket_spec s : {bucket_spec{32, 128, true}, bucket_spec{8, 20, true}, bucket_spec{4, 10, true}}) {
    std::set<int> seen;
    for (long rel = -1000; rel <= 1000; ++rel) seen.insert(relative_position_bucket(rel, s));
    CHECK(seen.count(s.num_buckets / 2) == 0);
    CHECK(seen.count(s.num_buckets) == 0);
    CHECK(static_cast<int>(seen.size()) == s.num_buckets - 1);  // every other bucket is used
  }
}

TEST_CASE("tupe buckets at extreme offsets go to the last bucket without overflow") {
  // Far offsets: the direction's last bucket (15 / 31 with the defaults); INT64_MIN cannot be
  // negated in signed arithmetic, so this also runs under UBSan as an overflow check.
  constexpr auto lo = std::numeric_limits<std::int64_t>::min();
  constexpr auto hi = std::numeric_limits<std::int64_t>::max();
  CHECK(relative_position_bucket(lo) == 15);
  CHECK(relative_position_bucket(hi) == 31);
  CHECK(relative_position_bucket(-128) == 15);
  CHECK(relative_position_bucket(128) == 31);
  CHECK(relative_position_bucket(-127) == 15);
}

TEST_CASE("tupe unidirectional buckets follow the T5 decoder formula") {
  // Unidirectional: keys after the query map to 0; keys before use all num_buckets buckets.
  const bucket_spec s{32, 128, false};
  for (long rel = -1000; rel <= 1000; ++rel)
    CHECK(relative_position_bucket(rel, s) == tupe_test::t5_bucket_long_double(rel, 32, 128, false));
}

TEST_CASE("tupe relative_bucket_offsets lists the buckets of j - i in order") {
  // Element k is the bucket of k - (n - 1): compared with the scalar function.
  const auto v = posenc::tupe::relative_bucket_offsets(50);
  REQUIRE(v.size() == 99);
  for (long k = 0; k < 99; ++k) CHECK(v[static_cast<std::size_t>(k)] == relative_position_bucket(k - 49));
}

TEST_CASE("tupe bucket specs that the formula cannot handle are rejected") {
  using posenc::invalid_argument;
  CHECK_THROWS_AS((void)relative_position_bucket(3, bucket_spec{31, 128, true}), invalid_argument);  // odd
  CHECK_THROWS_AS((void)relative_position_bucket(3, bucket_spec{2, 128, true}), invalid_argument);   // max_exact 0
  CHECK_THROWS_AS((void)relative_position_bucket(3, bucket_spec{0, 128, true}), invalid_argument);
  CHECK_THROWS_AS((void)relative_position_bucket(3, bucket_spec{-4, 128, true}), invalid_argument);
  CHECK_THROWS_AS((void)relative_position_bucket(3, bucket_spec{32, 8, true}), invalid_argument);    // = max_exact
  CHECK_THROWS_AS((void)relative_position_bucket(3, bucket_spec{32, 2, true}), invalid_argument);
  CHECK_THROWS_AS((void)relative_position_bucket(3, bucket_spec{1, 128, false}), invalid_argument);
  CHECK_NOTHROW((void)relative_position_bucket(3, bucket_spec{32, 9, true}));
  CHECK_THROWS_AS((void)posenc::tupe::relative_bucket_offsets(0), invalid_argument);
  try {
    (void)relative_position_bucket(3, bucket_spec{31, 128, true});
  } catch (const posenc::error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("tupe::relative_position_bucket") != std::string::npos);
    CHECK(msg.find("num_buckets") != std::string::npos);
    CHECK(msg.find("31") != std::string::npos);
  }
}

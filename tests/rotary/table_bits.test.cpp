// SPDX-License-Identifier: MIT
// The rotary cos/sin tables bit for bit: a 64-bit FNV-1a hash of every entry of both tables, per
// rule, size and first position, against the value the tables had when the narrow tables' kernel
// was last changed (1 to 65536 rows, first 0 and 2^20, head_dim 128 and 18, both layouts). A float
// table is the correctly rounded exact-phase value wherever its rounding is certified and the
// direct evaluation elsewhere; Eigen::bfloat16 is that float rounded again; so a change of the
// kernel that keeps the certificate sound keeps every bit, and this test fails on any change of
// any entry. The hashes assume the x87 64-bit long double (the phases' precision); double tables
// also depend on whether the compiler fuses products into FMAs (numeric::two_prod), so their
// hashes are checked only where FMA is not enabled (the test builds' default x86-64 target).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include <posenc/rotary/scaling.hpp>
#include <posenc/rotary/table.hpp>

#include "table_hash.hpp"

namespace pr = posenc::rotary;

namespace {

template <class T>
std::uint64_t table_hash(const pr::frequencies& f, std::uint64_t first, std::size_t count, pr::table_layout lay) {
  const auto t = pr::table<T>(f, first, count, lay);
  std::uint64_t h = posenc_test::fnv1a_basis;
  posenc_test::fnv1a_into(h, t.cos);
  posenc_test::fnv1a_into(h, t.sin);
  return h;
}

pr::frequencies rule(pr::rope_type type, std::size_t head_dim) {
  pr::rope_config c;
  c.type = type;
  c.head_dim = head_dim;
  c.theta = 500000.0;
  c.factor = 8;
  c.max_position_embeddings = 131072;
  c.original_max_position_embeddings = 8192;
  c.short_factor.assign(head_dim / 2, 1.1);
  c.long_factor.assign(head_dim / 2, 4.0);
  return pr::compute_frequencies(c, 1 << 20);
}

struct config {
  pr::rope_type type;
  std::size_t head_dim;
  std::uint64_t first;
  std::size_t count;
  pr::table_layout lay;
  std::uint64_t f32, bf16, f64;
};

constexpr auto P = pr::table_layout::pairs;
constexpr auto D = pr::table_layout::duplicated;
using rt = pr::rope_type;

// The hashes of the tables as built before the narrow kernel's rewrite (the reference algorithm).
const config configs[] = {
    {rt::default_rope, 128, 0, 1, P, 0x75aade57e6290125ULL, 0x8c444ad91591a625ULL, 0x8e70828b0e330f25ULL},
    {rt::default_rope, 18, 0, 7, D, 0x6980acf7ee6d14bdULL, 0x139b1742d9d8b86dULL, 0xe617e47f117373e1ULL},
    {rt::yarn, 128, 5, 130, P, 0x191bf2817e810df2ULL, 0xfcbf7a2379a3a218ULL, 0xf9411d54ed9d3c7bULL},
    {rt::default_rope, 128, 0, 4096, P, 0x2ab86d462344ca91ULL, 0xd0e80d906d829b08ULL, 0x10df17090b2a501bULL},
    {rt::llama3, 128, 0, 8192, D, 0x9228962483f4b441ULL, 0x70d56109f5daad15ULL, 0xdb0dac4e4555653dULL},
    {rt::longrope, 128, 1u << 20, 4097, P, 0x4dfd41082b743109ULL, 0x7db3e530ebc61a4aULL, 0x8bc2fc57076e6b30ULL},
    {rt::default_rope, 128, 0, 65536, P, 0x75bb4649bfa93e0dULL, 0x18dd32304e62e543ULL, 0x54d468fe599ca814ULL},
    {rt::linear, 18, (1u << 24) - 3000, 3000, P, 0xad4bdc1e5837ad2dULL, 0x1fd4a8bbc4e5c405ULL, 0xfc2c5402b8001cb7ULL},
};

}  // namespace

TEST_CASE("float, bfloat16 and double tables keep every bit of the reference algorithm's tables") {
  if (std::numeric_limits<long double>::digits != 64) {
    MESSAGE("skipped: the hashes were taken with the x87 64-bit long double");
    return;
  }
  for (const auto& c : configs) {
    const auto f = rule(c.type, c.head_dim);
    INFO("rule ", static_cast<int>(c.type), ", head_dim ", c.head_dim, ", first ", c.first, ", count ", c.count);
    const std::uint64_t h32 = table_hash<float>(f, c.first, c.count, c.lay);
    const std::uint64_t h16 = table_hash<Eigen::bfloat16>(f, c.first, c.count, c.lay);
    CHECK(h32 == c.f32);
    CHECK(h16 == c.bf16);
#if !defined(__FMA__)
    const std::uint64_t h64 = table_hash<double>(f, c.first, c.count, c.lay);
    CHECK(h64 == c.f64);
#endif
  }
}

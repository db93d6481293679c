// SPDX-License-Identifier: MIT
// The N-axis RoPE of diffusion transformers (posenc/rotary/axes/diffusion.hpp) against diffusers 0.42.1
// (scripts/gen_multiaxis_reference.py -> tests/rotary/multiaxis/diffusion.inc): FLUX at 1024 x 1024
// with 512 text tokens, Wan 2.1 at 480 x 832 x 81 frames, HunyuanVideo at 320 x 512 x 33 frames,
// Qwen-Image with two images (64 x 64 and 48 x 80 patches) and 77 text tokens.
//  - positions: posenc's [3, tokens] grid has diffusers' FNV-1a hash (every position equal) and
//    the sampled rows' positions;
//  - frequencies: diffusers' float64 formula 1 / theta^(arange(0, d, 2) / d) has posenc's
//    exponent 2j / d, rounded once (2^-53 relative, which theta^x turns into x ln(theta) / 2
//    ulp: up to 4.6 ulp for theta 10000), then pow and the division round once each: within
//    2.5 + x ln(theta) / 2 ulp of posenc's exact frequency (up to 5 ulp measured, docs/errata.md);
//  - cos / sin: the exact phase p omega (numeric::sincos_phase of posenc's frequency) within
//    2^-50 (1 + |p| omega) of diffusers' float64 cos / sin (its phase p omega rounded once in
//    float64 from a frequency a few ulp off: |p| omega 2^-51 at most, plus the rounding of cos /
//    sin), on the sampled rows in full and on the sums of cos + sin of every st-th row;
//  - the float32 cos / sin the modules return: FLUX's and Wan's are their float64 values rounded,
//    so posenc's correctly rounded float equals them but where the two roundings straddle a
//    boundary (within 1 ulp; the count is printed); HunyuanVideo's and Qwen-Image's come from
//    float32 frequencies and phases: within 2^-21 (1 + |p| omega) (docs/errata.md);
//  - q rotated in place (rotary::apply_ragged_inplace, interleaved, the sampled tokens with their
//    positions) against diffusers' apply_rotary_emb (FLUX, Wan's own, HunyuanVideo) and
//    apply_rotary_emb_qwen on float32 q: within (|x0| + |x1|) (4 2^-24 + e) per pair, e the
//    module's cos / sin error bound above (0 for FLUX and Wan: both round cos / sin once and the
//    rotation twice); bf16 q within (|x0| + |x1|) 2^-8 of the exact rotation of its values.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <posenc/numeric/phase.hpp>
#include <posenc/rotary/axes/axes_apply.hpp>
#include <posenc/rotary/axes/diffusion.hpp>

#include "message_of.hpp"
#include "multiaxis_check.hpp"

namespace rt = posenc::rotary;

namespace {

using posenc_test::case_form;
using posenc_test::check_case;
using posenc_test::rope_case;

#include "multiaxis/diffusion.inc"

/// [A, n] blocks concatenated along the tokens.
std::vector<std::int64_t> concat(const std::vector<std::int64_t>& a, std::size_t na, const std::vector<std::int64_t>& b,
                                 std::size_t nb, std::size_t A) {
  std::vector<std::int64_t> out;
  for (std::size_t x = 0; x < A; ++x) {
    out.insert(out.end(), a.begin() + static_cast<std::ptrdiff_t>(x * na), a.begin() + static_cast<std::ptrdiff_t>((x + 1) * na));
    out.insert(out.end(), b.begin() + static_cast<std::ptrdiff_t>(x * nb), b.begin() + static_cast<std::ptrdiff_t>((x + 1) * nb));
  }
  return out;
}

}  // namespace

TEST_CASE("diffusion rope: FLUX at 1024 x 1024 with 512 text tokens equals diffusers' FluxPosEmbed") {
  const std::size_t side = rt::flux_patches(1024);
  CHECK(side == 64);
  const auto ids = rt::flux_positions(512, side, side);
  const auto o = check_case(flux_1024, rt::flux_frequencies(), ids, {});
  CHECK(o.f32_differ <= o.f32_count / 100);
}

TEST_CASE("diffusion rope: Wan 2.1 (head_dim 128) at 480 x 832, 81 frames equals WanRotaryPosEmbed") {
  const auto af = rt::wan_frequencies(128);
  CHECK(af.axis[21] == 0);
  CHECK(af.axis[22] == 1);  // t_dim 44: 22 pairs, then 21 + 21
  const auto ids = rt::wan_positions(21, 60, 104);
  (void)check_case(wan_480x832x81, af, ids, {});
}

TEST_CASE("diffusion rope: HunyuanVideo at 320 x 512, 33 frames (theta 256)") {
  const auto af = rt::hunyuan_video_frequencies();
  (void)check_case(hunyuan_video_320x512x33, af, rt::hunyuan_video_positions(9, 40, 64), {.float32_module = true});
  // the module's float32 frequencies: each within 1 float ulp (2^-23 relative) of the exact ones
  double worst = 0;
  for (std::size_t k = 0; k < af.freqs.inv_freq.size(); ++k) {
    const double w = rt::frequency3_of(af.freqs, k).hi;
    worst = std::max(worst, std::abs(hunyuan_video_freqs32[k] - w) / w);
  }
  MESSAGE("HunyuanVideo's float32 frequencies: up to ", worst / 0x1p-24, " x 2^-24 relative from the exact ones");
  CHECK(worst <= 0x1p-22);
}

TEST_CASE("diffusion rope: Qwen-Image MSRoPE, two images and 77 text tokens equals QwenEmbedRope") {
  const std::array<rt::qwen_image_shape, 2> images{{{1, 64, 64}, {1, 48, 80}}};
  const auto ids = rt::qwen_image_positions(images, 77);
  const std::size_t n_img = 64 * 64 + 48 * 80;
  REQUIRE(ids.image.size() == 3 * n_img);
  // centred: the first image's top-left patch at (0, -32, -32), the second's frame index 1
  CHECK(ids.image[0] == 0);
  CHECK(ids.image[n_img] == -32);
  CHECK(ids.image[2 * n_img] == -32);
  CHECK(ids.image[4096] == 1);
  CHECK(ids.text[0] == 40);  // max(64/2, 48/2, 80/2)
  const auto all = concat(ids.image, n_img, ids.text, 77, 3);
  (void)check_case(qwen_image_2img, rt::qwen_image_frequencies(), all, {.float32_module = true});
}

TEST_CASE("diffusion rope: errors name the argument") {
  using posenc_test::message_of;
  const auto has = [](const std::string& s, const char* part) { return s.find(part) != std::string::npos; };
  const std::array<std::size_t, 3> odd{16, 55, 56};
  CHECK(has(message_of<posenc::invalid_argument>([&] { (void)rt::flux_frequencies(odd); }),
            "rotary::flux_frequencies: axes_dim[1]: expected an even dimension >= 2, got 55"));
  const std::array<std::size_t, 5> five{2, 2, 2, 2, 2};
  CHECK(has(message_of<posenc::invalid_argument>([&] { (void)rt::axes_nd(five, 10000); }), "axes_dim: expected 1..4"));
  CHECK(has(message_of<posenc::non_finite_error>([] { (void)rt::flux_frequencies(std::array<std::size_t, 3>{16, 56, 56}, NAN); }), "theta"));
  CHECK(has(message_of<posenc::invalid_argument>([] { (void)rt::hunyuan_video_frequencies(std::array<std::size_t, 3>{16, 56, 56}, 1.0); }), "theta"));
  CHECK(has(message_of<posenc::invalid_argument>([] { (void)rt::wan_frequencies(5); }), "head_dim"));
  CHECK(has(message_of<posenc::invalid_argument>([] { (void)rt::wan_positions(21, 60, 104, {1, 0, 2}); }), "patch_size"));
  CHECK(has(message_of<posenc::invalid_argument>([] { (void)rt::wan_positions(21, 4000, 104); }),
            "latent_height: expected at most max_seq_len = 1024 patches, got 2000"));
  CHECK(has(message_of<posenc::invalid_argument>([] { (void)rt::hunyuan_video_positions(9, 40, 64, 0); }), "patch_size"));
  CHECK(has(message_of<posenc::size_error>([] { (void)rt::flux_positions(SIZE_MAX, 4, 4); }), "text_tokens"));
  CHECK(has(message_of<posenc::size_error>([] { (void)rt::grid_positions_3d(std::size_t{1} << 30, std::size_t{1} << 30, 4); }),
            "frames * height * width"));
  CHECK(has(message_of<posenc::invalid_argument>([] { (void)rt::flux_patches(1024, 0); }), "vae_scale_factor"));
  CHECK(has(message_of<posenc::invalid_argument>([] { (void)rt::qwen_image_positions({}, 4); }), "images"));
  const std::array<rt::qwen_image_shape, 1> big{{{1, 64, 64}}};
  CHECK(has(message_of<posenc::invalid_argument>([&] { (void)rt::qwen_image_positions(big, 4090); }),
            "text_tokens: expected at most 4064"));
  const std::array<rt::qwen_image_shape, 1> tall{{{1, 9000, 4}}};
  CHECK(has(message_of<posenc::invalid_argument>([&] { (void)rt::qwen_image_positions(tall, 4); }), "images[0]"));
  // without scale_rope: positions from 0, text after max(h, w)
  const std::array<rt::qwen_image_shape, 1> one{{{1, 2, 3}}};
  const auto plain = rt::qwen_image_positions(one, 2, false);
  CHECK(plain.image == std::vector<std::int64_t>{0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 1, 2, 0, 1, 2});
  CHECK(plain.text == std::vector<std::int64_t>{3, 4, 3, 4, 3, 4});
}

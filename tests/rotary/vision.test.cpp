// SPDX-License-Identifier: MIT
// The 2-D RoPE of vision encoders (posenc/rotary/axes/vision.hpp) against transformers 5.23
// (scripts/gen_multiaxis_reference.py -> tests/rotary/multiaxis/vision.inc): the Qwen2.5-VL vision
// tower (an image of 34 x 46 patches and a video of 2 x 18 x 24, spatial merge 2, window order),
// Pixtral (two images), Llama 4 (24 x 24 patches and the class token), DINOv3 ViT-S/16 (14 x 20).
// The checks and bounds are those of tests/rotary/diffusion.test.cpp (multiaxis_check.hpp):
// positions equal transformers' (FNV-1a of all of them), frequencies within a few ulp of the
// float64 formula (DINOv3's reference 2 pi w / n: two more roundings, 2 ulp more), cos / sin
// within 2^-50 (1 + |p w|) of float64; transformers' float32 modules (float32 frequencies and
// phases) within 2^-21 (1 + |p w|); q rotated in place against each model's apply.
#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <posenc/rotary/axes/vision.hpp>

#include "message_of.hpp"
#include "multiaxis_check.hpp"

namespace rt = posenc::rotary;

namespace {

using posenc_test::case_form;
using posenc_test::check_case;
using posenc_test::rope_case;

#include "multiaxis/vision.inc"

}  // namespace

TEST_CASE("vision rope: Qwen2.5-VL's vision tower (spatial merge order, window order) equals transformers'") {
  const std::array<rt::vision_grid, 2> grids{{{1, 34, 46}, {2, 18, 24}}};
  const auto pos = rt::qwen_vl_vision_positions(grids, 2);
  CHECK(pos[0] == 0);
  CHECK(pos[2] == 1);  // token 2: second row of the first 2 x 2 block
  (void)check_case(qwen2_5_vl_vision, rt::qwen_vl_vision_frequencies(80), pos, {.float32_module = true, .half = true});
  const auto w = rt::qwen2_5_vl_window_order(grids);
  CHECK(w.window_index == std::vector<std::int64_t>(std::begin(qwen2_5_vl_window_index), std::end(qwen2_5_vl_window_index)));
  CHECK(w.cu_window_seqlens == std::vector<std::int32_t>(std::begin(qwen2_5_vl_cu_window_seqlens),
                                                         std::end(qwen2_5_vl_cu_window_seqlens)));
  const auto ordered = rt::reorder_positions(pos, 2, w.token_order);
  CHECK(posenc_test::fnv1a(ordered) == qwen2_5_vl_window_positions_fnv);
}

TEST_CASE("vision rope: Pixtral's vision encoder (two images) equals transformers'") {
  const std::array<rt::vision_grid, 2> grids{{{1, 32, 48}, {1, 10, 6}}};
  (void)check_case(pixtral_vision, rt::pixtral_vision_frequencies(64), rt::pixtral_vision_positions(grids),
                   {.float32_module = true, .half = true});
}

TEST_CASE("vision rope: Llama 4's vision encoder (24 x 24 patches, class token last) equals transformers'") {
  const auto pos = rt::llama4_vision_positions(24);
  CHECK(pos.size() == 2 * 577);
  CHECK(pos[576] == 0);
  CHECK(pos[577 + 576] == 0);
  (void)check_case(llama4_vision, rt::llama4_vision_frequencies(88), pos, {.float32_module = true});
}

TEST_CASE("vision rope: DINOv3 ViT-S/16 at 224 x 320 (normalised coordinates as integers) equals transformers'") {
  const auto pos = rt::dinov3_positions(14, 20);
  CHECK(pos[0] == -13);
  CHECK(pos[280] == -19);
  (void)check_case(dinov3_vits16, rt::dinov3_frequencies(64, 14, 20, 100.0), pos,
                   {.float32_module = true, .half = true, .extra_freq_ulp = 2});
}

TEST_CASE("vision rope: errors name the argument") {
  using posenc_test::message_of;
  const auto has = [](const std::string& s, const char* part) { return s.find(part) != std::string::npos; };
  CHECK(has(message_of<posenc::invalid_argument>([] { (void)rt::qwen_vl_vision_frequencies(78); }),
            "rotary::qwen_vl_vision_frequencies: head_dim: expected a multiple of 4 >= 4"));
  CHECK(has(message_of<posenc::invalid_argument>([] { (void)rt::pixtral_vision_frequencies(64, 0.5); }), "theta"));
  CHECK(has(message_of<posenc::invalid_argument>([] { (void)rt::dinov3_frequencies(64, 0, 4); }), "grid_h"));
  const std::array<rt::vision_grid, 1> odd{{{1, 5, 4}}};
  CHECK(has(message_of<posenc::invalid_argument>([&] { (void)rt::qwen_vl_vision_positions(odd, 2); }),
            "grids[0]: expected h and w multiples of spatial_merge_size = 2"));
  CHECK(has(message_of<posenc::invalid_argument>([&] { (void)rt::qwen_vl_vision_positions(odd, 0); }),
            "spatial_merge_size"));
  const std::array<rt::vision_grid, 1> negative{{{1, -2, 4}}};
  CHECK(has(message_of<posenc::invalid_argument>([&] { (void)rt::pixtral_vision_positions(negative); }),
            "grids[0]: expected (t, h, w) >= 0, got (1, -2, 4)"));
  const std::array<rt::vision_grid, 1> ok{{{1, 4, 4}}};
  CHECK(has(message_of<posenc::invalid_argument>([&] { (void)rt::qwen2_5_vl_window_order(ok, 2, 16, 14); }),
            "window_size"));
  const std::array<rt::vision_grid, 1> video{{{2, 4, 4}}};
  CHECK(has(message_of<posenc::invalid_argument>([&] { (void)rt::pixtral_vision_positions(video); }), "grids[0].t"));
  const std::vector<std::int64_t> p{0, 1, 2, 3}, bad{0, 5};
  CHECK(has(message_of<posenc::invalid_argument>([&] { (void)rt::reorder_positions(p, 2, bad); }), "order[1]"));
  CHECK(has(message_of<posenc::shape_error>([&] { (void)rt::reorder_positions(p, 3, bad); }), "positions"));
  CHECK(has(message_of<posenc::size_error>([] { (void)rt::llama4_vision_positions(std::size_t{1} << 40); }),
            "height"));
}

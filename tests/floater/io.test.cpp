// SPDX-License-Identifier: MIT
// FLOATER weights in and out: the PyTorch state_dict layout (nn.Linear [out, in + 1], time column
// last) through safetensors files and .npy folders, and every malformed input as a named error.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <posenc/floater.hpp>
#include <posenc/io/npy.hpp>
#include <posenc/io/safetensors.hpp>

#include "message_of.hpp"

#include "floater/common.hpp"

using namespace floater_test;
namespace fl = posenc::floater;
namespace fs = std::filesystem;

namespace {
fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / "posenc_floater_io_test";
  fs::create_directories(dir);
  return dir / name;
}

/// A file written the way `safetensors.torch.save_file(module.state_dict())` lays it out, built
/// directly with posenc::io (not with the floater writer): W1 = [w1 | t-column] etc.
struct torch_like {
  std::size_t d = 4, hidden = 3;
  std::vector<std::size_t> p0_shape{3, 2, 4};
  posenc::io::array<float> w1, b1, w2, b2, p0;
  torch_like() {
    auto fill = [](posenc::io::array<float>& a, std::vector<std::size_t> s, float base) {
      a.shape = s;
      std::size_t n = 1;
      for (auto x : s) n *= x;
      a.data.resize(n);
      for (std::size_t i = 0; i < n; ++i) a.data[i] = base + 0.01f * static_cast<float>(i);
    };
    fill(w1, {hidden, d + 1}, 0.1f);
    fill(b1, {hidden}, -0.2f);
    fill(w2, {d, hidden + 1}, 0.3f);
    fill(b2, {d}, 0.05f);
    fill(p0, p0_shape, -0.5f);
  }
  void write(const fs::path& p, const std::string& prefix = "") const {
    posenc::io::write_safetensors(p, {{prefix + "proj_flow.layers.0.linear.weight", w1},
                                      {prefix + "proj_flow.layers.0.linear.bias", b1},
                                      {prefix + "proj_flow.layers.2.linear.weight", w2},
                                      {prefix + "proj_flow.layers.2.linear.bias", b2},
                                      {prefix + "proj_bias", p0}});
  }
};

using posenc_test::message_of;
}  // namespace

TEST_CASE("floater reads the PyTorch state_dict layout with the time column last") {
  // Element-by-element check of the mapping against the raw tensors (exact: a copy).
  torch_like t;
  const auto path = scratch("torch_like.safetensors");
  t.write(path, "encoder.");
  const auto w = fl::load_safetensors<float>(path, fl::tensor_names::reference_encoder());
  CHECK(w.flow.dim() == 4);
  CHECK(w.flow.hidden() == 3);
  CHECK(w.flow.time1);
  CHECK(w.flow.time2);
  for (std::size_t i = 0; i < 3; ++i) {
    for (std::size_t j = 0; j < 4; ++j) CHECK(w.flow.w1(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) == t.w1.data[i * 5 + j]);
    CHECK(w.flow.w1_t[static_cast<Eigen::Index>(i)] == t.w1.data[i * 5 + 4]);
    CHECK(w.flow.b1[static_cast<Eigen::Index>(i)] == t.b1.data[i]);
  }
  for (std::size_t i = 0; i < 4; ++i) {
    for (std::size_t j = 0; j < 3; ++j) CHECK(w.flow.w2(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) == t.w2.data[i * 4 + j]);
    CHECK(w.flow.w2_t[static_cast<Eigen::Index>(i)] == t.w2.data[i * 4 + 3]);
  }
  // [3, n_layers = 2, d] -> 6 rows, row g * 2 + l
  CHECK(w.p0.rows() == 6);
  CHECK(w.p0(5, 3) == t.p0.data[5 * 4 + 3]);
  CHECK(w.p0_shape == t.p0_shape);
  // and it drives an encoder; double reads the same file (f32 converted exactly)
  auto enc = fl::make_encoder(w);
  CHECK(enc.blocks() == 6);
  const auto wd = fl::load_safetensors<double>(path, fl::tensor_names::reference_encoder());
  CHECK(max_abs_diff(wd.flow.linear1_weight(), w.flow.linear1_weight()) == 0.0);
}

TEST_CASE("floater weights round-trip through safetensors and npy folders") {
  // Written then read back: bit-exact parameters, and the encoders' tables are bitwise equal.
  auto m = random_mlp<double>(5, 7, activation::relu, 201);
  auto p0 = random_table<double>(6, 5, 202);
  const auto st = scratch("roundtrip.safetensors");
  fl::save_safetensors(st, m, p0, {}, {3, 2, 5});
  const auto a = fl::load_safetensors<double>(st);
  CHECK(a.p0_shape == std::vector<std::size_t>{3, 2, 5});
  CHECK(max_abs_diff(fl::flatten(a.flow), fl::flatten(m)) == 0.0);
  fl::encoder<double> e1(m, p0), e2 = fl::make_encoder(a);
  CHECK(max_abs_diff(e1.block_table(4, 20), e2.block_table(4, 20)) == 0.0);
  // npy folder, no time columns (inferred from the widths)
  auto m2 = random_mlp<double>(5, 4, activation::relu, 203, false, false);
  const auto dir = scratch("npy_folder");
  fl::save_npy_folder(dir, m2, p0);
  CHECK(fs::exists(dir / "proj_flow.layers.0.linear.weight.npy"));
  const auto b = fl::load_npy_folder<double>(dir);
  CHECK_FALSE(b.flow.time1);
  CHECK_FALSE(b.flow.time2);
  CHECK(max_abs_diff(fl::flatten(b.flow), fl::flatten(m2)) == 0.0);
  CHECK(max_abs_diff(b.p0, p0) == 0.0);
  // float files
  fl::mlp<float> mf(5, 7);
  fl::unflatten<float>(fl::flatten(m).cast<float>(), mf);
  const auto stf = scratch("roundtrip_f32.safetensors");
  fl::save_safetensors(stf, mf, posenc::table<float>(p0.cast<float>()));
  CHECK(posenc::io::safetensors_file::open(stf).info("proj_bias").type == posenc::io::dtype::f32);
  CHECK(max_abs_diff(fl::flatten(fl::load_safetensors<float>(stf).flow), fl::flatten(mf)) == 0.0);
}

TEST_CASE("floater weight files that do not match are clear errors naming the tensor") {
  torch_like t;
  const auto path = scratch("bad.safetensors");
  // a missing tensor: io_error naming it
  t.write(path);
  auto msg = message_of([&] { (void)fl::load_safetensors<float>(path, fl::tensor_names::reference_encoder()); });
  CHECK(msg.find("encoder.proj_bias") != std::string::npos);
  CHECK_THROWS_AS((void)fl::load_safetensors<float>(path, fl::tensor_names::reference_encoder()), posenc::io_error);
  // layer 1 weight two columns too wide
  {
    torch_like b;
    b.w1.shape = {3, 6};
    b.w1.data.resize(18);
    b.write(path);
    CHECK_THROWS_AS((void)fl::load_safetensors<float>(path), posenc::shape_error);
    msg = message_of([&] { (void)fl::load_safetensors<float>(path); });
    CHECK(msg.find("proj_flow.layers.0.linear.weight") != std::string::npos);
    CHECK(msg.find("[3, 6]") != std::string::npos);
  }
  // layer 2 bias of the wrong length
  {
    torch_like b;
    b.b2.shape = {5};
    b.b2.data.resize(5);
    b.write(path);
    msg = message_of([&] { (void)fl::load_safetensors<float>(path); });
    CHECK(msg.find("proj_flow.layers.2.linear.bias") != std::string::npos);
  }
  // layer 2 weight for another d
  {
    torch_like b;
    b.w2.shape = {3, 4};
    b.w2.data.resize(12);
    b.write(path);
    CHECK_THROWS_AS((void)fl::load_safetensors<float>(path), posenc::shape_error);
  }
  // NaN in a weight
  {
    torch_like b;
    b.w2.data[3] = std::nanf("");
    b.write(path);
    CHECK_THROWS_AS((void)fl::load_safetensors<float>(path), posenc::non_finite_error);
    msg = message_of([&] { (void)fl::load_safetensors<float>(path); });
    CHECK(msg.find("proj_flow.layers.2.linear.weight") != std::string::npos);
  }
  // configuration mismatches: forced time column absent, wrong d, wrong hidden, wrong block count
  t.write(path);
  fl::load_options o;
  o.time1 = false;
  CHECK_THROWS_AS((void)fl::load_safetensors<float>(path, {}, o), posenc::shape_error);
  o = {};
  o.d = 8;
  CHECK_THROWS_AS((void)fl::load_safetensors<float>(path, {}, o), posenc::shape_error);
  o = {};
  o.hidden = 4;
  CHECK_THROWS_AS((void)fl::load_safetensors<float>(path, {}, o), posenc::shape_error);
  o = {};
  o.blocks = 18;
  msg = message_of([&] { (void)fl::load_safetensors<float>(path, {}, o); });
  CHECK(msg.find("proj_bias") != std::string::npos);
  o.blocks = 6;
  CHECK_NOTHROW((void)fl::load_safetensors<float>(path, {}, o));
  // a truncated file: io_error from the reader, never a crash
  {
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream out(scratch("truncated.safetensors"), std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size() - 7));
  }
  CHECK_THROWS_AS((void)fl::load_safetensors<float>(scratch("truncated.safetensors")), posenc::io_error);
  // a folder without the files
  CHECK_THROWS_AS((void)fl::load_npy_folder<float>(scratch("empty_folder_xyz")), posenc::io_error);
  // writer: p0_shape that does not hold p0
  auto m = random_mlp<double>(4, 3, activation::relu, 1);
  CHECK_THROWS_AS(fl::save_safetensors(path, m, random_table<double>(2, 4, 2), {}, {3, 4}), posenc::shape_error);
}

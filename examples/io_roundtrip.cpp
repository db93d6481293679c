// SPDX-License-Identifier: MIT
// Weights in and out: write a position table to NumPy .npy and to safetensors, read both back and
// compare, and render the table as a PNG heatmap. Standard library only (posenc::posenc).
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <vector>

#include <posenc/io/image.hpp>
#include <posenc/io/npy.hpp>
#include <posenc/io/safetensors.hpp>

int main() {
  namespace io = posenc::io;
  // A sinusoidal table (Vaswani et al.): row i = position i, P[i, 2k] = sin(i w_k), P[i, 2k+1] = cos(i w_k).
  const std::size_t L = 128, d = 64;
  std::vector<double> table(L * d);
  for (std::size_t i = 0; i < L; ++i)
    for (std::size_t k = 0; k < d / 2; ++k) {
      const double w = std::pow(10000.0, -2.0 * static_cast<double>(k) / static_cast<double>(d));
      table[i * d + 2 * k] = std::sin(static_cast<double>(i) * w);
      table[i * d + 2 * k + 1] = std::cos(static_cast<double>(i) * w);
    }
  std::vector<float> table32(table.begin(), table.end());
  int failures = 0;

  // [io-npy]
  const std::vector<std::size_t> shape{L, d};
  io::write_npy<double>("table.npy", table, shape);  // numpy.load("table.npy") -> (128, 64) float64
  const io::array<double> back = io::read_npy<double>("table.npy");
  // back.shape == {128, 64}; back.data is row-major
  // [io-npy]
  failures += back.shape != shape || back.data != table;

  // [io-safetensors]
  io::write_safetensors("weights.safetensors",
                        {{"encoder.table", {L, d}, std::span<const double>(table)},
                         {"encoder.table_f32", {L, d}, std::span<const float>(table32)}},
                        {{"format", "pt"}, {"source", "posenc io_roundtrip"}});

  const auto file = io::safetensors_file::open("weights.safetensors");
  for (const auto& t : file.tensors())
    std::printf("%-20s %-4s shape %s, data bytes [%llu, %llu)\n", t.name.c_str(), io::dtype_name(t.type).data(),
                io::shape_string(t.shape).c_str(), static_cast<unsigned long long>(t.begin),
                static_cast<unsigned long long>(t.end));
  // get<T> converts F16/BF16/F32/F64 to T; the shape overload throws posenc::io_error on a mismatch.
  const io::array<double> p = file.get<double>("encoder.table", {L, d});
  const io::array<float> q = file.get<float>("encoder.table_f32");
  // [io-safetensors]
  failures += p.data != table || q.data != table32 || file.metadata().at("format") != "pt";

  // Malformed input is an io_error naming the file, the tensor and the problem.
  try {
    (void)file.get<double>("encoder.table", {L, d + 1});
    ++failures;
  } catch (const posenc::io_error& e) {
    std::printf("expected error: %s\n", e.what());
  }

  // [io-heatmap]
  io::write_png_heatmap("table.png", table.data(), L, d,
                        {.map = io::colormap::diverging, .range = io::value_range{-1, 1}, .pixel_size = 4});
  // [io-heatmap]
  failures += !std::filesystem::exists("table.png");

  std::printf("npy %llu bytes, safetensors %llu bytes, png %llu bytes: %s\n",
              static_cast<unsigned long long>(std::filesystem::file_size("table.npy")),
              static_cast<unsigned long long>(std::filesystem::file_size("weights.safetensors")),
              static_cast<unsigned long long>(std::filesystem::file_size("table.png")), failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}

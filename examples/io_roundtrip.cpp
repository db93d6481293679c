// SPDX-License-Identifier: MIT
// Weights in and out: write a position table to NumPy .npy and to safetensors, read both back and
// compare. Standard library only (posenc::posenc). (PNG heatmaps: examples/io_heatmap.cpp.)
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <vector>

#include <posenc/io/npy.hpp>
#include <posenc/io/safetensors.hpp>

int main() {
  namespace io = posenc::io;
  // A position table: row i = position i, d features.
  // (Here a stand-in of the same shape: row i, column j holds sin(i + j / 64).)
  const std::size_t L = 128, d = 64;
  std::vector<double> table(L * d);
  for (std::size_t e = 0; e < L * d; ++e) table[e] = std::sin(static_cast<double>(e / d) + static_cast<double>(e % d) / 64);
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
    std::printf("%-20.*s %-4s shape %s, data bytes [%llu, %llu)\n", static_cast<int>(t.name.size()), t.name.data(),
                io::dtype_name(t.type).data(), io::shape_string(t.shape).c_str(),
                static_cast<unsigned long long>(t.begin), static_cast<unsigned long long>(t.end));
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

  std::printf("npy %llu bytes, safetensors %llu bytes: %s\n",
              static_cast<unsigned long long>(std::filesystem::file_size("table.npy")),
              static_cast<unsigned long long>(std::filesystem::file_size("weights.safetensors")), failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}

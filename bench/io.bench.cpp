// SPDX-License-Identifier: MIT
// Throughput of posenc::io's file formats against the bare cost of moving the same bytes:
// read_npy / safetensors_file::get against fread of the whole file into a buffer, write_npy /
// write_safetensors against fwrite of the same bytes, and the dtype conversions (F16/BF16 -> f32,
// f32 -> f64) against memcpy. Files live in the system temp directory (page cache, so these
// measure the library's overhead over the OS copy, not the disk). Counter: bytes/s of tensor data.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <posenc/io/npy.hpp>
#include <posenc/io/safetensors.hpp>

namespace {

namespace io = posenc::io;

std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("posenc_bench_io_" + name);
}

std::vector<float> make_data(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(std::sin(0.001 * static_cast<double>(i)));
  return v;
}

// Reference: the bytes of a file read into a buffer with one fread.
void read_raw(const std::filesystem::path& p, std::vector<char>& buf) {
  std::FILE* f = std::fopen(p.c_str(), "rb");
  const std::size_t got = std::fread(buf.data(), 1, buf.size(), f);
  std::fclose(f);
  if (got != buf.size()) std::abort();
}

void write_raw(const std::filesystem::path& p, const void* data, std::size_t n) {
  std::FILE* f = std::fopen(p.c_str(), "wb");
  if (std::fwrite(data, 1, n, f) != n) std::abort();
  std::fclose(f);
}

void set_bytes(benchmark::State& state, std::size_t bytes) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
}

// ---- .npy ------------------------------------------------------------------------------------

void BM_npy_read_f32(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto p = temp_file("read.npy");
  const auto v = make_data(n);
  const std::vector<std::size_t> shape{n};
  io::write_npy<float>(p, v, shape);
  for (auto _ : state) {
    auto a = io::read_npy<float>(p);
    benchmark::DoNotOptimize(a.data.data());
  }
  set_bytes(state, n * sizeof(float));
  std::filesystem::remove(p);
}

void BM_npy_read_f32_as_f64(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto p = temp_file("read64.npy");
  const auto v = make_data(n);
  const std::vector<std::size_t> shape{n};
  io::write_npy<float>(p, v, shape);
  for (auto _ : state) {
    auto a = io::read_npy<double>(p);
    benchmark::DoNotOptimize(a.data.data());
  }
  set_bytes(state, n * sizeof(float));
  std::filesystem::remove(p);
}

void BM_fread_reference(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto p = temp_file("raw.bin");
  const auto v = make_data(n);
  write_raw(p, v.data(), n * sizeof(float));
  for (auto _ : state) {
    std::vector<char> buf(n * sizeof(float));  // allocate per iteration, as a reader must
    read_raw(p, buf);
    benchmark::DoNotOptimize(buf.data());
  }
  set_bytes(state, n * sizeof(float));
  std::filesystem::remove(p);
}

// Reference for the converting read: fread the f32 bytes, then widen them into a fresh
// std::vector<double> with a plain loop (the output allocation is part of both).
void BM_fread_widen_reference(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto p = temp_file("raw64.bin");
  const auto v = make_data(n);
  write_raw(p, v.data(), n * sizeof(float));
  std::vector<char> buf(n * sizeof(float));
  for (auto _ : state) {
    read_raw(p, buf);
    std::vector<double> out(n);
    const auto* f = reinterpret_cast<const float*>(buf.data());
    for (std::size_t i = 0; i < n; ++i) out[i] = f[i];
    benchmark::DoNotOptimize(out.data());
  }
  set_bytes(state, n * sizeof(float));
  std::filesystem::remove(p);
}

void BM_npy_write_f32(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto p = temp_file("write.npy");
  const auto v = make_data(n);
  const std::vector<std::size_t> shape{n};
  for (auto _ : state) io::write_npy<float>(p, v, shape);
  set_bytes(state, n * sizeof(float));
  std::filesystem::remove(p);
}

void BM_fwrite_reference(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto p = temp_file("rawwrite.bin");
  const auto v = make_data(n);
  for (auto _ : state) write_raw(p, v.data(), n * sizeof(float));
  set_bytes(state, n * sizeof(float));
  std::filesystem::remove(p);
}

// ---- safetensors -------------------------------------------------------------------------------

void BM_safetensors_open_get_f32(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto p = temp_file("read.safetensors");
  const auto v = make_data(n);
  io::write_safetensors(p, {{"w", {n}, std::span<const float>(v)}}, {{"format", "pt"}});
  for (auto _ : state) {
    const auto f = io::safetensors_file::open(p);
    auto a = f.get<float>("w");
    benchmark::DoNotOptimize(a.data.data());
  }
  set_bytes(state, n * sizeof(float));
  std::filesystem::remove(p);
}

void BM_safetensors_write_f32(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto p = temp_file("write.safetensors");
  const auto v = make_data(n);
  for (auto _ : state) io::write_safetensors(p, {{"w", {n}, std::span<const float>(v)}}, {{"format", "pt"}});
  set_bytes(state, n * sizeof(float));
  std::filesystem::remove(p);
}

// Many small tensors: the per-tensor cost of the header (JSON parse, validation, one read each).
void BM_safetensors_many_tensors(benchmark::State& state) {
  const auto count = static_cast<std::size_t>(state.range(0));
  const auto p = temp_file("many.safetensors");
  const auto v = make_data(64);
  std::vector<io::tensor_ref> ts;
  for (std::size_t i = 0; i < count; ++i) ts.emplace_back("layer." + std::to_string(i) + ".bias", std::vector<std::size_t>{64}, std::span<const float>(v));
  io::write_safetensors(p, ts);
  for (auto _ : state) {
    const auto f = io::safetensors_file::open(p);
    for (const auto& t : f.tensors()) {
      auto a = f.get<float>(t.name);
      benchmark::DoNotOptimize(a.data.data());
    }
  }
  state.counters["tensors/s"] = benchmark::Counter(static_cast<double>(count), benchmark::Counter::kIsIterationInvariantRate);
  set_bytes(state, count * 64 * sizeof(float));
  std::filesystem::remove(p);
}

// ---- in-memory conversions -------------------------------------------------------------------------

template <io::dtype From>
void BM_convert_to_f32(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<std::byte> src(n * io::dtype_size(From));
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::byte>((i * 37) & 0x3F);
  std::vector<float> dst(n);
  for (auto _ : state) {
    io::detail::convert(From, false, src.data(), n, dst.data());
    benchmark::DoNotOptimize(dst.data());
  }
  set_bytes(state, n * sizeof(float));  // bytes produced
}

void BM_memcpy_reference(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<float> src = make_data(n), dst(n);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), n * sizeof(float));
    benchmark::DoNotOptimize(dst.data());
  }
  set_bytes(state, n * sizeof(float));
}

constexpr std::int64_t n_file = std::int64_t{1} << 22;  // 4 Mi floats = 16 MiB
constexpr std::int64_t n_mem = std::int64_t{1} << 20;   // 1 Mi elements

}  // namespace

BENCHMARK(BM_fread_reference)->Arg(n_file)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_npy_read_f32)->Arg(n_file)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_fread_widen_reference)->Arg(n_file)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_npy_read_f32_as_f64)->Arg(n_file)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_safetensors_open_get_f32)->Arg(n_file)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_fwrite_reference)->Arg(n_file)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_npy_write_f32)->Arg(n_file)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_safetensors_write_f32)->Arg(n_file)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_safetensors_many_tensors)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_memcpy_reference)->Arg(n_mem);
BENCHMARK(BM_convert_to_f32<io::dtype::f32>)->Arg(n_mem);
BENCHMARK(BM_convert_to_f32<io::dtype::f16>)->Arg(n_mem);
BENCHMARK(BM_convert_to_f32<io::dtype::bf16>)->Arg(n_mem);
BENCHMARK(BM_convert_to_f32<io::dtype::f64>)->Arg(n_mem);

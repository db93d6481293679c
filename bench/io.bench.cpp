// SPDX-License-Identifier: MIT
// Throughput of posenc::io's file formats against the bare cost of moving the same bytes:
// read_npy / safetensors_file::get against fread of the whole file into a buffer, write_npy /
// write_safetensors against fwrite of the same bytes, and the dtype conversions (F16/BF16 -> f32,
// f32 -> f64) against memcpy. Files live in the system temp directory (page cache, so these
// measure the library's overhead over the OS copy, not the disk). Counter: bytes/s of tensor data.
//
// Readers at scale (issue 26): the crafted headers of the hostile-input budget (a 10^6-key JSON
// object, a 16 MB safetensors header of tensor entries, a config.json whose short_factor has
// 32768 items (the longest rotary::max_config_head_dim allows: 10^6 is now a config_error at the
// head width), 10^6 empty objects) each parsed by the public reader beside a plain parse of an
// ordinary document of the same size (a flat array of numbers, what a weight or factor list
// looks like) and beside one pass over the bytes (std::count of a character, the floor).
// Counters: bytes/s of input, and mem_x = the largest number of bytes the reader held at once
// (measured by the counting operator new below) over the input size (the goal: <= 4).
#include <benchmark/benchmark.h>

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>
#include <string>
#include <vector>

#include <posenc/io/json.hpp>
#include <posenc/io/npy.hpp>
#include <posenc/io/safetensors.hpp>
#include <posenc/rotary/config.hpp>

// Heap accounting for the mem_x counters: live bytes (malloc_usable_size, glibc) and their peak.
namespace {
std::atomic<std::size_t> g_live{0}, g_peak{0};
void note_alloc(void* p) {
  if (!p) return;
  const std::size_t now = g_live.fetch_add(malloc_usable_size(p), std::memory_order_relaxed) + malloc_usable_size(p);
  std::size_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}
}  // namespace
void* operator new(std::size_t n) {
  void* p = std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  note_alloc(p);
  return p;
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept {
  if (p) g_live.fetch_sub(malloc_usable_size(p), std::memory_order_relaxed);
  std::free(p);
}
void operator delete[](void* p) noexcept { operator delete(p); }
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }
void operator delete[](void* p, std::size_t) noexcept { operator delete(p); }

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

// ---- readers at scale: crafted headers (issue 26) --------------------------------------------

std::string json_keys(std::size_t m) {  // {"k0":0,"k1":0,...}
  std::string s = "{";
  for (std::size_t i = 0; i < m; ++i) s += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":0";
  return s + "}";
}
std::string json_empty_objects(std::size_t m) {  // [{},{},...]
  std::string s = "[";
  for (std::size_t i = 0; i < m; ++i) s += i ? ",{}" : "{}";
  return s + "]";
}
std::string json_numbers(std::size_t m) {  // [0.5,1.5,...]: the plain document
  std::string s = "[";
  for (std::size_t i = 0; i < m; ++i) s += (i ? "," : "") + std::to_string(i % 1000) + ".5";
  return s + "]";
}
std::string config_short_factor(std::size_t m) {  // longrope with m short and m long factors
  std::string f = "[";
  for (std::size_t i = 0; i < m; ++i) f += i ? ",1.5" : "1.5";
  f += "]";
  return "{\"head_dim\": " + std::to_string(2 * m) +
         ", \"max_position_embeddings\": 8192, \"original_max_position_embeddings\": 4096, "
         "\"rope_scaling\": {\"type\": \"longrope\", \"short_factor\": " + f + ", \"long_factor\": " + f + "}}";
}
/// A safetensors image whose header holds tensor entries up to `bytes` bytes (one F32 element each).
std::vector<std::byte> safetensors_header(std::size_t bytes, std::size_t& header) {
  std::string h = "{";
  std::size_t n = 0;
  while (h.size() + 80 < bytes) {
    h += (n ? ",\"layers." : "\"layers.") + std::to_string(n) + ".weight\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[" +
         std::to_string(4 * n) + "," + std::to_string(4 * n + 4) + "]}";
    ++n;
  }
  h += "}";
  while (h.size() % 8) h += ' ';
  header = h.size();
  std::vector<std::byte> img(8 + h.size() + 4 * n);
  std::uint64_t len = h.size();
  for (int i = 0; i < 8; ++i) img[static_cast<std::size_t>(i)] = static_cast<std::byte>((len >> (8 * i)) & 0xff);
  std::memcpy(img.data() + 8, h.data(), h.size());
  return img;
}

/// Runs f once per iteration; counters: input bytes/s and mem_x (peak heap growth / input bytes).
template <class F>
void reader_bench(benchmark::State& state, std::size_t input_bytes, F&& f) {
  double worst = 0;
  for (auto _ : state) {
    const std::size_t base = g_live.load();
    g_peak.store(base);
    f();
    worst = std::max(worst, static_cast<double>(g_peak.load() - base) / static_cast<double>(input_bytes));
  }
  set_bytes(state, input_bytes);
  state.counters["input_MB"] = static_cast<double>(input_bytes) / 1e6;
  state.counters["mem_x"] = worst;
}

void BM_scan_reference(benchmark::State& state) {  // one pass over 10 MB: the floor
  const std::string s = json_numbers(static_cast<std::size_t>(state.range(0)));
  reader_bench(state, s.size(), [&] { benchmark::DoNotOptimize(std::count(s.begin(), s.end(), ',')); });
}
auto throwing = [](std::size_t, std::string_view m) { throw posenc::io_error(std::string(m)); };
void BM_json_plain_numbers(benchmark::State& state) {
  const std::string s = json_numbers(static_cast<std::size_t>(state.range(0)));
  reader_bench(state, s.size(), [&] { benchmark::DoNotOptimize(io::json::parse(s, throwing).nodes()); });
}
void BM_json_object_keys(benchmark::State& state) {
  const std::string s = json_keys(static_cast<std::size_t>(state.range(0)));
  reader_bench(state, s.size(), [&] { benchmark::DoNotOptimize(io::json::parse(s, throwing).nodes()); });
}
void BM_json_empty_objects(benchmark::State& state) {
  const std::string s = json_empty_objects(static_cast<std::size_t>(state.range(0)));
  reader_bench(state, s.size(), [&] { benchmark::DoNotOptimize(io::json::parse(s, throwing).nodes()); });
}
void BM_config_short_factor(benchmark::State& state) {
  const std::string s = config_short_factor(static_cast<std::size_t>(state.range(0)));
  reader_bench(state, s.size(), [&] { benchmark::DoNotOptimize(posenc::rotary::load_config(s).main_plan().rotary_dim()); });
}
/// The crafted input of issue 26: a longrope config with 10^6 short and 10^6 long factors (8 MB).
/// A config may give at most rotary::max_config_head_dim / 2 pairs, so load_config parses the
/// document and throws config_error at the head width: the time and memory of that rejection.
void BM_config_short_factor_rejected(benchmark::State& state) {
  const std::string s = config_short_factor(static_cast<std::size_t>(state.range(0)));
  reader_bench(state, s.size(), [&] {
    try {
      benchmark::DoNotOptimize(posenc::rotary::load_config(s).main_plan().rotary_dim());
      state.SkipWithError("load_config accepted a head width above rotary::max_config_head_dim");
    } catch (const posenc::rotary::config_error&) {
    }
  });
}
/// The same header's JSON parse alone (what from_bytes does before it builds the tensor list).
void BM_safetensors_header_json(benchmark::State& state) {
  std::size_t header = 0;
  const auto img = safetensors_header(static_cast<std::size_t>(state.range(0)), header);
  const std::string_view text(reinterpret_cast<const char*>(img.data()) + 8, header);
  reader_bench(state, header, [&] { benchmark::DoNotOptimize(io::json::parse(text, throwing, 4096).nodes()); });
}
void BM_safetensors_header(benchmark::State& state) {
  std::size_t header = 0;
  const auto img = safetensors_header(static_cast<std::size_t>(state.range(0)), header);
  reader_bench(state, header, [&] { benchmark::DoNotOptimize(io::safetensors_file::from_bytes(img).tensors().size()); });
}

/// Every tensor of the same header looked up by name once (info(name) for each listed name): the
/// first lookup sorts the index of names, each lookup is then a binary search. Work: n lookups.
void BM_safetensors_lookup_all(benchmark::State& state) {
  std::size_t header = 0;
  const auto img = safetensors_header(static_cast<std::size_t>(state.range(0)), header);
  std::size_t n = 0;
  reader_bench(state, header, [&] {
    const auto f = io::safetensors_file::from_bytes(img);
    std::uint64_t sum = 0;
    for (const auto& t : f.tensors()) sum += f.info(t.name).begin;
    benchmark::DoNotOptimize(sum);
    n = f.tensors().size();
  });
  state.counters["tensors"] = static_cast<double>(n);
}

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
BENCHMARK(BM_scan_reference)->Arg(2'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_json_plain_numbers)->Arg(2'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_json_object_keys)->Arg(1'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_json_empty_objects)->Arg(1'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_config_short_factor)->Arg(32768)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_config_short_factor_rejected)->Arg(1'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_safetensors_header_json)->Arg(16'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_safetensors_header)->Arg(16'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_safetensors_lookup_all)->Arg(1'600'000)->Arg(16'000'000)->Unit(benchmark::kMillisecond);

/// The crafted input of issue 37: a config with a layer_types entry per layer of the largest model
/// load_config accepts (rotary::max_config_layers), a rope_parameters entry for each of its layer
/// types, the widest head, and a per_layer_config entry per layer (3.4 MB). Before the loader was
/// bounded, each "*_attention" key made its own plan and the head_dim check was quadratic.
void BM_config_layer_types(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  static constexpr const char* types[] = {"full_attention", "sliding_attention", "chunked_attention", "linear_attention"};
  std::string lt, plc, rp;
  for (std::size_t i = 0; i < n; ++i) {
    lt += std::string(i ? "," : "") + "\"" + types[i % 4] + "\"";
    plc += std::string(i ? "," : "") + "\"" + std::to_string(i) + "\":{\"head_dim\":65536}";
  }
  for (const char* t : types) rp += std::string(rp.empty() ? "" : ",") + "\"" + t + "\":null";
  const std::string s = "{\"model_type\":\"llama\",\"head_dim\":65536,\"num_hidden_layers\":" + std::to_string(n) +
                        ",\"layer_types\":[" + lt + "],\"rope_parameters\":{" + rp + "},\"per_layer_config\":{" + plc + "}}";
  reader_bench(state, s.size(), [&] { benchmark::DoNotOptimize(posenc::rotary::load_config(s).layers.size()); });
}
BENCHMARK(BM_config_layer_types)->Arg(65536)->Unit(benchmark::kMillisecond);

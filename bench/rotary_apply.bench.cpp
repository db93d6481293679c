// SPDX-License-Identifier: MIT
// RoPE applied in place to q and k, and the ALiBi bias, against the memory roofline measured in
// the same binary:
//  - BM_copy<T>: memcpy of q and k to two other buffers (the same bytes read and written as the
//    in-place rotation);
//  - BM_rope_dense<T>: rotary::apply_inplace on q and k [1, 32, 4096, 128] (positions 0..4095;
//    32 MiB per tensor in bf16, 64 MiB in f32; a smaller batch than the 8-sequence one of the
//    issue, on a shared 2-core machine), both layouts;
//  - BM_rope_dense_ids<T>: the same with explicit position_ids 0..4095 (half layout);
//  - BM_frequencies: the llama3 frequencies from a rope_config (compute_frequencies, the old path)
//    vs a plan's (built once, owning them);
//  - BM_rope_tokens<T>: the same q and k in the token-major layout [4096, 32, 128] of ggml and
//    llama.cpp (one ragged sequence), both pair layouts;
//  - BM_rope_ragged<T>: the same tokens as a ragged [4096, 32, 128] batch of 8 sequences of 512
//    at KV-cache offsets (ragged vs dense overhead), and a decode step: 256 sequences of 1 token
//    each at positions ~4000 (every token its own position: the cos/sin cost is not shared);
//  - the same for double storage (128 MiB per tensor; every phase evaluated exactly);
//  - BM_fill<T> / BM_alibi_write<T>: a fill of scores [1, 32, 1024, 1024] vs alibi::write_bias
//    into them; BM_add_const<T> / BM_alibi_add<T>: scores += c vs alibi::add_bias (read + write).
//  - BM_kernel<T>: the inner kernel alone, portable C++ against the dispatched one (the highest
//    kernel level of the processor: AVX-512, AVX2 / F16C);
//  - a threads argument (apply_options::threads) where it applies, against the copy on as many threads;
//  - BM_rope_level<T> (at the end): each kernel level forced, beside BM_inplace_floor<T>, the
//    in-place floor of the same bytes (the reference of docs/performance.md for an in-place pass);
//  - BM_decode<T> / BM_decode_floor<T> (at the end): a decode step from the exact per-position path
//    and from rotary::decode_cache's table, beside the in-place floor of the same bytes.
// Counters: bytes moved per second (GB/s: read + written bytes of the operation), MiB per tensor.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include <posenc/core/thread_pool.hpp>

#include <posenc/alibi.hpp>
#include <posenc/rotary.hpp>

namespace {

namespace pr = posenc::rotary;
namespace pa = posenc::alibi;

constexpr std::size_t H = 32, S = 4096, D = 128;

void set_counters(benchmark::State& state, double bytes_moved, double tensor_bytes) {
  state.counters["GB/s"] =
      benchmark::Counter(bytes_moved, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  state.counters["MiB"] = tensor_bytes / (1 << 20);
}

template <class T>
std::vector<T> filled(std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = T(static_cast<float>((i * 2654435761u) % 1000) / 500.0f - 1.0f);
  return v;
}

template <class T>
void BM_copy(benchmark::State& state) {
  const std::size_t n = H * S * D;
  const auto threads = static_cast<std::size_t>(state.range(0));
  auto q = filled<T>(n), k = filled<T>(n), q2 = filled<T>(n), k2 = filled<T>(n);
  for (auto _ : state) {
    posenc::parallel_chunks(n, threads, [&](std::size_t b, std::size_t e) {
      std::memcpy(q2.data() + b, q.data() + b, (e - b) * sizeof(T));
      std::memcpy(k2.data() + b, k.data() + b, (e - b) * sizeof(T));
    });
    benchmark::DoNotOptimize(q2.data());
    benchmark::DoNotOptimize(k2.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, 4.0 * n * sizeof(T), static_cast<double>(n * sizeof(T)));
}

template <class T>
void BM_rope_dense(benchmark::State& state) {
  const std::size_t n = H * S * D;
  auto q = filled<T>(n), k = filled<T>(n);
  const auto f = pr::default_frequencies(D, 500000.0);
  pr::apply_options o;
  o.layout = state.range(0) == 0 ? pr::layout::interleaved : pr::layout::half;
  o.check_finite = state.range(1) != 0;
  o.threads = static_cast<std::size_t>(state.range(2));
  for (auto _ : state) {
    pr::apply_inplace<T>(pr::dense_view<T>::contiguous(q.data(), {1, H, S, D}),
                         pr::dense_view<T>::contiguous(k.data(), {1, H, S, D}), f, {}, o);
    benchmark::DoNotOptimize(q.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, 4.0 * n * sizeof(T), static_cast<double>(n * sizeof(T)));
}

/// BM_rope_dense with explicit positions (rotary::position_ids [seq] = 0..S-1): the same work.
template <class T>
void BM_rope_dense_ids(benchmark::State& state) {
  const std::size_t n = H * S * D;
  auto q = filled<T>(n), k = filled<T>(n);
  const auto f = pr::default_frequencies(D, 500000.0);
  std::vector<std::int64_t> ids(S);
  for (std::size_t s = 0; s < S; ++s) ids[s] = static_cast<std::int64_t>(s);
  pr::apply_options o;
  o.layout = pr::layout::half;
  for (auto _ : state) {
    pr::apply_inplace<T>(pr::dense_view<T>::contiguous(q.data(), {1, H, S, D}),
                         pr::dense_view<T>::contiguous(k.data(), {1, H, S, D}), f, pr::position_ids(ids), o);
    benchmark::DoNotOptimize(q.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, 4.0 * n * sizeof(T), static_cast<double>(n * sizeof(T)));
}

/// The frequencies of the old path (rope_config -> compute_frequencies) and of the plan path
/// (load_config's plan -> plan::frequencies()): Llama-3.1-8B's llama3 rule, 64 pairs.
void BM_frequencies(benchmark::State& state) {
  pr::rope_config c;
  c.type = pr::rope_type::llama3;
  c.theta = 500000.0;
  c.head_dim = D;
  c.max_position_embeddings = 131072;
  c.original_max_position_embeddings = 8192;
  c.factor = 8.0;
  const pr::plan p = pr::to_plan(c);
  for (auto _ : state) {
    if (state.range(0) == 0) {
      auto f = pr::compute_frequencies(c);
      benchmark::DoNotOptimize(f.inv_freq.data());
    } else {
      const pr::frequencies& f = p.frequencies();
      benchmark::DoNotOptimize(f.inv_freq.data());
    }
    benchmark::ClobberMemory();
  }
}

/// The inner kernel alone on q [32 * 4096 rows of 128] (one row's coefficients for every row, so
/// only the kernel runs): the portable C++ (arg 0) against the dispatched kernel (arg 1: the
/// highest kernel level of the processor), finite check on, half layout.
template <class T>
void BM_kernel(benchmark::State& state) {
  using W = posenc::numeric::rotation_work_t<T>;
  namespace rd = posenc::numeric::detail;  // the kernels (numeric/pair_rotation.hpp)
  const std::size_t n = H * S * D, half = D / 2, rows = H * S;
  auto q = filled<T>(n);
  std::vector<W> cs(D);
  for (std::size_t k = 0; k < half; ++k) {
    cs[k] = static_cast<W>(std::cos(0.001 * static_cast<double>(k)));
    cs[half + k] = static_cast<W>(std::sin(0.001 * static_cast<double>(k)));
  }
  const bool dispatched = state.range(0) != 0;
  for (auto _ : state) {
    bool bad = false;
    for (std::size_t r = 0; r < rows; r += 4)
      bad |= dispatched ? rd::rotate_heads<T, W>(q.data() + r * D, D, 4, cs.data(), half, false, true)
                        : rd::rotate_heads_portable<T, W>(q.data() + r * D, D, 4, cs.data(), half, false, true);
    benchmark::DoNotOptimize(bad);
    benchmark::ClobberMemory();
  }
  state.counters["kernel_level"] = static_cast<int>(rd::detected_kernel_level());
  set_counters(state, 2.0 * n * sizeof(T), static_cast<double>(n * sizeof(T)));
}

template <class T>
void BM_rope_ragged(benchmark::State& state) {
  const std::size_t seqs = static_cast<std::size_t>(state.range(0));
  const std::size_t tokens = state.range(1) != 0 ? seqs : S;  // 1: decode (one token per sequence)
  const std::size_t n = tokens * H * D;
  auto q = filled<T>(n), k = filled<T>(n);
  const auto f = pr::default_frequencies(D, 500000.0);
  std::vector<std::int64_t> cu(seqs + 1), off(seqs);
  for (std::size_t b = 0; b <= seqs; ++b) cu[b] = static_cast<std::int64_t>(b * (tokens / seqs));
  for (std::size_t b = 0; b < seqs; ++b) off[b] = static_cast<std::int64_t>(3000 + 7 * b);
  pr::apply_options o;
  o.layout = pr::layout::half;
  o.threads = static_cast<std::size_t>(state.range(2));
  for (auto _ : state) {
    pr::apply_ragged_inplace<T, std::int64_t>(pr::ragged_view<T>::contiguous(q.data(), {tokens, H, D}),
                                              pr::ragged_view<T>::contiguous(k.data(), {tokens, H, D}), cu, off, f, o);
    benchmark::DoNotOptimize(q.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, 4.0 * n * sizeof(T), static_cast<double>(n * sizeof(T)));
}

/// One sequence of S tokens in the token-major layout [S, H, D] (rotary::apply_ragged_inplace with
/// cu_seqlens {0, S}, positions 0..S-1): the layout of ggml's and llama.cpp's q and k
/// (ne = D, H, S), the same bytes and work as BM_rope_dense, both pair layouts.
template <class T>
void BM_rope_tokens(benchmark::State& state) {
  const std::size_t n = S * H * D;
  auto q = filled<T>(n), k = filled<T>(n);
  const auto f = pr::default_frequencies(D, 500000.0);
  const std::int64_t cu[2] = {0, static_cast<std::int64_t>(S)};
  pr::apply_options o;
  o.layout = state.range(0) == 0 ? pr::layout::interleaved : pr::layout::half;
  o.threads = static_cast<std::size_t>(state.range(1));
  for (auto _ : state) {
    pr::apply_ragged_inplace<T, std::int64_t>(pr::ragged_view<T>::contiguous(q.data(), {S, H, D}),
                                              pr::ragged_view<T>::contiguous(k.data(), {S, H, D}), cu, {}, f, o);
    benchmark::DoNotOptimize(q.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, 4.0 * n * sizeof(T), static_cast<double>(n * sizeof(T)));
}

constexpr std::size_t AH = 32, AL = 1024;

template <class T>
void BM_fill(benchmark::State& state) {
  auto s = filled<T>(AH * AL * AL);
  T v = T(0.5f);
  for (auto _ : state) {
    std::fill(s.begin(), s.end(), v);
    benchmark::DoNotOptimize(s.data());
    benchmark::ClobberMemory();
    v = T(static_cast<float>(v) + 1.0f);
  }
  set_counters(state, static_cast<double>(s.size() * sizeof(T)), static_cast<double>(s.size() * sizeof(T)));
}

template <class T>
void BM_alibi_write(benchmark::State& state) {
  auto s = filled<T>(AH * AL * AL);
  const auto m = pa::slopes(AH);
  const pa::bias_options o{static_cast<pa::bias_form>(state.range(0)), state.range(1) != 0};
  for (auto _ : state) {
    pa::write_bias<T>(pa::scores_view<T>::contiguous(s.data(), {1, AH, AL, AL}), m, {}, o);
    benchmark::DoNotOptimize(s.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, static_cast<double>(s.size() * sizeof(T)), static_cast<double>(s.size() * sizeof(T)));
}

template <class T>
void BM_add_const(benchmark::State& state) {
  auto s = filled<T>(AH * AL * AL);
  for (auto _ : state) {
    for (auto& x : s) x = T(static_cast<float>(x) + 0.25f);
    benchmark::DoNotOptimize(s.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, 2.0 * static_cast<double>(s.size() * sizeof(T)), static_cast<double>(s.size() * sizeof(T)));
}

template <class T>
void BM_alibi_add(benchmark::State& state) {
  auto s = filled<T>(AH * AL * AL);
  const auto m = pa::slopes(AH);
  const pa::bias_options o{static_cast<pa::bias_form>(state.range(0)), state.range(1) != 0};
  for (auto _ : state) {
    pa::add_bias<T>(pa::scores_view<T>::contiguous(s.data(), {1, AH, AL, AL}), m, {}, o);
    benchmark::DoNotOptimize(s.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, 2.0 * static_cast<double>(s.size() * sizeof(T)), static_cast<double>(s.size() * sizeof(T)));
}

}  // namespace

// threads = 1 and 2 for each type: the copy on as many threads is the roofline of each
BENCHMARK(BM_copy<float>)->ArgNames({"threads"})->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_rope_dense<float>)->ArgNames({"half_layout", "check", "threads"})->Args({0, 1, 1})->Args({1, 1, 1})
    ->Args({1, 0, 1})->Args({0, 1, 2})->Args({1, 1, 2})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_rope_tokens<float>)->ArgNames({"half_layout", "threads"})->Args({0, 1})->Args({1, 1})->Args({0, 2})
    ->Args({1, 2})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_rope_dense_ids<float>)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_kernel<float>)->ArgNames({"dispatched"})->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_frequencies)->ArgNames({"plan"})->Args({0})->Args({1});
BENCHMARK(BM_rope_ragged<float>)->ArgNames({"seqs", "decode", "threads"})->Args({8, 0, 1})->Args({256, 1, 1})
    ->Args({8, 0, 2})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_copy<Eigen::bfloat16>)->ArgNames({"threads"})->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_rope_dense<Eigen::bfloat16>)->ArgNames({"half_layout", "check", "threads"})->Args({0, 1, 1})
    ->Args({1, 1, 1})->Args({1, 0, 1})->Args({0, 1, 2})->Args({1, 1, 2})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_kernel<Eigen::bfloat16>)->ArgNames({"dispatched"})->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_rope_ragged<Eigen::bfloat16>)->ArgNames({"seqs", "decode", "threads"})->Args({8, 0, 1})->Args({256, 1, 1})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_copy<Eigen::half>)->ArgNames({"threads"})->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_rope_dense<Eigen::half>)->ArgNames({"half_layout", "check", "threads"})->Args({0, 1, 1})->Args({1, 1, 1})
    ->Args({0, 1, 2})->Args({1, 1, 2})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_rope_tokens<Eigen::half>)->ArgNames({"half_layout", "threads"})->Args({0, 1})->Args({1, 1})
    ->Args({0, 2})->Args({1, 2})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_kernel<Eigen::half>)->ArgNames({"dispatched"})->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
// double: every phase of every position is evaluated (no anchor sharing), so the decode step is
// dominated by the cos/sin of the exact phase (64 pairs per token)
BENCHMARK(BM_copy<double>)->ArgNames({"threads"})->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_rope_dense<double>)->ArgNames({"half_layout", "check", "threads"})->Args({1, 1, 1})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_rope_ragged<double>)->ArgNames({"seqs", "decode", "threads"})->Args({8, 0, 1})->Args({256, 1, 1})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_fill<float>)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_alibi_write<float>)->ArgNames({"form", "mask"})->Args({0, 0})->Args({0, 1})->Args({2, 0})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_add_const<float>)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_alibi_add<float>)->ArgNames({"form", "mask"})->Args({0, 0})->Args({0, 1})->Args({2, 0})
    ->Unit(benchmark::kMillisecond)->UseRealTime();

// ---- Multi-axis RoPE (M-RoPE of Qwen2.5-VL) ----
//  - BM_inplace_floor<T>: the bytes of q and k [1, 32, 4096, 128] xor-ed in place with a zero the
//    compiler cannot fold (the "multiply by one" of an in-place pass without its arithmetic): the
//    same bytes read and written as the in-place rotation, the floor of an in-place pass;
//  - BM_mrope_dense<T>: rotary::apply_inplace with Qwen2.5-VL's axis frequencies (head_dim 128,
//    theta 1e6, mrope_section [16, 24, 24], half layout) at position_ids [3, 4096] of a prompt:
//    prompt 0 text only (the three axes equal), 1 text + one image of 60 x 60 merged patches (3600
//    tokens) + text (rotary::get_rope_index), the 1-D BM_rope_dense beside them;
//  - BM_mrope_tokens<T>: the same in the token-major layout [4096, 32, 128] (ragged, positions [3, tokens]).
namespace {

template <class T>
void BM_inplace_floor(benchmark::State& state) {
  const std::size_t n = H * S * D;
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint16_t>;  // T's bytes
  std::vector<U> q(n), k(n);
  for (std::size_t i = 0; i < n; ++i) q[i] = k[i] = static_cast<U>(i * 2654435761u);
  U zero = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(zero);  // an x ^ 0 the compiler cannot drop: every byte read and written
    for (std::size_t i = 0; i < n; ++i) q[i] ^= zero;
    for (std::size_t i = 0; i < n; ++i) k[i] ^= zero;
    benchmark::DoNotOptimize(q.data());
    benchmark::DoNotOptimize(k.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, 4.0 * n * sizeof(T), static_cast<double>(n * sizeof(T)));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(4 * n * sizeof(T)));
}

/// position_ids [3, S] of a prompt: text only, or text (20 tokens) + an image of 120 x 120 patches
/// (60 x 60 after the 2 x 2 merge: 3600 tokens) + text, as Qwen2.5-VL's get_rope_index gives them.
std::vector<std::int64_t> mrope_positions(bool image) {
  std::vector<std::int64_t> types(S, 0);
  std::vector<pr::vision_grid> grids;
  if (image) {
    std::fill(types.begin() + 20, types.begin() + 20 + 3600, 1);
    grids.push_back({1, 120, 120});
  }
  return pr::get_rope_index(types, 1, S, grids, {}).position_ids;
}

template <class T>
void BM_mrope_dense(benchmark::State& state) {
  const std::size_t n = H * S * D;
  auto q = filled<T>(n), k = filled<T>(n);
  const auto af = pr::mrope(D, 1e6, std::vector<std::size_t>{16, 24, 24});
  const auto pos = mrope_positions(state.range(0) != 0);
  pr::apply_options o;
  o.layout = pr::layout::half;
  for (auto _ : state) {
    pr::apply_inplace<T>(pr::dense_view<T>::contiguous(q.data(), {1, H, S, D}),
                         pr::dense_view<T>::contiguous(k.data(), {1, H, S, D}), af, pr::axis_positions(pos, 3), o);
    benchmark::DoNotOptimize(q.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, 4.0 * n * sizeof(T), static_cast<double>(n * sizeof(T)));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(4 * n * sizeof(T)));
}

template <class T>
void BM_mrope_tokens(benchmark::State& state) {
  const std::size_t n = S * H * D;
  auto q = filled<T>(n), k = filled<T>(n);
  const auto af = pr::mrope(D, 1e6, std::vector<std::size_t>{16, 24, 24});
  const auto pos = mrope_positions(state.range(0) != 0);
  pr::apply_options o;
  o.layout = pr::layout::half;
  for (auto _ : state) {
    pr::apply_ragged_inplace<T>(pr::ragged_view<T>::contiguous(q.data(), {S, H, D}),
                                pr::ragged_view<T>::contiguous(k.data(), {S, H, D}), pr::axis_positions(pos, 3), af, o);
    benchmark::DoNotOptimize(q.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, 4.0 * n * sizeof(T), static_cast<double>(n * sizeof(T)));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(4 * n * sizeof(T)));
}

}  // namespace

BENCHMARK(BM_inplace_floor<float>)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_mrope_dense<float>)->ArgNames({"image"})->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_mrope_tokens<float>)->ArgNames({"image"})->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_inplace_floor<Eigen::bfloat16>)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_mrope_dense<Eigen::bfloat16>)->ArgNames({"image"})->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_mrope_tokens<Eigen::bfloat16>)->ArgNames({"image"})->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---- Kernel levels against the in-place floor (issue 35) ----
//  - BM_rope_level<T>: rotary::apply_inplace (dense [1, 32, 4096, 128]) or apply_ragged_inplace
//    (token-major [4096, 32, 128], one sequence) of q and k, positions 0..4095, finite check on, one
//    thread, with the kernel level forced (numeric::detail::kernel_level_scope: 0 portable, 1 AVX2,
//    2 AVX-512, 3 AVX-512 + AVX512_BF16 for bf16 only); a level above the processor's is skipped
//    with an error. Their ratio to BM_inplace_floor<T> (the same bytes read and written in place)
//    in the same run is the measure of docs/performance.md.
namespace {

template <class T>
void BM_rope_level(benchmark::State& state) {
  namespace rd = posenc::numeric::detail;
  const auto level = static_cast<rd::kernel_level>(state.range(2));
  if (static_cast<int>(level) > static_cast<int>(rd::detected_kernel_level())) {
    state.SkipWithError("kernel level not available on this processor");
    return;
  }
  const rd::kernel_level_scope force(level);
  const std::size_t n = H * S * D;
  auto q = filled<T>(n), k = filled<T>(n);
  const auto f = pr::default_frequencies(D, 500000.0);
  const std::int64_t cu[2] = {0, static_cast<std::int64_t>(S)};
  const bool tokens = state.range(0) != 0;
  pr::apply_options o;
  o.layout = state.range(1) == 0 ? pr::layout::interleaved : pr::layout::half;
  o.threads = 1;
  for (auto _ : state) {
    if (tokens)
      pr::apply_ragged_inplace<T, std::int64_t>(pr::ragged_view<T>::contiguous(q.data(), {S, H, D}),
                                                pr::ragged_view<T>::contiguous(k.data(), {S, H, D}), cu, {}, f, o);
    else
      pr::apply_inplace<T>(pr::dense_view<T>::contiguous(q.data(), {1, H, S, D}),
                           pr::dense_view<T>::contiguous(k.data(), {1, H, S, D}), f, {}, o);
    benchmark::DoNotOptimize(q.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, 4.0 * n * sizeof(T), static_cast<double>(n * sizeof(T)));
}

void level_args(benchmark::internal::Benchmark* b, int top) {
  b->ArgNames({"tokens", "half_layout", "level"});
  for (int tokens : {1, 0})
    for (int half : {0, 1})
      for (int level = 0; level <= top; ++level) b->Args({tokens, half, level});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

}  // namespace

BENCHMARK(BM_inplace_floor<Eigen::half>)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_rope_level<float>)->Apply([](benchmark::internal::Benchmark* b) { level_args(b, 2); });
BENCHMARK(BM_rope_level<Eigen::half>)->Apply([](benchmark::internal::Benchmark* b) { level_args(b, 2); });
BENCHMARK(BM_rope_level<Eigen::bfloat16>)->Apply([](benchmark::internal::Benchmark* b) { level_args(b, 3); });

// ---- Decode steps from the table (issue 36) ----
//  - BM_decode<T>: a decode step of Llama 3.1's attention (q [B, 32, 1, 128], k [B, 8, 1, 128],
//    sequence b at position 5000 + 7 b, base 500000, half layout), B = 1, 8, 64: table 0, the
//    exact per-position path (rotary::apply_inplace with position_ids); table 1,
//    rotary::apply_decode_inplace gathering from a decode_cache (its table made before timing);
//    both give the same bits (tests/rotary/decode_cache.test.cpp). Bytes: q and k read and
//    written, 2 (32 + 8) 128 B sizeof(T);
//  - BM_decode_floor<T>: the in-place floor of the same bytes (x ^= 0 over q and k, as
//    BM_inplace_floor), in the same run.
namespace {

constexpr std::size_t decode_hq = 32, decode_hk = 8;

template <class T>
void BM_decode(benchmark::State& state) {
  const auto B = static_cast<std::size_t>(state.range(0));
  const bool table = state.range(1) != 0;
  auto q = filled<T>(B * decode_hq * D), k = filled<T>(B * decode_hk * D);
  const auto f = pr::default_frequencies(D, 500000.0);
  std::vector<std::int64_t> pos(B);
  for (std::size_t b = 0; b < B; ++b) pos[b] = static_cast<std::int64_t>(5000 + 7 * b);
  pr::apply_options o;
  o.layout = pr::layout::half;
  pr::decode_cache cache;
  (void)cache.table<T>(f, 0);  // the second sighting makes the table: before timing
  (void)cache.table<T>(f, pos.back());
  const auto qv = pr::dense_view<T>::contiguous(q.data(), {B, decode_hq, 1, D});
  const auto kv = pr::dense_view<T>::contiguous(k.data(), {B, decode_hk, 1, D});
  for (auto _ : state) {
    if (table)
      pr::apply_decode_inplace<T>(qv, kv, f, pos, o, cache);
    else
      pr::apply_inplace<T>(qv, kv, f, pr::position_ids(pos), o);
    benchmark::DoNotOptimize(q.data());
    benchmark::DoNotOptimize(k.data());
    benchmark::ClobberMemory();
  }
  const double bytes = 2.0 * static_cast<double>((q.size() + k.size()) * sizeof(T));
  set_counters(state, bytes, static_cast<double>(q.size() * sizeof(T)));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
}

template <class T>
void BM_decode_floor(benchmark::State& state) {
  const auto B = static_cast<std::size_t>(state.range(0));
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint16_t>;  // T's bytes
  std::vector<U> q(B * decode_hq * D), k(B * decode_hk * D);
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = static_cast<U>(i * 2654435761u);
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<U>(i * 2654435761u);
  U zero = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(zero);
    for (auto& x : q) x ^= zero;
    for (auto& x : k) x ^= zero;
    benchmark::DoNotOptimize(q.data());
    benchmark::DoNotOptimize(k.data());
    benchmark::ClobberMemory();
  }
  const double bytes = 2.0 * static_cast<double>((q.size() + k.size()) * sizeof(T));
  set_counters(state, bytes, static_cast<double>(q.size() * sizeof(T)));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
}

}  // namespace

BENCHMARK(BM_decode_floor<float>)->ArgNames({"B"})->Arg(1)->Arg(8)->Arg(64)->UseRealTime();
BENCHMARK(BM_decode<float>)->ArgNames({"B", "table"})->ArgsProduct({{1, 8, 64}, {0, 1}})->UseRealTime();
BENCHMARK(BM_decode_floor<Eigen::bfloat16>)->ArgNames({"B"})->Arg(1)->Arg(8)->Arg(64)->UseRealTime();
BENCHMARK(BM_decode<Eigen::bfloat16>)->ArgNames({"B", "table"})->ArgsProduct({{1, 8, 64}, {0, 1}})->UseRealTime();

// ---- Split-half multi-axis RoPE (HunYuan-VL's xdrope) ----
//  - BM_xdrope_dense<T>: rotary::apply_inplace of q and k [1, 32, 4096, 128] with HunYuan-VL's
//    axis frequencies (mrope_axes(..., mrope_style::xdrope), mrope_section [16, 16, 16, 16], the
//    ntk_alpha base 10000 * 1000^(128 / 126), half layout) at position_ids [4, 4096] from
//    rotary::hunyuan_rope_index: prompt 0 text only, 1 text + one image of 120 x 118 patches
//    (60 rows of 59 + a newline token merged, + begin/end: 3602 tokens) + text. Work: the bytes of
//    q and k read and written (4 n sizeof(T)), as BM_mrope_dense, whose rotation path it sits beside.
namespace {

std::vector<std::int64_t> xdrope_positions(bool image) {
  std::vector<std::int64_t> types(S, 0);
  std::vector<pr::vision_grid> grids;
  if (image) {
    std::fill(types.begin() + 20, types.begin() + 20 + 3602, 1);
    grids.push_back({1, 120, 118});
  }
  return pr::hunyuan_rope_index(types, 1, S, grids, {}, 4, 2).position_ids;
}

template <class T>
void BM_xdrope_dense(benchmark::State& state) {
  const std::size_t n = H * S * D;
  auto q = filled<T>(n), k = filled<T>(n);
  const auto af = pr::mrope_axes(pr::default_frequencies(D, 10000.0 * std::pow(1000.0, 128.0 / 126.0)),
                                 std::vector<std::size_t>{16, 16, 16, 16}, pr::mrope_style::xdrope);
  const auto pos = xdrope_positions(state.range(0) != 0);
  pr::apply_options o;
  o.layout = pr::layout::half;
  for (auto _ : state) {
    pr::apply_inplace<T>(pr::dense_view<T>::contiguous(q.data(), {1, H, S, D}),
                         pr::dense_view<T>::contiguous(k.data(), {1, H, S, D}), af, pr::axis_positions(pos, 4), o);
    benchmark::DoNotOptimize(q.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, 4.0 * n * sizeof(T), static_cast<double>(n * sizeof(T)));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(4 * n * sizeof(T)));
}

}  // namespace

BENCHMARK(BM_xdrope_dense<float>)->ArgNames({"image"})->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_xdrope_dense<Eigen::bfloat16>)->ArgNames({"image"})->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

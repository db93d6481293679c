// SPDX-License-Identifier: MIT
// Rotary position embeddings applied in place to the queries and keys of an attention layer, in
// the layouts inference engines keep them:
//
//   dense  [batch, heads, seq, head_dim]   sequence b at positions offsets[b] + s
//   ragged [tokens, heads, head_dim]       sequence b = tokens [cu_seqlens[b], cu_seqlens[b+1]),
//                                          at positions offsets[b] + (t - cu_seqlens[b])
//                                          (a KV cache appending token by token)
//
//   rotary::apply_inplace(q, k, freqs, offsets, opt)
//   rotary::apply_ragged_inplace(q, k, cu_seqlens, offsets, freqs, opt)
//   rotary::apply_inplace(q, k, freqs, rotary::position_ids(ids), opt)      ids [seq] or [batch, seq]
//   rotary::apply_ragged_inplace(q, k, rotary::position_ids(ids), freqs, opt)  ids [tokens]
//
// q and k are strided views of the caller's buffers (rotary::tensor_view: pointer, sizes, strides
// in elements; head_dim contiguous); q and k may have different head counts (grouped-query
// attention), and k may be empty (data == nullptr) to rotate q alone. Pair k of the first
// rotary_dim = 2 * freqs.inv_freq.size() columns of each head turns by the angle
// position * omega_k (see Precision below: no float32 phase error at any position), its cos and
// sin scaled by freqs.attention_factor as Hugging Face transformers does; the columns past
// rotary_dim are untouched. Layouts: interleaved
// pairs (2k, 2k+1) (GPT-J, RoFormer) or half (k, k + rotary_dim/2) (GPT-NeoX, HF LLaMA).
//
// One pass over memory: the cos/sin of a position are computed once (in chunks of positions, shared
// by every sequence of a dense batch at the same offset) and every head of q and of k at that
// position is read once and written once.
//
// Precision: the storage types float, double, Eigen::half and Eigen::bfloat16.
//  - double: each coefficient f cos, f sin is formed from the rule's exact frequency omega_k =
//    inv_freq[k] + inv_freq_lo[k] by numeric::sincos_phase (the phase n omega_k and its reduction
//    in double-double), within (0.5 + 2^-9) ulp of its exact value; each output is a*c -/+ b*s in
//    double, so |y - y_exact| <= 0.5 ulp(y) + 2^-51 (|a| + |b|) |f|, y_exact the rotation by the
//    exact angle n omega_k (with xPos, 2^-50: the scale's two more roundings).
//  - float and the half types: the angle is position * inv_freq[k] rounded once to long double,
//    reduced exactly; its cos/sin are rounded to the work type W (double for float, float for the
//    half types); each output is a*c -/+ b*s in W, rounded once to the storage type:
//    |y - y_ld| <= 0.5 ulp_T(y) + 2^-50 (|a| + |b|) |f| (float), 0.5 ulp_T(y) + 2^-22 (|a| + |b|) |f|
//    (half types), y_ld the rotation by the long double angle, itself within 2^-63 n omega_k of
//    the exact angle (inv_freq is omega_k rounded to long double, and the product one more
//    rounding; tests/rotary/exact_phase.test.cpp): invisible at float's and the half types' resolution.
// (f = attention_factor, times the xPos scale; tests/rotary/apply.test.cpp and
// tests/rotary/exact_phase.test.cpp check the bounds entry by entry.)
//
// xPos (Sun et al. 2023, "A Length-Extrapolatable Transformer"): with opt.xpos.enabled the rotation
// of pair k is fused with the scale zeta_k^((n - center) / scale_base) on q and its inverse on k,
// zeta_k = (2k / rotary_dim + gamma) / (1 + gamma), so <q_m, k_n> decays like zeta^((m - n)/B).
//
// Validation (posenc::error subclasses, messages naming the argument): shapes of q and k, a
// contiguous head_dim, an even rotary_dim <= head_dim matching the frequencies, cu_seqlens starting
// at 0, non-decreasing and ending at the token count, offsets >= 0 and offsets + length within
// opt.max_positions (when set), NaN/Inf in q or k (opt.check_finite, checked in the same pass: the
// error is thrown after the pass, the contents of q and k are then unspecified).
//
// Three headers: the options, positions and validation (posenc/rotary/apply_plan.hpp), the
// per-position coefficients (posenc/rotary/coefficients.hpp) and the passes over q and k (here).
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/core/thread_pool.hpp>
#include <posenc/numeric/pair_rotation.hpp>
#include <posenc/numeric/phase.hpp>
#include <posenc/rotary/apply_plan.hpp>
#include <posenc/rotary/coefficients.hpp>
#include <posenc/rotary/frequencies.hpp>
#include <posenc/sinusoidal/sinusoidal.hpp>

namespace posenc::rotary {

namespace detail {

// the pair-rotation kernels (numeric/pair_rotation.hpp): one position's coefficients, every head
using numeric::detail::prefetch_for_write;
using numeric::detail::rotate_heads;

/// The shared core: rotate rows r = 0..rows-1 of q (row r at q_row(r), heads of q at q_head_stride) and of k,
/// row r at position pos(r) (consecutive: pos(r) = pos(0) + r, integers), with the coefficients co
/// (made for chunks of 64 rows: exact = true when !consecutive). Rows go in chunks of 64 from the
/// first. Throws nothing.
template <class T, class W, class Qrow, class Krow, class Pos>
bool rotate_rows_with(coefficients<W>& co, std::size_t rows, Qrow q_row, std::size_t q_heads,
                      std::ptrdiff_t q_head_stride, Krow k_row, std::size_t k_heads, std::ptrdiff_t k_head_stride, Pos pos,
                      bool consecutive, const apply_plan& p) {
  constexpr std::size_t chunk = 64;
  bool bad = false;
  for (std::size_t r0 = 0; r0 < rows; r0 += chunk) {
    const std::size_t n = std::min(chunk, rows - r0);
    if (consecutive)
      co.set_run(n, pos(r0));
    else
      for (std::size_t r = 0; r < n; ++r) co.set(r, pos(r0 + r));
    for (std::size_t r = 0; r < n; ++r) {
      bad |= rotate_heads<T, W>(q_row(r0 + r), q_head_stride, q_heads, co.q(r), p.half, p.interleaved, p.check_finite);
      if (k_heads != 0)
        bad |= rotate_heads<T, W>(k_row(r0 + r), k_head_stride, k_heads, co.k(r), p.half, p.interleaved, p.check_finite);
    }
  }
  return bad;
}

/// rotate_rows_with on coefficients made for this call.
template <class T, class W, class Qrow, class Krow, class Pos>
bool rotate_rows(std::size_t rows, Qrow q_row, std::size_t q_heads, std::ptrdiff_t q_head_stride, Krow k_row,
                 std::size_t k_heads, std::ptrdiff_t k_head_stride, Pos pos, bool consecutive, const frequencies& f,
                 const apply_options& opt, const apply_plan& p) {
  coefficients<W> co(f, opt, std::min<std::size_t>(rows, 64), consecutive ? std::is_same_v<T, double> : true,
                     std::is_same_v<T, double>);
  return rotate_rows_with<T, W>(co, rows, q_row, q_heads, q_head_stride, k_row, k_heads, k_head_stride, pos,
                                consecutive, p);
}

/// A block of at most 64 ragged rows (tokens first .. first + rows - 1): at positions pos0 + r
/// (consecutive) or ids[first + r] (not consecutive).
struct row_block {
  std::size_t first;
  std::size_t rows;
  std::int64_t pos0;
  bool consecutive;
};

/// Rotate the ragged rows of `blocks` (tokens of q and k, [tokens, heads, head_dim]) on
/// min(opt.threads, blocks) threads, each with its own coefficients (made before any thread
/// starts), blocks in one contiguous range per thread. A block is rotated exactly as one thread
/// rotates it, so the result does not depend on the thread count. Returns true if a rotated value
/// is NaN or Inf.
template <class T, class W>
bool rotate_blocks(const std::vector<row_block>& blocks, const ragged_view<T>& q, const ragged_view<T>& k, bool has_k,
                   std::span<const std::int64_t> ids, const frequencies& f, const apply_options& opt,
                   const apply_plan& p, std::string_view where) {
  if (blocks.empty()) return false;
  const std::size_t parts = std::min(posenc::resolve_threads(opt.threads, where), blocks.size());
  const std::size_t rows = std::min<std::size_t>(64, q.sizes[0]);
  constexpr bool f64 = std::is_same_v<T, double>;
  std::vector<coefficients<W>> runs, isolated;
  runs.reserve(parts);
  isolated.reserve(parts);
  runs.emplace_back(f, opt, rows, f64, f64);
  if (!ids.empty()) isolated.emplace_back(f, opt, rows, true, f64);
  for (std::size_t t = 1; t < parts; ++t) {
    runs.push_back(runs.front());
    if (!ids.empty()) isolated.push_back(isolated.front());
  }
  std::vector<char> bad(parts, 0);
  const std::size_t qh = q.sizes[1], kh = has_k ? k.sizes[1] : 0;
  auto run_part = [&](std::size_t part) {
    const auto [b0, b1] = posenc::split_range(static_cast<std::ptrdiff_t>(blocks.size()), part, parts, 1);
    for (auto i = static_cast<std::size_t>(b0); i < static_cast<std::size_t>(b1); ++i) {
      const row_block& blk = blocks[i];
      const auto q_row = [&](std::size_t r) { return q.data + static_cast<std::ptrdiff_t>(blk.first + r) * q.strides[0]; };
      const auto k_row = [&](std::size_t r) { return k.data + static_cast<std::ptrdiff_t>(blk.first + r) * k.strides[0]; };
      const auto pos = [&](std::size_t r) {
        return blk.consecutive ? static_cast<wide>(blk.pos0 + static_cast<std::int64_t>(r))
                               : static_cast<wide>(ids[blk.first + r]);
      };
      bad[part] |= static_cast<char>(rotate_rows_with<T, W>(blk.consecutive ? runs[part] : isolated[part], blk.rows,
                                                            q_row, qh, q.strides[1], k_row, kh,
                                                            has_k ? k.strides[1] : 0, pos, blk.consecutive, p));
    }
  };
  posenc::parallel_chunks(parts, parts, [&](std::size_t p0, std::size_t p1) {
    for (std::size_t part = p0; part < p1; ++part) run_part(part);
  });
  return std::find(bad.begin(), bad.end(), char{1}) != bad.end();
}

/// Append the blocks of `rows` rows from token `first` in chunks of 64 (the chunks rotate_rows
/// forms): consecutive from position pos0, or at explicit positions.
inline void add_blocks(std::vector<row_block>& blocks, std::size_t first, std::size_t rows, std::int64_t pos0,
                       bool consecutive) {
  for (std::size_t r0 = 0; r0 < rows; r0 += 64)
    blocks.push_back({first + r0, std::min<std::size_t>(64, rows - r0), pos0 + static_cast<std::int64_t>(r0), consecutive});
}

/// Which coefficients a dense pass's worker holds: those of (chunk, key), none yet at -1.
struct chunk_cache {
  std::int64_t chunk = -1, key = -1;
};

/// Positions a dense pass forms coefficients for at a time (dense_pass).
inline constexpr std::size_t dense_chunk = 256;

/// The dense pass over q and k ([batch, heads, seq, head_dim]): items (chunk of dense_chunk
/// positions, sequence) split into one contiguous range per worker, worker `part` with its own
/// coefficients coeffs[part] (of dense_chunk rows or seq, whichever is fewer), which
/// prepare(co, cache, b, c, s0, n) fills for rows s0 .. s0 + n - 1 of sequence b (chunk c) unless
/// the cache says they are there. Co: q(r), k(r) the row's coefficients as rotate_heads takes them.
/// Returns true if a rotated value is NaN or Inf.
///
/// Chunks of 256 positions: their coefficients (256 KiB for head_dim 128 in double) are formed
/// once per chunk (shared by consecutive sequences at the same offset) and stay in L2. Within a
/// chunk, groups of `group` heads go through the chunk's rows together: a row's coefficients are
/// read once per group, not once per head (they outweigh the row itself: a double per float
/// entry), while each head of the group streams its rows (contiguous along seq in the usual
/// [batch, heads, seq, head_dim] layout). The heads are a sequence length apart, so the
/// hardware prefetchers do not keep up with these short streams: the rows `ahead` rows on are
/// prefetched explicitly (bench/rotary_apply.bench.cpp: about 1.9x faster in the half layout).
/// Only the order of the rows changes, not the arithmetic of an entry.
/// Threads: an item is rotated exactly as on one thread, so the result does not depend on the
/// number of workers.
template <class T, class W, class Co, class Prepare>
bool dense_pass(const dense_view<T>& q, const dense_view<T>& k, bool has_k, const apply_plan& p, std::vector<Co>& coeffs,
                Prepare prepare) {
  constexpr std::size_t chunk = dense_chunk, group = 4, ahead = 8;
  const std::size_t B = q.sizes[0], S = q.sizes[2];
  const std::size_t chunks = (S + chunk - 1) / chunk;
  const std::size_t items = chunks * B;  // <= S * B, a product already bounded by q's element count
  const std::size_t parts = coeffs.size();
  std::vector<char> bad(parts, 0);
  const std::size_t qh = q.sizes[1], kh = has_k ? k.sizes[1] : 0;
  const std::size_t row_bytes = p.head_dim * sizeof(T);
  auto run_part = [&](std::size_t part) {
    Co& co = coeffs[part];
    const auto [i0, i1] = posenc::split_range(static_cast<std::ptrdiff_t>(items), part, parts, 1);
    // heads [h0, h0 + g) of the chunk's n rows, base at the chunk's first row of head h0 of q or k
    auto rotate_group = [&](T* base, std::ptrdiff_t s_stride, std::ptrdiff_t h_stride, std::size_t g, std::size_t n,
                            bool use_k) {
      for (std::size_t r = 0; r < n; ++r) {
        if (r + ahead < n)
          for (std::size_t h = 0; h < g; ++h)
            prefetch_for_write(base + static_cast<std::ptrdiff_t>(r + ahead) * s_stride + static_cast<std::ptrdiff_t>(h) * h_stride,
                               row_bytes);
        bad[part] |= static_cast<char>(rotate_heads<T, W>(base + static_cast<std::ptrdiff_t>(r) * s_stride, h_stride, g,
                                                          use_k ? co.k(r) : co.q(r), p.half, p.interleaved,
                                                          p.check_finite));
      }
    };
    chunk_cache cache;
    for (auto i = static_cast<std::size_t>(i0); i < static_cast<std::size_t>(i1); ++i) {
      const std::size_t c = i / B, b = i % B, s0 = c * chunk;
      const std::size_t n = std::min(chunk, S - s0);
      prepare(co, cache, b, c, s0, n);
      const auto sb = static_cast<std::ptrdiff_t>(b), ss = static_cast<std::ptrdiff_t>(s0);
      for (std::size_t h = 0; h < qh; h += group)
        rotate_group(q.data + sb * q.strides[0] + static_cast<std::ptrdiff_t>(h) * q.strides[1] + ss * q.strides[2],
                     q.strides[2], q.strides[1], std::min(group, qh - h), n, false);
      for (std::size_t h = 0; h < kh; h += group)
        rotate_group(k.data + sb * k.strides[0] + static_cast<std::ptrdiff_t>(h) * k.strides[1] + ss * k.strides[2],
                     k.strides[2], k.strides[1], std::min(group, kh - h), n, true);
    }
  };
  posenc::parallel_chunks(parts, parts, [&](std::size_t p0, std::size_t p1) {
    for (std::size_t part = p0; part < p1; ++part) run_part(part);
  });
  return std::find(bad.begin(), bad.end(), char{1}) != bad.end();
}

/// The dense application with positions offsets[b] + s (offsets as int64).
template <class T>
void apply_dense(dense_view<T> q, dense_view<T> k, const frequencies& f, std::span<const std::int64_t> offsets,
                 const apply_options& opt, std::span<const std::int64_t> ids = {}) {
  static_assert(is_storage_v<T>, "rotary::apply_inplace: storage must be float, double, Eigen::half or Eigen::bfloat16");
  constexpr std::string_view where = "rotary::apply_inplace";
  apply_plan p{};
  if (ids.empty()) {
    p = validate_dense(q, k, f, offsets, opt, where);
  } else {  // explicit positions (apply_dense_ids): checked there, not seq against max_positions
    apply_options shape_opt = opt;
    shape_opt.max_positions = 0;
    p = validate_dense(q, k, f, {}, shape_opt, where);
  }
  const bool has_k = k.data != nullptr || k.elements() != 0;
  const std::size_t B = q.sizes[0], S = q.sizes[2];
  // Cost bounded by the work: a call that touches no element (zero heads, batch, seq or
  // head_dim in q, and k empty or so too) returns here, after the checks above; otherwise every
  // loop below is over (chunk, sequence) items that each rotate >= 1 row of q or k, and each
  // allocation is a chunk of coefficients per thread.
  if (q.elements() == 0 && k.elements() == 0) return;
  using W = numeric::rotation_work_t<T>;
  // Threads (opt.threads): one worker per contiguous range of (chunk, sequence) items, each with
  // its own coefficients (copied before any thread starts).
  constexpr std::size_t chunk = dense_chunk;
  const std::size_t items = (S + chunk - 1) / chunk * B;
  const std::size_t parts = std::min(posenc::resolve_threads(opt.threads, where), items);
  std::vector<coefficients<W>> coeffs;  // one per thread
  coeffs.reserve(parts);
  coeffs.emplace_back(f, opt, std::min(S, chunk), std::is_same_v<T, double>, std::is_same_v<T, double>);
  for (std::size_t t = 1; t < parts; ++t) coeffs.push_back(coeffs.front());
  const bool shared_ids = !ids.empty() && ids.size() == S;
  // the coefficients in co: (chunk, offset) for the offsets path, (chunk, sequence or -1 when
  // shared) for explicit positions
  auto prepare = [&](coefficients<W>& co, chunk_cache& have, std::size_t b, std::size_t c, std::size_t s0,
                     std::size_t n) {
    const auto ci = static_cast<std::int64_t>(c);
    if (!ids.empty()) {
      // explicit positions: [seq] (shared, formed once per chunk) or [batch, seq]; a consecutive
      // chunk as the offsets path forms it, any other position by position
      const std::int64_t key = shared_ids ? -1 : static_cast<std::int64_t>(b);
      if (ci != have.chunk || key != have.key) {
        const std::int64_t* x = ids.data() + (shared_ids ? 0 : b * S) + s0;
        bool run = true;
        for (std::size_t r = 1; r < n && run; ++r) run = x[r] == x[0] + static_cast<std::int64_t>(r);
        if (run)
          co.set_run(n, static_cast<wide>(x[0]));
        else
          for (std::size_t r = 0; r < n; ++r) co.set(r, static_cast<wide>(x[r]));
        have = {ci, key};
      }
    } else if (const std::int64_t o = offsets.empty() ? 0 : offsets[b]; ci != have.chunk || o != have.key) {
      co.set_run(n, static_cast<wide>(o + static_cast<std::int64_t>(s0)));
      have = {ci, o};
    }
  };
  if (dense_pass<T, W>(q, k, has_k, p, coeffs, prepare)) fail_non_finite(q, k, where);
}

template <class T, class I>
void apply_ragged(ragged_view<T> q, ragged_view<T> k, std::span<const I> cu_seqlens, std::span<const I> offsets,
                  const frequencies& f, const apply_options& opt) {
  static_assert(is_storage_v<T>,
                "rotary::apply_ragged_inplace: storage must be float, double, Eigen::half or Eigen::bfloat16");
  constexpr std::string_view where = "rotary::apply_ragged_inplace";
  const apply_plan p = validate_ragged(q, k, cu_seqlens, offsets, f, opt, where);
  const bool has_k = k.data != nullptr || k.elements() != 0;
  const std::size_t tokens = q.sizes[0];
  const std::size_t B = cu_seqlens.size() - 1;
  // Cost bounded by the work: nothing to touch (zero tokens, heads or head_dim in q and k), no
  // block list either (2^40 tokens of zero heads reserved 2^34 blocks, 512 GiB, before).
  if (q.elements() == 0 && k.elements() == 0) return;
  using W = numeric::rotation_work_t<T>;
  // blocks of at most 64 tokens of one sequence: at most tokens / 64 + (the non-empty sequences)
  // <= 2 * tokens of them, and tokens <= the elements of q or k (heads, head_dim >= 1 here)
  std::vector<row_block> blocks;
  blocks.reserve(std::min(checked::add(tokens / 64, B, where, "tokens / 64 + batch"), 2 * tokens));
  for (std::size_t b = 0; b < B; ++b) {  // validated: 0 <= cu_seqlens[b] <= cu_seqlens[b + 1] <= tokens
    const auto t0 = static_cast<std::size_t>(cu_seqlens[b]);
    const auto len = static_cast<std::size_t>(checked::distance(cu_seqlens[b], cu_seqlens[b + 1]));
    add_blocks(blocks, t0, len, offsets.empty() ? 0 : as_i64(offsets[b]), true);
  }
  if (rotate_blocks<T, W>(blocks, q, k, has_k, {}, f, opt, p, where)) fail_non_finite(q, k, where);
}

/// The blocks of rows [0, n) whose positions are ids[0..n): maximal runs of consecutive positions
/// as runs (the arithmetic of the offsets path for a run starting at its first position), isolated
/// positions together, each evaluated exactly; both in blocks of 64 rows from their first.
inline std::vector<row_block> position_blocks(std::span<const std::int64_t> ids) {
  const std::size_t n = ids.size();
  std::vector<row_block> blocks;
  blocks.reserve(n / 32 + 1);
  const auto continues = [&](std::size_t j) { return ids[j] == ids[j - 1] + 1; };
  std::size_t i = 0;
  while (i < n) {
    std::size_t j = i + 1;
    while (j < n && continues(j)) ++j;
    bool consecutive = true;
    if (j - i == 1) {  // isolated positions: up to the next run of two or more
      while (j < n && !(j + 1 < n && continues(j + 1))) ++j;
      consecutive = false;
    }
    add_blocks(blocks, i, j - i, ids[i], consecutive);
    i = j;
  }
  return blocks;
}

/// The dense application with explicit positions: ids [seq] (shared by every sequence) or
/// [batch, seq] row-major. A chunk of 256 positions that are consecutive is formed as the offsets
/// path forms it (so positions offsets[b] + s give bitwise the offsets path's result), others
/// position by position (exact phases).
template <class T>
void apply_dense_ids(dense_view<T> q, dense_view<T> k, const frequencies& f, std::span<const std::int64_t> ids,
                     const apply_options& opt) {
  constexpr std::string_view where = "rotary::apply_inplace";
  check_view(q, "q", where);
  const std::size_t B = q.sizes[0], S = q.sizes[2];
  // batch * seq compared without forming it (2^40 * 2^40 in a view of zero heads would wrap)
  const bool per_batch = S == 0 ? ids.empty() : ids.size() % S == 0 && ids.size() / S == B;
  if (ids.size() != S && !per_batch)
    posenc::detail::fail<shape_error>(where, "position_ids: expected seq = ", S, " or batch * seq = ",
                                      B != 0 && S > SIZE_MAX / B ? posenc::detail::concat(B, " * ", S)
                                                                 : std::to_string(B * S),
                                      " positions ([seq] or [batch, seq]), got ", ids.size());
  check_position_ids(ids, opt, where);
  if (ids.empty()) {  // no positions (seq = 0): the shapes are still checked
    apply_options shape_opt = opt;
    shape_opt.max_positions = 0;
    (void)validate_dense(q, k, f, {}, shape_opt, where);
    return;
  }
  apply_dense<T>(q, k, f, {}, opt, ids);
}

/// The ragged application with explicit positions: ids [tokens].
template <class T>
void apply_ragged_ids(ragged_view<T> q, ragged_view<T> k, std::span<const std::int64_t> ids, const frequencies& f,
                      const apply_options& opt) {
  static_assert(is_storage_v<T>,
                "rotary::apply_ragged_inplace: storage must be float, double, Eigen::half or Eigen::bfloat16");
  constexpr std::string_view where = "rotary::apply_ragged_inplace";
  const std::int64_t cu[2] = {0, static_cast<std::int64_t>(q.sizes[0])};
  apply_options shape_opt = opt;
  shape_opt.max_positions = 0;
  const apply_plan p =
      validate_ragged<T, std::int64_t>(q, k, std::span<const std::int64_t>(cu, 2), {}, f, shape_opt, where);
  const bool has_k = k.data != nullptr || k.elements() != 0;
  posenc::detail::require<shape_error>(ids.size() == q.sizes[0], where, "position_ids: expected one position per token (",
                                       q.sizes[0], "), got ", ids.size());
  check_position_ids(ids, opt, where);
  if (q.elements() == 0 && k.elements() == 0) return;  // nothing to touch (cost bounded by the work)
  using W = numeric::rotation_work_t<T>;
  if (rotate_blocks<T, W>(position_blocks(ids), q, k, has_k, ids, f, opt, p, where)) fail_non_finite(q, k, where);
}

}  // namespace detail

/// Rotate q and k ([batch, heads, seq, head_dim], heads may differ between q and k) in place:
/// sequence b at positions offsets[b] + s (offsets empty: all 0). k.data == nullptr with zero
/// sizes: q only. See the file comment for precision, xPos and validation.
template <class T>
void apply_inplace(dense_view<T> q, dense_view<T> k, const frequencies& freqs,
                   std::span<const std::int64_t> offsets = {}, const apply_options& opt = {}) {
  detail::apply_dense<T>(q, k, freqs, offsets, opt);
}

/// Rotate ragged q and k ([tokens, heads, head_dim]) in place: sequence b is tokens
/// [cu_seqlens[b], cu_seqlens[b+1]) at positions offsets[b] + (t - cu_seqlens[b]) (offsets empty:
/// all 0). I: any integer type (int32 as flash-attention's cu_seqlens, int64).
template <class T, std::integral I>
void apply_ragged_inplace(ragged_view<T> q, ragged_view<T> k, std::span<const I> cu_seqlens,
                          std::span<const I> offsets, const frequencies& freqs, const apply_options& opt = {}) {
  detail::apply_ragged<T, I>(q, k, cu_seqlens, offsets, freqs, opt);
}

/// Rotate q and k ([batch, heads, seq, head_dim]) in place at explicit positions: pos.ids holds
/// seq positions (shared by every sequence, transformers' [1, seq]) or batch * seq ([batch, seq],
/// row-major). Positions offsets[b] + s give bitwise the result of the offsets overload.
template <class T>
void apply_inplace(dense_view<T> q, dense_view<T> k, const frequencies& freqs, position_ids pos,
                   const apply_options& opt = {}) {
  detail::apply_dense_ids<T>(q, k, freqs, pos.ids, opt);
}

/// Rotate ragged q and k ([tokens, heads, head_dim]) in place, token t at position pos.ids[t]
/// (packed sequences need no cu_seqlens: each token carries its position). Runs of consecutive
/// positions are rotated as the offsets overload rotates a sequence starting at the run's first
/// position (bitwise the same when the runs are the sequences).
template <class T>
void apply_ragged_inplace(ragged_view<T> q, ragged_view<T> k, position_ids pos, const frequencies& freqs,
                          const apply_options& opt = {}) {
  detail::apply_ragged_ids<T>(q, k, pos.ids, freqs, opt);
}

}  // namespace posenc::rotary

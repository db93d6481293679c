// SPDX-License-Identifier: MIT
// Decode steps from a table: the rotary application of one new token per sequence (a KV cache
// appending token by token) with the coefficients gathered from a table made once per set of
// frequencies, instead of the exact phase of every pair of every position in every call.
//
//   rotary::apply_decode_inplace(q, k, freqs, positions, opt)          q, k [batch, heads, 1, head_dim]
//   rotary::apply_decode_ragged_inplace(q, k, positions, freqs, opt)   q, k [tokens, heads, head_dim]
//   rotary::decode_cache::global()                                     the tables, shared by every call
//   decode_cache::cos_sin<T>(freqs, max_position)                      cos/sin rows to gather (HF-style
//                                                                      rotary modules: rotary::table's bits)
//
// Exactness: row x of a table holds the coefficients f cos, f sin of every pair at position x
// formed exactly as the exact path forms those of a lone position (detail::coefficients::set:
// the exact phase, in the work type of the storage), and the rotation is the same kernel
// (numeric::rotate_heads). So a decode step from the table is bit for bit the result of
// apply_inplace / apply_ragged_inplace at the same positions (tests/rotary/decode_cache.test.cpp;
// python/tests/test_decode_cache.py through the PyTorch op). Where the table cannot give that
// result the call takes the exact path itself, with the same result:
//  - xPos (the scales depend on q or k and the position: not tabulated);
//  - a dense call with seq != 1, a ragged call whose positions hold a run (token t + 1 at
//    position ids[t] + 1: the exact path forms runs by angle addition, not lone phases) unless
//    the storage is double (every double coefficient is a lone exact phase);
//  - a position >= limits.max_positions, or a table that would pass limits.max_bytes (or
//    posenc::max_elements);
//  - the first call for a set of frequencies (tables are made for frequencies asked for twice:
//    a rule whose frequencies change with the sequence length, dynamic NTK past its original
//    length, would make a table per step that is used once).
//
// Key: the storage's coefficient kind (double; float; Eigen::half and Eigen::bfloat16, which
// share float coefficients; or a cos/sin table's element type), inv_freq, inv_freq_lo and
// attention_factor, compared by value: every
// call and every module with the same frequencies share one table (the layer types of a model
// with different rules have one table each).
//
// Memory: a table of frequencies with `half` pairs has rows = the smallest power of two >= 256 and
// > the largest position asked, capped at limits.max_positions (default 2^17 = 131072, Llama
// 3.1's context), each row 2 * half values of the work type (double for double and float
// storage, float for the half types): head_dim 128 in float, 1 KiB a row, 128 MiB at the cap.
// All tables together stay within limits.max_bytes (default 1 GiB); at most limits.max_tables
// (default 64) sets of frequencies are remembered, the least recently used forgotten first.
// clear() drops every table.
//
// Threads: a table is immutable once published; growth (by doubling) builds a new table beside
// the old (its rows copied, the new rows computed) under a lock of its own entry and publishes it
// as a std::shared_ptr, so a call reading the old table keeps it alive until it returns, and
// calls on other frequencies are not blocked while a table is built. Every member of
// decode_cache may be called from any thread at once.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/core/thread_pool.hpp>
#include <posenc/numeric/pair_rotation.hpp>
#include <posenc/rotary/apply.hpp>
#include <posenc/rotary/apply_plan.hpp>
#include <posenc/rotary/coefficients.hpp>
#include <posenc/rotary/frequencies.hpp>
#include <posenc/rotary/table.hpp>

namespace posenc::rotary {

/// The bounds of a decode_cache (see the file comment).
struct decode_cache_limits {
  std::uint64_t max_positions = std::uint64_t{1} << 17;  ///< rows of a table at most; positions >= it: exact path
  std::size_t max_bytes = std::size_t{1} << 30;           ///< all tables together
  std::size_t max_tables = 64;                            ///< sets of frequencies remembered (least recently used first out)
};

/// What a decode_cache holds now (a snapshot).
struct decode_cache_stats {
  std::size_t tables = 0;  ///< sets of frequencies with a table
  std::size_t keys = 0;    ///< sets of frequencies remembered (with a table or asked for once)
  std::size_t bytes = 0;   ///< bytes of all tables
  std::size_t builds = 0;  ///< tables built (each growth counts one) since construction or clear()
};

namespace detail {

/// Which coefficients a table holds: those the exact path forms for a storage type (apply.hpp,
/// Precision): double storage (the exact phase in double-double, in double), float (the long
/// double phase, in double), the half types (the long double phase, in float).
/// cos_sin_*: the cos/sin tables of rotary::table(f, positions) in double, float, Eigen::half,
/// Eigen::bfloat16 (decode_cache::cos_sin).
enum class coefficient_kind : int {
  float64 = 0,
  float32 = 1,
  half = 2,
  cos_sin_float64 = 3,
  cos_sin_float32 = 4,
  cos_sin_half = 5,
  cos_sin_bfloat16 = 6
};

/// The cos/sin table kind of element type T.
template <class T>
inline constexpr coefficient_kind cos_sin_kind_of =
    std::is_same_v<T, double>        ? coefficient_kind::cos_sin_float64
    : std::is_same_v<T, float>       ? coefficient_kind::cos_sin_float32
    : std::is_same_v<T, Eigen::half> ? coefficient_kind::cos_sin_half
                                     : coefficient_kind::cos_sin_bfloat16;

/// The coefficient kind of storage type T.
template <class T>
inline constexpr coefficient_kind coefficient_kind_of =
    std::is_same_v<T, double> ? coefficient_kind::float64
                              : (std::is_same_v<T, float> ? coefficient_kind::float32 : coefficient_kind::half);

/// An immutable table of coefficients: row x (x < rows()) holds cos then sin of every pair at
/// position x, times the attention factor, in work type W, as detail::coefficients<W>::set forms
/// them for a lone position.
template <class W>
class coefficient_table {
 public:
  /// Rows [0, rows) of frequencies f for coefficient kind `kind`, the first prev->rows() copied
  /// from prev (nullptr: none), the others computed on `threads` threads (resolved, >= 1).
  coefficient_table(const frequencies& f, coefficient_kind kind, std::size_t rows, const coefficient_table* prev,
                    std::size_t threads)
      : m_rows(rows), m_half(f.inv_freq.size()), m_c(rows * 2 * m_half) {
    const std::size_t width = 2 * m_half;
    std::size_t from = 0;
    if (prev != nullptr) {
      from = std::min(prev->m_rows, rows);
      std::copy_n(prev->m_c.begin(), static_cast<std::ptrdiff_t>(from * width), m_c.begin());
    }
    const bool f64 = kind == coefficient_kind::float64;
    const apply_options opt{};
    posenc::parallel_chunks(rows - from, threads, [&](std::size_t b, std::size_t e) {
      coefficients<W> co(f, opt, 1, true, f64);  // the exact path's coefficients (rotary/coefficients.hpp)
      for (std::size_t r = from + b; r < from + e; ++r) {
        co.set(0, static_cast<numeric::wide>(r));
        std::copy_n(co.q(0), width, m_c.data() + r * width);
      }
    });
  }
  /// The rows (positions 0 .. rows() - 1).
  [[nodiscard]] std::size_t rows() const noexcept { return m_rows; }
  /// The pairs of a row.
  [[nodiscard]] std::size_t half() const noexcept { return m_half; }
  /// The bytes of the coefficients.
  [[nodiscard]] std::size_t bytes() const noexcept { return m_c.size() * sizeof(W); }
  /// Row x: cos of every pair, then sin (x < rows()).
  [[nodiscard]] const W* row(std::size_t x) const noexcept { return m_c.data() + x * 2 * m_half; }

 private:
  std::size_t m_rows, m_half;
  std::vector<W> m_c;
};

/// An immutable table of cos/sin rows in T: row x (x < rows()) holds cos then sin of every pair
/// at position x, times the attention factor, as rotary::table<T>(f, positions) forms them (every
/// entry of a position evaluated from that position alone: the same bits in any batch).
template <class T>
class cos_sin_rows {
 public:
  /// Rows [0, rows) of f, the first prev->rows() copied from prev (nullptr: none), the others
  /// computed on `threads` threads (resolved, >= 1).
  cos_sin_rows(const frequencies& f, coefficient_kind, std::size_t rows, const cos_sin_rows* prev, std::size_t threads)
      : m_rows(rows), m_half(f.inv_freq.size()), m_c(rows * 2 * m_half) {
    const std::size_t width = 2 * m_half;
    std::size_t from = 0;
    if (prev != nullptr) {
      from = std::min(prev->m_rows, rows);
      std::copy_n(prev->m_c.begin(), static_cast<std::ptrdiff_t>(from * width), m_c.begin());
    }
    // rotary::table's checks (the attention factor in T's range, ...) here, on the calling
    // thread: nothing may throw on a worker of parallel_chunks
    const double first = static_cast<double>(from);
    (void)rotary::table<T>(f, std::span<const double>(&first, 1), table_layout::pairs);
    constexpr std::size_t block = 256;
    const std::size_t blocks = (rows - from + block - 1) / block;
    posenc::parallel_chunks(blocks, threads, [&](std::size_t b0, std::size_t b1) {
      std::vector<double> pos;
      for (std::size_t b = b0; b < b1; ++b) {
        const std::size_t r0 = from + b * block, n = std::min(block, rows - r0);
        pos.resize(n);
        for (std::size_t i = 0; i < n; ++i) pos[i] = static_cast<double>(r0 + i);
        const auto t = rotary::table<T>(f, pos, table_layout::pairs);
        for (std::size_t i = 0; i < n; ++i) {
          std::copy_n(t.cos.data() + i * m_half, m_half, m_c.data() + (r0 + i) * width);
          std::copy_n(t.sin.data() + i * m_half, m_half, m_c.data() + (r0 + i) * width + m_half);
        }
      }
    });
  }
  /// The rows (positions 0 .. rows() - 1).
  [[nodiscard]] std::size_t rows() const noexcept { return m_rows; }
  /// The pairs of a row.
  [[nodiscard]] std::size_t half() const noexcept { return m_half; }
  /// The bytes of the rows.
  [[nodiscard]] std::size_t bytes() const noexcept { return m_c.size() * sizeof(T); }
  /// Row x: cos of every pair, then sin (x < rows()).
  [[nodiscard]] const T* row(std::size_t x) const noexcept { return m_c.data() + x * 2 * m_half; }

 private:
  std::size_t m_rows, m_half;
  std::vector<T> m_c;
};

}  // namespace detail

/// The shared tables of decode steps, one per (coefficient kind, frequencies). Thread-safe.
class decode_cache {
 public:
  /// A cache with the given bounds.
  explicit decode_cache(decode_cache_limits limits = {}) : m_limits(limits) { check(limits, "rotary::decode_cache"); }
  decode_cache(const decode_cache&) = delete;
  decode_cache& operator=(const decode_cache&) = delete;

  /// The cache every apply_decode call uses unless given another (process-wide).
  static decode_cache& global() {
    static decode_cache cache;
    return cache;
  }

  /// Set the bounds (tables already made stay until clear(), even past new bounds).
  void set_limits(decode_cache_limits limits) {
    check(limits, "rotary::decode_cache::set_limits");
    const std::lock_guard lock(m_mutex);
    m_limits = limits;
  }
  /// The bounds.
  [[nodiscard]] decode_cache_limits limits() const {
    const std::lock_guard lock(m_mutex);
    return m_limits;
  }
  /// Forget every set of frequencies and drop the tables (a call using one keeps it until it returns).
  void clear() {
    const std::lock_guard lock(m_mutex);
    m_entries.clear();
    m_bytes = 0;
    m_builds = 0;
  }
  /// What the cache holds now.
  [[nodiscard]] decode_cache_stats stats() const {
    const std::lock_guard lock(m_mutex);
    decode_cache_stats s;
    s.keys = m_entries.size();
    for (const auto& e : m_entries) s.tables += e->table ? 1 : 0;
    s.bytes = m_bytes;
    s.builds = m_builds;
    return s;
  }

  /// The table of storage type T's coefficients (double for double and float storage, float for
  /// the half types) of frequencies f, with a row for every position 0 .. max_position, grown
  /// (doubling) or made on `threads` threads (0: all hardware threads) if needed; nullptr where
  /// the exact path must serve the call: the first time (T's kind, f) is asked for, max_position
  /// >= limits.max_positions, or a table past limits.max_bytes.
  template <class T>
  std::shared_ptr<const detail::coefficient_table<numeric::rotation_work_t<T>>> table(const frequencies& f,
                                                                                     std::int64_t max_position,
                                                                                     std::size_t threads = 1) {
    static_assert(detail::is_storage_v<T>, "decode_cache::table: storage must be float, double, Eigen::half or Eigen::bfloat16");
    return get<detail::coefficient_table<numeric::rotation_work_t<T>>>(detail::coefficient_kind_of<T>, f, max_position,
                                                                       threads, "rotary::decode_cache::table");
  }

  /// The cos/sin rows in T of frequencies f (rotary::table<T>(f, positions) bit for bit: what
  /// transformers-style rotary modules return, gathered), with a row for every position from 0
  /// to max_position; nullptr under the same conditions as table().
  template <class T>
  std::shared_ptr<const detail::cos_sin_rows<T>> cos_sin(const frequencies& f, std::int64_t max_position,
                                                        std::size_t threads = 1) {
    static_assert(detail::is_storage_v<T>, "decode_cache::cos_sin: T must be float, double, Eigen::half or Eigen::bfloat16");
    return get<detail::cos_sin_rows<T>>(detail::cos_sin_kind_of<T>, f, max_position, threads,
                                        "rotary::decode_cache::cos_sin");
  }

 private:
  /// \cond INTERNAL
  struct entry {
    detail::coefficient_kind kind;
    frequencies f;
    std::shared_ptr<const void> table;  // a Table of the kind's type (get<Table>)
    std::size_t bytes = 0;
    std::mutex grow;
    std::uint64_t last_use = 0;
  };
  /// The table of (kind, f) covering max_position, as table() and cos_sin() describe.
  template <class Table>
  std::shared_ptr<const Table> get(detail::coefficient_kind kind, const frequencies& f, std::int64_t max_position,
                                   std::size_t threads, std::string_view where) {
    using E = std::remove_cvref_t<decltype(*std::declval<const Table&>().row(0))>;
    detail::check_frequencies(f, where);
    posenc::detail::require(max_position >= 0, where, "max_position: expected a position >= 0, got ", max_position);
    threads = posenc::resolve_threads(threads, where);
    const auto top = static_cast<std::uint64_t>(max_position);
    const auto snap = [](const entry& x) { return std::static_pointer_cast<const Table>(x.table); };
    std::shared_ptr<entry> e;
    std::size_t rows = 0, elements = 0;
    {
      const std::lock_guard lock(m_mutex);
      if (top >= m_limits.max_positions) return nullptr;
      e = find(kind, f);
      if (!e) {
        remember(kind, f);
        return nullptr;
      }
      e->last_use = ++m_clock;
      auto have = snap(*e);
      if (have && have->rows() > top) return have;
      rows = static_cast<std::size_t>(std::max<std::uint64_t>(256, std::bit_ceil(top + 1)));
      rows = static_cast<std::size_t>(std::min<std::uint64_t>(rows, m_limits.max_positions));
      // rows * 2 * pairs (pairs >= 1, validated): a table past posenc::max_elements is not made either
      if (rows > posenc::max_elements / (2 * f.inv_freq.size())) return nullptr;
      elements = rows * 2 * f.inv_freq.size();
      const std::size_t add = elements * sizeof(E) - e->bytes;
      if (add > m_limits.max_bytes || m_bytes > m_limits.max_bytes - add) return nullptr;
    }
    const std::lock_guard grow(e->grow);  // one growth of this table at a time; other tables go on
    std::shared_ptr<const Table> old;
    {
      const std::lock_guard lock(m_mutex);
      old = snap(*e);
      if (old && old->rows() > top) return old;  // grown by another thread meanwhile
    }
    auto made = checked::allocate(where, "table", elements, sizeof(E), [&] {
      return std::make_shared<const Table>(f, kind, rows, old.get(), threads);
    });
    const std::lock_guard lock(m_mutex);
    const bool kept = std::find(m_entries.begin(), m_entries.end(), e) != m_entries.end();  // not cleared or forgotten
    const std::size_t add = made->bytes() - e->bytes;
    if (kept && add <= m_limits.max_bytes && m_bytes <= m_limits.max_bytes - add) {
      e->table = made;
      e->bytes = made->bytes();
      m_bytes += add;
      ++m_builds;
    }
    return made;  // exact either way; published only within the bounds
  }
  static void check(const decode_cache_limits& l, std::string_view where) {
    posenc::detail::require(l.max_tables >= 1, where, "limits.max_tables: expected >= 1, got ", l.max_tables);
    posenc::detail::require(l.max_positions <= (std::uint64_t{1} << 53), where,
                            "limits.max_positions: expected <= 2^53 (positions exact in a double), got ", l.max_positions);
  }
  static bool same(const entry& e, detail::coefficient_kind kind, const frequencies& f) {
    return e.kind == kind && e.f.attention_factor == f.attention_factor && e.f.inv_freq == f.inv_freq &&
           e.f.inv_freq_lo == f.inv_freq_lo;
  }
  std::shared_ptr<entry> find(detail::coefficient_kind kind, const frequencies& f) const {
    for (const auto& e : m_entries)
      if (same(*e, kind, f)) return e;
    return nullptr;
  }
  void remember(detail::coefficient_kind kind, const frequencies& f) {
    if (m_entries.size() >= m_limits.max_tables) {  // forget the least recently used
      auto lru = std::min_element(m_entries.begin(), m_entries.end(),
                                  [](const auto& a, const auto& b) { return a->last_use < b->last_use; });
      m_bytes -= (*lru)->bytes;
      m_entries.erase(lru);
    }
    auto e = std::make_shared<entry>();
    e->kind = kind;
    e->f = f;
    e->last_use = ++m_clock;
    m_entries.push_back(std::move(e));
  }

  mutable std::mutex m_mutex;
  decode_cache_limits m_limits;
  std::vector<std::shared_ptr<entry>> m_entries;
  std::size_t m_bytes = 0, m_builds = 0;
  std::uint64_t m_clock = 0;
  /// \endcond
};

namespace detail {

/// Run f(begin, end) over [0, n) on opt.threads threads (posenc::parallel_chunks).
struct chunked_rows {
  std::size_t threads = 1;  ///< resolved (>= 1)
  template <class F>
  void operator()(std::size_t n, F&& f) const {
    posenc::parallel_chunks(n, threads, std::forward<F>(f));
  }
};

/// Rotate rows r = 0..n-1 (q row at q_row(r), k row at k_row(r)) by table rows pos(r); for_rows
/// splits [0, n) into ranges (each rotated as one thread would: the result does not depend on
/// the split). Returns true if a rotated value is NaN or Inf.
template <class T, class W, class Qrow, class Krow, class Pos, class ForRows>
bool rotate_from_table(const coefficient_table<W>& table, std::size_t n, Qrow q_row, std::size_t q_heads,
                       std::ptrdiff_t q_head_stride, Krow k_row, std::size_t k_heads, std::ptrdiff_t k_head_stride, Pos pos,
                       const apply_plan& p, ForRows&& for_rows) {
  std::atomic<bool> bad{false};
  for_rows(n, [&](std::size_t b, std::size_t e) {
    bool local = false;
    for (std::size_t r = b; r < e; ++r) {
      const W* co = table.row(pos(r));
      local |= rotate_heads<T, W>(q_row(r), q_head_stride, q_heads, co, p.half, p.interleaved,
                                                   p.check_finite);
      if (k_heads != 0)
        local |= rotate_heads<T, W>(k_row(r), k_head_stride, k_heads, co, p.half, p.interleaved,
                                                     p.check_finite);
    }
    if (local) bad.store(true, std::memory_order_relaxed);
  });
  return bad.load();
}

/// The largest of ids (ids not empty).
inline std::int64_t largest_position(std::span<const std::int64_t> ids) { return *std::max_element(ids.begin(), ids.end()); }

/// apply_decode_inplace with the rows split by for_rows(n, f) (a caller's thread pool) and the
/// table made on build_threads threads.
template <class T, class ForRows>
void apply_decode_dense(dense_view<T> q, dense_view<T> k, const frequencies& f, std::span<const std::int64_t> ids,
                        const apply_options& opt, decode_cache& cache, std::size_t build_threads, ForRows&& for_rows) {
  constexpr std::string_view where = "rotary::apply_decode_inplace";
  const std::size_t B = q.sizes[0], S = q.sizes[2];
  if (opt.xpos.enabled || S != 1 || ids.empty() || (ids.size() != 1 && ids.size() != B)) {
    apply_dense_ids<T>(q, k, f, ids, opt);  // the exact path (and its checks, messages of apply_inplace)
    return;
  }
  apply_options shape_opt = opt;
  shape_opt.max_positions = 0;
  const apply_plan p = validate_dense(q, k, f, {}, shape_opt, where);
  check_position_ids(ids, opt, where);
  if (q.elements() == 0 && (k.data == nullptr || k.elements() == 0)) return;
  using W = numeric::rotation_work_t<T>;
  const auto table = cache.table<T>(f, largest_position(ids), build_threads);
  if (!table) {
    apply_dense_ids<T>(q, k, f, ids, opt);
    return;
  }
  const bool has_k = k.data != nullptr || k.elements() != 0;
  const bool shared = ids.size() == 1;
  const auto q_row = [&](std::size_t b) { return q.data + static_cast<std::ptrdiff_t>(b) * q.strides[0]; };
  const auto k_row = [&](std::size_t b) { return k.data + static_cast<std::ptrdiff_t>(b) * k.strides[0]; };
  const auto pos = [&](std::size_t b) { return static_cast<std::size_t>(ids[shared ? 0 : b]); };
  if (rotate_from_table<T, W>(*table, B, q_row, q.sizes[1], q.strides[1], k_row, has_k ? k.sizes[1] : 0,
                              has_k ? k.strides[1] : 0, pos, p, for_rows))
    fail_non_finite(q, k, where);
}

/// apply_decode_ragged_inplace with the rows split by for_rows(n, f) and the table made on
/// build_threads threads.
template <class T, class ForRows>
void apply_decode_ragged(ragged_view<T> q, ragged_view<T> k, std::span<const std::int64_t> ids, const frequencies& f,
                         const apply_options& opt, decode_cache& cache, std::size_t build_threads, ForRows&& for_rows) {
  constexpr std::string_view where = "rotary::apply_decode_ragged_inplace";
  bool run = false;  // a run of consecutive positions: the exact path forms it by angle addition
  if constexpr (!std::is_same_v<T, double>)
    for (std::size_t t = 1; t < ids.size() && !run; ++t) run = ids[t - 1] >= 0 && ids[t - 1] < (std::int64_t{1} << 53) && ids[t] == ids[t - 1] + 1;
  if (opt.xpos.enabled || run || ids.empty() || ids.size() != q.sizes[0]) {
    apply_ragged_ids<T>(q, k, ids, f, opt);
    return;
  }
  const std::int64_t cu[2] = {0, static_cast<std::int64_t>(q.sizes[0])};
  apply_options shape_opt = opt;
  shape_opt.max_positions = 0;
  const apply_plan p =
      validate_ragged<T, std::int64_t>(q, k, std::span<const std::int64_t>(cu, 2), {}, f, shape_opt, where);
  check_position_ids(ids, opt, where);
  if (q.elements() == 0 && (k.data == nullptr || k.elements() == 0)) return;
  using W = numeric::rotation_work_t<T>;
  const auto table = cache.table<T>(f, largest_position(ids), build_threads);
  if (!table) {
    apply_ragged_ids<T>(q, k, ids, f, opt);
    return;
  }
  const bool has_k = k.data != nullptr || k.elements() != 0;
  const auto q_row = [&](std::size_t t) { return q.data + static_cast<std::ptrdiff_t>(t) * q.strides[0]; };
  const auto k_row = [&](std::size_t t) { return k.data + static_cast<std::ptrdiff_t>(t) * k.strides[0]; };
  const auto pos = [&](std::size_t t) { return static_cast<std::size_t>(ids[t]); };
  if (rotate_from_table<T, W>(*table, q.sizes[0], q_row, q.sizes[1], q.strides[1], k_row, has_k ? k.sizes[1] : 0,
                              has_k ? k.strides[1] : 0, pos, p, for_rows))
    fail_non_finite(q, k, where);
}

}  // namespace detail

/// A decode step: rotate q and k ([batch, heads, 1, head_dim], heads may differ) in place,
/// sequence b at position positions[b] (or positions[0] for every sequence when it holds one),
/// from the table of `cache`: bitwise the result of apply_inplace(q, k, freqs,
/// position_ids(positions), opt), which serves the calls a table cannot (see the file comment).
/// opt.threads: the cores of the rotation and of a table's growth.
template <class T>
void apply_decode_inplace(dense_view<T> q, dense_view<T> k, const frequencies& freqs,
                          std::span<const std::int64_t> positions, const apply_options& opt = {},
                          decode_cache& cache = decode_cache::global()) {
  const std::size_t threads = posenc::resolve_threads(opt.threads, "rotary::apply_decode_inplace");
  detail::apply_decode_dense<T>(q, k, freqs, positions, opt, cache, threads, detail::chunked_rows{threads});
}

/// Decode steps of ragged q and k ([tokens, heads, head_dim]): token t at position positions[t],
/// from the table of `cache`: bitwise the result of apply_ragged_inplace(q, k,
/// position_ids(positions), freqs, opt), which serves the calls a table cannot.
template <class T>
void apply_decode_ragged_inplace(ragged_view<T> q, ragged_view<T> k, std::span<const std::int64_t> positions,
                                 const frequencies& freqs, const apply_options& opt = {},
                                 decode_cache& cache = decode_cache::global()) {
  const std::size_t threads = posenc::resolve_threads(opt.threads, "rotary::apply_decode_ragged_inplace");
  detail::apply_decode_ragged<T>(q, k, positions, freqs, opt, cache, threads, detail::chunked_rows{threads});
}

}  // namespace posenc::rotary

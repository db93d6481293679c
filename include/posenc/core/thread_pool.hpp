// SPDX-License-Identifier: MIT
// The library's threads: one meaning of a `threads` argument and the two ways work is spread.
//
//   threads (every options struct and set_threads in posenc): 0 = std::thread::hardware_concurrency()
//   (at least 1), n >= 1 = exactly n threads counting the calling thread, n > max_threads is an
//   invalid_argument. Defaults are 1 everywhere (no thread is started unless asked for).
//
//   posenc::resolve_threads(threads, where)   validate and map 0 to the hardware concurrency
//   posenc::worker_pool                       threads - 1 persistent workers + the caller (FLOATER's
//                                             matrix products: two jobs per stage, so workers persist)
//   posenc::pool_handle                       a worker_pool that copies as "a new pool of that size"
//   posenc::split_range(count, part, parts)   the [begin, end) of one part, 16-aligned
//   posenc::parallel_chunks(n, threads, f)    one-shot fork/join over [0, n) (sinusoidal tables)
//   posenc::openmp_thread_scope(n)            while alive, OpenMP regions this thread starts (Eigen's
//                                             products in a program built with OpenMP) use <= n threads
//   posenc::busy_flag                         refuses a second thread entering an object in use
//                                             (concurrent_use_error) instead of racing on it
//
// One thread budget: a call's `threads` is the number of cores it uses, whatever OpenMP is set
// to. In a program built with OpenMP, Eigen would start an OpenMP team inside every matrix product,
// also inside posenc's workers (threads x OMP_NUM_THREADS threads on `threads` cores). So every
// posenc thread that runs a job (the caller inside run()/parallel_chunks and every worker) sets its
// own OpenMP thread count (a per-thread ICV) to 1; the caller's count is restored when the call
// returns. Eigen::setNbThreads(n) with n > 1 set explicitly by the program takes precedence in
// Eigen over OpenMP's count (docs/thread-safety.md).
//
// Thread safety: a worker_pool / pool_handle runs one job at a time; run() must not be called
// from two threads at once on the same pool (each object that owns one is "one per thread").
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace posenc {

/// The largest thread count any posenc function accepts.
inline constexpr std::size_t max_threads = 1024;

/// Validate a `threads` argument and resolve it: 0 -> std::thread::hardware_concurrency() (at
/// least 1), 1 .. max_threads -> itself. Throws invalid_argument naming `where` otherwise.
[[nodiscard]] inline std::size_t resolve_threads(std::size_t threads, std::string_view where) {
  detail::require(threads <= max_threads, where, "threads: expected 0 (all hardware threads) .. ", max_threads,
                  ", got ", threads);
  if (threads == 0) return std::max<std::size_t>(1, std::thread::hardware_concurrency());
  return threads;
}

/// [begin, end) of part `part` of `parts` over `count` items, in chunks of `align` items (16:
/// SIMD-friendly); every item is in exactly one part, parts may be empty.
[[nodiscard]] inline std::pair<std::ptrdiff_t, std::ptrdiff_t> split_range(std::ptrdiff_t count, std::size_t part,
                                                                           std::size_t parts,
                                                                           std::ptrdiff_t align = 16) {
  // checked here (a public helper): parts = 0 or align = 0 would divide by zero, a count beyond
  // max_elements or a part beyond max_threads could overflow chunks * (part + 1)
  constexpr std::string_view where = "split_range";
  detail::require(parts >= 1 && parts <= max_threads, where, "parts: expected 1 .. ", max_threads, ", got ", parts);
  detail::require(part < parts, where, "part: expected part < parts = ", parts, ", got ", part);
  detail::require(align >= 1 && static_cast<std::size_t>(align) <= max_extent, where, "align: expected 1 .. ", max_extent,
                  ", got ", align);
  detail::require(count >= 0 && static_cast<std::size_t>(count) <= max_elements, where,
                  "count: expected 0 .. posenc::max_elements = ", max_elements, ", got ", count);
  const std::ptrdiff_t chunks = (count + align - 1) / align;
  const auto P = static_cast<std::ptrdiff_t>(part), N = static_cast<std::ptrdiff_t>(parts);
  const std::ptrdiff_t b = std::min(count, (chunks * P / N) * align), e = std::min(count, (chunks * (P + 1) / N) * align);
  return {b, e};
}

/// While alive, OpenMP parallel regions started by the constructing thread (Eigen's matrix
/// products in a program built with OpenMP) run on at most `threads` threads: the thread's nthreads
/// ICV is set to `threads` (default 1) and the previous value is restored on destruction. Without
/// OpenMP (_OPENMP not defined in the including translation unit) it does nothing. Destroy it on
/// the thread that made it. `threads` is already resolved (>= 1; see resolve_threads).
class openmp_thread_scope {
 public:
#if defined(_OPENMP)
  explicit openmp_thread_scope(std::size_t threads = 1) noexcept : m_saved(omp_get_max_threads()) {
    omp_set_num_threads(static_cast<int>(std::clamp<std::size_t>(threads, 1, max_threads)));
  }
  ~openmp_thread_scope() { omp_set_num_threads(m_saved); }
#else
  explicit openmp_thread_scope(std::size_t = 1) noexcept {}
#endif
  openmp_thread_scope(const openmp_thread_scope&) = delete;
  openmp_thread_scope& operator=(const openmp_thread_scope&) = delete;

#if defined(_OPENMP)
 private:
  int m_saved;
#endif
};

namespace detail {
/// A posenc worker thread: its OpenMP regions run on one thread for the thread's whole life.
inline void serial_openmp_thread() noexcept {
#if defined(_OPENMP)
  omp_set_num_threads(1);
#endif
}

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
}  // namespace detail

/// threads - 1 persistent workers plus the calling thread. run(f) calls f(part, parts) exactly
/// once for every part in [0, parts) and returns when all are done. Part p is meant for thread p
/// (so each thread keeps touching the same rows of the weights: they stay in its cache), but a
/// part not yet started is taken over by whichever thread is free: on a loaded machine a
/// descheduled worker never holds the caller up, the caller then simply does the work itself.
/// Workers spin briefly between jobs (FLOATER posts two per stage), then sleep on an atomic wait.
/// `threads` is already resolved (>= 1; see resolve_threads).
class worker_pool {
 public:
  explicit worker_pool(std::size_t threads)
      : m_parts(std::max<std::size_t>(checked_threads(threads), 1)), m_claim(std::make_unique<std::atomic<std::uint64_t>[]>(m_parts)) {
    for (std::size_t i = 0; i < m_parts; ++i) m_claim[i].store(0);
    for (std::size_t i = 1; i < m_parts; ++i) m_workers.emplace_back([this, i] { loop(i); });
  }
  /// threads <= max_threads (0 and 1: no worker), else invalid_argument naming threads.
  static std::size_t checked_threads(std::size_t threads) {
    detail::require(threads <= max_threads, "worker_pool", "threads: expected 0 .. ", max_threads, ", got ", threads);
    return threads;
  }
  worker_pool(const worker_pool&) = delete;
  worker_pool& operator=(const worker_pool&) = delete;
  ~worker_pool() {
    m_stop.store(true);
    m_gen.fetch_add(1);
    m_gen.notify_all();
    for (auto& w : m_workers) w.join();
  }
  /// Number of parts of every job (= threads).
  [[nodiscard]] std::size_t size() const noexcept { return m_parts; }

  template <class F>
  void run(F& f) {
    const openmp_thread_scope one_budget;
    if (m_parts == 1) {
      f(std::size_t{0}, std::size_t{1});
      return;
    }
    m_ctx = &f;
    m_fn = [](void* c, std::size_t p, std::size_t n) { (*static_cast<F*>(c))(p, n); };
    m_done.store(0, std::memory_order_relaxed);
    const std::uint64_t g = ++m_job;
    m_gen.store(g);  // publishes m_ctx, m_fn (seq_cst store: release)
    if (m_sleepers.load() > 0) m_gen.notify_all();
    for (std::size_t p = 0; p < m_parts; ++p) try_run(p, g);
    std::uint32_t spins = 0;
    while (m_done.load(std::memory_order_acquire) != m_parts) {
      if (++spins < 2048) detail::cpu_relax();
      else std::this_thread::yield();
    }
  }

 private:
  bool try_run(std::size_t p, std::uint64_t g) {
    std::uint64_t old = m_claim[p].load(std::memory_order_acquire);
    if (old >= g || !m_claim[p].compare_exchange_strong(old, g)) return false;
    m_fn(m_ctx, p, m_parts);
    m_done.fetch_add(1, std::memory_order_acq_rel);
    return true;
  }

  void loop(std::size_t id) {
    detail::serial_openmp_thread();
    std::uint64_t seen = 0;
    for (;;) {
      std::uint64_t g = m_gen.load(std::memory_order_acquire);
      if (g == seen) {
        const auto t0 = std::chrono::steady_clock::now();
        std::uint32_t spins = 0;
        while ((g = m_gen.load(std::memory_order_acquire)) == seen) {
          detail::cpu_relax();
          if ((++spins & 255u) == 0 && std::chrono::steady_clock::now() - t0 > std::chrono::microseconds(200)) {
            m_sleepers.fetch_add(1);
            m_gen.wait(seen);
            m_sleepers.fetch_sub(1);
            spins = 0;
          }
        }
      }
      seen = g;
      if (m_stop.load()) return;
      for (std::size_t k = 0; k < m_parts; ++k) try_run((id + k) % m_parts, g);
    }
  }

  std::size_t m_parts;
  std::unique_ptr<std::atomic<std::uint64_t>[]> m_claim;  // last job that claimed each part
  std::vector<std::thread> m_workers;
  std::atomic<std::uint64_t> m_gen{0};
  std::uint64_t m_job = 0;
  std::atomic<std::size_t> m_done{0};
  std::atomic<int> m_sleepers{0};
  std::atomic<bool> m_stop{false};
  void* m_ctx = nullptr;
  void (*m_fn)(void*, std::size_t, std::size_t) = nullptr;
};

/// A worker_pool that copies as "a new pool of the same size" (so objects holding one stay
/// copyable); 1 thread holds no pool at all. `threads` is already resolved (>= 1).
class pool_handle {
 public:
  explicit pool_handle(std::size_t threads = 1) { reset(threads); }
  pool_handle(const pool_handle& o) { reset(o.size()); }
  pool_handle& operator=(const pool_handle& o) {
    if (this != &o) reset(o.size());
    return *this;
  }
  pool_handle(pool_handle&&) noexcept = default;
  pool_handle& operator=(pool_handle&&) noexcept = default;
  void reset(std::size_t threads) { m_pool = threads > 1 ? std::make_unique<worker_pool>(threads) : nullptr; }
  [[nodiscard]] std::size_t size() const noexcept { return m_pool ? m_pool->size() : 1; }
  template <class F>
  void run(F& f) {
    if (m_pool) {
      m_pool->run(f);
    } else {
      const openmp_thread_scope one_budget;
      f(std::size_t{0}, std::size_t{1});
    }
  }

 private:
  std::unique_ptr<worker_pool> m_pool;
};

/// The "one thread at a time" rule of an object that owns a workspace or a pool (a
/// toeplitz::product_plan), enforced: every mutating call holds the flag for its duration
/// (enter() returns a guard that releases it), and a call that finds it held throws
/// concurrent_use_error naming the call, before it reads or writes anything else of the object;
/// the call that holds it is not disturbed. A second thread therefore fails fast instead of
/// racing on the buffers (and, with a worker pool, waiting forever on a job that is not its own).
/// The flag is one std::atomic<bool>: taken by exchange(acquire), released by store(release), so
/// consecutive calls from different threads are ordered (no data race for ThreadSanitizer) and
/// the refused call touches only the atomic. Copies and moves of the owner get a free flag (the
/// flag belongs to one object, not to its value). Not a lock: nothing waits.
class busy_flag {
 public:
  busy_flag() noexcept = default;
  busy_flag(const busy_flag&) noexcept {}
  busy_flag& operator=(const busy_flag&) noexcept { return *this; }
  ~busy_flag() = default;

  /// Releases the flag when it goes out of scope (also when the call throws).
  class guard {
   public:
    explicit guard(std::atomic<bool>& f) noexcept : m_flag(&f) {}
    guard(const guard&) = delete;
    guard& operator=(const guard&) = delete;
    ~guard() { m_flag->store(false, std::memory_order_release); }

   private:
    std::atomic<bool>* m_flag;
  };

  /// Take the flag for the caller's duration, or throw concurrent_use_error ("<where>: ... is in
  /// use by another thread") when another call holds it.
  [[nodiscard]] guard enter(std::string_view where) {
    if (m_busy.exchange(true, std::memory_order_acquire))
      detail::fail<concurrent_use_error>(where, "the object is in use by another call (a call from another thread is "
                                                "still running in it): use one object per thread, or wait for that "
                                                "call to return");
    return guard(m_busy);
  }
  /// Whether a call holds the flag now (a snapshot, for tests).
  [[nodiscard]] bool busy() const noexcept { return m_busy.load(std::memory_order_acquire); }

 private:
  std::atomic<bool> m_busy{false};
};

/// Run f(begin, end) over [0, n) split into contiguous chunks on min(threads, n) threads started
/// for this call (the calling thread takes the first chunk). `threads` is already resolved
/// (>= 1); 1 or n <= 1: one call, no thread.
template <class F>
void parallel_chunks(std::size_t n, std::size_t threads, F&& f) {
  detail::require(threads <= max_threads, "parallel_chunks", "threads: expected 0 .. ", max_threads, ", got ", threads);
  const std::size_t t = std::min<std::size_t>(std::max<std::size_t>(threads, 1), n);
  const openmp_thread_scope one_budget;
  if (t <= 1) {
    f(std::size_t{0}, n);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(t - 1);
  const std::size_t chunk = (n + t - 1) / t;
  for (std::size_t j = 1; j < t; ++j) {
    const std::size_t b = std::min(n, j * chunk), e = std::min(n, (j + 1) * chunk);
    if (b < e)
      pool.emplace_back([&f, b, e] {
        detail::serial_openmp_thread();
        f(b, e);
      });
  }
  f(std::size_t{0}, std::min(n, chunk));
  for (auto& th : pool) th.join();
}

}  // namespace posenc

// SPDX-License-Identifier: MIT
// `plan`: a complex FFT of one size n. The plan chooses its strategy once, when it is made
// (fft/strategies.hpp), and holds it as a value: a std::variant of the four strategy types.
// Part of <posenc/numeric/fft.hpp>.
#pragma once

#include <complex>
#include <concepts>
#include <cstddef>
#include <span>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/numeric/fft/common.hpp>
#include <posenc/numeric/fft/lanes.hpp>
#include <posenc/numeric/fft/stockham.hpp>
#include <posenc/numeric/fft/strategies.hpp>
#include <posenc/numeric/fft/two_pass.hpp>

namespace posenc::fft {

/// A complex FFT of one size n >= 1. It owns its twiddles and work buffers, so transforms do
/// not allocate; a plan is therefore not safe to use from two threads at once (use one per thread).
/// Thread safety: one per thread (docs/thread-safety.md).
template <std::floating_point T>
class plan {
  using lanes = detail::native_lanes<T>;
  using two_pass_t = detail::two_pass<T, typename lanes::type, lanes::width>;
  using stockham_t = detail::stockham_strategy<T>;
  using two_pass_strategy_t = detail::two_pass_strategy<T, typename lanes::type, lanes::width>;
  using four_step_t = detail::four_step_strategy<T>;
  using bluestein_t = detail::bluestein_strategy<T>;
  /// The strategy, chosen once by choose(n).
  using strategy = std::variant<stockham_t, two_pass_strategy_t, four_step_t, bluestein_t>;

 public:
  explicit plan(std::size_t n) : m_n(n), m_s(make(n)) {
    if (std::holds_alternative<stockham_t>(m_s) || std::holds_alternative<four_step_t>(m_s)) split_copies();
  }

  /// A copy is a new plan of the same size (its twiddles computed again, not copied).
  plan(const plan& o) : plan(o.m_n) {}
  plan& operator=(const plan& o) {
    if (this != &o) *this = plan(o.m_n);
    return *this;
  }
  /// A moved-from plan is a plan of size 0: its transforms touch no element.
  plan(plan&& o) noexcept
      : m_n(std::exchange(o.m_n, 0)), m_s(std::move(o.m_s)), m_ur(std::move(o.m_ur)), m_ui(std::move(o.m_ui)) {
    o.reset();
  }
  plan& operator=(plan&& o) noexcept {
    if (this != &o) {
      m_n = std::exchange(o.m_n, 0);
      m_s = std::move(o.m_s);
      m_ur = std::move(o.m_ur);
      m_ui = std::move(o.m_ui);
      o.reset();
    }
    return *this;
  }
  ~plan() = default;

  [[nodiscard]] std::size_t size() const noexcept { return m_n; }
  /// Radices of the Stockham stages (empty when the plan uses Bluestein or the four-step
  /// decomposition, or n = 1); for the two-pass decomposition, those of n1 then those of n2.
  [[nodiscard]] const std::vector<unsigned>& factors() const noexcept {
    return std::visit([](const auto& s) -> const std::vector<unsigned>& { return s.factors(); }, m_s);
  }
  /// True when n = n1 n2 runs as two passes of lane-pack transforms (n1, n2 multiples of the
  /// SIMD lane width W >= 2 with n1, n2 >= 2 W, prime factors <= 13; see detail::two_pass).
  [[nodiscard]] bool uses_two_pass() const noexcept { return std::holds_alternative<two_pass_strategy_t>(m_s); }
  /// The SIMD lane width of this build for T (1: no lanes, e.g. long double).
  [[nodiscard]] static constexpr std::size_t lane_width() noexcept { return lanes::width; }
  [[nodiscard]] bool uses_bluestein() const noexcept { return std::holds_alternative<bluestein_t>(m_s); }
  /// True for n >= 4096 without a prime factor > 13, with a power-of-two factor >= 1024 and no
  /// two-pass split: n = n1 n2 by Bailey's four-step algorithm.
  [[nodiscard]] bool uses_four_step() const noexcept { return std::holds_alternative<four_step_t>(m_s); }

  /// In-place forward transform of the split array (re[0..n), im[0..n)). A null array throws
  /// invalid_argument naming it. A NaN or Inf element gives NaN/Inf bins, as IEEE arithmetic does.
  void forward(T* re, T* im) {
    detail::require_arrays("fft::plan::forward", re, "re", im, "im");
    run(re, im);
  }
  /// In-place unnormalised inverse transform (sign +1): the forward transform with re and im swapped.
  void inverse(T* re, T* im) {
    detail::require_arrays("fft::plan::inverse", re, "re", im, "im");
    run(im, re);
  }

  /// Interleaved complex arrays (in == out allowed). Copies through the plan's split buffers.
  void forward(const std::complex<T>* in, std::complex<T>* out) {
    detail::require_arrays("fft::plan::forward", in, "in", out, "out");
    interleaved(in, out, false);
  }
  void inverse(const std::complex<T>* in, std::complex<T>* out) {
    detail::require_arrays("fft::plan::inverse", in, "in", out, "out");
    interleaved(in, out, true);
  }

  /// Convenience (allocates the result).
  [[nodiscard]] std::vector<std::complex<T>> forward(std::span<const std::complex<T>> x) {
    check_size(x.size(), "fft::plan::forward");
    std::vector<std::complex<T>> y(m_n);
    interleaved(x.data(), y.data(), false);
    return y;
  }
  [[nodiscard]] std::vector<std::complex<T>> inverse(std::span<const std::complex<T>> x) {
    check_size(x.size(), "fft::plan::inverse");
    std::vector<std::complex<T>> y(m_n);
    interleaved(x.data(), y.data(), true);
    return y;
  }

 private:
  static_assert(std::is_nothrow_move_constructible_v<strategy> && std::is_nothrow_move_assignable_v<strategy>,
                "a plan moves without throwing: every strategy must");

  // The size limits of the strategies: a two-pass split is taken from two_pass_min on (every size
  // by default), the four-step decomposition from four_step_min on.
#ifdef POSENC_FFT_FOUR_STEP_MIN
  static constexpr std::size_t four_step_min = POSENC_FFT_FOUR_STEP_MIN;
#else
  static constexpr std::size_t four_step_min = 4096;
#endif
#ifdef POSENC_FFT_TWO_PASS_MIN
  static constexpr std::size_t two_pass_min = POSENC_FFT_TWO_PASS_MIN;
#else
  static constexpr std::size_t two_pass_min = 1;  // every size (1, not 0: no always-true comparison)
#endif

  /// The checked size, then the strategy (a failed allocation is an allocation_error).
  static strategy make(std::size_t n) {
    posenc::detail::require(n >= 1, "fft::plan", "size n must be >= 1, got ", n);
    (void)checked::extent(n, "fft::plan", "size n");
    return checked::allocate("fft::plan", "size n", n, 4 * sizeof(T), [&] { return choose(n); });
  }

  static strategy choose(std::size_t n) {
    std::vector<unsigned> radices;
    if (!detail::stockham_radices(n, radices)) return strategy(std::in_place_type<bluestein_t>, n);
    // Two-pass with SIMD lanes whenever n splits into two multiples of the lane width (>= 2 W
    // each): every butterfly is then a full-width lane-pack operation.
    if (const auto [n1, n2] = two_pass_t::split(n); n1 != 0 && n >= two_pass_min)
      return strategy(std::in_place_type<two_pass_strategy_t>, n1, n2);
    // Four-step pays off when the rows are dominated by radix-8/4 passes: measured on powers of
    // two and 2^a * 3 or 5 with 2^a >= 1024; sizes rich in 3s and 5s (6000, 30000) run faster as
    // one Stockham pass sequence.
    if (n >= four_step_min && (n & (~n + 1)) >= 1024) return strategy(std::in_place_type<four_step_t>, n);
    return strategy(std::in_place_type<stockham_t>, n, radices);
  }

  void check_size(std::size_t got, const char* where) const {
    posenc::detail::require<shape_error>(got == m_n, where, "input length must equal the plan size ", m_n,
                                         ", got ", got);
  }

  /// The split copies of the interleaved overloads: made with the plan for the Stockham and
  /// four-step strategies, on the first interleaved call for the others (a failed allocation is
  /// an allocation_error).
  void split_copies() {
    checked::allocate("fft::plan", "size n", m_n, 2 * sizeof(T), [&] {
      m_ur.assign(m_n, T(0));
      m_ui.assign(m_n, T(0));
    });
  }

  void interleaved(const std::complex<T>* in, std::complex<T>* out, bool inv) {
    if (m_ur.size() != m_n) split_copies();
    for (std::size_t j = 0; j < m_n; ++j) {
      m_ur[j] = in[j].real();
      m_ui[j] = in[j].imag();
    }
    if (inv) run(m_ui.data(), m_ur.data());
    else run(m_ur.data(), m_ui.data());
    for (std::size_t j = 0; j < m_n; ++j) out[j] = std::complex<T>(m_ur[j], m_ui[j]);
  }

  void run(T* re, T* im) {
    std::visit([&](auto& s) { s.run(re, im); }, m_s);
  }

  /// The state of a moved-from plan: size 0, an empty Stockham sequence (no allocation).
  void reset() noexcept {
    m_s.template emplace<stockham_t>();
    m_ur.clear();
    m_ui.clear();
  }

  std::size_t m_n;
  strategy m_s;
  std::vector<T> m_ur, m_ui;  // split copies for the interleaved interface
};

}  // namespace posenc::fft

// SPDX-License-Identifier: MIT
// The cached FLOATER table of an encoder: rows L x (N d), row i = the N block states at t_i
// (block n at columns n d .. n d + d - 1), grown geometrically as positions are added.
//   posenc::floater::table_cache<T>   reset to p(0), reserve, store a row, read a block's table or
//                                     a row back as an N x d state (a checkpoint of backprop)
// Sizes are validated by the encoder's public members (floater/options.hpp: check_length).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstddef>
#include <string_view>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/tensor/table.hpp>

namespace posenc::floater::detail {

template <class T>
class table_cache {
 public:
  /// Positions cached (row 0 is p(0)).
  [[nodiscard]] std::size_t size() const noexcept { return m_len; }
  /// The cached rows: size() x (N d).
  [[nodiscard]] auto rows() const { return m_rows.topRows(static_cast<Eigen::Index>(m_len)); }

  /// Drop every position but p(0) (N x d), keeping the allocation when its width fits.
  void reset(const table<T>& p0) {
    const Eigen::Index nd = p0.size();
    m_rows.resize(std::max<Eigen::Index>(m_rows.rows(), 1), nd);
    m_rows.row(0) = flat(p0);
    m_len = 1;
  }

  /// Room for L rows (L validated by the caller): the rows grow geometrically (at least doubling,
  /// within posenc::max_elements), so growing one position at a time copies O(L) rows in all.
  /// allocation_error (naming `where`) when the memory cannot be had; the cache is then unchanged.
  void reserve(std::size_t L, std::string_view where) {
    const auto need = static_cast<Eigen::Index>(L);
    if (m_rows.rows() >= need) return;
    const auto cols = static_cast<std::size_t>(m_rows.cols());
    const std::size_t most = max_elements / std::max<std::size_t>(cols, 1);  // rows the bound allows
    const std::size_t cap = std::max<std::size_t>(L, std::min(2 * static_cast<std::size_t>(m_rows.rows()), most));
    auto grown = posenc::detail::allocate_matrix<matrix<T>>(cap, cols, where, "L", "blocks * d");
    grown.topRows(static_cast<Eigen::Index>(m_len)) = m_rows.topRows(static_cast<Eigen::Index>(m_len));
    m_rows.swap(grown);
  }

  /// Row i = y (N x d, i <= size(), reserved); the cache then holds positions 0 .. i.
  void store(std::size_t i, const table<T>& y) {
    m_rows.row(static_cast<Eigen::Index>(i)) = flat(y);
    m_len = i + 1;
  }

  /// Position i as an N x d state (a checkpoint), written into `out` (N x d, or a block of it).
  template <class Out>
  void read(std::size_t i, Eigen::Index N, Out&& out) const {
    out = Eigen::Map<const table<T>>(m_rows.row(static_cast<Eigen::Index>(i)).data(), N, m_rows.cols() / N);
  }
  /// Position i as a new N x d state.
  [[nodiscard]] table<T> checkpoint(std::size_t i, Eigen::Index N) const {
    table<T> y(N, m_rows.cols() / N);
    read(i, N, y);
    return y;
  }
  /// The table of block n (of width d): positions 0 .. L-1 (L <= size()), L x d.
  [[nodiscard]] table<T> block(std::size_t n, std::size_t L, Eigen::Index d) const {
    return m_rows.block(0, static_cast<Eigen::Index>(n) * d, static_cast<Eigen::Index>(L), d);
  }

 private:
  static auto flat(const table<T>& y) { return Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>>(y.data(), y.size()); }

  matrix<T> m_rows;
  std::size_t m_len = 0;
};

}  // namespace posenc::floater::detail

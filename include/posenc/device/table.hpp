// SPDX-License-Identifier: MIT
// Device-resident position tables and the explicit transfers between host and device.
//
//   posenc::device_table<T>            rows x cols, row-major, in a thrust::device_vector<T>
//   posenc::to_device(host matrix)     host -> device (a copy; the only way in)
//   posenc::to_host(device_table)      device -> host posenc::table<T> (a copy; the only way out)
//   posenc::copy_to_host(dev, host)    the same into a caller-owned table (no allocation when
//                                      the shape already fits)
//
// Results of the device encodings (posenc/device/*.hpp) stay on the device until the
// caller asks for them: nothing in the device API copies back implicitly. Allocation failures
// throw posenc::device_error with the size requested.
#pragma once

#include <thrust/copy.h>
#include <thrust/device_vector.h>

#include <Eigen/Core>
#include <cstddef>
#include <limits>
#include <string_view>
#include <type_traits>

#include <posenc/adapters/thrust.hpp>
#include <posenc/core/error.hpp>
#include <posenc/tensor/table.hpp>

namespace posenc {

namespace detail {
/// rows * cols, or device_error if it overflows.
inline std::size_t checked_elements(std::size_t rows, std::size_t cols, std::string_view where) {
  require<device_error>(cols == 0 || rows <= std::numeric_limits<std::size_t>::max() / cols, where, "a ", rows, " x ",
                        cols, " table does not fit in the address space");
  return rows * cols;
}

/// A device_vector holding n elements (contents unspecified), allocation failures as device_error.
template <class T>
::thrust::device_vector<T> device_buffer(std::size_t n, std::string_view where) {
  ::thrust::device_vector<T> v;
  guarded_resize(v, n, where);
  return v;
}

/// A device copy of n host values at p.
template <class T, class U>
::thrust::device_vector<T> upload(const U* p, std::size_t n, std::string_view where) {
  ::thrust::device_vector<T> v = device_buffer<T>(n, where);
  if constexpr (std::is_same_v<T, U>) {
    if (n != 0) ::thrust::copy(p, p + n, v.begin());
  } else {
    ::thrust::host_vector<T> h(p, p + n);
    ::thrust::copy(h.begin(), h.end(), v.begin());
  }
  return v;
}
}  // namespace detail

/// A row-major rows x cols table in device memory (row i = position i, as posenc::table<T>).
template <class T>
class device_table {
 public:
  using value_type = T;
  using vector_type = ::thrust::device_vector<T>;

  device_table() = default;
  /// Allocates rows x cols (contents unspecified). Throws device_error if the allocation fails.
  device_table(std::size_t rows, std::size_t cols) { resize(rows, cols); }

  /// Reshape; reallocates only when the number of elements changes. Contents unspecified.
  void resize(std::size_t rows, std::size_t cols) {
    constexpr std::string_view where = "device_table::resize";
    detail::guarded_resize(m_values, detail::checked_elements(rows, cols, where), where);
    m_rows = rows;
    m_cols = cols;
  }

  [[nodiscard]] std::size_t rows() const noexcept { return m_rows; }
  [[nodiscard]] std::size_t cols() const noexcept { return m_cols; }
  [[nodiscard]] std::size_t size() const noexcept { return m_values.size(); }
  /// The row-major values (element (i, j) at i * cols() + j).
  [[nodiscard]] vector_type& values() noexcept { return m_values; }
  [[nodiscard]] const vector_type& values() const noexcept { return m_values; }
  /// Raw device pointer to element (0, 0) (for kernels; not dereferenceable on the host under CUDA).
  [[nodiscard]] T* data() noexcept { return posenc::detail::raw_data(m_values); }
  [[nodiscard]] const T* data() const noexcept { return posenc::detail::raw_data(m_values); }

 private:
  vector_type m_values;
  std::size_t m_rows = 0, m_cols = 0;
};

/// Copy a host matrix (any Eigen dense expression, any storage order) to the device, row-major.
template <class Derived>
[[nodiscard]] device_table<typename Derived::Scalar> to_device(const Eigen::DenseBase<Derived>& host) {
  using T = typename Derived::Scalar;
  const posenc::table<T> rm = host.derived();  // row-major, evaluated
  device_table<T> out(static_cast<std::size_t>(rm.rows()), static_cast<std::size_t>(rm.cols()));
  if (out.size() != 0) ::thrust::copy(rm.data(), rm.data() + rm.size(), out.values().begin());
  return out;
}

/// Copy a device table into a caller-owned host table (resized if its shape differs).
template <class T>
void copy_to_host(const device_table<T>& dev, posenc::table<T>& host) {
  host.resize(static_cast<Eigen::Index>(dev.rows()), static_cast<Eigen::Index>(dev.cols()));
  if (dev.size() != 0) ::thrust::copy(dev.values().begin(), dev.values().end(), host.data());
}

/// The device table's values on the host, as a posenc::table<T>.
template <class T>
[[nodiscard]] posenc::table<T> to_host(const device_table<T>& dev) {
  posenc::table<T> host;
  copy_to_host(dev, host);
  return host;
}

}  // namespace posenc

// SPDX-License-Identifier: MIT
// TUPE, the positional term computed once per sequence length and shared by every layer
// (positional_bias_cache), on the forward of tupe/forward.hpp.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/core/thread_pool.hpp>
#include <posenc/tupe/relative_bucket.hpp>
#include <posenc/tensor/table.hpp>
#include <posenc/tupe/forward.hpp>

namespace posenc::tupe {

/// The positional term computed once per sequence length and shared by every layer: get(n)
/// computes it on the first request for n and afterwards returns the same object, as a
/// std::shared_ptr<const head_stack<T>>: a snapshot that keeps its storage alive for as long as
/// the caller holds it, whatever clear() or set_parameters() do meanwhile (they only drop the
/// cache's own reference). params() is a snapshot in the same way.
/// Thread safety: shareable. get(), params(), max_length(), computations(), clear() and
/// set_parameters() may be called from several threads at once (one mutex; the counter and the
/// length are atomic); the snapshots they hand out are immutable and stay valid.
template <class T>
class positional_bias_cache {
 public:
  /// Validates cfg and params (all rows of params.pos) once.
  positional_bias_cache(const config& cfg, parameters<T> params)
      : m_cfg(cfg), m_params(std::make_shared<const parameters<T>>(std::move(params))) {
    validate_table(m_cfg, *m_params, "tupe::positional_bias_cache");
    m_max_length.store(m_params->pos.rows() - m_cfg.first_row(), std::memory_order_relaxed);
  }

  /// The [H, n, n] positional term for length n; throws if n < 1 or n > max_length().
  [[nodiscard]] std::shared_ptr<const head_stack<T>> get(Index n) {
    std::lock_guard<std::mutex> lock(m_mutex);  // before reading the parameters set_parameters replaces
    const Index max_len = m_params->pos.rows() - m_cfg.first_row();
    posenc::detail::require(n >= 1 && n <= max_len, "tupe::positional_bias_cache::get", "n: expected 1 <= n <= ",
                    max_len, " (rows of pos", m_cfg.cls == cls_reset::reference ? " minus one" : "", "), got ", n);
    auto it = m_cache.find(n);
    if (it != m_cache.end()) return it->second;
    auto entry = std::make_shared<head_stack<T>>();
    detail::compute_bias(m_cfg, *m_params, m_params->pos, n, *entry, m_ws);
    m_computations.fetch_add(1, std::memory_order_relaxed);
    return m_cache.emplace(n, std::move(entry)).first->second;
  }
  /// Longest sequence the table supports.
  [[nodiscard]] Index max_length() const noexcept { return m_max_length.load(std::memory_order_relaxed); }
  /// Replaces the parameters (validated) and drops every cached term (snapshots already handed
  /// out keep the old values).
  void set_parameters(parameters<T> params) {
    validate_table(m_cfg, params, "tupe::positional_bias_cache::set_parameters");
    auto next = std::make_shared<const parameters<T>>(std::move(params));
    std::lock_guard<std::mutex> lock(m_mutex);
    m_params = std::move(next);
    m_cache.clear();
    m_max_length.store(m_params->pos.rows() - m_cfg.first_row(), std::memory_order_relaxed);
  }
  void clear() {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_cache.clear();
  }
  [[nodiscard]] const config& cfg() const noexcept { return m_cfg; }
  /// The parameters in force, as a snapshot that a concurrent set_parameters() does not invalidate.
  [[nodiscard]] std::shared_ptr<const parameters<T>> params() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_params;
  }
  /// How many times a term was computed (each length once until clear()).
  [[nodiscard]] std::size_t computations() const noexcept { return m_computations.load(std::memory_order_relaxed); }

 private:
  static void validate_table(const config& cfg, const parameters<T>& p, std::string_view where) {
    validate(cfg, where);
    posenc::detail::require<shape_error>(p.pos.rows() >= cfg.rows_needed(1), where, "pos: expected at least ",
                                         cfg.rows_needed(1), " rows, got ", p.pos.rows());
    validate_parameters(cfg, p, p.pos, p.pos.rows() - cfg.first_row(), where);  // every row
  }

  config m_cfg;
  std::shared_ptr<const parameters<T>> m_params;
  std::map<Index, std::shared_ptr<const head_stack<T>>> m_cache;
  workspace<T> m_ws;
  std::atomic<std::size_t> m_computations{0};
  std::atomic<Index> m_max_length{0};
  mutable std::mutex m_mutex;
};

}  // namespace posenc::tupe

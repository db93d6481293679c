// SPDX-License-Identifier: MIT
// One thread budget (posenc/core/thread_pool.hpp): in a program built with OpenMP, every thread
// that runs a posenc job sees an OpenMP thread count of 1 (so Eigen's products inside the job start
// no team of their own), the caller's count is restored when the call returns, and a call with
// `threads` = n that leaves its products to Eigen gives Eigen exactly n. This binary is compiled
// and linked with OpenMP (tests/CMakeLists.txt: the area exists only where CMake finds OpenMP).
#include <doctest/doctest.h>

#include <omp.h>

#include <Eigen/Core>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <posenc/core/thread_pool.hpp>
#include <posenc/tupe/tupe.hpp>

namespace {

// Sets the calling thread's OpenMP count to `n` for the test and restores the old value.
struct omp_count {
  int saved = omp_get_max_threads();
  explicit omp_count(int n) { omp_set_num_threads(n); }
  ~omp_count() { omp_set_num_threads(saved); }
};

}  // namespace

TEST_CASE("openmp_thread_scope sets and restores the calling thread's OpenMP count") {
  const omp_count four(4);
  REQUIRE(omp_get_max_threads() == 4);
  {
    const posenc::openmp_thread_scope one;
    CHECK(omp_get_max_threads() == 1);
    CHECK(Eigen::nbThreads() == 1);  // Eigen asks OpenMP unless Eigen::setNbThreads was called
    {
      const posenc::openmp_thread_scope three(3);
      CHECK(omp_get_max_threads() == 3);
    }
    CHECK(omp_get_max_threads() == 1);
  }
  CHECK(omp_get_max_threads() == 4);
}

TEST_CASE("worker_pool and pool_handle jobs run with an OpenMP count of 1 on every thread") {
  const omp_count four(4);
  for (std::size_t threads : {1u, 2u, 3u}) {
    CAPTURE(threads);
    posenc::pool_handle pool(threads);
    std::mutex m;
    std::vector<int> seen;
    std::set<std::thread::id> ids;
    auto job = [&](std::size_t, std::size_t) {
      const std::lock_guard<std::mutex> lock(m);
      seen.push_back(omp_get_max_threads());
      seen.push_back(Eigen::nbThreads());
      ids.insert(std::this_thread::get_id());
    };
    for (int rep = 0; rep < 3; ++rep) pool.run(job);
    REQUIRE(seen.size() == 2 * 3 * threads);
    for (int v : seen) CHECK(v == 1);
    CHECK(omp_get_max_threads() == 4);  // restored on the caller
    CHECK(ids.size() <= threads);
  }
}

TEST_CASE("parallel_chunks runs every chunk with an OpenMP count of 1") {
  const omp_count four(4);
  std::atomic<int> bad{0}, calls{0};
  posenc::parallel_chunks(64, 3, [&](std::size_t, std::size_t) {
    calls.fetch_add(1);
    if (omp_get_max_threads() != 1) bad.fetch_add(1);
  });
  CHECK(calls.load() == 3);
  CHECK(bad.load() == 0);
  CHECK(omp_get_max_threads() == 4);
}

TEST_CASE("tupe: the bias does not depend on OpenMP's thread count, and the caller's count is restored") {
  // posenc spreads the products itself (threads = 2) and Eigen runs each serially, so the result
  // is the same bits whatever OpenMP's count is (an Eigen team would split the products
  // differently); the caller's OpenMP count is restored after each call.
  posenc::tupe::config cfg;
  cfg.d = 256;
  cfg.heads = 4;
  cfg.threads = 2;
  const auto p = posenc::tupe::make_parameters<double>(cfg, 300, 7);
  posenc::tupe::head_stack<double> serial, many;
  {
    const omp_count one(1);
    serial = posenc::tupe::positional_bias(cfg, p, 300);
  }
  {
    const omp_count four(4);
    many = posenc::tupe::positional_bias(cfg, p, 300);
    CHECK(omp_get_max_threads() == 4);
  }
  REQUIRE(serial.flat().size() == many.flat().size());
  CHECK((serial.flat().array() == many.flat().array()).all());
}

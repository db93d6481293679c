// SPDX-License-Identifier: MIT
// posenc/core/thread_pool.hpp: the meaning of `threads`, the part arithmetic, and that every part
// of every job runs exactly once.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <posenc/core/thread_pool.hpp>

TEST_CASE("resolve_threads: 0 is the hardware concurrency, above max_threads is an error") {
  CHECK(posenc::resolve_threads(0, "t") == std::max<std::size_t>(1, std::thread::hardware_concurrency()));
  CHECK(posenc::resolve_threads(1, "t") == 1);
  CHECK(posenc::resolve_threads(posenc::max_threads, "t") == posenc::max_threads);
  CHECK_THROWS_AS((void)posenc::resolve_threads(posenc::max_threads + 1, "where"), posenc::invalid_argument);
  std::string msg;
  try {
    (void)posenc::resolve_threads(5000, "where");
  } catch (const posenc::error& e) {
    msg = e.what();
  }
  CHECK(msg.find("where") != std::string::npos);
  CHECK(msg.find("threads") != std::string::npos);
  CHECK(msg.find("5000") != std::string::npos);
}

TEST_CASE("split_range covers every item once, in 16-aligned parts") {
  for (std::ptrdiff_t count : {0, 1, 15, 16, 17, 100, 512, 1000})
    for (std::size_t parts : {1u, 2u, 3u, 7u}) {
      std::ptrdiff_t next = 0;
      for (std::size_t p = 0; p < parts; ++p) {
        const auto [b, e] = posenc::split_range(count, p, parts);
        CHECK(b == next);
        CHECK(e >= b);
        if (e < count) CHECK(e % 16 == 0);
        next = e;
      }
      CHECK(next == count);
    }
}

TEST_CASE("worker_pool and pool_handle run every part of every job exactly once") {
  for (std::size_t threads : {1u, 2u, 4u}) {
    posenc::pool_handle pool(threads);
    CHECK(pool.size() == threads);
    posenc::pool_handle copy = pool;  // a copy is a new pool of the same size
    CHECK(copy.size() == threads);
    std::vector<std::atomic<int>> hits(threads);
    for (int job = 0; job < 500; ++job) {
      auto f = [&](std::size_t p, std::size_t n) {
        CHECK(n == threads);
        hits[p].fetch_add(1);
      };
      pool.run(f);
    }
    for (auto& h : hits) CHECK(h.load() == 500);
  }
}

TEST_CASE("parallel_chunks covers every index once") {
  for (std::size_t n : {0u, 1u, 5u, 1000u})
    for (std::size_t threads : {1u, 2u, 3u}) {
      std::vector<std::atomic<int>> seen(n);
      posenc::parallel_chunks(n, threads, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) seen[i].fetch_add(1);
      });
      for (auto& s : seen) CHECK(s.load() == 1);
    }
}

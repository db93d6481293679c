// SPDX-License-Identifier: MIT
// The thread-safety contract of docs/thread-safety.md, exercised: the shareable tupe cache
// hammered by get / set_parameters / computations / max_length from several threads (issue 11
// item 13), concurrent const reads of shared objects, and one-per-thread objects (fft plans,
// FLOATER encoders) used in parallel to show they share no hidden state. Run in the normal
// builds and under ThreadSanitizer (scripts/run-tests.sh, TSAN_OPTIONS=halt_on_error=1), which
// turns any data race here into a failure. Results are compared bit for bit with a serial run:
// the same code on the same inputs in one thread must give the same bits.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <complex>
#include <filesystem>
#include <string>
#include <cstddef>
#include <thread>
#include <vector>

#include <posenc/floater.hpp>
#include <posenc/io/npy.hpp>
#include <posenc/io/safetensors.hpp>
#include <posenc/numeric/fft.hpp>
#include <posenc/sinusoidal.hpp>
#include <posenc/toeplitz.hpp>
#include <posenc/tupe.hpp>

#include "floater/common.hpp"
#include "tupe/naive_reference.hpp"

namespace {

constexpr std::size_t n_threads = 4;

template <class F>
void run_threads(F&& f) {
  std::vector<std::thread> pool;
  pool.reserve(n_threads);
  for (std::size_t t = 0; t < n_threads; ++t) pool.emplace_back([&f, t] { f(t); });
  for (auto& th : pool) th.join();
}

posenc::tupe::config tupe_config() {
  posenc::tupe::config c;
  c.d = 12;
  c.heads = 3;
  c.cls = posenc::tupe::cls_reset::reference;
  c.relative = true;
  return c;
}

bool same(const posenc::tupe::head_stack<double>& a, const posenc::tupe::head_stack<double>& b) {
  return a.flat().size() == b.flat().size() && (a.flat().array() == b.flat().array()).all();
}

}  // namespace

TEST_CASE("tupe positional_bias_cache: concurrent get of several lengths computes each once") {
  using namespace posenc::tupe;
  const config cfg = tupe_config();
  const auto p = tupe_test::random_parameters<double>(cfg, 24, 5);
  std::vector<head_stack<double>> expect;
  for (Index n = 1; n <= 8; ++n) expect.push_back(positional_bias(cfg, p, n));
  positional_bias_cache<double> cache(cfg, p);
  std::atomic<int> mismatches{0};
  run_threads([&](std::size_t t) {
    for (int round = 0; round < 20; ++round)
      for (Index n = 1; n <= 8; ++n) {
        const Index m = (n + static_cast<Index>(t)) % 8 + 1;  // threads start at different lengths
        if (!same(*cache.get(m), expect[static_cast<std::size_t>(m - 1)])) ++mismatches;
        (void)cache.computations();
        (void)cache.max_length();
      }
  });
  CHECK(mismatches.load() == 0);
  CHECK(cache.computations() == 8);  // each length once, whatever the interleaving
}

TEST_CASE("tupe positional_bias_cache: get / computations / max_length race-free against set_parameters") {
  // Two parameter sets of different lengths (24 and 32 positions) swapped by one thread while two
  // others call get (length 20: valid for both; length 30: valid only for the longer, else a
  // posenc::error), computations() and max_length(), and a fourth only computations() and
  // max_length(). The snapshots from get() are dropped at once here; the next test case holds
  // them across the swaps.
  using namespace posenc::tupe;
  const config cfg = tupe_config();
  const auto short_p = tupe_test::random_parameters<double>(cfg, 24, 7);
  const auto long_p = tupe_test::random_parameters<double>(cfg, 32, 8);
  positional_bias_cache<double> cache(cfg, short_p);
  const Index short_len = cache.max_length();
  std::atomic<bool> stop{false};
  std::atomic<int> started{0}, bad_length{0}, non_monotonic{0}, refused{0}, served{0};
  std::vector<std::thread> pool;
  pool.emplace_back([&] {
    while (started.load() < 3) std::this_thread::yield();  // swap while the others run
    for (int i = 0; i < 100; ++i) cache.set_parameters(i % 2 ? short_p : long_p);
    cache.set_parameters(short_p);
    stop = true;
  });
  for (std::size_t t = 0; t < 2; ++t)
    pool.emplace_back([&] {
      ++started;
      std::size_t last = 0;
      while (!stop.load()) {
        const Index ml = cache.max_length();
        if (ml != short_len && ml != short_len + 8) ++bad_length;
        try {
          (void)cache.get(20);
          (void)cache.get(30);
          ++served;
        } catch (const posenc::error&) {
          ++refused;  // length 30 asked while the short parameters were in place
        }
        const std::size_t c = cache.computations();
        if (c < last) ++non_monotonic;
        last = c;
      }
    });
  pool.emplace_back([&] {  // an observer that never takes the cache's lock through get()
    ++started;
    std::size_t last = 0;
    while (!stop.load()) {
      const Index ml = cache.max_length();
      if (ml != short_len && ml != short_len + 8) ++bad_length;
      const std::size_t c = cache.computations();
      if (c < last) ++non_monotonic;
      last = c;
    }
  });
  for (auto& th : pool) th.join();
  CHECK(bad_length.load() == 0);
  CHECK(non_monotonic.load() == 0);
  CHECK(cache.max_length() == short_len);
  // After the last swap the cache serves the short parameters' values.
  CHECK(same(*cache.get(20), positional_bias(cfg, short_p, 20)));
  MESSAGE("get pairs served: " << served.load() << ", refused: " << refused.load());
}

TEST_CASE("tupe positional_bias_cache: snapshots from get() and params() stay valid across a concurrent set_parameters") {
  // The pattern of issue 26: readers hold what get() returned and read all of it while a writer
  // replaces the parameters (which drops the cache's entries). get() hands out a
  // shared_ptr<const head_stack>, so the reader's snapshot keeps its storage alive and still
  // holds the values of the parameters it was computed from (under TSan and ASan a dangling
  // reference here is a reported use-after-free).
  using namespace posenc::tupe;
  const config cfg = tupe_config();
  const auto pa = tupe_test::random_parameters<double>(cfg, 24, 11);
  const auto pb = tupe_test::random_parameters<double>(cfg, 24, 12);
  const auto ea = positional_bias(cfg, pa, 16), eb = positional_bias(cfg, pb, 16);
  positional_bias_cache<double> cache(cfg, pa);
  std::atomic<bool> stop{false};
  std::atomic<int> started{0}, wrong{0}, reads{0};
  std::vector<std::thread> pool;
  pool.emplace_back([&] {
    while (started.load() < 3) std::this_thread::yield();
    for (int i = 0; i < 200; ++i) cache.set_parameters(i % 2 ? pa : pb);
    stop = true;
  });
  for (std::size_t t = 0; t < 3; ++t)
    pool.emplace_back([&] {
      ++started;
      while (!stop.load()) {
        const auto held = cache.get(16);      // a snapshot
        const auto params = cache.params();   // likewise
        std::this_thread::yield();            // let the writer replace both meanwhile
        // whichever parameters it came from, it is all of one of the two results
        if (!same(*held, ea) && !same(*held, eb)) ++wrong;
        const auto& pos = params->pos;
        if (pos.rows() != pa.pos.rows() || !((pos.array() == pa.pos.array()).all() || (pos.array() == pb.pos.array()).all()))
          ++wrong;
        ++reads;
      }
    });
  for (auto& th : pool) th.join();
  CHECK(wrong.load() == 0);
  CHECK(reads.load() > 0);
  MESSAGE("snapshot reads: " << reads.load());
}

TEST_CASE("shareable const: free functions and const reads of a shared FLOATER encoder") {
  namespace fl = posenc::floater;
  const auto m = floater_test::random_mlp<double>(6, 5, fl::activation::tanh, 3);
  const auto p0 = floater_test::random_table<double>(2, 6, 4);
  fl::encoder<double> shared(m, p0);
  const auto serial = shared.tables(16);  // computed before the threads start: reads only below
  const auto sin_ref = posenc::sinusoidal::table<double>(64, 16);
  const posenc::tupe::config cfg = tupe_config();
  const auto tp = tupe_test::random_parameters<double>(cfg, 24, 9);  // shared const input
  const auto bias_ref = posenc::tupe::positional_bias(cfg, tp, 12);
  const fl::encoder<double>& view = shared;
  std::atomic<int> mismatches{0};
  run_threads([&](std::size_t) {
    for (int round = 0; round < 10; ++round) {
      if (view.size() < 16) ++mismatches;
      const auto traj = view.trajectory();
      for (std::size_t i = 0; i < 16; ++i)
        for (std::size_t n = 0; n < 2; ++n)
          for (Eigen::Index j = 0; j < 6; ++j)
            if (traj(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(n) * 6 + j) !=
                serial[n](static_cast<Eigen::Index>(i), j))
              ++mismatches;
      if (!(posenc::sinusoidal::table<double>(64, 16).array() == sin_ref.array()).all()) ++mismatches;
      if (!same(posenc::tupe::positional_bias(cfg, tp, 12), bias_ref)) ++mismatches;
    }
  });
  CHECK(mismatches.load() == 0);
}

TEST_CASE("one per thread: FLOATER encoders and fft::real_plan used in parallel share no hidden state") {
  namespace fl = posenc::floater;
  const auto m = floater_test::random_mlp<double>(6, 5, fl::activation::relu, 13);
  const auto p0 = floater_test::random_table<double>(3, 6, 14);
  fl::encoder<double> serial_enc(m, p0);
  const auto serial = serial_enc.tables(24);
  constexpr std::size_t n = 96;  // even: the half-size complex path
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<double>((i * 37) % 11) - 5.0;
  std::vector<std::complex<double>> spec_ref(n / 2 + 1);
  posenc::fft::real_plan<double>(n).forward(x.data(), spec_ref.data());
  std::atomic<int> mismatches{0};
  run_threads([&](std::size_t) {
    fl::encoder<double> own(m, p0);
    (void)own.tables(10);  // grow in two steps, concurrently with the other threads
    const auto tabs = own.tables(24);
    for (std::size_t b = 0; b < 3; ++b)
      if (!(tabs[b].array() == serial[b].array()).all()) ++mismatches;
    posenc::fft::real_plan<double> plan(n);
    std::vector<std::complex<double>> spec(n / 2 + 1);
    std::vector<double> back(n);
    for (int round = 0; round < 20; ++round) {
      plan.forward(x.data(), spec.data());
      if (spec != spec_ref) ++mismatches;
      plan.inverse(spec.data(), back.data());
    }
  });
  CHECK(mismatches.load() == 0);
}

TEST_CASE("shareable const: one safetensors_file read by several threads, and read_npy of one file") {
  namespace pio = posenc::io;
  std::vector<double> w(64);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.25 * static_cast<double>(i) - 3.0;
  const std::vector<float> b{1.5f, -2.0f, 0.125f};
  const auto dir = std::filesystem::temp_directory_path() /
                   ("posenc_concurrency_" + std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())));
  std::filesystem::create_directories(dir);
  pio::write_safetensors(dir / "w.safetensors", {{"w", {8, 8}, w}, {"b", {3}, b}});
  pio::write_npy(dir / "w.npy", w, {8, 8});
  const auto from_file = pio::safetensors_file::open(dir / "w.safetensors");
  const auto from_memory = pio::safetensors_file::from_bytes(pio::safetensors_bytes({{"w", {8, 8}, w}, {"b", {3}, b}}));
  std::atomic<int> mismatches{0};
  run_threads([&](std::size_t) {
    for (int round = 0; round < 10; ++round) {
      for (const auto* f : {&from_file, &from_memory}) {
        if (f->get<double>("w").data != w) ++mismatches;
        if (f->get<float>("b").data != b) ++mismatches;
        if (f->info("w").shape != std::vector<std::size_t>{8, 8}) ++mismatches;
      }
      if (pio::read_npy<double>(dir / "w.npy").data != w) ++mismatches;
    }
  });
  std::filesystem::remove_all(dir);
  CHECK(mismatches.load() == 0);
}

TEST_CASE("shareable const: the first lookups of a safetensors_file of 200 tensors race to build its name index") {
  namespace pio = posenc::io;
  const std::vector<float> v{1.0f, 2.0f};
  std::vector<pio::tensor_ref> refs;
  for (std::size_t i = 0; i < 200; ++i) refs.emplace_back("layer." + std::to_string(199 - i) + ".w", std::vector<std::size_t>{2}, v);
  // one fresh file per round, so that every round's first lookups are concurrent
  for (int round = 0; round < 5; ++round) {
    const auto f = pio::safetensors_file::from_bytes(pio::safetensors_bytes(refs));
    std::atomic<int> mismatches{0};
    run_threads([&](std::size_t t) {
      for (std::size_t k = 0; k < 200; ++k) {
        const std::size_t i = (k * 7 + t * 31) % 200;  // each thread in its own order
        const auto& info = f.info(refs[i].name);
        if (info.name != refs[i].name || info.begin != 8 * i) ++mismatches;
      }
      if (f.contains("layer.200.w") || f.contains("layer.")) ++mismatches;
    });
    CHECK(mismatches.load() == 0);
  }
}

TEST_CASE("threads of one call: toeplitz::product_plan with set_threads spreads columns over workers with their own buffers") {
  // Each worker transforms its own columns in its own buffers (a copy of the transform plan and
  // the lane batch); under TSan a shared buffer or an overlapping column range is a race. Y is
  // compared bit for bit with the serial product, repeatedly (the workers persist across calls).
  namespace tz = posenc::toeplitz;
  constexpr std::size_t n = 1000;
  Eigen::VectorXd coeff(2 * n - 1);
  for (Eigen::Index i = 0; i < coeff.size(); ++i) coeff[i] = std::sin(0.37 * static_cast<double>(i));
  const auto B = tz::toeplitz_matrix<double>::square(n, coeff);
  Eigen::MatrixXd X(static_cast<Eigen::Index>(n), 37);
  for (Eigen::Index j = 0; j < X.cols(); ++j)
    for (Eigen::Index i = 0; i < X.rows(); ++i) X(i, j) = std::cos(0.11 * static_cast<double>(i * (j + 1)));
  tz::product_plan<double> serial(B);
  Eigen::MatrixXd Y1;
  serial.apply(X, Y1);
  tz::product_plan<double> plan(B);
  plan.set_threads(4);
  Eigen::MatrixXd Y;
  int mismatches = 0;
  for (int round = 0; round < 5; ++round) {
    plan.apply(X, Y);
    if (!(Y.array() == Y1.array()).all()) ++mismatches;
  }
  CHECK(mismatches == 0);
}

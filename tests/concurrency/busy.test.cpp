// SPDX-License-Identifier: MIT
// Misuse of a one-per-thread object, detected (issue 37): a toeplitz::product_plan entered from a
// second thread while a call runs in it throws concurrent_use_error (posenc::busy_flag) instead
// of racing on the plan's buffers and then waiting forever on its worker pool. The overlap is
// made deterministic, not timed: the first call's X is an expression whose first coefficient read
// (inside apply, with the flag held) blocks until the second thread has made its calls. Under
// ThreadSanitizer (scripts/run-tests.sh stage 3) the refused calls must not be reported as races:
// they touch only the flag's atomic.
#include <doctest/doctest.h>

#include <Eigen/Core>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>

#include <posenc/core/thread_pool.hpp>
#include <posenc/toeplitz.hpp>

namespace {

/// A rendezvous: the first thread signals that it is inside the call and waits until the second
/// thread has finished its attempts.
struct rendezvous {
  std::mutex m;
  std::condition_variable cv;
  bool inside = false, done = false;
  void enter_and_wait() {
    std::unique_lock<std::mutex> l(m);
    inside = true;
    cv.notify_all();
    cv.wait(l, [&] { return done; });
  }
  void wait_inside() {
    std::unique_lock<std::mutex> l(m);
    cv.wait(l, [&] { return inside; });
  }
  void release() {
    {
      std::lock_guard<std::mutex> l(m);
      done = true;
    }
    cv.notify_all();
  }
};

/// X(i, j) = x(i, j) of a plain matrix; the first read blocks on the rendezvous (once).
struct blocking_reader {
  const Eigen::MatrixXd* x;
  rendezvous* r;
  std::atomic<bool>* first;
  double operator()(Eigen::Index i, Eigen::Index j) const {
    if (!first->exchange(true)) r->enter_and_wait();
    return (*x)(i, j);
  }
};

Eigen::VectorXd coefficients(Eigen::Index n) {
  Eigen::VectorXd b(2 * n - 1);
  for (Eigen::Index i = 0; i < b.size(); ++i) b[i] = 1.0 / static_cast<double>(1 + (i * 7) % 13) - 0.25;
  return b;
}

}  // namespace

TEST_CASE("toeplitz product_plan: a second thread entering a plan in use gets concurrent_use_error, never a hang") {
  using posenc::toeplitz::product_plan;
  using posenc::toeplitz::toeplitz_matrix;
  constexpr Eigen::Index n = 64, k = 12;
  const auto B = toeplitz_matrix<double>::square(static_cast<std::size_t>(n), coefficients(n));
  Eigen::MatrixXd x(n, k);
  for (Eigen::Index j = 0; j < k; ++j)
    for (Eigen::Index i = 0; i < n; ++i) x(i, j) = std::sin(0.1 * static_cast<double>(i + 3 * j));
  product_plan<double> reference(B);
  const Eigen::MatrixXd expected = reference.apply(x);

  product_plan<double> plan(B);
  plan.set_threads(2);  // a worker pool: two overlapping applies used to wait on each other forever
  rendezvous r;
  std::atomic<bool> first{false};
  const auto blocking = Eigen::MatrixXd::NullaryExpr(n, k, blocking_reader{&x, &r, &first});
  Eigen::MatrixXd y_first;
  std::thread a([&] { plan.apply(blocking, y_first); });
  r.wait_inside();  // thread a is inside apply (holding the flag), blocked on its first read of X

  // Every mutating call of the plan is refused, with the call's name, and does not wait.
  Eigen::MatrixXd y_second;
  std::string apply_msg;
  try {
    plan.apply(x, y_second);
  } catch (const posenc::concurrent_use_error& e) {
    apply_msg = e.what();
  }
  CHECK_THROWS_AS(plan.set_threads(1), posenc::concurrent_use_error);
  CHECK_THROWS_AS(plan.set_coefficients(B), posenc::concurrent_use_error);
  CHECK_THROWS_AS((void)plan.apply(x), posenc::concurrent_use_error);
  r.release();
  a.join();
  CHECK(apply_msg.find("toeplitz::product_plan::apply") != std::string::npos);
  CHECK(apply_msg.find("in use by another call") != std::string::npos);
  CHECK(y_second.size() == 0);  // the refused call did not resize (touch) its output

  // The first call was not disturbed, and the flag was released: the plan works again, from
  // this thread, with the same bits as a plan nobody else touched.
  CHECK((y_first.array() == expected.array()).all());
  CHECK(plan.threads() == 2);  // the refused set_threads(1) changed nothing
  const Eigen::MatrixXd again = plan.apply(x);
  CHECK((again.array() == expected.array()).all());
}

TEST_CASE("busy_flag: consecutive use from different threads is not misuse, and a throwing call releases it") {
  posenc::busy_flag flag;
  std::atomic<int> refused{0};
  // Threads take turns (joined one after the other): each enter() succeeds.
  for (int t = 0; t < 4; ++t) {
    std::thread th([&] {
      try {
        const auto g = flag.enter("test");
      } catch (const posenc::concurrent_use_error&) {
        refused.fetch_add(1);
      }
    });
    th.join();
  }
  CHECK(refused.load() == 0);
  CHECK_FALSE(flag.busy());
  // Released by the guard also when the call throws.
  try {
    const auto g = flag.enter("test");
    CHECK(flag.busy());
    throw posenc::invalid_argument("inside");
  } catch (const posenc::invalid_argument&) {
  }
  CHECK_FALSE(flag.busy());
  // Copies start free (the flag is the object's, not its value's).
  const auto g = flag.enter("test");
  const posenc::busy_flag copy(flag);
  CHECK_FALSE(copy.busy());
  CHECK_THROWS_AS((void)flag.enter("test"), posenc::concurrent_use_error);
}

// SPDX-License-Identifier: MIT
// Toeplitz products as PyTorch operators: toeplitz_matmul (B X by FFT) and toeplitz_correlate
// (the gradient of sum(g * (B x)) in b), each differentiable (their backwards are the other op and
// a Toeplitz product with b reversed). Conventions: common.hpp.
#include "common.hpp"

#include <posenc/toeplitz.hpp>

using namespace posenc_torch;

namespace {

/// Y = B X for the m x n Toeplitz B_ij = b_{j-i}, b = [b_{-(m-1)}, ..., b_{n-1}] (m + n - 1 values),
/// X [n, k]; by FFT in O(k P log P).
Tensor toeplitz_matmul(const Tensor& b, const Tensor& x, int64_t m) {
  constexpr const char* op = "toeplitz_matmul";
  check_real(x, op, "x");
  check_real(b, op, "b", &x, "x");
  check_dim(x, 2, op, "x", "[n, k]");
  check_dim(b, 1, op, "b", "[m + n - 1] (coefficients b_{-(m-1)} .. b_{n-1})");
  TORCH_CHECK_VALUE(m >= 1, "posenc: ", op, ": m: expected rows >= 1, got ", m);
  const int64_t n = x.size(0), k = x.size(1);
  TORCH_CHECK_VALUE(n >= 1, "posenc: ", op, ": x: expected n >= 1 rows, got shape ", shape_str(x.sizes()));
  TORCH_CHECK_VALUE(b.size(0) == m + n - 1, "posenc: ", op, ": b: expected shape [", m + n - 1, "] (m + n - 1 with m = ", m,
                    ", n = ", n, "), got ", shape_str(b.sizes()));
  Tensor y = at::empty({m, k}, x.options());
  if (k == 0) return y;
  return guarded([&] {
    auto run = [&](auto tag) {
      using T = decltype(tag);
      posenc::toeplitz::toeplitz_matrix<T> B(static_cast<std::size_t>(m), static_cast<std::size_t>(n),
                                             vmap<T>(b.data_ptr<T>(), b.numel()));
      posenc::toeplitz::product_plan<T> plan(B);
      Eigen::Map<posenc::matrix<T>> Y(y.data_ptr<T>(), m, k);
      plan.apply(cmap<T>(x.data_ptr<T>(), n, k), Y);
    };
    if (x.scalar_type() == at::kFloat) run(float{});
    else run(double{});
    return y;
  });
}

/// c_d = sum_c sum_i g[i, c] x[i + d, c] for d = -(m-1) .. n-1 (g [m, k], x [n, k]): the gradient
/// of sum(g * (B x)) with respect to b. Per column, a Toeplitz product by FFT: c = T rev(g[:, c])
/// with T ((m+n-1) x m) T_{r,i} = x_{r-i}.
Tensor toeplitz_correlate(const Tensor& g, const Tensor& x) {
  constexpr const char* op = "toeplitz_correlate";
  check_real(x, op, "x");
  check_real(g, op, "g", &x, "x");
  check_dim(x, 2, op, "x", "[n, k]");
  check_dim(g, 2, op, "g", "[m, k]");
  TORCH_CHECK_VALUE(g.size(1) == x.size(1), "posenc: ", op, ": g: expected ", x.size(1), " columns (as x), got shape ",
                    shape_str(g.sizes()));
  const int64_t m = g.size(0), n = x.size(0), k = x.size(1);
  TORCH_CHECK_VALUE(m >= 1 && n >= 1, "posenc: ", op, ": expected g and x with at least one row, got ", shape_str(g.sizes()),
                    " and ", shape_str(x.sizes()));
  const int64_t P = m + n - 1;
  Tensor out = at::zeros({P}, x.options());
  return guarded([&] {
    auto run = [&](auto tag) {
      using T = decltype(tag);
      cmap<T> X(x.data_ptr<T>(), n, k), G(g.data_ptr<T>(), m, k);
      Eigen::Map<posenc::vector<T>> C(out.data_ptr<T>(), P);
      posenc::vector<T> coef(P + m - 1), rg(m), col(P);
      for (int64_t c = 0; c < k; ++c) {
        // coefficients of T by offset o = i - r in [-(P-1), m-1]: index t = o + P - 1, value x_{-o}
        coef.setZero();
        for (int64_t j = 0; j < n; ++j) coef[P - 1 - j] = X(j, c);
        posenc::toeplitz::toeplitz_matrix<T> Tm(static_cast<std::size_t>(P), static_cast<std::size_t>(m), coef);
        for (int64_t i = 0; i < m; ++i) rg[i] = G(m - 1 - i, c);
        posenc::toeplitz::product_plan<T> plan(Tm);
        plan.apply(rg, col);
        C += col;
      }
    };
    if (x.scalar_type() == at::kFloat) run(float{});
    else run(double{});
    return out;
  });
}

// ---- autograd ------------------------------------------------------------------------------------

struct ToeplitzMatmulBackward {};
struct ToeplitzCorrelateBackward {};

Tensor toeplitz_matmul_autograd(const Tensor& b, const Tensor& x, int64_t m) {
  const std::function<variable_list()> forward = [&]() -> variable_list {
    return {op_handle<decltype(toeplitz_matmul)>("posenc::toeplitz_matmul").call(b, x, m)};
  };
  backward_fn backward = [](const variable_list& grads, const variable_list& s) -> variable_list {
    const Tensor g = grads[0].contiguous();
    // Y = B X: dX = B^T dY (a Toeplitz product with b reversed), db = the correlation of dY and X
    Tensor db = op_handle<decltype(toeplitz_correlate)>("posenc::toeplitz_correlate").call(g, s[1]);
    Tensor dx = op_handle<decltype(toeplitz_matmul)>("posenc::toeplitz_matmul").call(s[0].flip(0).contiguous(), g, s[1].size(0));
    return {db, dx};
  };
  return autograd_apply<ToeplitzMatmulBackward>(true, forward, backward, b, x)[0];
}

Tensor toeplitz_correlate_autograd(const Tensor& g, const Tensor& x) {
  const std::function<variable_list()> forward = [&]() -> variable_list {
    return {op_handle<decltype(toeplitz_correlate)>("posenc::toeplitz_correlate").call(g, x)};
  };
  backward_fn backward = [](const variable_list& grads, const variable_list& s) -> variable_list {
    const Tensor gc = grads[0].contiguous();
    auto mm = op_handle<decltype(toeplitz_matmul)>("posenc::toeplitz_matmul");
    return {mm.call(gc, s[1], s[0].size(0)), mm.call(gc.flip(0).contiguous(), s[0], s[1].size(0))};
  };
  return autograd_apply<ToeplitzCorrelateBackward>(true, forward, backward, g, x)[0];
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(posenc, m) {
  m.def("toeplitz_matmul(Tensor b, Tensor x, int m) -> Tensor");
  m.def("toeplitz_correlate(Tensor g, Tensor x) -> Tensor");
}

TORCH_LIBRARY_IMPL(posenc, CPU, m) {
  m.impl("toeplitz_matmul", TORCH_FN(toeplitz_matmul));
  m.impl("toeplitz_correlate", TORCH_FN(toeplitz_correlate));
}

TORCH_LIBRARY_IMPL(posenc, Autograd, m) {
  m.impl("toeplitz_matmul", TORCH_FN(toeplitz_matmul_autograd));
  m.impl("toeplitz_correlate", TORCH_FN(toeplitz_correlate_autograd));
}

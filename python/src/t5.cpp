// SPDX-License-Identifier: MIT
// T5 relative position buckets as PyTorch operators: relative_position_bucket [n, n], t5_bias
// (bias[h, i, j] = table[bucket(j - i), h]) and t5_bias_backward (the bucket sums), each the
// other's adjoint, both differentiable. Conventions: common.hpp.
#include "common.hpp"

#include <posenc/tupe/relative_bucket.hpp>

using namespace posenc_torch;

namespace {

posenc::tupe::bucket_spec bucket_spec_of(int64_t num_buckets, int64_t max_distance, bool bidirectional) {
  posenc::tupe::bucket_spec s;
  s.num_buckets = static_cast<int>(num_buckets);
  s.max_distance = static_cast<int>(max_distance);
  s.bidirectional = bidirectional;
  return s;
}

/// [n, n] int64: element (i, j) = bucket of j - i.
Tensor relative_position_bucket(int64_t n, int64_t num_buckets, int64_t max_distance, bool bidirectional) {
  TORCH_CHECK_VALUE(n >= 1, "posenc: relative_position_bucket: n: expected a sequence length >= 1, got ", n);
  const auto off = guarded([&] { return posenc::tupe::relative_bucket_offsets(n, bucket_spec_of(num_buckets, max_distance, bidirectional)); });
  Tensor out = at::empty({n, n}, at::TensorOptions().dtype(at::kLong));
  int64_t* o = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) o[i * n + j] = off[static_cast<std::size_t>(j - i + n - 1)];
  return out;
}

/// bias[h, i, j] = table[bucket(j - i), h] for table [rows, H] (rows >= num_buckets).
Tensor t5_bias(const Tensor& table, int64_t n, int64_t num_buckets, int64_t max_distance, bool bidirectional) {
  constexpr const char* op = "t5_bias";
  check_real(table, op, "table");
  check_dim(table, 2, op, "table", "[num_buckets, heads]");
  TORCH_CHECK_VALUE(table.size(0) >= num_buckets && table.size(1) >= 1, "posenc: ", op, ": table: expected shape [rows >= ",
                    num_buckets, " (num_buckets), heads >= 1], got ", shape_str(table.sizes()));
  TORCH_CHECK_VALUE(n >= 1, "posenc: ", op, ": n: expected a sequence length >= 1, got ", n);
  const auto off = guarded([&] { return posenc::tupe::relative_bucket_offsets(n, bucket_spec_of(num_buckets, max_distance, bidirectional)); });
  const int64_t H = table.size(1);
  Tensor out = at::empty({H, n, n}, table.options());
  auto run = [&](auto* t, auto* o) {
    std::vector<std::remove_pointer_t<decltype(o)>> diag(static_cast<std::size_t>(2 * n - 1));
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t k = 0; k < 2 * n - 1; ++k) diag[k] = t[off[k] * H + h];
      for (int64_t i = 0; i < n; ++i) std::memcpy(o + (h * n + i) * n, diag.data() + (n - 1 - i), sizeof(diag[0]) * n);
    }
  };
  if (table.scalar_type() == at::kFloat) run(table.data_ptr<float>(), out.data_ptr<float>());
  else run(table.data_ptr<double>(), out.data_ptr<double>());
  return out;
}

/// dL/dtable [rows, H] from grad = dL/dbias [H, n, n]: the sum of grad over each bucket.
Tensor t5_bias_backward(const Tensor& grad, int64_t rows, int64_t num_buckets, int64_t max_distance, bool bidirectional) {
  constexpr const char* op = "t5_bias_backward";
  check_real(grad, op, "grad");
  TORCH_CHECK_VALUE(grad.dim() == 3 && grad.size(1) == grad.size(2) && grad.size(1) >= 1, "posenc: ", op,
                    ": grad: expected shape [heads, n, n], got ", shape_str(grad.sizes()));
  TORCH_CHECK_VALUE(rows >= num_buckets, "posenc: ", op, ": rows: expected >= num_buckets = ", num_buckets, ", got ", rows);
  const int64_t H = grad.size(0), n = grad.size(1);
  const auto off = guarded([&] { return posenc::tupe::relative_bucket_offsets(n, bucket_spec_of(num_buckets, max_distance, bidirectional)); });
  Tensor out = at::zeros({rows, H}, grad.options());
  auto run = [&](auto* g, auto* o) {
    using T = std::remove_pointer_t<decltype(o)>;
    std::vector<T> diag(static_cast<std::size_t>(2 * n - 1));
    for (int64_t h = 0; h < H; ++h) {
      std::fill(diag.begin(), diag.end(), T(0));
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) diag[j - i + n - 1] += g[(h * n + i) * n + j];
      for (int64_t k = 0; k < 2 * n - 1; ++k) o[off[k] * H + h] += diag[k];
    }
  };
  if (grad.scalar_type() == at::kFloat) run(grad.data_ptr<float>(), out.data_ptr<float>());
  else run(grad.data_ptr<double>(), out.data_ptr<double>());
  return out;
}

// ---- autograd ------------------------------------------------------------------------------------

struct T5BiasBackward {};
struct T5BiasBackwardBackward {};

Tensor t5_bias_autograd(const Tensor& table, int64_t n, int64_t nb, int64_t md, bool bidir) {
  const int64_t rows = table.size(0);
  const std::function<variable_list()> forward = [&]() -> variable_list {
    return {op_handle<decltype(t5_bias)>("posenc::t5_bias").call(table, n, nb, md, bidir)};
  };
  backward_fn backward = [rows, nb, md, bidir](const variable_list& grads, const variable_list&) -> variable_list {
    return {op_handle<decltype(t5_bias_backward)>("posenc::t5_bias_backward")
                .call(grads[0].contiguous(), rows, nb, md, bidir)};
  };
  return autograd_apply<T5BiasBackward>(false, forward, backward, table)[0];
}

Tensor t5_bias_backward_autograd(const Tensor& grad, int64_t rows, int64_t nb, int64_t md, bool bidir) {
  const int64_t n = grad.size(1);
  const std::function<variable_list()> forward = [&]() -> variable_list {
    return {op_handle<decltype(t5_bias_backward)>("posenc::t5_bias_backward").call(grad, rows, nb, md, bidir)};
  };
  backward_fn backward = [n, nb, md, bidir](const variable_list& grads, const variable_list&) -> variable_list {
    // the adjoint of the bucket sum is the gather
    return {op_handle<decltype(t5_bias)>("posenc::t5_bias").call(grads[0].contiguous(), n, nb, md, bidir)};
  };
  return autograd_apply<T5BiasBackwardBackward>(false, forward, backward, grad)[0];
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(posenc, m) {
  m.def("relative_position_bucket(int n, int num_buckets=32, int max_distance=128, bool bidirectional=True) -> Tensor");
  m.def("t5_bias(Tensor table, int n, int num_buckets=32, int max_distance=128, bool bidirectional=True) -> Tensor");
  m.def("t5_bias_backward(Tensor grad, int rows, int num_buckets=32, int max_distance=128, bool bidirectional=True) -> Tensor");
}

TORCH_LIBRARY_IMPL(posenc, CompositeExplicitAutograd, m) {
  m.impl("relative_position_bucket", TORCH_FN(relative_position_bucket));
}

TORCH_LIBRARY_IMPL(posenc, CPU, m) {
  m.impl("t5_bias", TORCH_FN(t5_bias));
  m.impl("t5_bias_backward", TORCH_FN(t5_bias_backward));
}

TORCH_LIBRARY_IMPL(posenc, Autograd, m) {
  m.impl("t5_bias", TORCH_FN(t5_bias_autograd));
  m.impl("t5_bias_backward", TORCH_FN(t5_bias_backward_autograd));
}

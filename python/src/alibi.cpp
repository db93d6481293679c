// SPDX-License-Identifier: MIT
// ALiBi as PyTorch operators: alibi_slopes, alibi_bias [heads, q_len, k_len], and alibi_add /
// alibi_add_ (the bias added to scores [B, H, q_len, k_len]; alibi_add is differentiable in the
// scores). Conventions: common.hpp.
#include "common.hpp"

#include <posenc/alibi.hpp>

using namespace posenc_torch;

namespace {

posenc::alibi::bias_options alibi_options(const std::string& form, bool causal_mask, const char* op) {
  posenc::alibi::bias_options o;
  if (form == "relative") o.form = posenc::alibi::bias_form::relative;
  else if (form == "key_position") o.form = posenc::alibi::bias_form::key_position;
  else if (form == "symmetric") o.form = posenc::alibi::bias_form::symmetric;
  else TORCH_CHECK_VALUE(false, "posenc: ", op, ": form: expected 'relative', 'key_position' or 'symmetric', got '", form, "'");
  o.causal_mask = causal_mask;
  return o;
}

std::vector<double> slopes_of(const Tensor& slopes, const char* op) {
  check_storage(slopes, op, "slopes");
  TORCH_CHECK_TYPE(slopes.scalar_type() == at::kDouble || slopes.scalar_type() == at::kFloat, "posenc: ", op,
                   ": slopes: expected dtype float64 or float32, got ", dtype_name(slopes.scalar_type()));
  check_dim(slopes, 1, op, "slopes", "[heads]");
  Tensor q = slopes.to(at::kDouble).contiguous();
  return std::vector<double>(q.data_ptr<double>(), q.data_ptr<double>() + q.numel());
}

/// The authors' slopes for `heads` heads, float64 [heads].
Tensor alibi_slopes(int64_t heads) {
  TORCH_CHECK_VALUE(heads >= 1, "posenc: alibi_slopes: heads: expected >= 1, got ", heads);
  const auto m = guarded([&] { return posenc::alibi::slopes(static_cast<std::size_t>(heads)); });
  Tensor out = at::empty({heads}, at::TensorOptions().dtype(at::kDouble));
  std::memcpy(out.data_ptr<double>(), m.data(), sizeof(double) * m.size());
  return out;
}


/// Add the ALiBi bias in place to scores [batch, heads, q_len, k_len]: query row r of sequence b
/// at position q_offsets[b] + r (None: k_len - q_len), key column j at j.
void alibi_add_(Tensor scores, const Tensor& slopes, const c10::optional<Tensor>& q_offsets, const std::string& form,
                bool causal_mask) {
  constexpr const char* op = "alibi_add_";
  check_rope_x(scores, op, "scores");
  TORCH_CHECK_VALUE(scores.dim() == 4, "posenc: ", op, ": scores: expected [batch, heads, q_len, k_len], got shape ",
                    shape_str(scores.sizes()));
  const auto m = slopes_of(slopes, op);
  const auto off = index_vector(q_offsets, op, "q_offsets");
  const auto o = alibi_options(form, causal_mask, op);
  guarded([&] {
    dispatch_storage(scores.scalar_type(), [&](auto tag) {
      using T = decltype(tag);
      const auto sz = [&](int i) { return static_cast<std::size_t>(scores.size(i)); };
      posenc::alibi::scores_view<T> v{storage_ptr<T>(scores), {sz(0), sz(1), sz(2), sz(3)},
                                      {scores.stride(0), scores.stride(1), scores.stride(2), scores.stride(3)}};
      posenc::alibi::add_bias<T>(v, m, off, o);
    });
    return 0;
  });
}

Tensor alibi_add(const Tensor& scores, const Tensor& slopes, const c10::optional<Tensor>& q_offsets, const std::string& form,
                 bool causal_mask) {
  TORCH_CHECK_VALUE(scores.defined() && scores.device().is_cpu() && scores.layout() == at::kStrided,
                    "posenc: alibi_add: scores: expected a dense CPU tensor");
  Tensor y = scores.clone(at::MemoryFormat::Contiguous);
  alibi_add_(y, slopes, q_offsets, form, causal_mask);
  return y;
}

/// The bias [heads, q_len, k_len]: row i at query position q_offset + i.
Tensor alibi_bias(const Tensor& slopes, int64_t q_len, int64_t k_len, int64_t q_offset, const std::string& form,
                  bool causal_mask, at::ScalarType dtype) {
  constexpr const char* op = "alibi_bias";
  const auto m = slopes_of(slopes, op);
  TORCH_CHECK_VALUE(q_len >= 0 && k_len >= 0, "posenc: ", op, ": q_len, k_len: expected >= 0, got ", q_len, " and ", k_len);
  TORCH_CHECK_TYPE(dtype == at::kFloat || dtype == at::kDouble || is_half_type(dtype), "posenc: ", op,
                   ": dtype: expected bfloat16, float16, float32 or float64, got ", dtype_name(dtype));
  const auto o = alibi_options(form, causal_mask, op);
  Tensor out = at::empty({static_cast<int64_t>(m.size()), q_len, k_len}, at::TensorOptions().dtype(dtype));
  guarded([&] {
    dispatch_storage(dtype, [&](auto tag) {
      using T = decltype(tag);
      const auto b = posenc::alibi::bias_table<T>(m, static_cast<std::size_t>(q_len), static_cast<std::size_t>(k_len), q_offset, o);
      std::memcpy(out.data_ptr(), b.data(), sizeof(T) * b.size());
    });
    return 0;
  });
  return out;
}

// ---- autograd ------------------------------------------------------------------------------------

struct AlibiAddBackward {};

Tensor alibi_add_autograd(const Tensor& scores, const Tensor& slopes, const c10::optional<Tensor>& q_offsets,
                          const std::string& form, bool causal_mask) {
  // a tensor subclass (DTensor, ...) gets its mask from the op itself in backward, which needs the slopes
  const Tensor mask_slopes = causal_mask && !plain_eager({&scores, &slopes}) ? slopes : Tensor();
  const std::function<variable_list()> forward = [&]() -> variable_list {
    return {op_handle<decltype(alibi_add)>("posenc::alibi_add").call(scores, slopes, q_offsets, form, causal_mask)};
  };
  backward_fn backward = [q_offsets, causal_mask, mask_slopes](const variable_list& grads,
                                                              const variable_list&) -> variable_list {
    Tensor g = grads[0];
    if (causal_mask && mask_slopes.defined()) {
      // the mask from the op (-inf where masked, 0 elsewhere with zero slopes), so that every
      // tensor is of g's kind and no plain tensor meets it
      Tensor masked = op_handle<decltype(alibi_add)>("posenc::alibi_add")
                          .call(at::zeros_like(g), at::zeros_like(mask_slopes), q_offsets, "relative", true);
      g = g.masked_fill(masked.isinf(), 0);
    } else if (causal_mask) {
      // the masked entries (key after query) are -inf whatever the scores: zero gradient there
      const int64_t Lq = g.size(2), Lk = g.size(3);
      Tensor qpos = at::arange(Lq, g.options().dtype(at::kLong)).view({1, 1, Lq, 1});
      qpos = q_offsets ? qpos + q_offsets->to(at::kLong).view({-1, 1, 1, 1}) : qpos + (Lk - Lq);
      Tensor kpos = at::arange(Lk, g.options().dtype(at::kLong)).view({1, 1, 1, Lk});
      g = g.masked_fill(kpos > qpos, 0);
    }
    return {g, Tensor()};
  };
  return autograd_apply<AlibiAddBackward>(false, forward, backward, scores, slopes)[0];
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(posenc, m) {
  m.def("alibi_slopes(int heads) -> Tensor");
  m.def("alibi_bias(Tensor slopes, int q_len, int k_len, int q_offset=0, str form='relative', bool causal_mask=False, "
        "ScalarType dtype=6) -> Tensor");
  m.def("alibi_add(Tensor scores, Tensor slopes, Tensor? q_offsets=None, str form='relative', bool causal_mask=False) "
        "-> Tensor");
  m.def("alibi_add_(Tensor(a!) scores, Tensor slopes, Tensor? q_offsets=None, str form='relative', "
        "bool causal_mask=False) -> ()");
}

TORCH_LIBRARY_IMPL(posenc, CompositeExplicitAutograd, m) { m.impl("alibi_slopes", TORCH_FN(alibi_slopes)); }

TORCH_LIBRARY_IMPL(posenc, CPU, m) {
  m.impl("alibi_bias", TORCH_FN(alibi_bias));
  m.impl("alibi_add", TORCH_FN(alibi_add));
  m.impl("alibi_add_", TORCH_FN(alibi_add_));
}

TORCH_LIBRARY_IMPL(posenc, Autograd, m) { m.impl("alibi_add", TORCH_FN(alibi_add_autograd)); }

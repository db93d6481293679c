// SPDX-License-Identifier: MIT
// TUPE's positional term as PyTorch operators: tupe_bias [heads, n, n] (differentiable in every
// tensor) and tupe_bias_backward (its gradients). Conventions: common.hpp.
#include "common.hpp"

#include <posenc/tupe.hpp>

using namespace posenc_torch;

namespace {

posenc::tupe::cls_reset parse_cls(const std::string& s, const char* op) {
  if (s == "reference") return posenc::tupe::cls_reset::reference;
  if (s == "off") return posenc::tupe::cls_reset::off;
  TORCH_CHECK_VALUE(false, "posenc: ", op, ": cls: expected 'reference' (the released code's [CLS] reset) or 'off', got '", s, "'");
}

template <class T>
posenc::tupe::parameters<T> tupe_params(const Tensor& ln_w, const Tensor& ln_b, const Tensor& q_w,
                                        const c10::optional<Tensor>& q_b, const Tensor& k_w,
                                        const c10::optional<Tensor>& k_b, const c10::optional<Tensor>& rel) {
  posenc::tupe::parameters<T> p;
  p.pos_ln_weight = to_vector<T>(ln_w);
  p.pos_ln_bias = to_vector<T>(ln_b);
  p.pos_q_weight = to_matrix<T>(q_w);
  if (q_b) p.pos_q_bias = to_vector<T>(*q_b);
  p.pos_k_weight = to_matrix<T>(k_w);
  if (k_b) p.pos_k_bias = to_vector<T>(*k_b);
  if (rel) p.relative_attention_bias = to_matrix<T>(*rel);
  return p;
}

posenc::tupe::config tupe_config(const Tensor& pos, const Tensor& ln_w, const Tensor& ln_b, const Tensor& q_w,
                                 const c10::optional<Tensor>& q_b, const Tensor& k_w, const c10::optional<Tensor>& k_b,
                                 const c10::optional<Tensor>& rel, int64_t heads, const std::string& cls,
                                 const std::string& scale, int64_t num_buckets, int64_t max_distance, double ln_eps,
                                 const char* op) {
  check_real(pos, op, "pos");
  check_dim(pos, 2, op, "pos", "[rows, d] (position table)");
  check_real(ln_w, op, "ln_weight", &pos, "pos");
  check_real(ln_b, op, "ln_bias", &pos, "pos");
  check_real(q_w, op, "q_weight", &pos, "pos");
  check_real(k_w, op, "k_weight", &pos, "pos");
  if (q_b) check_real(*q_b, op, "q_bias", &pos, "pos");
  if (k_b) check_real(*k_b, op, "k_bias", &pos, "pos");
  if (rel) check_real(*rel, op, "relative_attention_bias", &pos, "pos");
  const int64_t d = pos.size(1);
  check_dim(ln_w, 1, op, "ln_weight", "[d]");
  check_dim(ln_b, 1, op, "ln_bias", "[d]");
  check_dim(q_w, 2, op, "q_weight", "[d, d]");
  check_dim(k_w, 2, op, "k_weight", "[d, d]");
  if (q_b) check_dim(*q_b, 1, op, "q_bias", "[d]");
  if (k_b) check_dim(*k_b, 1, op, "k_bias", "[d]");
  if (rel) check_dim(*rel, 2, op, "relative_attention_bias", "[num_buckets + 1, heads]");
  TORCH_CHECK_VALUE(scale == "reference" || scale == "paper", "posenc: ", op,
                    ": scale: expected 'reference' (1/sqrt(2 d/H)) or 'paper' (1/sqrt(2 d)), got '", scale, "'");
  posenc::tupe::config cfg;
  cfg.d = d;
  cfg.heads = heads;
  cfg.scale = scale == "reference" ? posenc::tupe::scale_convention::reference : posenc::tupe::scale_convention::paper;
  cfg.ln_eps = ln_eps;
  cfg.relative = rel.has_value();
  cfg.buckets.num_buckets = static_cast<int>(num_buckets);
  cfg.buckets.max_distance = static_cast<int>(max_distance);
  cfg.cls = parse_cls(cls, op);
  return cfg;
}

Tensor tupe_bias(const Tensor& pos, const Tensor& ln_w, const Tensor& ln_b, const Tensor& q_w, const c10::optional<Tensor>& q_b,
                 const Tensor& k_w, const c10::optional<Tensor>& k_b, const c10::optional<Tensor>& rel, int64_t n,
                 int64_t heads, const std::string& cls, const std::string& scale, int64_t num_buckets,
                 int64_t max_distance, double ln_eps) {
  constexpr const char* op = "tupe_bias";
  const auto cfg = tupe_config(pos, ln_w, ln_b, q_w, q_b, k_w, k_b, rel, heads, cls, scale, num_buckets, max_distance, ln_eps, op);
  return guarded([&] {
    auto run = [&](auto tag) {
      using T = decltype(tag);
      const auto p = tupe_params<T>(ln_w, ln_b, q_w, q_b, k_w, k_b, rel);
      posenc::tupe::head_stack<T> out;
      posenc::tupe::workspace<T> ws;
      posenc::tupe::positional_bias<T>(cfg, p, cmap<T>(pos.data_ptr<T>(), pos.size(0), pos.size(1)), n, out, ws);
      Tensor t = at::empty({cfg.heads, n, n}, pos.options());
      std::memcpy(t.data_ptr<T>(), out.data(), sizeof(T) * static_cast<std::size_t>(cfg.heads * n * n));
      return t;
    };
    return pos.scalar_type() == at::kFloat ? run(float{}) : run(double{});
  });
}

/// Gradients (pos, ln_weight, ln_bias, q_weight, q_bias, k_weight, k_bias, relative_attention_bias)
/// of L given grad = dL/dbias [H, n, n]; absent parameters get empty [0] tensors (None in autograd).
std::vector<Tensor> tupe_bias_backward(const Tensor& grad, const Tensor& pos, const Tensor& ln_w, const Tensor& ln_b,
                                       const Tensor& q_w, const c10::optional<Tensor>& q_b, const Tensor& k_w,
                                       const c10::optional<Tensor>& k_b, const c10::optional<Tensor>& rel, int64_t heads,
                                       const std::string& cls, const std::string& scale, int64_t num_buckets,
                                       int64_t max_distance, double ln_eps) {
  constexpr const char* op = "tupe_bias_backward";
  const auto cfg = tupe_config(pos, ln_w, ln_b, q_w, q_b, k_w, k_b, rel, heads, cls, scale, num_buckets, max_distance, ln_eps, op);
  check_real(grad, op, "grad", &pos, "pos");
  TORCH_CHECK_VALUE(grad.dim() == 3 && grad.size(0) == heads && grad.size(1) == grad.size(2) && grad.size(1) >= 1, "posenc: ",
                    op, ": grad: expected shape [", heads, ", n, n] (dL/dbias), got ", shape_str(grad.sizes()));
  const int64_t n = grad.size(1);
  return guarded([&] {
    auto run = [&](auto tag) {
      using T = decltype(tag);
      const auto p = tupe_params<T>(ln_w, ln_b, q_w, q_b, k_w, k_b, rel);
      posenc::tupe::head_stack<T> up(heads, n);
      std::memcpy(up.data(), grad.data_ptr<T>(), sizeof(T) * static_cast<std::size_t>(heads * n * n));
      const auto g = posenc::tupe::positional_bias_backward<T>(cfg, p, cmap<T>(pos.data_ptr<T>(), pos.size(0), pos.size(1)), up);
      const auto dt = pos.scalar_type();
      Tensor dpos = at::zeros(pos.sizes(), pos.options());
      Eigen::Map<posenc::matrix<T>>(dpos.data_ptr<T>(), pos.size(0), pos.size(1)).topRows(g.pos.rows()) = g.pos;
      std::vector<Tensor> out{dpos,
                              from_matrix<T>(g.pos_ln_weight, {cfg.d}, dt),
                              from_matrix<T>(g.pos_ln_bias, {cfg.d}, dt),
                              from_matrix<T>(g.pos_q_weight, {cfg.d, cfg.d}, dt),
                              q_b ? from_matrix<T>(g.pos_q_bias, {cfg.d}, dt) : at::empty({0}, pos.options()),
                              from_matrix<T>(g.pos_k_weight, {cfg.d, cfg.d}, dt),
                              k_b ? from_matrix<T>(g.pos_k_bias, {cfg.d}, dt) : at::empty({0}, pos.options()),
                              rel ? from_matrix<T>(g.relative_attention_bias, {rel->size(0), rel->size(1)}, dt) : at::empty({0}, pos.options())};
      return out;
    };
    return pos.scalar_type() == at::kFloat ? run(float{}) : run(double{});
  });
}

// ---- autograd ------------------------------------------------------------------------------------

struct TupeBiasBackward {};

Tensor tupe_bias_autograd(const Tensor& pos, const Tensor& ln_w, const Tensor& ln_b, const Tensor& q_w,
                          const c10::optional<Tensor>& q_b, const Tensor& k_w, const c10::optional<Tensor>& k_b,
                          const c10::optional<Tensor>& rel, int64_t n, int64_t heads, const std::string& cls,
                          const std::string& scale, int64_t num_buckets, int64_t max_distance, double ln_eps) {
  const std::function<variable_list()> forward = [&]() -> variable_list {
    return {op_handle<decltype(tupe_bias)>("posenc::tupe_bias")
                .call(pos, ln_w, ln_b, q_w, q_b, k_w, k_b, rel, n, heads, cls, scale, num_buckets, max_distance, ln_eps)};
  };
  backward_fn backward = [heads, cls, scale, num_buckets, max_distance, ln_eps](const variable_list& grads,
                                                                               const variable_list& s) -> variable_list {
    auto r = op_handle<decltype(tupe_bias_backward)>("posenc::tupe_bias_backward")
                 .call(grads[0].contiguous(), s[0], s[1], s[2], s[3], from_placeholder(s[4]), s[5], from_placeholder(s[6]),
                       from_placeholder(s[7]), heads, cls, scale, num_buckets, max_distance, ln_eps);
    variable_list out(8);
    for (int i = 0; i < 8; ++i) out[i] = from_placeholder(s[i]) ? r[i] : Tensor();
    return out;
  };
  return autograd_apply<TupeBiasBackward>(true, forward, backward, pos, ln_w, ln_b, q_w, or_placeholder(q_b, pos), k_w,
                                          or_placeholder(k_b, pos), or_placeholder(rel, pos))[0];
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(posenc, m) {
  m.def("tupe_bias(Tensor pos, Tensor ln_weight, Tensor ln_bias, Tensor q_weight, Tensor? q_bias, Tensor k_weight, "
        "Tensor? k_bias, Tensor? relative_attention_bias, int n, int heads, str cls='reference', str scale='reference', "
        "int num_buckets=32, int max_distance=128, float ln_eps=1e-5) -> Tensor");
  m.def("tupe_bias_backward(Tensor grad, Tensor pos, Tensor ln_weight, Tensor ln_bias, Tensor q_weight, Tensor? q_bias, "
        "Tensor k_weight, Tensor? k_bias, Tensor? relative_attention_bias, int heads, str cls='reference', "
        "str scale='reference', int num_buckets=32, int max_distance=128, float ln_eps=1e-5) -> Tensor[]");
}

TORCH_LIBRARY_IMPL(posenc, CPU, m) {
  m.impl("tupe_bias", TORCH_FN(tupe_bias));
  m.impl("tupe_bias_backward", TORCH_FN(tupe_bias_backward));
}

TORCH_LIBRARY_IMPL(posenc, Autograd, m) { m.impl("tupe_bias", TORCH_FN(tupe_bias_autograd)); }

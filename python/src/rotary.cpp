// SPDX-License-Identifier: MIT
// 1-D RoPE as PyTorch operators: rope_rotate / rope_rotate_ (the rotation of posenc::rotary's
// options), the frequencies of a transformers config (rope_frequencies, rope_frequencies_at,
// rope_layer_types), their exact cos/sin (rope_cos_sin), and rope / rope_ (q or k [B, H, S, D] or
// ragged [T, H, D] by those frequencies, xPos), and the decode steps served from the shared table
// of posenc::rotary::decode_cache (rope_decode / rope_decode_, rope_decode_cos_sin, rope_cache_*).
// rope and rope_rotate are differentiable (the backward is the transposed rotation, the same op).
// Conventions: common.hpp.
#include "common.hpp"
#include "rotary_tensors.hpp"

#include <algorithm>
#include <optional>
#include <span>
#include <tuple>

#include <posenc/rotary.hpp>

using namespace posenc_torch;

namespace {

posenc::rotary::options rope_options(int64_t head_dim, int64_t rotary_dim, const std::string& layout, double base,
                                     double first_position, double position_step, const char* op) {
  TORCH_CHECK_VALUE(head_dim >= 0, "posenc: ", op, ": head_dim: expected >= 0 (0: the whole row), got ", head_dim);
  TORCH_CHECK_VALUE(rotary_dim >= 0, "posenc: ", op, ": rotary_dim: expected >= 0 (0: head_dim), got ", rotary_dim);
  posenc::rotary::options o;
  o.layout = parse_layout(layout, op);
  o.base = base;
  o.head_dim = static_cast<std::size_t>(head_dim);
  o.rotary_dim = static_cast<std::size_t>(rotary_dim);
  o.first_position = first_position;
  o.position_step = position_step;
  return o;
}

/// Rotate x [..., L, C] in place, row i of every leading index at position i (or positions[i]).
void rope_rotate_(Tensor x, const c10::optional<Tensor>& positions, int64_t head_dim, int64_t rotary_dim,
                    const std::string& layout, double base, double first_position, double position_step) {
  constexpr const char* op = "rope_rotate_";
  check_real(x, op, "x");
  TORCH_CHECK_VALUE(x.dim() >= 2, "posenc: ", op, ": x: expected a tensor [..., L, heads * head_dim] with at least 2 dimensions, got shape ",
                    shape_str(x.sizes()));
  const auto o = rope_options(head_dim, rotary_dim, layout, base, first_position, position_step, op);
  const int64_t L = x.size(-2), C = x.size(-1);
  const auto pos = positions_of(positions, L, op);
  const int64_t batch = L * C == 0 ? 0 : x.numel() / (L * C);
  guarded([&] {
    auto run = [&](auto* data) {
      using T = std::remove_pointer_t<decltype(data)>;
      for (int64_t b = 0; b < batch; ++b) {
        Eigen::Map<posenc::table<T>> m(data + b * L * C, L, C);
        if (positions) posenc::rotary::apply_rotary_inplace(m, std::span<const double>(pos), o);
        else posenc::rotary::apply_rotary_inplace(m, o);
      }
    };
    if (x.scalar_type() == at::kFloat) run(x.data_ptr<float>());
    else run(x.data_ptr<double>());
    return 0;
  });
}

/// The rotated copy of x (see rope_rotate_).
Tensor rope_rotate(const Tensor& x, const c10::optional<Tensor>& positions, int64_t head_dim, int64_t rotary_dim,
                   const std::string& layout, double base, double first_position, double position_step) {
  TORCH_CHECK_VALUE(x.defined() && x.device().is_cpu() && x.layout() == at::kStrided, "posenc: rope_rotate: x: expected a ",
                    "dense CPU tensor");
  Tensor y = x.clone(at::MemoryFormat::Contiguous);  // any strides in: the copy is contiguous
  rope_rotate_(y, positions, head_dim, rotary_dim, layout, base, first_position, position_step);
  return y;
}

// ---- rotary from a model config ----------------------------------------------------------------
// rotary_load (config.json text -> inv_freq, attention factor, head_dim, rotary_dim) and
// rotary_apply (one strided [B, H, S, D] or [T, H, D] tensor, rotated in place).

posenc::rotary::longrope_rule parse_longrope(const std::string& s, const char* op) {
  if (s == "init_function") return posenc::rotary::longrope_rule::init_function;
  if (s == "phi3_module") return posenc::rotary::longrope_rule::phi3_module;
  TORCH_CHECK_VALUE(false, "posenc: ", op, ": longrope_rule: expected 'init_function' or 'phi3_module', got '", s, "'");
}

posenc::rotary::semantics parse_semantics(const std::string& s, const char* op) {
  if (s == "transformers_5") return posenc::rotary::semantics::transformers_5;
  if (s == "transformers_4_46") return posenc::rotary::semantics::transformers_4_46;
  TORCH_CHECK_VALUE(false, "posenc: ", op, ": semantics: expected 'transformers_5' or 'transformers_4_46', got '", s, "'");
}

struct rotary_loaded {
  posenc::rotary::frequencies freqs;
  std::vector<double> inv_freq;
  double attention_factor;
  int64_t head_dim, rotary_dim;
  bool depends_on_seq_len;
};

/// The frequencies of one layer type's plan (layer_type None: the config's single plan, or its
/// full_attention plan) for a sequence of seq_len tokens (0: not given).
rotary_loaded rotary_load(const std::string& json, int64_t seq_len, const c10::optional<std::string>& layer_type,
                          posenc::rotary::semantics sem, posenc::rotary::longrope_rule rule) {
  return guarded([&] {
    posenc::rotary::load_options o;
    o.semantics = sem;
    o.longrope = rule;
    const auto mc = posenc::rotary::load_config(json, o);
    const auto& plan = layer_type ? mc.plan_for(*layer_type) : mc.main_plan();
    const auto f = plan.frequencies(static_cast<std::size_t>(seq_len));
    rotary_loaded r;
    r.freqs = f;
    for (auto w : f.inv_freq) r.inv_freq.push_back(static_cast<double>(w));
    r.attention_factor = f.attention_factor;
    r.head_dim = static_cast<int64_t>(plan.context().head_dim);
    r.rotary_dim = static_cast<int64_t>(plan.rotary_dim());
    r.depends_on_seq_len = plan.depends_on_seq_len();
    return r;
  });
}

/// The layer types of a config's plans, in file order (["default"] when not per layer type).
std::vector<std::string> rotary_layer_types(const std::string& json, posenc::rotary::semantics sem) {
  return guarded([&] {
    posenc::rotary::load_options o;
    o.semantics = sem;
    const auto mc = posenc::rotary::load_config(json, o);
    std::vector<std::string> out;
    for (const auto& l : mc.layers) out.push_back(l.layer_type);
    return out;
  });
}

/// Exact cos/sin (HF's duplicated layout [c | c], [s | s]) of arbitrary positions, rounded once to T.
template <class T>
void rotary_cos_sin(const posenc::rotary::frequencies& f, std::span<const double> positions, T* cos, T* sin) {
  const auto t = posenc::rotary::table<T>(f, positions, posenc::rotary::table_layout::duplicated);
  std::memcpy(cos, t.cos.data(), sizeof(T) * static_cast<std::size_t>(t.cos.size()));
  std::memcpy(sin, t.sin.data(), sizeof(T) * static_cast<std::size_t>(t.sin.size()));
}

struct rotary_call {
  posenc::rotary::frequencies freqs;
  posenc::rotary::apply_options opt;
  bool key = false;  // rotate as k (xPos: the inverse scale)
};

/// Rotate x in place. Dense: x [B, H, S, D] (any strides, D contiguous), positions offsets[b] + s,
/// or position_ids [B, S] (per token). Ragged: x [T, H, D] with cu_seqlens [B + 1] (positions
/// offsets[b] + t - cu_seqlens[b]) or position_ids [T].
template <class T>
void rotary_apply(T* data, const Tensor& x, const rotary_call& c, const std::vector<int64_t>& cu,
                  const std::vector<int64_t>& offsets, const std::vector<int64_t>& pos_ids) {
  namespace rt = posenc::rotary;
  const auto sz = [&](int i) { return static_cast<std::size_t>(x.size(i)); };
  if (x.dim() == 4) {
    rt::dense_view<T> v{data, {sz(0), sz(1), sz(2), sz(3)}, {x.stride(0), x.stride(1), x.stride(2), x.stride(3)}};
    rt::dense_view<T> none{data, {sz(0), 0, sz(2), sz(3)}, {x.stride(0), x.stride(1), x.stride(2), x.stride(3)}};
    if (pos_ids.empty()) {
      if (c.key) rt::apply_inplace<T>(none, v, c.freqs, offsets, c.opt);
      else rt::apply_inplace<T>(v, rt::dense_view<T>{}, c.freqs, offsets, c.opt);
      return;
    }
    // per-token positions: sequence b as S one-token sequences [S, H, D] at offsets position_ids[b]
    const int64_t S = x.size(2);
    std::vector<int64_t> unit(static_cast<std::size_t>(S) + 1);
    for (int64_t s = 0; s <= S; ++s) unit[static_cast<std::size_t>(s)] = s;
    for (int64_t b = 0; b < x.size(0); ++b) {
      T* base = data + b * x.stride(0);
      rt::ragged_view<T> r{base, {sz(2), sz(1), sz(3)}, {x.stride(2), x.stride(1), x.stride(3)}};
      rt::ragged_view<T> r0{base, {sz(2), 0, sz(3)}, {x.stride(2), x.stride(1), x.stride(3)}};
      std::span<const int64_t> off(pos_ids.data() + b * S, static_cast<std::size_t>(S));
      if (c.key) rt::apply_ragged_inplace<T, int64_t>(r0, r, unit, off, c.freqs, c.opt);
      else rt::apply_ragged_inplace<T, int64_t>(r, rt::ragged_view<T>{}, unit, off, c.freqs, c.opt);
    }
    return;
  }
  rt::ragged_view<T> v{data, {sz(0), sz(1), sz(2)}, {x.stride(0), x.stride(1), x.stride(2)}};
  rt::ragged_view<T> none{data, {sz(0), 0, sz(2)}, {x.stride(0), x.stride(1), x.stride(2)}};
  std::vector<int64_t> unit;
  const std::vector<int64_t>* cs = &cu;
  const std::vector<int64_t>* os = &offsets;
  if (!pos_ids.empty() || cu.empty()) {  // per token (position_ids), or one sequence from 0
    unit.resize(static_cast<std::size_t>(x.size(0)) + 1);
    for (std::size_t t = 0; t < unit.size(); ++t) unit[t] = static_cast<int64_t>(t);
    if (pos_ids.empty()) unit = {0, x.size(0)};
    cs = &unit;
    os = &pos_ids;
  }
  if (c.key) rt::apply_ragged_inplace<T, int64_t>(none, v, *cs, *os, c.freqs, c.opt);
  else rt::apply_ragged_inplace<T, int64_t>(v, rt::ragged_view<T>{}, *cs, *os, c.freqs, c.opt);
}

// ---- rotary ops ----------------------------------------------------------------------------------

std::tuple<Tensor, double, int64_t, int64_t, bool> rope_frequencies(const std::string& config_json, int64_t seq_len,
                                                                    const c10::optional<std::string>& layer_type,
                                                                    const std::string& semantics,
                                                                    const std::string& longrope_rule, bool exact) {
  constexpr const char* op = "rope_frequencies";
  TORCH_CHECK_VALUE(seq_len >= 0, "posenc: ", op, ": seq_len: expected >= 0 (0: not given), got ", seq_len);
  const auto r = rotary_load(config_json, seq_len, layer_type, parse_semantics(semantics, op),
                             parse_longrope(longrope_rule, op));
  Tensor inv;
  if (exact) {
    inv = exact_frequencies_tensor(r.freqs);
  } else {
    inv = at::empty({static_cast<int64_t>(r.inv_freq.size())}, at::TensorOptions().dtype(at::kDouble));
    std::memcpy(inv.data_ptr<double>(), r.inv_freq.data(), sizeof(double) * r.inv_freq.size());
  }
  return std::make_tuple(inv, r.attention_factor, r.head_dim, r.rotary_dim, r.depends_on_seq_len);
}

/// The exact frequencies [pairs, 2, 3] of a config's plan for seq_len = max(positions) + 1 (0, not
/// given, when positions is empty): the sequence length is read from the tensor here, so that a
/// caller (a compiled graph) never turns it into a Python number. pairs: the expected count.
Tensor rope_frequencies_at(const Tensor& positions, const std::string& config_json, int64_t pairs,
                           const c10::optional<std::string>& layer_type, const std::string& semantics,
                           const std::string& longrope_rule) {
  constexpr const char* op = "rope_frequencies_at";
  TORCH_CHECK_VALUE(positions.device().is_cpu() && positions.layout() == at::kStrided, "posenc: ", op,
                    ": positions: expected a dense CPU tensor, got device '", positions.device().str(), "' and layout ",
                    positions.layout());
  TORCH_CHECK_TYPE(positions.scalar_type() == at::kLong || positions.scalar_type() == at::kInt, "posenc: ", op,
                   ": positions: expected dtype int64 or int32, got ", dtype_name(positions.scalar_type()));
  int64_t seq_len = 0;
  if (positions.numel() > 0) {
    const int64_t mx = positions.max().item<int64_t>();
    TORCH_CHECK_VALUE(mx >= 0 && mx < (int64_t{1} << 53), "posenc: ", op,
                      ": positions: expected a largest position in 0 .. 2^53 - 1, got ", mx);
    seq_len = mx + 1;
  }
  const auto r = rotary_load(config_json, seq_len, layer_type, parse_semantics(semantics, op),
                             parse_longrope(longrope_rule, op));
  TORCH_CHECK_VALUE(static_cast<int64_t>(r.inv_freq.size()) == pairs, "posenc: ", op, ": pairs: expected ",
                    r.inv_freq.size(), " (the config's rotary_dim / 2), got ", pairs);
  return exact_frequencies_tensor(r.freqs);
}

std::vector<std::string> rope_layer_types(const std::string& config_json, const std::string& semantics) {
  return rotary_layer_types(config_json, parse_semantics(semantics, "rope_layer_types"));
}

/// (cos, sin), each [*position_ids.shape, 2 * inv_freq.numel()] in dtype: the exact
/// cos/sin(position * inv_freq[k]) * attention_factor in HF's duplicated layout.
std::tuple<Tensor, Tensor> rope_cos_sin(const Tensor& position_ids, const Tensor& inv_freq, double attention_factor,
                                        at::ScalarType dtype) {
  constexpr const char* op = "rope_cos_sin";
  const auto w = frequencies_of(inv_freq, attention_factor, op, "inv_freq");
  TORCH_CHECK_VALUE(position_ids.device().is_cpu(), "posenc: ", op, ": position_ids: expected a CPU tensor, got device '",
                    position_ids.device().str(), "'");
  TORCH_CHECK_TYPE(dtype == at::kFloat || dtype == at::kDouble || dtype == at::kHalf || dtype == at::kBFloat16, "posenc: ",
                   op, ": dtype: expected bfloat16, float16, float32 or float64, got ", dtype_name(dtype));
  Tensor p = position_ids.to(at::kDouble).contiguous();
  auto shape = position_ids.sizes().vec();
  shape.push_back(2 * inv_freq.size(0));
  Tensor c = at::empty(shape, at::TensorOptions().dtype(dtype)), s = at::empty(shape, at::TensorOptions().dtype(dtype));
  std::span<const double> pos(p.data_ptr<double>(), static_cast<std::size_t>(p.numel()));
  guarded([&] {
    switch (dtype) {
      case at::kFloat: rotary_cos_sin<float>(w, pos, c.data_ptr<float>(), s.data_ptr<float>()); break;
      case at::kDouble: rotary_cos_sin<double>(w, pos, c.data_ptr<double>(), s.data_ptr<double>()); break;
      case at::kHalf:
        rotary_cos_sin<Eigen::half>(w, pos, reinterpret_cast<Eigen::half*>(c.data_ptr()),
                                    reinterpret_cast<Eigen::half*>(s.data_ptr()));
        break;
      default:
        rotary_cos_sin<Eigen::bfloat16>(w, pos, reinterpret_cast<Eigen::bfloat16*>(c.data_ptr()),
                                        reinterpret_cast<Eigen::bfloat16*>(s.data_ptr()));
    }
    return 0;
  });
  return {c, s};
}

/// Rotate x in place by RoPE with frequencies inv_freq (float64 [rotary_dim / 2]); transpose:
/// the inverse rotation R^T = J R J (J negates the second element of each pair), the backward.
void rope_(Tensor x, const Tensor& inv_freq, double attention_factor, const c10::optional<Tensor>& position_ids,
           const c10::optional<Tensor>& cu_seqlens, const c10::optional<Tensor>& offsets, const std::string& layout,
           bool key, bool transpose, bool xpos, double xpos_gamma, double xpos_scale_base, double xpos_center) {
  constexpr const char* op = "rope_";
  check_rope_x(x, op);
  const auto freqs = frequencies_of(inv_freq, attention_factor, op, "inv_freq");
  const bool ragged = x.dim() == 3;
  if (position_ids) {
    const auto want = ragged ? std::vector<int64_t>{x.size(0)} : std::vector<int64_t>{x.size(0), x.size(2)};
    TORCH_CHECK_VALUE(position_ids->sizes().vec() == want, "posenc: ", op, ": position_ids: expected shape ",
                      shape_str(want), ragged ? " (one position per token)" : " ([batch, seq], one position per token)",
                      ", got ", shape_str(position_ids->sizes()));
    TORCH_CHECK_VALUE(!cu_seqlens && !offsets, "posenc: ", op,
                      ": position_ids: expected alone (cu_seqlens and offsets must be None with per-token positions)");
  }
  TORCH_CHECK_VALUE(!cu_seqlens || ragged, "posenc: ", op, ": cu_seqlens: expected only with ragged x [tokens, heads, head_dim], got x of shape ",
                    shape_str(x.sizes()));
  const auto pos = index_vector(position_ids, op, "position_ids");
  const auto cu = index_vector(cu_seqlens, op, "cu_seqlens");
  const auto off = index_vector(offsets, op, "offsets");
  TORCH_CHECK_VALUE(!ragged || off.empty() || !cu.empty(), "posenc: ", op,
                    ": offsets: expected cu_seqlens with offsets for ragged x (one offset per sequence)");
  for (std::size_t t = 0; t < pos.size(); ++t) {
    TORCH_CHECK_VALUE(pos[t] >= 0, "posenc: ", op, ": position_ids: expected positions >= 0, got ", pos[t], " at index ", t);
    TORCH_CHECK_VALUE(pos[t] < (int64_t{1} << 53), "posenc: ", op,
                      ": position_ids: expected positions <= 2^53 - 1 (exact in a double), got ", pos[t], " at index ", t);
  }
  rotary_call c;
  c.freqs = freqs;
  c.opt.layout = parse_layout(layout, op);
  c.opt.xpos.enabled = xpos;
  c.opt.xpos.gamma = xpos_gamma;
  c.opt.xpos.scale_base = xpos_scale_base;
  c.opt.xpos.center = xpos_center;
  c.key = key;
  const int64_t D = x.size(-1), half = inv_freq.size(0);
  // J: negate the second element of every rotated pair
  auto flip = [&] {
    if (!transpose || half == 0 || half * 2 > D) return;
    if (c.opt.layout == posenc::sinusoidal::layout::half) x.narrow(-1, half, half).neg_();
    else x.slice(-1, 1, 2 * half, 2).neg_();  // columns 1, 3, ..., 2 half - 1
  };
  flip();
  guarded([&] {
    switch (x.scalar_type()) {
      case at::kFloat: rotary_apply<float>(x.data_ptr<float>(), x, c, cu, off, pos); break;
      case at::kDouble: rotary_apply<double>(x.data_ptr<double>(), x, c, cu, off, pos); break;
      case at::kHalf: rotary_apply<Eigen::half>(reinterpret_cast<Eigen::half*>(x.data_ptr<at::Half>()), x, c, cu, off, pos); break;
      default:
        rotary_apply<Eigen::bfloat16>(reinterpret_cast<Eigen::bfloat16*>(x.data_ptr<at::BFloat16>()), x, c, cu, off, pos);
    }
    return 0;
  });
  flip();
}

Tensor rope(const Tensor& x, const Tensor& inv_freq, double attention_factor, const c10::optional<Tensor>& position_ids,
            const c10::optional<Tensor>& cu_seqlens, const c10::optional<Tensor>& offsets, const std::string& layout,
            bool key, bool transpose, bool xpos, double xpos_gamma, double xpos_scale_base, double xpos_center) {
  TORCH_CHECK_VALUE(x.defined() && x.device().is_cpu() && x.layout() == at::kStrided, "posenc: rope: x: expected a ",
                    "dense CPU tensor");
  Tensor y = x.clone(at::MemoryFormat::Contiguous);  // any strides in: the copy is contiguous
  rope_(y, inv_freq, attention_factor, position_ids, cu_seqlens, offsets, layout, key, transpose, xpos, xpos_gamma,
        xpos_scale_base, xpos_center);
  return y;
}

// ---- autograd ------------------------------------------------------------------------------------

struct RopeBackward {};
struct RopeRotateBackward {};

Tensor rope_autograd(const Tensor& x, const Tensor& inv_freq, double af, const c10::optional<Tensor>& position_ids,
                     const c10::optional<Tensor>& cu_seqlens, const c10::optional<Tensor>& offsets,
                     const std::string& layout, bool key, bool transpose, bool xpos, double gamma, double sb,
                     double center) {
  const std::function<variable_list()> forward = [&]() -> variable_list {
    return {op_handle<decltype(rope)>("posenc::rope")
                .call(x, inv_freq, af, position_ids, cu_seqlens, offsets, layout, key, transpose, xpos, gamma, sb, center)};
  };
  backward_fn backward = [=](const variable_list& grads, const variable_list&) -> variable_list {
    // y = f S R x with S diagonal (xPos) and R orthogonal: dx = f S R^T dy, the transposed op
    return {op_handle<decltype(rope)>("posenc::rope")
                .call(grads[0], inv_freq, af, position_ids, cu_seqlens, offsets, layout, key, !transpose, xpos, gamma,
                      sb, center),
            Tensor()};
  };
  return autograd_apply<RopeBackward>(false, forward, backward, x, inv_freq)[0];
}

Tensor rope_rotate_autograd(const Tensor& x, const c10::optional<Tensor>& positions, int64_t head_dim, int64_t rotary_dim,
                            const std::string& layout, double base, double first, double step) {
  const std::function<variable_list()> forward = [&]() -> variable_list {
    return {op_handle<decltype(rope_rotate)>("posenc::rope_rotate")
                .call(x, positions, head_dim, rotary_dim, layout, base, first, step)};
  };
  backward_fn backward = [=](const variable_list& grads, const variable_list&) -> variable_list {
    // R is orthogonal: dx = R(-position) dy, the same op at negated positions
    auto pos = positions;
    if (pos) pos = pos->neg();
    return {op_handle<decltype(rope_rotate)>("posenc::rope_rotate")
                .call(grads[0], pos, head_dim, rotary_dim, layout, base, -first, -step)};
  };
  return autograd_apply<RopeRotateBackward>(false, forward, backward, x)[0];
}

}  // namespace

// ---- RoPE decode steps from the shared table (posenc/rotary/decode_cache.hpp) --------------------
//
// rope_decode_ / rope_decode: rope_ / rope (no xPos, no transpose) of q and, when given, k (one
// call: the fixed cost of a call once) that serve a decode step, one token per sequence (dense
// [B, H, 1, D] with offsets [B] or position_ids [B, 1]; ragged [T, H, D] with position_ids [T],
// or cu_seqlens of single tokens and offsets) from the process-wide table of
// posenc::rotary::decode_cache: bitwise rope_'s result. Every other call (and any bad input, for
// rope_'s messages) is rope_ itself, on q and on k. rope_decode_cos_sin: rope_cos_sin with integer
// positions gathered from the shared cos/sin rows (what patch_rotary's modules return). rope_cache_info / _clear / _limits
// look at and bound the table cache.
namespace decode_ops {

namespace rt = posenc::rotary;

/// The integers of t (int64 or int32, any strides) as int64, in row-major order.
std::vector<int64_t> integers_of(const Tensor& t) {
  if (t.scalar_type() == at::kLong && t.is_contiguous())
    return std::vector<int64_t>(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel());
  const Tensor c = t.to(at::kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

/// The positions of a decode step, one per row of x (dense: per sequence; ragged: per token), or
/// std::nullopt where the call is not one (rope_ serves it).
std::optional<std::vector<int64_t>> decode_positions(const Tensor& x, const c10::optional<Tensor>& position_ids,
                                                     const c10::optional<Tensor>& cu_seqlens,
                                                     const c10::optional<Tensor>& offsets) {
  if (!x.defined() || !x.device().is_cpu() || x.layout() != at::kStrided || (x.dim() != 4 && x.dim() != 3))
    return std::nullopt;
  const auto plain = [](const c10::optional<Tensor>& t) {
    return t && t->device().is_cpu() && t->layout() == at::kStrided &&
           (t->scalar_type() == at::kLong || t->scalar_type() == at::kInt);
  };
  const int64_t rows = x.size(0);
  std::vector<int64_t> pos;
  if (position_ids) {
    const auto want = x.dim() == 4 ? std::vector<int64_t>{rows, 1} : std::vector<int64_t>{rows};
    if (!plain(position_ids) || cu_seqlens || offsets || position_ids->sizes().vec() != want ||
        (x.dim() == 4 && x.size(2) != 1))
      return std::nullopt;
    pos = integers_of(*position_ids);
  } else if (x.dim() == 4) {
    if (x.size(2) != 1 || cu_seqlens || (offsets && (!plain(offsets) || offsets->sizes().vec() != std::vector<int64_t>{rows})))
      return std::nullopt;
    pos = offsets ? integers_of(*offsets) : std::vector<int64_t>(static_cast<std::size_t>(rows), 0);
  } else {  // ragged: single-token sequences
    if (!plain(cu_seqlens) || cu_seqlens->sizes().vec() != std::vector<int64_t>{rows + 1} ||
        (offsets && (!plain(offsets) || offsets->sizes().vec() != std::vector<int64_t>{rows})))
      return std::nullopt;
    const auto cu = integers_of(*cu_seqlens);
    for (int64_t t = 0; t <= rows; ++t)
      if (cu[static_cast<std::size_t>(t)] != t) return std::nullopt;
    pos = offsets ? integers_of(*offsets) : std::vector<int64_t>(static_cast<std::size_t>(rows), 0);
  }
  for (const int64_t p : pos)
    if (p < 0 || p >= (int64_t{1} << 53)) return std::nullopt;  // rope_ names the bad position
  return pos;
}

/// Whether k can ride along q in one decode call: dense or ragged like q, the same dtype, batch
/// (tokens), seq and head_dim (its heads may differ: GQA).
bool pairs_with(const Tensor& q, const Tensor& k) {
  if (!k.defined() || !k.device().is_cpu() || k.layout() != at::kStrided || k.dim() != q.dim() ||
      k.scalar_type() != q.scalar_type())
    return false;
  for (int64_t d = 0; d < q.dim(); ++d)
    if (d != 1 && k.size(d) != q.size(d)) return false;
  return true;
}

void rope_decode_(Tensor q, const c10::optional<Tensor>& k, const Tensor& inv_freq, double attention_factor,
                  const c10::optional<Tensor>& position_ids, const c10::optional<Tensor>& cu_seqlens,
                  const c10::optional<Tensor>& offsets, const std::string& layout) {
  constexpr const char* op = "rope_decode_";
  auto pos = decode_positions(q, position_ids, cu_seqlens, offsets);
  if (!pos || pos->empty() || (k && !pairs_with(q, *k))) {  // rope_ itself (its checks and messages)
    rope_(q, inv_freq, attention_factor, position_ids, cu_seqlens, offsets, layout, false, false, false, 0.4, 512.0, 0.0);
    if (k)
      rope_(*k, inv_freq, attention_factor, position_ids, cu_seqlens, offsets, layout, true, false, false, 0.4, 512.0,
            0.0);
    return;
  }
  check_rope_x(q, op, "q");
  if (k) check_rope_x(*k, op, "k");
  const auto freqs = frequencies_of(inv_freq, attention_factor, op, "inv_freq");
  rt::apply_options opt;
  opt.layout = parse_layout(layout, op);
  const std::size_t threads = static_cast<std::size_t>(std::max(1, at::get_num_threads()));
  // rows split on torch's threads where a part holds >= 2^15 elements (below, one thread)
  const int64_t row_elems = std::max<int64_t>(1, (q.numel() + (k ? k->numel() : 0)) / std::max<int64_t>(1, q.size(0)));
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 15) / row_elems);
  const auto for_rows = [grain](std::size_t n, auto&& f) {
    at::parallel_for(0, static_cast<int64_t>(n), grain,
                     [&](int64_t b, int64_t e) { f(static_cast<std::size_t>(b), static_cast<std::size_t>(e)); });
  };
  auto& cache = rt::decode_cache::global();
  const std::span<const int64_t> ids(*pos);
  auto run = [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const auto ptr = [](const Tensor& t) { return static_cast<T*>(t.data_ptr()); };
    const auto sz = [](const Tensor& t, int i) { return static_cast<std::size_t>(t.size(i)); };
    if (q.dim() == 4) {
      const auto view = [&](const Tensor& t) {
        return rt::dense_view<T>{ptr(t), {sz(t, 0), sz(t, 1), sz(t, 2), sz(t, 3)},
                                 {t.stride(0), t.stride(1), t.stride(2), t.stride(3)}};
      };
      rt::detail::apply_decode_dense<T>(view(q), k ? view(*k) : rt::dense_view<T>{}, freqs, ids, opt, cache, threads,
                                        for_rows);
    } else {
      const auto view = [&](const Tensor& t) {
        return rt::ragged_view<T>{ptr(t), {sz(t, 0), sz(t, 1), sz(t, 2)}, {t.stride(0), t.stride(1), t.stride(2)}};
      };
      rt::detail::apply_decode_ragged<T>(view(q), k ? view(*k) : rt::ragged_view<T>{}, ids, freqs, opt, cache, threads,
                                         for_rows);
    }
  };
  guarded([&] {
    switch (q.scalar_type()) {
      case at::kFloat: run(static_cast<float*>(nullptr)); break;
      case at::kDouble: run(static_cast<double*>(nullptr)); break;
      case at::kHalf: run(static_cast<Eigen::half*>(nullptr)); break;
      default: run(static_cast<Eigen::bfloat16*>(nullptr));
    }
    return 0;
  });
}

std::vector<Tensor> rope_decode(const Tensor& q, const c10::optional<Tensor>& k, const Tensor& inv_freq,
                                double attention_factor, const c10::optional<Tensor>& position_ids,
                                const c10::optional<Tensor>& cu_seqlens, const c10::optional<Tensor>& offsets,
                                const std::string& layout) {
  TORCH_CHECK_VALUE(q.defined() && q.device().is_cpu() && q.layout() == at::kStrided, "posenc: rope_decode: q: expected a ",
                    "dense CPU tensor");
  TORCH_CHECK_VALUE(!k || (k->defined() && k->device().is_cpu() && k->layout() == at::kStrided),
                    "posenc: rope_decode: k: expected a dense CPU tensor or None");
  std::vector<Tensor> out{q.clone(at::MemoryFormat::Contiguous)};
  if (k) out.push_back(k->clone(at::MemoryFormat::Contiguous));
  rope_decode_(out[0], k ? c10::optional<Tensor>(out[1]) : c10::nullopt, inv_freq, attention_factor, position_ids,
               cu_seqlens, offsets, layout);
  return out;
}

/// rope_cos_sin, bitwise, with integer positions gathered from the shared cos/sin table of
/// (frequencies, dtype) (decode_cache::cos_sin: rotary::table's rows); anything else (real
/// positions, bad input, a position past the cap) is rope_cos_sin itself.
std::tuple<Tensor, Tensor> rope_decode_cos_sin(const Tensor& position_ids, const Tensor& inv_freq, double attention_factor,
                                               at::ScalarType dtype) {
  constexpr const char* op = "rope_decode_cos_sin";
  const auto exact = [&] { return rope_cos_sin(position_ids, inv_freq, attention_factor, dtype); };
  if (!position_ids.defined() || !position_ids.device().is_cpu() || position_ids.layout() != at::kStrided ||
      (position_ids.scalar_type() != at::kLong && position_ids.scalar_type() != at::kInt) || position_ids.numel() == 0 ||
      !inv_freq.defined() || !inv_freq.device().is_cpu() || inv_freq.layout() != at::kStrided ||
      inv_freq.scalar_type() != at::kDouble ||
      (dtype != at::kFloat && dtype != at::kDouble && dtype != at::kHalf && dtype != at::kBFloat16))
    return exact();
  const auto pos = integers_of(position_ids);
  const auto range = std::minmax_element(pos.begin(), pos.end());
  const auto lo = range.first, hi = range.second;  // not a structured binding: the lambda below captures hi
  if (*lo < 0 || *hi >= (int64_t{1} << 53)) return exact();
  const auto w = frequencies_of(inv_freq, attention_factor, op, "inv_freq");
  const auto m = static_cast<int64_t>(w.inv_freq.size());
  auto shape = position_ids.sizes().vec();
  shape.push_back(2 * m);
  const std::size_t threads = static_cast<std::size_t>(std::max(1, at::get_num_threads()));
  Tensor c, s;
  auto gather = [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const auto rows = rt::decode_cache::global().cos_sin<T>(w, *hi, threads);
    if (!rows) return false;
    c = at::empty(shape, at::TensorOptions().dtype(dtype));
    s = at::empty(shape, at::TensorOptions().dtype(dtype));
    T* cp = static_cast<T*>(c.data_ptr());
    T* sp = static_cast<T*>(s.data_ptr());
    const auto h = static_cast<std::size_t>(m);
    for (std::size_t i = 0; i < pos.size(); ++i) {  // HF's duplicated layout: [c | c], [s | s]
      const T* r = rows->row(static_cast<std::size_t>(pos[i]));
      std::copy_n(r, h, cp + i * 2 * h);
      std::copy_n(r, h, cp + i * 2 * h + h);
      std::copy_n(r + h, h, sp + i * 2 * h);
      std::copy_n(r + h, h, sp + i * 2 * h + h);
    }
    return true;
  };
  const bool done = guarded([&] {
    switch (dtype) {
      case at::kFloat: return gather(static_cast<float*>(nullptr));
      case at::kDouble: return gather(static_cast<double*>(nullptr));
      case at::kHalf: return gather(static_cast<Eigen::half*>(nullptr));
      default: return gather(static_cast<Eigen::bfloat16*>(nullptr));
    }
  });
  return done ? std::make_tuple(c, s) : exact();
}

/// (sets of frequencies with a table, sets remembered, bytes of the tables, tables built).
std::tuple<int64_t, int64_t, int64_t, int64_t> rope_cache_info() {
  const auto s = rt::decode_cache::global().stats();
  return {static_cast<int64_t>(s.tables), static_cast<int64_t>(s.keys), static_cast<int64_t>(s.bytes),
          static_cast<int64_t>(s.builds)};
}

void rope_cache_clear() { rt::decode_cache::global().clear(); }

/// Set the bounds given (>= 0; -1 keeps one) and return (max_positions, max_bytes, max_tables).
std::tuple<int64_t, int64_t, int64_t> rope_cache_limits(int64_t max_positions, int64_t max_bytes, int64_t max_tables) {
  constexpr const char* op = "rope_cache_limits";
  TORCH_CHECK_VALUE(max_positions >= -1, "posenc: ", op, ": max_positions: expected >= 0 (-1: unchanged), got ", max_positions);
  TORCH_CHECK_VALUE(max_bytes >= -1, "posenc: ", op, ": max_bytes: expected >= 0 (-1: unchanged), got ", max_bytes);
  TORCH_CHECK_VALUE(max_tables >= -1, "posenc: ", op, ": max_tables: expected >= 1 (-1: unchanged), got ", max_tables);
  auto& cache = rt::decode_cache::global();
  auto l = cache.limits();
  if (max_positions >= 0) l.max_positions = static_cast<std::uint64_t>(max_positions);
  if (max_bytes >= 0) l.max_bytes = static_cast<std::size_t>(max_bytes);
  if (max_tables >= 0) l.max_tables = static_cast<std::size_t>(max_tables);
  guarded([&] {
    cache.set_limits(l);
    return 0;
  });
  return {static_cast<int64_t>(l.max_positions), static_cast<int64_t>(l.max_bytes), static_cast<int64_t>(l.max_tables)};
}

}  // namespace decode_ops

TORCH_LIBRARY_FRAGMENT(posenc, m) {
  m.def("rope_rotate_(Tensor(a!) x, Tensor? positions=None, int head_dim=0, int rotary_dim=0, str layout='interleaved', "
        "float base=10000.0, float first_position=0.0, float position_step=1.0) -> ()");
  m.def("rope_rotate(Tensor x, Tensor? positions=None, int head_dim=0, int rotary_dim=0, str layout='interleaved', "
        "float base=10000.0, float first_position=0.0, float position_step=1.0) -> Tensor");
  m.def("rope_frequencies(str config_json, int seq_len=0, str? layer_type=None, str semantics='transformers_5', "
        "str longrope_rule='init_function', bool exact=False) -> (Tensor, float, int, int, bool)");
  m.def("rope_layer_types(str config_json, str semantics='transformers_5') -> str[]");
  m.def("rope_frequencies_at(Tensor positions, str config_json, int pairs, str? layer_type=None, "
        "str semantics='transformers_5', str longrope_rule='init_function') -> Tensor");
  m.def("rope_cos_sin(Tensor position_ids, Tensor inv_freq, float attention_factor=1.0, ScalarType dtype=6) "
        "-> (Tensor, Tensor)");
  m.def("rope(Tensor x, Tensor inv_freq, float attention_factor=1.0, Tensor? position_ids=None, Tensor? cu_seqlens=None, "
        "Tensor? offsets=None, str layout='half', bool key=False, bool transpose=False, bool xpos=False, "
        "float xpos_gamma=0.4, float xpos_scale_base=512.0, float xpos_center=0.0) -> Tensor");
  m.def("rope_(Tensor(a!) x, Tensor inv_freq, float attention_factor=1.0, Tensor? position_ids=None, "
        "Tensor? cu_seqlens=None, Tensor? offsets=None, str layout='half', bool key=False, bool transpose=False, "
        "bool xpos=False, float xpos_gamma=0.4, float xpos_scale_base=512.0, float xpos_center=0.0) -> ()");
  m.def("rope_decode(Tensor q, Tensor? k, Tensor inv_freq, float attention_factor=1.0, Tensor? position_ids=None, "
        "Tensor? cu_seqlens=None, Tensor? offsets=None, str layout='half') -> Tensor[]");
  m.def("rope_decode_(Tensor(a!) q, Tensor(b!)? k, Tensor inv_freq, float attention_factor=1.0, "
        "Tensor? position_ids=None, Tensor? cu_seqlens=None, Tensor? offsets=None, str layout='half') -> ()");
  m.def("rope_decode_cos_sin(Tensor position_ids, Tensor inv_freq, float attention_factor=1.0, ScalarType dtype=6) "
        "-> (Tensor, Tensor)");
  m.def("rope_cache_info() -> (int, int, int, int)", &decode_ops::rope_cache_info);
  m.def("rope_cache_clear() -> ()", &decode_ops::rope_cache_clear);
  m.def("rope_cache_limits(int max_positions=-1, int max_bytes=-1, int max_tables=-1) -> (int, int, int)",
        &decode_ops::rope_cache_limits);
}

TORCH_LIBRARY_IMPL(posenc, CompositeExplicitAutograd, m) {
  m.impl("rope_frequencies", TORCH_FN(rope_frequencies));
  m.impl("rope_layer_types", TORCH_FN(rope_layer_types));
}

TORCH_LIBRARY_IMPL(posenc, CPU, m) {
  m.impl("rope_rotate_", TORCH_FN(rope_rotate_));
  m.impl("rope_rotate", TORCH_FN(rope_rotate));
  m.impl("rope", TORCH_FN(rope));
  m.impl("rope_", TORCH_FN(rope_));
  m.impl("rope_cos_sin", TORCH_FN(rope_cos_sin));
  m.impl("rope_frequencies_at", TORCH_FN(rope_frequencies_at));
  m.impl("rope_decode", TORCH_FN(decode_ops::rope_decode));
  m.impl("rope_decode_", TORCH_FN(decode_ops::rope_decode_));
  m.impl("rope_decode_cos_sin", TORCH_FN(decode_ops::rope_decode_cos_sin));
}

TORCH_LIBRARY_IMPL(posenc, Autograd, m) {
  m.impl("rope", TORCH_FN(rope_autograd));
  m.impl("rope_rotate", TORCH_FN(rope_rotate_autograd));
}

// SPDX-License-Identifier: MIT
// Multi-axis RoPE as PyTorch operators: the M-RoPE of vision-language models (mrope_config,
// axes_cos_sin, axes_rope / axes_rope_, get_rope_index) and the multi-axis layouts of diffusion
// transformers and vision encoders by model name (axes_layout_frequencies, axes_layout_positions,
// for python/posenc/layouts.py). axes_rope is differentiable (the backward rotates by the negated
// positions, the same op). Conventions: common.hpp.
#include "common.hpp"
#include "rotary_tensors.hpp"

#include <array>
#include <span>
#include <tuple>

#include <posenc/rotary.hpp>

using namespace posenc_torch;

namespace {

// ---- multi-axis RoPE (M-RoPE of vision-language models) ------------------------------------------
//
// Frequencies travel as float64 tensors without rounding: freqs [pairs] (each pair's frequency, a
// double) or [pairs, 2, 3] (the long double inv_freq and inv_freq_lo of rotary::frequencies, each
// split into three non-overlapping doubles whose sum is exact), axis int64 [pairs] (the position
// axis turning pair k) or [2, pairs] (split-half, HunYuan-VL's xdrope: the axes of each pair's
// first and second column), position_ids int64 [A, ...].

posenc::rotary::axis_frequencies axis_freqs_of(const Tensor& freqs, const Tensor& axis, int64_t axes,
                                               double attention_factor, const char* op) {
  posenc::rotary::axis_frequencies f;
  f.freqs = frequencies_of(freqs, attention_factor, op, "freqs");
  check_storage(axis, op, "axis");
  TORCH_CHECK_TYPE(axis.scalar_type() == at::kLong, "posenc: ", op, ": axis: expected dtype int64, got ",
                   dtype_name(axis.scalar_type()));
  // [2, pairs]: split-half (HunYuan-VL's xdrope): row 0 the axis of each pair's first column, row 1 of its second
  const bool split = axis.dim() == 2;
  TORCH_CHECK_VALUE((axis.dim() == 1 && axis.size(0) == freqs.size(0)) ||
                        (split && axis.size(0) == 2 && axis.size(1) == freqs.size(0)),
                    "posenc: ", op, ": axis: expected [pairs] = [", freqs.size(0),
                    "] (one position axis per pair) or [2, pairs] = [2, ", freqs.size(0),
                    "] (split-half: first and second column), got shape ", shape_str(axis.sizes()));
  TORCH_CHECK_VALUE(axes >= 1 && axes <= static_cast<int64_t>(posenc::rotary::max_axes), "posenc: ", op,
                    ": position_ids: expected 1 .. ", posenc::rotary::max_axes, " axes in dimension 0, got ", axes);
  f.axes = static_cast<std::size_t>(axes);
  const Tensor ac = axis.contiguous();
  const int64_t* a = ac.data_ptr<int64_t>();
  for (int64_t k = 0; k < freqs.size(0); ++k) {
    TORCH_CHECK_VALUE(a[k] >= 0 && a[k] < axes, "posenc: ", op, ": axis[", k, "]: expected an axis in 0 .. ",
                      axes - 1, " (position_ids has ", axes, " axes), got ", a[k]);
    f.axis.push_back(static_cast<std::uint8_t>(a[k]));
  }
  for (int64_t k = 0; split && k < freqs.size(0); ++k) {
    const int64_t v = a[freqs.size(0) + k];
    TORCH_CHECK_VALUE(v >= 0 && v < axes, "posenc: ", op, ": axis[1, ", k, "]: expected an axis in 0 .. ", axes - 1,
                      " (position_ids has ", axes, " axes), got ", v);
    f.axis_second.push_back(static_cast<std::uint8_t>(v));
  }
  return f;
}

/// (freqs float64 [pairs, 2, 3], axis int64 [pairs], or [2, pairs] split-half) of f, exactly
/// (axis_freqs_of reads them back).
std::tuple<Tensor, Tensor> axis_frequency_tensors(const posenc::rotary::axis_frequencies& f) {
  const auto pairs = static_cast<int64_t>(f.freqs.inv_freq.size());
  Tensor freqs = at::zeros({pairs, 2, kWideParts}, at::TensorOptions().dtype(at::kDouble));
  const bool split = !f.axis_second.empty();
  Tensor axis = split ? at::empty({2, pairs}, at::TensorOptions().dtype(at::kLong))
                      : at::empty({pairs}, at::TensorOptions().dtype(at::kLong));
  double* w = freqs.data_ptr<double>();
  for (int64_t k = 0; k < pairs; ++k) {
    const auto ku = static_cast<std::size_t>(k);
    split_wide(f.freqs.inv_freq[ku], w + k * 2 * kWideParts);
    if (!f.freqs.inv_freq_lo.empty()) split_wide(f.freqs.inv_freq_lo[ku], w + k * 2 * kWideParts + kWideParts);
    axis.data_ptr<int64_t>()[k] = f.axis[ku];
    if (split) axis.data_ptr<int64_t>()[pairs + k] = f.axis_second[ku];
  }
  return {freqs, axis};
}

Tensor axis_positions_of(const Tensor& position_ids, const char* op) {
  TORCH_CHECK_VALUE(position_ids.defined(), "posenc: ", op, ": position_ids: expected a tensor, got an undefined tensor");
  TORCH_CHECK_VALUE(position_ids.device().is_cpu(), "posenc: ", op, ": position_ids: expected a CPU tensor, got device '",
                    position_ids.device().str(), "' (this build of posenc's ops is CPU-only)");
  TORCH_CHECK_VALUE(position_ids.layout() == at::kStrided, "posenc: ", op,
                    ": position_ids: expected a dense (strided) tensor, got layout ", position_ids.layout());
  TORCH_CHECK_TYPE(position_ids.scalar_type() == at::kLong || position_ids.scalar_type() == at::kInt, "posenc: ", op,
                   ": position_ids: expected dtype int64 or int32, got ", dtype_name(position_ids.scalar_type()));
  TORCH_CHECK_VALUE(position_ids.dim() >= 1, "posenc: ", op,
                    ": position_ids: expected [axes, ...] (axes first), got a scalar");
  return position_ids.to(at::kLong).contiguous();
}

/// The exact frequencies of a vision-language config.json's M-RoPE and its get_rope_index constants:
/// (freqs, axis ([pairs], or [2, pairs] for xdrope), attention_factor, head_dim, interleaved pair
/// layout, mrope_section, style (0 sections, 1 interleaved, 2 ernie, 3 xdrope), spatial_merge_size, temporal_merge_size, split_video_frames,
/// tokens_per_second). No string outputs: AOT dispatch traces only tensors and numbers.
std::tuple<Tensor, Tensor, double, int64_t, bool, std::vector<int64_t>, int64_t, int64_t, int64_t, bool, double>
mrope_config(const std::string& config_json) {
  const auto m = guarded([&] { return posenc::rotary::load_mrope_config(config_json); });
  const auto [freqs, axis] = axis_frequency_tensors(m.freqs);
  std::vector<int64_t> section(m.section.begin(), m.section.end());
  const int64_t style = m.style == posenc::rotary::mrope_style::sections      ? 0
                        : m.style == posenc::rotary::mrope_style::interleaved ? 1
                        : m.style == posenc::rotary::mrope_style::ernie       ? 2
                                                                              : 3;
  return std::make_tuple(freqs, axis, m.freqs.freqs.attention_factor, static_cast<int64_t>(m.head_dim),
                         m.layout == posenc::rotary::layout::interleaved, section, style,
                         static_cast<int64_t>(m.index.spatial_merge_size),
                         static_cast<int64_t>(m.index.temporal_merge_size), m.index.split_video_frames,
                         m.index.tokens_per_second);
}

/// (cos, sin), each [*position_ids.shape[1:], width]: attention_factor * cos/sin of
/// position_ids[axis[k]] * omega_k, width 2 * pairs ([c | c], duplicated) or pairs.
std::tuple<Tensor, Tensor> axes_cos_sin(const Tensor& position_ids, const Tensor& freqs, const Tensor& axis,
                                        double attention_factor, at::ScalarType dtype, bool duplicated) {
  constexpr const char* op = "axes_cos_sin";
  const Tensor p = axis_positions_of(position_ids, op);
  const auto f = axis_freqs_of(freqs, axis, p.size(0), attention_factor, op);
  TORCH_CHECK_TYPE(dtype == at::kFloat || dtype == at::kDouble || dtype == at::kHalf || dtype == at::kBFloat16, "posenc: ",
                   op, ": dtype: expected bfloat16, float16, float32 or float64, got ", dtype_name(dtype));
  auto shape = p.sizes().vec();
  shape.erase(shape.begin());
  const int64_t width = freqs.size(0) * (duplicated ? 2 : 1);
  shape.push_back(width);
  Tensor c = at::empty(shape, at::TensorOptions().dtype(dtype)), s = at::empty(shape, at::TensorOptions().dtype(dtype));
  const posenc::rotary::axis_positions pos(
      std::span<const int64_t>(p.data_ptr<int64_t>(), static_cast<std::size_t>(p.numel())), f.axes);
  const auto lay = duplicated ? posenc::rotary::table_layout::duplicated : posenc::rotary::table_layout::pairs;
  auto fill = [&](auto tag, void* cp, void* sp) {
    using T = decltype(tag);
    const auto t = posenc::rotary::table<T>(f, pos, lay);
    std::memcpy(cp, t.cos.data(), sizeof(T) * static_cast<std::size_t>(t.cos.size()));
    std::memcpy(sp, t.sin.data(), sizeof(T) * static_cast<std::size_t>(t.sin.size()));
  };
  guarded([&] {
    switch (dtype) {
      case at::kFloat: fill(float{}, c.data_ptr(), s.data_ptr()); break;
      case at::kDouble: fill(double{}, c.data_ptr(), s.data_ptr()); break;
      case at::kHalf: fill(Eigen::half{}, c.data_ptr(), s.data_ptr()); break;
      default: fill(Eigen::bfloat16{}, c.data_ptr(), s.data_ptr());
    }
    return 0;
  });
  return {c, s};
}

/// Rotate x in place by multi-axis RoPE: x [B, H, S, D] with position_ids [A, B, S] or [A, S], or
/// ragged x [T, H, D] with position_ids [A, T]. transpose: the inverse rotation (the positions
/// negated, exactly: the backward).
void axes_rope_(Tensor x, const Tensor& position_ids, const Tensor& freqs, const Tensor& axis, double attention_factor,
                const std::string& layout, bool transpose) {
  constexpr const char* op = "axes_rope_";
  check_rope_x(x, op);
  Tensor p = axis_positions_of(position_ids, op);
  TORCH_CHECK_VALUE(p.device() == x.device(), "posenc: ", op, ": position_ids: expected the device of x");
  const bool ragged = x.dim() == 3;
  if (ragged) {
    TORCH_CHECK_VALUE(p.dim() == 2 && p.size(1) == x.size(0), "posenc: ", op,
                      ": position_ids: expected [axes, tokens] = [A, ", x.size(0), "] for ragged x, got shape ",
                      shape_str(p.sizes()));
  } else {
    TORCH_CHECK_VALUE((p.dim() == 3 && p.size(1) == x.size(0) && p.size(2) == x.size(2)) ||
                          (p.dim() == 2 && p.size(1) == x.size(2)),
                      "posenc: ", op, ": position_ids: expected [axes, batch, seq] = [A, ", x.size(0), ", ", x.size(2),
                      "] or [axes, seq] = [A, ", x.size(2), "] for x [batch, heads, seq, head_dim], got shape ",
                      shape_str(p.sizes()));
  }
  const auto f = axis_freqs_of(freqs, axis, p.size(0), attention_factor, op);
  posenc::rotary::apply_options o;
  o.layout = parse_layout(layout, op);
  if (transpose && !f.axis_second.empty()) {
    // split-half: the transpose of [[cos A, -sin A], [sin B, cos B]] is no map of negated positions;
    // a = a' cos A + b' sin B, b = b' cos B - a' sin A from the double tables, in float64
    const auto t = guarded([&] {
      return posenc::rotary::table<double>(
          f, posenc::rotary::axis_positions(std::span<const int64_t>(p.data_ptr<int64_t>(), static_cast<std::size_t>(p.numel())), f.axes),
          posenc::rotary::table_layout::duplicated);
    });
    const int64_t m = freqs.size(0);
    auto shape = p.sizes().vec();
    shape.erase(shape.begin());
    shape.push_back(2 * m);
    Tensor C = at::from_blob(const_cast<double*>(t.cos.data()), shape, at::TensorOptions().dtype(at::kDouble)).clone();
    Tensor S = at::from_blob(const_cast<double*>(t.sin.data()), shape, at::TensorOptions().dtype(at::kDouble)).clone();
    C = C.unsqueeze(ragged ? 1 : -3);  // [T, 1, 2m] or [(B,) 1, S, 2m]
    S = S.unsqueeze(ragged ? 1 : -3);
    const bool il = o.layout == posenc::rotary::layout::interleaved;
    Tensor a = il ? x.narrow(-1, 0, 2 * m).slice(-1, 0, 2 * m, 2) : x.narrow(-1, 0, m);
    Tensor b = il ? x.narrow(-1, 0, 2 * m).slice(-1, 1, 2 * m, 2) : x.narrow(-1, m, m);
    const Tensor ad = a.to(at::kDouble), bd = b.to(at::kDouble);
    const Tensor ca = C.narrow(-1, 0, m), cb = C.narrow(-1, m, m), sa = S.narrow(-1, 0, m), sb = S.narrow(-1, m, m);
    const Tensor na = ad * ca + bd * sb, nb = bd * cb - ad * sa;
    a.copy_(na);
    b.copy_(nb);
    return;
  }
  if (transpose) p = p.neg();  // R(-theta) = R(theta)^T; |p| < 2^53, so exact
  const posenc::rotary::axis_positions pos(
      std::span<const int64_t>(p.data_ptr<int64_t>(), static_cast<std::size_t>(p.numel())), f.axes);
  const auto sz = [&](int i) { return static_cast<std::size_t>(x.size(i)); };
  auto run = [&](auto* data) {
    using T = std::remove_pointer_t<decltype(data)>;
    namespace rt = posenc::rotary;
    if (ragged) {
      rt::ragged_view<T> v{data, {sz(0), sz(1), sz(2)}, {x.stride(0), x.stride(1), x.stride(2)}};
      rt::apply_ragged_inplace<T>(v, rt::ragged_view<T>{}, pos, f, o);
    } else {
      rt::dense_view<T> v{data, {sz(0), sz(1), sz(2), sz(3)}, {x.stride(0), x.stride(1), x.stride(2), x.stride(3)}};
      rt::apply_inplace<T>(v, rt::dense_view<T>{}, f, pos, o);
    }
  };
  guarded([&] {
    switch (x.scalar_type()) {
      case at::kFloat: run(x.data_ptr<float>()); break;
      case at::kDouble: run(x.data_ptr<double>()); break;
      case at::kHalf: run(reinterpret_cast<Eigen::half*>(x.data_ptr<at::Half>())); break;
      default: run(reinterpret_cast<Eigen::bfloat16*>(x.data_ptr<at::BFloat16>()));
    }
    return 0;
  });
}

Tensor axes_rope(const Tensor& x, const Tensor& position_ids, const Tensor& freqs, const Tensor& axis,
                 double attention_factor, const std::string& layout, bool transpose) {
  TORCH_CHECK_VALUE(x.defined() && x.device().is_cpu() && x.layout() == at::kStrided, "posenc: axes_rope: x: expected a ",
                    "dense CPU tensor");
  Tensor y = x.clone(at::MemoryFormat::Contiguous);
  axes_rope_(y, position_ids, freqs, axis, attention_factor, layout, transpose);
  return y;
}

std::vector<posenc::rotary::vision_grid> grids_of(const c10::optional<Tensor>& t, const char* op, const char* name) {
  std::vector<posenc::rotary::vision_grid> out;
  if (!t) return out;
  TORCH_CHECK_VALUE(t->dim() == 2 && t->size(1) == 3, "posenc: ", op, ": ", name,
                    ": expected [grids, 3] (t, h, w), got shape ", shape_str(t->sizes()));
  const auto v = index_vector(t, op, name);
  for (std::size_t i = 0; i + 2 < v.size(); i += 3) out.push_back({v[i], v[i + 1], v[i + 2]});
  return out;
}

/// attention_mask [batch, seq] (the shape of mm_token_type_ids) as int64 values; none: empty.
std::vector<int64_t> mask_of(const c10::optional<Tensor>& attention_mask, const Tensor& mm_token_type_ids,
                             const char* op) {
  std::vector<int64_t> mask;
  if (attention_mask) {
    TORCH_CHECK_VALUE(attention_mask->sizes() == mm_token_type_ids.sizes(), "posenc: ", op,
                      ": attention_mask: expected the shape of mm_token_type_ids ", shape_str(mm_token_type_ids.sizes()),
                      ", got ", shape_str(attention_mask->sizes()));
    check_storage(*attention_mask, op, "attention_mask");
    Tensor mk = attention_mask->to(at::kLong).contiguous();
    mask.assign(mk.data_ptr<int64_t>(), mk.data_ptr<int64_t>() + mk.numel());
  }
  return mask;
}

/// transformers' get_rope_index of the M-RoPE models: (position_ids int64 [3, B, S], rope_deltas [B, 1]).
std::tuple<Tensor, Tensor> get_rope_index(const Tensor& mm_token_type_ids, const c10::optional<Tensor>& image_grid_thw,
                                          const c10::optional<Tensor>& video_grid_thw,
                                          const c10::optional<Tensor>& attention_mask,
                                          const c10::optional<Tensor>& second_per_grid_ts, int64_t spatial_merge_size,
                                          int64_t temporal_merge_size, bool split_video_frames,
                                          double tokens_per_second) {
  constexpr const char* op = "get_rope_index";
  check_dim(mm_token_type_ids, 2, op, "mm_token_type_ids", "[batch, seq]");
  const auto types = index_vector(mm_token_type_ids, op, "mm_token_type_ids");
  const auto images = grids_of(image_grid_thw, op, "image_grid_thw");
  const auto videos = grids_of(video_grid_thw, op, "video_grid_thw");
  const auto mask = mask_of(attention_mask, mm_token_type_ids, op);
  std::vector<float> seconds;
  if (second_per_grid_ts) {
    check_storage(*second_per_grid_ts, op, "second_per_grid_ts");
    Tensor s = second_per_grid_ts->to(at::kFloat).contiguous().view(-1);
    seconds.assign(s.data_ptr<float>(), s.data_ptr<float>() + s.numel());
  }
  TORCH_CHECK_VALUE(spatial_merge_size >= 1 && temporal_merge_size >= 1, "posenc: ", op,
                    ": spatial_merge_size/temporal_merge_size: expected >= 1, got ", spatial_merge_size, " and ",
                    temporal_merge_size);
  posenc::rotary::rope_index_options o;
  o.spatial_merge_size = static_cast<std::size_t>(spatial_merge_size);
  o.temporal_merge_size = static_cast<std::size_t>(temporal_merge_size);
  o.split_video_frames = split_video_frames;
  o.tokens_per_second = tokens_per_second;
  const int64_t B = mm_token_type_ids.size(0), S = mm_token_type_ids.size(1);
  const auto r = guarded([&] {
    return posenc::rotary::get_rope_index(types, static_cast<std::size_t>(B), static_cast<std::size_t>(S), images, videos,
                                          mask, seconds, o);
  });
  Tensor pos = at::empty({3, B, S}, at::TensorOptions().dtype(at::kLong));
  std::memcpy(pos.data_ptr<int64_t>(), r.position_ids.data(), sizeof(int64_t) * r.position_ids.size());
  Tensor d = at::empty({B, 1}, at::TensorOptions().dtype(at::kLong));
  std::memcpy(d.data_ptr<int64_t>(), r.deltas.data(), sizeof(int64_t) * r.deltas.size());
  return {pos, d};
}

// ---- multi-axis RoPE layouts of diffusion transformers and vision encoders ------------------------
//
// The frequencies and int64 positions of rotary/axes/diffusion.hpp and rotary/axes/vision.hpp by model name,
// for torch.ops.posenc.axes_cos_sin / axes_rope / axes_rope_ (python/posenc/layouts.py). Neither
// op has a tensor input: both are CompositeExplicitAutograd, their fake kernels run them for real.

constexpr const char* kLayoutFreqModels =
    "'nd', 'flux', 'wan', 'hunyuan_video', 'qwen_image', 'qwen_vl_vision', 'pixtral_vision', 'llama4_vision' or "
    "'dinov3'";
constexpr const char* kLayoutPosModels =
    "'flux', 'grid3d', 'wan', 'hunyuan_video', 'qwen_image', 'qwen_vl_vision', 'qwen2_5_vl_window', "
    "'pixtral_vision', 'llama4_vision' or 'dinov3'";

std::vector<std::size_t> layout_sizes(const std::vector<int64_t>& v, const char* op, const char* name) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    TORCH_CHECK_VALUE(v[i] >= 0, "posenc: ", op, ": ", name, "[", i, "]: expected a size >= 0, got ", v[i]);
    out.push_back(static_cast<std::size_t>(v[i]));
  }
  return out;
}

void layout_arity(const std::string& model, const std::vector<int64_t>& v, std::size_t lo, std::size_t hi,
                  const char* meaning, const char* op, const char* name) {
  TORCH_CHECK_VALUE(v.size() >= lo && v.size() <= hi, "posenc: ", op, ": ", name, ": expected ", meaning, " for model '",
                    model, "', got ", v.size(), " values");
}

Tensor layout_ids(const std::vector<std::int64_t>& ids, int64_t rows) {
  const auto n = static_cast<int64_t>(ids.size()) / rows;
  Tensor t = at::empty({rows, n}, at::TensorOptions().dtype(at::kLong));
  if (!ids.empty()) std::memcpy(t.data_ptr<int64_t>(), ids.data(), sizeof(std::int64_t) * ids.size());
  return t;
}

std::vector<posenc::rotary::vision_grid> layout_grids(const std::vector<int64_t>& g, const char* op) {
  TORCH_CHECK_VALUE(g.size() % 3 == 0 && !g.empty(), "posenc: ", op,
                    ": grids: expected (t, h, w) triples, flattened (a multiple of 3 values, at least 3), got ",
                    g.size(), " values");
  std::vector<posenc::rotary::vision_grid> out;
  for (std::size_t i = 0; i < g.size(); i += 3) out.push_back({g[i], g[i + 1], g[i + 2]});
  return out;
}

/// (freqs float64 [pairs, 2, 3], axis int64 [pairs]) of a model's multi-axis RoPE (the exact
/// frequencies of rotary/axes/diffusion.hpp, rotary/axes/vision.hpp). sizes: 'nd' axes_dim; 'flux',
/// 'hunyuan_video', 'qwen_image' axes_dim (empty: the model's (16, 56, 56)); 'wan',
/// 'qwen_vl_vision', 'pixtral_vision', 'llama4_vision' [head_dim] (the last two may be empty: 64,
/// 88); 'dinov3' [head_dim, grid_h, grid_w]. theta 0: the model's default.
std::tuple<Tensor, Tensor> axes_layout_frequencies(const std::string& model, const std::vector<int64_t>& sizes,
                                                   double theta) {
  constexpr const char* op = "axes_layout_frequencies";
  namespace rt = posenc::rotary;
  const auto s = layout_sizes(sizes, op, "sizes");
  const auto th = [&](double d) { return theta == 0.0 ? d : theta; };
  const auto f = guarded([&]() -> rt::axis_frequencies {
    if (model == "nd") {
      TORCH_CHECK_VALUE(theta != 0.0, "posenc: ", op, ": theta: expected a finite theta > 1 for model 'nd', got 0");
      return rt::axes_nd(s, theta, "axes_layout_frequencies('nd')");
    }
    if (model == "flux" || model == "hunyuan_video" || model == "qwen_image") {
      const std::array<std::size_t, 3> def{16, 56, 56};
      const std::span<const std::size_t> dims = s.empty() ? std::span<const std::size_t>(def) : std::span(s);
      if (model == "flux") return rt::flux_frequencies(dims, th(10000.0));
      if (model == "hunyuan_video") return rt::hunyuan_video_frequencies(dims, th(256.0));
      return rt::qwen_image_frequencies(dims, th(10000.0));
    }
    if (model == "wan" || model == "qwen_vl_vision") {
      layout_arity(model, sizes, 1, 1, "[head_dim]", op, "sizes");
      return model == "wan" ? rt::wan_frequencies(s[0], th(10000.0)) : rt::qwen_vl_vision_frequencies(s[0], th(10000.0));
    }
    if (model == "pixtral_vision" || model == "llama4_vision") {
      layout_arity(model, sizes, 0, 1, "[head_dim] or []", op, "sizes");
      const bool pix = model == "pixtral_vision";
      const std::size_t d = s.empty() ? (pix ? 64 : 88) : s[0];
      return pix ? rt::pixtral_vision_frequencies(d, th(10000.0)) : rt::llama4_vision_frequencies(d, th(10000.0));
    }
    if (model == "dinov3") {
      layout_arity(model, sizes, 3, 3, "[head_dim, grid_h, grid_w]", op, "sizes");
      return rt::dinov3_frequencies(s[0], s[1], s[2], th(100.0));
    }
    TORCH_CHECK_VALUE(false, "posenc: ", op, ": model: expected ", kLayoutFreqModels, ", got '", model, "'");
    return {};
  });
  return axis_frequency_tensors(f);
}

/// A model's int64 positions [A, tokens] (rotary/axes/diffusion.hpp, rotary/axes/vision.hpp), as a list:
///  'flux' sizes [text_tokens, height, width] (patches); 'grid3d' [frames, height, width];
///  'wan' [latent_frames, latent_height, latent_width, (p_t, p_h, p_w, (max_seq_len))];
///  'hunyuan_video' [latent_frames, latent_height, latent_width, (patch_size, (patch_size_t))];
///  'qwen_image' [text_tokens, (scale_rope)] with grids (frames, height, width) per image: [image, text];
///  'qwen_vl_vision' [(spatial_merge_size)] with grids (t, h, w); 'qwen2_5_vl_window'
///  [(spatial_merge_size, (window_size, (patch_size)))] with grids: [window_index, cu_window_seqlens
///  (int32), token_order]; 'pixtral_vision' grids (1, h, w); 'llama4_vision' [(side)];
///  'dinov3' [grid_h, grid_w].
std::vector<Tensor> axes_layout_positions(const std::string& model, const std::vector<int64_t>& sizes,
                                          const std::vector<int64_t>& grids) {
  constexpr const char* op = "axes_layout_positions";
  namespace rt = posenc::rotary;
  const auto s = layout_sizes(sizes, op, "sizes");
  const bool takes_grids = model == "qwen_image" || model == "qwen_vl_vision" || model == "qwen2_5_vl_window" ||
                           model == "pixtral_vision";
  TORCH_CHECK_VALUE(takes_grids || grids.empty(), "posenc: ", op, ": grids: expected none for model '", model, "', got ",
                    grids.size(), " values");
  return guarded([&]() -> std::vector<Tensor> {
    if (model == "flux") {
      layout_arity(model, sizes, 3, 3, "[text_tokens, height, width]", op, "sizes");
      return {layout_ids(rt::flux_positions(s[0], s[1], s[2]), 3)};
    }
    if (model == "grid3d") {
      layout_arity(model, sizes, 3, 3, "[frames, height, width]", op, "sizes");
      return {layout_ids(rt::grid_positions_3d(s[0], s[1], s[2]), 3)};
    }
    if (model == "wan") {
      layout_arity(model, sizes, 3, 7, "[latent_frames, latent_height, latent_width] or with (p_t, p_h, p_w) and "
                   "max_seq_len", op, "sizes");
      TORCH_CHECK_VALUE(s.size() == 3 || s.size() >= 6, "posenc: ", op,
                        ": sizes: expected the patch_size as three values (p_t, p_h, p_w), got ", s.size() - 3);
      const std::array<std::size_t, 3> p = s.size() >= 6 ? std::array<std::size_t, 3>{s[3], s[4], s[5]}
                                                          : std::array<std::size_t, 3>{1, 2, 2};
      return {layout_ids(rt::wan_positions(s[0], s[1], s[2], p, s.size() == 7 ? s[6] : 1024), 3)};
    }
    if (model == "hunyuan_video") {
      layout_arity(model, sizes, 3, 5, "[latent_frames, latent_height, latent_width, (patch_size, (patch_size_t))]", op,
                   "sizes");
      return {layout_ids(rt::hunyuan_video_positions(s[0], s[1], s[2], s.size() >= 4 ? s[3] : 2,
                                                     s.size() >= 5 ? s[4] : 1),
                         3)};
    }
    if (model == "qwen_image") {
      layout_arity(model, sizes, 1, 2, "[text_tokens, (scale_rope)]", op, "sizes");
      TORCH_CHECK_VALUE(grids.size() % 3 == 0, "posenc: ", op,
                        ": grids: expected (frames, height, width) triples, flattened, got ", grids.size(), " values");
      const auto g = layout_sizes(grids, op, "grids");
      std::vector<rt::qwen_image_shape> shapes;
      for (std::size_t i = 0; i < g.size(); i += 3) shapes.push_back({g[i], g[i + 1], g[i + 2]});
      const auto ids = rt::qwen_image_positions(shapes, s[0], s.size() < 2 || s[1] != 0);
      return {layout_ids(ids.image, 3), layout_ids(ids.text, 3)};
    }
    if (model == "qwen_vl_vision") {
      layout_arity(model, sizes, 0, 1, "[(spatial_merge_size)]", op, "sizes");
      return {layout_ids(rt::qwen_vl_vision_positions(layout_grids(grids, op), s.empty() ? 2 : s[0]), 2)};
    }
    if (model == "qwen2_5_vl_window") {
      layout_arity(model, sizes, 0, 3, "[(spatial_merge_size, (window_size, (patch_size)))]", op, "sizes");
      const auto o = rt::qwen2_5_vl_window_order(layout_grids(grids, op), s.size() >= 1 ? s[0] : 2,
                                                 s.size() >= 2 ? s[1] : 112, s.size() >= 3 ? s[2] : 14);
      Tensor wi = at::empty({static_cast<int64_t>(o.window_index.size())}, at::TensorOptions().dtype(at::kLong));
      Tensor cu = at::empty({static_cast<int64_t>(o.cu_window_seqlens.size())}, at::TensorOptions().dtype(at::kInt));
      Tensor to = at::empty({static_cast<int64_t>(o.token_order.size())}, at::TensorOptions().dtype(at::kLong));
      std::copy(o.window_index.begin(), o.window_index.end(), wi.data_ptr<int64_t>());
      std::copy(o.cu_window_seqlens.begin(), o.cu_window_seqlens.end(), cu.data_ptr<int32_t>());
      std::copy(o.token_order.begin(), o.token_order.end(), to.data_ptr<int64_t>());
      return {wi, cu, to};
    }
    if (model == "pixtral_vision") {
      layout_arity(model, sizes, 0, 0, "none", op, "sizes");
      return {layout_ids(rt::pixtral_vision_positions(layout_grids(grids, op)), 2)};
    }
    if (model == "llama4_vision") {
      layout_arity(model, sizes, 0, 1, "[(side)]", op, "sizes");
      return {layout_ids(rt::llama4_vision_positions(s.empty() ? 24 : s[0]), 2)};
    }
    if (model == "dinov3") {
      layout_arity(model, sizes, 2, 2, "[grid_h, grid_w]", op, "sizes");
      return {layout_ids(rt::dinov3_positions(s[0], s[1]), 2)};
    }
    TORCH_CHECK_VALUE(false, "posenc: ", op, ": model: expected ", kLayoutPosModels, ", got '", model, "'");
    return {};
  });
}

// ---- autograd ------------------------------------------------------------------------------------

struct AxesRopeBackward {};

Tensor axes_rope_autograd(const Tensor& x, const Tensor& position_ids, const Tensor& freqs, const Tensor& axis,
                          double af, const std::string& layout, bool transpose) {
  const std::function<variable_list()> forward = [&]() -> variable_list {
    return {op_handle<decltype(axes_rope)>("posenc::axes_rope").call(x, position_ids, freqs, axis, af, layout, transpose)};
  };
  backward_fn backward = [=](const variable_list& grads, const variable_list&) -> variable_list {
    // y = f R x with R orthogonal: dx = f R^T dy, the rotation by the negated positions
    return {op_handle<decltype(axes_rope)>("posenc::axes_rope")
                .call(grads[0], position_ids, freqs, axis, af, layout, !transpose),
            Tensor(), Tensor(), Tensor()};
  };
  return autograd_apply<AxesRopeBackward>(false, forward, backward, x, position_ids, freqs, axis)[0];
}

}  // namespace

/// HunYuan-VL's get_rope_index (rotary::hunyuan_rope_index): (position_ids int64 [axes, B, S],
/// rope_deltas [B, 1]); image runs are mm_token_type_ids == 1, axes = len(mrope_section).
std::tuple<Tensor, Tensor> hunyuan_rope_index(const Tensor& mm_token_type_ids, const c10::optional<Tensor>& image_grid_thw,
                                              const c10::optional<Tensor>& attention_mask, int64_t axes,
                                              int64_t spatial_merge_size) {
  constexpr const char* op = "hunyuan_rope_index";
  check_dim(mm_token_type_ids, 2, op, "mm_token_type_ids", "[batch, seq]");
  const auto types = index_vector(mm_token_type_ids, op, "mm_token_type_ids");
  const auto images = grids_of(image_grid_thw, op, "image_grid_thw");
  const auto mask = mask_of(attention_mask, mm_token_type_ids, op);
  TORCH_CHECK_VALUE(axes >= 3 && axes <= static_cast<int64_t>(posenc::rotary::max_axes), "posenc: ", op,
                    ": axes: expected 3 .. ", posenc::rotary::max_axes, " (len(mrope_section)), got ", axes);
  TORCH_CHECK_VALUE(spatial_merge_size >= 1, "posenc: ", op, ": spatial_merge_size: expected >= 1, got ",
                    spatial_merge_size);
  const int64_t B = mm_token_type_ids.size(0), S = mm_token_type_ids.size(1);
  const auto r = guarded([&] {
    return posenc::rotary::hunyuan_rope_index(types, static_cast<std::size_t>(B), static_cast<std::size_t>(S), images,
                                              mask, static_cast<std::size_t>(axes),
                                              static_cast<std::size_t>(spatial_merge_size));
  });
  Tensor pos = at::empty({axes, B, S}, at::TensorOptions().dtype(at::kLong));
  std::memcpy(pos.data_ptr<int64_t>(), r.position_ids.data(), sizeof(int64_t) * r.position_ids.size());
  Tensor d = at::empty({B, 1}, at::TensorOptions().dtype(at::kLong));
  std::memcpy(d.data_ptr<int64_t>(), r.deltas.data(), sizeof(int64_t) * r.deltas.size());
  return {pos, d};
}

TORCH_LIBRARY_FRAGMENT(posenc, m) {
  m.def("mrope_config(str config_json) -> (Tensor, Tensor, float, int, bool, int[], int, int, int, bool, float)");
  m.def("axes_cos_sin(Tensor position_ids, Tensor freqs, Tensor axis, float attention_factor=1.0, ScalarType dtype=6, "
        "bool duplicated=True) -> (Tensor, Tensor)");
  m.def("axes_rope(Tensor x, Tensor position_ids, Tensor freqs, Tensor axis, float attention_factor=1.0, "
        "str layout='half', bool transpose=False) -> Tensor");
  m.def("axes_rope_(Tensor(a!) x, Tensor position_ids, Tensor freqs, Tensor axis, float attention_factor=1.0, "
        "str layout='half', bool transpose=False) -> ()");
  m.def("get_rope_index(Tensor mm_token_type_ids, Tensor? image_grid_thw=None, Tensor? video_grid_thw=None, "
        "Tensor? attention_mask=None, Tensor? second_per_grid_ts=None, int spatial_merge_size=2, "
        "int temporal_merge_size=1, bool split_video_frames=False, float tokens_per_second=0.0) -> (Tensor, Tensor)");
  m.def("hunyuan_rope_index(Tensor mm_token_type_ids, Tensor? image_grid_thw=None, Tensor? attention_mask=None, "
        "int axes=4, int spatial_merge_size=2) -> (Tensor, Tensor)");
  m.def("axes_layout_frequencies(str model, int[] sizes=[], float theta=0.0) -> (Tensor, Tensor)");
  m.def("axes_layout_positions(str model, int[] sizes=[], int[] grids=[]) -> Tensor[]");
}

TORCH_LIBRARY_IMPL(posenc, CompositeExplicitAutograd, m) {
  m.impl("mrope_config", TORCH_FN(mrope_config));
  m.impl("axes_layout_frequencies", TORCH_FN(axes_layout_frequencies));
  m.impl("axes_layout_positions", TORCH_FN(axes_layout_positions));
}

TORCH_LIBRARY_IMPL(posenc, CPU, m) {
  m.impl("axes_cos_sin", TORCH_FN(axes_cos_sin));
  m.impl("axes_rope", TORCH_FN(axes_rope));
  m.impl("axes_rope_", TORCH_FN(axes_rope_));
  m.impl("get_rope_index", TORCH_FN(get_rope_index));
  m.impl("hunyuan_rope_index", TORCH_FN(hunyuan_rope_index));
}

TORCH_LIBRARY_IMPL(posenc, Autograd, m) { m.impl("axes_rope", TORCH_FN(axes_rope_autograd)); }

// SPDX-License-Identifier: MIT
// FLOATER weights in and out: named tensors (safetensors files, or a folder of .npy files, one per
// tensor) mapped into posenc::floater::mlp and p(0), with the names and layouts of the reference
// PyTorch module's state_dict: nn.Linear weights [out, in + 1] with the time column last.
//
//   default names (the reference FlowTransformerEncoder's state_dict; prefix "encoder." in a
//   fairseq checkpoint):
//     proj_flow.layers.0.linear.weight  [hidden, d + 1]     proj_flow.layers.0.linear.bias  [hidden]
//     proj_flow.layers.2.linear.weight  [d, hidden + 1]     proj_flow.layers.2.linear.bias  [d]
//     proj_bias                         [3, n_layers, d]    (any shape [..., d]: N = product of the rest)
//
// Errors: io_error (missing tensor, unreadable or malformed file: from posenc::io), shape_error
// (a tensor whose shape does not fit the others or the requested configuration; the message names
// the tensor, the expected and the actual shape), non_finite_error (NaN/Inf in a tensor, named).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <posenc/core/error.hpp>
#include <posenc/floater/encoder.hpp>
#include <posenc/floater/flow.hpp>
#include <posenc/io/array.hpp>
#include <posenc/io/npy.hpp>
#include <posenc/io/safetensors.hpp>

namespace posenc::floater {

/// Names of the five tensors of one FLOATER flow (user-replaceable).
struct tensor_names {
  std::string w1 = "proj_flow.layers.0.linear.weight";
  std::string b1 = "proj_flow.layers.0.linear.bias";
  std::string w2 = "proj_flow.layers.2.linear.weight";
  std::string b2 = "proj_flow.layers.2.linear.bias";
  std::string p0 = "proj_bias";

  /// The reference module's names for a flow attribute `flow` and initial-state parameter `bias`,
  /// each prefixed with `prefix` (e.g. "encoder." for a whole fairseq model's state_dict).
  [[nodiscard]] static tensor_names reference(std::string prefix = "", std::string flow = "proj_flow",
                                              std::string bias = "proj_bias") {
    tensor_names n;
    const std::string f = prefix + flow + ".layers.";
    n.w1 = f + "0.linear.weight";
    n.b1 = f + "0.linear.bias";
    n.w2 = f + "2.linear.weight";
    n.b2 = f + "2.linear.bias";
    n.p0 = prefix + bias;
    return n;
  }
  /// The reference encoder inside a fairseq model: "encoder.proj_flow...", "encoder.proj_bias" ([3, layers, d]).
  [[nodiscard]] static tensor_names reference_encoder() { return reference("encoder."); }
  /// The reference decoder's self-attention flow: "decoder.proj_flow_selfattn...", "decoder.proj_bias_selfattn" ([4, layers, d]).
  [[nodiscard]] static tensor_names reference_decoder_selfattn() {
    return reference("decoder.", "proj_flow_selfattn", "proj_bias_selfattn");
  }
  /// The reference decoder's encoder-attention k/v flow ([2, layers, d]).
  [[nodiscard]] static tensor_names reference_decoder_encattn_kv() {
    return reference("decoder.", "proj_flow_encattn_kv", "proj_bias_encattn_kv");
  }
};

/// What the tensors are expected to be; unset fields are inferred from the shapes.
struct load_options {
  activation act = activation::relu;  ///< not stored in the files: the reference uses relu
  std::optional<bool> time1;          ///< layer 1 has a time column (unset: weight width d + 1 -> yes, d -> no)
  std::optional<bool> time2;          ///< layer 2 has a time column (unset: inferred likewise)
  std::size_t d = 0;                  ///< expected state width (0: from p0's last dimension)
  std::size_t hidden = 0;             ///< expected hidden width (0: from layer 1's weight)
  std::size_t blocks = 0;             ///< expected number of initial states N (0: any)
};

/// A flow and its initial states as read from a file.
template <class T>
struct weights {
  mlp<T> flow;
  table<T> p0;                        ///< N x d (leading dimensions of the stored tensor flattened)
  std::vector<std::size_t> p0_shape;  ///< the stored shape, e.g. [3, n_layers, d]
};

namespace detail {
template <class T>
using tensor_getter = std::function<io::array<T>(const std::string&)>;

inline std::string shape_of(const std::vector<std::size_t>& s) { return io::shape_string(s); }

template <class T>
matrix<T> to_matrix(const io::array<T>& a) {
  matrix<T> m(static_cast<Eigen::Index>(a.shape[0]), static_cast<Eigen::Index>(a.shape[1]));
  std::copy(a.data.begin(), a.data.end(), m.data());
  return m;
}
template <class T>
vector<T> to_vector(const io::array<T>& a) {
  vector<T> v(static_cast<Eigen::Index>(a.shape[0]));
  std::copy(a.data.begin(), a.data.end(), v.data());
  return v;
}
template <class T>
void require_consistent(const io::array<T>& a, const std::string& name, std::string_view where) {
  const auto count = io::element_count(a.shape);
  if (!count || *count != a.data.size())
    posenc::detail::fail<shape_error>(where, "tensor '", name, "': data has ", a.data.size(), " elements but shape ",
                                      shape_of(a.shape), " has ",
                                      count ? std::to_string(*count) : std::string("an overflowing number of"));
}
template <class T>
void require_finite_tensor(const io::array<T>& a, const std::string& name, std::string_view where) {
  for (const T& x : a.data)
    if (!std::isfinite(x)) posenc::detail::fail<non_finite_error>(where, "tensor '", name, "' contains NaN or Inf");
}
inline std::optional<bool> infer_time(std::size_t cols, std::size_t in, std::optional<bool> want, const std::string& name,
                                      const std::vector<std::size_t>& shape, std::size_t rows, std::string_view where) {
  if (want) {
    const std::size_t expect = in + (*want ? 1 : 0);
    if (cols != expect)
      posenc::detail::fail<shape_error>(where, "tensor '", name, "': expected shape [", rows, ", ", expect, "] (",
                                        *want ? "nn.Linear weight with the time column last" : "no time column",
                                        "), the file has ", shape_of(shape));
    return want;
  }
  if (cols == in + 1) return true;
  if (cols == in) return false;
  posenc::detail::fail<shape_error>(where, "tensor '", name, "': expected shape [", rows, ", ", in + 1, "] (time column last) or [",
                                    rows, ", ", in, "] (no time input), the file has ", shape_of(shape));
}
}  // namespace detail

/// Map named tensors into a flow and p(0). `get(name)` returns the tensor (and throws io_error if
/// there is none); see the file comment for names, layouts and errors.
template <class T>
[[nodiscard]] weights<T> weights_from_tensors(const detail::tensor_getter<T>& get, const tensor_names& names = {},
                                              const load_options& opt = {}) {
  constexpr std::string_view where = "floater::load weights";
  const io::array<T> p0 = get(names.p0);
  const io::array<T> w1 = get(names.w1), b1 = get(names.b1), w2 = get(names.w2), b2 = get(names.b2);
  // a getter may return any io::array: its data must hold exactly its shape's elements before a
  // shape is used to size (and fill) a matrix
  detail::require_consistent(p0, names.p0, where);
  detail::require_consistent(w1, names.w1, where);
  detail::require_consistent(b1, names.b1, where);
  detail::require_consistent(w2, names.w2, where);
  detail::require_consistent(b2, names.b2, where);
  // p0: [..., d]
  posenc::detail::require<shape_error>(p0.rank() >= 1 && p0.size() >= 1, where, "tensor '", names.p0,
                                       "': expected shape [..., d] with at least one element, the file has ",
                                       detail::shape_of(p0.shape));
  const std::size_t d = p0.shape.back(), N = p0.size() / std::max<std::size_t>(d, 1);
  posenc::detail::require<shape_error>(d >= 1, where, "tensor '", names.p0, "': expected d >= 1, the file has ",
                                       detail::shape_of(p0.shape));
  if (opt.d)
    posenc::detail::require<shape_error>(d == opt.d, where, "tensor '", names.p0, "': expected last dimension d = ", opt.d,
                                         ", the file has ", detail::shape_of(p0.shape));
  if (opt.blocks)
    posenc::detail::require<shape_error>(N == opt.blocks, where, "tensor '", names.p0, "': expected ", opt.blocks,
                                         " initial states of width ", d, ", the file has ", detail::shape_of(p0.shape));
  // layer 1: [hidden, d (+1)]
  posenc::detail::require<shape_error>(w1.rank() == 2 && w1.shape[0] >= 1, where, "tensor '", names.w1,
                                       "': expected a 2-d nn.Linear weight [hidden, d + 1], the file has ",
                                       detail::shape_of(w1.shape));
  const std::size_t hidden = w1.shape[0];
  if (opt.hidden)
    posenc::detail::require<shape_error>(hidden == opt.hidden, where, "tensor '", names.w1, "': expected hidden = ",
                                         opt.hidden, " rows, the file has ", detail::shape_of(w1.shape));
  const bool t1 = *detail::infer_time(w1.shape[1], d, opt.time1, names.w1, w1.shape, hidden, where);
  posenc::detail::require<shape_error>(b1.shape == std::vector<std::size_t>{hidden}, where, "tensor '", names.b1,
                                       "': expected shape [", hidden, "], the file has ", detail::shape_of(b1.shape));
  posenc::detail::require<shape_error>(w2.rank() == 2 && w2.shape[0] == d, where, "tensor '", names.w2,
                                       "': expected a 2-d nn.Linear weight [d, hidden + 1] = [", d, ", ", hidden + 1,
                                       "], the file has ", detail::shape_of(w2.shape));
  const bool t2 = *detail::infer_time(w2.shape[1], hidden, opt.time2, names.w2, w2.shape, d, where);
  posenc::detail::require<shape_error>(b2.shape == std::vector<std::size_t>{d}, where, "tensor '", names.b2,
                                       "': expected shape [", d, "], the file has ", detail::shape_of(b2.shape));
  detail::require_finite_tensor(p0, names.p0, where);
  detail::require_finite_tensor(w1, names.w1, where);
  detail::require_finite_tensor(b1, names.b1, where);
  detail::require_finite_tensor(w2, names.w2, where);
  detail::require_finite_tensor(b2, names.b2, where);

  weights<T> out;
  out.flow = mlp<T>(d, hidden, opt.act, t1, t2);
  out.flow.set_linear1_weight(detail::to_matrix(w1));
  out.flow.b1 = detail::to_vector(b1);
  out.flow.set_linear2_weight(detail::to_matrix(w2));
  out.flow.b2 = detail::to_vector(b2);
  out.p0.resize(static_cast<Eigen::Index>(N), static_cast<Eigen::Index>(d));
  std::copy(p0.data.begin(), p0.data.end(), out.p0.data());
  out.p0_shape = p0.shape;
  return out;
}

/// Read a safetensors file (F16/BF16/F32/F64 tensors, converted to T).
template <class T>
[[nodiscard]] weights<T> load_safetensors(const std::filesystem::path& path, const tensor_names& names = {},
                                          const load_options& opt = {}) {
  const auto file = io::safetensors_file::open(path);
  return weights_from_tensors<T>([&file](const std::string& n) { return file.template get<T>(n); }, names, opt);
}

/// Read a folder holding one `<name>.npy` per tensor (e.g. proj_flow.layers.0.linear.weight.npy).
template <class T>
[[nodiscard]] weights<T> load_npy_folder(const std::filesystem::path& folder, const tensor_names& names = {},
                                         const load_options& opt = {}) {
  return weights_from_tensors<T>(
      [&folder](const std::string& n) {
        const auto p = folder / (n + ".npy");
        if (!std::filesystem::exists(p))
          posenc::detail::fail<io_error>("floater::load_npy_folder", "no file for tensor '", n, "': ", p.string(),
                                         " does not exist");
        return io::read_npy<T>(p);
      },
      names, opt);
}

/// An encoder from weights (p0 rows = the N blocks).
template <class T, class Scheme = ode::schemes::rk4_38>
[[nodiscard]] encoder<T, Scheme> make_encoder(const weights<T>& w, options opt = {}) {
  return encoder<T, Scheme>(w.flow, w.p0, std::move(opt));
}

/// The tensors of a flow and p0 in the PyTorch layout (p0 stored with shape p0_shape, default [N, d]).
template <class T>
[[nodiscard]] std::vector<std::pair<std::string, io::array<T>>> to_tensors(const mlp<T>& flow, const table<T>& p0,
                                                                           const tensor_names& names = {},
                                                                           std::vector<std::size_t> p0_shape = {}) {
  constexpr std::string_view where = "floater::to_tensors";
  flow.validate(where);
  // what the loaders (weights_from_tensors) and the encoder accept: >= 1 block, d columns, finite
  posenc::detail::require(p0.rows() >= 1, where, "expected p0 with at least one block (row), got ", p0.rows());
  posenc::detail::require<shape_error>(p0.cols() == flow.w1.cols(), where, "expected p0 with d = ", flow.w1.cols(),
                                       " columns, got ", p0.cols());
  posenc::detail::require_finite(p0, where, "p0 (initial state)");
  if (p0_shape.empty()) p0_shape = {static_cast<std::size_t>(p0.rows()), static_cast<std::size_t>(p0.cols())};
  const auto count = io::element_count(p0_shape);
  posenc::detail::require<shape_error>(count && *count == static_cast<std::size_t>(p0.size()) &&
                                           p0_shape.back() == static_cast<std::size_t>(p0.cols()),
                                       where, "p0_shape ", io::shape_string(p0_shape), " does not hold p0 of shape [",
                                       p0.rows(), ", ", p0.cols(), "] with d last");
  auto mat = [](const matrix<T>& m) {
    io::array<T> a;
    a.shape = {static_cast<std::size_t>(m.rows()), static_cast<std::size_t>(m.cols())};
    a.data.assign(m.data(), m.data() + m.size());
    return a;
  };
  auto vec = [](const vector<T>& v) {
    io::array<T> a;
    a.shape = {static_cast<std::size_t>(v.size())};
    a.data.assign(v.data(), v.data() + v.size());
    return a;
  };
  io::array<T> pa;
  pa.shape = p0_shape;
  pa.data.assign(p0.data(), p0.data() + p0.size());
  return {{names.w1, mat(flow.linear1_weight())},
          {names.b1, vec(flow.b1)},
          {names.w2, mat(flow.linear2_weight())},
          {names.b2, vec(flow.b2)},
          {names.p0, std::move(pa)}};
}

/// Write a safetensors file in the reference layout (readable by safetensors.torch.load_file).
template <class T>
void save_safetensors(const std::filesystem::path& path, const mlp<T>& flow, const table<T>& p0,
                      const tensor_names& names = {}, std::vector<std::size_t> p0_shape = {}) {
  const auto tensors = to_tensors(flow, p0, names, std::move(p0_shape));
  std::vector<io::tensor_ref> refs;
  for (const auto& [n, a] : tensors) refs.emplace_back(n, a);
  io::write_safetensors(path, refs, {{"format", "pt"}, {"activation", std::string(to_string(flow.act))}});
}

/// Write one `<name>.npy` per tensor into `folder` (created if needed).
template <class T>
void save_npy_folder(const std::filesystem::path& folder, const mlp<T>& flow, const table<T>& p0,
                     const tensor_names& names = {}, std::vector<std::size_t> p0_shape = {}) {
  const auto tensors = to_tensors(flow, p0, names, std::move(p0_shape));
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) posenc::detail::fail<io_error>("floater::save_npy_folder", "cannot create ", folder.string(), ": ", ec.message());
  for (const auto& [n, a] : tensors) io::write_npy<T>(folder / (n + ".npy"), a);
}

}  // namespace posenc::floater

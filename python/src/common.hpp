// SPDX-License-Identifier: MIT
// What every family file of posenc's PyTorch operators shares: argument checks, error
// translation, Eigen views of tensors, the storage-type dispatch of the rope and alibi ops, and
// the one autograd helper (autograd_apply) through which every Autograd kernel records its node.
//
// The operators are one shared library (libposenc_torch.so) built from one file per family
// (floater.cpp, sinusoidal.cpp, rotary.cpp, multiaxis.cpp, alibi.cpp, tupe.cpp, t5.cpp,
// toeplitz.cpp), each registering its schemas with TORCH_LIBRARY_FRAGMENT(posenc, m) and its
// kernels with TORCH_LIBRARY_IMPL; library.cpp holds TORCH_LIBRARY(posenc, m) and the library-wide
// ops. Kernels: CPU for ops with a tensor input, CompositeExplicitAutograd for those without one
// (nothing to dispatch on), Autograd for the differentiable ops (each backward is again a
// dispatcher op, so AOTAutograd traces it). The fake kernels for torch.compile are Python
// (posenc/_fake/), the user-facing functions and modules too (python/posenc).
//
// Conventions of every op:
//   * tensors must be CPU and strided; float32 or float64 (the rope and alibi ops also take
//     bfloat16 and float16, computing in float32 or better); contiguous where stated (the
//     out-of-place rope/alibi ops take any strides; the in-place ones need head_dim / key columns
//     contiguous); anything else raises ValueError (shape, device, layout, contiguity) or
//     TypeError (dtype) with a message "posenc: <op>: <argument>: expected ..., got ...";
//   * posenc's own exceptions are translated (guarded): posenc::invalid_argument and its
//     subclasses (shape_error, grid_error, non_finite_error) and rotary::config_error ->
//     ValueError, any other posenc::error -> RuntimeError, the message unchanged.
#pragma once

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/custom_class.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <posenc/core/error.hpp>
#include <posenc/tensor/table.hpp>
#include <posenc/rotary/rule_params.hpp>  // posenc::rotary::config_error
#include <posenc/sinusoidal/options.hpp>  // posenc::sinusoidal::layout, shared by the rotary family

namespace posenc_torch {

using at::Tensor;

// ---- argument checks and error translation ---------------------------------------------------

inline std::string shape_str(at::IntArrayRef s) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << ']';
  return os.str();
}

inline const char* dtype_name(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return "float32";
    case at::kDouble: return "float64";
    case at::kHalf: return "float16";
    case at::kBFloat16: return "bfloat16";
    case at::kLong: return "int64";
    case at::kInt: return "int32";
    case at::kBool: return "bool";
    default: return c10::toString(t);
  }
}

/// Device, layout and contiguity of any tensor argument.
inline void check_storage(const Tensor& t, const char* op, const char* name) {
  TORCH_CHECK_VALUE(t.defined(), "posenc: ", op, ": ", name, ": expected a tensor, got an undefined tensor");
  TORCH_CHECK_VALUE(t.device().is_cpu(), "posenc: ", op, ": ", name, ": expected a CPU tensor, got device '",
                    t.device().str(), "' (this build of posenc's ops is CPU-only)");
  TORCH_CHECK_VALUE(t.layout() == at::kStrided, "posenc: ", op, ": ", name, ": expected a dense (strided) tensor, got layout ",
                    t.layout());
  TORCH_CHECK_VALUE(t.is_contiguous(), "posenc: ", op, ": ", name,
                    ": expected a contiguous tensor (call .contiguous()), got shape ", shape_str(t.sizes()), " with strides ",
                    shape_str(t.strides()));
}

/// A floating-point argument: float32/float64 and, if `like` is given, the same dtype as it.
inline void check_real(const Tensor& t, const char* op, const char* name, const Tensor* like = nullptr,
                       const char* like_name = nullptr) {
  check_storage(t, op, name);
  TORCH_CHECK_TYPE(t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble, "posenc: ", op, ": ", name,
                   ": expected dtype float32 or float64, got ", dtype_name(t.scalar_type()));
  if (like)
    TORCH_CHECK_TYPE(t.scalar_type() == like->scalar_type(), "posenc: ", op, ": ", name, ": expected dtype ",
                     dtype_name(like->scalar_type()), " (the dtype of ", like_name, "), got ",
                     dtype_name(t.scalar_type()));
}

inline void check_shape(const Tensor& t, std::vector<int64_t> want, const char* op, const char* name, const char* meaning) {
  TORCH_CHECK_VALUE(t.sizes().vec() == want, "posenc: ", op, ": ", name, ": expected shape ", shape_str(want), " (", meaning,
                    "), got ", shape_str(t.sizes()));
}

inline void check_dim(const Tensor& t, int64_t dim, const char* op, const char* name, const char* meaning) {
  TORCH_CHECK_VALUE(t.dim() == dim, "posenc: ", op, ": ", name, ": expected a ", dim, "-D tensor ", meaning, ", got shape ",
                    shape_str(t.sizes()));
}

/// Run f, translating posenc's exceptions into the matching Python ones.
template <class F>
auto guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const posenc::invalid_argument& e) {
    TORCH_CHECK_VALUE(false, e.what());
  } catch (const posenc::rotary::config_error& e) {
    TORCH_CHECK_VALUE(false, e.what());
  } catch (const posenc::error& e) {
    TORCH_CHECK(false, e.what());
  }
}

/// The pair layout of the sinusoidal and rotary ops.
inline posenc::sinusoidal::layout parse_layout(const std::string& s, const char* op) {
  if (s == "interleaved") return posenc::sinusoidal::layout::interleaved;
  if (s == "half") return posenc::sinusoidal::layout::half;
  TORCH_CHECK_VALUE(false, "posenc: ", op, ": layout: expected 'interleaved' or 'half', got '", s, "'");
}

/// The float64 values of an optional positions tensor [rows] (rows < 0: any length; empty when
/// absent) of the sinusoidal and 1-D rotary ops.
inline std::vector<double> positions_of(const c10::optional<Tensor>& positions, int64_t rows, const char* op) {
  if (!positions) return {};
  const Tensor& p = *positions;
  check_storage(p, op, "positions");
  TORCH_CHECK_TYPE(p.scalar_type() == at::kDouble || p.scalar_type() == at::kFloat || p.scalar_type() == at::kLong, "posenc: ",
                   op, ": positions: expected dtype float64, float32 or int64, got ", dtype_name(p.scalar_type()));
  TORCH_CHECK_VALUE(p.dim() == 1 && (rows < 0 || p.size(0) == rows), "posenc: ", op, ": positions: expected shape [",
                    rows < 0 ? std::string("L") : std::to_string(rows), "] (one position per row), got ", shape_str(p.sizes()));
  Tensor q = p.to(at::kDouble).contiguous();
  return std::vector<double>(q.data_ptr<double>(), q.data_ptr<double>() + q.numel());
}


/// The int64 values of an optional int64/int32 tensor (empty when absent).
inline std::vector<int64_t> index_vector(const c10::optional<Tensor>& t, const char* op, const char* name) {
  if (!t) return {};
  check_storage(*t, op, name);
  TORCH_CHECK_TYPE(t->scalar_type() == at::kLong || t->scalar_type() == at::kInt, "posenc: ", op, ": ", name,
                   ": expected dtype int64 or int32, got ", dtype_name(t->scalar_type()));
  Tensor q = t->to(at::kLong).contiguous();
  return std::vector<int64_t>(q.data_ptr<int64_t>(), q.data_ptr<int64_t>() + q.numel());
}

inline bool is_half_type(at::ScalarType t) { return t == at::kHalf || t == at::kBFloat16; }

/// The rotated (or biased) tensor of the rope, axes_rope and alibi ops: CPU, strided, any of the
/// four float dtypes, last dimension contiguous; named "x": [B, H, S, D] or ragged [T, H, D].
inline void check_rope_x(const Tensor& x, const char* op, const char* name = "x") {
  TORCH_CHECK_VALUE(x.defined(), "posenc: ", op, ": ", name, ": expected a tensor, got an undefined tensor");
  TORCH_CHECK_VALUE(x.device().is_cpu(), "posenc: ", op, ": ", name, ": expected a CPU tensor, got device '", x.device().str(),
                    "' (this build of posenc's ops is CPU-only)");
  TORCH_CHECK_VALUE(x.layout() == at::kStrided, "posenc: ", op, ": ", name, ": expected a dense (strided) tensor, got layout ",
                    x.layout());
  const auto t = x.scalar_type();
  TORCH_CHECK_TYPE(t == at::kFloat || t == at::kDouble || is_half_type(t), "posenc: ", op, ": ", name, ": expected dtype ",
                   "bfloat16, float16, float32 or float64, got ", dtype_name(t));
  TORCH_CHECK_VALUE(x.dim() == 4 || x.dim() == 3 || std::string(name) != "x", "posenc: ", op,
                    ": ", name, ": expected [batch, heads, seq, head_dim] or ragged [tokens, heads, head_dim], got shape ",
                    shape_str(x.sizes()));
  TORCH_CHECK_VALUE(x.stride(-1) == 1 || x.size(-1) <= 1, "posenc: ", op,
                    ": ", name, ": expected head_dim contiguous (stride 1 in the last dimension), got strides ",
                    shape_str(x.strides()));
}

// ---- tensors as Eigen objects and storage types ------------------------------------------------

template <class T>
using cmap = Eigen::Map<const posenc::matrix<T>>;
template <class T>
using vmap = Eigen::Map<const posenc::vector<T>>;

template <class T>
posenc::matrix<T> to_matrix(const Tensor& t) {
  return cmap<T>(t.data_ptr<T>(), t.size(0), t.numel() / std::max<int64_t>(t.size(0), 1));
}
template <class T>
posenc::vector<T> to_vector(const Tensor& t) {
  return vmap<T>(t.data_ptr<T>(), t.numel());
}
template <class T, class Derived>
Tensor from_matrix(const Eigen::MatrixBase<Derived>& m, std::vector<int64_t> shape, at::ScalarType dt) {
  Tensor out = at::empty(shape, at::TensorOptions().dtype(dt));
  Eigen::Map<posenc::matrix<T>>(out.data_ptr<T>(), m.rows(), m.cols()) = m;
  return out;
}

/// f(T{}) with T the storage type of dtype t: float, double, Eigen::half or Eigen::bfloat16 (the
/// bit layouts of at::Half and at::BFloat16).
template <class F>
void dispatch_storage(at::ScalarType t, F&& f) {
  switch (t) {
    case at::kFloat: f(float{}); break;
    case at::kDouble: f(double{}); break;
    case at::kHalf: f(Eigen::half{}); break;
    default: f(Eigen::bfloat16{});
  }
}

template <class T>
T* storage_ptr(Tensor& t) {
  return reinterpret_cast<T*>(t.data_ptr());
}

// ---- autograd ------------------------------------------------------------------------------------

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

/// The typed dispatcher handle of posenc::<name> (a backward calls the ops through it, so that it
/// is itself differentiable and traceable).
template <class Sig>
c10::TypedOperatorHandle<Sig> op_handle(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").template typed<Sig>();
}

/// A differentiable optional tensor: absent -> a [0] placeholder (no real argument is empty), since
/// an autograd node's inputs are defined tensors (older torch takes no optional inputs).
inline Tensor or_placeholder(const c10::optional<Tensor>& t, const Tensor& like) {
  return t ? *t : at::empty({0}, like.options());
}
inline c10::optional<Tensor> from_placeholder(const Tensor& t) {
  return t.dim() == 1 && t.size(0) == 0 ? c10::nullopt : c10::optional<Tensor>(t);
}

/// A real, eager CPU tensor (not fake, functional, batched or under a Python dispatch mode).
inline bool plain_eager(std::initializer_list<const Tensor*> ts) {
  if (c10::impl::tls_is_dispatch_key_included(c10::DispatchKey::Python)) return false;
  for (const Tensor* t : ts) {
    const auto ks = t->key_set();
    if (!t->device().is_cpu() || ks.has(c10::DispatchKey::Python) || ks.has(c10::DispatchKey::Functionalize) ||
        ks.has(c10::DispatchKey::FuncTorchBatched) || ks.has(c10::DispatchKey::PythonTLSSnapshot))
      return false;
  }
  return true;
}

/// The backward of one recorded node: the gradients of its tensor inputs (one each, undefined for
/// none) from those of its outputs and, when the node saves its inputs, the saved inputs.
using backward_fn = std::function<variable_list(const variable_list& grads, const variable_list& saved)>;

/// What a node keeps for its backward: the closure, and whether its inputs were saved.
struct autograd_closure : torch::CustomClassHolder {
  backward_fn backward;
  bool saves_inputs = false;
};

/// The generic autograd node of every differentiable op. Tag names the node (grad_fn shows
/// CppNode<autograd_node<Tag>>); the tensors are passed one by one (no tensor lists, no optional
/// tensors), which torch 1.13's custom Function accepts as well.
template <class Tag>
struct autograd_node : torch::autograd::Function<autograd_node<Tag>> {
  template <class... Ts>
  static variable_list forward(AutogradContext* ctx, c10::intrusive_ptr<autograd_closure> closure,
                               const std::function<variable_list()>* run, const Ts&... inputs) {
    if (closure->saves_inputs) ctx->save_for_backward({inputs...});
    ctx->saved_data["closure"] = c10::IValue::make_capsule(std::move(closure));
    at::AutoDispatchBelowADInplaceOrView guard;
    return (*run)();
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto held = ctx->saved_data["closure"].toCapsule();
    const auto& closure = static_cast<const autograd_closure&>(*held);
    const variable_list saved = closure.saves_inputs ? ctx->get_saved_variables() : variable_list{};
    variable_list g = closure.backward(grads, saved);
    g.insert(g.begin(), 2, Tensor());  // for the closure and run arguments
    return g;
  }
};

/// Record one differentiable op: run `forward` below the Autograd key (its outputs are the op's),
/// with `inputs` as the node's tensor inputs (each gets the gradient `backward` returns for it,
/// in order; an undefined one: none); save_inputs: keep the inputs (version-checked) for backward,
/// which receives them as `saved`. Captures of `backward` live as long as the node.
template <class Tag, class... Ts>
variable_list autograd_apply(bool save_inputs, const std::function<variable_list()>& forward, backward_fn backward,
                             const Ts&... inputs) {
  auto closure = c10::make_intrusive<autograd_closure>();
  closure->backward = std::move(backward);
  closure->saves_inputs = save_inputs;
  return autograd_node<Tag>::apply(std::move(closure), &forward, inputs...);
}

}  // namespace posenc_torch

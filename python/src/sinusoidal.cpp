// SPDX-License-Identifier: MIT
// The sinusoidal tables as PyTorch operators: sinusoidal_table [L, d] and rope_tables (the cos and
// sin halves of the 'half' table). Neither has a tensor input to dispatch on: both are
// CompositeExplicitAutograd. Conventions: common.hpp.
#include "common.hpp"

#include <span>
#include <tuple>

#include <posenc/sinusoidal.hpp>

using namespace posenc_torch;

namespace {

at::ScalarType check_out_dtype(at::ScalarType dt, const char* op) {
  TORCH_CHECK_TYPE(dt == at::kFloat || dt == at::kDouble, "posenc: ", op, ": dtype: expected float32 or float64, got ",
                   dtype_name(dt));
  return dt;
}

/// The L x d sinusoidal table (row i = position first_position + i * position_step, or positions[i]).
Tensor sinusoidal_table(int64_t L, int64_t d, const std::string& layout, const std::string& spacing, double base,
                        double first_position, double position_step, bool zero_pad_odd, const c10::optional<Tensor>& positions,
                        at::ScalarType dtype) {
  constexpr const char* op = "sinusoidal_table";
  check_out_dtype(dtype, op);
  TORCH_CHECK_VALUE(L >= 0, "posenc: ", op, ": L: expected >= 0, got ", L);
  TORCH_CHECK_VALUE(d >= 1, "posenc: ", op, ": d: expected >= 1, got ", d);
  posenc::sinusoidal::options o;
  o.layout = parse_layout(layout, op);
  if (spacing == "two_k_over_d") o.spacing = posenc::sinusoidal::spacing::two_k_over_d;
  else if (spacing == "k_over_half_minus_one") o.spacing = posenc::sinusoidal::spacing::k_over_half_minus_one;
  else TORCH_CHECK_VALUE(false, "posenc: ", op, ": spacing: expected 'two_k_over_d' or 'k_over_half_minus_one', got '", spacing, "'");
  o.base = base;
  o.first_position = first_position;
  o.position_step = position_step;
  o.odd = zero_pad_odd ? posenc::sinusoidal::odd_dimension::zero_pad : posenc::sinusoidal::odd_dimension::reject;
  const auto pos = positions_of(positions, positions ? -1 : L, op);
  const int64_t rows = positions ? static_cast<int64_t>(pos.size()) : L;
  Tensor out = at::empty({rows, d}, at::TensorOptions().dtype(dtype));
  guarded([&] {
    auto run = [&](auto* data) {
      if (positions) posenc::sinusoidal::fill_at(std::span<const double>(pos), data, static_cast<std::size_t>(d), static_cast<std::size_t>(d), o);
      else posenc::sinusoidal::fill(data, static_cast<std::size_t>(rows), static_cast<std::size_t>(d), static_cast<std::size_t>(d), o);
    };
    if (dtype == at::kFloat) run(out.data_ptr<float>());
    else run(out.data_ptr<double>());
    return 0;
  });
  return out;
}

/// (cos, sin), each [L, rotary_dim / 2]: column k = cos/sin(x_i * base^(-2k / rotary_dim)).
std::tuple<Tensor, Tensor> rope_tables(int64_t L, int64_t rotary_dim, double base, double first_position, double position_step,
                                       const c10::optional<Tensor>& positions, at::ScalarType dtype) {
  constexpr const char* op = "rope_tables";
  TORCH_CHECK_VALUE(rotary_dim >= 2 && rotary_dim % 2 == 0, "posenc: ", op, ": rotary_dim: expected an even value >= 2, got ",
                    rotary_dim);
  Tensor sc = sinusoidal_table(L, rotary_dim, "half", "two_k_over_d", base, first_position, position_step, false, positions, dtype);
  const int64_t h = rotary_dim / 2;
  return {sc.narrow(1, h, h).contiguous(), sc.narrow(1, 0, h).contiguous()};
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(posenc, m) {
  m.def("sinusoidal_table(int L, int d, str layout='interleaved', str spacing='two_k_over_d', float base=10000.0, "
        "float first_position=0.0, float position_step=1.0, bool zero_pad_odd=False, Tensor? positions=None, "
        "ScalarType dtype=7) -> Tensor");
  m.def("rope_tables(int L, int rotary_dim, float base=10000.0, float first_position=0.0, float position_step=1.0, "
        "Tensor? positions=None, ScalarType dtype=7) -> (Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(posenc, CompositeExplicitAutograd, m) {
  m.impl("sinusoidal_table", TORCH_FN(sinusoidal_table));
  m.impl("rope_tables", TORCH_FN(rope_tables));
}

"""Bad input raises ValueError (shape, range, device, layout, contiguity, non-finite values) or
TypeError (dtype) carrying the message of the check that failed -- never a crash. Messages
from posenc's C++ validation (posenc::invalid_argument and subclasses) pass through unchanged."""
import pytest
import torch

import posenc

P = torch.ops.posenc
F64 = torch.float64


def floater_args(d=4, h=5, n=2, dtype=F64):
    return [torch.randn(h, d + 1, dtype=dtype), torch.zeros(h, dtype=dtype), torch.randn(d, h + 1, dtype=dtype),
            torch.zeros(d, dtype=dtype), torch.randn(n, d, dtype=dtype)]


def test_floater_shapes():
    a = floater_args()
    a[0] = torch.randn(5, 4, dtype=F64)  # no time column
    with pytest.raises(ValueError, match=r"floater_forward: w1: expected shape \[5, 5\] \(layer 1 weight \[hidden, d \+ 1\], time column last\), got \[5, 4\]"):
        P.floater_forward(*a, 3)
    a = floater_args()
    a[3] = torch.zeros(3, dtype=F64)
    with pytest.raises(ValueError, match=r"b2: expected shape \[4\] \(layer 2 bias \[d\]\), got \[3\]"):
        P.floater_forward(*a, 3)
    with pytest.raises(ValueError, match=r"p0: expected a 2-D tensor \[N, d\]"):
        P.floater_forward(*floater_args()[:4], torch.zeros(4, dtype=F64), 3)
    with pytest.raises(ValueError, match=r"L: expected a number of positions >= 1, got 0"):
        P.floater_forward(*floater_args(), 0)
    with pytest.raises(ValueError, match=r"delta: expected a finite delta > 0, got -0.5"):
        P.floater_forward(*floater_args(), 3, -0.5)
    with pytest.raises(ValueError, match=r"substeps: expected >= 1 steps per interval, got 0"):
        P.floater_forward(*floater_args(), 3, 0.01, 0)
    with pytest.raises(ValueError, match=r"scheme: expected 'rk4'.*got 'rk5'"):
        P.floater_forward(*floater_args(), 3, scheme="rk5")
    with pytest.raises(ValueError, match=r"posenc: floater::activation_from_string: expected relu, tanh, gelu, softplus or identity, got 'swish'"):
        P.floater_forward(*floater_args(), 3, activation="swish")
    with pytest.raises(ValueError, match=r"activation: expected one of"):
        posenc.FloaterEncoder(4, activation="swish")
    with pytest.raises(ValueError, match=r"gradient: expected 'backprop'"):
        posenc.FloaterEncoder(4, gradient="autograd")


def test_floater_dtype_device_layout():
    a = floater_args()
    a[1] = a[1].float()
    with pytest.raises(TypeError, match=r"b1: expected dtype float64 \(the dtype of p0\), got float32"):
        P.floater_forward(*a, 3)
    a = [t.to(torch.int64) for t in floater_args()]
    with pytest.raises(TypeError, match=r"p0: expected dtype float32 or float64, got int64"):
        P.floater_forward(*a, 3)
    a = floater_args()
    a[4] = torch.randn(4, 2, dtype=F64).t()
    with pytest.raises(ValueError, match=r"p0: expected a contiguous tensor \(call .contiguous\(\)\), got shape \[2, 4\] with strides \[1, 2\]"):
        P.floater_forward(*a, 3)
    a = [t.to("meta") for t in floater_args()]
    with pytest.raises(ValueError, match=r"p0: expected a CPU tensor, got device 'meta'"):
        P.floater_forward(*a, 3)
    a = floater_args()
    a[4] = a[4].to_sparse()
    with pytest.raises(ValueError, match=r"p0: expected a dense \(strided\) tensor"):
        P.floater_forward(*a, 3)


def test_floater_non_finite_and_backward_grad():
    a = floater_args()
    a[4][0, 1] = float("nan")
    with pytest.raises(ValueError, match=r"posenc: floater::encoder: p0 \(initial state\) contains NaN or Inf"):
        P.floater_forward(*a, 3)
    a = floater_args()
    a[2][0, 0] = float("inf")
    with pytest.raises(ValueError, match=r"w2 \(layer 2 weight\) contains NaN or Inf"):
        P.floater_forward(*a, 3)
    a = floater_args()
    a[0].fill_(1e3)
    a[2].fill_(1e3)  # h ~ 1e6 |p|: the solution overflows
    with pytest.raises(ValueError, match=r"the solution became non-finite \(NaN or Inf\) at position"):
        P.floater_forward(*a, 400, 0.1, 1, "identity")
    t, st = P.floater_forward(*floater_args(), 3)
    with pytest.raises(ValueError, match=r"floater_backward: grad: expected shape \[L, 2, 4\] with L >= 1 \(dL/dtable\), got \[3, 4\]"):
        P.floater_backward(st, torch.ones(3, 4, dtype=F64))
    with pytest.raises(TypeError, match=r"grad: expected dtype float64 \(the dtype of the table\), got float32"):
        P.floater_backward(st, torch.ones(3, 2, 4))
    g = torch.ones(3, 2, 4, dtype=F64)
    g[1, 1, 1] = float("inf")
    with pytest.raises(ValueError, match=r"floater::encoder::backprop: dL/dP contains NaN or Inf"):
        P.floater_backward(st, g)
    with pytest.raises(ValueError, match=r"adjoint_substeps: expected >= 0"):
        P.floater_backward(st, torch.ones(3, 2, 4, dtype=F64), True, -1)


def test_sinusoidal_and_rope():
    with pytest.raises(ValueError, match=r"posenc: sinusoidal::fill: d: expected an even d \(or options.odd = odd_dimension::zero_pad\), got 5"):
        posenc.sinusoidal_table(4, 5)
    with pytest.raises(ValueError, match=r"options.base: expected base > 0, got -2"):
        posenc.sinusoidal_table(4, 4, base=-2.0)
    with pytest.raises(ValueError, match=r"layout: expected 'interleaved' or 'half', got 'pairs'"):
        posenc.sinusoidal_table(4, 4, layout="pairs")
    with pytest.raises(TypeError, match=r"sinusoidal_table: dtype: expected float32 or float64, got int32"):
        posenc.sinusoidal_table(4, 4, dtype=torch.int32)
    x = torch.randn(2, 6, 12, dtype=F64)
    with pytest.raises(ValueError, match=r"posenc: rotary::apply_rotary: x: expected a column count divisible by head_dim = 5, got 12 columns"):
        posenc.apply_rotary(x, head_dim=5)
    with pytest.raises(ValueError, match=r"options.rotary_dim: expected an even rotary_dim with 2 <= rotary_dim <= head_dim = 6, got 3"):
        posenc.apply_rotary(x, head_dim=6, rotary_dim=3)
    with pytest.raises(ValueError, match=r"rope_rotate_: positions: expected shape \[6\] \(one position per row\), got \[5\]"):
        posenc.apply_rotary(x, positions=torch.arange(5.0))
    with pytest.raises(ValueError, match=r"rope_rotate_: x: expected a contiguous tensor"):
        posenc.apply_rotary_(x.transpose(0, 1))
    with pytest.raises(ValueError, match=r"x: expected a tensor \[..., L, heads \* head_dim\] with at least 2 dimensions, got shape \[12\]"):
        posenc.apply_rotary_(torch.zeros(12))
    with pytest.raises(TypeError, match=r"x: expected dtype float32 or float64, got float16"):
        posenc.apply_rotary_(x.half())
    with pytest.raises(ValueError, match=r"rope_tables: rotary_dim: expected an even value >= 2, got 7"):
        posenc.rope_tables(4, 7)


def tupe_args(d=8, H=2, rows=6, nb=8):
    return [torch.randn(rows, d, dtype=F64), torch.ones(d, dtype=F64), torch.zeros(d, dtype=F64),
            torch.randn(d, d, dtype=F64), torch.zeros(d, dtype=F64), torch.randn(d, d, dtype=F64),
            torch.zeros(d, dtype=F64), torch.randn(nb + 1, H, dtype=F64)]


def test_tupe():
    with pytest.raises(ValueError, match=r"posenc: tupe::positional_bias: config.d: expected a multiple of config.heads = 3, got d = 8"):
        posenc.tupe_bias(*tupe_args(), n=4, heads=3, num_buckets=8, max_distance=16)
    with pytest.raises(ValueError, match=r"n = 6: the position table has 6 rows but the sequence needs 7 \(n \+ 1: reference \[CLS\] reset\)"):
        posenc.tupe_bias(*tupe_args(), n=6, heads=2, num_buckets=8, max_distance=16)
    with pytest.raises(ValueError, match=r"relative_attention_bias \(num_buckets \+ 1, heads\): expected shape \[33, 2\], got \[9, 2\]"):
        posenc.tupe_bias(*tupe_args(), n=4, heads=2)
    a = tupe_args()
    a[3] = torch.randn(8, 7, dtype=F64)
    with pytest.raises(ValueError, match=r"pos_q_weight: expected shape \[8, 8\], got \[8, 7\]"):
        posenc.tupe_bias(*a, n=4, heads=2, num_buckets=8, max_distance=16)
    a = tupe_args()
    a[6] = a[6].float()
    with pytest.raises(TypeError, match=r"tupe_bias: k_bias: expected dtype float64 \(the dtype of pos\), got float32"):
        posenc.tupe_bias(*a, n=4, heads=2, num_buckets=8, max_distance=16)
    with pytest.raises(ValueError, match=r"cls: expected 'reference'.* or 'off', got 'free'"):
        posenc.tupe_bias(*tupe_args(), n=4, heads=2, cls="free", num_buckets=8, max_distance=16)
    with pytest.raises(ValueError, match=r"tupe_bias_backward: grad: expected shape \[2, n, n\] \(dL/dbias\), got \[2, 3, 4\]"):
        P.tupe_bias_backward(torch.zeros(2, 3, 4, dtype=F64), *tupe_args(), 2, num_buckets=8, max_distance=16)


def test_buckets_and_toeplitz():
    with pytest.raises(ValueError, match=r"bucket_spec.num_buckets: expected an even number >= 4 for bidirectional buckets, got 7"):
        posenc.relative_position_bucket(5, num_buckets=7)
    with pytest.raises(ValueError, match=r"bucket_spec.max_distance: expected > max_exact = 8"):
        posenc.relative_position_bucket(5, num_buckets=32, max_distance=8)
    with pytest.raises(ValueError, match=r"n: expected a sequence length >= 1, got 0"):
        posenc.relative_position_bucket(0)
    with pytest.raises(ValueError, match=r"t5_bias: table: expected shape \[rows >= 32 \(num_buckets\), heads >= 1\], got \[8, 2\]"):
        posenc.t5_bias(torch.zeros(8, 2), 4)
    with pytest.raises(ValueError, match=r"toeplitz_matmul: b: expected shape \[9\] \(m \+ n - 1 with m = 4, n = 6\), got \[8\]"):
        posenc.toeplitz_matmul(torch.zeros(8), torch.zeros(6, 2), 4)
    with pytest.raises(TypeError, match=r"toeplitz_matmul: b: expected dtype float32 \(the dtype of x\), got float64"):
        posenc.toeplitz_matmul(torch.zeros(11, dtype=F64), torch.zeros(6, 2))
    with pytest.raises(ValueError, match=r"toeplitz_correlate: g: expected 2 columns \(as x\), got shape \[3, 1\]"):
        P.toeplitz_correlate(torch.zeros(3, 1), torch.zeros(6, 2))

"""Sinusoidal, RoPE, TUPE, T5 buckets and Toeplitz ops against closed forms, plain-PyTorch
re-implementations of the reference code, dense matrices, SciPy, and gradcheck/gradgradcheck."""
import math

import numpy as np
import pytest
import scipy.linalg
import torch
from torch.autograd import gradcheck, gradgradcheck

import posenc

F64 = torch.float64


def rel(a, b):
    return ((a - b).abs().max() / b.abs().max()).item()


# ---- sinusoidal --------------------------------------------------------------------------------------

def test_sinusoidal_eq6_closed_form():
    # Reference: eq. 6 evaluated in f64 by torch; its angle i * w_k is rounded once (<= 2^-53 * L
    # rad), so with L = 200 the two agree to 1e-12 absolute.
    L, d = 200, 16
    P = posenc.sinusoidal_table(L, d, dtype=F64)
    i = torch.arange(L, dtype=F64)[:, None]
    w = 10000.0 ** (-torch.arange(0, d, 2, dtype=F64) / d)
    ref = torch.empty(L, d, dtype=F64)
    ref[:, 0::2], ref[:, 1::2] = torch.sin(i * w), torch.cos(i * w)
    assert (P - ref).abs().max() < 1e-12
    P32 = posenc.sinusoidal_table(L, d, dtype=torch.float32)
    assert P32.dtype == torch.float32 and (P32.double() - ref).abs().max() < 1e-6  # float32 rounding of |x| <= 1


def test_sinusoidal_fairseq_layout():
    # fairseq's SinusoidalPositionalEmbedding.get_embedding: [sin | cos], w_k = 10000^(-k/(half-1)),
    # positions from padding_idx + 1 = 2, odd d zero-padded.
    L, d, pad = 50, 11, 1
    half = d // 2
    emb = math.log(10000) / (half - 1)
    w = torch.exp(torch.arange(half, dtype=F64) * -emb)
    x = (torch.arange(L, dtype=F64) + pad + 1)[:, None] * w[None, :]
    ref = torch.cat([torch.sin(x), torch.cos(x), torch.zeros(L, 1, dtype=F64)], dim=1)
    P = posenc.sinusoidal_table(L, d, layout="half", spacing="k_over_half_minus_one", first_position=pad + 1,
                                zero_pad_odd=True, dtype=F64)
    assert (P - ref).abs().max() < 1e-12
    pos = torch.tensor([0.5, 3.25, 100.0], dtype=F64)
    Q = posenc.sinusoidal_table(0, 8, positions=pos, dtype=F64)
    w8 = 10000.0 ** (-torch.arange(0, 8, 2, dtype=F64) / 8)
    assert (Q[:, 0::2] - torch.sin(pos[:, None] * w8)).abs().max() < 1e-13


# ---- rotary -------------------------------------------------------------------------------------------

def rope_ref(x, positions, head_dim, layout, base=10000.0):
    """Plain rotation: interleaved pairs as complex numbers (Meta's LLaMA), half layout via
    rotate_half (Hugging Face)."""
    *lead, L, C = x.shape
    H = C // head_dim
    xs = x.reshape(*lead, L, H, head_dim)
    inv = base ** (-torch.arange(0, head_dim, 2, dtype=F64) / head_dim)
    ang = positions[:, None] * inv[None, :]  # [L, hd/2]
    cos, sin = torch.cos(ang)[:, None, :], torch.sin(ang)[:, None, :]
    if layout == "interleaved":
        a, b = xs[..., 0::2], xs[..., 1::2]
        out = torch.empty_like(xs)
        out[..., 0::2], out[..., 1::2] = a * cos - b * sin, a * sin + b * cos
    else:
        c2, s2 = torch.cat([cos, cos], -1), torch.cat([sin, sin], -1)
        h = head_dim // 2
        rot = torch.cat([-xs[..., h:], xs[..., :h]], -1)
        out = xs * c2 + rot * s2
    return out.reshape(x.shape)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_rope_against_plain_rotation(layout):
    torch.manual_seed(0)
    x = torch.randn(2, 40, 3 * 8, dtype=F64)
    y = posenc.apply_rotary(x, head_dim=8, layout=layout)
    ref = rope_ref(x, torch.arange(40, dtype=F64), 8, layout)
    assert (y - ref).abs().max() < 1e-12  # angles <= 40 rad: f64 rounding of the reference ~1e-14
    pos = torch.tensor([3.0, 0.5, 7.0, 100.0], dtype=F64)
    z = posenc.apply_rotary(x[:, :4], positions=pos, head_dim=8, layout=layout)
    assert (z - rope_ref(x[:, :4], pos, 8, layout)).abs().max() < 1e-12
    # in place, and the relative property <R(m) q, R(n) k> = <q, R(n - m) k>
    q = x.clone()
    assert posenc.apply_rotary_(q, head_dim=8, layout=layout) is q
    assert torch.equal(q, y)
    cos, sin = posenc.rope_tables(40, 8, dtype=F64)
    ang = torch.arange(40, dtype=F64)[:, None] * 10000.0 ** (-torch.arange(0, 8, 2, dtype=F64) / 8)
    assert (cos - torch.cos(ang)).abs().max() < 1e-13 and (sin - torch.sin(ang)).abs().max() < 1e-13


def test_rope_gradients():
    torch.manual_seed(1)
    x = torch.randn(2, 5, 8, dtype=F64, requires_grad=True)
    f = lambda t: posenc.apply_rotary(t, head_dim=4, layout="half", first_position=2.0, position_step=0.5)
    assert gradcheck(f, (x,)) and gradgradcheck(f, (x,))
    pos = torch.tensor([1.0, -2.0, 3.5, 0.0, 9.0], dtype=F64)
    g = lambda t: posenc.apply_rotary(t, positions=pos, head_dim=8)
    assert gradcheck(g, (x,)) and gradgradcheck(g, (x,))
    # in-place on a non-leaf, recorded by autograd
    y = x * 1.0
    posenc.apply_rotary_(y, head_dim=4)
    y.sum().backward()
    gx = x.grad.clone()
    x.grad = None
    posenc.apply_rotary(x, head_dim=4).sum().backward()
    assert torch.allclose(gx, x.grad, rtol=0, atol=1e-15)


# ---- TUPE ---------------------------------------------------------------------------------------------

def t5_bucket_ref(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """relative_position_bucket of TUPE's code ("this is from T5"), verbatim in torch."""
    ret = 0
    n = -relative_position
    if bidirectional:
        num_buckets //= 2
        ret += (n < 0).to(torch.long) * num_buckets
        n = torch.abs(n)
    else:
        n = torch.max(n, torch.zeros_like(n))
    max_exact = num_buckets // 2
    is_small = n < max_exact
    val_if_large = max_exact + (
        torch.log(n.float() / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    ).to(torch.long)
    val_if_large = torch.min(val_if_large, torch.full_like(val_if_large, num_buckets - 1))
    ret += torch.where(is_small, n, val_if_large)
    return ret


def tupe_ref(pos_w, ln_w, ln_b, qw, qb, kw, kb, rel_w, n, H, eps=1e-5, nb=32, md=128):
    """TransformerSentenceEncoder's positional term (TUPE-R, [CLS] reset), in plain torch."""
    d = pos_w.shape[1]
    weight = torch.nn.functional.layer_norm(pos_w[: n + 1], (d,), ln_w, ln_b, eps)
    scaling = float(d / H * 2) ** -0.5
    pos_q = torch.nn.functional.linear(weight, qw, qb).view(n + 1, H, -1).transpose(0, 1) * scaling
    pos_k = torch.nn.functional.linear(weight, kw, kb).view(n + 1, H, -1).transpose(0, 1)
    abs_pos_bias = torch.bmm(pos_q, pos_k.transpose(1, 2))
    cls_2_other = abs_pos_bias[:, 0, 0]
    other_2_cls = abs_pos_bias[:, 1, 1]
    abs_pos_bias = abs_pos_bias[:, 1:, 1:].clone()
    abs_pos_bias[:, :, 0] = other_2_cls.view(-1, 1)
    abs_pos_bias[:, 0, :] = cls_2_other.view(-1, 1)
    ctx = torch.arange(n)[:, None]
    mem = torch.arange(n)[None, :]
    rp_bucket = t5_bucket_ref(mem - ctx, num_buckets=nb, max_distance=md)
    rp_bucket[:, 0] = nb
    rp_bucket[0, :] = nb // 2
    rel = torch.nn.functional.embedding(rp_bucket, rel_w).permute(2, 0, 1)
    return abs_pos_bias + rel


def test_tupe_against_reference_module():
    # f64, 1e-12 relative: same arithmetic in a different order (LayerNorm, GEMMs).
    torch.manual_seed(2)
    d, H, n, maxlen = 16, 4, 20, 24
    m = posenc.TUPEPositionalBias(d, H, maxlen, num_buckets=8, max_distance=16).double()
    with torch.no_grad():
        for p in m.parameters():
            p.normal_(0, 0.5)
    B = m(n)
    args = [p.detach().clone().requires_grad_() for p in (m.pos.weight, m.pos_ln.weight, m.pos_ln.bias,
            m.pos_q_linear.weight, m.pos_q_linear.bias, m.pos_k_linear.weight, m.pos_k_linear.bias,
            m.relative_attention_bias.weight)]
    R = tupe_ref(*args, n=n, H=H, nb=8, md=16)
    assert B.shape == (H, n, n) and rel(B, R) < 1e-12
    g = torch.randn_like(R)
    (B * g).sum().backward()
    (R * g).sum().backward()
    ours = [m.pos.weight, m.pos_ln.weight, m.pos_ln.bias, m.pos_q_linear.weight, m.pos_q_linear.bias,
            m.pos_k_linear.weight, m.pos_k_linear.bias, m.relative_attention_bias.weight]
    for a, b in zip(ours, args):
        assert a.grad.shape == b.grad.shape
        assert (a.grad - b.grad).abs().max() <= 1e-12 * b.grad.abs().max() + 1e-15
    assert set(m.state_dict()) == {"pos.weight", "pos_ln.weight", "pos_ln.bias", "pos_q_linear.weight",
                                   "pos_q_linear.bias", "pos_k_linear.weight", "pos_k_linear.bias",
                                   "relative_attention_bias.weight"}


@pytest.mark.parametrize("cls,relative", [("reference", True), ("off", False), ("off", True)])
def test_tupe_gradcheck(cls, relative):
    torch.manual_seed(3)
    d, H, n = 4, 2, 5
    rows = n + (1 if cls == "reference" else 0)
    ts = [torch.randn(rows, d, dtype=F64), 1 + 0.1 * torch.randn(d, dtype=F64), 0.1 * torch.randn(d, dtype=F64),
          torch.randn(d, d, dtype=F64), torch.randn(d, dtype=F64), torch.randn(d, d, dtype=F64),
          torch.randn(d, dtype=F64), torch.randn(5, H, dtype=F64) if relative else None]
    ts = [t.requires_grad_() if t is not None else None for t in ts]
    f = lambda *a: posenc.tupe_bias(*a, n=n, heads=H, cls=cls, num_buckets=4, max_distance=8)
    assert gradcheck(f, tuple(ts), eps=1e-6, atol=1e-7)


# ---- T5 buckets -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("nb,md,bidir", [(32, 128, True), (8, 20, True), (16, 64, False)])
def test_buckets_match_reference_code(nb, md, bidir):
    n = 300  # past max_distance: the clipped far buckets are covered
    i = torch.arange(n)
    ref = t5_bucket_ref(i[None, :] - i[:, None], bidirectional=bidir, num_buckets=nb, max_distance=md)
    assert torch.equal(posenc.relative_position_bucket(n, nb, md, bidir), ref)


def test_t5_bias_and_gradients():
    torch.manual_seed(4)
    table = torch.randn(9, 3, dtype=F64, requires_grad=True)
    B = posenc.t5_bias(table, 12, num_buckets=8, max_distance=10)
    idx = posenc.relative_position_bucket(12, 8, 10)
    assert torch.equal(B, table[idx].permute(2, 0, 1))
    f = lambda t: posenc.t5_bias(t, 7, num_buckets=8, max_distance=10)
    assert gradcheck(f, (table,)) and gradgradcheck(f, (table,))


# ---- Toeplitz ----------------------------------------------------------------------------------------------

def dense_toeplitz(b, m, n):
    i = torch.arange(m)[:, None]
    j = torch.arange(n)[None, :]
    return b[(j - i) + (m - 1)]


@pytest.mark.parametrize("m,n,k", [(7, 7, 3), (5, 9, 2), (12, 4, 1), (64, 64, 5)])
def test_toeplitz_product_dense_and_scipy(m, n, k):
    # FFT vs dense GEMM: error ~ eps * log(P) * ||b|| ||x||: 1e-12 relative in f64, 1e-5 in f32.
    torch.manual_seed(5)
    b = torch.randn(m + n - 1, dtype=F64)
    x = torch.randn(n, k, dtype=F64)
    Y = posenc.toeplitz_matmul(b, x, m)
    ref = dense_toeplitz(b, m, n) @ x
    assert rel(Y, ref) < 1e-12
    c, r = b[: m][::1].flip(0).numpy(), b[m - 1:].numpy()  # first column b_0, b_-1, ...; first row b_0, b_1, ...
    assert np.abs(Y.numpy() - scipy.linalg.matmul_toeplitz((c, r), x.numpy())).max() < 1e-12 * np.abs(ref.numpy()).max()
    Y32 = posenc.toeplitz_matmul(b.float(), x.float(), m)
    assert Y32.dtype == torch.float32 and rel(Y32.double(), ref) < 1e-5
    if m == n:
        assert rel(posenc.toeplitz_matmul(b, x[:, 0].contiguous()), ref[:, 0]) < 1e-12  # vector input, square default


def test_toeplitz_gradients():
    torch.manual_seed(6)
    m, n, k = 4, 6, 2
    b = torch.randn(m + n - 1, dtype=F64, requires_grad=True)
    x = torch.randn(n, k, dtype=F64, requires_grad=True)
    f = lambda b, x: posenc.toeplitz_matmul(b, x, m)
    assert gradcheck(f, (b, x)) and gradgradcheck(f, (b, x))
    # dX = B^T dY and db by correlation, against the dense matrix's autograd
    g = torch.randn(m, k, dtype=F64)
    (f(b, x) * g).sum().backward()
    b2, x2 = b.detach().clone().requires_grad_(), x.detach().clone().requires_grad_()
    ((dense_toeplitz(b2, m, n) @ x2) * g).sum().backward()
    assert rel(b.grad, b2.grad) < 1e-12 and rel(x.grad, x2.grad) < 1e-12


def test_tupe_loads_reference_checkpoint_keys():
    src = posenc.TUPEPositionalBias(8, 2, 10, num_buckets=8, max_distance=16)
    ckpt = {"decoder.sentence_encoder." + k: v for k, v in src.state_dict().items()}
    ckpt["decoder.sentence_encoder.embed_tokens.weight"] = torch.zeros(3, 8)  # ignored
    ckpt["decoder.lm_head.bias"] = torch.zeros(3)
    dst = posenc.TUPEPositionalBias(8, 2, 10, num_buckets=8, max_distance=16)
    dst.load_reference_state_dict(ckpt)
    assert torch.equal(dst(6), src(6))


def test_ops_callable_from_torchscript():
    @torch.jit.script
    def f(b: torch.Tensor, x: torch.Tensor, w1: torch.Tensor, b1: torch.Tensor, w2: torch.Tensor, b2: torch.Tensor,
          p0: torch.Tensor):
        y = torch.ops.posenc.toeplitz_matmul(b, x, 3)
        table, state = torch.ops.posenc.floater_forward(w1, b1, w2, b2, p0, 4)
        g = torch.ops.posenc.floater_backward(state, torch.ones_like(table))
        return y, table, g[4]

    torch.manual_seed(7)
    b, x = torch.randn(5, dtype=F64), torch.randn(3, 2, dtype=F64)
    w1, b1, w2, b2, p0 = (torch.randn(4, 4, dtype=F64), torch.zeros(4, dtype=F64), torch.randn(3, 5, dtype=F64),
                          torch.zeros(3, dtype=F64), torch.randn(2, 3, dtype=F64))
    y, table, dp0 = f(b, x, w1, b1, w2, b2, p0)
    assert torch.equal(y, posenc.toeplitz_matmul(b, x, 3))
    ps = [t.clone().requires_grad_() for t in (w1, b1, w2, b2, p0)]
    t2 = posenc.floater_table(*ps, L=4)
    t2.sum().backward()
    assert torch.equal(table, t2.detach()) and torch.equal(dp0, ps[4].grad)


def test_float32_paths_agree_with_float64():
    # Each op in float32 against its own float64 result: float32 rounding of O(1) values, a few
    # ulps per operation (eps = 1.2e-7), bounded by 1e-5 relative for the GEMM-based TUPE term.
    torch.manual_seed(8)
    x = torch.randn(3, 20, 16, dtype=F64)
    y64 = posenc.apply_rotary(x, head_dim=8, layout="half")
    y32 = posenc.apply_rotary(x.float(), head_dim=8, layout="half")
    assert y32.dtype == torch.float32 and rel(y32.double(), y64) < 1e-6
    cos, sin = posenc.rope_tables(20, 8, dtype=torch.float32)
    c64, s64 = posenc.rope_tables(20, 8, dtype=F64)
    # posenc's float32 tables are at most two rounded products from the exact phase: <= 2 ulp(1)
    assert (cos.double() - c64).abs().max() <= 2.4e-7 and (sin.double() - s64).abs().max() <= 2.4e-7
    m = posenc.TUPEPositionalBias(16, 4, 12, num_buckets=8, max_distance=16).double()
    b64 = m(10)
    b32 = m.float()(10)
    assert b32.dtype == torch.float32 and rel(b32.double(), b64) < 1e-5
    table = torch.randn(9, 2)
    assert torch.equal(posenc.t5_bias(table, 6, num_buckets=8, max_distance=10),
                       table[posenc.relative_position_bucket(6, 8, 10)].permute(2, 0, 1))

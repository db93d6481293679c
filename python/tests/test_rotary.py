"""RotaryEmbedding from transformers configs, rope/rope_ on dense and ragged q/k, xPos and ALiBi,
against independent references: transformers' own frequencies (tests/rotary/hf, written by
transformers 5.23), rotate_half / complex rotations evaluated by torch in float64, torchscale's
xPos formula, the ALiBi paper's bias, and float64 runs of the same op for bf16/f16/f32."""
import glob
import json
import math
import os

import pytest
import torch

import posenc

F64 = torch.float64
HF_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "rotary", "hf")
P = torch.ops.posenc


def cos_sin_ref(pos, inv, af=1.0):
    ang = pos.double()[..., None] * inv
    return torch.cos(ang) * af, torch.sin(ang) * af


def rotate_ref(x, pos, inv, af=1.0, layout="half"):
    """x [..., S, D] rotated at positions pos [S] (or broadcastable), the first 2 len(inv) channels."""
    c, s = cos_sin_ref(pos, inv, af)
    h = inv.shape[0]
    r, rest = x[..., : 2 * h], x[..., 2 * h:]
    if layout == "half":
        a, b = r[..., :h], r[..., h:]
        out = torch.cat([a * c - b * s, b * c + a * s], -1)
    else:
        a, b = r[..., 0::2], r[..., 1::2]
        out = torch.stack([a * c - b * s, b * c + a * s], -1).flatten(-2)
    return torch.cat([out, rest], -1)


def hf_cases():
    out = []
    for f in sorted(glob.glob(os.path.join(HF_DIR, "*.v5.json"))):
        with open(f) as fh:
            d = json.load(fh)
        for lt, layer in d["layers"].items():
            for ev in layer["evaluations"]:
                out.append((os.path.basename(f), lt, ev.get("seq_len") or 0, ev, d["config"]))
    return out


@pytest.mark.parametrize("case", hf_cases(), ids=lambda c: "%s-%s-%s" % (c[0][:-8], c[1], c[2]))
def test_frequencies_match_transformers(case):
    name, lt, seq_len, ev, config = case
    rot = posenc.RotaryEmbedding(config, layer_type=None if lt == "default" else lt)
    inv, af = rot.frequencies(seq_len)
    hf = torch.tensor(ev["inv_freq"], dtype=F64)
    # transformers computes inv_freq in float32: posenc's float64 value rounded to float32 is
    # within a few float32 ulp of it (its pow/division round twice or three times): 4 ulp
    assert inv.shape == hf.shape and rot.rotary_dim == 2 * hf.shape[0]
    assert ((inv - hf).abs() <= 4 * 2.0 ** -23 * hf.abs()).all()
    assert abs(af - ev["attention_scaling"]) <= 1e-6 * ev["attention_scaling"]


def test_config_forms_agree():
    # a config object, its dict and its JSON text give the same module; legacy and v5 forms agree
    transformers = pytest.importorskip("transformers")
    with open(os.path.join(HF_DIR, "llama-3.1-8b.v5.json")) as f:
        v5 = json.load(f)["config"]
    with open(os.path.join(HF_DIR, "llama-3.1-8b.legacy.json")) as f:
        legacy = json.load(f)["config"]
    cfg = transformers.LlamaConfig(**{k: v for k, v in v5.items() if k != "model_type"})
    a, b, c, d = (posenc.RotaryEmbedding(x) for x in (cfg, v5, json.dumps(v5), legacy))
    for m in (b, c, d):
        assert torch.equal(a.inv_freq, m.inv_freq) and a.attention_factor == m.attention_factor


def test_per_layer_type_and_errors():
    with open(os.path.join(HF_DIR, "gemma-3-4b.v5.json")) as f:
        cfg = json.load(f)["config"]
    full = posenc.RotaryEmbedding(cfg, layer_type="full_attention")
    slide = posenc.RotaryEmbedding(cfg, layer_type="sliding_attention")
    assert set(posenc.rotary.layer_types(cfg)) == {"full_attention", "sliding_attention"}
    # Gemma 3 4B: full attention theta 1e6 with linear factor 8, sliding theta 1e4 (closed forms)
    k = torch.arange(0, 256, 2, dtype=F64)
    assert torch.allclose(full.inv_freq, 1e6 ** (-k / 256) / 8, rtol=1e-14)
    assert torch.allclose(slide.inv_freq, 1e4 ** (-k / 256), rtol=1e-14)
    with pytest.raises(ValueError, match=r"layer_type: expected one of .*got \"chunked\""):
        posenc.RotaryEmbedding(cfg, layer_type="chunked")
    with pytest.raises(ValueError, match=r"rope_parameters.*factor"):
        posenc.RotaryEmbedding({"hidden_size": 64, "num_attention_heads": 4,
                                "rope_parameters": {"rope_type": "linear", "rope_theta": 10000.0}})
    with pytest.raises(ValueError, match=r"bad JSON"):
        posenc.RotaryEmbedding("{not json")
    with pytest.raises(TypeError, match=r"config: expected a transformers config"):
        posenc.RotaryEmbedding(3)


@pytest.fixture
def rot():
    return posenc.RotaryEmbedding({"hidden_size": 64, "num_attention_heads": 4, "rope_theta": 500000.0})


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_dense_against_rotation(rot, layout):
    torch.manual_seed(0)
    q, k = torch.randn(2, 4, 9, 16, dtype=F64), torch.randn(2, 2, 9, 16, dtype=F64)  # GQA: 4 q heads, 2 k heads
    rot.layout = layout
    qo, ko = rot(q, k)
    pos = torch.arange(9, dtype=F64)
    # angles <= 9 rad: the float64 reference rounds each angle once (~1e-15)
    assert (qo - rotate_ref(q, pos, rot.inv_freq, layout=layout)).abs().max() < 1e-13
    assert (ko - rotate_ref(k, pos, rot.inv_freq, layout=layout)).abs().max() < 1e-13
    # per-sequence offsets and per-token position_ids
    off = torch.tensor([3, 1000])
    qo, _ = rot(q, offsets=off)
    for b in range(2):
        assert (qo[b] - rotate_ref(q[b], pos + off[b], rot.inv_freq, layout=layout)).abs().max() < 1e-12
    pid = torch.tensor([[5, 3, 9, 9, 0, 1, 2, 100, 7], [1, 2, 3, 4, 5, 6, 7, 8, 9]])
    qo, ko = rot(q, k, position_ids=pid)
    for b in range(2):
        assert (qo[b] - rotate_ref(q[b], pid[b], rot.inv_freq, layout=layout)).abs().max() < 1e-12
        assert (ko[b] - rotate_ref(k[b], pid[b], rot.inv_freq, layout=layout)).abs().max() < 1e-12
    # [B, S, H, D] views and in place on a non-contiguous view
    qs = q.transpose(1, 2).contiguous()
    qo2, _ = rot(qs, position_ids=pid, qk_layout="bshd")
    assert torch.equal(qo2.transpose(1, 2), qo)
    buf = q.transpose(1, 2).contiguous().transpose(1, 2)  # [B, H, S, D] with strides of [B, S, H, D]
    assert rot.apply_(buf, position_ids=pid)[0] is buf and torch.equal(buf, qo)


def test_ragged_and_partial():
    torch.manual_seed(1)
    with open(os.path.join(HF_DIR, "phi-2.v5.json")) as f:
        rot = posenc.RotaryEmbedding(json.load(f)["config"])  # partial_rotary_factor 0.4: 32 of 80 channels
    assert (rot.head_dim, rot.rotary_dim) == (80, 32)
    x = torch.randn(10, 3, 80, dtype=F64)
    cu, off = torch.tensor([0, 4, 4, 10]), torch.tensor([7, 0, 20])
    y, _ = rot(x, cu_seqlens=cu, offsets=off)
    for b, (s, e) in enumerate([(0, 4), (4, 4), (4, 10)]):
        if s == e:
            continue  # an empty sequence
        pos = torch.arange(e - s, dtype=F64) + off[b]
        ref = rotate_ref(x[s:e].transpose(0, 1), pos, rot.inv_freq).transpose(0, 1)
        assert (y[s:e] - ref).abs().max() < 1e-12
    assert torch.equal(y[..., 32:], x[..., 32:])  # past rotary_dim: untouched
    pid = torch.randint(0, 5000, (10,))
    y2, _ = rot(x, position_ids=pid)
    ref = rotate_ref(x.transpose(0, 1), pid, rot.inv_freq).transpose(0, 1)
    assert (y2 - ref).abs().max() < 1e-11  # angles <= 5000 rad: reference rounding ~1e-12
    with pytest.raises(ValueError, match=r"cu_seqlens: expected the last offset to equal the token count 10, got 9"):
        rot(x, cu_seqlens=torch.tensor([0, 4, 9]))
    with pytest.raises(ValueError, match=r"position_ids: expected shape \[10\] \(one position per token\), got \[9\]"):
        rot(x, position_ids=pid[:9])
    with pytest.raises(ValueError, match=r"position_ids: expected positions >= 0, got -1"):
        rot(x, position_ids=torch.full((10,), -1))


@pytest.mark.parametrize("dtype,bits", [(torch.bfloat16, 8), (torch.float16, 11), (torch.float32, 24)])
def test_low_precision_rounds_once(rot, dtype, bits):
    # math in float32 (bf16/f16) or float64 (f32), one rounding to the storage type: against the
    # float64 rotation of the same (rounded) input, |err| <= 0.5 ulp(y) + 2^-22 (|a| + |b|)
    torch.manual_seed(2)
    x = torch.randn(2, 4, 64, 16, dtype=F64).to(dtype)
    pid = torch.randint(0, 2 ** 20, (2, 64))
    y, _ = rot(x, position_ids=pid)
    assert y.dtype == dtype
    ref = rotate_ref(x.double(), pid[:, None, :], rot.inv_freq)
    half_ulp = 2.0 ** -bits * ref.abs().clamp_min(2.0 ** -14)
    assert ((y.double() - ref).abs() <= half_ulp + 2.0 ** -22 * 2 * x.double().abs().max()).all()


def test_gradients_and_inplace(rot):
    torch.manual_seed(3)
    x = torch.randn(2, 2, 5, 16, dtype=F64, requires_grad=True)
    pid = torch.tensor([[0, 5, 2, 9, 1], [3, 3, 3, 3, 3]])
    f = lambda t: posenc.rope(t, rot.inv_freq, 1.3, position_ids=pid)  # noqa: E731
    g = lambda t: posenc.rope(t, rot.inv_freq, key=True, xpos=True, position_ids=pid)  # noqa: E731
    assert torch.autograd.gradcheck(f, (x,)) and torch.autograd.gradgradcheck(f, (x,))
    assert torch.autograd.gradcheck(g, (x,)) and torch.autograd.gradgradcheck(g, (x,))
    y = x * 1.0
    posenc.rope_(y, rot.inv_freq, position_ids=pid)  # in place on a non-leaf: recorded by autograd
    y.sum().backward()
    g1 = x.grad.clone()
    x.grad = None
    posenc.rope(x, rot.inv_freq, position_ids=pid).sum().backward()
    assert torch.allclose(g1, x.grad, rtol=0, atol=1e-15)


def test_xpos_against_torchscale_formula(rot):
    # torchscale's XPOS: q scaled by zeta^(n / B), k by zeta^(-n / B), zeta_k = (2k/d + gamma) / (1 + gamma)
    torch.manual_seed(4)
    q, k = torch.randn(1, 1, 7, 16, dtype=F64), torch.randn(1, 1, 7, 16, dtype=F64)
    rot.xpos = {"gamma": 0.4, "scale_base": 512.0}
    qo, ko = rot(q, k, offsets=torch.tensor([100]))
    pos = torch.arange(7, dtype=F64) + 100
    zeta = (torch.arange(0, 16, 2, dtype=F64) / 16 + 0.4) / 1.4
    sc = zeta[None, :] ** (pos[:, None] / 512.0)  # [S, pairs]
    scale = torch.cat([sc, sc], -1)
    assert (qo[0, 0] - rotate_ref(q[0, 0], pos, rot.inv_freq) * scale).abs().max() < 1e-12
    assert (ko[0, 0] - rotate_ref(k[0, 0], pos, rot.inv_freq) / scale).abs().max() < 1e-12


def test_cos_sin_exact_far_out(rot):
    # at position 2^24 + 3 the float64 product n * w can be off by 2^24 * 2^-53 = 2^-29 rad; posenc
    # carries each frequency exactly (rot.freqs: long double and low part as sums of doubles), forms
    # the angle in extended precision and reduces it exactly: against mpmath's phase n * theta^(-2k/d)
    # of the exact frequency, within 1 ulp
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 200
    n = 2 ** 24 + 3
    c, s = rot.cos_sin(torch.tensor([[n]]), dtype=F64)
    for k in range(8):
        ang = n * mpmath.mpf(500000) ** (-mpmath.mpf(2 * k) / 16)
        cr, sr = mpmath.cos(ang), mpmath.sin(ang)
        assert abs(c[0, 0, k].item() - cr) <= math.ulp(float(cr))
        assert abs(s[0, 0, k + 8].item() - sr) <= math.ulp(float(sr))  # [c | c], [s | s]


# ---- ALiBi ------------------------------------------------------------------------------------------

def test_alibi_against_paper(get_slopes):  # get_slopes: the authors' code (conftest.py)
    for n in (1, 2, 6, 8, 12, 16):
        assert torch.allclose(posenc.alibi_slopes(n), torch.tensor(get_slopes(n), dtype=F64), rtol=1e-15)
    m = posenc.alibi_slopes(4)
    i, j = torch.arange(3)[:, None] + 4, torch.arange(7)[None, :]  # queries are the last 3 of 7 keys
    ref = -m[:, None, None] * (i - j).double()
    assert torch.equal(posenc.alibi_bias(m, 3, 7, q_offset=4, dtype=F64), ref)
    sym = posenc.alibi_bias(m, 3, 7, q_offset=4, form="symmetric", dtype=F64)
    assert torch.equal(sym, -m[:, None, None] * (i - j).abs().double())
    scores = torch.randn(2, 4, 3, 7, dtype=F64, requires_grad=True)
    out = posenc.alibi_add(scores, m, causal_mask=True)
    masked = (j > i).expand(2, 4, 3, 7)
    assert torch.isinf(out[masked]).all() and torch.equal(out[~masked], (scores + ref)[~masked])
    out.masked_fill(masked, 0).sum().backward()
    assert torch.equal(scores.grad, (~masked).double())
    bf = posenc.alibi_add(scores.detach().bfloat16(), m)
    assert bf.dtype == torch.bfloat16 and (bf.double() - (scores + ref)).abs().max() < 0.05
    with pytest.raises(ValueError, match=r"slopes: expected 4 slopes \(one per head\)|slopes"):
        posenc.alibi_add(scores.detach(), posenc.alibi_slopes(3))
    with pytest.raises(ValueError, match=r"form: expected 'relative', 'key_position' or 'symmetric', got 'abs'"):
        posenc.alibi_bias(m, 3, 7, form="abs")

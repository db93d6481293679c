"""The multi-axis RoPE ops against independent references: transformers' Qwen2.5-VL and Qwen3-VL
text rotary modules evaluated in float64 (their own recomposition) and their apply_rotary_pos_emb;
the gradient (gradcheck); in place = out of place; ragged = dense; torch.compile without a graph
break; errors naming the argument."""
import json
import os

import pytest
import torch

import posenc

tf = pytest.importorskip("transformers")

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
MROPE = os.path.join(ROOT, "tests", "rotary", "mrope")
F64 = torch.float64


def config(mt):
    with open(os.path.join(MROPE, mt, "config.json")) as f:
        return json.load(f)


def hf_float64_cos_sin(mt, pos):
    """transformers' text rotary module of `mt` with its frequencies and angles in float64."""
    cfg = tf.AutoConfig.for_model(mt, **{k: v for k, v in config(mt).items() if k not in ("model_type",)})
    tc = cfg.get_text_config()
    mod_cls = {"qwen2_5_vl": "Qwen2_5_VLRotaryEmbedding", "qwen3_vl": "Qwen3VLTextRotaryEmbedding"}[mt]
    mod = getattr(tf, mod_cls, None)
    if mod is None:
        mod = getattr(__import__("transformers.models.%s.modeling_%s" % (mt, mt), fromlist=[mod_cls]), mod_cls)
    m = mod(config=tc)
    dim = tc.head_dim
    inv = 1.0 / (tc.rope_parameters["rope_theta"] ** (torch.arange(0, dim, 2, dtype=F64) / dim))
    f = pos[..., None].to(F64) * inv
    return m.recomposition_frequencies(f.cos()), m.recomposition_frequencies(f.sin())


@pytest.mark.parametrize("mt", ["qwen2_5_vl", "qwen3_vl"])
def test_cos_sin_equals_transformers_recomposition_in_float64(mt):
    torch.manual_seed(0)
    pos = torch.randint(0, 5000, (3, 2, 7))
    rot = posenc.MultiAxisRotaryEmbedding(config(mt))
    c, s = rot.cos_sin(pos, dtype=F64)
    rc, rs = hf_float64_cos_sin(mt, pos)
    # the reference's angle: float64 frequency (<= 1 ulp off) times p < 5000: < 5000 * 2^-52 rad
    assert c.shape == rc.shape == (2, 7, 128)
    assert (c - rc).abs().max() < 1e-11 and (s - rs).abs().max() < 1e-11
    c32, _ = rot.cos_sin(pos, dtype=torch.float32)
    assert (c32.double() - c).abs().max() <= 2 ** -24  # one rounding of the exact value


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


@pytest.mark.parametrize("mt", ["qwen2_5_vl", "qwen3_vl"])
def test_apply_equals_apply_rotary_pos_emb(mt):
    torch.manual_seed(1)
    rot = posenc.MultiAxisRotaryEmbedding(config(mt))
    pos = torch.randint(-100, 3000, (3, 2, 5))
    q, k = torch.randn(2, 4, 5, 128, dtype=F64), torch.randn(2, 2, 5, 128, dtype=F64)
    c, s = hf_float64_cos_sin(mt, pos)
    c, s = c[:, None], s[:, None]
    rq, rk = rot(q, k, position_ids=pos)
    assert (rq - (q * c + rotate_half(q) * s)).abs().max() < 1e-11
    assert (rk - (k * c + rotate_half(k) * s)).abs().max() < 1e-11
    # in place equals out of place, bitwise; float32 within rounding of the float64 result
    q2, k2 = q.clone(), k.clone()
    rot.apply_(q2, k2, position_ids=pos)
    assert torch.equal(q2, rq) and torch.equal(k2, rk)
    q32, _ = rot(q.float(), None, position_ids=pos)
    assert (q32.double() - rq).abs().max() < 1e-5 * q.abs().max()
    # ragged [T, H, D] with [3, T] positions equals the dense rotation
    rr = posenc.axes_rope(q.transpose(1, 2).reshape(10, 4, 128), pos.reshape(3, 10), rot.freqs, rot.axis)
    assert torch.equal(rr, rq.transpose(1, 2).reshape(10, 4, 128))
    # positions shared by the batch: [3, S]
    rs_, _ = rot(q, None, position_ids=pos[:, 0])
    r0, _ = rot(q[:1], None, position_ids=pos[:, :1])
    assert torch.equal(rs_[:1], r0)


def test_gradient_is_the_inverse_rotation():
    rot = posenc.MultiAxisRotaryEmbedding(config("qwen3_vl"))
    torch.manual_seed(2)
    pos = torch.randint(0, 100, (3, 1, 3))
    q = torch.randn(1, 2, 3, 128, dtype=F64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: rot(x, None, position_ids=pos)[0], (q,))
    assert torch.autograd.gradgradcheck(lambda x: rot(x, None, position_ids=pos)[0], (q,))


def test_split_half_equals_its_closed_form_and_its_gradient_is_the_transpose():
    """HunYuan-VL's xdrope (axis [2, pairs]): a' = a cos A - b sin A, b' = b cos B + a sin B against
    that formula in float64 with torch's cos/sin of p * inv_freq (inv_freq from posenc's exact
    frequencies rounded to double: 1e-12 relative covers the phase's rounding at p < 1000 and a few
    ulp); gradcheck/gradgradcheck (the backward is the map's transpose, not the negated positions)."""
    rot = posenc.MultiAxisRotaryEmbedding(config("hunyuan_vl"))
    assert rot.style == "xdrope" and rot.axis.shape == (2, 64)
    torch.manual_seed(3)
    pos = torch.randint(0, 1000, (4, 2, 3))
    q = torch.randn(2, 2, 3, 128, dtype=F64)
    inv = rot.freqs[:, 0, :].sum(-1)  # the exact frequency's three parts, summed in double
    ang = pos[..., None].to(F64) * inv  # [4, B, S, 64]
    a_ax, b_ax = rot.axis[0], rot.axis[1]
    k = torch.arange(64)
    A, B = ang[a_ax, :, :, k].permute(1, 2, 0), ang[b_ax, :, :, k].permute(1, 2, 0)  # [B, S, 64]
    A, B = A[:, None], B[:, None]
    a, b = q[..., :64], q[..., 64:]
    want = torch.cat([a * A.cos() - b * A.sin(), b * B.cos() + a * B.sin()], -1)
    got, _ = rot(q, None, position_ids=pos)
    assert float((got - want).abs().max()) <= 1e-12 * float(q.abs().max())
    x = q[:1, :1].clone().requires_grad_(True)
    assert torch.autograd.gradcheck(lambda x: rot(x, None, position_ids=pos[:, :1])[0], (x,))
    assert torch.autograd.gradgradcheck(lambda x: rot(x, None, position_ids=pos[:, :1])[0], (x,))


def test_get_rope_index_with_left_padding_equals_transformers():
    from test_models_2026 import vl_model

    m = vl_model("qwen2_5_vl")
    tt = torch.tensor([[0, 0, 0, 1, 1, 1, 1, 0, 2, 2, 2, 2, 2, 2, 2, 2, 0],
                       [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0]])
    mask = torch.ones_like(tt)
    mask[1, :3] = 0
    img, vid, sec = torch.tensor([[1, 4, 4], [1, 4, 4]]), torch.tensor([[2, 4, 4]]), torch.tensor([0.5])
    want_p, want_d = m.model.get_rope_index(tt, tt, img, vid, second_per_grid_ts=sec, attention_mask=mask)
    p, d = posenc.MultiAxisRotaryEmbedding(m.config).get_rope_index(tt, img, vid, mask, sec)
    assert p.shape == (3, 2, 17) and d.shape == (2, 1)
    assert torch.equal(p, want_p.long()) and torch.equal(d, want_d.long())


def test_errors_name_the_argument():
    rot = posenc.MultiAxisRotaryEmbedding(config("qwen2_5_vl"))
    q = torch.randn(1, 2, 3, 128)
    with pytest.raises(ValueError, match="position_ids: expected \\[axes, batch, seq\\]"):
        rot(q, None, position_ids=torch.zeros(3, 1, 4, dtype=torch.long))
    bad = rot.axis.clone()
    bad[5] = 3
    with pytest.raises(ValueError, match=r"axis\[5\]: expected an axis in 0 .. 2"):
        posenc.axes_rope(q, torch.zeros(3, 1, 3, dtype=torch.long), rot.freqs, bad)
    with pytest.raises(ValueError, match="freqs: expected \\[pairs\\] or \\[pairs, 2, 3\\]"):
        posenc.axes_rope(q, torch.zeros(3, 1, 3, dtype=torch.long), rot.freqs[:, 0].contiguous(), rot.axis)
    with pytest.raises(TypeError, match="position_ids: expected dtype int64 or int32"):
        posenc.axes_cos_sin(torch.zeros(3, 4), rot.freqs, rot.axis)
    with pytest.raises(ValueError, match="mrope_section: expected the sections of hunyuan_vl"):
        posenc.MultiAxisRotaryEmbedding({"model_type": "hunyuan_vl", "rope_theta": 1e4, "head_dim": 8})
    with pytest.raises(ValueError, match=r"axis: expected \[pairs\] = \[64\].* or \[2, pairs\]"):
        posenc.axes_rope(q, torch.zeros(3, 1, 3, dtype=torch.long), rot.freqs, rot.axis.expand(3, -1).contiguous())
    with pytest.raises(ValueError, match="image_grid_thw"):
        posenc.get_rope_index(torch.tensor([[0, 1, 1, 0]]), torch.tensor([[1, 4, 4]]))


@pytest.mark.skipif(not hasattr(torch, "compile"), reason="torch.compile needs torch >= 2")
def test_compiles_without_graph_break():
    rot = posenc.MultiAxisRotaryEmbedding(config("qwen3_vl"))
    torch.manual_seed(3)
    pos = torch.randint(0, 1000, (3, 2, 5))
    q = torch.randn(2, 4, 5, 128, requires_grad=True)

    def f(x, p):
        c, s = rot.cos_sin(p)
        return rot(x, None, position_ids=p)[0].square().sum() + c.sum() + s.sum()

    assert torch._dynamo.explain(f)(q, pos).graph_break_count == 0
    got = torch.compile(f, backend="aot_eager", fullgraph=True)(q, pos)
    (g,) = torch.autograd.grad(got, q)
    want = f(q, pos)
    (w,) = torch.autograd.grad(want, q)
    assert torch.equal(got, want) and torch.equal(g, w)  # the same ops, no reordering under aot_eager

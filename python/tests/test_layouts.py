"""posenc.layouts: the multi-axis RoPE of diffusion transformers and vision encoders against the
peers' own output (python/tests/data/multiaxis_layouts.npz, made by scripts/gen_layouts_reference.py
from diffusers 0.42.1 and transformers 5.23.0) and against their formulas in float64.

Tolerances, and why:

* FLUX (1024 x 1024: 512 text + 64 x 64 image tokens) and Wan 2.1 (480 x 832, 81 frames: 21 x 30 x
  52 patches) at their real grid sizes: bit for bit. diffusers forms both in float64 (frequencies,
  phases, cos/sin) and rounds once to float32; posenc rounds the exact value once. The two agree
  unless a float64 value falls within ~1e-16 of a float32 rounding midpoint, which none of these
  4608 x 128 and 32760 x 128 values does (the SHA-256 of the whole peer output is compared).
* Every model against its formula in float64 (evaluated here with torch, independent of posenc):
  at most 1 float32 ulp (the correctly rounded value and the rounding of a float64 value within
  ~1e-14 of it differ only next to a midpoint; plus 2^-45 absolute for values near 0, see
  assert_within_ulp_of), and equal in at least 99.9 % of the values.
* HunyuanVideo, Qwen-Image and the vision towers compute in float32 (frequencies and phases), so
  their values are off by up to |phase| * 2^-22 + 2^-23 (a few float32 roundings of the phase and
  of cos/sin); posenc is checked against them within that bound and shown closer to float64.
* The rotation of q by diffusers' apply_rotary_emb with the same float32 tables: within
  2^-22 * max|q| (two rounded products and a rounded sum in float32 there; posenc rounds once).
"""
import hashlib
import math
import os

import numpy as np
import pytest
import torch

import posenc
from posenc import layouts as L

P = torch.ops.posenc
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "multiaxis_layouts.npz")


@pytest.fixture(scope="module")
def ref():
    with np.load(DATA) as d:
        return {k: d[k] for k in d.files}


def T(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def sha(t):
    return hashlib.sha256(t.contiguous().numpy().tobytes()).hexdigest()


def ulp32(x):
    x = x.abs().float()
    return torch.nextafter(x, torch.full_like(x, math.inf)) - x


def formula64(ids, freqs_per_axis):
    """cos, sin float64 [tokens, pairs]: the positions times the float64 frequencies, axis by axis."""
    cs, ss = [], []
    for a, f in enumerate(freqs_per_axis):
        ph = torch.outer(ids[a].double(), torch.as_tensor(f, dtype=torch.float64))
        cs.append(ph.cos())
        ss.append(ph.sin())
    return torch.cat(cs, 1), torch.cat(ss, 1)


def omega64(dim, theta):
    """theta^(-2j/dim), j < dim/2, in float64 (diffusers' get_1d_rotary_pos_embed formula)."""
    return 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))


def assert_within_ulp_of(got, want64):
    """got float32 within 1 ulp of float32(want64) (plus 2^-45: the float64 formula's own absolute
    error, |phase| < 2^7 times 2^-53, which matters only where cos/sin is near 0: at a phase of
    exactly pi / 2 posenc gives the correctly rounded ~1e-19, float64 ~6e-17), equal in >= 99.9 %."""
    w = want64.float()
    d = (got.float() - w).abs()
    assert (d <= ulp32(w) + 2.0 ** -45).all(), d.max()
    assert (d <= 2.0 ** -45).double().mean() >= 0.999  # equal but for the float64 formula's own error


def assert_float32_peer(got, peer, phase):
    """posenc (exact, rounded once) against a peer computing the phase in float32."""
    bound = phase.abs().float() * 2.0 ** -22 + 2.0 ** -23
    assert ((got - peer).abs() <= bound).all(), ((got - peer).abs() - bound).max()


# ---- diffusion transformers ----------------------------------------------------------------------


def test_flux_1024_bit_for_bit(ref):
    ids = L.flux_ids(512, 64, 64)
    assert torch.equal(ids.t(), T(ref["flux_1024/ids"]))
    cos, sin = L.FluxPosEmbed(theta=10000, axes_dim=[16, 56, 56])(ids.float())  # FLUX's ids are float32
    assert cos.dtype == torch.float32 and cos.shape == (4608, 128)
    assert sha(cos) == str(ref["flux_1024/sha_cos"]) and sha(sin) == str(ref["flux_1024/sha_sin"])
    rows = T(ref["flux_1024/rows"])
    assert torch.equal(cos[rows], T(ref["flux_1024/cos"])) and torch.equal(sin[rows], T(ref["flux_1024/sin"]))
    c64, s64 = formula64(ids.t(), [omega64(d, 1e4) for d in (16, 56, 56)])
    assert_within_ulp_of(cos[:, 0::2], c64)
    assert_within_ulp_of(sin[:, 0::2], s64)


def test_flux_apply_in_place_equals_diffusers_rotation(ref):
    rope = L.AxesRope("flux")
    assert rope.rotary_dim == 128 and rope.layout == "interleaved"
    rows = T(ref["flux_1024/rows"])
    pos = L.flux_ids(512, 64, 64).t()[:, rows]
    q = T(ref["flux_1024/q"]).clone()  # [B, S, H, D]: diffusers' attention layout, applied through a view
    rope.apply_(q.transpose(1, 2), None, pos)
    want = T(ref["flux_1024/q_out"])
    assert (q - want).abs().max() <= 2.0 ** -22 * T(ref["flux_1024/q"]).abs().max()


def test_wan_480p_81_frames_bit_for_bit(ref):
    rope = L.WanRotaryPosEmbed(128, (1, 2, 2), 1024, 10000.0)
    cos, sin = rope(torch.zeros(1, 1, 21, 60, 104))
    assert cos.shape == (1, 32760, 1, 128) and cos.dtype == torch.float32
    assert sha(cos) == str(ref["wan_480p_81/sha_cos"]) and sha(sin) == str(ref["wan_480p_81/sha_sin"])
    ids = rope.positions(21, 60, 104)
    assert torch.equal(ids, T(ref["wan_480p_81/ids"]))
    c64, s64 = formula64(ids, [omega64(d, 1e4) for d in (44, 42, 42)])
    assert_within_ulp_of(cos[0, :, 0, 0::2], c64)
    assert_within_ulp_of(sin[0, :, 0, 0::2], s64)
    # Wan's attention pairs columns (2k, 2k + 1) of [B, S, H, D]
    rows = T(ref["wan_480p_81/rows"])
    q = T(ref["wan_480p_81/q"]).clone()
    L.AxesRope("wan", [128]).apply_(q.transpose(1, 2), None, ids[:, rows])
    assert (q - T(ref["wan_480p_81/q_out"])).abs().max() <= 2.0 ** -22 * T(ref["wan_480p_81/q"]).abs().max()


def test_hunyuan_video_against_float32_module_and_float64(ref):
    rope = L.HunyuanVideoRotaryPosEmbed(2, 1, [16, 56, 56], 256.0)
    cos, sin = rope(torch.zeros(1, 1, 9, 40, 64))
    ids = rope.positions(9, 40, 64)
    assert torch.equal(ids, T(ref["hunyuan_video_320x512x33/ids"]))
    fr = [omega64(d, 256.0) for d in (16, 56, 56)]
    c64, s64 = formula64(ids, fr)
    assert_within_ulp_of(cos[:, 0::2], c64)
    assert_within_ulp_of(sin[:, 0::2], s64)
    rows = T(ref["hunyuan_video_320x512x33/rows"])
    phase = torch.cat([torch.outer(ids[a, rows].double(), f) for a, f in enumerate(fr)], 1).repeat_interleave(2, 1)
    assert_float32_peer(cos[rows], T(ref["hunyuan_video_320x512x33/cos"]), phase)
    assert_float32_peer(sin[rows], T(ref["hunyuan_video_320x512x33/sin"]), phase)


def test_qwen_image_msrope_two_images(ref):
    rope = L.QwenEmbedRope(theta=10000, axes_dim=[16, 56, 56], scale_rope=True)
    shapes = [(1, 64, 64), (1, 48, 80)]
    vid, txt = rope([shapes], max_txt_seq_len=77)
    assert vid.dtype == torch.complex64
    assert tuple(vid.shape) == tuple(ref["qwen_image_2img/shape"])
    assert tuple(txt.shape) == tuple(ref["qwen_image_2img/text_shape"])
    image, text = rope.positions([shapes], 77)
    assert torch.equal(image, T(ref["qwen_image_2img/ids"])) and torch.equal(text, T(ref["qwen_image_2img/text_ids"]))
    fr = [omega64(d, 1e4) for d in (16, 56, 56)]
    for ids, got, r, re_, im in ((image, vid, "rows", "re", "im"), (text, txt, "trows", "text_re", "text_im")):
        c64, s64 = formula64(ids, fr)
        assert_within_ulp_of(got.real, c64)
        assert_within_ulp_of(got.imag, s64)
        rows = T(ref["qwen_image_2img/" + r])
        phase = torch.cat([torch.outer(ids[a, rows].double(), f) for a, f in enumerate(fr)], 1)
        assert_float32_peer(got.real[rows], T(ref["qwen_image_2img/" + re_]), phase)
        assert_float32_peer(got.imag[rows], T(ref["qwen_image_2img/" + im]), phase)


# ---- vision encoders ------------------------------------------------------------------------------


def half_phase(ids, fr):
    ph = torch.cat([torch.outer(ids[a].double(), f) for a, f in enumerate(fr)], 1)
    return torch.cat([ph, ph], 1)  # [c | c]


def test_qwen2_5_vl_vision(ref):
    grid = T(ref["qwen2_5_vl_vision/grid"])
    ids = L.qwen_vl_vision_positions(grid, 2)
    assert torch.equal(ids, T(ref["qwen2_5_vl_vision/ids"]))
    wi, cu = L.qwen2_5_vl_window_index(grid, 2, 112, 14)
    assert torch.equal(wi, T(ref["qwen2_5_vl_vision/window_index"]))
    assert torch.equal(cu.long(), T(ref["qwen2_5_vl_vision/cu_window_seqlens"]).long())
    cos, sin = L.qwen_vl_vision_cos_sin(grid, 80)
    assert tuple(cos.shape) == tuple(ref["qwen2_5_vl_vision/shape"])
    fr = [omega64(40, 1e4)] * 2
    c64, s64 = formula64(ids, fr)
    assert_within_ulp_of(cos[:, :40], c64)
    assert_within_ulp_of(sin[:, :40], s64)
    assert torch.equal(cos[:, :40], cos[:, 40:])
    rows = T(ref["qwen2_5_vl_vision/rows"])
    phase = half_phase(ids[:, rows], fr)
    assert_float32_peer(cos[rows], T(ref["qwen2_5_vl_vision/cos"]), phase)
    assert_float32_peer(sin[rows], T(ref["qwen2_5_vl_vision/sin"]), phase)


def test_pixtral_vision(ref):
    cos, sin = L.pixtral_vision_cos_sin([(32, 48), (10, 6)])
    assert tuple(cos.shape) == tuple(ref["pixtral_vision/shape"])
    ids = T(ref["pixtral_vision/ids"])
    assert torch.equal(L.axes_positions("pixtral_vision", [], [(1, 32, 48), (1, 10, 6)])[0], ids)
    w = omega64(64, 1e4)
    fr = [w[0::2], w[1::2]]  # rows the even frequencies, columns the odd ones
    c64, s64 = formula64(ids, fr)
    assert_within_ulp_of(cos[:, :32], c64)
    assert_within_ulp_of(sin[:, :32], s64)
    rows = T(ref["pixtral_vision/rows"])
    phase = half_phase(ids[:, rows], fr)
    assert_float32_peer(cos[rows], T(ref["pixtral_vision/cos"]), phase)
    assert_float32_peer(sin[rows], T(ref["pixtral_vision/sin"]), phase)


def test_llama4_vision(ref):
    fc = L.llama4_vision_freqs_ci(24, 88)
    assert fc.dtype == torch.complex64 and tuple(fc.shape) == tuple(ref["llama4_vision/shape"])
    n = 24 * 24
    c = torch.arange(n)
    ids = torch.stack([torch.cat([c % 24 + 1, torch.zeros(1, dtype=torch.long)]),
                       torch.cat([c // 24 + 1, torch.zeros(1, dtype=torch.long)])])
    assert torch.equal(L.axes_positions("llama4_vision", [24])[0], ids)
    fr = [omega64(44, 1e4)] * 2
    c64, s64 = formula64(ids, fr)
    assert_within_ulp_of(fc[:, 0].real, c64)
    assert_within_ulp_of(fc[:, 0].imag, s64)
    rows = T(ref["llama4_vision/rows"])
    phase = torch.cat([torch.outer(ids[a, rows].double(), f) for a, f in enumerate(fr)], 1)[:, None, :]
    assert_float32_peer(fc[rows].real, T(ref["llama4_vision/re"]), phase)
    assert_float32_peer(fc[rows].imag, T(ref["llama4_vision/im"]), phase)


def test_dinov3_vision(ref):
    H, W = 14, 20
    cos, sin = L.dinov3_cos_sin(H, W, 64, 100.0)
    assert tuple(cos.shape) == tuple(ref["dinov3_vits16/shape"])
    i, j = torch.meshgrid(torch.arange(H), torch.arange(W), indexing="ij")
    # transformers' patch centres (2i + 1) / H - 1 in float64, times 2 pi theta^(-4k/d)
    w = 100.0 ** -(torch.arange(16, dtype=torch.float64) * 4 / 64)
    ch, cw = ((2 * i + 1).double() / H - 1).reshape(-1), ((2 * j + 1).double() / W - 1).reshape(-1)
    ph = torch.cat([torch.outer(ch, 2 * math.pi * w), torch.outer(cw, 2 * math.pi * w)], 1)
    assert_within_ulp_of(cos[:, :32], ph.cos())
    assert_within_ulp_of(sin[:, :32], ph.sin())
    rows = T(ref["dinov3_vits16/rows"])
    phase = torch.cat([ph, ph], 1)[rows]
    assert_float32_peer(cos[rows], T(ref["dinov3_vits16/cos"]), phase)
    assert_float32_peer(sin[rows], T(ref["dinov3_vits16/sin"]), phase)


# ---- the module, dtypes, compile, errors ---------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("model,sizes", [("flux", []), ("qwen_vl_vision", [80]), ("dinov3", [64, 4, 6])])
def test_apply_in_place_equals_copy(model, sizes, dtype):
    torch.manual_seed(1)
    rope = L.AxesRope(model, sizes)
    A = int(rope.axis.max()) + 1
    pos = torch.randint(-30, 30, (A, 24))
    q = torch.randn(2, 3, 24, rope.rotary_dim).to(dtype)
    want, _ = rope(q, None, pos)
    got = q.clone()
    rope.apply_(got, None, pos)
    assert torch.equal(got, want)
    # the rotation is the one its tables describe: q cos + rotate(q) sin, in float64
    c, s = rope.cos_sin(pos, torch.float64, duplicated=False)
    x = q.double()
    if rope.layout == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
        ref = torch.stack([a * c - b * s, a * s + b * c], -1).flatten(-2)
    else:
        h = x.shape[-1] // 2
        a, b = x[..., :h], x[..., h:]
        ref = torch.cat([a * c - b * s, a * s + b * c], -1)
    eps = {torch.float32: 2.0 ** -23, torch.float16: 2.0 ** -10, torch.bfloat16: 2.0 ** -7}[dtype]
    assert (got.double() - ref).abs().max() <= 2 * eps * x.abs().max()


@pytest.mark.skipif(not hasattr(torch, "compile"), reason="torch.compile needs torch >= 2")
def test_compiles_without_graph_break():
    rope = L.AxesRope("wan", [24])
    torch.manual_seed(2)
    q = torch.randn(1, 2, 2 * 3 * 4, 24, requires_grad=True)

    def f(x):
        pos = L.axes_positions("grid3d", [2, 3, 4])[0]
        c, s = rope.cos_sin(pos)
        return rope(x, None, pos)[0].square().sum() + c.sum() + s.sum()

    assert torch._dynamo.explain(f)(q).graph_break_count == 0
    got = torch.compile(f, backend="aot_eager", fullgraph=True)(q)
    assert torch.equal(got, f(q))


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="model: expected 'nd', 'flux'.*got 'sd3'"):
        L.axes_frequencies("sd3")
    with pytest.raises(ValueError, match="model: expected 'flux', 'grid3d'.*got 'sd3'"):
        L.axes_positions("sd3", [1, 2, 3])
    with pytest.raises(ValueError, match=r"axes_dim\[1\]: expected an even dimension >= 2, got 7"):
        L.axes_frequencies("flux", [16, 7, 56])
    with pytest.raises(ValueError, match="head_dim: expected an even head_dim >= 6, got 5"):
        L.axes_frequencies("wan", [5])
    with pytest.raises(ValueError, match="sizes: expected \\[head_dim, grid_h, grid_w\\] for model 'dinov3', got 1"):
        L.axes_frequencies("dinov3", [64])
    with pytest.raises(ValueError, match=r"sizes\[0\]: expected a size >= 0, got -4"):
        L.axes_positions("grid3d", [-4, 2, 2])
    with pytest.raises(ValueError, match="theta: expected a finite theta > 1 for model 'nd', got 0"):
        L.axes_frequencies("nd", [16, 56, 56])
    with pytest.raises(ValueError, match="grids: expected none for model 'flux', got 3 values"):
        L.axes_positions("flux", [1, 2, 2], [(1, 2, 2)])
    with pytest.raises(ValueError, match=r"grids\[0\]: expected h and w multiples of spatial_merge_size = 2"):
        L.qwen_vl_vision_positions([(1, 3, 4)])
    with pytest.raises(ValueError, match="latent_width: expected at most max_seq_len = 1024 patches, got 1025"):
        L.WanRotaryPosEmbed(128).positions(1, 2, 2050)
    with pytest.raises(ValueError, match="ids: expected integer positions"):
        L.FluxPosEmbed()(torch.tensor([[0.0, 0.5, 1.0]]))
    with pytest.raises(ValueError, match=r"ids: expected \[tokens, 3\]"):
        L.FluxPosEmbed()(torch.zeros(4, 2))
    with pytest.raises(ValueError, match="max_txt_seq_len: expected the text length, got None"):
        L.QwenEmbedRope()((1, 4, 4))
    with pytest.raises(ValueError, match="AxesRope: model: expected one of"):
        posenc.AxesRope("grid3d")


# ---- the example ---------------------------------------------------------------------------------

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "diffusion_rope.py")
PAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "diffusion-vision-rope.md")


def test_page_quotes_the_example():
    import re

    src = open(EXAMPLE).read()
    assert src in re.findall(r"```python\n(.*?)```", open(PAGE).read(), flags=re.S)


def test_example_runs(capsys):
    import re

    exec(compile(open(EXAMPLE).read(), EXAMPLE, "exec"), {"__name__": "__example__"})
    out = capsys.readouterr().out.splitlines()
    m = re.match(r"FLUX: 4608 tokens, max \|posenc - diffusers' formula\| = (\S+)$", out[0])
    assert m and float(m.group(1)) <= 2.0 ** -20  # |q| < 8: float32's two products and a sum, 2^-23 |q| each
    assert out[1] == "Wan: 32760 tokens, the last at (frame, row, column) (20, 29, 51)"

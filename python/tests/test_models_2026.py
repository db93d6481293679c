"""patch_rotary on tiny random models built from the rope fields of the real configs of 2026's open
models (tests/rotary/hf/models, tests/rotary/mrope): Llama 4, SmolLM3, GLM-4.5, Qwen3-Next,
Ministral 3, Kimi K2 (DeepSeek V3's architecture), Qwen2-VL, Qwen2.5-VL, Qwen3-VL, GLM-4.1V, GLM-4.5V
and ERNIE 4.5-VL (text + image + video).

Each model keeps its real rope fields (rope_theta, the scaling rule, head_dim, partial rotary,
mrope_section, NoPE pattern, temperature tuning); sizes are tiny (2 layers, 2 heads, small experts
and vision towers) and the weights random (torch.manual_seed). Checks:
* short positions, float32: the same logits with patch_rotary as without, within 1e-5 of the
  largest logit (posenc's cos/sin are the correctly rounded float32 values, transformers' differ
  from them by a few ulp at positions < 64; two layers turn that into ~1e-7 relative);
* long positions (offset 2^20), float32: posenc's logits are closer to a float64 evaluation of the
  same model than transformers' float32 ones. The float64 reference is independent of posenc:
  transformers' own inv_freq formula evaluated in float64 (its init function with float64 for
  torch.float), angles position * inv_freq in float64, the module's own recomposition for M-RoPE.
  transformers' float32 angle at 2^20 is off by up to 2^20 * 2^-24 rad, posenc's is exact, so
  posenc's error must be far smaller (asserted: at most a quarter of transformers').
* the VL models' position ids: posenc.get_rope_index equals the model's own get_rope_index.
* HunYuan-VL (xdrope: four axes, split-half, images only; tests/rotary/mrope/hunyuan_vl's rope
  fields, rope_type xdrope with alpha): the same three checks at short positions (logits with and
  without patch_rotary within 1e-5 of the largest, the rotation against its apply_rotary_pos_emb,
  get_rope_index dense and left-padded).
"""
import contextlib
import json
import os
import re

import pytest
import torch

tf = pytest.importorskip("transformers")

import posenc  # noqa: E402
from posenc.transformers import patch_rotary, rotary_modules, unpatch_rotary  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
HF = os.path.join(ROOT, "tests", "rotary", "hf", "models")
MROPE = os.path.join(ROOT, "tests", "rotary", "mrope")
LONG = 1 << 20

COMMON = dict(num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, intermediate_size=32, vocab_size=64,
              hidden_size=32, tie_word_embeddings=False, pad_token_id=0, bos_token_id=1, eos_token_id=2)
# name: (reference config file, transformers model_type, tiny sizes). NoPE patterns cut to 2 layers
# keep one NoPE layer ([1, 0]: the real period's rope layer then its NoPE layer).
TEXT = {
    "llama4": ("llama-4-scout", "llama4_text", dict(no_rope_layers=[1, 0], num_local_experts=2, intermediate_size_mlp=32,
                                                   num_experts_per_tok=1, interleave_moe_layer_step=1)),
    "smollm3": ("smollm3-3b", "smollm3", dict(hidden_size=256, no_rope_layers=[1, 0])),  # head_dim = 256 / 2
    "glm4_moe": ("glm-4.5", "glm4_moe", dict(n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                                             first_k_dense_replace=1, n_group=1, topk_group=1, n_shared_experts=1)),
    "qwen3_next": ("qwen3-next-80b-a3b", "qwen3_next", dict(
        full_attention_interval=2, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
        shared_expert_intermediate_size=16, linear_num_value_heads=2, linear_num_key_heads=2, linear_key_head_dim=8,
        linear_value_head_dim=8, linear_conv_kernel_dim=4)),
    "ministral3": ("ministral-3-8b", "ministral3", dict()),
    "kimi_k2": ("kimi-k2", "deepseek_v3", dict(kv_lora_rank=16, q_lora_rank=None, qk_nope_head_dim=16, v_head_dim=16,
                                               n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                                               first_k_dense_replace=1, n_group=1, topk_group=1, n_shared_experts=1,
                                               num_key_value_heads=2)),
}
VL = ("qwen2_vl", "qwen2_5_vl", "qwen3_vl", "glm4v", "glm4v_moe", "ernie4_5_vl_moe")
# GLM-4.5V (glm4v_moe) has no config of its own in tests/rotary/mrope: its rope fields are GLM-4.1V's
# (theta 10000, partial_rotary_factor 0.5, mrope_section [8, 12, 12], head_dim 128; transformers'
# GLM-4.5V-style defaults agree, test_glm4v_moe_rope_fields_are_glm4v_ones)
_VL_CONFIG = {"glm4v_moe": "glm4v"}
_VL_EXTRA = {
    "glm4v_moe": dict(n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=16, first_k_dense_replace=1,
                      n_group=1, topk_group=1, n_shared_experts=1),
    "ernie4_5_vl_moe": dict(moe_num_experts=4, moe_k=2, moe_intermediate_size=[16, 16], moe_layer_start_index=1),
}
_SIZES = {"model_type", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "hidden_size",
          "max_window_layers", "layer_types", "intermediate_size", "vocab_size", "kv_lora_rank", "v_head_dim",
          "qk_nope_head_dim", "no_rope_layers"}


def text_model(key):
    name, mt, extra = TEXT[key]
    with open(os.path.join(HF, name + ".json")) as f:
        c = json.load(f)["config"]
    fields = {k: v for k, v in c.get("text_config", c).items() if k not in _SIZES}
    fields.update(COMMON)
    fields.update(extra)
    cfg = tf.AutoConfig.for_model(mt, **fields)
    cfg._attn_implementation = "eager"
    cfg._experts_implementation = "eager"  # float64 runs: the grouped-matmul experts take float32 only
    torch.manual_seed(0)
    return tf.AutoModelForCausalLM.from_config(cfg).eval()


IMG, VID, VS, VE, VSV, VEV = 5, 6, 3, 4, 16, 17


def vl_model(mt):
    with open(os.path.join(MROPE, _VL_CONFIG.get(mt, mt), "config.json")) as f:
        c = json.load(f)
    t = {k: v for k, v in c["text_config"].items()
         if k in ("rope_parameters", "head_dim", "max_position_embeddings", "rms_norm_eps")}
    t.update(COMMON)
    t.update(hidden_size=256, **_VL_EXTRA.get(mt, {}))
    vc = c["vision_config"]
    v = {k: vc[k] for k in ("rope_parameters", "patch_size", "temporal_patch_size", "spatial_merge_size", "in_channels",
                            "hidden_act", "tokens_per_second", "temporal_merge_size") if k in vc}
    v.update(depth=1, hidden_size=32, num_heads=2, intermediate_size=32, out_hidden_size=256)
    if mt == "qwen2_vl":  # embed_dim is the tower's width, hidden_size the merger's output
        v.update(embed_dim=32, hidden_size=256, mlp_ratio=1)
        del v["intermediate_size"], v["out_hidden_size"]
    elif mt == "qwen2_5_vl":
        v.update(fullatt_block_indexes=[0], window_size=112)
    elif mt == "qwen3_vl":
        v.update(deepstack_visual_indexes=[0], num_position_embeddings=vc["num_position_embeddings"])
    ids = dict(vision_start_token_id=VS, vision_end_token_id=VE) if mt.startswith("qwen") else dict(
        image_start_token_id=VS, image_end_token_id=VE, video_start_token_id=VSV, video_end_token_id=VEV)
    cfg = tf.AutoConfig.for_model(mt, text_config=t, vision_config=v, image_token_id=IMG, video_token_id=VID,
                                  tie_word_embeddings=False, **ids)
    cfg._attn_implementation = "eager"
    cfg._experts_implementation = "eager"
    torch.manual_seed(0)
    return tf.AutoModelForImageTextToText.from_config(cfg).eval()


def vl_inputs(m, mt):
    """Text, an image (grid 1 x 4 x 4: 4 merged tokens) and a video (2 x 4 x 4: 8 tokens; Qwen3-VL and
    GLM: two frames of 4, each between start/end tokens as their processors write them; ERNIE 4.5-VL
    merges the two temporal patches: 4 tokens)."""
    torch.manual_seed(1)
    vc = m.config.vision_config
    row = vc.in_channels * getattr(vc, "temporal_patch_size", 1) * vc.patch_size ** 2
    seq = [7, 8, 9, VS] + [IMG] * 4 + [VE, 10, 11]
    if mt == "qwen3_vl":
        seq += [VS] + [VID] * 4 + [VE, 12, VS] + [VID] * 4 + [VE]
    elif mt.startswith("glm"):
        seq += [VSV, VS] + [VID] * 4 + [VE, 12, VS] + [VID] * 4 + [VE, VEV]
    elif mt == "ernie4_5_vl_moe":
        seq += [VSV] + [VID] * 4 + [VEV]
    else:
        seq += [VS] + [VID] * 8 + [VE]
    seq += [13, 14, 15]
    ids = torch.tensor([seq])
    kw = dict(input_ids=ids, mm_token_type_ids=(ids == IMG).long() + 2 * (ids == VID).long(),
              pixel_values=torch.randn(16, row), image_grid_thw=torch.tensor([[1, 4, 4]]),
              pixel_values_videos=torch.randn(32, row), video_grid_thw=torch.tensor([[2, 4, 4]]))
    if mt == "qwen2_5_vl":
        kw["second_per_grid_ts"] = torch.tensor([1.0])
    return kw


def vl_call(m, mt, kw):
    """The model's logits on kw. GLM-4.1V/4.5V find both images' and videos' places by the image token
    when given input_ids, so an image and a video go in together only as inputs_embeds (the video's
    embedded video tokens mark its places)."""
    kw = {k: v for k, v in kw.items() if k != "second_per_grid_ts" or mt == "qwen2_5_vl"}
    if mt.startswith("glm"):
        kw["inputs_embeds"] = m.get_input_embeddings()(kw.pop("input_ids"))
    return m(**kw).logits


def rel_diff(a, b):
    return float((a - b).abs().max() / b.abs().max())


# ---- the float64 reference: transformers' formulas in float64 -------------------------------------

@contextlib.contextmanager
def _float_is_float64():
    old = torch.float
    torch.float = torch.float64
    try:
        yield
    finally:
        torch.float = old


def _inv_freq64(mod):
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    rt = getattr(mod, "rope_type", "default")
    fn = mod.compute_default_rope_parameters if rt == "default" else ROPE_INIT_FUNCTIONS[rt]
    with _float_is_float64():
        inv, scale = fn(mod.config)
    assert inv.dtype == torch.float64
    return inv, float(scale)


def float64_rotary(model):
    """Replace the text rotary forward of a float64 copy of `model` by transformers' own formula in float64."""
    for _, mod, lts in rotary_modules(model):
        if getattr(getattr(mod, "config", None), "rope_parameters", {}).get("rope_type") == "axial":
            continue  # vision towers: positions < 64, exact in float32
        assert lts == [None]
        inv, scale = _inv_freq64(mod)

        def forward(self, x, position_ids, _inv=inv, _scale=scale, **kw):
            if hasattr(self, "mrope_section"):
                p = position_ids.expand(3, -1, -1) if position_ids.dim() == 3 else position_ids[None].expand(3, -1, -1)
                f = p[..., None].double() * _inv
                return self.recomposition_frequencies(f.cos() * _scale), self.recomposition_frequencies(f.sin() * _scale)
            f = position_ids[..., None].double() * _inv
            if type(self).__name__.startswith("Llama4"):
                return torch.polar(torch.ones_like(f), f) * _scale
            e = torch.cat((f, f), dim=-1)
            return e.cos() * _scale, e.sin() * _scale

        mod.forward = forward.__get__(mod)
    return model


def long_position_errors(model, run):
    """(transformers' float32 error, posenc's float32 error) of run(model) against the float64 reference,
    each relative to the largest reference logit."""
    ref_model = float64_rotary(_copy(model).double())
    with torch.no_grad():
        ref = run(ref_model, torch.float64)
        hf = run(model, torch.float32).double()
        patch_rotary(model)
        try:
            pe = run(model, torch.float32).double()
        finally:
            unpatch_rotary(model)
    return rel_diff(hf, ref), rel_diff(pe, ref)


def _copy(model):
    import copy

    return copy.deepcopy(model)


# ---- text models ----------------------------------------------------------------------------------

SHORT_TOL = 1e-5


@pytest.fixture(scope="module", params=list(TEXT))
def text(request):
    return request.param, text_model(request.param)


def test_text_model_same_logits_at_short_positions(text):
    key, m = text
    torch.manual_seed(2)
    ids = torch.randint(3, 64, (2, 24))
    with torch.no_grad():
        ref = m(input_ids=ids).logits
        patch_rotary(m)
        try:
            assert all(hasattr(mod, "posenc") for _, mod, _ in rotary_modules(m))
            got = m(input_ids=ids).logits
        finally:
            unpatch_rotary(m)
    d = rel_diff(got, ref)
    print("\n%s short: posenc vs transformers %.2e" % (key, d))
    assert d <= SHORT_TOL, (key, d)


def test_text_model_closer_to_float64_at_long_positions(text):
    key, m = text
    torch.manual_seed(3)
    ids = torch.randint(3, 64, (1, 16))
    pos = torch.arange(16)[None] + LONG

    def run(model, dtype):
        return model(input_ids=ids, position_ids=pos).logits

    hf, pe = long_position_errors(m, run)
    print("\n%s long: transformers vs float64 %.2e, posenc vs float64 %.2e" % (key, hf, pe))
    assert pe <= 0.25 * hf, (key, hf, pe)


# ---- vision-language models -------------------------------------------------------------------------

@pytest.fixture(scope="module", params=VL)
def vl(request):
    m = vl_model(request.param)
    return request.param, m, vl_inputs(m, request.param)


def test_vl_get_rope_index_equals_transformers(vl):
    mt, m, kw = vl
    extra = {"second_per_grid_ts": kw["second_per_grid_ts"]} if "second_per_grid_ts" in kw else {}
    want_pos, want_d = m.model.get_rope_index(kw["input_ids"], kw["mm_token_type_ids"], kw["image_grid_thw"],
                                              kw["video_grid_thw"], **extra)
    rot = posenc.MultiAxisRotaryEmbedding(m.config)
    pos, d = rot.get_rope_index(kw["mm_token_type_ids"], kw["image_grid_thw"], kw["video_grid_thw"],
                                second_per_grid_ts=extra.get("second_per_grid_ts"))
    assert torch.equal(pos, want_pos.long()), (pos, want_pos)
    assert torch.equal(d, want_d.long())


def test_vl_same_logits_with_image_and_video(vl):
    mt, m, kw = vl
    with torch.no_grad():
        ref = vl_call(m, mt, kw)
        patch_rotary(m)
        try:
            names = [n for n, mod, _ in rotary_modules(m) if hasattr(mod, "posenc")]
            assert len(names) == 2, names  # the vision tower's axial RoPE and the text model's M-RoPE
            m.model.rope_deltas = None
            got = vl_call(m, mt, kw)
        finally:
            unpatch_rotary(m)
            m.model.rope_deltas = None
    d = rel_diff(got, ref)
    print("\n%s short: posenc vs transformers %.2e" % (mt, d))
    assert d <= SHORT_TOL, (mt, d)


def test_vl_rotation_equals_the_models_apply_rotary_pos_emb(vl):
    """MultiAxisRotaryEmbedding's rotation (its pair layout, partial rotary) against the model's own
    apply_rotary_pos_emb with the text rotary module's cos/sin, float32 at positions < 64."""
    import importlib

    mt, m, kw = vl
    mod = importlib.import_module(type(m).__module__)
    rot = posenc.MultiAxisRotaryEmbedding(m.config)
    torch.manual_seed(4)
    pos = torch.randint(0, 64, (3, 2, 5))
    q, k = torch.randn(2, 2, 5, rot.head_dim), torch.randn(2, 1, 5, rot.head_dim)
    with torch.no_grad():
        c, s = m.model.language_model.rotary_emb(q, pos)
        wq, wk = mod.apply_rotary_pos_emb(q, k, c, s)
    gq, gk = rot(q, k, position_ids=pos)
    assert (gq - wq).abs().max() <= 1e-5 * q.abs().max() and (gk - wk).abs().max() <= 1e-5 * k.abs().max()


def test_glm4v_moe_rope_fields_are_glm4v_ones():
    with open(os.path.join(MROPE, "glm4v", "config.json")) as f:
        rp = json.load(f)["text_config"]["rope_parameters"]
    d = tf.AutoConfig.for_model("glm4v_moe").text_config.rope_parameters  # "GLM-4.5V style" defaults
    assert (d["rope_theta"], d["partial_rotary_factor"]) == (rp["rope_theta"], rp["partial_rotary_factor"])


def test_vl_text_model_closer_to_float64_at_long_positions(vl):
    mt, m, kw = vl
    extra = {"second_per_grid_ts": kw["second_per_grid_ts"]} if "second_per_grid_ts" in kw else {}
    pos, _ = m.model.get_rope_index(kw["input_ids"], kw["mm_token_type_ids"], kw["image_grid_thw"],
                                    kw["video_grid_thw"], **extra)
    pos = pos.long() + LONG

    def run(model, dtype):
        lm = model.model.language_model
        h = lm(inputs_embeds=lm.embed_tokens(kw["input_ids"]), position_ids=pos).last_hidden_state
        return model.lm_head(h)

    hf, pe = long_position_errors(m, run)
    print("\n%s long: transformers vs float64 %.2e, posenc vs float64 %.2e" % (mt, hf, pe))
    assert pe <= 0.25 * hf, (mt, hf, pe)


# ---- HunYuan-VL (xdrope) ------------------------------------------------------------------------------

def hunyuan_model():
    with open(os.path.join(MROPE, "hunyuan_vl", "config.json")) as f:
        c = json.load(f)
    t = {k: v for k, v in c["text_config"].items()
         if k in ("rope_parameters", "head_dim", "max_position_embeddings", "rms_norm_eps")}
    t.update(COMMON)
    t.update(hidden_size=256)
    v = dict(hidden_size=32, intermediate_size=32, num_attention_heads=2, num_hidden_layers=1, out_hidden_size=256,
             text_hidden_size=256, patch_size=16, spatial_merge_size=2)
    cfg = tf.AutoConfig.for_model("hunyuan_vl", text_config=t, vision_config=v, image_token_id=IMG,
                                  tie_word_embeddings=False)
    cfg._attn_implementation = "eager"
    torch.manual_seed(0)
    return tf.AutoModelForImageTextToText.from_config(cfg).eval()


@pytest.fixture(scope="module")
def hunyuan():
    """Text, an image of grid 1 x 4 x 4 (2 x 2 merged: 2 rows of 2 + a newline token, + begin/end:
    8 tokens), text, an image of 1 x 2 x 2 (1 x 1 merged: 4 tokens), text."""
    m = hunyuan_model()
    vc = m.config.vision_config
    seq = [7, 8, 9] + [IMG] * 8 + [10, 11] + [IMG] * 4 + [13, 14, 15]
    ids = torch.tensor([seq])
    torch.manual_seed(1)
    kw = dict(input_ids=ids, mm_token_type_ids=(ids == IMG).long(),
              pixel_values=torch.randn(16 + 4, vc.num_channels * vc.patch_size ** 2),
              image_grid_thw=torch.tensor([[1, 4, 4], [1, 2, 2]]))
    return m, kw


def test_hunyuan_vl_get_rope_index_equals_transformers(hunyuan):
    m, kw = hunyuan
    rot = posenc.MultiAxisRotaryEmbedding(m.config)
    assert rot.style == "xdrope" and tuple(rot.axis.shape) == (2, rot.rotary_dim // 2)
    want_pos, want_d = m.model.get_rope_index(kw["input_ids"], kw["mm_token_type_ids"], kw["image_grid_thw"])
    pos, d = rot.get_rope_index(kw["mm_token_type_ids"], kw["image_grid_thw"])
    assert torch.equal(pos, want_pos.long()) and torch.equal(d, want_d.long()), (pos, want_pos)
    # a left-padded batch of two (the second sequence holds the second image)
    row0 = kw["mm_token_type_ids"][0].clone()
    row0[13:17] = 0  # sequence 0: the first image only
    row1 = torch.tensor([0] * 5 + [0, 0] + [1] * 4 + [0] * 9)  # five padding tokens, text, the second image, text
    rows = torch.stack([row0, row1])
    mask = torch.ones_like(rows)
    mask[1, :5] = 0
    grids = torch.tensor([[1, 4, 4], [1, 2, 2]])
    want_pos, want_d = m.model.get_rope_index(torch.ones_like(rows), rows, grids, attention_mask=mask)
    pos, d = rot.get_rope_index(rows, grids, attention_mask=mask)
    assert torch.equal(pos, want_pos.long()) and torch.equal(d, want_d.long()), (pos, want_pos)
    with pytest.raises(ValueError, match="image_grid_thw"):
        rot.get_rope_index(rows, grids[:1], attention_mask=mask)


def test_hunyuan_vl_same_logits_with_images(hunyuan):
    m, kw = hunyuan
    with torch.no_grad():
        ref = m(**kw).logits
        patch_rotary(m)
        try:
            names = [n for n, mod, _ in rotary_modules(m) if hasattr(mod, "posenc")]
            assert any("language_model" in n for n in names), names
            m.model.rope_deltas = None
            got = m(**kw).logits
        finally:
            unpatch_rotary(m)
            m.model.rope_deltas = None
    d = rel_diff(got, ref)
    print("\nhunyuan_vl short: posenc vs transformers %.2e" % d)
    assert d <= SHORT_TOL, d


def test_hunyuan_vl_rotation_equals_the_models_apply_rotary_pos_emb(hunyuan):
    """The split-half map (axis [2, pairs]) against HunYuan-VL's apply_rotary_pos_emb with its
    rotary module's cos/sin, float32 at positions < 64, dense and ragged; in place too."""
    from transformers.models.hunyuan_vl import modeling_hunyuan_vl as mod

    m, _ = hunyuan
    rot = posenc.MultiAxisRotaryEmbedding(m.config)
    torch.manual_seed(4)
    pos = torch.randint(0, 64, (4, 2, 5))
    q, k = torch.randn(2, 2, 5, rot.head_dim), torch.randn(2, 1, 5, rot.head_dim)
    with torch.no_grad():
        c, s = m.model.language_model.rotary_emb(q, pos)
        wq, wk = mod.apply_rotary_pos_emb(q, k, c, s)
    gq, gk = rot(q, k, position_ids=pos)
    assert (gq - wq).abs().max() <= 1e-5 * q.abs().max() and (gk - wk).abs().max() <= 1e-5 * k.abs().max()
    qr = q.permute(0, 2, 1, 3).reshape(10, 2, rot.head_dim).clone()  # ragged [T, H, D], position_ids [4, T]
    rot.apply_(qr, None, position_ids=pos.reshape(4, 10))
    assert torch.equal(qr, gq.permute(0, 2, 1, 3).reshape(10, 2, rot.head_dim))
    # the map is not a rotation: norms change where the axes' positions differ
    n0, n1 = q.norm(dim=-1), gq.norm(dim=-1)
    assert float((n1 - n0).abs().max()) > 1e-3


# ---- refusals and the documented list ---------------------------------------------------------------

class _Odd(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("inv_freq", torch.ones(4), persistent=False)

    def forward(self, x, position_ids):
        return x, x, x


def test_patch_rotary_refuses_an_unknown_form_and_patches_nothing():
    m = text_model("ministral3")
    m.model.odd_rotary = _Odd()
    with pytest.raises(ValueError, match=r"model\.odd_rotary \(_Odd\).*neither \(cos, sin\).*nothing was patched"):
        patch_rotary(m)
    assert not any(hasattr(mod, "posenc") for _, mod, _ in rotary_modules(m))


def test_docs_list_the_models_tested_here():
    with open(os.path.join(ROOT, "docs", "pytorch.md")) as f:
        doc = f.read()
    block = re.search(r"<!-- patch_rotary models -->(.*?)<!-- /patch_rotary models -->", doc, re.S)
    assert block, "docs/pytorch.md: the patch_rotary model table is missing"
    listed = set(re.findall(r"`([a-z0-9_]+)`", block.group(1)))
    want = set(TEXT) | set(VL) | {"hunyuan_vl"}
    assert listed == want, listed ^ want


def test_mistral3_vision_tower_refused_by_default_kept_on_request():
    """Mistral 3: Pixtral's vision RoPE is not the Qwen-VL axial form: refused by name, nothing patched;
    vision="keep" patches the Ministral 3 text model alone, with transformers' logits at short positions."""
    name, _, _ = TEXT["ministral3"]
    with open(os.path.join(HF, name + ".json")) as f:
        t = {k: v for k, v in json.load(f)["config"]["text_config"].items() if k not in _SIZES}
    t.update(COMMON)
    t["model_type"] = "ministral3"
    cfg = tf.AutoConfig.for_model("mistral3", text_config=t, vision_config=dict(
        hidden_size=32, num_attention_heads=2, intermediate_size=32, num_hidden_layers=1, head_dim=16))
    cfg._attn_implementation = "eager"
    torch.manual_seed(0)
    m = tf.AutoModelForImageTextToText.from_config(cfg).eval()
    with pytest.raises(ValueError, match=r"vision_tower.*PixtralVisionRotaryEmbedding.*vision='keep'"):
        patch_rotary(m)
    assert not any(hasattr(mod, "posenc") for _, mod, _ in rotary_modules(m))
    ids = torch.randint(3, 64, (1, 16))
    with torch.no_grad():
        ref = m(input_ids=ids).logits
        patch_rotary(m, vision="keep")
        try:
            patched = [type(mod).__name__ for _, mod, _ in rotary_modules(m) if hasattr(mod, "posenc")]
            assert patched == ["Ministral3RotaryEmbedding"], patched
            got = m(input_ids=ids).logits
        finally:
            unpatch_rotary(m)
    assert rel_diff(got, ref) <= SHORT_TOL

"""posenc's exact RoPE inside a transformers (5.x) model.

``patch_rotary(model)`` finds the model's rotary embedding modules (every submodule with an
``inv_freq`` buffer or per-layer-type ``<layer_type>_inv_freq`` buffers) and replaces their forward
by posenc's: the frequencies of the config's rule from posenc's C++ loader, the angle
position * frequency reduced exactly, cos/sin rounded once to the model's dtype. transformers forms
the same angle in float32 (position * float32 inv_freq), which at position 2^20 is off by up to
~2^20 * 2^-24 = 1/16 rad; posenc's is exact at any position. The attention code is untouched (it
keeps applying cos/sin with its own apply_rotary_pos_emb, NoPE layers, temperature tuning and
query scales included). The forms handled (each checked against the module's own output on a
probe before anything is replaced):

* ``forward(x, position_ids[, layer_type]) -> (cos, sin)`` of width rotary_dim ([c | c]) or
  rotary_dim / 2 (Llama, Qwen3, Phi-3, Gemma 3, gpt-oss, SmolLM3, GLM-4.5, Qwen3-Next, Ministral 3,
  DeepSeek V3 / Kimi K2, ...; frequencies from posenc::rotary::load_config);
* Llama 4's ``forward(x, position_ids) -> freqs_cis`` (complex64 [B, S, rotary_dim / 2]);
* the M-RoPE text modules of Qwen2-VL, Qwen2.5-VL, Qwen3-VL, GLM-4.1V, GLM-4.5V and ERNIE 4.5-VL:
  position_ids [3, B, S] (or [B, S]), cos/sin [B, S, rotary_dim] with each pair at its axis'
  position (posenc::rotary::load_mrope_config), in [c | c] or with each value twice in a row (GLM-4.1V,
  ERNIE 4.5-VL), whichever the module returns;
* their vision towers' axial 2-D RoPE (``rope_type`` "axial"): position_ids [N, 2] (h, w),
  cos/sin [N, head_dim] in float32; ``vision="keep"`` leaves every vision tower's module as
  transformers' (e.g. Pixtral's in Mistral 3, which posenc does not express and refuses otherwise).

A module of another form raises ValueError naming it and the reason, and nothing is patched.
"""
import json
import types

import torch

from .multiaxis import MultiAxisRotaryEmbedding, axes_cos_sin
from .rotary import RotaryEmbedding, config_json

_P = torch.ops.posenc

#: model types whose text rotary module is M-RoPE (position_ids [3, B, S]) and patch_rotary handles
MROPE_MODEL_TYPES = ("qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe", "glm4v", "glm4v_moe", "ernie4_5_vl_moe",
                     "hunyuan_vl")


def _text_config(model):
    cfg = model.config
    return getattr(cfg, "get_text_config", lambda: cfg)()


def rotary_modules(model):
    """(name, module, [layer types]) of the rotary embedding modules of a transformers model."""
    out = []
    for name, mod in model.named_modules():
        bufs = dict(mod.named_buffers(recurse=False))
        if "inv_freq" in bufs:
            out.append((name, mod, [None]))
        else:
            lts = sorted(b[: -len("_inv_freq")] for b in bufs if b.endswith("_inv_freq") and "original" not in b)
            if lts:
                out.append((name, mod, lts))
    return out


def _fail(name, mod, reason):
    raise ValueError("posenc: patch_rotary: %s (%s): %s; nothing was patched" % (name or "<model>", type(mod).__name__,
                                                                              reason))


def _probe(name, mod, *args):
    f = mod._posenc_original_forward if hasattr(mod, "_posenc_original_forward") else mod.forward
    try:
        with torch.no_grad():
            return f(*args)
    except Exception as e:  # a forward of another signature
        raise ValueError("posenc: patch_rotary: %s (%s): its forward fails on a probe of the forms posenc knows (%s: "
                         "%s); nothing was patched" % (name or "<model>", type(mod).__name__, type(e).__name__, e)) from e


def _rope_type(mod):
    rp = getattr(getattr(mod, "config", None), "rope_parameters", None)
    return rp.get("rope_type") if isinstance(rp, dict) else None


def _vision_plan(name, mod):
    cfg = mod.config
    theta = cfg.rope_parameters["rope_theta"]
    dim = getattr(cfg, "head_dim", None) or (getattr(cfg, "embed_dim", None) or cfg.hidden_size) // cfg.num_attention_heads
    spatial = dim // 2
    n = int(mod.inv_freq.numel())
    inv = _P.rope_frequencies(json.dumps({"head_dim": spatial, "hidden_size": spatial, "num_attention_heads": 1,
                                          "rope_theta": theta}), 0, None, "transformers_5", "init_function")[0]
    if inv.numel() != n:
        _fail(name, mod, "axial RoPE of %d frequencies, expected head_dim / 4 = %d as the Qwen-VL towers have (pass "
                         "vision='keep' to leave this tower's rotary embedding as transformers')" % (n, inv.numel()))
    freqs = torch.cat([inv, inv]).contiguous()
    axis = torch.cat([torch.zeros(n, dtype=torch.int64), torch.ones(n, dtype=torch.int64)])
    out = _probe(name, mod, torch.zeros(1), torch.zeros(1, 2, dtype=torch.long))
    if not (isinstance(out, tuple) and len(out) == 2 and out[0].shape == (1, 4 * n)):
        _fail(name, mod, "an axial RoPE returning (cos, sin) [N, %d] was expected" % (4 * n))
    af = float(getattr(mod, "attention_scaling", 1.0))

    def forward(self, x, position_ids, **kwargs):
        c, s = axes_cos_sin(position_ids.to("cpu").t(), freqs, axis, af, torch.float32)
        return c.to(x.device), s.to(x.device)

    return forward


def _mrope_plan(name, mod, model):
    try:
        rot = MultiAxisRotaryEmbedding(config_json(model.config))
    except ValueError as e:
        _fail(name, mod, "its M-RoPE config is not expressible: %s" % e)
    if rot.model_type not in MROPE_MODEL_TYPES:
        _fail(name, mod, "M-RoPE of model_type %r is not one patch_rotary knows (%s)"
              % (rot.model_type, ", ".join(MROPE_MODEL_TYPES)))
    axes = len(rot.mrope_section) if rot.style == "xdrope" else 3  # HunYuan-VL: one axis per section entry
    ids = torch.tensor([[[3]], [[5]], [[7]], [[11]]])[:axes]
    c0, _ = _probe(name, mod, torch.zeros(1, dtype=torch.float64), ids)
    cp, _ = rot.cos_sin(ids, dtype=torch.float64, duplicated=False) if rot.style != "xdrope" else (None, None)
    # [c | c] (Qwen-VL, GLM-4.5V) or each value twice in a row (GLM-4.1V, ERNIE 4.5-VL); HunYuan-VL's
    # split-half [c_A | c_B] only as posenc's duplicated table
    forms = ({False: rot.cos_sin(ids, dtype=torch.float64)[0]} if rot.style == "xdrope"
             else {False: torch.cat([cp, cp], -1), True: cp.repeat_interleave(2, -1)})
    pairwise = next((k for k, c1 in forms.items() if c0.shape == c1.shape and torch.allclose(c0.double(), c1, atol=1e-6)),
                    None)
    if pairwise is None:
        _fail(name, mod, "its cos/sin of shape %s at positions (3, 5, 7) differ from posenc's M-RoPE %s of shape %s "
              "([c | c] and each value twice in a row)" % (tuple(c0.shape), rot.model_type, tuple(forms[False].shape)))
    fixed = None if c0.dtype == torch.float64 else c0.dtype  # ERNIE 4.5-VL's are float32 whatever x is

    def forward(self, x, position_ids, **kwargs):
        p = position_ids.to("cpu")
        if p.dim() == 2:
            p = p.expand(axes, -1, -1)
        elif rot.style == "xdrope" and p.shape[0] == 1:  # HunYuan-VL's forward expands [1, B, S] to every axis
            p = p.expand(axes, -1, -1)
        dtype = fixed or x.dtype
        if pairwise:
            c, s = rot.cos_sin(p, dtype=dtype, duplicated=False)
            c, s = c.repeat_interleave(2, -1), s.repeat_interleave(2, -1)
        else:
            c, s = rot.cos_sin(p, dtype=dtype)
        return c.to(x.device), s.to(x.device)

    return forward, rot


def _text_plan(name, mod, lts, text, semantics):
    plans = {}
    complex_out = False
    for lt in lts:
        try:
            rot = RotaryEmbedding(text, layer_type=lt, semantics=semantics)
        except ValueError as e:
            _fail(name, mod, "its config is not expressible: %s" % e)
        probe = (torch.zeros(1), torch.zeros(1, 1, dtype=torch.long)) + (() if lt is None else (lt,))
        out = _probe(name, mod, *probe)
        if isinstance(out, torch.Tensor) and out.is_complex():  # Llama 4: freqs_cis [B, S, rotary_dim / 2]
            width, complex_out = out.shape[-1] * 2, True
            if width != rot.rotary_dim:
                _fail(name, mod, "freqs_cis of %d pairs, expected rotary_dim / 2 = %d" % (width // 2, rot.rotary_dim // 2))
            duplicated = False
        elif isinstance(out, tuple) and len(out) == 2 and isinstance(out[0], torch.Tensor):
            width = out[0].shape[-1]
            if width not in (rot.rotary_dim, rot.rotary_dim // 2):
                _fail(name, mod, "cos/sin of width %d, expected rotary_dim = %d or rotary_dim / 2 from the config"
                      % (width, rot.rotary_dim))
            duplicated = width == rot.rotary_dim
        else:
            _fail(name, mod, "its forward returns %s, neither (cos, sin) nor complex freqs_cis" % type(out).__name__)
        plans[lt] = (rot, duplicated)

    if complex_out:
        def forward(self, x, position_ids, **kwargs):
            rot, _ = next(iter(self.posenc.values()))
            c, s = rot.cos_sin(position_ids.to("cpu"), dtype=torch.float32)
            h = rot.rotary_dim // 2
            return torch.complex(c[..., :h], s[..., :h]).to(x.device)
    else:
        def forward(self, x, position_ids, layer_type=None, **kwargs):
            rot, duplicated = self.posenc[layer_type] if layer_type in self.posenc else next(iter(self.posenc.values()))
            cos, sin = rot.cos_sin(position_ids.to("cpu"), dtype=x.dtype)
            if not duplicated:
                h = rot.rotary_dim // 2
                cos, sin = cos[..., :h].contiguous(), sin[..., :h].contiguous()
            return cos.to(x.device), sin.to(x.device)

    return forward, plans


def patch_rotary(model, semantics: str = "transformers_5", vision: str = "patch"):
    """Replace the rotary embeddings of `model` by posenc's exact ones (in place); returns the model.
    Every module is checked first: one that posenc cannot express raises ValueError naming it and
    the reason, and then no module is patched. vision="keep" leaves the vision towers' rotary
    modules (rope_type "axial" or a class named *VisionRotaryEmbedding) as transformers' on purpose,
    e.g. Pixtral's in Mistral 3, whose layout posenc does not express; "patch" (default) replaces
    the Qwen-VL towers' and refuses the others. The replaced modules keep a `posenc` attribute;
    `unpatch_rotary` restores transformers' forward."""
    if vision not in ("patch", "keep"):
        raise ValueError("posenc: patch_rotary: vision: expected 'patch' or 'keep', got %r" % (vision,))
    if not isinstance(getattr(model, "config", None), (str, dict)) and not hasattr(getattr(model, "config", None),
                                                                                   "to_dict"):
        raise TypeError("posenc: patch_rotary: model: expected a transformers model (a module whose .config is a "
                        "transformers config), got %s, which has no transformers config" % type(model).__name__)
    mods = rotary_modules(model)
    if not mods:
        raise ValueError("posenc: patch_rotary: no rotary embedding module (a submodule with an inv_freq buffer) in %s"
                         % type(model).__name__)
    text = None
    model_type = getattr(model.config, "model_type", None)
    plans = []
    for name, mod, lts in mods:
        if _rope_type(mod) == "axial" or type(mod).__name__.endswith("VisionRotaryEmbedding"):
            if vision == "keep":
                continue
            if _rope_type(mod) != "axial":
                _fail(name, mod, "a vision rotary embedding whose rope_type is %r, not 'axial'" % (_rope_type(mod),))
            plans.append((mod, _vision_plan(name, mod), None))
        elif model_type in MROPE_MODEL_TYPES or hasattr(mod, "mrope_section"):
            fwd, rot = _mrope_plan(name, mod, model)
            plans.append((mod, fwd, {None: (rot, True)}))
        else:
            if text is None:
                text = config_json(_text_config(model))
            fwd, p = _text_plan(name, mod, lts, text, semantics)
            plans.append((mod, fwd, p))
    for mod, fwd, p in plans:  # every module checked: now replace
        if not hasattr(mod, "_posenc_original_forward"):
            mod._posenc_original_forward = mod.forward
        mod.posenc = p if p is not None else {}
        mod.forward = types.MethodType(fwd, mod)
    return model


def unpatch_rotary(model):
    """Undo patch_rotary."""
    for _, mod, _ in rotary_modules(model):
        if hasattr(mod, "_posenc_original_forward"):
            mod.forward = mod._posenc_original_forward
            del mod._posenc_original_forward
            del mod.posenc
    return model

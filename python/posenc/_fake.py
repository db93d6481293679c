"""Fake (meta) kernels of torch.ops.posenc.*: output shapes, dtypes and strides without computing,
so that torch.compile (FakeTensor tracing, AOTAutograd) goes through posenc's ops without a graph
break. Registered with torch.library.register_fake (torch >= 2.4; older torch has no compiler
to serve). Every kernel mirrors the CPU kernel's output exactly (opcheck compares them)."""
import torch

_register = getattr(torch.library, "register_fake", None)


def _tensors_of(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for t in value if isinstance(t, torch.Tensor)]
    return []


def check_devices(name, args, kwargs):
    """Every tensor argument of posenc::<name> on one device, else ValueError naming the argument and
    both devices. The fake kernel is what runs when one argument is on the meta device beside CPU
    tensors (Meta dispatches first), so without this check it would hand back an uninitialised
    tensor instead of failing as the CPU kernel would."""
    names = [a.name for a in getattr(torch.ops.posenc, name).default._schema.arguments]
    first = None
    for arg_name, value in list(zip(names, args)) + list(kwargs.items()):
        for t in _tensors_of(value):
            if first is None:
                first = (arg_name, t.device)
            elif t.device != first[1]:
                raise ValueError("posenc: %s: %s: expected the device of %s (%s), got %s"
                                 % (name, arg_name, first[0], first[1], t.device))


def _fake(name):
    def deco(fn):
        def checked(*args, **kwargs):
            check_devices(name, args, kwargs)
            return fn(*args, **kwargs)

        if _register is not None:
            _register("posenc::" + name)(checked)
        return fn

    return deco


@_fake("floater_table")
def _floater_table(w1, b1, w2, b2, p0, L, delta=0.01, substeps=5, activation="relu", time1=True, time2=True,
                   scheme="rk4", threads=0, gradient="backprop", adjoint_substeps=0):
    return p0.new_empty((L, p0.shape[0], p0.shape[1]))


@_fake("floater_table_backward")
def _floater_table_backward(grad, w1, b1, w2, b2, p0, *args):
    return [torch.empty_like(t, memory_format=torch.contiguous_format) for t in (w1, b1, w2, b2, p0)]


@_fake("sinusoidal_table")
def _sinusoidal_table(L, d, layout="interleaved", spacing="two_k_over_d", base=10000.0, first_position=0.0,
                      position_step=1.0, zero_pad_odd=False, positions=None, dtype=torch.float64):
    rows = positions.shape[0] if positions is not None else L
    return torch.empty((rows, d), dtype=dtype)


@_fake("rope_tables")
def _rope_tables(L, rotary_dim, base=10000.0, first_position=0.0, position_step=1.0, positions=None,
                 dtype=torch.float64):
    rows = positions.shape[0] if positions is not None else L
    return torch.empty((rows, rotary_dim // 2), dtype=dtype), torch.empty((rows, rotary_dim // 2), dtype=dtype)


@_fake("rope_rotate")
def _rope_rotate(x, *args):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@_fake("rope_rotate_")
def _rope_rotate_(x, *args):
    return None


@_fake("rope")
def _rope(x, inv_freq, *args):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@_fake("rope_")
def _rope_(x, inv_freq, *args):
    return None


@_fake("rope_frequencies")
def _rope_frequencies(config_json, seq_len=0, layer_type=None, semantics="transformers_5",
                      longrope_rule="init_function", exact=False):
    # no tensor input: the sizes come from the config, so ask the real kernel outside fake mode
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    with unset_fake_temporarily():
        inv, af, hd, rd, dep = torch.ops.posenc.rope_frequencies(config_json, seq_len, layer_type, semantics,
                                                                 longrope_rule, exact)
    return torch.empty(inv.shape, dtype=inv.dtype), af, hd, rd, dep


@_fake("rope_frequencies_at")
def _rope_frequencies_at(positions, config_json, pairs, layer_type=None, semantics="transformers_5",
                         longrope_rule="init_function"):
    # the values depend on max(positions); the shape is [pairs, 2, 3] whatever they are
    return positions.new_empty((pairs, 2, 3), dtype=torch.float64)


@_fake("rope_cos_sin")
def _rope_cos_sin(position_ids, inv_freq, attention_factor=1.0, dtype=torch.float32):
    shape = tuple(position_ids.shape) + (2 * inv_freq.shape[0],)
    return torch.empty(shape, dtype=dtype), torch.empty(shape, dtype=dtype)


@_fake("alibi_slopes")
def _alibi_slopes(heads):
    return torch.empty((heads,), dtype=torch.float64)


@_fake("alibi_bias")
def _alibi_bias(slopes, q_len, k_len, q_offset=0, form="relative", causal_mask=False, dtype=torch.float32):
    return torch.empty((slopes.shape[0], q_len, k_len), dtype=dtype)


@_fake("alibi_add")
def _alibi_add(scores, *args):
    return torch.empty_like(scores, memory_format=torch.contiguous_format)


@_fake("alibi_add_")
def _alibi_add_(scores, *args):
    return None


@_fake("tupe_bias")
def _tupe_bias(pos, ln_weight, ln_bias, q_weight, q_bias, k_weight, k_bias, rel, n, heads, *args):
    return pos.new_empty((heads, n, n))


@_fake("tupe_bias_backward")
def _tupe_bias_backward(grad, pos, ln_weight, ln_bias, q_weight, q_bias, k_weight, k_bias, rel, *args):
    return [pos.new_empty(t.shape) if t is not None else pos.new_empty((0,))
            for t in (pos, ln_weight, ln_bias, q_weight, q_bias, k_weight, k_bias, rel)]


@_fake("relative_position_bucket")
def _relative_position_bucket(n, num_buckets=32, max_distance=128, bidirectional=True):
    return torch.empty((n, n), dtype=torch.int64)


@_fake("t5_bias")
def _t5_bias(table, n, *args):
    return table.new_empty((table.shape[1], n, n))


@_fake("t5_bias_backward")
def _t5_bias_backward(grad, rows, *args):
    return grad.new_empty((rows, grad.shape[0]))


@_fake("toeplitz_matmul")
def _toeplitz_matmul(b, x, m):
    return x.new_empty((m, x.shape[1]))


@_fake("toeplitz_correlate")
def _toeplitz_correlate(g, x):
    return x.new_empty((g.shape[0] + x.shape[0] - 1,))


@_fake("mrope_config")
def _mrope_config(config_json):
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    with unset_fake_temporarily():
        out = torch.ops.posenc.mrope_config(config_json)
    return (torch.empty(out[0].shape, dtype=out[0].dtype), torch.empty(out[1].shape, dtype=out[1].dtype)) + tuple(out[2:])


@_fake("axes_cos_sin")
def _axes_cos_sin(position_ids, freqs, axis, attention_factor=1.0, dtype=torch.float32, duplicated=True):
    shape = tuple(position_ids.shape[1:]) + ((2 if duplicated else 1) * freqs.shape[0],)
    return torch.empty(shape, dtype=dtype), torch.empty(shape, dtype=dtype)


@_fake("axes_rope")
def _axes_rope(x, position_ids, freqs, axis, *args):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@_fake("axes_rope_")
def _axes_rope_(x, position_ids, freqs, axis, *args):
    return None


@_fake("get_rope_index")
def _get_rope_index(mm_token_type_ids, *args):
    B, S = mm_token_type_ids.shape
    return (torch.empty((3, B, S), dtype=torch.int64), torch.empty((B, 1), dtype=torch.int64))


@_fake("hunyuan_rope_index")
def _hunyuan_rope_index(mm_token_type_ids, image_grid_thw=None, attention_mask=None, axes=4, spatial_merge_size=2):
    B, S = mm_token_type_ids.shape
    return (torch.empty((axes, B, S), dtype=torch.int64), torch.empty((B, 1), dtype=torch.int64))


def _run_real(name, *args):
    """The real op on its (non-tensor) arguments: the outputs' shapes depend on their values."""
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    with unset_fake_temporarily():
        return getattr(torch.ops.posenc, name)(*args)


@_fake("axes_layout_frequencies")
def _axes_layout_frequencies(model, sizes=(), theta=0.0):
    out = _run_real("axes_layout_frequencies", model, sizes, theta)
    return tuple(torch.empty(t.shape, dtype=t.dtype) for t in out)


@_fake("axes_layout_positions")
def _axes_layout_positions(model, sizes=(), grids=()):
    out = _run_real("axes_layout_positions", model, sizes, grids)
    return [torch.empty(t.shape, dtype=t.dtype) for t in out]

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the seed corpus of the libFuzzer harnesses (tests/fuzz/corpus/<reader>/): a few valid
files per reader and near-valid ones (one field wrong), each small. The json and rotary_config
seeds are JSON texts (the latter config.json excerpts of the rope_scaling rules). Standard library only; the
bytes follow the format specifications (NumPy .npy format 1.0-3.0, safetensors). Run from any
directory; it rewrites the corpus folders next to this script."""
import json
import math
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def npy(descr, shape, payload, fortran=False, major=1, align=64):
    shape_txt = "(" + "".join(f"{e}, " for e in shape).rstrip(" ") + ")" if len(shape) != 1 else f"({shape[0]},)"
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, "True" if fortran else "False", shape_txt)
    prefix = 10 if major == 1 else 12
    total = prefix + len(d) + 1
    total = (total + align - 1) // align * align
    hlen = total - prefix
    head = b"\x93NUMPY" + bytes([major, 0]) + (struct.pack("<H", hlen) if major == 1 else struct.pack("<I", hlen))
    text = d.encode() + b" " * (hlen - len(d) - 1) + b"\n"
    return head + text + payload


def safetensors(header, data, pad=True):
    h = json.dumps(header, separators=(",", ":")) if not isinstance(header, str) else header
    hb = h.encode()
    if pad:
        hb += b" " * ((8 - len(hb) % 8) % 8)
    return struct.pack("<Q", len(hb)) + hb + data


def tensors(named):
    """named: list of (name, dtype, shape, bytes) -> (header dict, data)"""
    hdr, data = {}, b""
    for name, dt, shape, b in named:
        hdr[name] = {"dtype": dt, "shape": shape, "data_offsets": [len(data), len(data) + len(b)]}
        data += b
    return hdr, data


def f32(v):
    return struct.pack(f"<{len(v)}f", *v)


def f64(v):
    return struct.pack(f"<{len(v)}d", *v)


def f16(v):
    return struct.pack(f"<{len(v)}e", *v)


def write(reader, files):
    d = os.path.join(HERE, "corpus", reader)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for name, b in files.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(b)


def main():
    six = [0.5, -1.25, 3.0, 1e-3, -0.0, 7.75]
    write("npy", {
        "valid_f8_2x3": npy("<f8", (2, 3), f64(six)),
        "valid_f4_fortran_3x2": npy("<f4", (3, 2), f32(six), fortran=True),
        "valid_big_endian_f8": npy(">f8", (4,), struct.pack(">4d", 1.0, -2.0, math.inf, 0.25)),
        "valid_v2_f2": npy("<f2", (2, 2), f16([1.0, -2.0, 0.5, 65504.0]), major=2),
        "valid_v3_i2_rank3": npy("<i2", (2, 1, 2), struct.pack("<4h", 1, -2, 300, -32768), major=3),
        "valid_scalar": npy("<f8", (), f64([42.0])),
        "valid_empty_0x3": npy("<f4", (0, 3), b""),
        "valid_fortran_rank5": npy("<f8", (2, 1, 3, 1, 2), f64([float(i) for i in range(12)]), fortran=True),
        "near_truncated_data": npy("<f8", (2, 3), f64(six)[:-4]),
        "near_trailing_bytes": npy("<f8", (2,), f64([1.0, 2.0, 3.0])),
        "near_bad_descr": npy("<c16", (1,), b"\0" * 16),
        "near_rank_65": npy("<f8", tuple([1] * 65), f64([1.0])),
        "near_bad_version": b"\x93NUMPY\x04\x00" + npy("<f8", (1,), f64([1.0]))[8:],
    })
    hdr, data = tensors([("w", "F32", [2, 2], f32([1, -2, 0.5, 3.25])), ("b", "F64", [3], f64([0.1, -1e300, 7.0]))])
    meta = dict(hdr)
    meta["__metadata__"] = {"format": "pt", "note": "caf\u00e9"}
    hdr16, data16 = tensors([("h", "F16", [2], f16([1.0, -0.5])), ("g", "BF16", [1, 2], b"\x80\x3f\x00\xc0"),
                             ("i", "I64", [1], struct.pack("<q", -7)), ("z", "F32", [0, 4], b"")])
    dup = '{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}'
    nested = '{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":[[0,0],[0,[0]]]}}'
    write("safetensors", {
        "valid_two_tensors_metadata": safetensors(meta, data),
        "valid_f16_bf16_i64_empty": safetensors(hdr16, data16),
        "valid_empty": safetensors({}, b""),
        "valid_escapes_unpadded": safetensors('{"\\u00e9\\ud83d\\ude00":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}',
                                              b"\x01\x02", pad=False),
        "valid_nested_extra_member": safetensors(nested, f32([1.5])),
        "near_overlap": safetensors(tensors([("a", "F32", [2], f32([1, 2]))])[0] | {"b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}, f32([1, 2, 3])),
        "near_duplicate_key": safetensors(dup, f32([1, 2])),
        "near_bad_length": struct.pack("<Q", 1 << 40) + b"{}",
        "near_wrong_span": safetensors(tensors([("a", "F32", [3], f32([1, 2]))])[0], f32([1, 2])),
        "near_metadata_not_string": safetensors({"__metadata__": {"k": 1}}, b""),
    })
    d, hidden, n = 4, 3, 2
    ramp = lambda k, s=0.1: [s * ((i * 7) % 5 - 2) for i in range(k)]

    def weights(w1_cols, w2_cols, p0_shape=(n, d), extra=None, b1_len=hidden, w2_vals=None):
        named = [("proj_flow.layers.0.linear.weight", "F32", [hidden, w1_cols], f32(ramp(hidden * w1_cols))),
                 ("proj_flow.layers.0.linear.bias", "F32", [b1_len], f32(ramp(b1_len, 0.05))),
                 ("proj_flow.layers.2.linear.weight", "F32", [d, w2_cols],
                  f32(w2_vals if w2_vals is not None else ramp(d * w2_cols))),
                 ("proj_flow.layers.2.linear.bias", "F32", [d], f32(ramp(d, 0.02))),
                 ("proj_bias", "F32", list(p0_shape), f32(ramp(math.prod(p0_shape), 0.3)))]
        if extra:
            named += extra
        h, b = tensors(named)
        return safetensors(h, b)

    nan_w2 = ramp(d * (hidden + 1))
    nan_w2[5] = math.nan
    write("floater_weights", {
        "valid_time_both_layers": weights(d + 1, hidden + 1),
        "valid_no_time": weights(d, hidden),
        "valid_p0_3_layers": weights(d + 1, hidden + 1, p0_shape=(3, 2, d)),
        "valid_extra_tensor": weights(d + 1, hidden + 1, extra=[("other", "F64", [1], f64([1.0]))]),
        "near_bad_b1_shape": weights(d + 1, hidden + 1, b1_len=hidden + 1),
        "near_nan_w2": weights(d + 1, hidden + 1, w2_vals=nan_w2),
        "near_w1_wrong_width": weights(d + 2, hidden + 1),
        "near_missing_tensors": safetensors(*tensors([("proj_bias", "F32", [1, d], f32(ramp(d)))])),
    })

    write("json", {
        "valid_nested": b'{"a": [1, 2.5e-3, -0.0, "x\\u00e9\\n"], "b": {"c": null, "d": true, "e": false}}',
        "valid_array_of_objects": b'[{}, {"k": 1}, [], [[]], "", 18446744073709551615]',
        "valid_escapes": b'"\\ud83d\\ude00 \\" \\\\ \\/ \\b \\f \\r \\t"',
        "near_duplicate_key": b'{"a": 1, "b": 2, "a": 3}',
        "near_trailing_comma": b'[1, 2, ]',
        "near_bad_surrogate": b'"\\ud800x"',
        "near_deep": b"[" * 70 + b"]" * 70,
        "near_bad_number": b'[01, 1.e5, -]',
    })
    write("rotary_config", {
        "valid_llama3": json.dumps({"hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2,
                                    "max_position_embeddings": 1024, "rope_theta": 500000.0,
                                    "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                                     "original_max_position_embeddings": 128,
                                                     "rope_type": "llama3"}}).encode(),
        "valid_yarn": json.dumps({"hidden_size": 128, "num_attention_heads": 2, "max_position_embeddings": 512,
                                  "rope_theta": 1000000.0,
                                  "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 128,
                                                   "type": "yarn"}}).encode(),
        "valid_longrope": json.dumps({"head_dim": 8, "max_position_embeddings": 4096,
                                      "original_max_position_embeddings": 256, "rope_theta": 10000.0,
                                      "rope_scaling": {"long_factor": [1.5, 2.0, 3.0, 4.0],
                                                       "short_factor": [1.0, 1.0, 1.1, 1.2], "type": "longrope"}}
                                     ).encode(),
        "valid_linear": b'{"hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 4096, '
                        b'"rope_scaling": {"factor": 4.0, "type": "linear"}}',
        "valid_dynamic_partial": b'{"head_dim": 32, "partial_rotary_factor": 0.5, "max_position_embeddings": 2048, '
                                 b'"rope_theta": 1000000, "rope_scaling": {"type": "dynamic", "factor": 2.0}}',
        "valid_ntk_alibi": b'{"head_dim": 16, "alibi": true, "rope_scaling": {"rope_type": "ntk", "factor": 2}}',
        "near_huge_head_dim": b'{"head_dim": 9007199254740992, "rope_theta": 10000.0}',
        "head_dim_9e8.json": b'{"model_type": "llama", "head_dim": 900000000}',  # once asked for 14 GB
        "near_unknown_rule": b'{"head_dim": 64, "rope_scaling": {"rope_type": "xpos", "factor": 2.0}}',
        "near_short_factor_length": b'{"head_dim": 8, "max_position_embeddings": 64, "original_max_position_embeddings": 16, '
                                    b'"rope_scaling": {"type": "longrope", "short_factor": [1, 1, 1], '
                                    b'"long_factor": [1, 1, 1, 1]}}',
    })

    # The transformers-5 form: the "config" member of each tests/rotary/hf/*.v5.json reference
    # case (real model configs with rope_parameters, per layer type, layer_types and text_config),
    # compact, without the keys the loader ignores: a few KB each.
    hf = os.path.join(HERE, "..", "rotary", "hf")
    v5 = {}
    for name in sorted(os.listdir(hf)):
        if name.endswith(".v5.json"):
            with open(os.path.join(hf, name)) as f:
                v5["v5_" + name[: -len(".v5.json")]] = compact_config(json.load(f)["config"])
    add("rotary_config", v5)


# Keys of a model config that rotary::load_config reads (at any level: text_config, attn_config,
# rope_parameters and its per layer type entries, per_layer_config); the rest is dropped.
LOADER_KEYS = {
    "rope_parameters", "rope_scaling", "rope_type", "type", "rope_theta", "rope_local_base_freq", "factor",
    "attention_factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "low_freq_factor",
    "high_freq_factor", "short_factor", "long_factor", "truncate", "original_max_position_embeddings",
    "max_position_embeddings", "partial_rotary_factor", "head_dim", "global_head_dim", "qk_rope_head_dim",
    "hidden_size", "num_attention_heads", "num_key_value_heads", "num_hidden_layers", "layer_types",
    "per_layer_config", "text_config", "attn_config", "model_type", "rope_interleave", "alibi", "rotary_dim",
}


def compact_config(c):
    def keep(v, under_rope):
        if isinstance(v, dict):
            return {k: keep(x, under_rope or k in ("rope_parameters", "rope_scaling", "per_layer_config"))
                    for k, x in v.items()
                    if under_rope or k in LOADER_KEYS or k.endswith("_attention")}
        return v
    return json.dumps(keep(c, False), separators=(",", ":")).encode()


def add(reader, files):
    d = os.path.join(HERE, "corpus", reader)
    for name, b in files.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(b)


if __name__ == "__main__":
    main()

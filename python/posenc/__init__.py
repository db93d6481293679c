"""posenc from PyTorch: positional encodings as registered PyTorch operators.

The heavy lifting is posenc's C++ (header-only library, built into one shared library that
registers the operators ``torch.ops.posenc.*`` with ``TORCH_LIBRARY``: schemas, CPU kernels and
Autograd kernels in C++, so Python, TorchScript and C++ callers all get gradients). This package
loads that library, registers fake (meta) kernels for ``torch.compile`` and wraps the operators in
functions and ``torch.nn.Module``\\ s:

* :class:`FloaterEncoder` / :func:`floater_table` -- FLOATER position tables from a learned ODE,
  gradients by posenc's exact discrete backprop (default) or the continuous adjoint.
* :class:`RotaryEmbedding` -- RoPE built from a transformers config (every scaling rule, per
  layer type), applied to q/k [B, H, S, D] or ragged [T, H, D] (cu_seqlens, position_ids), in
  place or not, bf16/f16/f32/f64; :func:`rope`, :func:`rope_`; xPos. Decode steps gather from
  a shared table of exact coefficients (:func:`rope_decode`, :func:`rope_cache_info`,
  :func:`rope_cache_clear`, :func:`rope_cache_limits`).
* :class:`MultiAxisRotaryEmbedding` -- M-RoPE of vision-language models (Qwen2-VL, Qwen2.5-VL,
  Qwen3-VL, GLM-4V, ERNIE 4.5-VL) from their config: multi-axis position_ids [3, B, S];
  :func:`axes_cos_sin`, :func:`axes_rope`, :func:`axes_rope_`, :func:`get_rope_index`, :func:`hunyuan_rope_index`.
* :mod:`posenc.layouts` -- the multi-axis RoPE of diffusion transformers (FLUX, Wan 2.x,
  HunyuanVideo, Qwen-Image) and vision encoders (Qwen-VL, Pixtral, Llama 4, DINOv3): exact
  frequencies and positions, cos/sin in the peer's layout, :class:`AxesRope` to apply in place.
* :func:`alibi_slopes`, :func:`alibi_bias`, :func:`alibi_add` -- ALiBi.
* :func:`sinusoidal_table`, :func:`rope_tables`, :func:`apply_rotary`, :func:`apply_rotary_`.
* :class:`TUPEPositionalBias` / :func:`tupe_bias` -- TUPE's untied positional term.
* :func:`relative_position_bucket`, :func:`t5_bias` -- T5 buckets and the bucketed bias.
* :func:`toeplitz_matmul` -- B X for a Toeplitz B by FFT.
* :mod:`posenc.transformers` -- ``patch_rotary(model)``: posenc's RoPE in a transformers model.
* :mod:`posenc.distributed` -- sharding rules of the ops for DTensors (tensor / context parallel),
  imported by the functions above the first time they see a DTensor.

Bad input raises ``ValueError`` (shape, device, layout, contiguity, value range, config) or
``TypeError`` (dtype) with posenc's message.
"""
import os as _os
import re as _re

import torch as _torch

__all__ = [
    "FloaterEncoder",
    "floater_table",
    "sinusoidal_table",
    "rope_tables",
    "apply_rotary",
    "apply_rotary_",
    "RotaryEmbedding",
    "rope",
    "rope_",
    "rope_decode",
    "rope_decode_",
    "rope_cache_info",
    "rope_cache_clear",
    "rope_cache_limits",
    "rope_frequencies",
    "MultiAxisRotaryEmbedding",
    "axes_cos_sin",
    "axes_rope",
    "axes_rope_",
    "get_rope_index",
    "hunyuan_rope_index",
    "AxesRope",
    "layouts",
    "alibi_slopes",
    "alibi_bias",
    "alibi_add",
    "TUPEPositionalBias",
    "tupe_bias",
    "relative_position_bucket",
    "t5_bias",
    "toeplitz_matmul",
    "library_path",
    "TorchVersionMismatch",
]

_LIB_NAME = "libposenc_torch.so"


class TorchVersionMismatch(ImportError):
    """The operator library was built for another torch than the one importing it."""


def _find_library():
    env = _os.environ.get("POSENC_TORCH_LIBRARY")
    if env:
        return env
    here = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), _LIB_NAME)
    if _os.path.exists(here):
        return here
    raise ImportError(
        "posenc: the operator library " + _LIB_NAME + " was not found next to the package "
        "(" + here + ") and POSENC_TORCH_LIBRARY is not set; install with `pip install ./python` "
        "or build it with `cmake -S python -B build/python && cmake --build build/python` and set "
        "POSENC_TORCH_LIBRARY to the built file")


def _release(version):
    """'2.15.0+cu132' -> (2, 15, 0); '1.13.0a0+gitabc' -> (1, 13, 0): the C++ ABI of a torch build
    is that of its release, not of its local tag (CPU/CUDA wheels of one release share headers)."""
    m = _re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", version)
    return tuple(int(g or 0) for g in m.groups()) if m else (version,)


def _version_file(lib):
    return _os.path.join(_os.path.dirname(lib), "libposenc_torch.torch-version")


def check_build(lib, running=None):
    """Raise TorchVersionMismatch (an ImportError) naming both versions when the library `lib` was
    built for another torch release than `running` (default: the imported torch)."""
    running = _torch.__version__ if running is None else running
    vf = _version_file(lib)
    if not _os.path.exists(vf):
        raise TorchVersionMismatch(
            "posenc: %s has no record of the torch it was built for (%s is missing); rebuild it against "
            "torch %s: pip install --no-build-isolation --force-reinstall ./python" % (lib, vf, running))
    with open(vf) as f:
        built = f.read().strip()
    if _release(built) != _release(running):
        raise TorchVersionMismatch(
            "posenc: the operator library %s was built for torch %s, but this interpreter imports torch %s; "
            "rebuild it against this torch: pip install --no-build-isolation --force-reinstall ./python"
            % (lib, built, running))
    return built


library_path = _find_library()
torch_version_built = check_build(library_path)
try:
    _torch.ops.load_library(library_path)
except OSError as e:  # e.g. an undefined symbol of another libtorch
    raise TorchVersionMismatch("posenc: cannot load %s (built for torch %s) into torch %s: %s"
                               % (library_path, torch_version_built, _torch.__version__, e)) from e

from . import _fake  # noqa: E402,F401  (fake kernels for torch.compile, torch >= 2.4)
from ._ops import (  # noqa: E402
    FloaterEncoder,
    TUPEPositionalBias,
    alibi_add,
    alibi_bias,
    alibi_slopes,
    apply_rotary,
    apply_rotary_,
    floater_table,
    relative_position_bucket,
    rope,
    rope_,
    rope_cache_clear,
    rope_cache_info,
    rope_cache_limits,
    rope_decode,
    rope_decode_,
    rope_tables,
    sinusoidal_table,
    t5_bias,
    toeplitz_matmul,
    tupe_bias,
)
from .rotary import RotaryEmbedding, rope_frequencies  # noqa: E402
from .multiaxis import (MultiAxisRotaryEmbedding, axes_cos_sin, axes_rope, axes_rope_, get_rope_index,  # noqa: E402
                        hunyuan_rope_index)
from . import layouts  # noqa: E402
from .layouts import AxesRope  # noqa: E402

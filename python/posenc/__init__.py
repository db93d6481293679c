"""posenc from PyTorch: positional encodings as autograd operators.

The heavy lifting is posenc's C++ (header-only library, built into one shared library that
registers the operators ``torch.ops.posenc.*`` with ``TORCH_LIBRARY``). This package loads that
library and wraps the operators in ``torch.autograd.Function``\\ s and ``torch.nn.Module``\\ s:

* :class:`FloaterEncoder` -- FLOATER position tables from a learned ODE, gradients by posenc's
  exact discrete backprop (default) or the continuous adjoint; parameter names as the reference
  code (``proj_flow.layers.{0,2}.linear.{weight,bias}``, ``proj_bias``).
* :func:`sinusoidal_table`, :func:`rope_tables`, :func:`apply_rotary`, :func:`apply_rotary_`.
* :class:`TUPEPositionalBias` / :func:`tupe_bias` -- TUPE's untied positional term with gradients.
* :func:`relative_position_bucket`, :func:`t5_bias` -- T5 buckets and the bucketed bias.
* :func:`toeplitz_matmul` -- B X for a Toeplitz B by FFT, with gradients for b and X.

Every operator accepts float32 and float64 CPU tensors. Bad input raises ``ValueError`` (shape,
device, layout, contiguity, value range) or ``TypeError`` (dtype) with posenc's message.
"""
import os as _os

import torch as _torch

__all__ = [
    "FloaterEncoder",
    "floater_table",
    "sinusoidal_table",
    "rope_tables",
    "apply_rotary",
    "apply_rotary_",
    "TUPEPositionalBias",
    "tupe_bias",
    "relative_position_bucket",
    "t5_bias",
    "toeplitz_matmul",
    "library_path",
]

_LIB_NAME = "libposenc_torch.so"


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


library_path = _find_library()
_torch.ops.load_library(library_path)

from ._ops import (  # noqa: E402
    FloaterEncoder,
    TUPEPositionalBias,
    apply_rotary,
    apply_rotary_,
    floater_table,
    relative_position_bucket,
    rope_tables,
    sinusoidal_table,
    t5_bias,
    toeplitz_matmul,
    tupe_bias,
)

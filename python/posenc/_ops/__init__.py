"""autograd-aware functions and nn.Modules over torch.ops.posenc.*, one module per family (see
the package docstring); the multi-axis and config-driven rotary modules are posenc.multiaxis,
posenc.layouts and posenc.rotary."""
from ._common import _is_dtensor, _on_mesh  # noqa: F401  (posenc.rotary, posenc.multiaxis)
from .alibi import alibi_add, alibi_bias, alibi_slopes  # noqa: F401
from .floater import FloaterEncoder, floater_table  # noqa: F401
from .rotary import (  # noqa: F401
    apply_rotary,
    apply_rotary_,
    rope,
    rope_,
    rope_cache_clear,
    rope_cache_info,
    rope_cache_limits,
    rope_decode,
    rope_decode_,
)
from .sinusoidal import rope_tables, sinusoidal_table  # noqa: F401
from .t5 import relative_position_bucket, t5_bias  # noqa: F401
from .toeplitz import toeplitz_matmul  # noqa: F401
from .tupe import TUPEPositionalBias, tupe_bias  # noqa: F401

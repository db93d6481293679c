"""Fake (meta) kernels of torch.ops.posenc.*: output shapes, dtypes and strides without computing,
so that torch.compile (FakeTensor tracing, AOTAutograd) goes through posenc's ops without a graph
break. Registered with torch.library.register_fake (torch >= 2.4; older torch has no compiler
to serve). Every kernel mirrors the CPU kernel's output exactly (opcheck compares them).

One module per family, as the C++ files (python/src/<family>.cpp); importing this package
registers them all.
"""
from ._common import check_devices  # noqa: F401
from . import alibi, floater, multiaxis, rotary, sinusoidal, t5, toeplitz, tupe  # noqa: F401

# The suite runs against the built operator library: either the installed package
# (pip install ./python) or, when POSENC_TORCH_LIBRARY names a freshly built libposenc_torch.so
# (scripts/run-tests.sh), the package sources next to this folder.
import math
import os
import sys

import pytest
import torch

if os.environ.get("POSENC_TORCH_LIBRARY"):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# Tiny tensors throughout: one intra-op thread (OpenMP threads spinning on a shared 2-core CI
# machine cost far more than they save) and results independent of the machine.
torch.set_num_threads(1)


@pytest.fixture
def get_slopes():
    """The ALiBi slopes of the authors' code (ofirpress/attention_with_linear_biases), verbatim."""
    def get_slopes(n):
        def p2(n):
            start = 2 ** (-2 ** -(math.log2(n) - 3))
            return [start * start ** i for i in range(n)]
        if math.log2(n).is_integer():
            return p2(n)
        c = 2 ** math.floor(math.log2(n))
        return p2(c) + get_slopes(2 * c)[0::2][: n - c]
    return get_slopes

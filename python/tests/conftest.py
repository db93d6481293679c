# The suite runs against the built operator library: either the installed package
# (pip install ./python) or, when POSENC_TORCH_LIBRARY names a freshly built libposenc_torch.so
# (scripts/run-tests.sh), the package sources next to this folder.
import os
import sys

import torch

if os.environ.get("POSENC_TORCH_LIBRARY"):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# Tiny tensors throughout: one intra-op thread (OpenMP threads spinning on a shared 2-core CI
# machine cost far more than they save) and results independent of the machine.
torch.set_num_threads(1)

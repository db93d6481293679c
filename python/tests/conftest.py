# The suite runs against the built operator library: either the installed package
# (pip install ./python) or, when POSENC_TORCH_LIBRARY names a freshly built libposenc_torch.so
# (scripts/run-tests.sh), the package sources next to this folder.
import os
import sys

import torch

if os.environ.get("POSENC_TORCH_LIBRARY"):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# Every test states its own dtype; keep the intra-op thread count fixed so timings and the
# reduction order of torch's own kernels do not depend on the machine.
torch.set_num_threads(min(2, os.cpu_count() or 1))

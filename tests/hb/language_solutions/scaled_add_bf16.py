"""scaled_add with x cast to bf16: x arrives as an ml_dtypes bfloat16 array."""

import ml_dtypes
import numpy as np


def scaled_add_fp64(x, y, N, alpha, workspace, workspace_bytes):
    if x.dtype != np.dtype(ml_dtypes.bfloat16):
        raise TypeError(f"x arrived as {x.dtype}")
    y += alpha * x.astype(np.float64)

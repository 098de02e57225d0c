"""Inputs as .npz bytes.

`npz_bytes` stores bf16 arrays as their uint16 bit patterns (.npy has no bfloat16 type;
`strata-run --inputs` reads them back as bf16 for bf16 arguments)."""

from __future__ import annotations

import io

import numpy as np

from strata.support.dtypes import BFLOAT16


def npz_bytes(arrays: dict[str, np.ndarray], compressed: bool = False) -> bytes:
    stream = io.BytesIO()
    save = np.savez_compressed if compressed else np.savez
    save(stream, **{k: a.view(np.uint16) if a.dtype == BFLOAT16 else a for k, a in arrays.items()})
    return stream.getvalue()

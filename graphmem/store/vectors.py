"""How an item's embedding is stored in ``memories.embedding``.

A vector whose values are all float32 (what graphmem's embedding models give) is stored as
``"f32:"`` and the base64 of its little-endian bytes: a fifth of its JSON, and read back into
numpy without parsing, so a search can compare a query with thousands of them. Any other
vector (a caller's float64 embedding) is stored as a JSON list, exactly.

Example:
    >>> stored = encode_embedding([0.5, -1.0, 0.25])
    >>> stored, decode_embedding(stored)
    ('f32:AAAAPwAAgL8AAIA+', [0.5, -1.0, 0.25])
    >>> decode_embedding(encode_embedding([0.1]))  # not a float32: kept as given
    [0.1]
    >>> vector_matrix([stored, "[0.1]"], 3).shape  # search reads the float32 ones
    (2, 3)
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = ["FLOAT32_PREFIX", "decode_embedding", "encode_embedding", "vector_matrix"]

FLOAT32_PREFIX = "f32:"


def encode_embedding(values: Sequence[float]) -> str:
    """The column text of an embedding (see the module docstring)."""
    import numpy as np

    as_float32 = np.asarray(values, dtype="<f4")
    if as_float32.ndim == 1 and np.array_equal(as_float32.astype(np.float64), values):
        return FLOAT32_PREFIX + base64.b64encode(as_float32.tobytes()).decode("ascii")
    return json.dumps(list(values))


def decode_embedding(stored: str) -> list[float]:
    """The embedding a column text holds, as the item's list of floats."""
    if stored.startswith(FLOAT32_PREFIX):
        return list(_float32(stored).tolist())
    return [float(x) for x in json.loads(stored)]


def vector_matrix(stored: Sequence[str], dim: int) -> np.ndarray:
    """One float32 row per column text; a row of zeros where a text is not a float32 vector
    of ``dim`` values (a caller's own embedding, or another model's)."""
    import numpy as np

    out = np.zeros((len(stored), dim), dtype=np.float32)
    for row, text in enumerate(stored):
        if text.startswith(FLOAT32_PREFIX) and len(text) == _encoded_length(dim):
            out[row] = _float32(text)
    return out


def _float32(stored: str) -> np.ndarray:
    import numpy as np

    return np.frombuffer(base64.b64decode(stored[len(FLOAT32_PREFIX) :]), dtype="<f4")


def _encoded_length(dim: int) -> int:
    return len(FLOAT32_PREFIX) + 4 * ((4 * dim + 2) // 3)

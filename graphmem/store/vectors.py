"""How an item's embedding is stored in ``memories.embedding``.

A vector of graphmem's embedding models is quantised to int8 before it is given to an item
(:func:`quantised`: each value a multiple of 1/127), and such a vector is stored as ``"i8:"``
and the base64 of its bytes: 344 bytes for WordLlama's 256 dimensions, read back into numpy
without parsing, so a search can compare a query with thousands of them (the cosine of two
quantised vectors is within about 0.01 of the model's). Any other float32 vector is stored as
``"f32:"`` and its little-endian bytes in base64; any other vector (a caller's float64
embedding) as a JSON list, exactly.

Example:
    >>> stored = encode_embedding([0.5, -1.0, 0.25])
    >>> stored, decode_embedding(stored)
    ('f32:AAAAPwAAgL8AAIA+', [0.5, -1.0, 0.25])
    >>> decode_embedding(encode_embedding([0.1]))  # not a float32: kept as given
    [0.1]
    >>> import numpy as np
    >>> small = quantised(np.array([0.6, -0.8], dtype=np.float32))
    >>> encode_embedding(small), decode_embedding(encode_embedding(small)) == small
    ('i8:X4E=', True)
    >>> vector_matrix([stored, "[0.1]"], 3).shape  # search reads the stored vectors
    (2, 3)
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "FLOAT32_PREFIX",
    "INT8_PREFIX",
    "VECTOR_PREFIXES",
    "decode_embedding",
    "encode_embedding",
    "quantised",
    "row_dot",
    "vector_matrix",
]

FLOAT32_PREFIX = "f32:"
INT8_PREFIX = "i8:"
#: The prefixes of the stored vectors a search reads.
VECTOR_PREFIXES = (INT8_PREFIX, FLOAT32_PREFIX)
_SCALE = 127


def quantised(vector: np.ndarray) -> list[float]:
    """``vector`` scaled so its largest value is 1 and rounded to multiples of 1/127 (the
    values :func:`encode_embedding` stores in one byte each); the direction is kept."""
    import numpy as np

    peak = float(np.abs(vector).max()) if vector.size else 0.0
    steps = np.rint(vector / (peak or 1.0) * _SCALE).astype(np.int8)
    return [float(v) for v in _steps_to_values(steps)]


def encode_embedding(values: Sequence[float]) -> str:
    """The column text of an embedding (see the module docstring)."""
    import numpy as np

    steps = np.rint(np.asarray(values, dtype=np.float64) * _SCALE)
    if (
        steps.ndim == 1
        and steps.size
        and np.abs(steps).max() <= _SCALE
        and _steps_to_values(steps.astype(np.int8)).tolist() == list(values)
    ):
        return INT8_PREFIX + base64.b64encode(steps.astype(np.int8).tobytes()).decode("ascii")
    as_float32 = np.asarray(values, dtype="<f4")
    if as_float32.ndim == 1 and np.array_equal(as_float32.astype(np.float64), values):
        return FLOAT32_PREFIX + base64.b64encode(as_float32.tobytes()).decode("ascii")
    return json.dumps(list(values))


def decode_embedding(stored: str) -> list[float]:
    """The embedding a column text holds, as the item's list of floats."""
    if stored.startswith(INT8_PREFIX):
        return list(_steps_to_values(_int8(stored)).tolist())
    if stored.startswith(FLOAT32_PREFIX):
        return list(_float32(stored).tolist())
    return [float(x) for x in json.loads(stored)]


def vector_matrix(stored: Sequence[str], dim: int) -> np.ndarray:
    """One L2-normalised float32 row per column text; a row of zeros where a text is not a
    stored vector of ``dim`` values (a caller's own embedding, or another model's)."""
    import numpy as np

    out = np.zeros((len(stored), dim), dtype=np.float32)
    int8_length, float32_length = (
        _encoded_length(INT8_PREFIX, dim),
        _encoded_length(FLOAT32_PREFIX, 4 * dim),
    )
    # The int8 rows (graphmem's own) decoded in one go: a search reads thousands.
    rows = [
        row
        for row, text in enumerate(stored)
        if len(text) == int8_length and text.startswith(INT8_PREFIX)
    ]
    if rows:
        decode, cut = base64.b64decode, len(INT8_PREFIX)
        joined = b"".join([decode(stored[row][cut:]) for row in rows])
        out[rows] = np.frombuffer(joined, dtype=np.int8).reshape(len(rows), dim)
    for row, text in enumerate(stored if len(rows) < len(stored) else ()):
        if len(text) == float32_length and text.startswith(FLOAT32_PREFIX):
            out[row] = _float32(text)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms > 0, norms, 1.0)


def row_dot(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """Each row's dot product with ``vector``, computed row by row alike whatever the other
    rows (a BLAS product's last bits depend on the matrix's shape, so a text's similarity
    would depend on which texts it is compared with in the same call)."""
    import numpy as np

    return np.einsum("ij,j->i", matrix, vector)


def _steps_to_values(steps: np.ndarray) -> np.ndarray:
    import numpy as np

    return steps.astype(np.float64) / _SCALE


def _int8(stored: str) -> np.ndarray:
    import numpy as np

    return np.frombuffer(base64.b64decode(stored[len(INT8_PREFIX) :]), dtype=np.int8)


def _float32(stored: str) -> np.ndarray:
    import numpy as np

    return np.frombuffer(base64.b64decode(stored[len(FLOAT32_PREFIX) :]), dtype="<f4")


def _encoded_length(prefix: str, size: int) -> int:
    return len(prefix) + 4 * ((size + 2) // 3)

"""The key-value rows (``kv``): JSON values under string keys, in the caller's transaction.

Calute's storages (:mod:`graphmem.compat.storage`) and the settings of the label and
re-analysis modules keep their values here.

Example:
    >>> from graphmem.store.database import Database
    >>> with Database().write() as conn:
    ...     kv_set(conn, "greeting", {"text": "hi"})
    ...     kv_get(conn, "greeting"), kv_keys(conn, "gr"), kv_delete(conn, "greeting")
    ({'text': 'hi'}, ['greeting'], True)
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Connection, delete, insert, select, update

from . import schema

__all__ = ["kv_delete", "kv_get", "kv_keys", "kv_set"]


def kv_get(conn: Connection, key: str) -> Any | None:
    """JSON value stored under ``key`` (None when absent)."""
    value = conn.execute(select(schema.kv.c.value).where(schema.kv.c.key == key)).scalar()
    return None if value is None else json.loads(value)


def kv_set(conn: Connection, key: str, value: Any) -> None:
    """Store a JSON-serialisable value under ``key``."""
    payload = json.dumps(value, ensure_ascii=False, allow_nan=False)
    # Update first: delete-then-insert races into a duplicate key between server sessions.
    updated = conn.execute(
        update(schema.kv).where(schema.kv.c.key == key).values(value=payload)
    ).rowcount
    if not updated:
        conn.execute(insert(schema.kv).values(key=key, value=payload))


def kv_delete(conn: Connection, key: str) -> bool:
    """Remove ``key``; True when it existed."""
    return bool(conn.execute(delete(schema.kv).where(schema.kv.c.key == key)).rowcount)


def kv_keys(conn: Connection, prefix: str | None = None) -> list[str]:
    """Keys in order, optionally those starting with ``prefix``."""
    stmt = select(schema.kv.c.key).order_by(schema.kv.c.key)
    keys = [str(k) for k in conn.execute(stmt).scalars()]
    return [k for k in keys if prefix is None or k.startswith(prefix)]

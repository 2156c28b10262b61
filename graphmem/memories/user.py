"""User memory: each user's own contextual and entity memory, and their preferences.

Users are isolated: a user's memories, entities and relations are stored under their id and
never returned to another user; clearing one user leaves every other user untouched.

Example:
    >>> users = UserMemory()
    >>> _ = users.save_memory("alice", "Prefers short answers about Kubernetes")
    >>> [item.content for item in users.search_user_memory("alice", "Kubernetes")]
    ['Prefers short answers about Kubernetes']
    >>> users.search_user_memory("bob", "Kubernetes")
    []
"""

from __future__ import annotations

import threading
from datetime import datetime
from typing import Any

from ..compat.storage import SQLiteStorage, resolve_storage
from ..errors import InvalidArgumentError, InvalidArgumentTypeError
from ..items import MemoryItem, encode_metadata
from .contextual import ContextualMemory
from .entity import EntityMemory
from .views import UserPreferencesView

__all__ = ["DEFAULT_PREFERENCES", "USER_NAMESPACES", "UserMemory", "preferences_key"]

DEFAULT_PREFERENCES: dict[str, Any] = {
    "response_style": "balanced",
    "verbosity": "normal",
    "technical_level": "intermediate",
    "language": "en",
    "timezone": "UTC",
    "memory_enabled": True,
    "max_context_items": 10,
}
_PREFS_KEY = "user_preferences:"


def preferences_key(user_id: str) -> str:
    """The key-value row holding a user's preferences.

    Example:
        >>> preferences_key("alice")
        'user_preferences:alice'
    """
    return _PREFS_KEY + user_id


def _check_user(user_id: object) -> str:
    if not isinstance(user_id, str):
        raise InvalidArgumentTypeError(f"user_id must be a str, got {type(user_id).__name__}")
    if not user_id:
        raise InvalidArgumentError("user_id must not be empty")
    return user_id


#: The namespaces users' memories are stored in (each row carries its user as its tenant):
#: the contextual memory ``"user"`` (its two parts) and the entity tier ``"user.entity"``.
USER_NAMESPACES = ("user.short_term", "user.long_term", "user.entity")


class UserMemory:
    """Per-user memories and preferences in one storage.

    Args:
        storage: a :class:`~graphmem.compat.storage.SQLiteStorage` to persist in (else in memory).
    """

    def __init__(self, storage: Any | None = None) -> None:
        self.storage = storage
        self._space: SQLiteStorage = resolve_storage(storage)
        self.user_memories: dict[str, ContextualMemory] = {}
        self.user_entities: dict[str, EntityMemory] = {}
        self._lock = threading.RLock()

    def get_or_create_user_memory(self, user_id: str) -> ContextualMemory:
        """The user's contextual memory (created on first use)."""
        user_id = _check_user(user_id)
        with self._lock:
            if user_id not in self.user_memories:
                self.user_memories[user_id] = ContextualMemory(
                    long_term_storage=self._space, namespace="user", tenant=user_id
                )
                self.user_entities[user_id] = EntityMemory(
                    storage=self._space, namespace="user.entity", tenant=user_id
                )
            return self.user_memories[user_id]

    def _entities(self, user_id: str) -> EntityMemory:
        self.get_or_create_user_memory(user_id)
        return self.user_entities[user_id]

    def save_memory(
        self,
        user_id: str,
        content: str,
        metadata: dict[str, Any] | None = None,
        *,
        timestamp: datetime | str | None = None,
        **kwargs: Any,
    ) -> MemoryItem:
        """Save a memory for ``user_id`` (also linked in the user's entity graph);
        ``timestamp``: when it happened (a datetime or an ISO 8601 string; default now)."""
        memory = self.get_or_create_user_memory(user_id)
        metadata = (
            {**(metadata or {}), "user_id": user_id}
            if metadata is None or isinstance(metadata, dict)
            else metadata
        )
        kwargs.pop("user_id", None)
        item = memory.save(
            content, metadata=metadata, user_id=user_id, timestamp=timestamp, **kwargs
        )
        entity_kwargs = {
            k: v for k, v in kwargs.items() if k in ("agent_id", "conversation_id", "task_id")
        }
        self._entities(user_id).save(
            content, metadata=metadata, user_id=user_id, timestamp=item.timestamp, **entity_kwargs
        )
        return item

    def search_user_memory(
        self, user_id: str, query: str, limit: int = 10, **kwargs: Any
    ) -> list[MemoryItem]:
        """Search only ``user_id``'s memories."""
        return self.get_or_create_user_memory(user_id).search(query, limit=limit, **kwargs)

    def get_user_context(self, user_id: str) -> str:
        """Preferences, recent and important memories, and known entities of a user."""
        memory = self.get_or_create_user_memory(user_id)
        parts = [
            f"User preferences: {self.get_user_preferences(user_id)}",
            memory.get_context_summary(),
        ]
        names = list(self._entities(user_id).entities)[:10]
        if names:
            parts.append(f"Known entities: {', '.join(names)}")
        return "\n\n".join(parts)

    def update_user_preferences(self, user_id: str, preferences: dict[str, Any]) -> None:
        """Merge ``preferences`` into the user's stored preferences."""
        user_id = _check_user(user_id)
        if not isinstance(preferences, dict):
            raise InvalidArgumentTypeError(
                f"preferences must be a dict, got {type(preferences).__name__}"
            )
        # Lock order: the database's lock first (as every writer takes it), then ours.
        with self._space.transaction(), self._lock:
            self.replace_user_preferences(
                user_id, {**self.get_user_preferences(user_id), **preferences}
            )

    def replace_user_preferences(self, user_id: str, preferences: dict[str, Any] | None) -> None:
        """Store exactly ``preferences`` for the user (defaults fill what is missing when
        read); None forgets the stored ones. Values must be JSON data (checked first).

        Example:
            >>> users = UserMemory()
            >>> users.replace_user_preferences("alice", {"verbosity": "low"})
            >>> users.get_user_preferences("alice")["verbosity"]
            'low'
        """
        user_id = _check_user(user_id)
        if preferences is not None:
            if not isinstance(preferences, dict):
                raise InvalidArgumentTypeError(
                    f"preferences must be a dict or None, got {type(preferences).__name__}"
                )
            encode_metadata(preferences, "preferences")
        with self._space.transaction(), self._lock:
            if preferences is None:
                self._space.delete(_PREFS_KEY + user_id)
            else:
                self._space.save(_PREFS_KEY + user_id, preferences)

    @property
    def user_preferences(self) -> UserPreferencesView:
        """user id -> preferences, Calute's dict as a live view: changes made in place are
        stored (see :mod:`graphmem.memories.views`).

        Example:
            >>> users = UserMemory()
            >>> _ = users.get_or_create_user_memory("alice")
            >>> users.user_preferences["alice"]["verbosity"] = "low"
            >>> users.get_user_preferences("alice")["verbosity"]
            'low'
        """
        return UserPreferencesView(self)

    def get_user_preferences(self, user_id: str) -> dict[str, Any]:
        """The user's preferences (defaults for a new user)."""
        user_id = _check_user(user_id)
        stored = self._space.load(_PREFS_KEY + user_id)
        return {**DEFAULT_PREFERENCES, **(stored or {})}

    def get_user_statistics(self, user_id: str) -> dict[str, Any]:
        """Counts of a user's memories, entities and relationships, and their preferences."""
        memory = self.get_or_create_user_memory(user_id)
        entities = self._entities(user_id)
        return {
            "user_id": user_id,
            "total_memories": len(memory),
            "short_term_memories": len(memory.short_term),
            "long_term_memories": len(memory.long_term),
            "entities_known": len(entities.graph),
            "relationships": sum(len(pairs) for pairs in entities.relationships.values()),
            "preferences": self.get_user_preferences(user_id),
        }

    def user_ids(self) -> list[str]:
        """Every user with stored memories or preferences (in this storage, not only this process).

        Example:
            >>> users = UserMemory()
            >>> _ = users.save_memory("alice", "Likes tea")
            >>> users.user_ids()
            ['alice']
        """
        namespaces = ["user.short_term", "user.long_term", "user.entity"]
        with self._space.reading() as tx:
            found = {stored.tenant for stored, _ in tx.items(namespaces)}
            found |= {key[len(_PREFS_KEY) :] for key in tx.kv_keys(_PREFS_KEY)}
        return sorted(found)

    def clear_user_memory(self, user_id: str) -> None:
        """Delete everything of ``user_id`` (memories, entities, preferences); others untouched."""
        memory = self.get_or_create_user_memory(user_id)
        with self._space.transaction(), self._lock:  # one transaction, database lock first
            memory.clear()
            self._entities(user_id).clear()
            self._space.delete(_PREFS_KEY + user_id)
            del self.user_memories[user_id]
            del self.user_entities[user_id]

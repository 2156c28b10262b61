"""Calute's mutable dictionaries, as live views whose changes are stored.

Calute code changes ``EntityMemory.relationships`` and ``UserMemory.user_preferences`` in
place (``memory.relationships["knows"].append(("Alice", "Bob"))``,
``users.user_preferences["alice"]["verbosity"] = "low"``). In graphmem both live in the
database, so these views read it on every access and write every change through to it: a
change is in the knowledge graph (or the stored preferences) at once, and persists.

What cannot be stored is refused, or said here:

- A predicate with no pairs is not listed (``"knows" in memory.relationships`` is False until
  a pair is added), although reading it gives an empty list to append to, as Calute's
  ``defaultdict`` does.
- Pairs are listed once, in the graph's order (sorted); appending a pair already there adds
  support to the relation rather than a duplicate, and ``insert(i, pair)`` adds the pair
  without keeping the position. ``sort`` and ``reverse`` reorder the list in hand only.
- Names resolve as everywhere in graphmem: appending ``("Alice", "Acme")`` when "Alice
  Johnson" is known links Alice Johnson, and the list then shows the canonical names.
- Predicates are stored normalised, as :meth:`EntityMemory.add_relation` stores them
  (``"Works At"`` -> ``"works_at"``): read and replace them under that name.
- Removing a pair deletes the relation with its evidence (and an entity left with no mention
  and no relation); re-saving a memory that states it extracts it again.
- ``UserMemory.user_preferences`` lists the users this storage knows (stored memories or
  preferences, or opened in this process); deleting one forgets their stored preferences
  (defaults apply again), not their memories.

Example:
    >>> from graphmem import EntityMemory
    >>> memory = EntityMemory()
    >>> memory.relationships["mentors"].append(("Alice Johnson", "Bob Stone"))
    >>> memory.relationships["mentors"]
    [('Alice Johnson', 'Bob Stone')]
    >>> memory.get_related_entities("Alice Johnson")
    {'Bob Stone'}
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any, SupportsIndex

from ..errors import InvalidArgumentError, InvalidArgumentTypeError
from ..items import check_content

if TYPE_CHECKING:
    from .entity import EntityMemory
    from .user import UserMemory

__all__ = ["RelationPairs", "RelationshipsView", "StoredPreferences", "UserPreferencesView"]

Pair = tuple[str, str]


def _check_pair(pair: object, where: str) -> Pair:
    if not isinstance(pair, tuple | list) or len(pair) != 2:
        raise InvalidArgumentTypeError(
            f"{where} must be a (subject, object) pair of names, got {pair!r}"
        )
    return check_content(pair[0], f"{where}[0]"), check_content(pair[1], f"{where}[1]")


def _check_predicate(predicate: object) -> str:
    if not isinstance(predicate, str):
        raise InvalidArgumentTypeError(
            f"a relationship predicate must be a str, got {type(predicate).__name__}"
        )
    return check_content(predicate, "predicate")


class RelationPairs(list[Pair]):
    """The ``(subject, object)`` pairs of one predicate; changes are written to the graph."""

    def __init__(self, memory: EntityMemory, predicate: str) -> None:
        self._memory = memory
        self._predicate = predicate
        super().__init__(memory.relation_pairs(predicate))

    def _refresh(self) -> None:
        super().clear()
        super().extend(self._memory.relation_pairs(self._predicate))

    def _add(self, pairs: Iterable[object]) -> None:
        checked = [_check_pair(p, f"pair {i}") for i, p in enumerate(pairs)]
        with self._memory.space.transaction():
            for subject, obj in checked:
                # The stored predicate is normalised ("Works At" -> "works_at"): follow it.
                self._predicate = self._memory.add_relation(subject, self._predicate, obj).predicate
        self._refresh()

    def _remove(self, pairs: Iterable[Pair]) -> None:
        with self._memory.space.transaction():
            for subject, obj in pairs:
                self._memory.remove_relation(subject, self._predicate, obj)
        self._refresh()

    def append(self, pair: Pair) -> None:
        self._add([pair])

    def extend(self, pairs: Iterable[Pair]) -> None:
        self._add(list(pairs))

    def __iadd__(self, pairs: Iterable[Pair]) -> RelationPairs:  # type: ignore[override,misc]
        self._add(list(pairs))
        return self

    def insert(self, index: SupportsIndex, pair: Pair) -> None:
        self._add([pair])

    def remove(self, pair: Pair) -> None:
        subject, obj = _check_pair(pair, "pair")
        if not self._memory.remove_relation(subject, self._predicate, obj):
            raise ValueError(f"{(subject, obj)!r} is not a {self._predicate!r} pair")
        self._refresh()

    def pop(self, index: SupportsIndex = -1) -> Pair:
        pair = self[index]
        self._remove([pair])
        return pair

    def clear(self) -> None:
        self._remove(list(self))

    def __delitem__(self, index: SupportsIndex | slice) -> None:
        doomed = self[index] if isinstance(index, slice) else [self[index]]
        self._remove(list(doomed))

    def __setitem__(self, index: Any, value: Any) -> None:
        doomed = self[index] if isinstance(index, slice) else [self[index]]
        added = list(value) if isinstance(index, slice) else [value]
        checked = [_check_pair(p, "pair") for p in added]
        with self._memory.space.transaction():
            self._remove(list(doomed))
            self._add(checked)

    def __imul__(self, n: SupportsIndex) -> RelationPairs:
        raise InvalidArgumentError("pairs are listed once: a relationship list cannot be repeated")


class _LiveKeys:
    """Membership, iteration and size from the stored keys, read on every call."""

    def _keys(self) -> list[str]:
        raise NotImplementedError

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self._keys()

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())


class RelationshipsView(_LiveKeys, MutableMapping[str, RelationPairs]):
    """predicate -> :class:`RelationPairs`, read from and written to the knowledge graph."""

    def __init__(self, memory: EntityMemory) -> None:
        self._memory = memory

    def _keys(self) -> list[str]:
        return list(self._memory.relation_pairs_by_predicate())

    def __getitem__(self, predicate: str) -> RelationPairs:
        return RelationPairs(self._memory, _check_predicate(predicate))

    def get(self, predicate: str, default: Any = None) -> Any:
        return self[predicate] if predicate in self else default

    def __setitem__(self, predicate: str, pairs: Iterable[Pair]) -> None:
        """Replace the predicate's pairs (an empty list removes them all)."""
        predicate = _check_predicate(predicate)
        new = [_check_pair(p, f"relationships[{predicate!r}][{i}]") for i, p in enumerate(pairs)]
        with self._memory.space.transaction():
            self[predicate].clear()
            self[predicate].extend(new)

    def __delitem__(self, predicate: str) -> None:
        if predicate not in self:
            raise KeyError(predicate)
        self[predicate].clear()

    def clear(self) -> None:
        """Remove every relation of this memory's graph (entities stay while mentioned)."""
        with self._memory.space.transaction():
            for predicate in list(self):
                self[predicate].clear()

    def __repr__(self) -> str:
        return repr(self._memory.relation_pairs_by_predicate())


class StoredPreferences(dict[str, Any]):
    """One user's preferences; changes are stored at once (as ``update_user_preferences``)."""

    def __init__(self, users: UserMemory, user_id: str) -> None:
        self._users = users
        self._user_id = user_id
        super().__init__(users.get_user_preferences(user_id))

    def _store(self, preferences: dict[str, Any]) -> None:
        self._users.replace_user_preferences(self._user_id, preferences)
        super().clear()
        super().update(self._users.get_user_preferences(self._user_id))

    def __setitem__(self, key: str, value: Any) -> None:
        self._store({**self, key: value})

    def __delitem__(self, key: str) -> None:
        if key not in self:
            raise KeyError(key)
        self._store({k: v for k, v in self.items() if k != key})

    def update(self, *args: Any, **kwargs: Any) -> None:
        self._store({**self, **dict(*args, **kwargs)})

    def __ior__(self, other: Any) -> StoredPreferences:  # type: ignore[override,misc]
        self.update(other)
        return self

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def pop(self, key: str, *default: Any) -> Any:
        if key not in self:
            if default:
                return default[0]
            raise KeyError(key)
        value = self[key]
        del self[key]
        return value

    def popitem(self) -> tuple[str, Any]:
        if not self:
            raise KeyError("popitem(): preferences are empty")
        key = next(reversed(self))
        return key, self.pop(key)

    def clear(self) -> None:
        self._store({})


class UserPreferencesView(_LiveKeys, MutableMapping[str, StoredPreferences]):
    """user id -> :class:`StoredPreferences`, for every user this storage knows."""

    def __init__(self, users: UserMemory) -> None:
        self._users = users

    def _keys(self) -> list[str]:
        return sorted(set(self._users.user_ids()) | set(self._users.user_memories))

    def __getitem__(self, user_id: str) -> StoredPreferences:
        if user_id not in self:
            raise KeyError(user_id)
        return StoredPreferences(self._users, user_id)

    def __setitem__(self, user_id: str, preferences: Mapping[str, Any]) -> None:
        """Replace the user's stored preferences (defaults fill what is not given)."""
        if not isinstance(preferences, Mapping):
            raise InvalidArgumentTypeError(
                f"preferences must be a dict, got {type(preferences).__name__}"
            )
        self._users.replace_user_preferences(user_id, dict(preferences))

    def __delitem__(self, user_id: str) -> None:
        """Forget the user's stored preferences (their memories stay; defaults apply again)."""
        if user_id not in self:
            raise KeyError(user_id)
        self._users.replace_user_preferences(user_id, None)

    def __repr__(self) -> str:
        return repr({user_id: dict(self[user_id]) for user_id in self})

"""A registry of named things (tools, prompts): registration order, unique names."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, Protocol, TypeVar


class Named(Protocol):
    name: str


T = TypeVar("T", bound=Named)


class NamedRegistry(Generic[T]):
    """Items by name, in registration order. A second item with a taken name is not
    registered but remembered in ``duplicates``, for a system check: never overwritten."""

    def __init__(self) -> None:
        self._items: dict[str, T] = {}
        self.duplicates: list[str] = []
        # Counts the changes of the items, for what is remembered of them (served.py).
        self.version = 0

    def register(self, item: T) -> T:
        if item.name in self._items:
            self.duplicates.append(item.name)
        else:
            self._items[item.name] = item
            self.version += 1
        return item

    def unregister(self, name: str) -> None:
        if self._items.pop(name, None) is not None:
            self.version += 1

    def get(self, name: str) -> T | None:
        return self._items.get(name)

    def __iter__(self) -> Iterator[T]:
        return iter(list(self._items.values()))

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

"""The spec's immutable records (Rule, Profile): compared, hashed, shown and pickled by their
fields, and frozen (assigning or deleting a field raises dataclasses.FrozenInstanceError). A
plain base class, so that loading the spec imports no dataclasses (see topkspec.spec.speed)."""
from __future__ import annotations


def _frozen(what: str, name: str):
    from dataclasses import FrozenInstanceError  # only when someone tries

    return FrozenInstanceError(f"cannot {what} field {name!r}")


class Record:
    """Subclasses name their fields in `_fields` and set them with `_set` in `__init__`. The class
    that declares `_fields` takes no other attribute either; a subclass of it may add its own."""

    __slots__ = ()
    _fields: tuple = ()

    def _set(self, *values) -> None:
        for name, value in zip(self._fields, values):
            object.__setattr__(self, name, value)

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self._fields)

    def _sealed(self, name: str) -> bool:
        return name in self._fields or "_fields" in type(self).__dict__

    def __setattr__(self, name, value):
        if self._sealed(name):
            raise _frozen("assign to", name)
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if self._sealed(name):
            raise _frozen("delete", name)
        object.__delattr__(self, name)

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return self._values() == other._values()
        return NotImplemented

    def __hash__(self):
        return hash(self._values())  # a TypeError when a field holds a dict

    def __repr__(self):
        fields = ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self._values()))
        return f"{self.__class__.__qualname__}({fields})"

    def __reduce__(self):
        return (self.__class__, self._values())

"""Component function types that ask the C API once.

wasmtime-py 50 reads a function's type back through the C API on every call, and every
nested record's fields, list's element and variant's cases on every value it converts: for
`memory.apply` that was about 60% of a call. A component's types never change, so `_freeze`
gives a type object a subclass of its own class whose type queries remember their answer;
conversion itself stays wasmtime-py's.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict

from wasmtime._store import Storelike
from wasmtime.component import Func
from wasmtime.component._types import FuncType, ValType

# What each type class asks the C API for: properties, and the helpers conversion calls.
_PROPERTIES = ("params", "result", "element", "fields", "elements", "cases", "payload", "ok", "err", "names")
_METHODS = ("_cases", "_tagged", "_is_bytes")

_subclasses: Dict[type, type] = {}


def remember_type(func: Func, store: Storelike) -> None:
    """Makes `func` use its type as read now, on every later call."""
    ty = _freeze(func.type(store))
    # An instance attribute, so only this function object is affected.
    setattr(func, "type", lambda _store: ty)


def _freeze(value: Any) -> Any:
    if isinstance(value, (ValType, FuncType)):
        if type(value) not in _subclasses.values():
            value.__class__ = _subclass(type(value))
        return value
    if isinstance(value, list):
        return [_freeze(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_freeze(v) for v in value)
    return value


def _subclass(cls: type) -> type:
    sub = _subclasses.get(cls)
    if sub is None:
        namespace: Dict[str, Any] = {}
        for name in _PROPERTIES:
            prop = getattr(cls, name, None)
            if isinstance(prop, property) and prop.fget is not None:
                cached = functools.cached_property(_frozen_result(prop.fget))
                cached.__set_name__(cls, name)
                namespace[name] = cached
        for name in _METHODS:
            method = getattr(cls, name, None)
            if callable(method):
                namespace[name] = _remembered(name, method)
        sub = _subclasses[cls] = type(cls.__name__, (cls,), namespace)
    return sub


def _frozen_result(get: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda self: _freeze(get(self))


def _remembered(name: str, method: Callable[[Any], Any]) -> Callable[[Any], Any]:
    key = "_remembered" + name

    def call(self: Any) -> Any:
        try:
            return self.__dict__[key]
        except KeyError:
            value = self.__dict__[key] = _freeze(method(self))
            return value

    return call

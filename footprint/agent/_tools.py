"""Tools for the reference host: plain functions or coroutines with a JSON schema.

``tool(fn)`` derives the input schema from the type hints when none is given;
``validate_args`` checks a model's arguments against a schema so that a bad
call goes back to the model as a teaching error instead of an exception.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Union, get_args, get_origin

from footprint._errors import ConfigError
from footprint._validate import brief, check_callable, check_instance, check_positive, check_str
from footprint.injection import SkillTool, SkillToolSchema

__all__ = ["schema_from_signature", "tool", "validate_args"]

_SCALARS: dict[type, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _schema_for(hint: Any, where: str) -> dict[str, Any]:
    if hint is Any or hint is inspect.Parameter.empty:
        return {}
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    origin = get_origin(hint)
    if origin is Literal:
        return {"enum": list(get_args(hint))}
    if origin in (Union, types.UnionType):
        members = [a for a in get_args(hint) if a is not type(None)]
        if len(members) == 1:
            return _schema_for(members[0], where)
        return {"anyOf": [_schema_for(m, where) for m in members]}
    if origin in (list, tuple, Sequence) or hint in (list, tuple):
        args = get_args(hint)
        item = _schema_for(args[0], where) if args else {}
        return {"type": "array", "items": item} if item else {"type": "array"}
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        return {"type": "object"}
    raise ConfigError(
        f"{where}: cannot derive a JSON schema from the type hint {hint!r}; "
        "use str, int, float, bool, Literal, list, dict or Optional of these, "
        "or pass schema= explicitly"
    )


def schema_from_signature(fn: Callable[..., Any]) -> dict[str, Any]:
    """A JSON object schema for ``fn``'s keyword parameters, from its type hints."""
    where = f"tool({getattr(fn, '__name__', fn)!r})"
    hints = typing.get_type_hints(fn)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, param in inspect.signature(fn).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        properties[name] = _schema_for(hints.get(name, param.annotation), f"{where} {name}")
        if param.default is param.empty:
            required.append(name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def _first_paragraph(doc: str | None) -> str:
    text = inspect.cleandoc(doc or "")
    return text.split("\n\n", 1)[0].replace("\n", " ").strip()


def tool(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    schema: Mapping[str, Any] | None = None,
    wants: Mapping[str, str] | None = None,
    timeout_s: float | None = None,
    deterministic: bool = False,
) -> SkillTool:
    """Wrap a plain function or coroutine as a tool the model can call.

    The function is called with the validated arguments as keywords.
    ``timeout_s`` bounds one call: a call still running then ends with a
    host-assigned ``failure`` (the agent's ``tool_timeout_s`` applies when
    it is ``None``). A plain function is abandoned on its worker thread; a
    coroutine is cancelled and abandoned, even one that swallows the
    cancellation. A coroutine that blocks the event loop (``time.sleep``)
    cannot be interrupted: when it returns past its deadline the call is
    recorded as timed out and its value dropped.
    ``deterministic=True`` declares that equal arguments give an equal
    result, so a replay re-runs it when its recorded result was redacted.
    """
    check_positive("tool(timeout_s=...)", timeout_s, example="timeout_s=30")
    tool_name, text = _named(fn, name, description, schema)
    if not isinstance(deterministic, bool):
        raise ConfigError(f"tool {tool_name!r}: deterministic={deterministic!r} is not a "
                          "bool; pass True or False")
    input_schema = dict(schema) if schema is not None else schema_from_signature(fn)
    return SkillTool(
        schema=SkillToolSchema(name=tool_name, description=text, input_schema=input_schema),
        execute=_runner(fn),
        wants=wants,
        timeout_s=timeout_s,
        deterministic=deterministic,
    )


def _named(fn: Callable[..., Any], name: str | None, description: str | None,
           schema: Mapping[str, Any] | None) -> tuple[str, str]:
    """The tool's checked name and description (``tool``'s arguments validated)."""
    check_callable(f"tool({brief(fn)})", fn, fix="pass the function to wrap")
    if name is not None:
        check_str("tool(name=...)", name, fix="pass a tool name such as name='lookup'")
    if schema is not None:
        check_instance("tool(schema=...)", schema, Mapping,
                       fix="pass a JSON schema dict such as {'type': 'object'}")
    tool_name = name or getattr(fn, "__name__", "")
    if not tool_name or not tool_name.replace("_", "a").replace("-", "a").isalnum():
        raise ConfigError(
            f"tool name {tool_name!r} is not usable; pass name= with letters, digits, _ or -"
        )
    text = description if description is not None else _first_paragraph(fn.__doc__)
    if not text:
        raise ConfigError(
            f"tool {tool_name!r} has no description; give the function a docstring "
            "or pass description="
        )
    return tool_name, text


def _runner(fn: Callable[..., Any]) -> Callable[[Mapping[str, Any]], Any]:
    """``fn`` called with the validated arguments as keywords (awaited for a coroutine)."""

    def execute(args: Mapping[str, Any]) -> Any:
        return fn(**dict(args))

    async def execute_async(args: Mapping[str, Any]) -> Any:
        return await fn(**dict(args))

    runs: Callable[[Mapping[str, Any]], Any] = (
        execute_async if inspect.iscoroutinefunction(fn) else execute)
    runs.__wrapped__ = fn  # type: ignore[attr-defined]  # what it runs (collision check)
    return runs


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (dict, Mapping),
    "null": (type(None),),
}


def _type_ok(value: Any, expected: str) -> bool:
    kinds = _JSON_TYPES.get(expected)
    if kinds is None:
        return True
    if isinstance(value, bool) and expected in ("integer", "number"):
        return False
    return isinstance(value, kinds)


def _check(value: Any, schema: Mapping[str, Any], path: str, errors: list[str]) -> None:
    expected = schema.get("type")
    names = [expected] if isinstance(expected, str) else list(expected or [])
    if names and not any(_type_ok(value, n) for n in names):
        errors.append(f"{path} should be {' or '.join(names)}, got {value!r}")
        return
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path} must be one of {schema['enum']!r}, got {value!r}")
    alternatives = schema.get("anyOf")
    if alternatives and all(_collect(value, alt, path) for alt in alternatives):
        errors.append(f"{path} matches none of the allowed shapes, got {value!r}")
    if isinstance(value, Mapping):
        _check_object(value, schema, path, errors)
    elif isinstance(value, list | tuple) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(value):
            _check(item, schema["items"], f"{path}[{i}]", errors)


def _collect(value: Any, schema: Mapping[str, Any], path: str) -> list[str]:
    errors: list[str] = []
    _check(value, schema, path, errors)
    return errors


def _check_object(
    value: Mapping[str, Any], schema: Mapping[str, Any], path: str, errors: list[str]
) -> None:
    props: Mapping[str, Any] = schema.get("properties") or {}
    for key in schema.get("required") or ():
        if key not in value:
            errors.append(f"{path}.{key} is required")
    for key, item in value.items():
        if key in props:
            _check(item, props[key], f"{path}.{key}", errors)
        elif schema.get("additionalProperties") is False:
            allowed = ", ".join(sorted(props)) or "none"
            errors.append(f"{path}.{key} is not an argument (allowed: {allowed})")


def validate_args(schema: Mapping[str, Any], args: Any) -> list[str]:
    """Every way ``args`` fails ``schema`` (a practical JSON Schema subset), or ``[]``."""
    if not isinstance(args, Mapping):
        return [f"arguments should be an object, got {args!r}"]
    return _collect(args, schema or {"type": "object"}, "args")

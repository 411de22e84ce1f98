"""An MCP tool's input schema, checked without the network.

A server writes the schema, so it is untrusted like the arguments it validates. jsonschema
fetches a `$ref` it cannot resolve within the schema (`{"$ref": "http://…"}` is a GET at the
first call, with only a deprecation warning), so every schema is checked against a registry
that refuses to retrieve anything: what a `$ref` names must be in the schema itself or be one
of the meta-schemas jsonschema ships. A tool whose schema refers outside itself is not offered
(`non_local_ref`); one whose reference fails anyway makes its calls error results.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from shell.text import shorten
from shell.tools.toolbox import ToolError

if TYPE_CHECKING:
    from referencing import Registry

_EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}
_REFERENCES = ("$ref", "$dynamicRef", "$recursiveRef")


def object_schema(schema: Any) -> dict[str, Any]:
    """The tool's input schema, or an empty object schema when it is not a valid JSON schema
    of an object (a model is always asked for an arguments object) or is nested too deep to
    check (jsonschema recurses; about a hundred levels is enough)."""
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    if not isinstance(schema, dict) or schema.get("type") != "object":
        return dict(_EMPTY_OBJECT)
    fixed = dict(schema)
    if not isinstance(fixed.get("properties"), dict):
        fixed["properties"] = {}
    try:
        validator_for(fixed).check_schema(fixed)
    except (SchemaError, RecursionError):
        return dict(_EMPTY_OBJECT)
    return fixed


def non_local_ref(schema: dict[str, Any]) -> str | None:
    """The first reference of `schema` that is not a fragment of the schema itself ("#…"),
    or None. Stricter than jsonschema, which would also resolve a URI that a subschema's own
    `$id` declares: what a server needs is `#/$defs/…`, and a rule this plain is easy to say."""
    return next((ref for ref in _references(schema) if not ref.startswith("#")), None)


def _references(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, inner in value.items():
            if key in _REFERENCES and isinstance(inner, str):
                yield inner
            else:
                yield from _references(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _references(inner)


class OfflineValidator:
    """A validator of `schema` whose references never leave it: an unresolvable one is a
    `ToolError` that says so, never a fetch."""

    def __init__(self, schema: dict[str, Any]) -> None:
        from jsonschema.validators import validator_for

        self._validator = validator_for(schema)(schema, registry=_local_only())

    def validate(self, arguments: dict[str, Any]) -> None:
        from referencing.exceptions import Unresolvable

        try:
            self._validator.validate(arguments)
        except Unresolvable as error:
            raise ToolError(
                f"the tool's input schema refers to {_ref(error)}, which is not in the schema; "
                "Cairn does not fetch schemas, so this tool cannot be called"
            ) from None


def _ref(error: Exception) -> str:
    ref = getattr(error, "ref", None)
    return shorten(str(ref) if ref is not None else str(error), 120)


def _local_only() -> Registry[Any]:
    """A registry that retrieves nothing (`referencing`'s default: a URI it does not hold is
    `NoSuchResource`); jsonschema adds the meta-schemas it ships."""
    from referencing import Registry

    return Registry()

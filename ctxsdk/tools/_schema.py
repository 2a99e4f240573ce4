"""JSON Schema checks for tools registered with a raw schema (jsonschema).

``check_schema`` runs at registration: the schema must be an object schema, plain JSON, and
valid against its draft's metaschema (Draft 2020-12 unless ``$schema`` names another).
``schema_errors`` runs at dispatch and returns one short ``path: what is wrong`` line per
problem (``tags[0]: expected string``, ``path: field required``, ``other: unexpected field``),
in the wording a model can act on; keywords without a wording of their own keep jsonschema's
message. Numbers are finite (JSON has no NaN or Infinity), and ``$ref`` resolves inside the
schema (and to the metaschemas) only: nothing is fetched.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import referencing
import referencing.exceptions

from ..errors import ToolError

__all__ = ["check_schema", "schema_errors"]

_DEFAULT_DRAFT: Any = jsonschema.Draft202012Validator
_LOCAL_REFS = referencing.Registry()  # no retrieve: a remote $ref is an error, never a download

_SAYS = {
    "enum": "must be one of {!r}",
    "const": "must be {!r}",
    "minimum": "must be >= {}",
    "maximum": "must be <= {}",
    "exclusiveMinimum": "must be > {}",
    "exclusiveMaximum": "must be < {}",
    "minLength": "must have at least {} characters",
    "maxLength": "must have at most {} characters",
    "minItems": "must have at least {} items",
    "maxItems": "must have at most {} items",
}


def _draft(schema: Mapping[str, Any]) -> Any:
    return jsonschema.validators.validator_for(schema, default=_DEFAULT_DRAFT)


def _finite_number(_checker: Any, value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@functools.cache
def _validator_class(draft: Any) -> Any:
    """``draft`` with ``number`` meaning a finite number."""
    checker = draft.TYPE_CHECKER.redefine("number", _finite_number)
    return jsonschema.validators.extend(draft, type_checker=checker)


def _where(path: Iterable[Any]) -> str:
    """``a.b[0].c`` for a JSON path; empty for the root."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def check_schema(name: str, schema: Any) -> dict[str, Any]:
    """``schema`` as a plain JSON copy, if it is a valid object JSON Schema; else ToolError."""
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        raise ToolError(
            f"tool {name!r}: parameters must be a JSON Schema with type 'object' "
            "(or a pydantic model class)"
        )
    try:
        plain = dict(json.loads(json.dumps(schema, allow_nan=False)))
    except (TypeError, ValueError, RecursionError) as exc:
        raise ToolError(f"tool {name!r}: parameters are not JSON: {exc}") from None
    draft = _draft(plain)
    try:
        draft.check_schema(plain)
    except jsonschema.SchemaError as exc:
        where = _where(exc.absolute_path) or "(root)"
        raise ToolError(
            f"tool {name!r}: parameters are not a valid JSON Schema "
            f"({draft.META_SCHEMA.get('$schema', 'draft 2020-12')}): at {where}: {exc.message}"
        ) from None
    return plain


def _extra_keys(instance: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    props = schema.get("properties") or {}
    patterns = [re.compile(p) for p in schema.get("patternProperties") or {}]
    return [k for k in instance if k not in props and not any(p.search(k) for p in patterns)]


def _lines(error: Any) -> list[str]:
    """The lines one jsonschema error becomes."""
    path = list(error.absolute_path)
    where = _where(path) or "(root)"
    kind, want = str(error.validator), error.validator_value
    if kind == "required":
        return [f"{_where([*path, k])}: field required" for k in want if k not in error.instance]
    if kind == "additionalProperties" and want is False:
        keys = _extra_keys(error.instance, error.schema)
        return [f"{_where([*path, k])}: unexpected field" for k in keys]
    if kind == "type":
        types = want if isinstance(want, list) else [want]
        return [f"{where}: expected {' or '.join(map(str, types))}"]
    says = _SAYS.get(kind)
    if kind in ("minimum", "maximum") and isinstance(
        error.schema.get(f"exclusive{kind.title()}"), bool
    ):
        says = None  # draft 4's boolean exclusive bounds: jsonschema's message says it right
    return [f"{where}: {says.format(want) if says else error.message}"]


def schema_errors(value: Any, schema: Mapping[str, Any]) -> list[str]:
    """The problems of ``value`` against ``schema`` (checked by ``check_schema``), one line
    each, in the schema's order; ToolError if the schema cannot be applied (a ``$ref`` that
    does not resolve, a pattern that is not a regular expression)."""
    validator = _validator_class(_draft(schema))(schema, registry=_LOCAL_REFS)
    try:
        lines = [line for error in validator.iter_errors(value) for line in _lines(error)]
    except referencing.exceptions.Unresolvable as exc:
        raise ToolError(
            f"its parameters schema has a $ref that cannot be resolved ({exc}); "
            "put the referenced schema under $defs"
        ) from None
    except re.error as exc:
        raise ToolError(f"its parameters schema has a pattern Python cannot read: {exc}") from None
    return list(dict.fromkeys(lines))

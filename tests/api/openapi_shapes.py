"""Checking a real answer against the OpenAPI document, strictly: every key the answer
holds is documented at every depth (`additionalProperties: false` is added to each
documented object), every documented required key is there, each value has its type."""

from __future__ import annotations

from typing import Any

import jsonschema
from drf_spectacular.generators import SchemaGenerator


def openapi_components() -> dict[str, Any]:
    return SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]


def _strict(node: Any) -> Any:
    """OpenAPI 3.0's dialect as JSON Schema: `nullable` as a null alternative, refs into
    `$defs`, and no undocumented keys in an object."""
    if isinstance(node, list):
        return [_strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    schema = {key: _strict(value) for key, value in node.items() if key != "nullable"}
    if "$ref" in schema:
        schema["$ref"] = schema["$ref"].replace("#/components/schemas/", "#/$defs/")
    if "properties" in schema and "additionalProperties" not in schema:
        schema["additionalProperties"] = False
    if node.get("nullable"):
        schema = {"anyOf": [schema, {"type": "null"}]}
    return schema


def assert_matches(components: dict[str, Any], name: str, answer: Any) -> None:
    """``answer`` is exactly what the component ``name`` documents."""
    schema = {"$defs": _strict(components), "$ref": f"#/$defs/{name}"}
    jsonschema.Draft202012Validator(schema).validate(answer)

"""Descriptions declared beside the fields of the TypedDicts the API answers with.

A field typed ``Annotated[int, Doc("Seconds to wait.")]`` is an ``int`` to Python and
mypy; `agentdocs.api.schema` reads the `Doc` to describe the field in the OpenAPI
document, so the shape a fast path builds and the schema that documents it are one
declaration. Pure Python: no Django, no DRF.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Doc:
    """A field's description; ``choices`` lists the values a ``str`` field takes."""

    text: str = ""
    choices: tuple[str, ...] = ()

"""Classifying declared exceptions: exactly the seed's table, nothing more.

    declared effect   on a rule   on a default   on knowledge or an option
    narrow            narrowed    narrowed       narrowed
    replace           refused     replaced       refused
    broaden           refused     refused        refused
    anything else     refused     refused        refused

A target whose name is not in the manifest's context, or whose standing is not
one of the four, is refused too. Nothing is ever settled by document order: a
local layer may narrow a permission, never broaden it.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentdocs.core.manifest import STANDINGS, DeclaredException, Manifest

NARROWED = "narrowed"
REPLACED = "replaced"
REFUSED = "refused"


@dataclass(frozen=True)
class Classification:
    outcome: str
    # Why an exception was refused, in a sentence; empty when it was not.
    why: str = ""


def classify(effect: str, standing: str | None) -> Classification:
    """The table's cell for one declared effect on one standing (None: target not listed)."""
    if standing is None:
        return Classification(REFUSED, "The target's name is not in the manifest's context.")
    if standing not in STANDINGS:
        return Classification(
            REFUSED, f"The target's standing {standing!r} is not one of {', '.join(STANDINGS)}."
        )
    if effect == "narrow":
        return Classification(NARROWED)
    if effect == "replace":
        if standing == "default":
            return Classification(REPLACED)
        return Classification(REFUSED, f"Only a default may be replaced, not a {standing}.")
    if effect == "broaden":
        return Classification(REFUSED, "A local layer may narrow a permission, never broaden it.")
    return Classification(
        REFUSED, f"The effect {effect!r} cannot be classified; only narrow and replace can."
    )


def classify_exception(exception: DeclaredException, manifest: Manifest) -> Classification:
    return classify(exception.effect, manifest.standing_of(exception.name))

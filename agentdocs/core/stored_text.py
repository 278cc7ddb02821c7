"""The one check of a stored string that is not a document: a `memory.*` setting's
value, a recipe's parameter, a process id, a change request's reason or comment, a
history reason, a webhook's description, a token's name, a tenant's or project's
name, a repository report's field.

Each reaches a prompt (the policy layer, the MCP instructions, a binding record), a
member (pages, the activity feed) or a webhook receiver verbatim, so it gets the checks
a document's body gets: no character a reader cannot see
(`agentdocs.core.hidden_characters`; no acknowledgement either, a short field has no
use for one) and no secret (`agentdocs.core.secret_scan`). A refusal is a 422
naming the field and stores nothing.
"""

from __future__ import annotations

from agentdocs.core.hidden_characters import refuse_hidden
from agentdocs.core.secret_scan import refuse_secret, refuse_secret_in_text

_PROMPT = (
    "It would go into prompts verbatim, so a model would read what nobody reviewing it "
    "sees: remove them. Nothing was stored."
)
_PEOPLE = (
    "Members, the activity feed and webhook receivers would get what nobody reading it "
    "sees: remove them. Nothing was stored."
)


def refuse_hidden_or_secret(text: str, *, field: str, what: str, prompt: bool = False) -> None:
    """Raise SecretDetected or HiddenCharacters (422, naming ``field``) if ``text``
    holds a secret or a character a reader cannot see.

    ``what`` names the text for people ("The value", "`reason`"); ``prompt`` says it
    goes into prompts (a setting's value, a recipe parameter), which the sentence then
    says; otherwise members and receivers are who read it. The secret is looked for
    first: its message never repeats the text."""
    if prompt:
        refuse_secret(text, field=field, what=what)
    else:
        refuse_secret_in_text(text, field=field, what=what)
    refuse_hidden(text, field=field, what=what, remedy=_PROMPT if prompt else _PEOPLE)

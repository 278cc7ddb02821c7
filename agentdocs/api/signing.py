"""`/.well-known/agentdocs/keys.json`: the public keys that verify the server's
signatures, with their ids and validity. Public: no sign-in."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from agentdocs.core.signing import ALGORITHM
from agentdocs.selectors import signing as signing_selectors


@require_GET
def published_keys(request: HttpRequest) -> JsonResponse:
    keys = signing_selectors.published_keys()
    response = JsonResponse({"algorithm": ALGORITHM, "keys": keys})
    # Keys are added by a rotation, and a verifier should see a new one soon.
    response["Cache-Control"] = "public, max-age=300"
    return response

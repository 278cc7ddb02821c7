"""The "API tokens" page: a signed-in user creates, lists and revokes their own tokens.

A new token's key is shown on the page that answers its creation and nowhere
else: the page is not cached and the key is not stored.
"""

from __future__ import annotations

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from agentdocs import permissions, ratelimit
from agentdocs.core.errors import AgentdocsError
from agentdocs.models import Scope
from agentdocs.selectors import tokens as token_selectors
from agentdocs.services import tokens as token_service
from agentdocs.validation import tokens as token_checks
from agentdocs.web.pages import form_page, list_page, member_page

TOKENS_PER_PAGE = 100


class TokenForm(forms.Form):
    name = forms.CharField(max_length=token_checks.MAX_NAME_LENGTH)
    tenant = forms.ChoiceField(required=False)
    scopes = forms.MultipleChoiceField(
        choices=Scope.choices,
        widget=forms.CheckboxSelectMultiple,
        initial=[Scope.READ, Scope.RENDER],
    )
    expires_in_days = forms.IntegerField(
        required=False, min_value=1, max_value=token_checks.MAX_EXPIRES_IN_DAYS, initial=90
    )

    def __init__(self, *args: object, tenant_slugs: list[str], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        tenant = self.fields["tenant"]
        assert isinstance(tenant, forms.ChoiceField)
        tenant.choices = [("", "Every tenant I am a member of")] + [
            (slug, slug) for slug in tenant_slugs
        ]


def _page(
    request: HttpRequest,
    form: TokenForm,
    *,
    new: token_service.NewToken | None = None,
    refusal: AgentdocsError | None = None,
) -> HttpResponse:
    tokens = list_page(
        request,
        token_selectors.token_list_for(user=permissions.signed_in(request.user)),
        per_page=TOKENS_PER_PAGE,
    )
    context = {"form": form, "tokens": tokens, "new": new, "now": timezone.now()}
    return form_page(request, "agentdocs/tokens.html", context, form=form, refusal=refusal)


@never_cache
@require_http_methods(["GET", "POST"])
@member_page
def token_list(request: HttpRequest) -> HttpResponse:
    slugs = token_selectors.token_tenant_choices(user=permissions.signed_in(request.user))
    if request.method == "GET":
        return _page(request, TokenForm(tenant_slugs=slugs))
    form = TokenForm(request.POST, tenant_slugs=slugs)
    if not form.is_valid():
        return _page(request, form)
    data = form.cleaned_data
    try:
        user = permissions.signed_in(request.user)
        ratelimit.check("token_create", ratelimit.user_key(user.pk))
        tenant = (
            permissions.tenant_access(request.user, data["tenant"]).tenant
            if data["tenant"]
            else None
        )
        new = token_service.token_create(
            user=user,
            name=data["name"],
            scopes=list(data["scopes"]),
            tenant=tenant,
            expires_in_days=data["expires_in_days"],
        )
    except AgentdocsError as error:
        return _page(request, form, refusal=error)
    return _page(request, TokenForm(tenant_slugs=slugs), new=new)


@require_POST
@member_page
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    token = token_selectors.token_get_for(
        user=permissions.signed_in(request.user), token_id=token_id
    )
    token_service.token_revoke(
        token=token, actor=permissions.signed_in(request.user), reason="Revoked by its owner"
    )
    return redirect("tokens")

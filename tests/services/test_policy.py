"""memory.* setting values and recipe params go into prompts: the secret check refuses them.

The service refuses (SecretDetected, 422, naming the field), so the API, the pages
and the Django admin all do; a refusal never repeats the secret.
"""

from __future__ import annotations

import hashlib

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from agentdocs.core import recipes as recipe_rules
from agentdocs.core.errors import SecretDetected
from agentdocs.models import Recipe, Setting
from agentdocs.services import policy as policy_service

pytestmark = pytest.mark.django_db

T = "/api/v1/tenants/acme"


def _synthetic(label: str, length: int) -> str:
    """A fixed, random-looking value: never a real credential."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    digest = hashlib.sha256(label.encode()).digest() * 4
    return "".join(alphabet[b % len(alphabet)] for b in digest[:length])


GITHUB_TOKEN = "ghp_" + _synthetic("policy-ghp", 36)
CONNECTION = f"postgres://deploy:{_synthetic('policy-pg', 18)}@db.prod.internal:5432/app"


@pytest.mark.parametrize("value", [GITHUB_TOKEN, CONNECTION, f"Deploy with {GITHUB_TOKEN}."])
def test_a_secret_setting_value_is_refused_naming_the_value(tenant, admin, value):
    with pytest.raises(SecretDetected) as error:
        policy_service.setting_set(
            tenant=tenant, project=None, key="memory.deploy_token", value=value, user=admin
        )
    assert (error.value.status, error.value.field) == (422, "value")
    assert value not in error.value.detail
    assert not Setting.objects.exists()


@pytest.mark.parametrize(
    "value",
    ["terse", "postgres://app:app@localhost:5432/app", "Ask #ops for the deploy token."],
)
def test_ordinary_setting_values_are_kept(tenant, admin, value):
    setting, created = policy_service.setting_set(
        tenant=tenant, project=None, key="memory.note", value=value, user=admin
    )
    assert created and setting.value == value


def test_a_secret_in_a_recipe_parameter_is_refused_naming_the_parameter(tenant, admin):
    with pytest.raises(SecretDetected) as error:
        policy_service.recipe_create(
            tenant=tenant,
            name="coder",
            params={"agentDocument": f"notes/{GITHUB_TOKEN}.md"},
            profiles={},
            user=admin,
        )
    assert (error.value.status, error.value.field) == (422, "params.agentDocument")
    assert not Recipe.objects.exists()


def test_a_secret_profile_name_is_refused_without_repeating_it(tenant, admin):
    recipe = policy_service.recipe_create(
        tenant=tenant, name="coder", params={}, profiles={}, user=admin
    )
    with pytest.raises(SecretDetected) as error:
        policy_service.recipe_update(
            recipe=recipe, params={}, profiles={GITHUB_TOKEN: {}}, user=admin
        )
    assert (error.value.status, error.value.field) == (422, "profiles")
    assert GITHUB_TOKEN not in error.value.detail
    recipe.refresh_from_db()
    assert recipe.profiles == {}


def test_a_secret_parameter_name_is_refused_before_the_unknown_name_message(tenant, admin):
    with pytest.raises(SecretDetected) as error:
        recipe_rules.validate_params({GITHUB_TOKEN: True})
    assert error.value.field == "params" and GITHUB_TOKEN not in error.value.detail


def test_the_api_refuses_a_secret_setting_with_a_422(api, tenant, admin):
    response = api(admin).put(
        f"{T}/settings/memory.deploy_token", {"value": GITHUB_TOKEN}, format="json"
    )
    assert response.status_code == 422
    assert (response.json()["error"], response.json()["field"]) == ("secret_detected", "value")
    assert GITHUB_TOKEN not in response.content.decode()
    assert not Setting.objects.exists()


def test_the_api_refuses_a_secret_recipe_profile_with_a_422(api, tenant, admin):
    response = api(admin).post(
        f"{T}/recipes/", {"name": "coder", "profiles": {GITHUB_TOKEN: {}}}, format="json"
    )
    assert response.status_code == 422 and response.json()["field"] == "profiles"
    assert not Recipe.objects.exists()


def test_the_settings_page_refuses_a_connection_string_beside_the_value(client, admin, tenant):
    client.force_login(admin)
    response = client.post("/t/acme/-/settings/", {"key": "memory.db", "value": CONNECTION})
    assert response.status_code == 422
    assert "connection string with a password" in response.content.decode()
    assert not Setting.objects.exists()


def test_the_recipe_page_refuses_a_secret_parameter(client, admin, tenant):
    client.force_login(admin)
    response = client.post(
        "/t/acme/-/recipes/new/",
        {"name": "coder", "params": f'{{"agentDocument": "notes/{GITHUB_TOKEN}.md"}}'},
    )
    assert response.status_code == 422
    assert "params.agentDocument" in response.content.decode()
    assert not Recipe.objects.exists()


def test_the_admin_refuses_a_secret_setting_with_a_form_error(client, tenant):
    superuser = get_user_model().objects.create_superuser(username="root", password="root-pw")
    client.force_login(superuser)
    response = client.post(
        reverse("admin:agentdocs_setting_add"),
        {"tenant": tenant.pk, "key": "memory.deploy_token", "value": GITHUB_TOKEN},
    )
    assert response.status_code == 200
    assert "GitHub token" in response.context["adminform"].form.errors["value"][0]
    assert not Setting.objects.exists()

"""DRF's plaintext tokens become hashed API tokens, and the plaintext is gone."""

from __future__ import annotations

import hashlib

from django.db.migrations.executor import MigrationExecutor

BEFORE = [
    ("agentdocs", "0004_binding_record_archive_enqueued_at"),
    ("authtoken", "0004_alter_tokenproxy_options"),
]
AFTER = [("agentdocs", "0005_api_tokens")]


def test_existing_drf_tokens_keep_working_as_hashed_tokens(blank_database):
    with blank_database() as connection:
        executor = MigrationExecutor(connection)
        executor.migrate(BEFORE)
        old_apps = executor.loader.project_state(BEFORE).apps
        user = old_apps.get_model("auth", "User").objects.create(username="legacy")
        key = "0123456789abcdef0123456789abcdef01234567"
        old_apps.get_model("authtoken", "Token").objects.create(key=key, user_id=user.pk)

        executor = MigrationExecutor(connection)
        executor.migrate(AFTER)
        new_apps = executor.loader.project_state(AFTER).apps
        token = new_apps.get_model("agentdocs", "ApiToken").objects.get(user_id=user.pk)
        assert token.key_hash == hashlib.sha256(key.encode()).hexdigest()
        assert token.scopes == ["read", "render", "write", "admin"]
        assert not new_apps.get_model("authtoken", "Token").objects.exists()

"""agentdocs settings, read from the environment.

The embedded default needs nothing but Python: SQLite in the working folder,
Celery tasks run in-process, a cache in files that every process of the machine
shares. Naming DATABASE_URL or REDIS_URL switches to PostgreSQL or Redis.
"""

from __future__ import annotations

import base64
import hashlib
import re
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF, UNSAFE_INLINE
from django.core.exceptions import ImproperlyConfigured

from config.env import (
    env_bool,
    env_choice,
    env_float,
    env_float_list,
    env_int,
    env_list,
    env_str,
)

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", False)

SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    raise ImproperlyConfigured(
        "SECRET_KEY is not set. Production never runs with a default key; "
        "the demo (`python3 dev.py demo`) generates one for you."
    )

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "simple_history",
    # Counts failed sign-ins and pauses sign-in (agentdocs/web/sign_in.py).
    "axes",
    "agentdocs",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Early, so that every response (the NUL refusal's 400 included) carries the policy.
    "csp.middleware.CSPMiddleware",
    "agentdocs.middleware.RejectNulMiddleware",
    # Serves collected static files (admin, API docs) under gunicorn, with no web server in front.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    # Last, as django-axes asks: turns a paused sign-in into its 429 page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60),
        conn_health_checks=True,
    )
}
# The access query every API request runs is prepared once per PostgreSQL connection
# (agentdocs/sql/prepared.py). Off behind a pooler that does not track prepared
# statements (PgBouncer in transaction mode before 1.21).
AGENTDOCS_PREPARED_STATEMENTS = env_bool("DATABASE_PREPARED_STATEMENTS", True)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # SQLite has no server-side connection to keep; a long-lived handle only holds locks.
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 20

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL", "") or ""
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "agentdocs.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": env_str("CACHE_KEY_PREFIX", "agentdocs") or "agentdocs",
        }
    }
else:
    # Shared by every process of this machine (gunicorn's workers, Celery's, the demo's
    # threads): read state, rate-limit counts and the render cache hold across workers.
    CACHES = {
        "default": {
            "BACKEND": "agentdocs.cache.DiskCache",
            "LOCATION": env_str("CACHE_DIR", str(BASE_DIR / "cache")),
            "KEY_PREFIX": env_str("CACHE_KEY_PREFIX", "agentdocs") or "agentdocs",
        }
    }

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(BASE_DIR / "media")))

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Throttled sign-in (django-axes, agentdocs/web/sign_in.py). Its backend comes first: it
# refuses a paused account or address before any password is checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Failed sign-ins, of one account or from one address, that pause sign-in for it.
AGENTDOCS_LOGIN_FAILURE_LIMIT = env_int("AGENTDOCS_LOGIN_FAILURE_LIMIT", 10)
# How long a failure counts, and so how long a pause lasts after the last one.
AGENTDOCS_LOGIN_COOLOFF_MINUTES = env_int("AGENTDOCS_LOGIN_COOLOFF_MINUTES", 15)
# Proxies in front of the app that each append their peer to X-Forwarded-For; 0 trusts
# no header and counts failures against REMOTE_ADDR.
AGENTDOCS_TRUSTED_PROXIES = env_int("AGENTDOCS_TRUSTED_PROXIES", 0)
for _name, _value, _least in [
    ("AGENTDOCS_LOGIN_FAILURE_LIMIT", AGENTDOCS_LOGIN_FAILURE_LIMIT, 1),
    ("AGENTDOCS_LOGIN_COOLOFF_MINUTES", AGENTDOCS_LOGIN_COOLOFF_MINUTES, 1),
    ("AGENTDOCS_TRUSTED_PROXIES", AGENTDOCS_TRUSTED_PROXIES, 0),
]:
    if _value < _least:
        raise ImproperlyConfigured(f"{_name} must be at least {_least}, not {_value}.")
AXES_FAILURE_LIMIT = AGENTDOCS_LOGIN_FAILURE_LIMIT
AXES_COOLOFF_TIME = timedelta(minutes=AGENTDOCS_LOGIN_COOLOFF_MINUTES)
# Two counters: an account's failures from every address (a new address does not unpause
# it), and an address's failures over every account (spraying many accounts is paused).
AXES_LOCKOUT_PARAMETERS = [["username"], ["ip_address"]]
# A success clears that account's failures from that address (SignInAttempts).
AXES_RESET_ON_SUCCESS = True
# An attempt while paused is refused unchecked and not counted, so the pause ends when
# the page says it does (counting it would only let anyone extend another's pause).
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_HANDLER = "agentdocs.web.sign_in.SignInAttempts"
AXES_CLIENT_IP_CALLABLE = "agentdocs.web.sign_in.client_address"
AXES_LOCKOUT_CALLABLE = "agentdocs.web.sign_in.paused_response"
# Failures and pauses are still logged (warnings); no banner at every process start.
AXES_VERBOSE = False

# Security: safe defaults that `manage.py check --deploy` accepts. The demo and
# the tests run over plain HTTP on localhost and turn the HTTPS-only ones off.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", not DEBUG)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"


def _style_hashes(template: Path) -> list[str]:
    """CSP source expressions ('sha256-...') for each `<style>` element of ``template``."""
    text = template.read_text(encoding="utf-8")
    return [
        f"'sha256-{base64.b64encode(hashlib.sha256(css.encode()).digest()).decode()}'"
        for css in re.findall(r"<style>(.*?)</style>", text, flags=re.DOTALL)
    ]


# Content-Security-Policy (django-csp): everything from this origin, no inline
# script, nothing framing the pages. The templates still carry `style="..."`
# attributes, so inline style *attributes* are allowed (style-src-attr), while a
# `<style>` element or a stylesheet from elsewhere is not (style-src). A style
# attribute cannot run script. The one `<style>` element, in the self-contained
# 500 page, is allowed by its hash. htmx's own indicator `<style>` is turned off
# in base.html. The API docs page loosens the policy for itself (config/urls.py).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, *_style_hashes(BASE_DIR / "templates" / "500.html")],
        "style-src-attr": [UNSAFE_INLINE],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

# History reasons are sentences people write (like commit messages), not labels.
SIMPLE_HISTORY_HISTORY_CHANGE_REASON_USE_TEXT_FIELD = True

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "agentdocs.api.authentication.TokenAccessAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "agentdocs.api.access.TokenScopePermission",
    ],
    "DEFAULT_PARSER_CLASSES": [
        "agentdocs.api.parsers.JSONParser",
        "agentdocs.api.parsers.FormParser",
        "agentdocs.api.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "agentdocs.api.pagination.Pagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "agentdocs.api.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "agentdocs.api.schema.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": [
        "agentdocs.api.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "agentdocs API",
    "DESCRIPTION": "Versioned standing instructions for AI agents: documents, the agent.md "
    "cascade, Memory Blocks and binding records.\n\n"
    "**Signing in.** Every operation needs a session (the web pages' cookie) or an API "
    "token sent as `Authorization: Bearer adt_…`; a token's scopes (`read`, `render`, "
    "`write`, `admin`) and your role in the tenant both limit what it may do.\n\n"
    '**Errors** are always JSON of one shape, `{"error": code, "detail": sentence, '
    '"field": name or null}`, whatever the request accepted; some carry a further fact '
    "(`current_version` on 412, `retry_after` on 429). Outsiders get 404, never 403.\n\n"
    "**Writing a document** names the version it is based on: send its ETag as `If-Match` "
    "(or a `version` field). A stale version gives 412, none 428, another's lock 423, a "
    "detected secret 422.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # No view validates a PATCH body partially, so its schema keeps the required fields
    # (a separate "Patched" component would mark none, and `PATCH {}` answers 400).
    "COMPONENT_SPLIT_PATCH": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # One tag per resource, in the order a new user meets them.
    "TAGS": [
        {"name": "ping", "description": "Check that a client reaches the API and is signed in."},
        {"name": "tenants", "description": "Tenants: the organisations that hold projects."},
        {"name": "projects", "description": "Projects of a tenant; `_vance` is the shared one."},
        {"name": "members", "description": "Who belongs to a tenant, with which role."},
        {
            "name": "invitations",
            "description": "A tenant admin invites; only the invited user's acceptance makes "
            "them a member.",
        },
        {"name": "tokens", "description": "API tokens: yours, and those scoped to a tenant."},
        {
            "name": "documents",
            "description": "Versioned Markdown documents; writes name their base version "
            "(If-Match).",
        },
        {"name": "history", "description": "A document's versions, diffs between them, revert."},
        {"name": "locks", "description": "Short advisory locks that hold off other writers."},
        {
            "name": "skills",
            "description": "Skills in the Agent Skills format (`SKILL.md` and bundled text "
            "files), versioned as whole bundles; `_vance` skills are offered to every project.",
        },
        {
            "name": "labels",
            "description": "Named versions of a document (`production`, `canary`): renders "
            "read by them.",
        },
        {
            "name": "activity",
            "description": "What changed in a tenant, who and why; the history of each "
            "setting, recipe, membership and provider.",
        },
        {
            "name": "settings",
            "description": "`memory.*` and `security.*` settings, tenant and project scope.",
        },
        {"name": "recipes", "description": "Recipes: what a Memory Block holds, by profile."},
        {
            "name": "providers",
            "description": "The provider map: names that point at a project's document.",
        },
        {
            "name": "memory-block",
            "description": "Render (POST) or preview (GET) what an agent receives; JSON or "
            "`text/plain`.",
        },
        {
            "name": "bindings",
            "description": "Binding records: what a run was bound to, and how it compares now.",
        },
        {
            "name": "repositories",
            "description": "Repositories: what each repository's sync, check or run "
            "reported, and its state against the server's export now.",
        },
        {
            "name": "export",
            "description": "The house rules as the files each agent tool reads (JSON or zip).",
        },
        {"name": "import", "description": "A repository's agent files become documents."},
        {
            "name": "changes",
            "description": "Change requests: proposed document changes, reviewed, then merged.",
        },
        {
            "name": "webhooks",
            "description": "Tenant admins: signed HTTP deliveries of the tenant's events, "
            "their delivery log, test and redelivery.",
        },
        {
            "name": "outcomes",
            "description": "What runs reported (task success, tests passed, tokens, cost), "
            "immutable and chained, and cohorts of runs (by label, version or recipe) "
            "compared with their 95% intervals.",
        },
        {
            "name": "costs",
            "description": "What the documents cost: the Memory Block per turn in bytes and "
            "tokens, and the tokens delivered per document over the last days.",
        },
        {"name": "search", "description": "Find current documents by the words of body and path."},
        {
            "name": "audit",
            "description": "Tenant admins: verify the hash chain over the tenant's history, "
            "or export it as JSON Lines to anchor elsewhere (docs/evidence.md).",
        },
    ],
    # The `state` fields (a Memory Block layer's, an invitation's, a change request's, a
    # webhook delivery's) need their own names.
    "ENUM_NAME_OVERRIDES": {
        "InvitationStateEnum": "agentdocs.models.InvitationState",
        "ChangeStateEnum": "agentdocs.models.ChangeState",
        "DeliveryStateEnum": "agentdocs.models.DeliveryState",
        "RepositoryStateEnum": "agentdocs.core.repositories.LISTED_STATES",
        "AuditRunStateEnum": "agentdocs.models.AuditVerificationState",
    },
}

# Celery: with no broker configured, tasks run in-process and eagerly, so the
# embedded default still archives binding records.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "") or REDIS_URL
# The queue tasks are sent to and workers take from: another name keeps two
# deployments on one broker (or one RabbitMQ virtual host) apart.
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_TASK_DEFAULT_QUEUE", "celery") or "celery"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Unless this is set, Celery's Django fixup closes the database connection before
# and after every task, so each archival opened a new PostgreSQL connection, which
# cost more than the archival (bench/README.md, "Archival"). With it, the fixup
# closes them only every 2,000 tasks, and config/celery.py closes them the Django way
# around each task instead (`close_old_connections`: CONN_MAX_AGE, broken connections).
CELERY_DB_REUSE_MAX = 1000
CELERY_TIMEZONE = TIME_ZONE
# The sweep re-enqueues binding records a worker never finished archiving.
CELERY_BEAT_SCHEDULE = {
    "archive-sweep": {
        "task": "agentdocs.tasks.sweep_unarchived_binding_records",
        "schedule": env_int("AGENTDOCS_ARCHIVE_SWEEP_EVERY_SECONDS", 60),
    },
    # Webhooks: re-enqueues deliveries whose retry is due, or whose task a worker lost.
    "webhook-sweep": {
        "task": "agentdocs.tasks.sweep_webhook_deliveries",
        "schedule": env_int("AGENTDOCS_WEBHOOK_SWEEP_EVERY_SECONDS", 30),
    },
    # Evidence: every tenant's history chain walked once a day (`audit.chain_broken`).
    "audit-chain-verify": {
        "task": "agentdocs.tasks.verify_audit_chains",
        "schedule": env_int("AGENTDOCS_AUDIT_VERIFY_EVERY_SECONDS", 24 * 3600),
    },
    # Costs: the renders' per-day counters written into the database.
    "render-turns-fold": {
        "task": "agentdocs.tasks.fold_render_turns",
        "schedule": env_int("AGENTDOCS_RENDER_TURNS_FOLD_EVERY_SECONDS", 300),
    },
}

# agentdocs' own knobs.
AGENTDOCS_TENANT_CREATORS = env_choice(
    "AGENTDOCS_TENANT_CREATORS", "superusers", {"superusers", "authenticated"}
)
# Off: a tenant admin's PUT of a new member invites them, and only their acceptance
# adds them (a Django superuser still adds directly). On: every tenant admin adds
# directly, without the user's consent, as before invitations existed.
AGENTDOCS_DIRECT_MEMBERSHIP = env_bool("AGENTDOCS_DIRECT_MEMBERSHIP", False)
AGENTDOCS_LOCK_TTL_SECONDS = env_int("AGENTDOCS_LOCK_TTL_SECONDS", 15 * 60)
AGENTDOCS_LOCK_MAX_TTL_SECONDS = env_int("AGENTDOCS_LOCK_MAX_TTL_SECONDS", 24 * 60 * 60)
# Skills (docs/skills.md): the largest bundled file, and the largest skill in all (UTF-8 bytes).
AGENTDOCS_SKILL_MAX_FILE_BYTES = env_int("AGENTDOCS_SKILL_MAX_FILE_BYTES", 256 * 1024)
AGENTDOCS_SKILL_MAX_BYTES = env_int("AGENTDOCS_SKILL_MAX_BYTES", 1024 * 1024)
if not 1 <= AGENTDOCS_SKILL_MAX_FILE_BYTES <= AGENTDOCS_SKILL_MAX_BYTES:
    raise ImproperlyConfigured(
        "AGENTDOCS_SKILL_MAX_FILE_BYTES must be at least 1 and at most AGENTDOCS_SKILL_MAX_BYTES."
    )
AGENTDOCS_DEFAULT_DOCUMENTS_DIR = Path(
    env_str("AGENTDOCS_DEFAULT_DOCUMENTS_DIR", str(BASE_DIR / "agentdocs" / "defaults"))
)
# The documentation: mkdocs.yml and its docs/ pages, served at /docs/ (agentdocs/web/docs.py).
# The footer links there, or to AGENTDOCS_DOCS_URL when a hosted copy of the site is named.
AGENTDOCS_DOCS_CONFIG = BASE_DIR / "mkdocs.yml"
AGENTDOCS_DOCS_URL = env_str("AGENTDOCS_DOCS_URL", "")
if AGENTDOCS_DOCS_URL and not re.match(r"https?://[^/\s]+(/\S*)?\Z", AGENTDOCS_DOCS_URL):
    raise ImproperlyConfigured(
        f"AGENTDOCS_DOCS_URL must be an http:// or https:// URL, not {AGENTDOCS_DOCS_URL!r}"
    )
AGENTDOCS_READ_STATE_TTL_SECONDS = env_int("AGENTDOCS_READ_STATE_TTL_SECONDS", 24 * 60 * 60)
# Keep a render's database reads in the cache, replaced on every write: only safe when
# the cache is shared by every process, as Redis and the embedded disk cache are.
AGENTDOCS_RENDER_CACHE = env_bool("AGENTDOCS_RENDER_CACHE", True)
AGENTDOCS_RENDER_CACHE_TTL_SECONDS = env_int("AGENTDOCS_RENDER_CACHE_TTL_SECONDS", 60 * 60)
AGENTDOCS_ARCHIVE_SWEEP_AFTER_SECONDS = env_int("AGENTDOCS_ARCHIVE_SWEEP_AFTER_SECONDS", 5 * 60)
# Binding records archived per task (one transaction, one UPDATE): a worker drains a
# backlog in batches of this many.
AGENTDOCS_ARCHIVE_BATCH_SIZE = env_int("AGENTDOCS_ARCHIVE_BATCH_SIZE", 500)
if AGENTDOCS_ARCHIVE_BATCH_SIZE < 1:
    raise ImproperlyConfigured("AGENTDOCS_ARCHIVE_BATCH_SIZE must be at least 1.")
# Drains that archive a backlog at once, each on a worker process of its own (they take
# disjoint batches); a worker's --concurrency is how many processes it has.
AGENTDOCS_ARCHIVE_DRAINS = env_int("AGENTDOCS_ARCHIVE_DRAINS", 2)
if AGENTDOCS_ARCHIVE_DRAINS < 1:
    raise ImproperlyConfigured("AGENTDOCS_ARCHIVE_DRAINS must be at least 1.")
# Paged lists count their rows exactly up to this many; past it a page's `count` is this
# number and `count_exact` is false (agentdocs/paging.py), so a page costs the same
# however long the list.
AGENTDOCS_PAGINATION_COUNT_LIMIT = env_int("AGENTDOCS_PAGINATION_COUNT_LIMIT", 10_000)
if AGENTDOCS_PAGINATION_COUNT_LIMIT < 1:
    raise ImproperlyConfigured("AGENTDOCS_PAGINATION_COUNT_LIMIT must be at least 1.")
# History `?q=` (API and page) reads the bodies of at most this many versions per
# request, newest first, and says where it stopped so the next request resumes there.
AGENTDOCS_HISTORY_SEARCH_SCAN_LIMIT = env_int("AGENTDOCS_HISTORY_SEARCH_SCAN_LIMIT", 20)
if AGENTDOCS_HISTORY_SEARCH_SCAN_LIMIT < 1:
    raise ImproperlyConfigured("AGENTDOCS_HISTORY_SEARCH_SCAN_LIMIT must be at least 1.")
# An export whose files hold more UTF-8 bytes than this is refused (413 `too_large`,
# field `format`), as JSON and as a zip; the Export page says so and lists the files.
AGENTDOCS_MAX_EXPORT_BYTES = env_int("AGENTDOCS_MAX_EXPORT_BYTES", 2 * 1024 * 1024)
# Size caps of one binding record, checked when binding: its row (the JSON the database
# is sent) and its archive. A record over either is refused with 413 and not stored.
AGENTDOCS_BINDING_MAX_RECORD_BYTES = env_int("AGENTDOCS_BINDING_MAX_RECORD_BYTES", 1024 * 1024)
AGENTDOCS_BINDING_MAX_ARCHIVE_BYTES = env_int(
    "AGENTDOCS_BINDING_MAX_ARCHIVE_BYTES", 8 * 1024 * 1024
)
# The request body an import (`POST .../import/`) may send: room for its 100 files of
# 256 KiB as JSON. Every other request keeps DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MiB).
AGENTDOCS_IMPORT_MAX_REQUEST_BYTES = env_int("AGENTDOCS_IMPORT_MAX_REQUEST_BYTES", 32 * 1024 * 1024)
# Repository reports (docs/repositories.md#bounds): the files one report may list and
# the UTF-8 bytes of each path (with these, a check's `files` is at most about 107 KB of
# JSON, so a page of a repository's checks stays under 1 MB), and
# the exports (distinct formats, recipe and profile) one request builds to compute
# repositories' states; a repository past them is `not-computed` in that answer.
AGENTDOCS_REPOSITORY_MAX_FILES = env_int("AGENTDOCS_REPOSITORY_MAX_FILES", 200)
AGENTDOCS_REPOSITORY_MAX_PATH = env_int("AGENTDOCS_REPOSITORY_MAX_PATH", 255)
AGENTDOCS_REPOSITORY_EXPORTS_PER_REQUEST = env_int("AGENTDOCS_REPOSITORY_EXPORTS_PER_REQUEST", 10)
if AGENTDOCS_REPOSITORY_MAX_FILES < 1:
    raise ImproperlyConfigured("AGENTDOCS_REPOSITORY_MAX_FILES must be at least 1.")
if AGENTDOCS_REPOSITORY_MAX_PATH < 1:
    raise ImproperlyConfigured("AGENTDOCS_REPOSITORY_MAX_PATH must be at least 1.")
if AGENTDOCS_REPOSITORY_EXPORTS_PER_REQUEST < 1:
    raise ImproperlyConfigured("AGENTDOCS_REPOSITORY_EXPORTS_PER_REQUEST must be at least 1.")
# Per-caller rate limits (agentdocs/ratelimit.py), as "requests/period" ("60/min",
# "5/10s"); an empty value leaves that scope unlimited. `render` and `bind` count per
# token (or session); the `*_user` scopes and `token_create` count per person, across
# all their tokens and their session, so fresh tokens buy no more.
AGENTDOCS_RATE_LIMITS_ENABLED = env_bool("AGENTDOCS_RATE_LIMITS_ENABLED", True)
AGENTDOCS_RATE_LIMITS = {
    # The edit page's live Markdown preview, per person.
    "markdown_preview": env_str("AGENTDOCS_RATE_LIMIT_MARKDOWN_PREVIEW", "60/min"),
    # Memory Block renders per token, and per person across all their tokens.
    "render": env_str("AGENTDOCS_RATE_LIMIT_RENDER", "600/min"),
    "render_user": env_str("AGENTDOCS_RATE_LIMIT_RENDER_PER_USER", "1200/min"),
    # Binds per token, and per person across all their tokens.
    "bind": env_str("AGENTDOCS_RATE_LIMIT_BIND", "120/min"),
    "bind_user": env_str("AGENTDOCS_RATE_LIMIT_BIND_PER_USER", "240/min"),
    # Repository reports (`agentdocs sync`, `sync --check`, `bind --repo`) per token,
    # and per person across all their tokens.
    "repository_report": env_str("AGENTDOCS_RATE_LIMIT_REPOSITORY_REPORT", "120/min"),
    "repository_report_user": env_str("AGENTDOCS_RATE_LIMIT_REPOSITORY_REPORT_PER_USER", "240/min"),
    # Memory Block previews (API GET and the preview page), per person.
    "preview_user": env_str("AGENTDOCS_RATE_LIMIT_PREVIEW_PER_USER", "300/min"),
    # API token creations (API and the tokens page), per person.
    "token_create": env_str("AGENTDOCS_RATE_LIMIT_TOKEN_CREATE", "30/hour"),
}
# Active (neither revoked nor expired) API tokens one person may hold; past it a new
# one is refused with 409 `too_many_tokens`.
AGENTDOCS_MAX_TOKENS_PER_USER = env_int("AGENTDOCS_MAX_TOKENS_PER_USER", 50)
if AGENTDOCS_MAX_TOKENS_PER_USER < 1:
    raise ImproperlyConfigured("AGENTDOCS_MAX_TOKENS_PER_USER must be at least 1.")

# Webhooks. Deliveries never go to loopback, private, link-local, unique-local,
# multicast, reserved or cloud-metadata addresses (checked on the resolved address
# when sending) unless this is on: for tests and the demo, whose receivers are local.
AGENTDOCS_WEBHOOK_ALLOW_PRIVATE = env_bool("AGENTDOCS_WEBHOOK_ALLOW_PRIVATE", False)
# Connect and read together, in seconds; and how much of a response body is kept.
AGENTDOCS_WEBHOOK_TIMEOUT_SECONDS = env_float("AGENTDOCS_WEBHOOK_TIMEOUT_SECONDS", 5.0)
AGENTDOCS_WEBHOOK_RESPONSE_BODY_BYTES = env_int("AGENTDOCS_WEBHOOK_RESPONSE_BODY_BYTES", 4096)
# Seconds before each automatic retry of a failed delivery: about a day in all.
AGENTDOCS_WEBHOOK_RETRY_SCHEDULE = tuple(
    env_float_list(
        "AGENTDOCS_WEBHOOK_RETRY_SCHEDULE",
        [10, 60, 5 * 60, 30 * 60, 3600, 2 * 3600, 4 * 3600, 8 * 3600, 8 * 3600],
    )
)
# A webhook whose every attempt has failed for this long is disabled.
AGENTDOCS_WEBHOOK_DISABLE_AFTER_SECONDS = env_int(
    "AGENTDOCS_WEBHOOK_DISABLE_AFTER_SECONDS", 24 * 3600
)
# The sweep enqueues a due delivery again when its task has not run this long after
# it was due (a worker killed mid-delivery).
AGENTDOCS_WEBHOOK_SWEEP_AFTER_SECONDS = env_int("AGENTDOCS_WEBHOOK_SWEEP_AFTER_SECONDS", 60)
# Webhooks a tenant may have (turned off ones count): each costs every write a delivery.
AGENTDOCS_MAX_WEBHOOKS_PER_TENANT = env_int("AGENTDOCS_MAX_WEBHOOKS_PER_TENANT", 20)
# Named labels one document may carry (`latest` is not one); past it a new label is
# refused with 409 `too_many_labels`. Moving an existing label is not adding one.
AGENTDOCS_MAX_LABELS_PER_DOCUMENT = env_int("AGENTDOCS_MAX_LABELS_PER_DOCUMENT", 50)
if AGENTDOCS_MAX_LABELS_PER_DOCUMENT < 1:
    raise ImproperlyConfigured("AGENTDOCS_MAX_LABELS_PER_DOCUMENT must be at least 1.")
# Browser pages (scheme://host[:port]) that may call `/mcp/`: CORS, and a request with
# any other Origin is refused. Empty: no browser page may, every MCP client still can.
AGENTDOCS_MCP_ALLOWED_ORIGINS = env_list("AGENTDOCS_MCP_ALLOWED_ORIGINS", [])
for _origin in AGENTDOCS_MCP_ALLOWED_ORIGINS:
    if not re.fullmatch(r"https?://[^/\s?#]+", _origin):
        raise ImproperlyConfigured(
            f"AGENTDOCS_MCP_ALLOWED_ORIGINS: {_origin!r} is not an origin such as "
            "https://app.example.com (a scheme and a host, no path)."
        )
# The most UTF-8 bytes of house rules an MCP server's `instructions` carry.
AGENTDOCS_MCP_INSTRUCTIONS_BYTES = env_int("AGENTDOCS_MCP_INSTRUCTIONS_BYTES", 16 * 1024)

# Evidence (docs/evidence.md): the secret the signing keys are sealed with at rest
# (empty: SECRET_KEY), and how long a process keeps the active key in memory.
AGENTDOCS_SIGNING_KEY = env_str("AGENTDOCS_SIGNING_KEY", "")
AGENTDOCS_SIGNING_KEY_CACHE_SECONDS = env_int("AGENTDOCS_SIGNING_KEY_CACHE_SECONDS", 60)
if AGENTDOCS_SIGNING_KEY_CACHE_SECONDS < 0:
    raise ImproperlyConfigured("AGENTDOCS_SIGNING_KEY_CACHE_SECONDS must be at least 0.")
# `GET .../audit/verify` answers the report itself for a chain of at most this many
# rows (well under half a second, bench/audit.py); a longer chain is walked by a task
# and the answer is 202 with its progress link.
AGENTDOCS_AUDIT_VERIFY_SYNC_ROWS = env_int("AGENTDOCS_AUDIT_VERIFY_SYNC_ROWS", 500)
if AGENTDOCS_AUDIT_VERIFY_SYNC_ROWS < 0:
    raise ImproperlyConfigured("AGENTDOCS_AUDIT_VERIFY_SYNC_ROWS must be at least 0.")
# The longest chain `GET .../audit/export` streams within the request; a longer one is
# written to a file by a task (202 and a progress link). Streaming takes about 0.16 ms a
# row on the 2-core machine, so 2,000 rows stay well inside half a second.
AGENTDOCS_AUDIT_EXPORT_SYNC_ROWS = env_int("AGENTDOCS_AUDIT_EXPORT_SYNC_ROWS", 2000)
if AGENTDOCS_AUDIT_EXPORT_SYNC_ROWS < 0:
    raise ImproperlyConfigured("AGENTDOCS_AUDIT_EXPORT_SYNC_ROWS must be at least 0.")
# How long an export's file is kept and served after it was asked for.
AGENTDOCS_AUDIT_EXPORT_KEEP_DAYS = env_int("AGENTDOCS_AUDIT_EXPORT_KEEP_DAYS", 7)
if AGENTDOCS_AUDIT_EXPORT_KEEP_DAYS < 1:
    raise ImproperlyConfigured("AGENTDOCS_AUDIT_EXPORT_KEEP_DAYS must be at least 1.")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "no_client_error_tracebacks": {
            "()": "django.utils.log.CallbackFilter",
            "callback": "ext://config.log.without_client_error_tracebacks",
        }
    },
    "formatters": {
        "django.server": {
            "()": "django.utils.log.ServerFormatter",
            "format": "[{server_time}] {message}",
            "style": "{",
        }
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "filters": ["no_client_error_tracebacks"],
        },
        "django.server": {"class": "logging.StreamHandler", "formatter": "django.server"},
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        # Django's own configuration gives "django" a second console handler under
        # DEBUG: every request warning would be printed twice. One handler, the root's.
        "django": {"handlers": [], "level": env_str("LOG_LEVEL", "INFO")},
        # runserver's one line per request, with DEBUG off too (the demo runs so).
        "django.server": {"handlers": ["django.server"], "level": "INFO", "propagate": False},
        # The MCP SDK logs every /mcp/ request's session start and end at INFO.
        "mcp": {"level": env_str("MCP_LOG_LEVEL", "WARNING")},
    },
}

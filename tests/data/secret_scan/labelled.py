# ruff: noqa: E501 (one case per line reads better than wrapped f-strings)
"""A labelled set of secret formats, for the secret check's catch rate.

Positives are real token formats in the surroundings they turn up in (a `.env`
block, a shell command, a JSON config, a YAML file, prose); negatives are the
placeholders documentation writes in their place. Every value is synthetic: built
here from SHA-256 of a fixed label, so it has the right shape and looks random but
is the same on every run and was never a credential. Nothing here is a real key,
and no literal key sits in this file for a secret scanner to trip over.

Used by tests/core/test_secret_scan.py and bench/secret_scan.py; pure Python.
"""

from __future__ import annotations

import base64
import hashlib
import string
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"


def synthetic(label: str, length: int, alphabet: str = ALNUM) -> str:
    """``length`` characters of ``alphabet``, derived from ``label`` alone."""
    out: list[str] = []
    counter = 0
    while len(out) < length:
        digest = hashlib.sha256(f"agentdocs-synthetic/{label}/{counter}".encode()).digest()
        out.extend(alphabet[byte % len(alphabet)] for byte in digest)
        counter += 1
    return "".join(out[:length])


def _b64(label: str, length: int) -> str:
    return base64.b64encode(hashlib.sha256(label.encode()).digest() * 4).decode()[:length]


@dataclass(frozen=True)
class Case:
    name: str
    text: str
    # The 1-based lines holding the secret, first and last, for positives.
    lines: tuple[int, int] | None = None


def _doc(name: str, before: list[str], secret: list[str], after: list[str]) -> Case:
    """A document with the secret lines between ordinary agent-document lines."""
    lines = [*before, *secret, *after]
    return Case(name, "\n".join(lines) + "\n", lines=(len(before) + 1, len(before) + len(secret)))


_ENV_BLOCK = (["# Local setup", "", "Copy these into `.env`:", "", "```env", "PORT=3000"], ["```"])
_SHELL = (
    ["## Deploy", "", "Run from the repository root:", "", "```sh"],
    ["```", "", "Then check CI."],
)
_PROSE = (["# Agent notes", "", "- Use pnpm, not npm."], ["- Run the tests before pushing."])
_YAML = (["```yaml", "services:", "  api:", "    environment:"], ["```"])
_JSON = (["```json", "{", '  "name": "acme-bot",'], ["}", "```"])


def _in(frame: tuple[list[str], list[str]], name: str, *secret: str) -> Case:
    return _doc(name, frame[0], list(secret), frame[1])


def _pem(kind: str, label: str, prefix: str = "") -> list[str]:
    body = prefix + synthetic(label, 64 * 6 - len(prefix), B64)
    return [body[i : i + 64] for i in range(0, len(body), 64)] + [
        synthetic(label + "/end", 40, B64) + "=="
    ]


# DER openings of private keys (SEQUENCE, version): PKCS#8 RSA, PKCS#1 RSA, SEC1 EC.
_PKCS8 = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ"
_PKCS1 = "MIIEowIBAAKCAQEA"
_SEC1 = "MHcCAQEEI"


def _jwt(label: str) -> str:
    header = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    claims = base64.urlsafe_b64encode(
        f'{{"sub":"{synthetic(label, 12, HEX)}","iat":1735689600}}'.encode()
    ).decode()
    return f"{header}.{claims.rstrip('=')}.{synthetic(label + '/sig', 43, URLSAFE)}"


def positives() -> list[Case]:
    s = synthetic
    gh = "ghp_" + s("ghp", 36)
    return [
        _in(_ENV_BLOCK, "GitHub classic token in .env", f"GITHUB_TOKEN={gh}"),
        _in(_PROSE, "GitHub token in prose", f"- The bot pushes with {gh}, keep it."),
        _in(_SHELL, "GitHub OAuth token", f"gh auth login --with-token <<< gho_{s('gho', 36)}"),
        _in(
            _SHELL,
            "GitHub app token in a clone URL",
            f"git clone https://x-access-token:ghs_{s('ghs', 36)}@github.com/acme/api.git",
        ),
        _in(
            _ENV_BLOCK,
            "GitHub fine-grained token",
            f"GH_PAT=github_pat_{s('pat1', 22)}_{s('pat2', 59)}",
        ),
        _in(_ENV_BLOCK, "GitLab token", f"GITLAB_TOKEN=glpat-{s('glpat', 20, URLSAFE)}"),
        _in(
            _SHELL,
            "GitLab token in a remote",
            f"git remote add origin https://oauth2:glpat-{s('glpat2', 20)}@gitlab.com/acme/api.git",
        ),
        _in(
            _ENV_BLOCK,
            "Slack bot token",
            f"SLACK_BOT_TOKEN=xoxb-{s('xb1', 12, '0123456789')}-{s('xb2', 13, '0123456789')}-{s('xb3', 24)}",
        ),
        _in(
            _PROSE,
            "Slack user token",
            f"- Post as the release user: xoxp-{s('xp1', 12, '0123456789')}-{s('xp2', 12, '0123456789')}-{s('xp3', 32, HEX)}",
        ),
        _in(
            _ENV_BLOCK,
            "Slack app-level token",
            f"SLACK_APP_TOKEN=xapp-1-A{s('xa1', 10, string.ascii_uppercase + string.digits)}-{s('xa2', 13, '0123456789')}-{s('xa3', 64, HEX)}",
        ),
        _in(
            _PROSE,
            "Slack webhook URL",
            f"- Alerts go to https://hooks.slack.com/services/T{s('t', 8, string.ascii_uppercase + string.digits)}/B{s('b', 10, string.ascii_uppercase + string.digits)}/{s('hook', 24)}",
        ),
        _in(
            _ENV_BLOCK,
            "Discord webhook URL",
            f"DISCORD_WEBHOOK=https://discord.com/api/webhooks/{s('dc', 19, '0123456789')}/{s('dc2', 68, URLSAFE)}",
        ),
        _in(
            _ENV_BLOCK,
            "OpenAI legacy key",
            f"OPENAI_API_KEY=sk-{s('oa1', 20)}T3BlbkFJ{s('oa2', 20)}",
        ),
        _in(
            _SHELL,
            "OpenAI project key",
            f"export OPENAI_API_KEY=sk-proj-{s('proj', 124, URLSAFE)}",
        ),
        _in(
            _JSON, "OpenAI service account key", f'  "openai": "sk-svcacct-{s("svc", 74, URLSAFE)}"'
        ),
        _in(
            _ENV_BLOCK,
            "Anthropic key",
            f"ANTHROPIC_API_KEY=sk-ant-api03-{s('ant', 93, URLSAFE)}AA",
        ),
        _in(
            _PROSE,
            "Anthropic key in prose",
            f"- The eval harness uses sk-ant-api03-{s('ant2', 93, URLSAFE)}AA for now.",
        ),
        _in(
            ([*_ENV_BLOCK[0], "AWS_REGION=eu-west-1"], _ENV_BLOCK[1]),
            "AWS access key id with its secret",
            f"AWS_ACCESS_KEY_ID=AKIA{s('akia', 16, string.ascii_uppercase + '234567')}",
            f"AWS_SECRET_ACCESS_KEY={s('aws-secret', 40, B64)}",
        ),
        _in(
            _PROSE,
            "AWS access key id in prose",
            f"- CI uses the deploy user's key AKIA{s('akia2', 16, string.ascii_uppercase + '234567')}.",
        ),
        _in(
            _SHELL,
            "AWS temporary key id",
            f"aws configure set aws_access_key_id ASIA{s('asia', 16, string.ascii_uppercase + '234567')}",
        ),
        _in(
            (["```ini", "[default]"], ["region = us-east-1", "```"]),
            "AWS secret access key in credentials file",
            f"aws_secret_access_key = {s('aws-secret2', 40, B64)}",
        ),
        _in(_JSON, "Google API key", f'  "mapsKey": "AIza{s("aiza", 35, URLSAFE)}"'),
        _in(_ENV_BLOCK, "Hugging Face token", f"HF_TOKEN=hf_{s('hf', 34)}"),
        _in(
            _SHELL,
            "Hugging Face token on the command line",
            f"huggingface-cli login --token hf_{s('hf2', 34)}",
        ),
        _in(
            _ENV_BLOCK,
            "SendGrid key",
            f"SENDGRID_API_KEY=SG.{s('sg1', 22, URLSAFE)}.{s('sg2', 43, URLSAFE)}",
        ),
        _in(_ENV_BLOCK, "Stripe webhook secret", f"STRIPE_WEBHOOK_SECRET=whsec_{s('whsec', 32)}"),
        _in(
            _PROSE,
            "Stripe webhook secret in prose",
            f"- Verify signatures with whsec_{s('whsec2', 32)}.",
        ),
        _in(_ENV_BLOCK, "Stripe live secret key", f"STRIPE_SECRET_KEY=sk_live_{s('sklive', 24)}"),
        _in(
            _ENV_BLOCK, "Stripe restricted key", f"STRIPE_RESTRICTED_KEY=rk_live_{s('rklive', 24)}"
        ),
        _in(
            _SHELL,
            "Stripe test key with curl",
            f"curl https://api.stripe.com/v1/charges -u sk_test_{s('sktest', 24)}:",
        ),
        _in(
            (["```ini"], ["```"]),
            "npm token in .npmrc",
            f"//registry.npmjs.org/:_authToken=npm_{s('npm', 36)}",
        ),
        _in(
            (["```ini", "[pypi]", "username = __token__"], ["```"]),
            "PyPI token in .pypirc",
            f"password = pypi-AgEIcHlwaS5vcmc{s('pypi', 70, URLSAFE)}",
        ),
        _in(
            _SHELL,
            "JWT in a curl header",
            f'curl -H "Authorization: Bearer {_jwt("jwt1")}" https://api.acme.dev/me',
        ),
        _in(_PROSE, "JWT in prose", f"- Test session: {_jwt('jwt2')}"),
        _doc(
            "PEM block with BEGIN line",
            ["## Signing", "", "```"],
            [
                "-----BEGIN RSA PRIVATE KEY-----",
                *_pem("RSA", "pem1", _PKCS1),
                "-----END RSA PRIVATE KEY-----",
            ],
            ["```"],
        ),
        _doc(
            "OpenSSH key block",
            ["Deploy key:", ""],
            [
                "-----BEGIN OPENSSH PRIVATE KEY-----",
                *_pem(
                    "OPENSSH",
                    "pem2",
                    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
                ),
                "-----END OPENSSH PRIVATE KEY-----",
            ],
            [],
        ),
        _doc(
            "PKCS#8 body without its BEGIN line",
            ["The signing key (paste into the vault):", "", "```"],
            [*_pem("PKCS8", "pem3", _PKCS8)],
            ["```"],
        ),
        _doc(
            "PKCS#1 body without its BEGIN line",
            ["key body:"],
            [*_pem("PKCS1", "pem4", _PKCS1)],
            [],
        ),
        _doc("EC key body without its BEGIN line", ["```"], [_SEC1 + s("ec", 60, B64)], ["```"]),
        _doc(
            "key body and END line without BEGIN",
            ["```"],
            [
                s("mid1", 64, B64),
                s("mid2", 64, B64),
                s("mid3", 40, B64) + "==",
                "-----END PRIVATE KEY-----",
            ],
            ["```"],
        ),
        _in(
            _JSON,
            "private key in a JSON service account",
            f'  "private_key": "-----BEGIN PRIVATE KEY-----\\n{_PKCS8}{s("sa", 40, B64)}\\n-----END PRIVATE KEY-----\\n",',
        ),
        _in(
            _ENV_BLOCK,
            "PostgreSQL URL with a password",
            f"DATABASE_URL=postgres://app_user:{s('pg', 20)}@db.prod.internal:5432/app",
        ),
        _in(
            _PROSE,
            "MySQL URL",
            f"- Reports read from mysql://report:{s('my', 16)}@10.0.3.7:3306/shop",
        ),
        _in(
            _ENV_BLOCK,
            "MongoDB Atlas URL",
            f"MONGODB_URI=mongodb+srv://svc-api:{s('mongo', 18)}@cluster0.ab1cd.mongodb.net/prod",
        ),
        _in(
            _ENV_BLOCK,
            "Redis URL with a password",
            f"REDIS_URL=redis://:{s('redis', 24)}@cache.internal:6379/0",
        ),
        _in(
            _YAML,
            "AMQP URL in compose",
            f"      BROKER_URL: amqp://orders:{s('amqp', 16)}@rabbit:5672/",
        ),
        _in(
            _ENV_BLOCK,
            "local PostgreSQL URL with a generated password",
            f"DATABASE_URL=postgresql://app:{s('pglocal', 24)}@localhost:5432/app",
        ),
        _in(
            _ENV_BLOCK,
            "Azure storage connection string",
            f"AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acmeprod;AccountKey={s('azure', 86, B64)}==;EndpointSuffix=core.windows.net",
        ),
        _in(
            _JSON,
            "Azure Service Bus connection string",
            f'  "bus": "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={s("sb", 43, B64)}="',
        ),
        _in(
            _SHELL,
            "curl -u user:pass",
            f"curl -u deploy:{s('curl1', 16)} https://ci.acme.dev/api/json",
        ),
        _in(
            _SHELL,
            "curl --user",
            f"curl --user admin:{s('curl2', 14)} -X POST https://search.acme.dev/_snapshot",
        ),
        _in(
            _SHELL,
            "curl -u quoted",
            f'curl -sS -X POST https://api.acme.dev/hooks -u "ci-bot:{s("curl3", 20)}"',
        ),
        _in(
            _SHELL,
            "Bearer header",
            f'curl -H "Authorization: Bearer {s("bearer", 40, URLSAFE)}" https://api.acme.dev',
        ),
        _in(
            _PROSE,
            "Token header",
            f"- Send `Authorization: Token {s('tok', 40, HEX)}` to the staging API.",
        ),
        _in(
            _SHELL,
            "Basic header",
            f"curl -H 'Authorization: Basic {base64.b64encode(('ops:' + s('basic', 12)).encode()).decode()}' https://jenkins.acme.dev",
        ),
        _in(
            _ENV_BLOCK,
            "agentdocs token in .env",
            f"AGENTDOCS_TOKEN=adt_{s('adt1', 8)}_{s('adt2', 43, URLSAFE)}",
        ),
        _in(
            _SHELL,
            "agentdocs token in a header",
            f'curl -H "Authorization: Token adt_{s("adt3", 8)}_{s("adt4", 43, URLSAFE)}" https://agentdocs.acme.dev/api/v1/ping',
        ),
        _in(
            _PROSE,
            "agentdocs token in prose",
            f"- The render bot's key is adt_{s('adt5', 8)}_{s('adt6', 32, URLSAFE)}.",
        ),
        _in(_ENV_BLOCK, "password in .env", f"DB_PASSWORD={s('dbpw', 18)}"),
        _in(_ENV_BLOCK, "JWT signing secret in .env", f"JWT_SECRET={s('jwtsecret', 64, HEX)}"),
        _in(
            (["```python", "# settings/production.py"], ["```"]),
            "Django secret key",
            f"SECRET_KEY = 'django-insecure-{s('django', 50, ALNUM + '!@#%^&*(-_=+)')}'",
        ),
        _in(_YAML, "password in YAML", f"      password: {s('yamlpw', 16)}"),
        _in((["```python"], ["```"]), "API key in code", f'api_key = "{s("apikey", 32, HEX)}"'),
        _in(
            _YAML,
            "client secret in YAML",
            f'      client_secret: "{s("clientsecret", 40, URLSAFE)}"',
        ),
        _in(_JSON, "token in JSON", f'  "token": "{s("jsontoken", 32, HEX)}"'),
        _in(_ENV_BLOCK, "DigitalOcean token", f"DO_TOKEN=dop_v1_{s('do', 64, HEX)}"),
        _in(_ENV_BLOCK, "Shopify admin token", f"SHOPIFY_ADMIN_TOKEN=shpat_{s('shop', 32, HEX)}"),
        _in(_ENV_BLOCK, "xAI key", f"XAI_API_KEY=xai-{s('xai', 80)}"),
        _in(_ENV_BLOCK, "Groq key", f"GROQ_API_KEY=gsk_{s('groq', 52)}"),
    ]


POSITIVES = positives()


def negatives() -> list[Case]:
    """Placeholders and look-alikes from real agent documents: none is a secret."""
    texts = {
        "JWT secret placeholder": "JWT_SECRET=your-secret-key",
        "Postgres password placeholder": "POSTGRES_PASSWORD=secret",
        "Django secret placeholder": "SECRET_KEY=change-me-in-production",
        "elided OpenAI key": "OPENAI_API_KEY=sk-...",
        "local compose URL": "DATABASE_URL=postgres://app:app@localhost:5432/app",
        "rule naming the PEM marker": "- Never commit a file that contains `-----BEGIN PRIVATE KEY-----`.",
        "CSS class starting sk-": 'className="sk-button-primary-large-outline-variant"',
        "AWS documented key id": "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "elided GitHub token": "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "elided Anthropic key": "ANTHROPIC_API_KEY=sk-ant-...",
        "elided Stripe key": "STRIPE_SECRET_KEY=sk_test_...",
        "Stripe documented test key": "curl https://api.stripe.com/v1/charges -u sk_test_4eC39HqLyjWDarjtT1zdp7dc:",
        "curl with variables": 'curl -u "$USER:$TOKEN" https://api.acme.dev',
        "curl with local defaults": "curl -u admin:admin http://localhost:9200/_cat/indices",
        "curl elastic changeme": "curl -u elastic:changeme http://localhost:9200",
        "Bearer placeholder": "Authorization: Bearer <your-token>",
        "Bearer variable": "Authorization: Bearer $API_TOKEN",
        "Slack documented webhook": "SLACK_WEBHOOK_URL=https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "Azure key placeholder": "AccountKey=<your-account-key>",
        "Azurite development key": "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;",
        "Mongo compose default": "MONGO_URL=mongodb://root:example@localhost:27017",
        "Postgres service default": "DATABASE_URL=postgres://postgres:postgres@db:5432/postgres",
        "documented URL shape": "Use `postgresql://user:password@localhost:5432/mydb`.",
        "Hugging Face placeholder": "HF_TOKEN=hf_your_token_here",
        "elided SendGrid key": "SENDGRID_API_KEY=SG.xxxxx",
        "example PEM block": "```\n-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----\n```",
        "PEM in an env example": 'PRIVATE_KEY="-----BEGIN PRIVATE KEY-----\\n...\\n-----END PRIVATE KEY-----\\n"',
        "YAML variable": "password: ${DB_PASSWORD}",
        "API key placeholder": "API_KEY=your_api_key_here",
        "generate instruction": "NEXTAUTH_SECRET=generate-with-openssl-rand-base64-32",
        "changeme variant": "ADMIN_PASSWORD=changeme123",
        "git push -u": "git push -u origin main",
        "docker run -u": "docker run -u 1000:1000 -v $PWD:/app node:20 npm test",
        "jwt.io sample token": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "short illustration of a key": 'const API_KEY = "sk-abc123def456";',
        "password is the variable's name": "DB_PASSWORD=db_password",
        "token format description": "Tokens look like `adt_<prefix>_<secret>`; the prefix is shown in the list.",
        "Hugging Face function": "Call hf_hub_download(repo_id=REPO, filename=NAME) once per model.",
        "Redis without password": "REDIS_URL=redis://localhost:6379/0",
        "example password in JSON": '"passwd": "anotherExample",',
        "Authorization header prose": "Every call sends an `Authorization: Bearer` header with the user's token.",
    }
    return [Case(name, text + "\n") for name, text in texts.items()]


NEGATIVES = negatives()

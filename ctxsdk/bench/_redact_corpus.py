"""The redaction corpus: secrets in the formats public secret scanners document, and negatives.

Every case is built at run time from pieces by a seeded generator, so no literal credential
is committed (push protection trips on them) and every run sees the same corpus. A positive
names its family and the exact secret substring that must not survive; a negative names its
family and must come out unchanged.

Families of positives:

* ``provider``: vendor key shapes as gitleaks, detect-secrets and the vendors document them
  (AWS, GitHub, GitLab, Slack, Stripe, Google, OpenAI, Anthropic, Hugging Face, npm, PyPI,
  SendGrid, Twilio, …), each in prose, an environment line, code and a Chinese sentence;
* ``private-key``: PEM, OpenSSH, PGP blocks, whole, JSON-escaped and cut off;
* ``connection-string``: database and broker URLs with a password, ADO.NET and Azure strings;
* ``jwt``: in headers, cookies and JSON;
* ``labelled``: a value under a key that names a credential, in Python, JS, Go, Java, Ruby,
  JSON, YAML, TOML, INI, .env, shell, CLI flags, HTTP headers, XML, ``.netrc``, English and
  Chinese prose and labels; values with spaces and symbols among them.

Families of negatives: ``placeholder`` (``<your-key>``, ``xxxx``, ``${TOKEN}``, env
references, documentation examples), ``hash`` (commits, digests, integrity strings),
``uuid``, ``prose`` (ordinary sentences about tokens, keys and passwords, English and
Chinese), ``identifier`` (code that names credentials without holding one).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

__all__ = ["NEGATIVE_FAMILIES", "POSITIVE_FAMILIES", "Case", "corpus", "negatives", "positives"]

POSITIVE_FAMILIES = ("provider", "private-key", "connection-string", "jwt", "labelled")
NEGATIVE_FAMILIES = ("placeholder", "hash", "uuid", "prose", "identifier")


@dataclass(frozen=True)
class Case:
    """One corpus text. ``secret`` is the substring that must be withheld (positives only)."""

    text: str
    family: str
    shape: str  # the documented format or syntax it follows, e.g. "github-pat", "yaml"
    positive: bool
    secret: str | None = None


def positives() -> list[Case]:
    """Every positive case (deterministic)."""
    return [c for c in corpus() if c.positive]


def negatives() -> list[Case]:
    """Every negative case (deterministic)."""
    return [c for c in corpus() if not c.positive]


@cache
def _corpus() -> tuple[Case, ...]:
    rng = random.Random(20261204)
    out: list[Case] = []
    for build in (_providers, _private_keys, _connections, _jwts, _labelled):
        out.extend(build(rng))
    for build in (_placeholders, _hashes, _uuids, _prose, _identifiers):
        out.extend(build(rng))
    return tuple(out)


def corpus() -> list[Case]:
    """The whole corpus, positives first (deterministic)."""
    return list(_corpus())


# -- alphabets and bodies ------------------------------------------------------------------
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_DIGITS = "0123456789"
_ALNUM = _UPPER + _LOWER + _DIGITS
_B64URL = _ALNUM + "-_"
_B64 = _ALNUM + "+/"
_HEX = "0123456789abcdef"
_B32 = _UPPER + "234567"


def _body(rng: random.Random, n: int, alphabet: str = _ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _j(*parts: str) -> str:
    return "".join(parts)


# -- provider shapes -----------------------------------------------------------------------
# shape -> a maker of one token. Prefixes are split so no literal shape sits in the source.
_MAKERS: dict[str, Callable[[random.Random], str]] = {
    "aws-access-key": lambda r: _j("AK", "IA", _body(r, 16, _B32)),
    "aws-sts-key": lambda r: _j("AS", "IA", _body(r, 16, _B32)),
    "github-classic": lambda r: _j("gh", "p_", _body(r, 36)),
    "github-oauth": lambda r: _j("gh", "o_", _body(r, 36)),
    "github-app": lambda r: _j("gh", "s_", _body(r, 36)),
    "github-refresh": lambda r: _j("gh", "r_", _body(r, 36)),
    "github-fine-grained": lambda r: _j("git", "hub_pat_", _body(r, 22), "_", _body(r, 59)),
    "gitlab-pat": lambda r: _j("gl", "pat-", _body(r, 20, _B64URL)),
    "gitlab-runner": lambda r: _j("gl", "rt-", _body(r, 20, _B64URL)),
    "slack-bot": lambda r: _j(
        "xo", "xb-", _body(r, 11, _DIGITS), "-", _body(r, 12, _DIGITS), "-", _body(r, 24)
    ),
    "slack-user": lambda r: _j(
        "xo", "xp-", _body(r, 11, _DIGITS), "-", _body(r, 12, _DIGITS), "-", _body(r, 32, _HEX)
    ),
    "slack-webhook": lambda r: _j(
        "https://hooks.",
        "slack.com/services/T",
        _body(r, 8, _UPPER + _DIGITS),
        "/B",
        _body(r, 8, _UPPER + _DIGITS),
        "/",
        _body(r, 24),
    ),
    "stripe-secret": lambda r: _j("s", "k_", "li", "ve_", _body(r, 24)),
    "stripe-restricted": lambda r: _j("r", "k_", "li", "ve_", _body(r, 24)),
    "stripe-test": lambda r: _j("s", "k_", "te", "st_", _body(r, 24)),
    "google-api": lambda r: _j("AI", "za", _body(r, 35, _B64URL)),
    "google-oauth-secret": lambda r: _j("GOC", "SPX-", _body(r, 28, _B64URL)),
    "google-oauth-token": lambda r: _j("ya", "29.", _body(r, 60, _B64URL)),
    "openai-legacy": lambda r: _j("s", "k-", _body(r, 20), "T3Blbk", "FJ", _body(r, 20)),
    "openai-project": lambda r: _j("s", "k-", "pr", "oj-", _body(r, 120, _B64URL)),
    "openai-service": lambda r: _j("s", "k-", "svc", "acct-", _body(r, 100, _B64URL)),
    "anthropic": lambda r: _j("s", "k-", "an", "t-api03-", _body(r, 93, _B64URL), "AA"),
    "deepseek": lambda r: _j("s", "k-", _body(r, 32, _HEX)),
    "openrouter": lambda r: _j("s", "k-", "or-", "v1-", _body(r, 64, _HEX)),
    "huggingface": lambda r: _j("h", "f_", _body(r, 34, _UPPER + _LOWER)),
    "npm": lambda r: _j("np", "m_", _body(r, 36)),
    "pypi": lambda r: _j("py", "pi-", "AgEIcHlwaS5vcmc", _body(r, 70, _B64URL)),
    "sendgrid": lambda r: _j("S", "G.", _body(r, 22, _B64URL), ".", _body(r, 43, _B64URL)),
    "twilio": lambda r: _j("S", "K", _body(r, 32, _HEX)),
    "mailgun": lambda r: _j("ke", "y-", _body(r, 32, _HEX)),
    "mailchimp": lambda r: _j(_body(r, 32, _HEX), "-us", str(r.randint(1, 21))),
    "shopify": lambda r: _j("shp", "at_", _body(r, 32, _HEX)),
    "digitalocean": lambda r: _j("do", "p_v1_", _body(r, 64, _HEX)),
    "square": lambda r: _j("sq0", "atp-", _body(r, 22, _B64URL)),
    "databricks": lambda r: _j("da", "pi", _body(r, 32, _HEX)),
    "linear": lambda r: _j("lin", "_api_", _body(r, 40)),
    "postman": lambda r: _j("PM", "AK-", _body(r, 24, _HEX), "-", _body(r, 34, _HEX)),
    "vault": lambda r: _j("hv", "s.", _body(r, 90, _B64URL)),
    "pulumi": lambda r: _j("pu", "l-", _body(r, 40, _HEX)),
    "grafana-sa": lambda r: _j("gl", "sa_", _body(r, 32), "_", _body(r, 8, _HEX)),
    "newrelic": lambda r: _j("NR", "AK-", _body(r, 27, _UPPER + _DIGITS)),
    "age": lambda r: _j("AGE-SECRET-", "KEY-1", _body(r, 58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")),
    "groq": lambda r: _j("gs", "k_", _body(r, 52)),
    "xai": lambda r: _j("xa", "i-", _body(r, 80)),
    "replicate": lambda r: _j("r", "8_", _body(r, 37)),
    "doppler": lambda r: _j("dp", ".pt.", _body(r, 43)),
    "alibaba": lambda r: _j("LT", "AI", _body(r, 20)),
    "tencent": lambda r: _j("AK", "ID", _body(r, 32)),
    "telegram": lambda r: _j(_body(r, 10, _DIGITS), ":", "AA", _body(r, 33, _B64URL)),
    "discord": lambda r: _j(
        "M", _body(r, 23, _ALNUM), ".", _body(r, 6, _B64URL), ".", _body(r, 27, _B64URL)
    ),
    "azure-ad-secret": lambda r: _j(
        _body(r, 3, _ALNUM), str(r.randint(0, 9)), "Q~", _body(r, 34, _ALNUM + "_.~-")
    ),
    "supabase": lambda r: _j("sb", "p_", _body(r, 40, _HEX)),
    "figma": lambda r: _j("fig", "d_", _body(r, 40, _B64URL)),
    "fireworks": lambda r: _j("f", "w_", _body(r, 24)),
    "perplexity": lambda r: _j("pp", "lx-", _body(r, 48)),
    "voyage": lambda r: _j("p", "a-", _body(r, 43, _B64URL)),
    "langsmith": lambda r: _j("ls", "v2_pt_", _body(r, 32, _HEX), "_", _body(r, 10, _HEX)),
    "pinecone": lambda r: _j("pc", "sk_", _body(r, 6), "_", _body(r, 64)),
    "tavily": lambda r: _j("tv", "ly-", _body(r, 32)),
    "elevenlabs": lambda r: _j("s", "k_", _body(r, 48, _HEX)),
    "resend": lambda r: _j("r", "e_", _body(r, 8), "_", _body(r, 24)),
    "posthog": lambda r: _j("ph", "x_", _body(r, 47)),
    "onepassword": lambda r: _j("op", "s_", "eyJ", _body(r, 200, _B64)),
    "mapbox": lambda r: _j("s", "k.", "eyJ", _body(r, 60, _B64URL), ".", _body(r, 22, _B64URL)),
    "dynatrace": lambda r: _j(
        "dt0", "c01.", _body(r, 24, _UPPER + _DIGITS), ".", _body(r, 64, _UPPER + _DIGITS)
    ),
    "planetscale": lambda r: _j("psc", "ale_tkn_", _body(r, 43, _B64URL)),
    "sentry-user": lambda r: _j("sn", "tryu_", _body(r, 64, _HEX)),
    "rubygems": lambda r: _j("ruby", "gems_", _body(r, 48, _HEX)),
    "sendinblue": lambda r: _j("xkey", "sib-", _body(r, 64, _HEX), "-", _body(r, 16)),
    "terraform": lambda r: _j(_body(r, 14), ".atlas", "v1.", _body(r, 67, _B64URL)),
    "dropbox": lambda r: _j("s", "l.", _body(r, 136, _B64URL)),
    "airtable": lambda r: _j("pa", "t", _body(r, 14), ".", _body(r, 64, _HEX)),
    "hubspot": lambda r: _j(
        "pa",
        "t-na1-",
        _body(r, 8, _HEX),
        "-",
        _body(r, 4, _HEX),
        "-",
        _body(r, 4, _HEX),
        "-",
        _body(r, 4, _HEX),
        "-",
        _body(r, 12, _HEX),
    ),
    "netlify": lambda r: _j("nf", "p_", _body(r, 40)),
    "prefect": lambda r: _j("pn", "u_", _body(r, 36)),
}

_PROVIDER_CONTEXTS: tuple[Callable[[str], str], ...] = (
    lambda t: f"here is the key {t} for the deploy, rotate it after",
    lambda t: f"export SERVICE_CREDENTIAL={t}",
    lambda t: f'client = Client("{t}", timeout=30)',
    lambda t: f"部署用这个 {t} 就行",
    lambda t: f"- {t}\n- another item",
    lambda t: json.dumps({"headers": {"X-Custom": t}, "retries": 2}),
)


def _providers(rng: random.Random) -> list[Case]:
    out = []
    for shape, make in _MAKERS.items():
        for ctx in rng.sample(_PROVIDER_CONTEXTS, 3):
            token = make(rng)
            out.append(Case(ctx(token), "provider", shape, True, token))
    return out


# -- private keys --------------------------------------------------------------------------
def _pem(rng: random.Random, label: str, lines: int = 6, sep: str = "\n") -> tuple[str, str]:
    dashes = "-" * 5
    body = sep.join(_body(rng, 64, _B64) for _ in range(lines))
    head = _j(dashes, "BEGIN ", label, "PRIV", "ATE KEY", dashes)
    tail = _j(dashes, "END ", label, "PRIV", "ATE KEY", dashes)
    return _j(head, sep, body, sep, tail), body


def _private_keys(rng: random.Random) -> list[Case]:
    out = []
    for label in ("RSA ", "EC ", "DSA ", "OPENSSH ", "ENCRYPTED ", ""):
        block, body = _pem(rng, label)
        out.append(Case(f"cat ~/.ssh/id\n{block}\n$ ", "private-key", "pem", True, body[:64]))
        out.append(Case(f"```\n{block}\n```", "private-key", "pem-fenced", True, body[:64]))
    block, body = _pem(rng, "", sep="\\n")
    sa = '{"type": "service_account", "private_key": "' + block + '\\n", "client_id": "1"}'
    out.append(Case(sa, "private-key", "gcp-service-account", True, body[:64]))
    block, body = _pem(rng, "RSA ", lines=8)
    cut = block[: block.index("-----END")][:400]
    out.append(Case(f"head -c 400 key.pem\n{cut}", "private-key", "pem-cut", True, body[:64]))
    dashes = "-" * 5
    pgp = _j(
        dashes,
        "BEGIN PGP PRIV",
        "ATE KEY BLOCK",
        dashes,
        "\n\n",
        _body(rng, 64, _B64),
        "\n",
        _body(rng, 64, _B64),
        "\n",
        dashes,
        "END PGP PRIV",
        "ATE KEY BLOCK",
        dashes,
    )
    out.append(Case(pgp, "private-key", "pgp", True, pgp.split("\n")[2]))
    return out


# -- connection strings --------------------------------------------------------------------
_PASSWORDS = ("S3cr3t!", "p%40ssw0rd", "Tr0ub4dor&3", "hunter2", "xK9#mQ2$vL", "correcthorse9")


def _connections(rng: random.Random) -> list[Case]:
    out = []
    hosts = ("db.internal", "10.0.3.7", "pg.example.net", "cluster0.ab1cd.mongodb.net")
    for scheme in (
        "postgres",
        "postgresql+psycopg2",
        "mysql",
        "mongodb+srv",
        "redis",
        "amqp",
        "https",
        "mssql+pyodbc",
        "ftp",
    ):
        for _ in range(2):
            pw = rng.choice(_PASSWORDS) + _body(rng, 4)
            user = "" if scheme == "redis" else rng.choice(("admin", "app", "deploy", "u_7"))
            url = f"{scheme}://{user}:{pw}@{rng.choice(hosts)}:5432/app"
            ctx = rng.choice(
                (f"DATABASE_URL={url}", f'engine = create_engine("{url}")', f"connect to {url}")
            )
            out.append(Case(ctx, "connection-string", scheme, True, pw))
    for _ in range(3):
        pw = rng.choice(_PASSWORDS) + _body(rng, 3)
        ado = f"Server=tcp:sql.example.net,1433;Database=app;User Id=sa;Password={pw};"
        out.append(Case(ado, "connection-string", "ado-net", True, pw))
        jdbc = f"jdbc:mysql://db:3306/app?user=app&password={pw}&useSSL=true"
        out.append(Case(jdbc, "connection-string", "jdbc", True, pw))
    for _ in range(3):
        key = _body(rng, 86, _B64) + "=="
        azure = (
            "DefaultEndpointsProtocol=https;AccountName=acct1;"
            f"AccountKey={key};EndpointSuffix=core.windows.net"
        )
        out.append(Case(azure, "connection-string", "azure-storage", True, key))
    return out


# -- JWTs ----------------------------------------------------------------------------------
def _jwt(rng: random.Random) -> str:
    head = "eyJ" + _body(rng, 33, _B64URL)
    payload = "eyJ" + _body(rng, rng.randint(60, 180), _B64URL)
    return f"{head}.{payload}.{_body(rng, 43, _B64URL)}"


def _jwts(rng: random.Random) -> list[Case]:
    contexts: tuple[Callable[[str], str], ...] = (
        lambda t: f"Authorization: Bearer {t}",
        lambda t: f'curl -H "Authorization: Bearer {t}" https://api.example.net/v1/me',
        lambda t: f"Set-Cookie: session={t}; Path=/; HttpOnly",
        lambda t: json.dumps({"id_token": t, "expires_in": 3600}),
        lambda t: f"the token came back as {t} and expired",
        lambda t: f"登录后拿到的是 {t}",
    )
    out = []
    for ctx in contexts:
        for _ in range(2):
            token = _jwt(rng)
            out.append(Case(ctx(token), "jwt", "jwt", True, token))
    return out


# -- labelled assignments ------------------------------------------------------------------
def _value(rng: random.Random) -> str:
    kind = rng.randrange(5)
    # Human passwords end in a number of their own, so every case's secret is its own
    # (a door that leaks one case is not counted for every case sharing its password).
    n = str(rng.randint(10, 9999))
    if kind == 0:  # a human password with spaces and symbols
        return (
            rng.choice(
                ("hunter2 with spaces!", "p@ss w0rd#", "correct horse battery ", "my dog Rex !")
            )
            + n
        )
    if kind == 1:  # symbols
        return rng.choice(("ab$cD9!kq2Lm", "Tr0ub4dor&", "S3cr3t!Passw0rd", "x!7%kP@q2#zW")) + n
    if kind == 2:
        return _body(rng, 32, _HEX)
    if kind == 3:
        return _body(rng, 40, _B64URL)
    return "".join(rng.choice(_LOWER) for _ in range(6)) + str(rng.randint(10, 9999))


_LABELLED: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("python", lambda v: f'password = "{v}"'),
    ("python", lambda v: f"DB_PASSWORD = '{v}'"),
    ("python-dict", lambda v: f'config = {{"api_key": "{v}", "region": "eu"}}'),
    ("python-kwarg", lambda v: f'connect(host="db", user="app", password="{v}")'),
    ("js", lambda v: f'const apiToken = "{v}";'),
    ("js-object", lambda v: f"const opts = {{ clientSecret: '{v}', retries: 3 }};"),
    ("ts", lambda v: f'private readonly accessToken = "{v}";'),
    ("go", lambda v: f'cfg := Config{{Password: "{v}", Port: 5432}}'),
    ("java", lambda v: f'String secretKey = "{v}";'),
    ("ruby", lambda v: f"{{ :password => '{v}', :user => 'app' }}"),
    ("php", lambda v: f"$db_pass = '{v}';"),
    ("json", lambda v: json.dumps({"client_secret": v, "client_id": "web"})),
    ("json", lambda v: json.dumps({"auth": {"token": v}})),
    ("json-escaped", lambda v: json.dumps({"arguments": json.dumps({"password": v})})),
    ("yaml", lambda v: f"database:\n  db_token: {v}\n  port: 5432"),
    ("yaml-quoted", lambda v: f'smtp:\n  password: "{v}"'),
    ("toml", lambda v: f'[service]\napi_key = "{v}"'),
    ("ini", lambda v: f"[db]\npassword = {v}\nhost = db"),
    ("dotenv", lambda v: f"STRIPE_SECRET={v.replace(' ', '_')}"),
    ("shell-export", lambda v: f"export API_TOKEN='{v}'"),
    ("shell-inline", lambda v: f"PGPASSWORD='{v}' psql -h db -U app"),
    ("cli-flag", lambda v: f"deploy --password '{v}' --env prod"),
    ("cli-flag", lambda v: f"tool login --token={v.replace(' ', '-')}"),
    ("http-header", lambda v: f"X-API-Key: {v.replace(' ', '')}"),
    ("curl-header", lambda v: f"curl -H 'X-Auth-Token: {v.replace(' ', '')}' https://h.example"),
    ("xml", lambda v: f"<user>app</user><password>{v}</password>"),
    ("netrc", lambda v: f"machine api.example.net login app password {v.replace(' ', '')}"),
    ("docker", lambda v: f"docker run -e POSTGRES_PASSWORD='{v}' postgres:16"),
    ("prose-en", lambda v: f"the password is {v.replace(' ', '')} for now"),
    ("prose-en", lambda v: f"my API key: `{v}` (do not share)"),
    ("zh-label", lambda v: f"数据库密码：{v.replace(' ', '')}"),
    ("zh-label", lambda v: f"API密钥 = {v.replace(' ', '')}"),
    ("zh-label", lambda v: f"访问令牌: “{v}”"),
    ("zh-label", lambda v: f"口令：{v.replace(' ', '')}，明天过期"),
    ("zh-prose", lambda v: f"我的密码是{v.replace(' ', '')}，别告诉别人"),
    ("zh-label", lambda v: f"私钥: {v.replace(' ', '')}"),
    ("zh-label", lambda v: f"秘钥={v.replace(' ', '')}"),
    ("dotenv", lambda v: f"WANDB_API_KEY={v.replace(' ', '')}"),
    ("dotenv", lambda v: f"JWT_SECRET={v.replace(' ', '')}"),
    ("dotenv", lambda v: f"HF_TOKEN={v.replace(' ', '')}"),
    ("yaml", lambda v: f"auth:\n  refresh_token: '{v}'"),
    ("yaml", lambda v: f"webhook_secret: {v.replace(' ', '')}"),
    ("json", lambda v: json.dumps({"encryption_key": v.replace(" ", "")})),
    ("json", lambda v: json.dumps({"secretAccessKey": v.replace(" ", "")})),
    ("js-object", lambda v: f"headers: {{ 'x-api-key': '{v}' }}"),
    ("python", lambda v: f'SIGNING_SECRET = "{v}"'),
    ("python-kwarg", lambda v: f'Client(api_key="{v}")'),
    ("powershell", lambda v: f'$env:AZURE_OPENAI_KEY = "{v}"'),
    ("prose-en", lambda v: f"use passphrase {v.replace(' ', '')} to unlock"),
)
# A literal beside code that obtains a credential: the literal is the secret. Drawn from a
# generator of their own, so the cases above keep their values.
_BESIDE_CODE: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("powershell", lambda v: f"$dbPassword = '{v}'"),
    (
        "powershell-securestring",
        lambda v: f"$pw = ConvertTo-SecureString -AsPlainText -Force -String '{v}'",
    ),
    (
        "powershell-securestring",
        lambda v: (
            "$cred = New-Object PSCredential('svc', "
            f'(ConvertTo-SecureString "{v}" -AsPlainText -Force))'
        ),
    ),
    ("env-fallback", lambda v: f"db_password = os.getenv('DB_PASSWORD') or '{v}'"),
    ("env-default", lambda v: f'SMTP_PASSWORD = os.environ.get("SMTP_PASSWORD", "{v}")'),
)


def _labelled(rng: random.Random) -> list[Case]:
    out = []
    for shape, make in _LABELLED:
        for _ in range(3):
            value = _value(rng)
            text = make(value)
            secret = next(
                (
                    s
                    for s in (
                        value,
                        value.replace(" ", "_"),
                        value.replace(" ", "-"),
                        value.replace(" ", ""),
                    )
                    if s in text
                ),
                value,
            )
            out.append(Case(text, "labelled", shape, True, secret))
    beside = random.Random(20261206)
    for shape, make in _BESIDE_CODE:
        for _ in range(3):
            value = _value(beside)
            out.append(Case(make(value), "labelled", shape, True, value))
    for _ in range(3):  # curl -u and Basic auth carry user:password
        pw = rng.choice(_PASSWORDS) + _body(rng, 5)
        out.append(
            Case(f"curl -u admin:{pw} https://h.example/api", "labelled", "curl-u", True, pw)
        )
        b64 = _body(rng, 28, _B64) + "="
        out.append(Case(f"Authorization: Basic {b64}", "labelled", "basic-auth", True, b64))
    for _ in range(3):  # AWS's secret access key is only ever labelled
        key = _body(rng, 40, _B64)
        key_id = _j("AK", "IA", _body(rng, 16, _B32))
        text = f"[default]\naws_access_key_id = {key_id}\naws_secret_access_key = {key}"
        out.append(Case(text, "labelled", "aws-secret", True, key))
    return out


# -- negatives -----------------------------------------------------------------------------
def _placeholders(rng: random.Random) -> list[Case]:
    texts = [
        'api_key = "<your-key>"',
        "OPENAI_API_KEY=xxxx",
        "token: ${TOKEN}",
        "export GITHUB_TOKEN=$GH_TOKEN",
        'password: "***"',
        'api_key="YOUR_API_KEY_HERE"',
        '"password": ""',
        "password = None",
        "token: ${{ secrets.GITHUB_TOKEN }}",
        'OPENAI_API_KEY="sk-..."',
        _j("GITHUB_TOKEN=gh", "p_", "x" * 36),
        _j("OPENAI_API_KEY=s", "k-", "x" * 48),
        _j("aws_access_key_id = AK", "IA", "IOSFODNN7EXAMPLE"),
        "password: <password>",
        "postgres://user:password@localhost:5432/app",
        "redis://:${REDIS_PASSWORD}@cache:6379/0",
        "mysql://root:****@db:3306/app",
        "Password=<your password>;",
        "Authorization: Bearer <token>",
        "Bearer $TOKEN",
        'curl -H "Authorization: Bearer ${API_TOKEN}" https://api.example.net',
        'password = os.environ["DB_PASSWORD"]',
        'token = os.getenv("GITHUB_TOKEN")',
        "api_key=args.api_key",
        'secret = config["secret"]',
        "self.password = password",
        "const token = process.env.API_TOKEN;",
        'password = getpass.getpass("Password: ")',
        "password: REDACTED",
        "token: [REDACTED]",
        'password="$(cat /run/secrets/db)"',
        "api_key: {{ vault_api_key }}",
        "DB_PASSWORD=changeme",
        "password: %(db_password)s",
        "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
        "API密钥：<你的密钥>",
        "密码：******",
        "token = ''",
        "secret_key = settings.SECRET_KEY",
        "SLACK_BOT_TOKEN=xoxb-your-token",
        'STRIPE_KEY="sk_test_..."',
        "password: !vault |",
        "export AWS_SECRET_ACCESS_KEY=<secret>",
        "api_key: your-api-key",
        "token=TOKEN_GOES_HERE",
        '"apiKey": "{{API_KEY}}"',
        "ANTHROPIC_API_KEY=${ANTHROPIC_API_KEY:-}",
    ]
    return [Case(t, "placeholder", "placeholder", False) for t in texts]


def _hashes(rng: random.Random) -> list[Case]:
    out = []
    for _ in range(6):
        sha = _body(rng, 40, _HEX)
        digest = _body(rng, 64, _HEX)
        b64 = _body(rng, 86, _B64) + "=="
        md5 = _body(rng, 32, _HEX)
        for text in (
            f"commit {sha}\nAuthor: Dev <dev@example.net>",
            f"{sha[:7]} fix the parser on empty input",
            f"image: registry.example.net/app@sha256:{digest}",
            json.dumps({"integrity": f"sha512-{b64}", "version": "1.2.3"}),
            f"requests==2.32.3 --hash=sha256:{digest}",
            f"md5 {md5}  build/app.tar.gz",
            f'etag: "{md5}"',
            f"checksum = {digest}",
        ):
            out.append(Case(text, "hash", "hash", False))
    return out


def _uuid(rng: random.Random) -> str:
    h = _body(rng, 32, _HEX)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def _uuids(rng: random.Random) -> list[Case]:
    out = []
    for _ in range(5):
        u = _uuid(rng)
        for text in (
            f"request_id: {u}",
            f"session {u} resumed",
            json.dumps({"id": u, "object": "run"}),
            f"x-request-id: {u}",
            f"trace={u} span=7",
            f"会话 {u} 已恢复",
        ):
            out.append(Case(text, "uuid", "uuid", False))
    return out


def _prose(rng: random.Random) -> list[Case]:
    texts = [
        "The token budget is 4000.",
        "Set the header X-Auth-Token before calling the API.",
        "The tokenizer is cl100k_base.",
        "Reset your password from the login page.",
        "Password: required",
        "Password: must be at least 8 characters",
        "the secret sauce is caching the embeddings",
        "API key rotation is documented in SECURITY.md",
        "Use a bearer token in the Authorization header.",
        "The access token expires after 3600 seconds.",
        "Passwords are hashed with bcrypt, never stored.",
        "The `password` field is optional.",
        "set OPENAI_API_KEY in your environment first",
        "token: the smallest unit a model reads",
        "the password is required for the admin account",
        "Secrets live in the vault, not in git.",
        "Keys are rotated every 90 days.",
        "We count tokens with tiktoken and the deepseek tokenizer.",
        "The API key was revoked; ask ops for a new one.",
        "max tokens per request: 8192",
        "密码不能为空",
        "请先设置 API 密钥",
        "令牌预算是 4000",
        "密钥轮换每 90 天一次",
        "访问令牌一小时后过期",
        "这个接口需要鉴权令牌",
        "密码学课程下周开始",
        "token: 4000 per turn",
        "The secret key is stored in the keychain.",
        "a token is roughly four characters of English",
        "Auth: handled by the gateway",
        "credentials: see the team vault",
        "The password reset email went out at 10:42.",
        "the token is valid for one hour",
        "Secret: none needed for local runs",
        "API key: ask the platform team",
        "Our token usage dropped by 30% after the fold.",
        "Bearer tokens are sent in headers.",
        "passwordless login is enabled for staff",
        "the secrets manager syncs at midnight",
    ]
    return [Case(t, "prose", "prose", False) for t in texts]


def _identifiers(rng: random.Random) -> list[Case]:
    texts = [
        "from huggingface_hub import hf_hub_download",
        "model = hf_loadPretrainedTokenizerFromDiskCache(path)",
        "static inline void sk_buff_head_init(struct sk_buff_head *list)",
        "The task-queue is sk-learn-compatible-and-risk-aware-by-default.",
        "def get_api_key(self) -> str:",
        "PASSWORD_MIN_LENGTH = 8",
        "max_tokens = 4096",
        "token_count += 1",
        "tokenizer = AutoTokenizer.from_pretrained(name)",
        "password_hash = bcrypt.hashpw(pw, salt)",
        "if not api_key:",
        "api_key: str | None = None",
        "class TokenBudget:",
        "github_pat_scopes_required_for_actions_workflow = ['repo']",
        "npm_config_registry=https://registry.npmjs.org/",
        'AKIA_PREFIX = "AKIA"',
        "ghp_prefix_length = 4",
        "secret_name: my-app-secret",
        "token_type: bearer",
        'primary_key = "id"',
        'sort_key = "created_at"',
        'cache_key = f"user:{uid}"',
        'pad_token = "[PAD]"',
        'eos_token: "</s>"',
        "aws_access_key_id = None",
        "if isPasswordValid(input) {",
        'const passwordInput = document.querySelector("#password");',
        '<input type="password" name="password" autocomplete="current-password">',
        "password: string;",
        "apiKey?: string;",
        json.dumps({"password": {"type": "string", "minLength": 8}}),
        "api_keys: list[str] = []",
        "tokens: 4000",
        "secret_scanning: enabled",
        "let token = lexer.next_token()?;",
        "password = password or prompt()",
        "user.set_password(new_password)",
        "ACCESS_TOKEN_EXPIRE_MINUTES = 30",
        "private_key_path = Path('~/.ssh/id_ed25519')",
        "token = tokenizer.encode(text)",
        "hf_hub_enable_hf_transfer_downloadsForLargeFiles()",
        "xoxb_scopes = ['chat:write']",
        "SG.example.com is a placeholder domain",
        "skip_token_validation_forLocalDevelopmentOnly",
        "refresh_token_rotation_enabled = True",
        "OAuth2PasswordBearer(tokenUrl='token')",
        "keyof typeof tokens",
        "secrets.token_hex(16)",
        "jwt.decode(token, key, algorithms=['HS256'])",
        # code that obtains a credential when it runs: a cmdlet, a command, a lookup
        "$cred = Get-Credential -UserName deploy -Message 'Deploy account'",
        "$apiKey = Get-Secret -Name OpenAIKey -Vault CI -AsPlainText",
        '$dbPassword = Read-Host -Prompt "Password for $dbUser" -AsSecureString',
        "$secret = (Get-AzKeyVaultSecret -VaultName ops -Name api).SecretValue",
        "$token = $env:GITHUB_TOKEN",
        "$Env:NPM_TOKEN = Get-Content -Raw ~/.npm-token",
        "$pw = ConvertTo-SecureString $plainText -AsPlainText -Force",
        "password = Read-Host -AsSecureString 'vault'",
        'let token = std::env::var("GITHUB_TOKEN")?;',
        "export GH_TOKEN=$(gh auth token)",
        "NPM_TOKEN=`cat ~/.npm-token`",
        "api_key = input('API key: ')",
        "const secret = prompt('Enter the shared secret');",
    ]
    return [Case(t, "identifier", "identifier", False) for t in texts]

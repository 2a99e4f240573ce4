"""A held-out redaction corpus, written blind to the engine's rules.

The cases were written from the formats the public secret scanners document (gitleaks' rules,
trufflehog's detectors, detect-secrets' plugins) and from vendor documentation, in the places
secrets turn up in a coding agent's session: ``env`` and ``cat .env`` output, ``git config``,
``docker inspect``, ``kubectl get secret -o yaml``, CI yaml, Terraform, notebooks, curl
commands, log lines, stack traces, chat messages in English and Chinese. Nobody who wrote them
looked at the redaction engine or ran it on them, so its score here is an honest estimate.

Every credential is ASSEMBLED AT RUN TIME from split pieces and seeded random bodies: no literal
token shape is committed (GitHub push protection trips on them otherwise). Keep it that way.

A positive's ``secret`` is the exact part that must not survive redaction: the token itself,
the value of a labelled assignment, the password of a connection string, one full base64 line of
a private key's body, the whole JWT. A negative must come back untouched.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ._redact_corpus import Case

__all__ = ["holdout"]

_SEED = 0x5EC12E7

_ALNUM = string.ascii_letters + string.digits
_LOWER = string.ascii_lowercase + string.digits
_UPPER = string.ascii_uppercase + string.digits
_HEX = "0123456789abcdef"
_B64 = _ALNUM + "+/"
_B64URL = _ALNUM + "-_"
_AWS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_STRONG = _ALNUM + "!#%*+-=@^_~"

_USERS = ("dev", "alice", "bwang", "runner", "ubuntu", "li.wei", "mkovacs", "jdoe")
_WORDS = (
    "Harbor",
    "Cobalt",
    "Falcon",
    "Orchid",
    "Maple",
    "Quartz",
    "Velvet",
    "Nimbus",
    "Saffron",
    "Glacier",
    "Juniper",
    "Copper",
    "Meadow",
    "Lantern",
    "Thistle",
    "Ember",
)
_UNICODE_WORDS = ("Pässwörd", "Grüße", "Ñandú", "Crème", "Smørrebrød", "Zürich", "Ærø", "Čaj")
_ZH_WORDS = ("天王盖地虎", "宝塔镇河妖", "芝麻开门", "长风破浪", "青山绿水", "月落乌啼")

# Pieces of the armour lines, split so no key header is committed whole.
_PK = "PRIV" + "ATE KEY"
_DASH = "-" * 5


class _Rand:
    """Seeded random bodies for the generated credentials."""

    def __init__(self, seed: int) -> None:
        self._r = random.Random(seed)

    def s(self, alphabet: str, n: int) -> str:
        return "".join(self._r.choice(alphabet) for _ in range(n))

    def alnum(self, n: int) -> str:
        return self.s(_ALNUM, n)

    def lower(self, n: int) -> str:
        return self.s(_LOWER, n)

    def upper(self, n: int) -> str:
        return self.s(_UPPER, n)

    def hex(self, n: int) -> str:
        return self.s(_HEX, n)

    def digits(self, n: int) -> str:
        return self.s("123456789", 1) + self.s(string.digits, n - 1)

    def b64(self, n: int) -> str:
        return self.s(_B64, n)

    def b64url(self, n: int) -> str:
        return self.s(_B64URL, n)

    def raw(self, n: int) -> bytes:
        return self._r.randbytes(n)

    def num(self, lo: int, hi: int) -> int:
        return self._r.randint(lo, hi)

    def choice(self, seq: Sequence[str]) -> str:
        return self._r.choice(seq)

    def uuid(self) -> str:
        h = self.hex(32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{self.choice('89ab')}{h[17:20]}-{h[20:]}"

    def human(self) -> str:
        """A password a person picks: two words, a symbol, a number."""
        a, b = self.choice(_WORDS), self.choice(_WORDS)
        return f"{a}{self.choice('!#%*-_.@+')}{b}{self.num(10, 2029)}"

    def strong(self, n: int) -> str:
        return self.alnum(1) + self.s(_STRONG, n - 2) + self.alnum(1)


def _fill(template: str, **values: str) -> str:
    out = template
    for key, value in values.items():
        out = out.replace("{" + key + "}", value)
    return out


def _camel(var: str) -> str:
    head, *rest = var.lower().split("_")
    return head + "".join(p.capitalize() for p in rest)


def _b64url_json(obj: object) -> str:
    raw = json.dumps(obj, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


# ---------------------------------------------------------------------------------------------
# provider: documented vendor shapes, each in two or three contexts
# ---------------------------------------------------------------------------------------------

_CTX: dict[str, tuple[str, ...]] = {
    "env": (
        "$ env | sort\nHOME=/home/{user}\nHOSTNAME=devbox-{n}\nLANG=C.UTF-8\n{var}={tok}\n"
        "PATH=/usr/local/bin:/usr/bin:/bin\nPWD=/home/{user}/src/app\nSHELL=/bin/bash",
        "$ printenv | grep -i {var_lower}\n{var}={tok}",
    ),
    "dotenv": (
        "$ cat .env\n# local settings, do not commit\nAPP_ENV=local\nPORT=80{n}\n{var}={tok}\n"
        "LOG_LEVEL=debug\n",
        "$ cat .env.production\nNODE_ENV=production\n{var}={tok}\nSENTRY_ENVIRONMENT=prod\n",
    ),
    "export": (
        "$ echo 'export {var}=\"{tok}\"' >> ~/.bashrc && source ~/.bashrc",
        "# ~/.zshrc\nexport EDITOR=nvim\nexport {var}={tok}\nalias k=kubectl\n",
    ),
    "jupyter": (
        'In [{n}]: import os\n    ...: os.environ["{var}"] = "{tok}"\n    ...: print("ok")\nok',
        "# %% [cell {n}]\n%env {var}={tok}\n",
    ),
    "curl": (
        '$ curl -sS https://{host} \\\n    -H "Authorization: Bearer {tok}" \\\n'
        '    -H "Accept: application/json"\n{"error":"unauthorized"}',
    ),
    "chat": (
        "this keeps failing with 401 and I can't see why. the key is {tok} - what am I doing "
        "wrong?",
        "Here's the token I'm using, in case it matters:\n\n{tok}\n\nThe request works in "
        "Postman but not from the script.",
        "ok I rotated it, the new one is {tok}. can you update the config and redeploy?",
    ),
    "chat_zh": (
        "帮我看一下为什么一直报 401，我用的 key 是 {tok}，是不是格式不对？",
        "新的密钥：{tok}\n你帮我把配置文件更新一下",
        "这个 token 还能用吗 {tok} 我昨天刚生成的",
    ),
    "chat_zh_tight": (
        "我的令牌是{tok}请帮我看看哪里配置错了",
        "key是{tok}，调用的时候一直报错",
    ),
    "log": (
        "2024-06-0{d}T14:22:07.412Z DEBUG client: POST https://{host} headers={'Authorization': "
        "'Bearer {tok}', 'User-Agent': 'python-requests/2.32.3'}",
        "[2024-06-0{d} 09:13:55,201] INFO  worker-{n} using credential {tok} for https://{host}",
    ),
    "ci": (
        "# .github/workflows/release.yml\njobs:\n  release:\n    runs-on: ubuntu-latest\n"
        "    env:\n      {var}: {tok}\n    steps:\n      - uses: actions/checkout@v4\n"
        "      - run: make release",
        '# .gitlab-ci.yml\nvariables:\n  {var}: "{tok}"\ndeploy:\n  stage: deploy\n'
        "  script:\n    - ./deploy.sh",
    ),
    "docker_run": ("$ docker run --rm -e {var}={tok} -p 8080:8080 ghcr.io/acme/worker:1.{n}.0",),
    "tfvars": (
        '# terraform.tfvars\nregion      = "eu-central-1"\n{var_lower} = "{tok}"\n'
        'environment = "staging"',
    ),
    "yaml": (
        '# config/settings.yaml\nservice:\n  name: ingest\n  {var_lower}: "{tok}"\n  retries: 3',
    ),
    "json": ('{\n  "service": "ingest",\n  "{var_camel}": "{tok}",\n  "retries": 3\n}',),
    "bare": ("error: the server rejected {tok} (token expired or revoked)",),
}

_Maker = Callable[[_Rand], str]


@dataclass(frozen=True)
class _Fmt:
    shape: str
    var: str
    host: str
    make: _Maker
    contexts: tuple[str, ...]


def _openai_project(g: _Rand) -> str:
    return "sk-" + "proj-" + g.b64url(74) + "T3Blbk" + "FJ" + g.b64url(74)


def _anthropic(g: _Rand) -> str:
    return "sk-" + "ant-" + "api03-" + g.b64url(93) + "AA"


def _mapbox(g: _Rand) -> str:
    head = _b64url_json({"u": g.choice(("acme-maps", "geo-team", "fleetviz")), "a": g.lower(25)})
    return "sk." + head + "." + g.b64url(22)


def _one_password(g: _Rand) -> str:
    body = {
        "signInAddress": "my.1password.com",
        "userAuth": {"method": "SRPg-4096", "alg": "PBES2g-HS256", "salt": g.b64url(22)},
        "email": g.lower(12) + "@1passwordserviceaccounts.com",
        "srpX": g.hex(64),
        "muk": {"alg": "A256GCM", "kid": "mp", "k": g.b64url(43)},
        "secretKey": "A3-" + g.upper(6) + "-" + g.upper(11),
        "deviceUuid": g.lower(26),
    }
    raw = json.dumps(body, separators=(",", ":")).encode()
    return "ops_" + base64.b64encode(raw).decode().rstrip("=")


def _discord_bot(g: _Rand) -> str:
    user_id = base64.b64encode(g.digits(18).encode()).decode().rstrip("=")
    return user_id + "." + g.b64url(6) + "." + g.b64url(38)


_FORMATS: tuple[_Fmt, ...] = (
    _Fmt(
        "aws-access-key-id",
        "AWS_ACCESS_KEY_ID",
        "sts.amazonaws.com/",
        lambda g: "AK" + "IA" + g.s(_AWS, 16),
        (
            "$ cat ~/.aws/credentials\n[default]\naws_access_key_id = {tok}\nregion = eu-west-1\n",
            "env",
            "chat",
        ),
    ),
    _Fmt(
        "aws-temporary-access-key-id",
        "AWS_ACCESS_KEY_ID",
        "sts.amazonaws.com/",
        lambda g: "AS" + "IA" + g.s(_AWS, 16),
        (
            "$ aws sts assume-role --role-arn arn:aws:iam::123456789012:role/deploy "
            '--role-session-name ci\n{\n    "Credentials": {\n        "AccessKeyId": "{tok}",\n'
            '        "Expiration": "2024-06-11T15:04:05+00:00"\n    }\n}',
            "docker_run",
        ),
    ),
    _Fmt(
        "github-pat-classic",
        "GITHUB_TOKEN",
        "api.github.com/user",
        lambda g: "gh" + "p_" + g.alnum(36),
        (
            "$ git clone https://{tok}@github.com/acme/platform.git\nCloning into 'platform'...",
            "chat_zh_tight",
            "export",
        ),
    ),
    _Fmt(
        "github-fine-grained-pat",
        "GH_TOKEN",
        "api.github.com/user",
        lambda g: "github" + "_pat_" + g.alnum(22) + "_" + g.alnum(59),
        (
            "ci",
            'curl -H "Authorization: token {tok}" '
            "https://api.github.com/repos/acme/platform/issues?state=open",
        ),
    ),
    _Fmt(
        "github-oauth-token",
        "GITHUB_TOKEN",
        "api.github.com/graphql",
        lambda g: "gh" + "o_" + g.alnum(36),
        (
            "$ cat ~/.config/gh/hosts.yml\ngithub.com:\n    user: {user}\n"
            "    oauth_token: {tok}\n    git_protocol: https\n",
            "log",
        ),
    ),
    _Fmt(
        "github-app-installation-token",
        "GITHUB_TOKEN",
        "api.github.com/installation/repositories",
        lambda g: "gh" + "s_" + g.alnum(36),
        (
            "$ git remote -v\norigin\thttps://x-access-token:{tok}@github.com/acme/infra.git "
            "(fetch)\norigin\thttps://x-access-token:{tok}@github.com/acme/infra.git (push)",
            "bare",
        ),
    ),
    _Fmt(
        "gitlab-pat",
        "GITLAB_TOKEN",
        "gitlab.com/api/v4/user",
        lambda g: "gl" + "pat-" + g.b64url(20),
        (
            "$ git config --get-regexp '^url\\.'\nurl.https://oauth2:{tok}@gitlab.com/.insteadof "
            "https://gitlab.com/",
            'curl --header "PRIVATE-TOKEN: {tok}" '
            '"https://gitlab.example.com/api/v4/projects?owned=true"',
        ),
    ),
    _Fmt(
        "gitlab-runner-token",
        "RUNNER_TOKEN",
        "gitlab.com/api/v4/runners/verify",
        lambda g: "gl" + "rt-" + g.b64url(20),
        (
            '$ cat /etc/gitlab-runner/config.toml\nconcurrent = 4\n\n[[runners]]\n  name = "docker-'
            'runner"\n  url = "https://gitlab.com/"\n  token = "{tok}"\n  executor = "docker"',
            "chat",
        ),
    ),
    _Fmt(
        "slack-bot-token",
        "SLACK_BOT_TOKEN",
        "slack.com/api/chat.postMessage",
        lambda g: "xo" + "xb-" + g.digits(12) + "-" + g.digits(13) + "-" + g.alnum(24),
        (
            'from slack_sdk import WebClient\n\nclient = WebClient(token="{tok}")\n'
            'client.chat_postMessage(channel="#deploys", text="done")',
            "dotenv",
            "chat_zh",
        ),
    ),
    _Fmt(
        "slack-user-token",
        "SLACK_USER_TOKEN",
        "slack.com/api/auth.test",
        lambda g: (
            "xo" + "xp-" + g.digits(12) + "-" + g.digits(12) + "-" + g.digits(13) + "-" + g.hex(32)
        ),
        (
            "curl -s -X POST https://slack.com/api/auth.test -H "
            '"Authorization: Bearer {tok}"\n{"ok":false,"error":"invalid_auth"}',
            "json",
        ),
    ),
    _Fmt(
        "slack-app-token",
        "SLACK_APP_TOKEN",
        "slack.com/api/apps.connections.open",
        lambda g: "xa" + "pp-1-A" + g.upper(10) + "-" + g.digits(13) + "-" + g.hex(64),
        ("dotenv", "export"),
    ),
    _Fmt(
        "slack-webhook-url",
        "SLACK_WEBHOOK_URL",
        "hooks.slack.com",
        lambda g: (
            "https://hooks.slack"
            + ".com/services/T"
            + g.upper(8)
            + "/B"
            + g.upper(10)
            + "/"
            + g.alnum(24)
        ),
        (
            "curl -X POST -H 'Content-type: application/json' "
            '--data \'{"text":"Deploy finished"}\' {tok}',
            "chat",
        ),
    ),
    _Fmt(
        "discord-bot-token",
        "DISCORD_TOKEN",
        "discord.com/api/v10/users/@me",
        _discord_bot,
        (
            "import discord\n\nbot = discord.Client(intents=discord.Intents.default())\n"
            'bot.run("{tok}")',
            "dotenv",
        ),
    ),
    _Fmt(
        "discord-webhook-url",
        "DISCORD_WEBHOOK",
        "discord.com",
        lambda g: "https://discord" + ".com/api/webhooks/" + g.digits(19) + "/" + g.b64url(68),
        (
            "json",
            'requests.post("{tok}", json={"content": "nightly build failed"}, timeout=10)',
        ),
    ),
    _Fmt(
        "telegram-bot-token",
        "TELEGRAM_BOT_TOKEN",
        "api.telegram.org",
        lambda g: g.digits(10) + ":AA" + g.b64url(33),
        (
            '$ curl https://api.telegram.org/bot{tok}/getMe\n{"ok":true,"result":{"is_bot":true,'
            '"username":"acme_alerts_bot"}}',
            "chat_zh",
        ),
    ),
    _Fmt(
        "stripe-secret-key",
        "STRIPE_SECRET_KEY",
        "api.stripe.com/v1/charges",
        lambda g: "sk" + "_live_" + g.alnum(g.num(24, 99)),
        (
            "curl https://api.stripe.com/v1/charges -u {tok}: -d amount=2000 -d currency=usd",
            'import stripe\n\nstripe.api_key = "{tok}"\nstripe.Customer.list(limit=3)',
            "env",
        ),
    ),
    _Fmt(
        "stripe-webhook-secret",
        "STRIPE_WEBHOOK_SECRET",
        "localhost:4242/webhook",
        lambda g: "wh" + "sec_" + g.alnum(32),
        (
            "$ stripe listen --forward-to localhost:4242/webhook\n> Ready! You are using Stripe "
            "API Version [2024-04-10]. Your webhook signing secret is {tok} (^C to quit)",
            "export",
        ),
    ),
    _Fmt(
        "twilio-api-key",
        "TWILIO_API_KEY",
        "api.twilio.com/2010-04-01/Accounts.json",
        lambda g: "S" + "K" + g.hex(32),
        (
            'from twilio.rest import Client\n\nclient = Client("{tok}", api_secret, account_sid)',
            "dotenv",
        ),
    ),
    _Fmt(
        "sendgrid-api-key",
        "SENDGRID_API_KEY",
        "api.sendgrid.com/v3/mail/send",
        lambda g: "S" + "G." + g.b64url(22) + "." + g.b64url(43),
        (
            'sg = SendGridAPIClient("{tok}")\nresponse = sg.send(message)',
            "export",
        ),
    ),
    _Fmt(
        "mailgun-api-key",
        "MAILGUN_API_KEY",
        "api.mailgun.net/v3/domains",
        lambda g: "key" + "-" + g.hex(32),
        (
            'curl -s --user "api:{tok}" https://api.mailgun.net/v3/mg.acme.io/messages '
            "-F from=noreply@mg.acme.io -F to=ops@acme.io -F subject=test -F text=hi",
            "dotenv",
        ),
    ),
    _Fmt(
        "mailchimp-api-key",
        "MAILCHIMP_API_KEY",
        "us14.api.mailchimp.com/3.0/ping",
        lambda g: g.hex(32) + "-us" + str(g.num(1, 21)),
        ("json", "chat"),
    ),
    _Fmt(
        "brevo-api-key",
        "BREVO_API_KEY",
        "api.brevo.com/v3/account",
        lambda g: "xkey" + "sib-" + g.hex(64) + "-" + g.alnum(16),
        (
            "env",
            "configuration = sib_api_v3_sdk.Configuration()\n"
            "configuration.api_key['api-key'] = '{tok}'",
        ),
    ),
    _Fmt(
        "openai-project-key",
        "OPENAI_API_KEY",
        "api.openai.com/v1/models",
        _openai_project,
        (
            'from openai import OpenAI\n\nclient = OpenAI(api_key="{tok}")\n'
            'resp = client.responses.create(model="gpt-4.1-mini", input="ping")',
            "export",
            "chat_zh",
        ),
    ),
    _Fmt(
        "openai-legacy-key",
        "OPENAI_API_KEY",
        "api.openai.com/v1/chat/completions",
        lambda g: "sk-" + g.alnum(20) + "T3Blbk" + "FJ" + g.alnum(20),
        ("jupyter", "log"),
    ),
    _Fmt(
        "anthropic-api-key",
        "ANTHROPIC_API_KEY",
        "api.anthropic.com/v1/messages",
        _anthropic,
        (
            'import anthropic\n\nclient = anthropic.Anthropic(api_key="{tok}")',
            "curl https://api.anthropic.com/v1/messages \\\n"
            '  -H "x-api-key: {tok}" \\\n  -H "anthropic-version: 2023-06-01" \\\n'
            '  -H "content-type: application/json" -d @request.json',
            "dotenv",
        ),
    ),
    _Fmt(
        "huggingface-token",
        "HF_TOKEN",
        "huggingface.co/api/whoami-v2",
        lambda g: "hf" + "_" + g.s(string.ascii_letters, 34),
        (
            "$ huggingface-cli login --token {tok}\nToken is valid (permission: write).\n"
            "Your token has been saved to /home/dev/.cache/huggingface/token",
            "jupyter",
        ),
    ),
    _Fmt(
        "groq-api-key",
        "GROQ_API_KEY",
        "api.groq.com/openai/v1/models",
        lambda g: "gs" + "k_" + g.alnum(52),
        ("export", 'from groq import Groq\n\nclient = Groq(api_key="{tok}")'),
    ),
    _Fmt(
        "xai-api-key",
        "XAI_API_KEY",
        "api.x.ai/v1/models",
        lambda g: "xa" + "i-" + g.alnum(80),
        ("curl", "dotenv"),
    ),
    _Fmt(
        "replicate-api-token",
        "REPLICATE_API_TOKEN",
        "api.replicate.com/v1/account",
        lambda g: "r8" + "_" + g.alnum(37),
        ("export", "jupyter"),
    ),
    _Fmt(
        "openrouter-api-key",
        "OPENROUTER_API_KEY",
        "openrouter.ai/api/v1/auth/key",
        lambda g: "sk-" + "or-v1-" + g.hex(64),
        ("json", "chat_zh_tight"),
    ),
    _Fmt(
        "perplexity-api-key",
        "PERPLEXITY_API_KEY",
        "api.perplexity.ai/chat/completions",
        lambda g: "pp" + "lx-" + g.alnum(48),
        ("dotenv", "chat"),
    ),
    _Fmt(
        "google-api-key",
        "GOOGLE_API_KEY",
        "maps.googleapis.com/maps/api/geocode/json",
        lambda g: "AI" + "za" + g.b64url(35),
        (
            "GET https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key={tok} "
            "-> 200 OK (143 ms)",
            "json",
            "chat",
        ),
    ),
    _Fmt(
        "google-oauth-client-secret",
        "GOOGLE_CLIENT_SECRET",
        "oauth2.googleapis.com/token",
        lambda g: "GOC" + "SPX-" + g.b64url(28),
        (
            '$ cat client_secret.json\n{"installed":{"client_id":"'
            '{n}4821993-abc123def456.apps.googleusercontent.com","project_id":"acme-cli",'
            '"auth_uri":"https://accounts.google.com/o/oauth2/auth","client_secret":"{tok}",'
            '"redirect_uris":["http://localhost"]}}',
            "dotenv",
        ),
    ),
    _Fmt(
        "google-oauth-access-token",
        "GOOGLE_ACCESS_TOKEN",
        "www.googleapis.com/drive/v3/files",
        lambda g: "ya" + "29." + g.b64url(g.num(150, 210)),
        ("curl", "log"),
    ),
    _Fmt(
        "azure-ad-client-secret",
        "AZURE_CLIENT_SECRET",
        "login.microsoftonline.com",
        lambda g: g.alnum(3) + g.digits(1) + "Q~" + g.s(_ALNUM + "_~.-", 34),
        (
            "$ az ad sp create-for-rbac --name ci-deployer --role contributor\n{\n"
            '  "appId": "{uuid}",\n  "displayName": "ci-deployer",\n  "password": "{tok}",\n'
            '  "tenant": "{uuid2}"\n}',
            "tfvars",
        ),
    ),
    _Fmt(
        "digitalocean-pat",
        "DIGITALOCEAN_TOKEN",
        "api.digitalocean.com/v2/account",
        lambda g: "do" + "p_v1_" + g.hex(64),
        (
            "$ doctl auth init --access-token {tok}\nValidating token... OK",
            "export",
        ),
    ),
    _Fmt(
        "npm-access-token",
        "NPM_TOKEN",
        "registry.npmjs.org/-/whoami",
        lambda g: "np" + "m_" + g.alnum(36),
        (
            "$ cat ~/.npmrc\nregistry=https://registry.npmjs.org/\n"
            "//registry.npmjs.org/:_authToken={tok}\n",
            "ci",
            "$ docker build --build-arg NPM_TOKEN={tok} -t acme/web:latest .",
        ),
    ),
    _Fmt(
        "pypi-upload-token",
        "TWINE_PASSWORD",
        "upload.pypi.org/legacy/",
        lambda g: "pypi-" + "AgEIcHlwaS5vcmc" + g.b64url(g.num(120, 180)),
        (
            "$ cat ~/.pypirc\n[distutils]\nindex-servers = pypi\n\n[pypi]\n"
            "  username = __token__\n  password = {tok}\n",
            "$ twine upload -u __token__ -p {tok} dist/*\nUploading distributions to "
            "https://upload.pypi.org/legacy/",
        ),
    ),
    _Fmt(
        "rubygems-api-key",
        "GEM_HOST_API_KEY",
        "rubygems.org/api/v1/gems",
        lambda g: "rubygems" + "_" + g.hex(48),
        (
            "$ cat ~/.gem/credentials\n---\n:rubygems_api_key: {tok}\n",
            "export",
        ),
    ),
    _Fmt(
        "dockerhub-pat",
        "DOCKERHUB_TOKEN",
        "hub.docker.com/v2/users/login",
        lambda g: "dckr" + "_pat_" + g.b64url(27),
        (
            "$ echo {tok} | docker login -u acmebot --password-stdin\nLogin Succeeded",
            "ci",
        ),
    ),
    _Fmt(
        "shopify-access-token",
        "SHOPIFY_ACCESS_TOKEN",
        "acme-store.myshopify.com/admin/api/2024-04/shop.json",
        lambda g: "shp" + "at_" + g.hex(32),
        (
            "curl -X GET https://acme-store.myshopify.com/admin/api/2024-04/products.json "
            '-H "X-Shopify-Access-Token: {tok}"',
            "dotenv",
        ),
    ),
    _Fmt(
        "square-access-token",
        "SQUARE_ACCESS_TOKEN",
        "connect.squareup.com/v2/locations",
        lambda g: "sq0" + "atp-" + g.b64url(22),
        (
            "json",
            "from square.client import Client\n\n"
            'client = Client(access_token="{tok}", environment="production")',
        ),
    ),
    _Fmt(
        "databricks-token",
        "DATABRICKS_TOKEN",
        "adb-1234567890.12.azuredatabricks.net/api/2.0/clusters/list",
        lambda g: "da" + "pi" + g.hex(32),
        (
            "$ cat ~/.databrickscfg\n[DEFAULT]\nhost = https://adb-{n}4821.12.azuredatabricks.net\n"
            "token = {tok}\n",
            "export",
        ),
    ),
    _Fmt(
        "dynatrace-api-token",
        "DT_API_TOKEN",
        "abc12345.live.dynatrace.com/api/v2/metrics",
        lambda g: "dt0" + "c01." + g.upper(24) + "." + g.upper(64),
        (
            "curl -H 'Authorization: Api-Token {tok}' "
            "https://abc12345.live.dynatrace.com/api/v2/entities",
            "dotenv",
        ),
    ),
    _Fmt(
        "grafana-service-account-token",
        "GRAFANA_TOKEN",
        "grafana.acme.io/api/dashboards/db",
        lambda g: "gl" + "sa_" + g.alnum(32) + "_" + g.hex(8),
        ("curl", "yaml"),
    ),
    _Fmt(
        "newrelic-user-api-key",
        "NEW_RELIC_API_KEY",
        "api.newrelic.com/graphql",
        lambda g: "NR" + "AK-" + g.upper(27),
        ("dotenv", "json"),
    ),
    _Fmt(
        "sentry-user-token",
        "SENTRY_AUTH_TOKEN",
        "sentry.io/api/0/projects/",
        lambda g: "sntry" + "u_" + g.hex(64),
        (
            "$ cat ~/.sentryclirc\n[defaults]\norg = acme\n\n[auth]\ntoken={tok}\n",
            "export",
        ),
    ),
    _Fmt(
        "postman-api-key",
        "POSTMAN_API_KEY",
        "api.getpostman.com/me",
        lambda g: "PM" + "AK-" + g.hex(24) + "-" + g.hex(34),
        (
            'curl --location "https://api.getpostman.com/collections" --header "X-Api-Key: {tok}"',
            "chat",
        ),
    ),
    _Fmt(
        "linear-api-key",
        "LINEAR_API_KEY",
        "api.linear.app/graphql",
        lambda g: "lin" + "_api_" + g.alnum(40),
        (
            "curl -X POST https://api.linear.app/graphql -H 'Content-Type: application/json' "
            "-H 'Authorization: {tok}' --data '{ \"query\": \"{ viewer { id name } }\" }'",
            "dotenv",
        ),
    ),
    _Fmt(
        "notion-integration-token",
        "NOTION_TOKEN",
        "api.notion.com/v1/search",
        lambda g: "nt" + "n_" + g.digits(11) + g.alnum(35),
        (
            'from notion_client import Client\n\nnotion = Client(auth="{tok}")',
            "chat_zh",
        ),
    ),
    _Fmt(
        "atlassian-api-token",
        "JIRA_API_TOKEN",
        "acme.atlassian.net/rest/api/3/myself",
        lambda g: "ATA" + "TT3" + g.alnum(177) + "=" + g.s("0123456789ABCDEF", 8),
        (
            'curl -u "{user}@acme.io:{tok}" -H "Accept: application/json" '
            "https://acme.atlassian.net/rest/api/3/search?jql=project=OPS",
            "json",
        ),
    ),
    _Fmt(
        "vault-service-token",
        "VAULT_TOKEN",
        "vault.acme.internal:8200/v1/auth/token/lookup-self",
        lambda g: "hv" + "s.CAESI" + g.b64url(86),
        (
            "$ vault login -method=oidc\nSuccess! You are now authenticated.\n\n"
            "Key                  Value\n---                  -----\ntoken                {tok}\n"
            "token_accessor       {acc}\ntoken_duration       768h\ntoken_renewable      true",
            "export",
        ),
    ),
    _Fmt(
        "terraform-cloud-token",
        "TF_TOKEN_app_terraform_io",
        "app.terraform.io/api/v2/account/details",
        lambda g: g.lower(14) + ".atlas" + "v1." + g.alnum(67),
        (
            '$ cat ~/.terraform.d/credentials.tfrc.json\n{\n  "credentials": {\n'
            '    "app.terraform.io": {\n      "token": "{tok}"\n    }\n  }\n}',
            "env",
        ),
    ),
    _Fmt(
        "age-secret-key",
        "SOPS_AGE_KEY",
        "",
        lambda g: "AGE-SECRET-" + "KEY-1" + g.s(_BECH32.upper(), 58),
        (
            "$ age-keygen\n# created: 2024-06-11T10:02:44+08:00\n# public key: age1{pub}\n{tok}",
            "chat",
        ),
    ),
    _Fmt(
        "heroku-api-key",
        "HEROKU_API_KEY",
        "api.heroku.com/account",
        lambda g: "HRKU" + "-AA" + g.b64url(58),
        (
            "$ cat ~/.netrc\nmachine api.heroku.com\n  login {user}@acme.io\n  password {tok}\n"
            "machine git.heroku.com\n  login {user}@acme.io\n  password {tok}\n",
            "export",
        ),
    ),
    _Fmt(
        "flyio-token",
        "FLY_API_TOKEN",
        "api.fly.io/graphql",
        lambda g: "fo" + "1_" + g.b64url(43),
        ("ci", "export"),
    ),
    _Fmt(
        "alibaba-access-key-id",
        "ALIBABA_CLOUD_ACCESS_KEY_ID",
        "ecs.aliyuncs.com",
        lambda g: "LT" + "AI" + g.alnum(20),
        (
            '$ cat ~/.aliyun/config.json\n{\n  "current": "default",\n  "profiles": [\n    {\n'
            '      "name": "default",\n      "mode": "AK",\n      "access_key_id": "{tok}",\n'
            '      "region_id": "cn-hangzhou"\n    }\n  ]\n}',
            "env",
        ),
    ),
    _Fmt(
        "artifactory-api-key",
        "ARTIFACTORY_API_KEY",
        "acme.jfrog.io/artifactory/api/system/ping",
        lambda g: "AK" + "Cp" + g.alnum(69),
        (
            "curl -H 'X-JFrog-Art-Api: {tok}' -T build.tgz "
            "https://acme.jfrog.io/artifactory/generic-local/build.tgz",
            "$ cat ~/.config/pip/pip.conf\n[global]\nindex-url = "
            "https://ci:{tok}@acme.jfrog.io/artifactory/api/pypi/pypi/simple\n",
        ),
    ),
    _Fmt(
        "supabase-access-token",
        "SUPABASE_ACCESS_TOKEN",
        "api.supabase.com/v1/projects",
        lambda g: "sb" + "p_" + g.hex(40),
        (
            "$ supabase login --token {tok}\nYou are now logged in. Happy coding!",
            "dotenv",
        ),
    ),
    _Fmt(
        "tailscale-auth-key",
        "TS_AUTHKEY",
        "api.tailscale.com/api/v2/tailnet/-/devices",
        lambda g: "tskey" + "-auth-k" + g.alnum(10) + "CNTRL-" + g.alnum(33),
        (
            "$ sudo tailscale up --authkey={tok} --hostname=ci-runner-{n}\nSuccess.",
            "ci",
        ),
    ),
    _Fmt(
        "langsmith-api-key",
        "LANGSMITH_API_KEY",
        "api.smith.langchain.com/info",
        lambda g: "lsv2" + "_pt_" + g.hex(32) + "_" + g.hex(10),
        ("dotenv", "jupyter"),
    ),
    _Fmt(
        "mapbox-secret-token",
        "MAPBOX_SECRET_TOKEN",
        "api.mapbox.com/tokens/v2",
        _mapbox,
        ("dotenv", "chat"),
    ),
    _Fmt(
        "1password-service-account-token",
        "OP_SERVICE_ACCOUNT_TOKEN",
        "my.1password.com",
        _one_password,
        ("export", "ci"),
    ),
    _Fmt(
        "nvidia-api-key",
        "NVIDIA_API_KEY",
        "integrate.api.nvidia.com/v1/models",
        lambda g: "nv" + "api-" + g.b64url(64),
        (
            "export",
            'client = OpenAI(base_url="https://integrate.api.nvidia.com/v1", api_key="{tok}")',
        ),
    ),
)


def _providers(g: _Rand) -> list[Case]:
    out: list[Case] = []
    for f in _FORMATS:
        for ctx in f.contexts:
            tok = f.make(g)
            template = g.choice(_CTX[ctx]) if ctx in _CTX else ctx
            text = _fill(
                template,
                tok=tok,
                var=f.var,
                var_lower=f.var.lower(),
                var_camel=_camel(f.var),
                host=f.host,
                user=g.choice(_USERS),
                n=str(g.num(2, 97)),
                d=str(g.num(1, 9)),
                uuid=g.uuid(),
                uuid2=g.uuid(),
                acc=g.b64url(24),
                pub=g.s(_BECH32, 58),
            )
            out.append(Case(text, "provider", f.shape, True, tok))
    return out


# ---------------------------------------------------------------------------------------------
# private-key: armoured blocks, whole, escaped, indented, prefixed, cut
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Pem:
    begin: str
    lines: tuple[str, ...]
    end: str
    headers: tuple[str, ...] = ()

    def block(self, sep: str = "\n") -> str:
        head = [*self.headers, ""] if self.headers else []
        return sep.join([self.begin, *head, *self.lines, self.end])

    @property
    def secret(self) -> str:
        return self.lines[len(self.lines) // 2]


def _wrap(data: bytes, width: int = 64) -> tuple[str, ...]:
    body = base64.b64encode(data).decode()
    return tuple(body[i : i + width] for i in range(0, len(body), width))


def _armour(kind: str) -> tuple[str, str]:
    return f"{_DASH}BEGIN {kind}{_DASH}", f"{_DASH}END {kind}{_DASH}"


def _rsa_pkcs1(g: _Rand) -> _Pem:
    der = bytes.fromhex("308204a40201000282010100") + g.raw(1180)
    begin, end = _armour("RSA " + _PK)
    return _Pem(begin, _wrap(der), end)


def _pkcs8(g: _Rand) -> _Pem:
    prefix = "308204be020100300d06092a864886f70d0101010500048204a8308204a40201000282010100"
    der = bytes.fromhex(prefix) + g.raw(1180)
    begin, end = _armour(_PK)
    return _Pem(begin, _wrap(der), end)


def _ec(g: _Rand) -> _Pem:
    der = (
        bytes.fromhex("30770201010420")
        + g.raw(32)
        + bytes.fromhex("a00a06082a8648ce3d030107a14403420004")
        + g.raw(64)
    )
    begin, end = _armour("EC " + _PK)
    return _Pem(begin, _wrap(der), end)


def _openssh(g: _Rand, size: int) -> _Pem:
    head = b"openssh-key-v1\x00\x00\x00\x00\x04none\x00\x00\x00\x04none\x00\x00\x00\x00"
    begin, end = _armour("OPENSSH " + _PK)
    return _Pem(begin, _wrap(head + g.raw(size), 70), end)


def _encrypted_pkcs8(g: _Rand) -> _Pem:
    der = bytes.fromhex("3082051c304e06092a864886f70d01050d3041") + g.raw(1290)
    begin, end = _armour("ENCRYPTED " + _PK)
    return _Pem(begin, _wrap(der), end)


def _legacy_encrypted_rsa(g: _Rand) -> _Pem:
    begin, end = _armour("RSA " + _PK)
    iv = g.s("0123456789ABCDEF", 32)
    headers = ("Proc-Type: 4,ENCRYPTED", f"DEK-Info: AES-256-CBC,{iv}")
    return _Pem(begin, _wrap(g.raw(1192)), end, headers)


def _dsa(g: _Rand) -> _Pem:
    der = bytes.fromhex("308201bb02010002818100") + g.raw(432)
    begin, end = _armour("DSA " + _PK)
    return _Pem(begin, _wrap(der), end)


def _pgp(g: _Rand) -> _Pem:
    begin, end = _armour("PGP " + _PK + " BLOCK")
    lines = (*_wrap(bytes.fromhex("9507460466") + g.raw(1300)), "=" + g.b64(4))
    return _Pem(begin, lines, end, ("Comment: ops signing key",))


def _private_keys(g: _Rand) -> list[Case]:
    out: list[Case] = []

    def add(shape: str, text: str, pem: _Pem) -> None:
        assert pem.secret in text
        out.append(Case(text, "private-key", shape, True, pem.secret))

    k = _rsa_pkcs1(g)
    add("rsa-pkcs1", "$ cat ~/.ssh/id_rsa\n" + k.block() + "\n", k)
    k = _rsa_pkcs1(g)
    add("rsa-pkcs1", 'SIGNING_KEY = """' + k.block() + '\n"""\n', k)
    k = _rsa_pkcs1(g)
    add("rsa-pkcs1", "C:\\> type C:\\Users\\dev\\.ssh\\id_rsa\r\n" + k.block("\r\n") + "\r\n", k)
    k = _rsa_pkcs1(g)
    add("rsa-pkcs1", "$ terraform output -raw private_key_pem\n" + k.block() + "\n", k)

    k = _pkcs8(g)
    sa = (
        '{\n  "type": "service_account",\n  "project_id": "acme-prod-4821",\n'
        f'  "private_key_id": "{g.hex(40)}",\n'
        f'  "private_key": "{k.block(chr(92) + "n")}\\n",\n'
        '  "client_email": "deployer@acme-prod-4821.iam.gserviceaccount.com",\n'
        f'  "client_id": "{g.digits(21)}"\n}}'
    )
    add("pkcs8-json-escaped", sa, k)
    k = _pkcs8(g)
    add("pkcs8-dotenv-escaped", 'JWT_PRIVATE_KEY="' + k.block("\\n") + '\\n"\nJWT_TTL=900\n', k)
    k = _pkcs8(g)
    head = "\n".join([k.begin, *k.lines[:5]])
    add("pkcs8-truncated", "$ head -n 6 certs/server.key\n" + head, _Pem(k.begin, k.lines[:5], ""))
    k = _pkcs8(g)
    full = k.block()
    cut = full.index(k.lines[9]) + 23
    add(
        "pkcs8-truncated",
        full[:cut] + "\n... [output truncated: 1,214 more characters]",
        _Pem(k.begin, k.lines[:9], ""),
    )
    k = _pkcs8(g)
    add(
        "pkcs8-kubectl",
        "$ kubectl get secret web-tls -n prod -o jsonpath='{.data.tls\\.key}' | base64 -d\n"
        + k.block()
        + "\n",
        k,
    )

    k = _ec(g)
    params_b, params_e = _armour("EC PARAMETERS")
    add(
        "ec",
        "$ openssl ecparam -name prime256v1 -genkey\n"
        + f"{params_b}\nBggqhkjOPQMBBw==\n{params_e}\n"
        + k.block()
        + "\n",
        k,
    )
    k = _ec(g)
    indented = "\n".join("    " + line for line in k.block().split("\n"))
    add("ec-yaml-block", "tls:\n  cert: /etc/ssl/certs/api.pem\n  key: |\n" + indented + "\n", k)

    k = _openssh(g, 360)
    add("openssh-ed25519", "$ cat ~/.ssh/id_ed25519\n" + k.block() + "\n", k)
    k = _openssh(g, 2560)
    add(
        "openssh-rsa-heredoc",
        'resource "tls_private_key" "imported" {}\n\nlocals {\n  deploy_key = <<-EOT\n'
        + "\n".join("    " + line for line in k.block().split("\n"))
        + "\n  EOT\n}\n",
        k,
    )
    k = _openssh(g, 360)
    add(
        "openssh-docker-inspect",
        '$ docker inspect builder --format "{{json .Config.Env}}"\n["PATH=/usr/local/bin:'
        '/usr/bin","SSH_PRIVATE_KEY=' + k.block("\\n") + '\\n","GIT_SSH_COMMAND=ssh -o '
        'StrictHostKeyChecking=no"]',
        k,
    )
    k = _openssh(g, 360)
    add(
        "openssh-chat-zh",
        "这是我的私钥，ssh 一直报 invalid format，帮我看看是不是复制错了：\n```\n"
        + k.block()
        + "\n```",
        k,
    )
    k = _openssh(g, 360)
    add(
        "openssh-ci-secret",
        "# .github/workflows/deploy.yml (committed by mistake)\nenv:\n  DEPLOY_KEY: |\n"
        + "\n".join("    " + line for line in k.block().split("\n"))
        + "\n",
        k,
    )

    k = _encrypted_pkcs8(g)
    add("encrypted-pkcs8", "$ cat server.key\n" + k.block() + "\n", k)
    k = _legacy_encrypted_rsa(g)
    add("rsa-legacy-encrypted", "$ cat legacy/server.key\n" + k.block() + "\n", k)
    k = _dsa(g)
    add("dsa", "$ cat /etc/ssh/ssh_host_dsa_key\n" + k.block() + "\n", k)
    k = _pgp(g)
    add("pgp", "$ gpg --export-secret-keys --armor ops@acme.io\n" + k.block() + "\n", k)

    k = _rsa_pkcs1(g)
    diff = "\n".join("+" + line for line in k.block().split("\n"))
    add(
        "rsa-git-diff",
        "diff --git a/deploy/key.pem b/deploy/key.pem\nnew file mode 100644\n"
        f"index 0000000..{g.hex(7)}\n--- /dev/null\n+++ b/deploy/key.pem\n"
        f"@@ -0,0 +1,{len(k.lines) + 2} @@\n" + diff + "\n",
        k,
    )
    k = _pkcs8(g)
    add(
        "pkcs8-jupyter",
        "In [7]: print(open('keys/app.pem').read())\n" + k.block() + "\n\nIn [8]: ",
        k,
    )

    # PuTTY's own format: the Private-Lines body is the secret.
    priv = "AAAAI" + g.b64(43)
    ppk = (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-20240611\n"
        f"Public-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAI{g.b64(39)}\n{g.b64(8)}\n"
        f"Private-Lines: 1\n{priv}\nPrivate-MAC: {g.hex(64)}\n"
    )
    out.append(Case("$ cat deploy.ppk\n" + ppk, "private-key", "putty-ppk", True, priv))
    return out


# ---------------------------------------------------------------------------------------------
# connection-string: the password inside a URL, a JDBC URL, an ADO.NET or Azure string
# ---------------------------------------------------------------------------------------------


def _pw(g: _Rand, kind: str) -> str:
    if kind == "url":
        return g.alnum(4) + g.s(_ALNUM + "!*-_.~", g.num(10, 18)) + g.alnum(2)
    if kind == "pct":
        parts = [g.alnum(3), g.choice(("%40", "%23", "%24", "%2F", "%3A", "%25", "%26"))]
        parts += [g.alnum(4), g.choice(("%40", "%21", "%3F", "%2B")), g.alnum(5)]
        return "".join(parts)
    if kind == "human-url":
        a, b = g.choice(_WORDS), g.choice(_WORDS)
        return f"{a}{g.choice('!*-_.~')}{b}{g.num(10, 2029)}"
    if kind == "ado":
        return g.alnum(3) + g.s(_ALNUM + "!@#$%^*-_+", g.num(12, 20)) + g.alnum(1)
    if kind == "b64-88":
        return g.b64(86) + "=="
    if kind == "b64-44":
        return g.b64(43) + "="
    if kind == "sig":
        raw = base64.b64encode(g.raw(32)).decode()
        return raw.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
    return g.alnum(g.num(16, 32))


_CONN: tuple[tuple[str, str, str], ...] = (
    (
        "postgres-url",
        "url",
        "$ cat .env\nDATABASE_URL=postgres://app_user:{pw}@db.internal:5432/app_prod\n"
        "REDIS_URL=redis://cache:6379/0\n",
    ),
    (
        "postgres-sqlalchemy-url",
        "alnum",
        'engine = create_engine("postgresql+psycopg2://etl:{pw}@10.0.3.14:5432/warehouse", '
        "pool_pre_ping=True)",
    ),
    (
        "postgres-url-percent-encoded",
        "pct",
        '$ psql "postgresql://admin:{pw}@pg.acme.io:5432/postgres?sslmode=require"\n'
        'psql: error: connection to server at "pg.acme.io" (10.1.2.3), port 5432 failed: '
        "timeout expired",
    ),
    (
        "postgres-url-docker-inspect",
        "human-url",
        '$ docker inspect api --format "{{range .Config.Env}}{{println .}}{{end}}"\n'
        "PATH=/usr/local/bin:/usr/bin\nDATABASE_URL=postgresql://api:{pw}@postgres:5432/api\n"
        "PYTHONUNBUFFERED=1\n",
    ),
    (
        "postgres-url-log",
        "url",
        "2024-06-11 08:01:12,554 INFO  [alembic.runtime.migration] connecting to "
        "postgresql://migrator:{pw}@localhost:5433/app",
    ),
    (
        "libpq-keyword-dsn",
        "alnum",
        'conn = psycopg2.connect("host=db.acme.io port=5432 dbname=app user=app '
        'password={pw} sslmode=require")',
    ),
    (
        "mysql-url",
        "url",
        '# settings.py\nDATABASES = {"default": dj_database_url.parse("mysql://root:{pw}@'
        '127.0.0.1:3306/shop")}',
    ),
    (
        "mysql-sqlalchemy-url",
        "url",
        "# alembic.ini\n[alembic]\nscript_location = migrations\nsqlalchemy.url = "
        "mysql+pymysql://app:{pw}@mysql:3306/app?charset=utf8mb4\n",
    ),
    (
        "mongodb-srv-url",
        "url",
        'MONGODB_URI="mongodb+srv://analytics:{pw}@cluster0.x1y2z.mongodb.net/'
        '?retryWrites=true&w=majority&appName=Cluster0"',
    ),
    (
        "mongodb-url-replica-set",
        "alnum",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: orders-config\ndata:\n  MONGO_URL: "
        '"mongodb://admin:{pw}@mongo-0.mongo:27017,mongo-1.mongo:27017/admin?replicaSet=rs0"\n',
    ),
    (
        "mongodb-url-mongosh",
        "pct",
        '$ mongosh "mongodb://root:{pw}@localhost:27017/?authSource=admin"\n'
        "Current Mongosh Log ID: 6668a1f2c3d4e5f6a7b8c9d0",
    ),
    ("redis-url-no-user", "alnum", "REDIS_URL=redis://:{pw}@redis-master:6379/0"),
    (
        "rediss-url",
        "url",
        '# celeryconfig.py\nbroker_url = "rediss://default:{pw}@redis-12345.c1.us-east-1-2.ec2'
        '.cloud.redislabs.com:12345"\nresult_backend = broker_url',
    ),
    (
        "amqp-url",
        "url",
        "$ env | grep BROKER\nCELERY_BROKER_URL=amqp://worker:{pw}@rabbitmq:5672/prod",
    ),
    (
        "amqps-url",
        "alnum",
        'connection = pika.BlockingConnection(pika.URLParameters("amqps://kxjzvbqa:{pw}@'
        'rattlesnake.rmq.cloudamqp.com/kxjzvbqa"))',
    ),
    (
        "smtp-url",
        "url",
        "EMAIL_URL=smtp+tls://notifications%40acme.io:{pw}@smtp.gmail.com:587",
    ),
    (
        "smtps-url",
        "pct",
        "# django-environ\nEMAIL_URL=smtps://postmaster%40mg.acme.io:{pw}@smtp.mailgun.org:465",
    ),
    (
        "ldap-url",
        "url",
        "[auth.ldap]\nenabled = true\nurl = ldaps://svc-grafana:{pw}@dc01.corp.acme.local:636/"
        "dc=corp,dc=acme,dc=local\n",
    ),
    (
        "ftp-url",
        "alnum",
        "$ wget ftp://backup:{pw}@ftp.acme.io/dumps/latest.sql.gz\n--2024-06-11 02:00:01--  "
        "ftp://backup:*password*@ftp.acme.io/dumps/latest.sql.gz",
    ),
    (
        "https-basic-auth-url",
        "alnum",
        "$ git clone https://deploy:{pw}@git.acme.io/platform/infra.git\nCloning into 'infra'...",
    ),
    (
        "pip-index-url",
        "alnum",
        "$ pip install --index-url https://ci-reader:{pw}@nexus.acme.io/repository/pypi/simple "
        "acme-internal==2.3.1",
    ),
    (
        "http-proxy-url",
        "pct",
        "export https_proxy=http://jdoe:{pw}@proxy.corp.acme.com:3128\nexport no_proxy=localhost",
    ),
    (
        "mqtt-url",
        "alnum",
        'client = mqtt.Client()\nclient.connect_uri("mqtt://sensor01:{pw}@broker.acme.io:1883")',
    ),
    (
        "clickhouse-url",
        "url",
        "CLICKHOUSE_URL=clickhouse://default:{pw}@ch.acme.io:9440/default?secure=true",
    ),
    (
        "jdbc-postgresql",
        "alnum",
        "# application.properties\nspring.datasource.url=jdbc:postgresql://db:5432/orders?"
        "user=orders&password={pw}&ssl=true\nspring.jpa.hibernate.ddl-auto=validate\n",
    ),
    (
        "jdbc-mysql",
        "alnum",
        'String url = "jdbc:mysql://mysql.prod:3306/billing?user=billing&password={pw}'
        '&useSSL=true";\nConnection conn = DriverManager.getConnection(url);',
    ),
    (
        "jdbc-sqlserver",
        "ado",
        "jdbc:sqlserver://sql01.acme.local:1433;databaseName=Inventory;user=sa;password={pw};"
        "encrypt=true;trustServerCertificate=true",
    ),
    (
        "jdbc-oracle-thin",
        "alnum",
        '<property name="url" value="jdbc:oracle:thin:scott/{pw}@//oradb.acme.local:1521/ORCLPDB1"'
        "/>",
    ),
    (
        "sqlplus-connect",
        "alnum",
        "$ sqlplus system/{pw}@//oradb:1521/XEPDB1\n\nSQL*Plus: Release 21.0.0.0.0 - Production",
    ),
    (
        "adonet-sqlclient",
        "ado",
        '{\n  "ConnectionStrings": {\n    "DefaultConnection": "Server=tcp:acme-sql.database.'
        "windows.net,1433;Initial Catalog=shop;Persist Security Info=False;User ID=shopadmin;"
        'Password={pw};MultipleActiveResultSets=False;Encrypt=True;"\n  }\n}',
    ),
    (
        "odbc-pwd",
        "ado",
        'conn = pyodbc.connect("Driver={ODBC Driver 18 for SQL Server};Server=sql02.acme.local;'
        'Database=hr;Uid=hr_app;Pwd={pw};TrustServerCertificate=yes")',
    ),
    (
        "npgsql",
        "ado",
        'services.AddDbContext<EventsDb>(o => o.UseNpgsql("Host=pg.acme.local;Port=5432;'
        'Database=events;Username=events;Password={pw};SSL Mode=Require"));',
    ),
    (
        "azure-storage-connection-string",
        "b64-88",
        '{\n  "IsEncrypted": false,\n  "Values": {\n    "AzureWebJobsStorage": "DefaultEndpoints'
        'Protocol=https;AccountName=acmelogs;AccountKey={pw};EndpointSuffix=core.windows.net",\n'
        '    "FUNCTIONS_WORKER_RUNTIME": "python"\n  }\n}',
    ),
    (
        "azure-storage-connection-string",
        "b64-88",
        "$ az storage account show-connection-string -n acmebackups -g rg-prod\n{\n"
        '  "connectionString": "DefaultEndpointsProtocol=https;EndpointSuffix=core.windows.net;'
        "AccountName=acmebackups;AccountKey={pw};BlobEndpoint=https://acmebackups.blob.core."
        'windows.net/"\n}',
    ),
    (
        "azure-service-bus",
        "b64-44",
        "SERVICEBUS_CONNECTION=Endpoint=sb://acme-bus.servicebus.windows.net/;SharedAccessKeyName"
        "=RootManageSharedAccessKey;SharedAccessKey={pw}",
    ),
    (
        "azure-event-hubs",
        "b64-44",
        'producer = EventHubProducerClient.from_connection_string("Endpoint=sb://acme-events.'
        "servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey={pw};"
        'EntityPath=telemetry")',
    ),
    (
        "azure-sas-url",
        "sig",
        "$ azcopy copy ./db.bak 'https://acmelogs.blob.core.windows.net/backups/db.bak?sv=2022-"
        "11-02&ss=b&srt=sco&sp=rwdlac&se=2025-01-01T00:00:00Z&st=2024-01-01T00:00:00Z&spr=https"
        "&sig={pw}'",
    ),
)


def _connections(g: _Rand) -> list[Case]:
    out: list[Case] = []
    for shape, kind, template in _CONN:
        pw = _pw(g, kind)
        out.append(Case(_fill(template, pw=pw), "connection-string", shape, True, pw))
    return out


# ---------------------------------------------------------------------------------------------
# jwt: the whole token, wherever it is carried
# ---------------------------------------------------------------------------------------------


def _jwt(g: _Rand, alg: str = "HS256", **extra: object) -> str:
    header: dict[str, object] = {"alg": alg, "typ": "JWT"}
    if alg != "HS256":
        header["kid"] = g.hex(16)
    iat = 1717000000 + g.num(0, 900000)
    claims: dict[str, object] = {"sub": g.uuid(), "iat": iat, "exp": iat + 3600, **extra}
    sig = {"HS256": 32, "RS256": 256, "ES256": 64}[alg]
    return _b64url_json(header) + "." + _b64url_json(claims) + "." + _b64url_raw(g, sig)


def _b64url_raw(g: _Rand, n: int) -> str:
    return base64.urlsafe_b64encode(g.raw(n)).rstrip(b"=").decode()


_JWT_CASES: tuple[tuple[str, str, str], ...] = (
    (
        "authorization-header",
        "HS256",
        "GET /api/v1/me HTTP/1.1\nHost: api.acme.io\nAuthorization: Bearer {jwt}\nAccept: */*",
    ),
    (
        "cookie-header",
        "HS256",
        "Cookie: _ga=GA1.2.1187654321.1717000000; access_token={jwt}; theme=dark",
    ),
    (
        "set-cookie",
        "RS256",
        "HTTP/2 200\nset-cookie: session={jwt}; Path=/; HttpOnly; Secure; SameSite=Lax\n"
        "content-type: application/json",
    ),
    (
        "oauth-token-response",
        "RS256",
        '{"access_token": "{jwt}", "token_type": "Bearer", "expires_in": 3600, '
        '"scope": "read:orders write:orders"}',
    ),
    (
        "oidc-id-token",
        "RS256",
        '{\n  "id_token": "{jwt}",\n  "token_type": "Bearer",\n  "expires_in": 3599\n}',
    ),
    ("log-line", "HS256", "2024-06-11T10:15:02Z INFO auth: issued token for user 4821: {jwt}"),
    (
        "localstorage",
        "HS256",
        '> localStorage.getItem(\'auth\')\n\'{"token":"{jwt}","user":{"id":42}}\'',
    ),
    (
        "websocket-url",
        "ES256",
        "WebSocket connection to 'wss://realtime.acme.io/socket/websocket?token={jwt}&vsn=2.0.0' "
        "failed",
    ),
    (
        "oidc-callback-fragment",
        "RS256",
        "Navigated to https://app.acme.io/callback#id_token={jwt}&state=af0ifjsldkj&"
        "session_state=3f1c",
    ),
    (
        "k8s-service-account-token",
        "RS256",
        "$ kubectl exec -it api-7d9f8c6b5d-x2x9q -- cat "
        "/var/run/secrets/kubernetes.io/serviceaccount/token\n{jwt}",
    ),
    (
        "supabase-service-role",
        "HS256",
        "SUPABASE_URL=https://xyzcompany.supabase.co\nSUPABASE_SERVICE_ROLE_KEY={jwt}\n",
    ),
    (
        "python-requests",
        "HS256",
        'headers = {"Authorization": "Bearer {jwt}"}\nr = requests.get(url, headers=headers)',
    ),
    ("chat", "HS256", "can you decode this and tell me why it's rejected? {jwt}"),
    ("chat-zh", "ES256", "这个 token 是不是过期了？{jwt}"),
    (
        "curl",
        "RS256",
        "curl -X POST https://api.acme.io/v2/orders -H 'Authorization: Bearer {jwt}' "
        "-d @order.json",
    ),
    (
        "har-entry",
        "HS256",
        '"headers": [\n  {"name": "authorization", "value": "Bearer {jwt}"},\n'
        '  {"name": "accept", "value": "application/json"}\n]',
    ),
    (
        "traceback",
        "HS256",
        'Traceback (most recent call last):\n  File "/app/auth.py", line 31, in verify\n'
        '    payload = jwt.decode(token, SECRET, algorithms=["HS256"])\n'
        "jwt.exceptions.ExpiredSignatureError: Signature has expired (token='{jwt}')",
    ),
)


def _jwts(g: _Rand) -> list[Case]:
    out: list[Case] = []
    for shape, alg, template in _JWT_CASES:
        extra: dict[str, object] = {}
        if shape == "supabase-service-role":
            extra = {"iss": "supabase", "role": "service_role"}
        elif shape == "k8s-service-account-token":
            extra = {
                "iss": "https://kubernetes.default.svc.cluster.local",
                "kubernetes.io": {"namespace": "prod", "serviceaccount": {"name": "api"}},
            }
        else:
            extra = {"email": g.choice(_USERS).replace(".", "") + "@acme.io", "role": "user"}
        token = _jwt(g, alg, **extra)
        out.append(Case(_fill(template, jwt=token), "jwt", shape, True, token))
    return out


# ---------------------------------------------------------------------------------------------
# labelled: a value named by its key, in every syntax a session shows
# ---------------------------------------------------------------------------------------------


def _value(g: _Rand, kind: str) -> str:
    if kind == "alnum":
        return g.alnum(g.num(20, 32))
    if kind == "token":
        return g.alnum(2) + g.b64url(g.num(30, 40)) + g.alnum(2)
    if kind == "human":
        return g.human()
    if kind == "strong":
        return g.strong(g.num(16, 24))
    if kind == "spaces":
        words = [g.choice(_WORDS).lower() for _ in range(4)]
        return " ".join(words) + f" {g.num(10, 99)}"
    if kind == "unicode":
        return f"{g.choice(_UNICODE_WORDS)}-{g.choice(_UNICODE_WORDS)}-{g.num(100, 999)}"
    if kind == "zh":
        return f"{g.choice(_ZH_WORDS)}{g.num(1000, 9999)}{g.choice('!#@')}"
    if kind == "hex32":
        return g.hex(32)
    if kind == "hex40":
        return g.hex(40)
    if kind == "b64-password":
        return base64.b64encode(g.human().encode()).decode()
    if kind == "basic":
        return base64.b64encode(f"{g.choice(_USERS)}:{g.human()}".encode()).decode()
    if kind == "aws-secret":
        return g.s(_ALNUM + "/+", 40)
    if kind == "apostrophe":
        return f"it's-{g.alnum(8)}-{g.num(10, 99)}!"
    if kind == "dquote":
        return f'say"{g.alnum(6)}"{g.num(100, 999)}'
    if kind == "session":
        return g.lower(32)
    if kind == "b32":
        return g.s("abcdefghijklmnopqrstuvwxyz234567", 52)
    if kind == "cf":
        return g.b64url(40)
    if kind == "django":
        return g.s(_ALNUM + "!@#%^&*(-_=+)", 50)
    raise ValueError(kind)


_LABELLED: tuple[tuple[str, str, str], ...] = (
    # Python
    ("python-settings", "django", '# settings.py\nDEBUG = False\nSECRET_KEY = "{v}"\n'),
    (
        "python-kwarg",
        "human",
        'conn = psycopg2.connect(host="db", user="app", password="{v}", dbname="app")',
    ),
    ("python-dict", "token", "CONFIG = {'api_secret': '{v}', 'region': 'us-east-1'}"),
    ("python-jupyter-kwarg", "hex32", 'In [4]: client = WeatherClient(api_key="{v}")'),
    # JavaScript / TypeScript
    ("js-const", "token", "const apiSecret = '{v}';"),
    (
        "ts-object",
        "alnum",
        "export const config = {\n  clientId: 'web-app',\n  clientSecret: \"{v}\",\n};",
    ),
    ("js-env-fallback", "human", "const password = process.env.DB_PASSWORD || '{v}';"),
    ("js-template-literal", "strong", "const token = `{v}`;\nfetch(url, { headers: { token } });"),
    # Go
    ("go-const", "token", 'const apiToken = "{v}"'),
    ("go-struct", "strong", 'cfg := &Config{\n\tUser:     "svc",\n\tPassword: "{v}",\n}'),
    ("go-setenv", "alnum", 'os.Setenv("SERVICE_TOKEN", "{v}")'),
    # Java
    ("java-constant", "alnum", 'private static final String CLIENT_SECRET = "{v}";'),
    (
        "java-properties",
        "strong",
        "spring.datasource.username=orders\nspring.datasource.password={v}",
    ),
    ("java-setproperty", "human", 'props.setProperty("password", "{v}");'),
    (
        "kafka-jaas",
        "alnum",
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="svc-orders" password="{v}";',
    ),
    # Rust
    ("rust-const", "token", 'const API_KEY: &str = "{v}";'),
    # C#
    ("csharp-assignment", "alnum", 'options.ClientSecret = "{v}";'),
    (
        "csharp-appsettings",
        "token",
        '{\n  "Jwt": {\n    "Issuer": "acme",\n    "SigningKey": "{v}"\n  }\n}',
    ),
    # Ruby
    ("ruby-config", "hex32", "Geocoder.configure(lookup: :google)\nconfig.api_key = '{v}'"),
    (
        "ruby-hash",
        "human",
        'config.action_mailer.smtp_settings = { user_name: "mailer", password: "{v}" }',
    ),
    # PHP
    ("php-define", "strong", "define( 'DB_PASSWORD', '{v}' );"),
    ("php-array", "token", "return [\n    'stripe' => [\n        'secret' => '{v}',\n    ],\n];"),
    # JSON
    ("json", "human", '{"username": "deploy", "password": "{v}"}'),
    (
        "json-nested",
        "token",
        '{\n  "auth": {\n    "client_id": "cli",\n    "client_secret": "{v}"\n  }\n}',
    ),
    # YAML
    ("yaml-unquoted", "human", "database:\n  host: db\n  user: app\n  password: {v}\n"),
    ("yaml-single-quoted", "strong", "smtp:\n  host: smtp.acme.io\n  password: '{v}'\n"),
    ("yaml-spaces", "spaces", "wifi:\n  ssid: Office-5G\n  passphrase: {v}\n"),
    (
        "ansible-inventory",
        "human",
        "[web]\nweb01 ansible_host=10.0.1.5\n\n[web:vars]\nansible_become_password={v}\n",
    ),
    # TOML
    ("toml", "alnum", '$ cat ~/.cargo/credentials.toml\n[registry]\ntoken = "{v}"\n'),
    # INI
    ("ini-mycnf", "token", "$ cat ~/.my.cnf\n[client]\nuser=root\npassword={v}\nhost=127.0.0.1\n"),
    # .env
    ("dotenv", "token", "SESSION_SECRET={v}\nSESSION_TTL=86400\n"),
    ("dotenv-quoted-spaces", "spaces", 'ADMIN_EMAIL=ops@acme.io\nADMIN_PASSWORD="{v}"\n'),
    ("dotenv-twilio-auth", "hex32", "TWILIO_ACCOUNT_SID=AC{sid}\nTWILIO_AUTH_TOKEN={v}\n"),
    ("dotenv-cloudflare", "cf", "CLOUDFLARE_ACCOUNT_ID={hex32}\nCLOUDFLARE_API_TOKEN={v}\n"),
    ("dotenv-azure-devops", "b32", "AZURE_DEVOPS_EXT_PAT={v}"),
    # shell
    ("shell-export", "strong", "export DB_PASS='{v}'"),
    (
        "shell-inline-env",
        "alnum",
        "PGPASSWORD={v} psql -h db.acme.io -U report -d analytics -c 'select 1'",
    ),
    (
        "shell-sshpass",
        "strong",
        "sshpass -p '{v}' ssh deploy@10.0.4.21 'sudo systemctl restart app'",
    ),
    # PowerShell
    ("powershell-securestring", "human", '$pw = ConvertTo-SecureString "{v}" -AsPlainText -Force'),
    ("powershell-env", "token", '$env:API_TOKEN = "{v}"\nInvoke-RestMethod -Uri $uri'),
    # Dockerfile / compose
    ("dockerfile-env", "token", "FROM python:3.12-slim\nENV APP_SECRET={v}\nCOPY . /app\n"),
    (
        "compose-env-list",
        "human",
        "services:\n  db:\n    image: mysql:8\n    environment:\n      - MYSQL_ROOT_PASSWORD={v}\n"
        "      - MYSQL_DATABASE=app\n",
    ),
    (
        "compose-env-map",
        "strong",
        "services:\n  postgres:\n    image: postgres:16\n    environment:\n"
        '      POSTGRES_USER: app\n      POSTGRES_PASSWORD: "{v}"\n',
    ),
    (
        "docker-inspect-env",
        "django",
        '$ docker inspect web | jq ".[0].Config.Env"\n[\n  "DJANGO_SECRET_KEY={v}",\n'
        '  "DJANGO_SETTINGS_MODULE=app.settings.prod"\n]',
    ),
    # Terraform
    (
        "terraform-resource",
        "human",
        'resource "aws_db_instance" "main" {\n  engine   = "postgres"\n  username = "dbadmin"\n'
        '  password = "{v}"\n}',
    ),
    (
        "terraform-provider",
        "aws-secret",
        'provider "aws" {\n  region     = "us-west-2"\n  access_key = var.access_key\n'
        '  secret_key = "{v}"\n}',
    ),
    (
        "aws-credentials-file",
        "aws-secret",
        "[prod]\naws_access_key_id = {akid}\naws_secret_access_key = {v}\n",
    ),
    # Kubernetes / Helm
    (
        "k8s-secret-data",
        "b64-password",
        "$ kubectl get secret db-credentials -o yaml\napiVersion: v1\ndata:\n  password: {v}\n"
        "  username: YXBw\nkind: Secret\nmetadata:\n  name: db-credentials\n  namespace: prod\n"
        "type: Opaque",
    ),
    (
        "kubectl-from-literal",
        "token",
        "kubectl create secret generic api --from-literal=api-key={v} -n prod",
    ),
    (
        "helm-set",
        "alnum",
        "helm upgrade --install pg bitnami/postgresql --set auth.postgresPassword={v} -n data",
    ),
    # HTTP headers
    (
        "http-x-api-key",
        "hex32",
        "GET /v2/forecast?city=Oslo HTTP/1.1\nHost: api.weatherco.io\nX-API-Key: {v}\n",
    ),
    (
        "http-basic",
        "basic",
        "GET /private/ HTTP/1.1\nHost: intranet.acme.io\nAuthorization: Basic {v}",
    ),
    ("http-token", "hex40", "curl -H 'Authorization: Token {v}' https://api.acme.io/api/v1/me/"),
    ("http-cookie-session", "session", "Cookie: csrftoken=abc; sessionid={v}; django_language=en"),
    (
        "git-config-extraheader",
        "basic",
        "$ git config --list --show-origin | grep extraheader\n"
        "file:.git/config\thttp.https://github.com/.extraheader=AUTHORIZATION: basic {v}",
    ),
    # CLI flags
    (
        "cli-password-equals",
        "token",
        "mysqldump --user=backup --password={v} --all-databases > /backups/all.sql",
    ),
    ("cli-mysql-p", "alnum", "$ mysql -u root -p{v} -h 127.0.0.1 shop"),
    ("cli-docker-login-p", "alnum", "$ docker login registry.acme.io -u ci -p {v}"),
    (
        "cli-openssl-passout",
        "token",
        "openssl pkcs12 -export -in cert.pem -inkey key.pem -out bundle.p12 -passout pass:{v}",
    ),
    ("cli-redis-a", "alnum", "$ redis-cli -h cache.prod -a {v} --no-auth-warning INFO memory"),
    # XML
    (
        "xml-maven-settings",
        "strong",
        "<servers>\n  <server>\n    <id>nexus</id>\n    <username>deployer</username>\n"
        "    <password>{v}</password>\n  </server>\n</servers>",
    ),
    (
        "xml-appsettings",
        "token",
        '<appSettings>\n  <add key="ApiSecret" value="{v}" />\n</appSettings>',
    ),
    (
        "xml-nuget",
        "human",
        '<packageSourceCredentials>\n  <acme>\n    <add key="Username" value="ci" />'
        '\n    <add key="ClearTextPassword" value="{v}" />\n  </acme>\n</packageSourceCredentials>',
    ),
    # dotfiles
    ("netrc", "token", "$ cat ~/.netrc\nmachine ftp.acme.io login backup password {v}\n"),
    ("pgpass", "strong", "$ cat ~/.pgpass\ndb.acme.io:5432:*:report:{v}\n"),
    # English prose
    (
        "prose-my-password-is",
        "human",
        "my password is {v} if you need to log in to the staging box",
    ),
    ("prose-sentence-end", "human", "The wifi password for the office is {v}."),
    ("prose-use-as", "alnum", "use {v} as the admin password for now, I'll rotate it tomorrow"),
    (
        "prose-account-email",
        "human",
        "Hi, your account has been created.\nUsername: jdoe\nPassword: {v}\n"
        "Please change it after your first login.",
    ),
    # Chinese
    ("zh-mima-fullwidth-colon", "human", "数据库密码：{v}"),
    ("zh-miyao", "token", "这是我们的 API 密钥：{v}，别外传"),
    ("zh-lingpai", "alnum", "访问令牌为 {v}，有效期 30 天"),
    ("zh-kouling-tight", "alnum", "服务器 root 口令是{v}，登录后记得改掉"),
    ("zh-mima-chinese-value", "zh", "家里 WiFi 密码：{v}"),
    ("zh-accesskey-secret", "alnum", "阿里云 AccessKey Secret：{v}"),
    # values of awkward shape
    ("yaml-unicode-value", "unicode", 'admin:\n  user: root\n  password: "{v}"\n'),
    ("python-apostrophe-value", "apostrophe", 'password = "{v}"'),
    ("shell-dquote-value", "dquote", "PASSWORD='{v}' ./run.sh"),
)


def _labelled(g: _Rand) -> list[Case]:
    out: list[Case] = []
    for shape, kind, template in _LABELLED:
        v = _value(g, kind)
        text = _fill(
            template,
            v=v,
            sid=g.hex(32),
            hex32=g.hex(32),
            akid="AK" + "IA" + g.s(_AWS, 16),
        )
        out.append(Case(text, "labelled", shape, True, v))
    return out


# ---------------------------------------------------------------------------------------------
# negatives: what a good redactor leaves alone
# ---------------------------------------------------------------------------------------------


def _placeholders(g: _Rand) -> list[tuple[str, str]]:
    gh_x = "gh" + "p_" + "x" * 36
    gh_star = "gh" + "p_" + "*" * 36
    aws_id = "AK" + "IA" + "IOSFODNN7" + "EXAMPLE"
    aws_secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
    begin, end = _armour(_PK)
    return [
        ("angle-brackets", "OPENAI_API_KEY=<your-openai-api-key>"),
        ("xxx-filler", f"export GITHUB_TOKEN={gh_x}"),
        ("ellipsis", 'stripe.api_key = "sk_test_..."'),
        ("your-key-here", "api_key: YOUR_API_KEY_HERE"),
        ("shell-var", "password: ${DB_PASSWORD}"),
        (
            "actions-secret",
            "      - run: npm publish\n        env:\n          NODE_AUTH_TOKEN: "
            "${{ secrets.NPM_TOKEN }}",
        ),
        (
            "shell-var",
            'curl -H "Authorization: Bearer $API_TOKEN" https://api.example.com/v1/items',
        ),
        (
            "angle-brackets",
            'curl -H "Authorization: Bearer <token>" https://api.example.com/v1/items',
        ),
        ("doc-url-password-word", "DATABASE_URL=postgres://user:password@localhost:5432/mydb"),
        ("shell-var", "REDIS_URL=redis://:${REDIS_PASSWORD}@redis:6379/0"),
        ("env-lookup", 'db_password = os.environ["DB_PASSWORD"]'),
        ("env-lookup", 'SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY")'),
        (
            "env-lookup",
            "const stripe = new Stripe(process.env.STRIPE_SECRET_KEY!, "
            "{ apiVersion: '2024-04-10' });",
        ),
        ("settings-reference", "client = OpenAI(api_key=settings.OPENAI_API_KEY)"),
        ("vendor-example", f"aws_access_key_id = {aws_id}"),
        ("vendor-example", f"aws_secret_access_key = {aws_secret}"),
        (
            "vendor-example",
            f"$ aws configure\nAWS Access Key ID [None]: {aws_id}\n"
            f"AWS Secret Access Key [None]: {aws_secret}\nDefault region name [None]: us-west-2",
        ),
        ("masked-key", "Your key: sk-...Wx9f (created Mar 3, last used 2 days ago)"),
        ("masked-key", f"GITHUB_TOKEN={gh_star}"),
        (
            "masked-key",
            "ANTHROPIC_API_KEY=sk-ant-api03-****************************************bQAA",
        ),
        ("masked-key", "Using access key AKIA************MPLE for profile prod"),
        ("masked-value", 'password: "********"'),
        ("masked-value", "Password: ••••••••"),
        ("redacted-marker", "token: <redacted>"),
        ("redacted-marker", "Authorization: Bearer [REDACTED]"),
        ("empty-value", '{"apiKey": "", "debug": true}'),
        ("empty-value", "SECRET_KEY=\nDEBUG=True\n"),
        ("empty-value", "jdbc:postgresql://localhost:5432/app?user=app&password="),
        ("empty-value", "<password></password>"),
        ("null-value", "password: null\ntoken: ~\n"),
        ("helm-template", 'password: "{{ .Values.postgresql.auth.password }}"'),
        ("ansible-template", 'smtp_password: "{{ vault_smtp_password }}"'),
        ("windows-var", "set DB_PASSWORD=%DB_PASSWORD%"),
        ("spring-placeholder", "spring.datasource.password=${SPRING_DATASOURCE_PASSWORD}"),
        ("secret-reference", "api_token = op://Engineering/Stripe/credential"),
        ("secret-reference", "password: vault:secret/data/prod/db#password"),
        (
            "k8s-secret-ref",
            "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n"
            "        name: db-credentials\n        key: password",
        ),
        ("pem-placeholder", f'PRIVATE_KEY="{begin}\\n...\\n{end}"'),
        ("pem-placeholder", f"{begin}\n<paste your key here>\n{end}"),
        (
            "jwt-placeholder",
            "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.<payload>.<signature>",
        ),
        ("your-key-here", "SLACK_BOT_TOKEN=xoxb-your-bot-token"),
        ("xxx-filler", "HF_TOKEN=hf_xxx  # get one at https://huggingface.co/settings/tokens"),
        ("ellipsis", "ANTHROPIC_API_KEY=sk-ant-..."),
        ("shell-var", "docker login -u $DOCKER_USER -p $DOCKER_PASS registry.acme.io"),
        ("replace-me", "STRIPE_SECRET_KEY=sk_live_REPLACE_ME"),
        ("replace-me", 'api_key = "INSERT_KEY_HERE"'),
        ("ellipsis", "export AWS_SECRET_ACCESS_KEY=...  # from the IAM console"),
        ("angle-brackets", "MONGO_URI=mongodb+srv://<username>:<password>@cluster0.mongodb.net/"),
        ("angle-brackets", '"client_secret": "<CLIENT_SECRET>"'),
        ("paste-here", "$env:OPENAI_API_KEY = '<paste key here>'"),
        (
            "shell-var",
            'ARG NPM_TOKEN\nRUN echo "//registry.npmjs.org/:_authToken=${NPM_TOKEN}" > .npmrc',
        ),
        ("xxx-filler", "The key looks like `sk-proj-XXXXXXXXXXXXXXXXXXXXXXXX` in the docs."),
        ("dev-storage", '"AzureWebJobsStorage": "UseDevelopmentStorage=true"'),
        ("psql-variable", "ALTER USER app WITH PASSWORD :'new_password';"),
        ("prompt", 'password = getpass.getpass("Password: ")'),
        ("xxx-filler", f"token: {'x' * 40}"),
    ]


def _hashes(g: _Rand) -> list[tuple[str, str]]:
    def short_log() -> str:
        msgs = ("fix flaky test", "bump deps", "add retry to uploader", "docs: typo", "refactor")
        return "\n".join(f"{g.hex(7)} {m}" for m in msgs)

    b64_86 = g.b64(86)
    return [
        ("git-log-oneline", "$ git log --oneline -5\n" + short_log()),
        (
            "git-commit",
            f"commit {g.hex(40)}\nAuthor: Jane Doe <jane@acme.io>\nDate:   Tue Jun 11 10:02:44 "
            "2024 +0800\n\n    fix: retry uploads on 503",
        ),
        ("git-rev-parse", f"$ git rev-parse HEAD\n{g.hex(40)}"),
        (
            "docker-digest",
            f"latest: Pulling from library/python\nDigest: sha256:{g.hex(64)}\n"
            "Status: Downloaded newer image for python:3.12-slim",
        ),
        ("docker-image-digest", f"    image: ghcr.io/acme/api@sha256:{g.hex(64)}"),
        ("npm-integrity", f'"integrity": "sha512-{b64_86}=="'),
        (
            "npm-lock-entry",
            f'"node_modules/lodash": {{\n  "version": "4.17.21",\n  "resolved": "https://registry.'
            f'npmjs.org/lodash/-/lodash-4.17.21.tgz",\n  "integrity": "sha512-{g.b64(86)}=="\n}}',
        ),
        (
            "pip-hash",
            f"requests==2.32.3 \\\n    --hash=sha256:{g.hex(64)} \\\n    --hash=sha256:{g.hex(64)}",
        ),
        (
            "go-sum",
            f"golang.org/x/net v0.25.0 h1:{g.b64(43)}=\n"
            f"golang.org/x/net v0.25.0/go.mod h1:{g.b64(43)}=",
        ),
        (
            "cargo-lock",
            f'[[package]]\nname = "serde"\nversion = "1.0.203"\nsource = '
            f'"registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "{g.hex(64)}"',
        ),
        (
            "sha256sum",
            f"$ sha256sum dist/*\n{g.hex(64)}  dist/app-1.4.2.tar.gz\n"
            f"{g.hex(64)}  dist/app-1.4.2-py3-none-any.whl",
        ),
        ("md5sum", f"$ md5sum backup.sql.gz\n{g.hex(32)}  backup.sql.gz"),
        ("etag", f'HTTP/1.1 200 OK\nETag: "{g.hex(32)}"\nContent-Length: 5120'),
        (
            "sri",
            '<script src="https://cdn.jsdelivr.net/npm/bootstrap@5.3.3/dist/js/bootstrap.bundle.'
            f'min.js" integrity="sha384-{g.b64(64)}" crossorigin="anonymous"></script>',
        ),
        (
            "ssh-fingerprint",
            f"$ ssh-keygen -lf ~/.ssh/id_ed25519.pub\n256 SHA256:{g.b64(43)} deploy@ci (ED25519)",
        ),
        (
            "git-diff-index",
            f"diff --git a/src/app.py b/src/app.py\nindex {g.hex(7)}..{g.hex(7)} "
            "100644\n--- a/src/app.py\n+++ b/src/app.py",
        ),
        (
            "yarn-resolved",
            f'lodash@^4.17.21:\n  version "4.17.21"\n  resolved "https://registry.'
            f'yarnpkg.com/lodash/-/lodash-4.17.21.tgz#{g.hex(40)}"',
        ),
        ("actions-cache-key", f"Cache restored from key: Linux-pip-{g.hex(64)}"),
        (
            "buildkit-image",
            f"#12 writing image sha256:{g.hex(64)} done\n#12 naming to "
            "docker.io/acme/api:latest done",
        ),
        (
            "poetry-lock",
            f'files = [\n    {{file = "idna-3.7-py3-none-any.whl", hash = '
            f'"sha256:{g.hex(64)}"}},\n]',
        ),
        (
            "merge-commit",
            f"Merge pull request #1423 from acme/feature-retry\n\nMerged as commit {g.hex(40)}",
        ),
        (
            "gpg-fingerprint",
            f"pub   ed25519 2023-01-04 [SC]\n      {g.s('0123456789ABCDEF', 40)}\n"
            "uid           [ultimate] Jane Doe <jane@acme.io>",
        ),
        (
            "tls-fingerprint",
            "SHA256 Fingerprint=" + ":".join(g.s("0123456789ABCDEF", 2) for _ in range(32)),
        ),
        ("webhook-signature", f"X-Hub-Signature-256: sha256={g.hex(64)}\nX-GitHub-Event: push"),
        ("git-submodule", f"$ git submodule status\n {g.hex(40)} vendor/libfoo (v1.2.0)"),
        (
            "pip-wheel",
            f"  Created wheel for acme-utils: filename=acme_utils-0.3.0-py3-none-any.whl "
            f"size=10342 sha256={g.hex(64)}\n  Stored in directory: /root/.cache/pip/wheels/"
            f"{g.hex(2)}/{g.hex(2)}/{g.hex(60)}",
        ),
        (
            "nix-store-path",
            f"/nix/store/{g.s('0123456789abcdfghijklmnpqrsvwxyz', 32)}-python3-3.12.3",
        ),
        (
            "terraform-lock",
            f'provider "registry.terraform.io/hashicorp/aws" {{\n  version = '
            f'"5.53.0"\n  hashes = [\n    "h1:{g.b64(43)}=",\n    "zh:{g.hex(64)}",\n  ]\n}}',
        ),
        (
            "conda-explicit",
            "https://conda.anaconda.org/conda-forge/linux-64/numpy-1.26.4-"
            f"py312heda63a1_0.conda#{g.hex(32)}",
        ),
        ("k8s-checksum-annotation", f"      annotations:\n        checksum/config: {g.hex(64)}"),
        ("build-metadata", f"BUILD_NUMBER=1842\nGIT_COMMIT={g.hex(40)}\nGIT_BRANCH=main"),
        (
            "docker-images-digests",
            "REPOSITORY   TAG    DIGEST            IMAGE ID       SIZE\n"
            f"acme/api     1.4.2  sha256:{g.hex(64)}   {g.hex(12)}   187MB",
        ),
        ("sha1sum", f"$ sha1sum release.zip\n{g.hex(40)}  release.zip"),
        ("content-md5", f"Content-MD5: {g.b64(22)}=="),
        ("pod-template-hash", f"pod-template-hash={g.lower(10)}\napp=api"),
        (
            "webpack-chunk",
            f"dist/assets/main.{g.hex(16)}.js   142.31 kB │ gzip: 45.12 kB\n"
            f"dist/assets/vendor.{g.hex(16)}.js  512.08 kB │ gzip: 160.44 kB",
        ),
        (
            "git-lfs-pointer",
            f"version https://git-lfs.github.com/spec/v1\noid sha256:{g.hex(64)}\nsize 48211",
        ),
        (
            "gpg-key-id",
            f"gpg: Signature made Tue 11 Jun 2024 10:02:44 AM CST\ngpg:                using "
            f'EDDSA key {g.s("0123456789ABCDEF", 40)}\ngpg: Good signature from "Jane Doe"',
        ),
        (
            "git-stash",
            f"$ git stash list\nstash@{{0}}: WIP on main: {g.hex(7)} fix tests\n"
            f"stash@{{1}}: On feature: {g.hex(7)} wip",
        ),
        ("ipfs-cid", "ipfs://bafybei" + g.s("abcdefghijklmnopqrstuvwxyz234567", 52)),
    ]


def _uuids(g: _Rand) -> list[tuple[str, str]]:
    u = g.uuid
    b58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    return [
        ("request-id-header", f"HTTP/1.1 500 Internal Server Error\nx-request-id: {u()}"),
        ("json-id", f'{{"id": "{u()}", "status": "queued", "created_at": "2024-06-11T10:00:00Z"}}'),
        ("k8s-uid", f"metadata:\n  name: api-7d9f8c6b5d-x2x9q\n  namespace: prod\n  uid: {u()}"),
        ("azure-ids", f'tenant_id       = "{u()}"\nsubscription_id = "{u()}"'),
        ("traceparent", f"traceparent: 00-{g.hex(32)}-{g.hex(16)}-01"),
        ("aws-trace-id", f"X-Amzn-Trace-Id: Root=1-{g.hex(8)}-{g.hex(24)}"),
        (
            "openai-request-id",
            f"openai.RateLimitError: Error code: 429 (request id: req_{g.hex(32)})",
        ),
        (
            "anthropic-tool-use-id",
            f'{{"type": "tool_use", "id": "toolu_01{g.s(b58, 22)}", "name": "bash", '
            '"input": {"command": "ls -la"}}',
        ),
        (
            "anthropic-message-id",
            f'{{"id": "msg_01{g.s(b58, 22)}", "type": "message", '
            '"role": "assistant", "stop_reason": "end_turn"}',
        ),
        (
            "stripe-object-ids",
            f"PaymentIntent pi_3{g.alnum(23)} succeeded for customer cus_{g.alnum(14)}",
        ),
        ("stripe-event-id", f"Received event evt_1{g.alnum(23)} (payment_intent.succeeded)"),
        ("chat-completion-id", f'{{"id": "chatcmpl-{g.alnum(29)}", "object": "chat.completion"}}'),
        (
            "tool-call-id",
            f'{{"tool_call_id": "call_{g.alnum(24)}", "role": "tool", "content": "42"}}',
        ),
        ("correlation-id", f"Correlation-ID: {u()}"),
        (
            "lambda-request-id",
            f"REPORT RequestId: {u()}\tDuration: 12.31 ms\tBilled Duration: 13 ms",
        ),
        ("sentry-event-id", f"Sentry captured the exception. Event ID: {g.hex(32)}"),
        ("job-id", f"Job {u()} finished in 3.2s (exit 0)"),
        (
            "docker-ps",
            "CONTAINER ID   IMAGE            STATUS         NAMES\n"
            f"{g.hex(12)}   acme/api:1.4.2   Up 2 hours     api\n"
            f"{g.hex(12)}   postgres:16      Up 2 hours     db",
        ),
        ("ulid", f"order 01{g.s('0123456789ABCDEFGHJKMNPQRSTVWXYZ', 24)} created"),
        ("mongo-objectid", f'{{ "_id": ObjectId("{g.hex(24)}"), "sku": "A-100", "qty": 3 }}'),
        ("snowflake-ids", f"channel_id={g.digits(19)} message_id={g.digits(19)}"),
        ("azure-request-id", f"x-ms-request-id: {u()}\nx-ms-version: 2023-11-03"),
        ("cf-ray", f"cf-ray: {g.hex(16)}-FRA"),
        (
            "structured-log-ids",
            f'{{"level":"info","msg":"done","trace_id":"{g.hex(32)}","span_id":"{g.hex(16)}"}}',
        ),
        ("url-path-uuid", f"GET /api/v1/orders/{u()}/items -> 404"),
        (
            "idempotency-key",
            f"POST /v1/payments HTTP/1.1\nIdempotency-Key: {u()}\nContent-Type: application/json",
        ),
        (
            "github-run-id",
            f"https://github.com/acme/platform/actions/runs/{g.digits(10)}/job/{g.digits(11)}",
        ),
        ("device-id", f'{{"device_id": "{u()}", "platform": "ios", "app_version": "5.2.0"}}'),
        ("run-id", f"mlflow: run_id={g.hex(32)} experiment_id=7 status=FINISHED"),
        (
            "k8s-event",
            f"involvedObject:\n  kind: Pod\n  name: worker-0\n  uid: {u()}\nreason: BackOff",
        ),
    ]


_PROSE: tuple[str, ...] = (
    "Remember to rotate API keys every 90 days and never commit them to the repository.",
    "The password must be at least 12 characters long and include a number and a symbol.",
    "I reset my password yesterday but the login still fails with 'invalid credentials'.",
    "The model's context window is 200k tokens, so the whole file fits.",
    "Token usage: 12,483 input tokens, 1,024 output tokens.",
    "Where should I store the secret key - in the .env file or in a secrets manager?",
    "GitHub personal access tokens start with ghp_ and fine-grained ones with github_pat_.",
    "Your Stripe secret key begins with sk_live_ in live mode and sk_test_ in test mode; keep "
    "it on the server.",
    "The private key never leaves the HSM; only the public key is exported.",
    "Passwords are hashed with Argon2id before they are stored.",
    "If the access token has expired, call /oauth/token again with your refresh token.",
    "JWTs are three base64url segments separated by dots: header, payload and signature.",
    "We revoked the leaked key and issued a new one through the console.",
    "Set the password field to required and add a 'show password' toggle.",
    "The secret sauce of this algorithm is the priority queue.",
    "Key takeaways: caching cut p95 latency by 40%.",
    "Press the Enter key to confirm, or Escape to cancel.",
    "The tokenizer splits 'unbelievable' into three tokens.",
    'psql: error: FATAL:  password authentication failed for user "postgres"',
    "git@github.com: Permission denied (publickey).",
    "fatal: could not read Username for 'https://github.com': terminal prompts disabled",
    "Enter passphrase for key '/home/dev/.ssh/id_ed25519':",
    "remote: Support for password authentication was removed on August 13, 2021. Please use a "
    "personal access token instead.",
    "OK so the secret was in the wrong namespace, the pod can read it now.",
    "请不要把密码提交到代码仓库里，用环境变量或者密钥管理服务。",
    "密钥已经轮换过了，旧的那个已经作废。",
    "这个模型的上下文窗口是 128k 个 token。",
    "登录失败：用户名或密码错误，请重试。",
    "令牌过期之后需要用刷新令牌重新获取。",
    "口令长度至少 12 位，需要包含大小写字母和数字。",
    "私钥一定要妥善保管，公钥可以随便分发。",
    "我忘了密码，能帮我走一下重置流程吗？",
    "API 密钥请在控制台的“安全设置”页面生成。",
    "这次请求消耗了 3,200 个输入 token 和 800 个输出 token。",
    "把 Authorization 头里的 Bearer 令牌换成你自己的就行。",
    '数据库连接失败：password authentication failed for user "app"',
)


def _identifiers(g: _Rand) -> list[tuple[str, str]]:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x20\x00\x00\x00\x20\x08\x06\x00\x00"
    png_b64 = base64.b64encode(png + g.raw(180)).decode()
    woff = base64.b64encode(b"wOF2\x00\x01\x00\x00" + g.raw(120)).decode()
    sourcemap = base64.b64encode(
        json.dumps(
            {"version": 3, "sources": ["src/index.ts"], "names": [], "mappings": "AAAA,SAAS"}
        ).encode()
    ).decode()
    cert_b, cert_e = _armour("CERTIFICATE")
    pub_b, pub_e = _armour("PUBLIC KEY")
    cert = "\n".join(_wrap(bytes.fromhex("308203") + g.raw(700)))
    pub = "\n".join(
        _wrap(bytes.fromhex("30820122300d06092a864886f70d01010105000382010f00") + g.raw(270))
    )
    n_mod = base64.urlsafe_b64encode(g.raw(256)).rstrip(b"=").decode()
    return [
        ("function-name", "def get_api_key(self) -> str:\n    return self._settings.api_key"),
        (
            "max-tokens",
            'response = client.messages.create(model="claude-3-5-sonnet-latest", '
            "max_tokens=4096, messages=messages)",
        ),
        ("tokenizer", 'tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")'),
        (
            "password-hash-call",
            "password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())",
        ),
        (
            "form-field",
            '<input type="password" name="password" id="password" '
            'autocomplete="current-password" required>',
        ),
        ("constant", "const PASSWORD_MIN_LENGTH = 12;"),
        ("regex-pattern", 'GITHUB_PAT_RE = re.compile(r"ghp_[A-Za-z0-9]{36}")'),
        ("regex-pattern", 'aws_key_pattern = r"(AKIA|ASIA)[A-Z2-7]{16}"'),
        (
            "regex-pattern",
            "- id: slack-bot-token\n  regex: 'xoxb-[0-9]{10,13}-[0-9]{10,13}[a-zA-Z0-9-]*'",
        ),
        ("image-data-url", f'<img src="data:image/png;base64,{png_b64}" alt="logo">'),
        (
            "font-data-url",
            f"@font-face {{ font-family: Inter; src: url(data:font/woff2;base64,"
            f"{woff}) format('woff2'); }}",
        ),
        ("sourcemap-data-url", f"//# sourceMappingURL=data:application/json;base64,{sourcemap}"),
        ("base64-ordinary", 'echo "aGVsbG8gd29ybGQK" | base64 -d\nhello world'),
        ("kernel-struct", "struct sk_buff *skb = alloc_skb(len, GFP_KERNEL);"),
        (
            "class-name",
            "class TokenBucket:\n    def __init__(self, rate: float, capacity: int) -> None:",
        ),
        (
            "validation-code",
            "if (!isValidToken(token)) {\n  return res.status(401).json({ error: "
            "'invalid token' });\n}",
        ),
        ("fastapi-header", 'api_key_header = APIKeyHeader(name="X-API-Key", auto_error=False)'),
        ("type-annotation", "password: str = Field(..., min_length=8, max_length=128)"),
        ("ttl-constant", "AUTH_TOKEN_TTL_SECONDS = 3600"),
        ("token-count", "token_count = len(encoding.encode(text))"),
        (
            "go-signature",
            "func (s *Server) validateToken(ctx context.Context, raw string) (*Claims, error) {",
        ),
        ("java-field", "private final PasswordEncoder passwordEncoder;"),
        ("rust-signature", "pub fn verify_password(hash: &str, password: &str) -> bool {"),
        ("ts-type", "export type ApiKey = { id: string; prefix: string; createdAt: Date };"),
        (
            "npm-config-env",
            "$ env | grep ^npm_\nnpm_config_cache=/home/runner/.npm\n"
            "npm_config_registry=https://registry.npmjs.org/\nnpm_config_user_agent=npm/10.5.0",
        ),
        (
            "secret-name",
            'secret_name = "prod/payments/stripe"\nclient.get_secret_value(SecretId=secret_name)',
        ),
        ("secret-path", "password_file: /run/secrets/db_password"),
        ("token-url", 'token_url = "https://oauth2.googleapis.com/token"'),
        (
            "key-event",
            "document.addEventListener('keydown', (e) => {\n  if (e.key === 'Enter') "
            "submit();\n});",
        ),
        (
            "ssh-public-key",
            f"$ cat ~/.ssh/id_ed25519.pub\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI"
            f"{g.b64(43)} deploy@ci",
        ),
        ("pem-certificate", f"$ cat /etc/ssl/certs/api.pem\n{cert_b}\n{cert}\n{cert_e}"),
        (
            "pem-public-key",
            f"$ openssl rsa -in key.pem -pubout\nwriting RSA key\n{pub_b}\n{pub}\n{pub_e}",
        ),
        (
            "jwks-public",
            f'{{"keys": [{{"kty": "RSA", "kid": "{g.hex(16)}", "use": "sig", '
            f'"alg": "RS256", "n": "{n_mod}", "e": "AQAB"}}]}}',
        ),
        ("sampling-params", "max_tokens=4096, temperature=0.2, top_p=0.9, stop=None"),
        (
            "form-label",
            '<label for="api-key">API key</label>\n<input id="api-key" name="api_key" '
            'type="text" placeholder="sk-...">',
        ),
        (
            "keygen-code",
            "from cryptography.hazmat.primitives.asymmetric import rsa\n"
            "private_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)",
        ),
        ("keyring-call", 'password = keyring.get_password("acme-cli", username)'),
        ("session-call", "const { data: session } = await supabase.auth.getSession();"),
        (
            "sql-schema",
            "CREATE TABLE users (id bigserial PRIMARY KEY, email text NOT NULL, "
            "password_hash text NOT NULL);",
        ),
        ("git-config-helper", "git config --global credential.helper osxkeychain"),
        ("test-fixture", 'monkeypatch.setenv("API_TOKEN", token)'),
        ("ssh-keygen", 'ssh-keygen -t ed25519 -C "deploy@ci" -f ~/.ssh/deploy_key -N ""'),
        ("grep", "$ grep -rn 'api_key' src/ | wc -l\n17"),
        ("aria-label", '<button aria-label="Toggle password visibility" type="button">'),
        (
            "jwt-decode-call",
            'jwt.decode(token, key=public_key, algorithms=["RS256"], audience="api")',
        ),
        (
            "env-var-names",
            "$ env | cut -d= -f1 | grep -i -E 'token|key|secret'\nGITHUB_TOKEN\n"
            "OPENAI_API_KEY\nAWS_SECRET_ACCESS_KEY",
        ),
        ("kubeconfig-path", "export KUBECONFIG=~/.kube/config"),
        ("mysql-prompt", "$ mysql -u root -p\nEnter password:"),
        ("dict-lookup", 'headers = {"X-API-Key": API_KEY, "Accept": "application/json"}'),
        (
            "i18n-keys",
            '"login.password.label": "Password",\n"login.password.forgot": "Forgot your password?"',
        ),
    ]


def _negatives(g: _Rand) -> list[Case]:
    out: list[Case] = []
    for shape, text in _placeholders(g):
        out.append(Case(text, "placeholder", shape, False))
    for shape, text in _hashes(g):
        out.append(Case(text, "hash", shape, False))
    for shape, text in _uuids(g):
        out.append(Case(text, "uuid", shape, False))
    for text in _PROSE:
        shape = "prose-zh" if any("\u4e00" <= ch <= "\u9fff" for ch in text) else "prose-en"
        out.append(Case(text, "prose", shape, False))
    for shape, text in _identifiers(g):
        out.append(Case(text, "identifier", shape, False))
    return out


def holdout() -> list[Case]:
    """The held-out cases: positives (provider, private-key, connection-string, jwt,
    labelled) first, then negatives. The same list every call."""
    g = _Rand(_SEED)
    positives = _providers(g) + _private_keys(g) + _connections(g) + _jwts(g) + _labelled(g)
    return positives + _negatives(g)

"""A final blind held-out corpus for the secret-redaction engine.

Written without reading the engine, its rules, its tests or the other corpora, so its score is
an estimate of how the engine does on texts nobody tuned it to. The texts are what a coding agent
sees and writes: tool results (shell output, files, diffs, logs, tracebacks, notebook outputs,
HTTP dumps), user messages in English and Chinese, assistant replies quoting configs and JSON
tool-call arguments.

Every credential is generated at run time from split string pieces and seeded random bodies; no
literal token is in this file. ``final()`` is deterministic and lists the positives first.

A positive's ``secret`` is an exact substring of its text that must not survive redaction: the
whole token for a provider key or a JWT, the password of a connection string, one full base64
line of a private key's body, the value of a labelled credential. A negative holds no credential
at all: it is a near miss (a placeholder, a masked key, a reference to a secret store, a digest,
an id, a public key, prose about credentials, code that handles a credential without holding one).
"""

from __future__ import annotations

import base64
import json
import random
import string
import urllib.parse
from collections.abc import Sequence
from typing import TypeVar

from ._redact_corpus import Case

__all__ = ["final"]

_SEED = 0x5EC2E7F1

_T = TypeVar("_T")

_UP = string.ascii_uppercase
_LO = string.ascii_lowercase
_DIG = string.digits
_AN = string.ascii_letters + string.digits
_LOAN = _LO + _DIG
_UPAN = _UP + _DIG
_HEX = "0123456789abcdef"
_B64URL = _AN + "-_"
_B32 = _UP + "234567"
_BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

# Split so that no complete marker or prefix is a literal in this file.
_BEGIN = "-----BEG" + "IN "
_END = "-----EN" + "D "
_DASH5 = "-----"


class _Rand:
    """Seeded random bodies for tokens, passwords and ids."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self._used: set[str] = set()

    def s(self, alphabet: str, n: int) -> str:
        return "".join(self.r.choice(alphabet) for _ in range(n))

    def an(self, n: int) -> str:
        return self.s(_AN, n)

    def lo(self, n: int) -> str:
        return self.s(_LO, n)

    def loan(self, n: int) -> str:
        return self.s(_LOAN, n)

    def upan(self, n: int) -> str:
        return self.s(_UPAN, n)

    def hex(self, n: int) -> str:
        return self.s(_HEX, n)

    def dig(self, n: int) -> str:
        return self.r.choice("123456789") + self.s(_DIG, n - 1)

    def b64url(self, n: int) -> str:
        return self.s(_B64URL, n)

    def raw(self, n: int) -> bytes:
        return bytes(self.r.getrandbits(8) for _ in range(n))

    def b64(self, nbytes: int) -> str:
        return base64.b64encode(self.raw(nbytes)).decode()

    def b64u(self, data: bytes) -> str:
        return base64.urlsafe_b64encode(data).decode().rstrip("=")

    def pick(self, seq: Sequence[_T]) -> _T:
        return self.r.choice(seq)

    def between(self, lo: int, hi: int) -> int:
        return self.r.randint(lo, hi)

    def uuid(self) -> str:
        h = self.hex(32)
        h = h[:12] + "4" + h[13:16] + self.pick("89ab") + h[17:]
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def unique(self, value: str) -> str:
        """Every human password in the corpus is its own."""
        if value in self._used:
            value = value + self.dig(2)
        self._used.add(value)
        return value

    def password(self) -> str:
        """A password a person would pick: words, digits and a symbol."""
        w1 = self.pick(_WORDS).capitalize()
        w2 = self.pick(_WORDS)
        sym = self.pick("!@#$%&*?")
        shape = self.between(0, 3)
        if shape == 0:
            v = f"{w1}{self.dig(4)}{sym}"
        elif shape == 1:
            v = f"{w1}{sym}{w2}{self.dig(2)}"
        elif shape == 2:
            v = f"{w2}{self.dig(3)}{w1}{sym}"
        else:
            v = f"{w1}_{w2.capitalize()}{sym}{self.dig(3)}"
        return self.unique(v)

    def strong(self, n: int = 20) -> str:
        """A generated password with symbols (no quote, backslash or whitespace)."""
        return self.unique(self.s(_AN + "!#$%^&*()-_=+[]{}<>?.,~", n))

    def phrase(self) -> str:
        """A passphrase with spaces."""
        words = [self.pick(_WORDS) for _ in range(4)]
        return self.unique(" ".join(words) + f" {self.dig(2)}{self.pick('!?.#')}")


_WORDS = (
    "harbor",
    "quartz",
    "marmalade",
    "bluefin",
    "lantern",
    "cobalt",
    "thistle",
    "meadow",
    "falcon",
    "juniper",
    "saffron",
    "granite",
    "otter",
    "velvet",
    "cinder",
    "maple",
    "pelican",
    "tundra",
    "walnut",
    "zephyr",
    "orchid",
    "copper",
    "badger",
    "nimbus",
    "paprika",
    "willow",
    "comet",
    "ember",
    "fjord",
    "lilac",
)


def _p(text: str, family: str, shape: str, secret: str) -> Case:
    if secret not in text:  # pragma: no cover - a corpus bug, caught by the tests
        raise ValueError(f"secret not in text for {shape}")
    return Case(text=text, family=family, shape=shape, positive=True, secret=secret)


def _n(text: str, family: str, shape: str) -> Case:
    return Case(text=text, family=family, shape=shape, positive=False)


def _call(name: str, **arguments: str) -> str:
    """A tool call as a model writes it: JSON with the arguments object."""
    return json.dumps({"name": name, "arguments": arguments})


# --------------------------------------------------------------------------------------------
# provider tokens


def _provider(g: _Rand) -> list[Case]:
    out: list[Case] = []

    def add(text: str, shape: str, secret: str) -> None:
        out.append(_p(text, "provider", shape, secret))

    t = "AK" + "IA" + g.s(_B32, 16)
    add(
        f"$ env | grep AWS\nAWS_ACCESS_KEY_ID={t}\nAWS_DEFAULT_REGION=us-east-1\n"
        "AWS_PROFILE=staging\n",
        "aws-access-key-id",
        t,
    )
    t = "AK" + "IA" + g.s(_B32, 16)
    add(
        "2024-03-12 09:41:07,118 botocore.auth [DEBUG] Calculating signature using v4 auth.\n"
        "2024-03-12 09:41:07,119 botocore.auth [DEBUG] StringToSign:\nAWS4-HMAC-SHA256\n"
        "20240312T094107Z\n20240312/eu-west-1/s3/aws4_request\n"
        f"2024-03-12 09:41:07,120 botocore.endpoint [DEBUG] Authorization: AWS4-HMAC-SHA256 "
        f"Credential={t}/20240312/eu-west-1/s3/aws4_request, "
        f"SignedHeaders=host;x-amz-date, Signature={g.hex(64)}\n",
        "aws-access-key-id",
        t,
    )
    t = "AS" + "IA" + g.s(_B32, 16)
    add(
        _call("bash", command=f"AWS_ACCESS_KEY_ID={t} aws s3 ls s3://acme-build-artifacts/"),
        "aws-temporary-key-id",
        t,
    )
    t = "gh" + "p_" + g.an(36)
    add(
        "$ git remote -v\n"
        f"origin\thttps://{t}@github.com/acme-corp/billing-api.git (fetch)\n"
        f"origin\thttps://{t}@github.com/acme-corp/billing-api.git (push)\n",
        "github-pat-classic",
        t,
    )
    t = "github" + "_pat_" + "11A" + g.upan(19) + "_" + g.an(59)
    add(
        "here's a fine-grained token with contents:write on the repo, can you push the branch "
        f"and open the PR for me? {t}",
        "github-pat-fine-grained",
        t,
    )
    t = "gh" + "o_" + g.an(36)
    add(
        "$ gh auth status --show-token\ngithub.com\n"
        "  ✓ Logged in to github.com account octo-dev (keyring)\n"
        "  - Active account: true\n  - Git operations protocol: https\n"
        f"  - Token: {t}\n  - Token scopes: 'gist', 'read:org', 'repo', 'workflow'\n",
        "github-oauth",
        t,
    )
    t = "gh" + "s_" + g.an(36)
    add(
        "Traceback (most recent call last):\n"
        '  File "/home/runner/work/infra/infra/scripts/release.py", line 48, in <module>\n'
        "    resp.raise_for_status()\n"
        "requests.exceptions.HTTPError: 403 Client Error: Forbidden for url: "
        "https://api.github.com/repos/acme/infra/releases\n"
        f"request headers: {{'Accept': 'application/vnd.github+json', "
        f"'Authorization': 'token {t}', 'User-Agent': 'python-requests/2.31.0'}}\n",
        "github-app-installation",
        t,
    )
    t = "gl" + "pat-" + g.b64url(20)
    add(
        "services:\n  renovate:\n    image: renovate/renovate:37\n    environment:\n"
        "      RENOVATE_PLATFORM: gitlab\n"
        "      RENOVATE_ENDPOINT: https://gitlab.example.org/api/v4\n"
        f"      RENOVATE_TOKEN: {t}\n",
        "gitlab-pat",
        t,
    )
    t = "gl" + "rt-" + g.b64url(20)
    add(
        'concurrent = 4\ncheck_interval = 0\n\n[[runners]]\n  name = "build-01"\n'
        f'  url = "https://gitlab.com"\n  token = "{t}"\n  executor = "docker"\n'
        '  [runners.docker]\n    image = "alpine:3.19"\n',
        "gitlab-runner-token",
        t,
    )
    t = "xo" + "xb-" + g.dig(12) + "-" + g.dig(13) + "-" + g.an(24)
    add(
        "import os\nfrom slack_sdk import WebClient\n\n"
        f'client = WebClient(token="{t}")\n'
        'client.chat_postMessage(channel="#deploys", text="build finished")\n',
        "slack-bot-token",
        t,
    )
    t = "xo" + "xp-" + g.dig(12) + "-" + g.dig(12) + "-" + g.dig(13) + "-" + g.hex(32)
    add(
        f'$ curl -s -H "Authorization: Bearer {t}" https://slack.com/api/auth.test\n'
        '{"ok":true,"url":"https://acme.slack.com/","team":"Acme","user":"dana",'
        '"team_id":"T04A1B2C3","user_id":"U05D4E5F6"}\n',
        "slack-user-token",
        t,
    )
    t = g.an(24)
    hook = "https://hooks." + "slack.com/services/T" + g.upan(10) + "/B" + g.upan(10) + "/" + t
    add(
        "export async function notify(text: string): Promise<void> {\n"
        f'  await fetch("{hook}", {{\n'
        '    method: "POST",\n    headers: { "Content-Type": "application/json" },\n'
        "    body: JSON.stringify({ text }),\n  });\n}\n",
        "slack-webhook",
        t,
    )
    uid = str(g.between(10**17, 10**18))
    t = g.b64u(uid.encode()) + "." + g.b64url(6) + "." + g.b64url(38)
    add(
        "import discord\n\nintents = discord.Intents.default()\nintents.message_content = True\n"
        "client = discord.Client(intents=intents)\n\n@client.event\nasync def on_ready():\n"
        "    print(f'logged in as {client.user}')\n\n"
        f"client.run('{t}')\n",
        "discord-bot-token",
        t,
    )
    t = g.b64url(68)
    add(
        "curl -H 'Content-Type: application/json' -d '{\"content\": \"nightly failed\"}' "
        f"https://discord.com/api/webhooks/{g.dig(19)}/{t}",
        "discord-webhook",
        t,
    )
    t = g.dig(10) + ":AA" + g.b64url(33)
    add(
        f"$ curl -s https://api.telegram.org/bot{t}/getMe\n"
        '{"ok":true,"result":{"id":6023418877,"is_bot":true,"first_name":"deploy-bot",'
        '"username":"acme_deploy_bot","can_join_groups":true}}\n',
        "telegram-bot-token",
        t,
    )
    t = "sk" + "_live_" + "51" + g.an(22) + g.an(75)
    add(
        "diff --git a/.env.production b/.env.production\nindex 4e1b2a0..9c3f7d1 100644\n"
        "--- a/.env.production\n+++ b/.env.production\n@@ -3,3 +3,4 @@ APP_ENV=production\n"
        " DATABASE_POOL=20\n LOG_LEVEL=info\n"
        f"+STRIPE_SECRET_KEY={t}\n",
        "stripe-secret-key",
        t,
    )
    t = "rk" + "_live_" + "51" + g.an(22) + g.an(75)
    add(
        f"const stripe = require('stripe')('{t}');\n\n"
        "const session = await stripe.checkout.sessions.create({\n"
        "  mode: 'subscription',\n  line_items: [{ price: priceId, quantity: 1 }],\n});\n",
        "stripe-restricted-key",
        t,
    )
    t = "wh" + "sec_" + g.an(32)
    add(
        "$ stripe listen --forward-to localhost:4242/webhook\n"
        "> Ready! You are using Stripe API Version [2023-10-16]. "
        f"Your webhook signing secret is {t} (^C to quit)\n"
        "2024-05-02 14:03:11   --> checkout.session.completed [evt_1PBx2a]\n",
        "stripe-webhook-secret",
        t,
    )
    t = "S" + "K" + g.hex(32)
    add(
        "from twilio.rest import Client\n\n"
        f'client = Client("{t}", os.environ["TWILIO_API_SECRET"], "AC{g.hex(32)}")\n'
        'client.messages.create(to="+15558675310", from_="+15017122661", body="hi")\n',
        "twilio-api-key",
        t,
    )
    t = "S" + "G." + g.b64url(22) + "." + g.b64url(43)
    add(
        "<?php\nrequire 'vendor/autoload.php';\n\n"
        f"$sendgrid = new \\SendGrid('{t}');\n"
        "$email = new \\SendGrid\\Mail\\Mail();\n$email->setFrom('noreply@acme.io');\n",
        "sendgrid-api-key",
        t,
    )
    t = "ke" + "y-" + g.hex(32)
    add(
        f"curl -s --user 'api:{t}' \\\n"
        "  https://api.mailgun.net/v3/mg.acme.io/messages \\\n"
        "  -F from='Acme <postmaster@mg.acme.io>' -F to=ops@acme.io -F subject=test",
        "mailgun-api-key",
        t,
    )
    t = g.hex(32) + "-us" + str(g.between(2, 21))
    add(
        f"MAILCHIMP_API_KEY={t}\nMAILCHIMP_AUDIENCE_ID=4f2a9c81de\nMAILCHIMP_SERVER=us\n",
        "mailchimp-api-key",
        t,
    )
    t = "sk" + "-proj-" + g.b64url(58) + "T3Blbk" + "FJ" + g.b64url(58)
    nb = {
        "cell_type": "code",
        "execution_count": 3,
        "metadata": {},
        "outputs": [],
        "source": [
            "import os\n",
            f'os.environ["OPENAI_API_KEY"] = "{t}"\n',
            "from openai import OpenAI\n",
            "client = OpenAI()\n",
        ],
    }
    add(json.dumps(nb, indent=1), "openai-project-key", t)
    t = "sk" + "-" + g.an(20) + "T3Blbk" + "FJ" + g.an(20)
    add(
        "why does this still say 401? I'm running it like this:\n\n"
        f"OPENAI_API_KEY={t} python summarize.py --model gpt-4o-mini docs/*.md",
        "openai-legacy-key",
        t,
    )
    t = "sk" + "-ant-" + "api03-" + g.b64url(93) + "AA"
    add(
        _call("bash", command=f"export ANTHROPIC_API_KEY={t} && python -m evals.run --suite smoke"),
        "anthropic-api-key",
        t,
    )
    t = "sk" + "-ant-" + "admin01-" + g.b64url(93) + "AA"
    add(
        'package main\n\nimport (\n\t"net/http"\n)\n\n'
        f'const adminKey = "{t}"\n\n'
        "func listKeys() (*http.Response, error) {\n"
        '\treq, _ := http.NewRequest("GET", '
        '"https://api.anthropic.com/v1/organizations/api_keys", nil)\n'
        '\treq.Header.Set("x-api-key", adminKey)\n\treturn http.DefaultClient.Do(req)\n}\n',
        "anthropic-admin-key",
        t,
    )
    t = "AI" + "za" + "Sy" + g.b64url(33)
    add(
        "In [2]: import google.generativeai as genai\n"
        f'   ...: genai.configure(api_key="{t}")\n'
        '   ...: model = genai.GenerativeModel("gemini-1.5-flash")\n'
        "In [3]: model.generate_content('ping').text\nOut[3]: 'pong'\n",
        "google-api-key",
        t,
    )
    t = "h" + "f_" + g.s(string.ascii_letters, 34)
    add(
        "from huggingface_hub import login, snapshot_download\n\n"
        f'login("{t}")\n'
        'snapshot_download("meta-llama/Llama-3.1-8B-Instruct", local_dir="models/llama")\n',
        "huggingface-token",
        t,
    )
    t = "np" + "m_" + g.an(36)
    add(
        "$ cat ~/.npmrc\nregistry=https://registry.npmjs.org/\n"
        f"//registry.npmjs.org/:_authToken={t}\nsave-exact=true\n",
        "npm-token",
        t,
    )
    t = "py" + "pi-" + "AgEIcHlwaS5vcmc" + g.b64url(140)
    add(
        f"[distutils]\nindex-servers =\n    pypi\n\n[pypi]\nusername = __token__\npassword = {t}\n",
        "pypi-token",
        t,
    )
    t = "rubygems" + "_" + g.hex(48)
    add(f"---\n:rubygems_api_key: {t}\n", "rubygems-api-key", t)
    t = "oy" + "2" + g.s(_LOAN, 43)
    add(
        f"dotnet nuget push bin/Release/Acme.Core.2.4.1.nupkg --api-key {t} "
        "--source https://api.nuget.org/v3/index.json",
        "nuget-api-key",
        t,
    )
    t = "dckr" + "_pat_" + g.b64url(27)
    add(
        f"$ echo {t} | docker login -u acmebuild --password-stdin\n"
        "WARNING! Your password will be stored unencrypted in /home/ci/.docker/config.json.\n"
        "Login Succeeded\n",
        "dockerhub-pat",
        t,
    )
    t = "shp" + "at_" + g.hex(32)
    add(
        "> POST /admin/api/2024-01/graphql.json HTTP/1.1\n> Host: acme-store.myshopify.com\n"
        "> Content-Type: application/json\n"
        f"> X-Shopify-Access-Token: {t}\n> Content-Length: 84\n>\n< HTTP/1.1 200 OK\n",
        "shopify-access-token",
        t,
    )
    t = "gl" + "sa_" + g.an(32) + "_" + g.hex(8)
    add(
        f"curl -H 'Authorization: Bearer {t}' "
        "https://grafana.acme.internal/api/dashboards/uid/k8s-cluster | jq .meta.version",
        "grafana-service-account-token",
        t,
    )
    t = "NR" + "AK-" + g.upan(27)
    add(
        'terraform {\n  required_providers {\n    newrelic = { source = "newrelic/newrelic" }\n'
        '  }\n}\n\nprovider "newrelic" {\n  account_id = 3918274\n'
        f'  api_key    = "{t}"\n  region     = "US"\n}}\n',
        "newrelic-user-key",
        t,
    )
    t = "sntr" + "yu_" + g.hex(64)
    add(
        "- name: Upload sourcemaps\n  run: npx @sentry/cli sourcemaps upload ./dist\n  env:\n"
        "    SENTRY_ORG: acme\n    SENTRY_PROJECT: web\n"
        f"    SENTRY_AUTH_TOKEN: {t}\n",
        "sentry-user-token",
        t,
    )
    t = "dop" + "_v1_" + g.hex(64)
    add(
        f"$ cat ~/.config/doctl/config.yaml\naccess-token: {t}\ncontext: default\noutput: text\n",
        "digitalocean-token",
        t,
    )
    t = "hv" + "s." + "CAESI" + g.b64url(86)
    add(
        "$ vault login -method=oidc role=dev\nSuccess! You are now authenticated.\n\n"
        "Key                  Value\n---                  -----\n"
        f"token                {t}\ntoken_accessor       {g.an(24)}\n"
        "token_duration       8h\ntoken_renewable      true\n"
        'token_policies       ["default" "dev"]\n',
        "vault-token",
        t,
    )
    t = g.an(14) + ".atlas" + "v1." + g.b64url(67)
    add(
        json.dumps({"credentials": {"app.terraform.io": {"token": t}}}, indent=2),
        "terraform-cloud-token",
        t,
    )
    t = g.s(_AN, 3) + "8Q" + "~" + g.s(_AN + "~._-", 34)
    add(
        json.dumps(
            {
                "AzureAd": {
                    "Instance": "https://login.microsoftonline.com/",
                    "TenantId": g.uuid(),
                    "ClientId": g.uuid(),
                    "ClientSecret": t,
                },
                "Logging": {"LogLevel": {"Default": "Information"}},
            },
            indent=2,
        ),
        "azure-ad-client-secret",
        t,
    )
    t = "lin" + "_api_" + g.an(40)
    add(
        'import { LinearClient } from "@linear/sdk";\n\n'
        f'const linear = new LinearClient({{ apiKey: "{t}" }});\n'
        "const me = await linear.viewer;\n",
        "linear-api-key",
        t,
    )
    t = "nt" + "n_" + g.dig(11) + g.an(35)
    add(
        "from notion_client import Client\n\n"
        f'notion = Client(auth="{t}")\n'
        'pages = notion.search(query="Roadmap")["results"]\n',
        "notion-token",
        t,
    )
    t = "PM" + "AK-" + g.hex(24) + "-" + g.hex(34)
    add(
        f"newman run collection.json --env-var apiKey={t} -r cli,junit",
        "postman-api-key",
        t,
    )
    t = "da" + "pi" + g.hex(32)
    add(
        "$ cat ~/.databrickscfg\n[DEFAULT]\n"
        f"host  = https://adb-{g.dig(16)}.7.azuredatabricks.net\ntoken = {t}\n",
        "databricks-token",
        t,
    )
    t = "sb" + "p_" + g.hex(40)
    add(
        f"$ npx supabase login --token {t}\nYou are now logged in. Happy coding!\n",
        "supabase-access-token",
        t,
    )
    t = "gs" + "k_" + g.an(52)
    add(
        f"我的 Groq key 是 {t}，为什么调用 chat/completions 总是返回 401？模型用的是 "
        "llama-3.1-70b。",
        "groq-api-key",
        t,
    )
    t = "r8" + "_" + g.an(37)
    add(
        f"$ export REPLICATE_API_TOKEN={t}\n$ python predict.py --prompt 'a red fox'\n",
        "replicate-token",
        t,
    )
    t = "pp" + "lx-" + g.an(48)
    add(
        "PERPLEXITY_API_KEY=" + t + "\nPERPLEXITY_MODEL=sonar-pro\n",
        "perplexity-api-key",
        t,
    )
    t = "xa" + "i-" + g.an(80)
    add(
        "use async_openai::{config::OpenAIConfig, Client};\n\nfn client() -> Client<OpenAIConfig> "
        "{\n"
        "    let cfg = OpenAIConfig::new()\n"
        '        .with_api_base("https://api.x.ai/v1")\n'
        f'        .with_api_key("{t}");\n    Client::with_config(cfg)\n}}\n',
        "xai-api-key",
        t,
    )
    t = "sk" + "-or-" + "v1-" + g.hex(64)
    add(
        "I've set up the client for you:\n\n```python\nclient = OpenAI(\n"
        '    base_url="https://openrouter.ai/api/v1",\n'
        f'    api_key="{t}",\n)\n```\n\nRun it again and it should route to the free model.',
        "openrouter-api-key",
        t,
    )
    t = "AT" + "ATT3xFfGF0" + g.b64url(170) + "=" + g.s("0123456789ABCDEF", 8)
    add(
        f"curl -u dana@acme.io:{t} -H 'Accept: application/json' "
        "'https://acme.atlassian.net/rest/api/3/search?jql=project=OPS'",
        "atlassian-api-token",
        t,
    )
    t = "AGE-SECRET" + "-KEY-1" + g.s(_BECH32.upper(), 58)
    add(
        "$ cat ~/.config/sops/age/keys.txt\n# created: 2024-02-19T10:22:41+01:00\n"
        f"# public key: age1{g.s(_BECH32, 58)}\n{t}\n",
        "age-secret-key",
        t,
    )
    t = "bk" + "ua_" + g.hex(40)
    add(
        f"BUILDKITE_API_TOKEN={t} bk pipeline list --org acme",
        "buildkite-token",
        t,
    )
    t = "pu" + "l-" + g.hex(40)
    add(
        f"PS C:\\src\\infra> $env:PULUMI_ACCESS_TOKEN = '{t}'\n"
        "PS C:\\src\\infra> pulumi stack select prod\n",
        "pulumi-access-token",
        t,
    )
    t = "EA" + "AA" + g.b64url(60)
    add(
        "const { Client, Environment } = require('square');\n\nconst client = new Client({\n"
        "  environment: Environment.Production,\n"
        f"  accessToken: '{t}',\n}});\n",
        "square-access-token",
        t,
    )
    t = "dp" + ".st." + "prd." + g.an(40)
    add(
        f"docker run --rm -e DOPPLER_TOKEN={t} acme/api:1.8.2 doppler run -- ./server",
        "doppler-service-token",
        t,
    )
    t = "fi" + "gd_" + g.b64url(40)
    add(
        f"curl -H 'X-Figma-Token: {t}' https://api.figma.com/v1/files/{g.an(22)}",
        "figma-pat",
        t,
    )
    t = "pa" + "t" + g.an(14) + "." + g.hex(64)
    add(
        'import Airtable from "airtable";\n\n'
        f'const base = new Airtable({{ apiKey: "{t}" }}).base("app{g.an(14)}");\n',
        "airtable-pat",
        t,
    )
    t = "pscale" + "_pw_" + g.b64url(43)
    add(
        "DATABASE_HOST=aws.connect.psdb.cloud\nDATABASE_USERNAME=" + g.loan(12) + "\n"
        f"DATABASE_PASSWORD={t}\n",
        "planetscale-password",
        t,
    )
    t = "s" + "l." + g.b64url(136)
    add(
        "ok the Dropbox sync still fails with `expired_access_token`. the app uses this token, "
        f"generated it yesterday: {t}",
        "dropbox-token",
        t,
    )
    return out


# --------------------------------------------------------------------------------------------
# private keys


def _wrap(body: str, width: int) -> list[str]:
    return [body[i : i + width] for i in range(0, len(body), width)]


def _ssh_string(b: bytes) -> bytes:
    return len(b).to_bytes(4, "big") + b


def _openssh_ed25519(g: _Rand, comment: bytes) -> bytes:
    pub = g.raw(32)
    check = g.raw(4)
    algo = _ssh_string(b"ssh-ed25519")
    pub_blob = algo + _ssh_string(pub)
    priv = check + check + algo + _ssh_string(pub) + _ssh_string(g.raw(32) + pub)
    priv += _ssh_string(comment)
    priv += bytes(range(1, 8 - len(priv) % 8 + 1)) if len(priv) % 8 else b""
    return (
        b"openssh-key-v1\x00"
        + _ssh_string(b"none")
        + _ssh_string(b"none")
        + _ssh_string(b"")
        + (1).to_bytes(4, "big")
        + _ssh_string(pub_blob)
        + _ssh_string(priv)
    )


def _openssh_rsa(g: _Rand) -> bytes:
    pub_blob = _ssh_string(b"ssh-rsa") + _ssh_string(b"\x01\x00\x01") + _ssh_string(g.raw(385))
    priv = g.raw(4) * 2 + _ssh_string(b"ssh-rsa") + g.raw(1540)
    return (
        b"openssh-key-v1\x00"
        + _ssh_string(b"none")
        + _ssh_string(b"none")
        + _ssh_string(b"")
        + (1).to_bytes(4, "big")
        + _ssh_string(pub_blob)
        + _ssh_string(priv)
    )


_RSA1 = bytes.fromhex("308204a40201000282010100")
_RSA8 = bytes.fromhex(
    "308204be020100300d06092a864886f70d0101010500048204a8308204a40201000282010100"
)
_EC1_HEAD = bytes.fromhex("30770201010420")
_EC1_MID = bytes.fromhex("a00a06082a8648ce3d030107a144034200")
_EC8_HEAD = bytes.fromhex(
    "308187020100301306072a8648ce3d020106082a8648ce3d030107046d306b0201010420"
)
_EC8_MID = bytes.fromhex("a144034200")
_ENC8 = bytes.fromhex("3082052c305606092a864886f70d01050d3049303106092a864886f70d01050c302404")
_DSA = bytes.fromhex("308201bb02010002818100")


def _rsa1(g: _Rand) -> bytes:
    return _RSA1 + g.raw(1180)


def _rsa8(g: _Rand) -> bytes:
    return _RSA8 + g.raw(1180)


def _ec1(g: _Rand) -> bytes:
    return _EC1_HEAD + g.raw(32) + _EC1_MID + b"\x04" + g.raw(64)


def _ec8(g: _Rand) -> bytes:
    return _EC8_HEAD + g.raw(32) + _EC8_MID + b"\x04" + g.raw(64)


class _Pem:
    """A PEM block: its text, its body lines and the line a test asks to be withheld."""

    def __init__(self, label: str, der: bytes, width: int = 64, pick: int = 1) -> None:
        self.lines = _wrap(base64.b64encode(der).decode(), width)
        self.begin = f"{_BEGIN}{label}{_DASH5}"
        self.end = f"{_END}{label}{_DASH5}"
        self.secret = self.lines[min(pick, len(self.lines) - 2)]

    def text(self, sep: str = "\n", indent: str = "") -> str:
        rows = [self.begin, *self.lines, self.end]
        return sep.join(indent + r for r in rows)


def _private_key(g: _Rand) -> list[Case]:
    out: list[Case] = []

    def add(text: str, shape: str, secret: str) -> None:
        out.append(_p(text, "private-key", shape, secret))

    rsa = "RSA PRIVATE" + " KEY"
    pk8 = "PRIVATE" + " KEY"
    ec = "EC PRIVATE" + " KEY"
    ossh = "OPENSSH PRIVATE" + " KEY"

    k = _Pem(rsa, _rsa1(g), pick=8)
    add(f"$ cat deploy/keys/api-signing.pem\n{k.text()}\n$ ", "rsa-pkcs1-cat", k.secret)

    k = _Pem(pk8, _rsa8(g), pick=11)
    sa = {
        "type": "service_account",
        "project_id": "acme-analytics-prod",
        "private_key_id": g.hex(40),
        "private_key": k.text() + "\n",
        "client_email": "etl-runner@acme-analytics-prod.iam.gserviceaccount.com",
        "client_id": g.dig(21),
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token",
    }
    add(json.dumps(sa, indent=2), "gcp-service-account-json", k.secret)

    k = _Pem(ec, _ec1(g), pick=1)
    add(
        "$ openssl ecparam -name prime256v1 -genkey -noout\n" + k.text() + "\n",
        "ec-sec1-openssl",
        k.secret,
    )

    k = _Pem(ossh, _openssh_ed25519(g, b"dana@laptop"), width=70, pick=3)
    add(f"$ cat ~/.ssh/id_ed25519\n{k.text()}\n", "openssh-ed25519", k.secret)

    k = _Pem(ossh, _openssh_rsa(g), width=70, pick=12)
    add(
        "#!/usr/bin/env bash\nset -euo pipefail\nmkdir -p ~/.ssh && chmod 700 ~/.ssh\n"
        "cat > ~/.ssh/id_rsa <<'EOF'\n" + k.text() + "\nEOF\nchmod 600 ~/.ssh/id_rsa\n"
        "ssh-keyscan github.com >> ~/.ssh/known_hosts\n",
        "openssh-rsa-heredoc",
        k.secret,
    )

    k = _Pem("ENCRYPTED PRIVATE" + " KEY", _ENC8 + g.raw(1290), pick=4)
    add(
        "Here is the content of certs/client.key from the repo:\n\n```\n"
        + k.text()
        + "\n```\n\nIt is passphrase-protected; the passphrase is in the team vault.",
        "pkcs8-encrypted",
        k.secret,
    )

    k = _Pem("DSA PRIVATE" + " KEY", _DSA + g.raw(430), pick=8)
    add(f"$ sudo cat /etc/ssh/ssh_host_dsa_key\n{k.text()}\n", "dsa-legacy", k.secret)

    pgp_lines = _wrap("lQ" + "OYBG" + g.b64(3000)[:3200], 64)
    pgp = "PGP PRIVATE KEY" + " BLOCK"
    pgp_text = "\n".join(
        [
            f"{_BEGIN}{pgp}{_DASH5}",
            "",
            *pgp_lines,
            "=" + g.b64(3)[:4],
            f"{_END}{pgp}{_DASH5}",
        ]
    )
    add(
        "$ gpg --export-secret-keys --armor release@acme.io\n" + pgp_text + "\n",
        "pgp-private-key-block",
        pgp_lines[6],
    )

    priv_line = g.b64(48)
    add(
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: build-agent\n"
        f"Public-Lines: 2\n{g.b64(48)[:64]}\n{g.b64(3)}\n"
        f"Private-Lines: 1\n{priv_line}\nPrivate-MAC: {g.hex(64)}\n",
        "putty-ppk",
        priv_line,
    )

    k = _Pem(rsa, _rsa1(g), pick=7)
    cut = "\n".join([k.begin, *k.lines[:10]]) + "\n" + k.lines[10][:23]
    add(f"$ head -c 700 server.key\n{cut}", "rsa-truncated-head", k.secret)

    k = _Pem(pk8, _rsa8(g), pick=8)
    cut = "\n".join([k.begin, *k.lines[:9]])
    add(
        f"{cut}\n... [output truncated: 1421 more characters]",
        "pkcs8-truncated-tool-output",
        k.secret,
    )

    k = _Pem(rsa, _rsa1(g), pick=9)
    add(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: ingress-tls\n  namespace: web\n"
        "type: kubernetes.io/tls\nstringData:\n  tls.key: |\n"
        + k.text(indent="    ")
        + "\n  tls.crt: |\n    "
        + _BEGIN
        + "CERTIFICATE"
        + _DASH5
        + "\n    ...\n",
        "k8s-secret-block-scalar",
        k.secret,
    )

    k = _Pem(ec, _ec1(g), pick=1)
    add(
        '"""Signing key for the webhook relay (dev only, rotate before launch)."""\n\n'
        f'SIGNING_KEY = """{k.text()}\n"""\n',
        "ec-python-triple-quoted",
        k.secret,
    )

    k = _Pem(pk8, _ec8(g), pick=1)
    add(
        'APP_NAME=ledger\nJWT_ALG=ES256\nJWT_PRIVATE_KEY="'
        + k.text(sep="\\n")
        + '\\n"\nJWT_ISSUER=https://ledger.acme.io\n',
        "pkcs8-ec-dotenv-escaped",
        k.secret,
    )

    k = _Pem(rsa, _rsa1(g), pick=10)
    diff_body = "\n".join("+" + r for r in [k.begin, *k.lines, k.end])
    add(
        "diff --git a/infra/bastion.pem b/infra/bastion.pem\nnew file mode 100644\n"
        f"index 0000000..{g.hex(7)}\n--- /dev/null\n+++ b/infra/bastion.pem\n"
        f"@@ -0,0 +1,{len(k.lines) + 2} @@\n{diff_body}\n",
        "rsa-git-diff",
        k.secret,
    )

    k = _Pem(rsa, _rsa1(g), pick=12)
    add(
        "$ terraform output -raw deploy_private_key\n" + k.text() + "\n",
        "rsa-terraform-output",
        k.secret,
    )

    k = _Pem(ossh, _openssh_ed25519(g, b"deploy@ci"), width=70, pick=3)
    add(
        "这是服务器上的部署私钥，帮我看看格式对不对，ssh 一直提示 invalid format：\n\n"
        + k.text()
        + "\n",
        "openssh-chinese-chat",
        k.secret,
    )

    k = _Pem(pk8, _rsa8(g), pick=10)
    add(
        _call("write_file", path="secrets/saml-sp.key", content=k.text() + "\n"),
        "pkcs8-tool-call-json",
        k.secret,
    )

    k = _Pem(ossh, _openssh_ed25519(g, b"ansible"), width=70, pick=3)
    add(
        "---\ndeploy_user: ansible\ndeploy_ssh_private_key: |\n"
        + k.text(indent="  ")
        + "\ndeploy_known_hosts: []\n",
        "openssh-ansible-vars",
        k.secret,
    )

    k = _Pem(pk8, _rsa8(g), pick=8)
    java_rows = "\n".join(f'        + "{r}\\n"' for r in [*k.lines, k.end])
    add(
        "public final class TestKeys {\n    static final String PRIVATE_KEY_PEM =\n"
        f'        "{k.begin}\\n"\n{java_rows};\n}}\n',
        "pkcs8-java-concatenation",
        k.secret,
    )

    k = _Pem(pk8, _ec8(g), pick=1)
    add(
        "$ sudo cat /etc/letsencrypt/live/api.acme.io/privkey.pem\n" + k.text() + "\n",
        "pkcs8-ec-certbot",
        k.secret,
    )

    d = g.b64u(g.raw(32))
    jwk = {
        "kty": "EC",
        "crv": "P-256",
        "kid": "sig-2024-06",
        "use": "sig",
        "x": g.b64u(g.raw(32)),
        "y": g.b64u(g.raw(32)),
        "d": d,
    }
    add("$ cat keys/signing.jwk.json\n" + json.dumps(jwk, indent=2), "jwk-ec-private", d)

    k = _Pem(rsa, _rsa1(g), pick=14)
    add(
        "package keys\n\nconst devKey = `" + k.text() + "`\n",
        "rsa-go-raw-string",
        k.secret,
    )
    return out


# --------------------------------------------------------------------------------------------
# connection strings


def _pct(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def _connection_string(g: _Rand) -> list[Case]:
    out: list[Case] = []

    def add(text: str, shape: str, secret: str) -> None:
        out.append(_p(text, "connection-string", shape, secret))

    pw = g.an(24)
    add(
        "NODE_ENV=production\nPORT=8080\n"
        f"DATABASE_URL=postgresql://orders_app:{pw}@orders-db.c9xk2.eu-central-1.rds.amazonaws.com"
        ":5432/orders\nREDIS_URL=redis://cache:6379/0\n",
        "postgresql-url-dotenv",
        pw,
    )
    pw = g.password()
    add(
        "services:\n  api:\n    build: .\n    environment:\n"
        f"      - DATABASE_URL=postgres://api:{_pct(pw)}@db:5432/api_dev\n"
        "    depends_on: [db]\n",
        "postgres-url-compose",
        _pct(pw),
    )
    pw = g.an(18)
    add(
        "[alembic]\nscript_location = migrations\n"
        f"sqlalchemy.url = postgresql+psycopg2://migrator:{pw}@10.20.4.11/warehouse\n\n"
        "[loggers]\nkeys = root,sqlalchemy,alembic\n",
        "sqlalchemy-psycopg2-alembic",
        pw,
    )
    raw = g.lo(5) + "@" + g.dig(3) + ":" + g.an(6) + "/" + g.lo(3)
    enc = _pct(raw)
    add(
        "from sqlalchemy.ext.asyncio import create_async_engine\n\n"
        "engine = create_async_engine(\n"
        f'    "postgresql+asyncpg://svc_reports:{enc}@pg.internal:5432/reports",\n'
        "    pool_size=10,\n)\n",
        "asyncpg-percent-encoded",
        enc,
    )
    pw = g.an(20)
    add(
        f'$ psql "postgresql://readonly:{pw}@analytics.db.acme.io:5432/events?sslmode=require" '
        "-c '\\dt'\n          List of relations\n Schema |  Name   | Type  |  Owner\n"
        "--------+---------+-------+----------\n public | clicks  | table | etl\n",
        "postgresql-url-psql",
        pw,
    )
    pw = g.strong(16)
    add(
        "import psycopg2\n\nconn = psycopg2.connect(\n"
        f'    "host=10.0.3.7 port=5432 dbname=orders user=etl password={pw} sslmode=require"\n)\n',
        "libpq-keyword-dsn",
        pw,
    )
    pw = g.an(22)
    add(
        "production:\n  adapter: mysql2\n  encoding: utf8mb4\n  pool: 5\n"
        f"  url: mysql2://rails:{pw}@mysql-primary.internal:3306/shop_production\n",
        "mysql2-rails-database-yml",
        pw,
    )
    pw = g.password()
    add(
        "class ProductionConfig(Config):\n    DEBUG = False\n"
        f'    SQLALCHEMY_DATABASE_URI = "mysql+pymysql://flask:{_pct(pw)}@db.acme.io/blog"\n',
        "mysql-pymysql-flask",
        _pct(pw),
    )
    pw = g.an(16)
    add(
        "const mongoose = require('mongoose');\n\nawait mongoose.connect(\n"
        f"  'mongodb+srv://app-user:{pw}@cluster0.x7kq2.mongodb.net/inventory"
        "?retryWrites=true&w=majority'\n);\n",
        "mongodb-srv-mongoose",
        pw,
    )
    pw = g.an(20)
    add(
        '{"t":{"$date":"2024-04-18T08:12:55.201Z"},"s":"I","c":"app","msg":"Connecting to '
        f"mongodb://admin:{pw}@mongo-0.mongo:27017,mongo-1.mongo:27017,mongo-2.mongo:27017/"
        'catalog?replicaSet=rs0&authSource=admin"}',
        "mongodb-replica-set-log",
        pw,
    )
    pw = g.an(32)
    add(
        "# celeryconfig.py\n"
        f"broker_url = 'redis://:{pw}@redis-master.queue.svc.cluster.local:6379/0'\n"
        "result_backend = 'django-db'\ntask_acks_late = True\n",
        "redis-url-celery",
        pw,
    )
    pw = g.an(34)
    add(
        f"UPSTASH_REDIS_URL=rediss://default:{pw}@eu1-proud-koala-31822.upstash.io:31822\n",
        "rediss-upstash",
        pw,
    )
    pw = g.an(18)
    add(
        "        env:\n          - name: AMQP_URL\n"
        f"            value: amqp://orders:{pw}@rabbitmq.messaging:5672/orders\n"
        "          - name: LOG_LEVEL\n            value: info\n",
        "amqp-url-k8s-env",
        pw,
    )
    pw = g.b64url(32)
    add(
        f"CLOUDAMQP_URL=amqps://kqzwdmrt:{pw}@rattlesnake.rmq.cloudamqp.com/kqzwdmrt",
        "amqps-cloudamqp",
        pw,
    )
    pw = g.strong(18).replace(";", "")
    cs = {
        "ConnectionStrings": {
            "Default": "Server=tcp:acme-sql.database.windows.net,1433;Initial Catalog=orders;"
            f"Persist Security Info=False;User ID=sqladmin;Password={pw};"
            "MultipleActiveResultSets=False;Encrypt=True;TrustServerCertificate=False;"
            "Connection Timeout=30;"
        },
        "AllowedHosts": "*",
    }
    add(json.dumps(cs, indent=2), "adonet-sqlserver-appsettings", pw)
    pw = g.an(6) + ";" + g.an(5) + "=" + g.an(4)
    add(
        "var builder = WebApplication.CreateBuilder(args);\n"
        "builder.Services.AddDbContext<ShopContext>(o => o.UseSqlServer(\n"
        '    "Server=sql01;Database=Shop;User '
        f"Id=shop_app;Password='{pw}';TrustServerCertificate=true\"));\n",
        "adonet-quoted-password",
        pw,
    )
    pw = g.an(20)
    add(
        "spring.datasource.url=jdbc:postgresql://db.internal:5432/billing"
        f"?user=billing&password={pw}&ssl=true\n"
        "spring.jpa.hibernate.ddl-auto=validate\n",
        "jdbc-postgresql-query",
        pw,
    )
    pw = g.password()
    add(
        "jdbc:sqlserver://reporting.acme.local:1433;databaseName=Reports;user=report_reader;"
        f"password={pw};encrypt=true;trustServerCertificate=true;",
        "jdbc-sqlserver",
        pw,
    )
    pw = g.an(14)
    add(
        '<Resource name="jdbc/LegacyDS" auth="Container" type="javax.sql.DataSource"\n'
        f'          url="jdbc:oracle:thin:hr_app/{pw}@//ora-prod.acme.local:1521/ORCLPDB1"\n'
        '          maxTotal="20" maxIdle="5"/>\n',
        "jdbc-oracle-thin",
        pw,
    )
    pw = g.an(17)
    add(
        "import pyodbc\n\ncnxn = pyodbc.connect(\n"
        '    "Driver={ODBC Driver 18 for SQL Server};Server=tcp:10.1.2.3,1433;'
        f'Database=Finance;Uid=fin_ro;Pwd={pw};Encrypt=yes;TrustServerCertificate=no;"\n)\n',
        "odbc-sqlserver",
        pw,
    )
    key = g.b64(64)
    add(
        "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acmelogs;"
        f"AccountKey={key};EndpointSuffix=core.windows.net\n",
        "azure-storage-account-key",
        key,
    )
    key = g.b64(32)
    add(
        "$ az servicebus namespace authorization-rule keys list -g rg-msg "
        "--namespace-name acme-bus -n RootManageSharedAccessKey --query primaryConnectionString\n"
        '"Endpoint=sb://acme-bus.servicebus.windows.net/;'
        f'SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={key}"\n',
        "azure-servicebus-sas",
        key,
    )
    pw = g.an(12)
    add(
        f"$ lftp ftp://backup:{pw}@ftp.legacy-host.net\nlftp backup@ftp.legacy-host.net:~> ls\n"
        "drwxr-xr-x    2 1001     1001         4096 Mar 02 03:00 nightly\n",
        "ftp-url",
        pw,
    )
    pw = g.an(36)
    add(
        "# settings/production.py\n"
        f'EMAIL_URL = "smtp+tls://postmaster@mg.acme.io:{pw}@smtp.mailgun.org:587"\n'
        "EMAIL_CONFIG = env.email_url('EMAIL_URL')\n",
        "smtp-url-django-environ",
        pw,
    )
    pw = g.an(20)
    add(
        f"$ pip install --index-url https://deploy:{pw}@nexus.acme.io/repository/pypi-internal/"
        "simple acme-core==3.2.0\nLooking in indexes: https://deploy:****@nexus.acme.io/"
        "repository/pypi-internal/simple\nCollecting acme-core==3.2.0\n",
        "https-basic-auth-pip-index",
        pw,
    )
    pw = g.an(20)
    add(
        "$ cat .git/config\n[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
        '[remote "origin"]\n'
        f"\turl = https://ci-bot:{pw}@git.acme.internal/platform/tools.git\n"
        "\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
        "https-userinfo-git-config",
        pw,
    )
    pw = g.b64url(43)
    add(
        "NEO4J_URI=neo4j+s://3f9a1c2e.databases.neo4j.io\n"
        f"GRAPH_DSN=neo4j+s://neo4j:{pw}@3f9a1c2e.databases.neo4j.io:7687\n",
        "neo4j-url",
        pw,
    )
    pw = g.an(16)
    add(
        "from clickhouse_driver import Client\n\n"
        f"client = Client.from_url('clickhouse://default:{pw}@ch-01.analytics:9000/events')\n"
        "rows = client.execute('SELECT count() FROM pageviews')\n",
        "clickhouse-url",
        pw,
    )
    pw = g.password()
    add(
        "我们生产库的连接串是 "
        f"postgres://admin:{_pct(pw)}@10.8.0.12:5432/crm ，"
        "本地可以连，部署到 k8s 以后一直报 connection refused，帮我看看？",
        "postgres-url-chinese-chat",
        _pct(pw),
    )
    pw = g.b64url(22)
    add(
        "cockroach sql --url "
        f"'postgresql://maxroach:{pw}@free-tier14.aws-us-east-1.cockroachlabs.cloud:26257/"
        "defaultdb?sslmode=verify-full'",
        "cockroachdb-url",
        pw,
    )
    pw = g.an(20)
    add(
        _call(
            "bash",
            command="docker run -d --name worker -e "
            f"DATABASE_URL=postgres://worker:{pw}@host.docker.internal:5432/jobs acme/worker:dev",
        ),
        "postgres-url-tool-call",
        pw,
    )
    pw = g.password()
    add(
        'engine = create_engine(\n    "mssql+pyodbc://sa:'
        f'{_pct(pw)}@sql-dev:1433/Inventory?driver=ODBC+Driver+18+for+SQL+Server"\n)\n',
        "mssql-pyodbc-percent-encoded",
        _pct(pw),
    )
    pw = g.an(24)
    add(
        "client, err := mongo.Connect(ctx, options.Client().ApplyURI(\n"
        f'\t"mongodb://orders_svc:{pw}@mongo.orders.svc:27017/?authSource=orders"))\n'
        "if err != nil {\n\tlog.Fatal(err)\n}\n",
        "mongodb-url-go",
        pw,
    )
    pw = g.an(16)
    add(
        f"snowflake://etl_user:{pw}@xy12345.eu-west-1/ANALYTICS/PUBLIC"
        "?warehouse=TRANSFORM_WH&role=TRANSFORMER",
        "snowflake-sqlalchemy-url",
        pw,
    )
    pw = g.an(20)
    add(
        f"$ curl -s https://elastic:{pw}@localhost:9200/_cluster/health?pretty\n"
        '{\n  "cluster_name" : "docker-cluster",\n  "status" : "yellow",\n'
        '  "number_of_nodes" : 1\n}\n',
        "https-userinfo-elasticsearch",
        pw,
    )
    return out


# --------------------------------------------------------------------------------------------
# JSON Web Tokens


def _jwt(g: _Rand, payload: dict[str, object], alg: str = "HS256", kid: str | None = None) -> str:
    header: dict[str, object] = {"alg": alg, "typ": "JWT"}
    if kid is not None:
        header["kid"] = kid
    sig_bytes = {"HS256": 32, "HS512": 64, "RS256": 256, "ES256": 64}[alg]

    def enc(obj: dict[str, object]) -> str:
        return g.b64u(json.dumps(obj, separators=(",", ":")).encode())

    return enc(header) + "." + enc(payload) + "." + g.b64u(g.raw(sig_bytes))


def _jwts(g: _Rand) -> list[Case]:
    out: list[Case] = []

    def add(text: str, shape: str, secret: str) -> None:
        out.append(_p(text, "jwt", shape, secret))

    def iat() -> int:
        return 1_714_000_000 + g.between(0, 9_000_000)

    t0 = iat()
    t = _jwt(g, {"sub": g.uuid(), "iat": t0, "exp": t0 + 3600, "scope": "read write"})
    add(
        "$ curl -v https://api.acme.io/v2/me\n*   Trying 104.18.22.7:443...\n"
        "* Connected to api.acme.io (104.18.22.7) port 443\n> GET /v2/me HTTP/2\n"
        f"> Host: api.acme.io\n> user-agent: curl/8.5.0\n> accept: */*\n"
        f"> authorization: Bearer {t}\n>\n< HTTP/2 401\n"
        '< www-authenticate: Bearer error="invalid_token"\n',
        "curl-verbose-bearer",
        t,
    )
    t0 = iat()
    t = _jwt(
        g,
        {
            "iss": "https://auth.acme.io/",
            "sub": "auth0|" + g.hex(24),
            "aud": "https://api.acme.io",
            "iat": t0,
            "exp": t0 + 86400,
            "azp": g.an(32),
            "gty": "client-credentials",
        },
        alg="RS256",
        kid=g.b64url(22),
    )
    add(
        json.dumps({"access_token": t, "token_type": "Bearer", "expires_in": 86400}),
        "oauth-token-response",
        t,
    )
    t0 = iat()
    t = _jwt(g, {"userId": g.between(1000, 99999), "email": "li.wei@acme.cn", "iat": t0})
    add(
        f"> localStorage.getItem('authToken')\n< '{t}'\n> ",
        "devtools-localstorage",
        t,
    )
    t0 = iat()
    t = _jwt(g, {"sid": g.hex(32), "uid": g.between(100, 9999), "iat": t0, "exp": t0 + 1209600})
    add(
        "HTTP/1.1 200 OK\nContent-Type: application/json; charset=utf-8\n"
        f"Set-Cookie: session={t}; Path=/; Expires=Wed, 21 Aug 2024 07:28:00 GMT; HttpOnly; "
        'Secure; SameSite=Lax\nContent-Length: 27\n\n{"ok":true,"redirect":"/"}',
        "set-cookie",
        t,
    )
    t0 = iat()
    t = _jwt(g, {"room": "ops-" + g.dig(4), "user": g.between(1, 9999), "exp": t0 + 600})
    add(
        f'10.2.0.17 - - [18/Apr/2024:08:12:55 +0000] "GET /ws/chat?token={t} HTTP/1.1" 101 0 '
        '"-" "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36"',
        "nginx-access-log-query",
        t,
    )
    t = _jwt(
        g,
        {
            "iss": "kubernetes/serviceaccount",
            "kubernetes.io/serviceaccount/namespace": "ci",
            "kubernetes.io/serviceaccount/secret.name": "deployer-token-" + g.loan(5),
            "kubernetes.io/serviceaccount/service-account.name": "deployer",
            "sub": "system:serviceaccount:ci:deployer",
        },
        alg="RS256",
        kid=g.b64url(43),
    )
    add(
        "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n"
        "    server: https://10.0.0.1:6443\n  name: prod\ncontexts:\n"
        "- context:\n    cluster: prod\n    user: deployer\n  name: prod\n"
        "current-context: prod\nusers:\n- name: deployer\n  user:\n"
        f"    token: {t}\n",
        "kubeconfig-sa-token",
        t,
    )
    t = _jwt(
        g,
        {
            "iss": "supabase",
            "ref": g.lo(20),
            "role": "service_role",
            "iat": 1_700_000_000 + g.between(0, 9_000_000),
            "exp": 2_015_000_000,
        },
    )
    add(
        "NEXT_PUBLIC_SUPABASE_URL=https://" + g.lo(20) + ".supabase.co\n"
        f"SUPABASE_SERVICE_ROLE_KEY={t}\n",
        "supabase-service-role",
        t,
    )
    t0 = iat()
    t = _jwt(g, {"sub": "42", "role": "admin", "iat": t0, "exp": t0 + 7200})
    add(
        "def test_admin_can_delete_project(client):\n"
        "    resp = client.delete(\n        '/api/projects/17',\n"
        f"        headers={{'Authorization': 'Bearer {t}'}},\n    )\n"
        "    assert resp.status_code == 204\n",
        "pytest-header",
        t,
    )
    t0 = iat()
    t = _jwt(g, {"sub": g.uuid(), "org": "acme", "iat": t0, "exp": t0 + 900}, alg="ES256")
    add(
        "can you decode this JWT and tell me why the gateway rejects it? it was issued a few "
        f"minutes ago\n\n{t}",
        "user-chat-decode",
        t,
    )
    t0 = iat()
    t = _jwt(g, {"uid": g.between(10000, 99999), "name": "张伟", "iat": t0, "exp": t0 + 3600})
    add(
        f"这个 token 是不是已经过期了？前端一直拿到 401：{t}",
        "chinese-chat",
        t,
    )
    t0 = iat()
    t = _jwt(g, {"sub": g.hex(24), "tenant": "t-" + g.dig(5), "iat": t0, "exp": t0 + 3600})
    har = {
        "log": {
            "version": "1.2",
            "entries": [
                {
                    "request": {
                        "method": "GET",
                        "url": "https://app.acme.io/api/invoices?page=2",
                        "headers": [
                            {"name": "accept", "value": "application/json"},
                            {"name": "authorization", "value": "Bearer " + t},
                        ],
                    },
                    "response": {"status": 200, "statusText": "OK"},
                }
            ],
        }
    }
    add(json.dumps(har, indent=2), "har-export", t)
    t0 = iat()
    t = _jwt(g, {"sub": "svc-billing", "aud": "ledger", "iat": t0, "exp": t0 + 300})
    add(
        json.dumps(
            {
                "level": "debug",
                "ts": "2024-05-02T10:11:12.345Z",
                "msg": "upstream request",
                "method": "POST",
                "url": "http://ledger:8080/v1/entries",
                "auth": "Bearer " + t,
            }
        ),
        "structured-log",
        t,
    )
    t0 = iat()
    t = _jwt(g, {"sub": "7", "exp": t0 + 60, "iat": t0})
    add(
        "    def test_refresh_rotates(self, api):\n>       assert r.status_code == 200\n"
        "E       assert 401 == 200\n\napi        = <TestClient base_url='http://testserver'>\n"
        "r          = <Response [401]>\nself       = <tests.test_auth.TestRefresh object>\n"
        f"token      = '{t}'\n\ntests/test_auth.py:88: AssertionError\n",
        "pytest-locals-traceback",
        t,
    )
    t0 = iat()
    t = _jwt(
        g,
        {
            "iss": "https://securetoken.google.com/acme-mobile",
            "aud": "acme-mobile",
            "auth_time": t0,
            "user_id": g.an(28),
            "sub": g.an(28),
            "iat": t0,
            "exp": t0 + 3600,
            "email": "rider@example.com",
            "firebase": {"sign_in_provider": "password"},
        },
        alg="RS256",
        kid=g.hex(40),
    )
    add(
        f"I/flutter (21873): [auth] signed in, idToken: {t}\n"
        "I/flutter (21873): [api] GET /rides -> 200 (143ms)\n",
        "flutter-log-firebase",
        t,
    )
    t0 = iat()
    t = _jwt(
        g,
        {
            "iss": "https://login.acme.io",
            "sub": g.uuid(),
            "aud": "web",
            "nonce": g.an(16),
            "iat": t0,
            "exp": t0 + 600,
        },
        alg="RS256",
        kid="k1",
    )
    add(
        f"https://app.acme.io/callback#id_token={t}&state={g.an(16)}&session_state={g.uuid()}",
        "oidc-callback-fragment",
        t,
    )
    t0 = iat()
    t = _jwt(g, {"user": {"id": g.between(1, 500), "role": "editor"}, "iat": t0})
    add(
        "HTTP HEADERS\n" + json.dumps({"Authorization": "Bearer " + t}, indent=2),
        "graphql-playground-headers",
        t,
    )
    t0 = iat()
    t = _jwt(g, {"sub": "qa-bot", "iat": t0, "exp": t0 + 2_592_000}, alg="HS512")
    env = {
        "id": g.uuid(),
        "name": "staging",
        "values": [
            {"key": "baseUrl", "value": "https://staging.acme.io", "enabled": True},
            {"key": "jwt", "value": t, "type": "secret", "enabled": True},
        ],
        "_postman_variable_scope": "environment",
    }
    add(json.dumps(env, indent=2), "postman-environment", t)
    t0 = iat()
    t = _jwt(g, {"uid": g.hex(12), "ch": ["prices"], "exp": t0 + 3600})
    add(
        f'$ wscat -c wss://rt.acme.io/socket -H "Sec-WebSocket-Protocol: access_token, {t}"\n'
        'Connected (press CTRL+C to quit)\n< {"type":"welcome"}\n',
        "wscat-header",
        t,
    )
    t0 = iat()
    t = _jwt(
        g,
        {
            "token_type": "refresh",
            "exp": t0 + 86400,
            "iat": t0,
            "jti": g.hex(32),
            "user_id": g.between(1, 999),
        },
    )
    add(
        f"$ http POST :8000/api/token/refresh/ refresh={t}\nHTTP/1.1 200 OK\n",
        "httpie-refresh-token",
        t,
    )
    t0 = iat()
    t = _jwt(g, {"sub": "ops@acme.io", "scopes": ["deploy"], "iat": t0, "exp": t0 + 3600})
    add(
        f'grpcurl -H "authorization: Bearer {t}" -d \'{{"service":"billing"}}\' '
        "deploy.acme.internal:443 acme.deploy.v1.Deployer/Rollout",
        "grpcurl-metadata",
        t,
    )
    t0 = iat()
    t = _jwt(g, {"sub": "reporting", "iat": t0, "exp": t0 + 600})
    add(
        "The 401 comes from the token in your `.env`:\n\n```\n"
        f"API_JWT={t}\n```\n\nIts `exp` claim is ten minutes after `iat`, so it expired long "
        "before the nightly job ran. Mint a token with a longer lifetime or fetch one at start-up.",
        "assistant-reply-dotenv",
        t,
    )
    t0 = iat()
    t = _jwt(g, {"sub": "alice", "admin": True, "iat": t0})
    add(
        ">>> import jwt\n>>> jwt.encode({'sub': 'alice', 'admin': True, 'iat': int(time.time())},"
        f" SECRET, algorithm='HS256')\n'{t}'\n>>> ",
        "python-repl-output",
        t,
    )
    t0 = iat()
    t = _jwt(
        g,
        {
            "aud": "sts.amazonaws.com",
            "iss": "https://token.actions.githubusercontent.com",
            "repository": "acme/infra",
            "ref": "refs/heads/main",
            "iat": t0,
            "exp": t0 + 300,
        },
        alg="RS256",
        kid=g.hex(40),
    )
    add(
        "Run aws-actions/configure-aws-credentials@v4\n"
        f"##[debug]OIDC token: {t}\n"
        "Assuming role with OIDC\n",
        "actions-oidc-debug-log",
        t,
    )
    return out


# --------------------------------------------------------------------------------------------
# labelled values: a credential under a key, a flag or a phrase that names it


def _labelled(g: _Rand) -> list[Case]:
    out: list[Case] = []

    def add(text: str, shape: str, secret: str) -> None:
        out.append(_p(text, "labelled", shape, secret))

    v = g.strong(22).replace("$", "")
    add(
        "# settings/local.py\nDEBUG = True\nDB_HOST = 'localhost'\n"
        f'DB_PASSWORD = "{v}"\nDB_NAME = "crm"\n',
        "python-assignment",
        v,
    )
    v = g.an(40)
    add(
        "config = {\n    'base_url': 'https://api.weatherflow.io/v3',\n"
        f"    'api_key': '{v}',\n    'timeout': 30,\n}}\n",
        "python-dict",
        v,
    )
    v = g.password()
    add(
        "import redis\n\n"
        f'r = redis.Redis(host="cache.internal", port=6379, password="{v}", db=2)\n'
        "r.ping()\n",
        "python-kwarg",
        v,
    )
    v = g.s(_LO + _DIG + "!@#$%^&*(-_=+)", 50)
    add(
        "ALLOWED_HOSTS = ['api.acme.io']\n\n# SECURITY WARNING: keep the secret key used in "
        f"production secret!\nSECRET_KEY = '{v}'\n",
        "django-secret-key",
        v,
    )
    v = g.hex(64)
    add(
        "export const config = {\n  port: 3000,\n"
        f"  apiSecret: '{v}',\n  corsOrigin: 'https://app.acme.io',\n}};\n",
        "js-object",
        v,
    )
    v = g.b64(32)
    add(
        "const jwtSecret: string =\n"
        f'  process.env.JWT_SECRET ?? "{v}";\n\nexport function sign(payload: object) {{\n'
        "  return jwt.sign(payload, jwtSecret, { expiresIn: '1h' });\n}\n",
        "ts-env-fallback",
        v,
    )
    v = g.password()
    add(
        'cfg := &mail.Config{\n\tHost:     "smtp.office365.com",\n\tPort:     587,\n'
        f'\tUsername: "alerts@acme.io",\n\tPassword: "{v}",\n}}\n',
        "go-struct-literal",
        v,
    )
    v = g.an(32)
    add(
        "public class PaymentGatewayClient {\n"
        '    private static final String MERCHANT_ID = "acme-eu-01";\n'
        f'    private static final String API_SECRET = "{v}";\n',
        "java-constant",
        v,
    )
    v = g.strong(16).replace("\\", "")
    add(
        "server.port=8081\nspring.datasource.url=jdbc:mysql://db:3306/inventory\n"
        f"spring.datasource.username=inventory\nspring.datasource.password={v}\n",
        "spring-properties",
        v,
    )
    v = g.password()
    add(
        'services.Configure<SmtpOptions>(o =>\n{\n    o.Host = "smtp.sendgrid.net";\n'
        f'    o.User = "apikey";\n    o.Password = "{v}";\n}});\n',
        "csharp-property",
        v,
    )
    v = g.hex(128)
    add(
        "Rails.application.configure do\n  config.cache_classes = true\n"
        f"  config.secret_key_base = '{v}'\nend\n",
        "ruby-rails",
        v,
    )
    v = g.strong(24).replace("'", "")
    add(
        "/** Database username */\ndefine( 'DB_USER', 'wp_prod' );\n\n/** Database password */\n"
        f"define( 'DB_PASSWORD', '{v}' );\n\n/** Database hostname */\n"
        "define( 'DB_HOST', 'localhost' );\n",
        "php-wp-config",
        v,
    )
    v = g.an(32)
    add(
        "<?php\n\nreturn [\n    'stripe' => [\n        'model' => App\\Models\\User::class,\n"
        f"        'secret' => '{v}',\n    ],\n];\n",
        "php-array",
        v,
    )
    v = g.an(36)
    add(
        "fn main() -> anyhow::Result<()> {\n"
        f'    let api_token = "{v}";\n'
        "    let client = reqwest::blocking::Client::new();\n"
        '    let resp = client.get("https://api.acme.io/v1/jobs").bearer_auth(api_token).send()?;\n'
        '    println!("{}", resp.status());\n    Ok(())\n}\n',
        "rust-let",
        v,
    )
    v = g.password()
    add(
        "spring:\n  datasource:\n    url: jdbc:postgresql://pg:5432/app\n    username: app\n"
        f"    password: {v}\n  jpa:\n    open-in-view: false\n",
        "yaml-application",
        v,
    )
    v = g.b64url(40)
    add(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: webhook-relay\ntype: Opaque\n"
        f"stringData:\n  WEBHOOK_SECRET: {v}\n",
        "k8s-secret-stringdata",
        v,
    )
    raw = g.password()
    v = base64.b64encode(raw.encode()).decode()
    add(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: mysql-auth\n  namespace: shop\n"
        f"type: Opaque\ndata:\n  username: {base64.b64encode(b'shop').decode()}\n"
        f"  password: {v}\n",
        "k8s-secret-data-base64",
        v,
    )
    v = "GOCSPX-" + g.b64url(28)
    add(
        json.dumps(
            {
                "web": {
                    "client_id": f"{g.dig(12)}-{g.loan(32)}.apps.googleusercontent.com",
                    "project_id": "acme-login",
                    "auth_uri": "https://accounts.google.com/o/oauth2/auth",
                    "client_secret": v,
                    "redirect_uris": ["http://localhost:8080/callback"],
                }
            }
        ),
        "json-oauth-client-secret",
        v,
    )
    v = g.an(40)
    add(
        "# .streamlit/secrets.toml\n[openweather]\n"
        f'api_key = "{v}"\n\n[app]\ntitle = "Weather board"\n',
        "toml",
        v,
    )
    v = g.phrase()
    add(
        "[server]\nhost = 0.0.0.0\nport = 8443\n\n[database]\nuser = reporting\n"
        f"password = {v}\nname = reports\n",
        "ini-passphrase",
        v,
    )
    v = g.b64(48)
    add(
        f"APP_URL=https://app.acme.io\nSESSION_SECRET={v}\nSESSION_TTL=86400\n",
        "dotenv",
        v,
    )
    v = g.strong(20).replace("'", "")
    add(
        f"$ export REGISTRY_PASSWORD='{v}'\n"
        '$ echo "$REGISTRY_PASSWORD" | helm registry login registry.acme.io -u ci '
        "--password-stdin\n"
        "Login Succeeded\n",
        "shell-export",
        v,
    )
    v = g.password()
    add(
        f'PS C:\\> $pw = ConvertTo-SecureString "{v}" -AsPlainText -Force\n'
        "PS C:\\> $cred = New-Object "
        "System.Management.Automation.PSCredential('ACME\\svc_backup', $pw)\n"
        "PS C:\\> Enter-PSSession -ComputerName fs01 -Credential $cred\n",
        "powershell-securestring",
        v,
    )
    v = g.an(20)
    add(
        "FROM grafana/grafana:10.4.2\nENV GF_SECURITY_ADMIN_USER=admin\n"
        f"ENV GF_SECURITY_ADMIN_PASSWORD={v}\nCOPY dashboards/ /var/lib/grafana/dashboards/\n",
        "dockerfile-env",
        v,
    )
    v = g.an(24)
    add(
        f"$ docker run -d --name pg -e POSTGRES_PASSWORD={v} -p 5432:5432 postgres:16\n"
        f"{g.hex(64)}\n",
        "docker-run-env-flag",
        v,
    )
    v = g.password()
    add(
        "  db:\n    image: mysql:8.0\n    environment:\n"
        f"      - MYSQL_ROOT_PASSWORD={v}\n      - MYSQL_DATABASE=shop\n",
        "compose-env-list",
        v,
    )
    v = g.strong(20).replace('"', "")
    add(
        'resource "aws_db_instance" "main" {\n  identifier        = "orders"\n'
        '  engine            = "postgres"\n  instance_class    = "db.t3.medium"\n'
        f'  username          = "orders_admin"\n  password          = "{v}"\n'
        "  skip_final_snapshot = true\n}\n",
        "terraform-resource",
        v,
    )
    v = g.password()
    add(
        'region            = "westeurope"\nsql_admin_login   = "sqladmin"\nsql_admin_password = '
        f'"{v}"\n',
        "terraform-tfvars",
        v,
    )
    v = g.an(24)
    add(
        "auth:\n  enabled: true\n"
        f'  rootPassword: "{v}"\n  username: app\n  database: app\n'
        "architecture: replicaset\n",
        "helm-values",
        v,
    )
    v = g.hex(32)
    add(
        "GET /v1/forecast?lat=52.52&lon=13.41 HTTP/1.1\nHost: api.meteo.example.net\n"
        f"Accept: application/json\nX-API-Key: {v}\nUser-Agent: httpx/0.27.0\n",
        "http-x-api-key",
        v,
    )
    raw = "deploy:" + g.password()
    v = base64.b64encode(raw.encode()).decode()
    add(
        "> GET /artifactory/api/repositories HTTP/1.1\n> Host: artifacts.acme.io\n"
        f"> Authorization: Basic {v}\n> Accept: */*\n>\n< HTTP/1.1 200 OK\n",
        "http-basic-auth",
        v,
    )
    v = g.hex(40)
    add(
        f'$ curl -H "Authorization: Token {v}" https://ops.acme.io/api/hosts/?page=1\n'
        '{"count": 212, "next": "https://ops.acme.io/api/hosts/?page=2"}\n',
        "http-authorization-token",
        v,
    )
    v = g.password()
    add(
        f"$ mysql -h db.internal -u root -p'{v}' -e 'SHOW DATABASES;'\n"
        "mysql: [Warning] Using a password on the command line interface can be insecure.\n"
        "+--------------------+\n| Database           |\n+--------------------+\n",
        "cli-mysql-p",
        v,
    )
    v = g.strong(18).replace("'", "")
    add(
        f"mongosh 'mongodb://db.acme.io:27017' --username admin --password '{v}' "
        "--authenticationDatabase admin",
        "cli-password-flag",
        v,
    )
    v = g.password()
    add(
        f"curl -u jenkins:{v} -X POST https://ci.acme.io/job/deploy/buildWithParameters?ENV=prod",
        "cli-curl-user",
        v,
    )
    v = g.an(40)
    add(
        f"$ cat ~/.netrc\nmachine api.heroku.com\n  login ops@acme.io\n  password {v}\n"
        "machine git.heroku.com\n  login ops@acme.io\n",
        "netrc",
        v,
    )
    v = g.an(22)
    add(
        f"$ cat ~/.pgpass\ndb.acme.internal:5432:orders:etl:{v}\n",
        "pgpass",
        v,
    )
    v = g.s(_AN + "+/", 40)
    add(
        "[default]\naws_access_key_id = " + "AK" + "IA" + g.s(_B32, 16) + "\n"
        f"aws_secret_access_key = {v}\nregion = eu-west-1\n",
        "aws-credentials-file",
        v,
    )
    v = g.phrase()
    add(
        "ctrl_interface=DIR=/var/run/wpa_supplicant GROUP=netdev\ncountry=DE\n\nnetwork={\n"
        f'    ssid="Acme-Office"\n    psk="{v}"\n    key_mgmt=WPA-PSK\n}}\n',
        "wpa-supplicant-psk",
        v,
    )
    v = g.an(32)
    add(
        f"bind 0.0.0.0\nport 6379\nrequirepass {v}\nmaxmemory 2gb\n",
        "redis-conf-requirepass",
        v,
    )
    v = g.password()
    add(
        f"CREATE USER report_reader WITH PASSWORD '{v}';\n"
        "GRANT SELECT ON ALL TABLES IN SCHEMA public TO report_reader;\n",
        "sql-create-user",
        v,
    )
    v = g.password()
    add(
        f"ALTER USER 'app'@'%' IDENTIFIED BY '{v}';\nFLUSH PRIVILEGES;\n",
        "sql-identified-by",
        v,
    )
    v = g.phrase()
    add(
        "I can't get into the staging box anymore. my password is "
        f"{v} and the user is deploy, can you try ssh'ing in?",
        "chat-english-password",
        v,
    )
    v = g.password()
    add(
        f"oh and the wifi password is {v} if you need to test the captive portal",
        "chat-english-wifi",
        v,
    )
    v = g.password()
    add(
        f"这是我的密码：{v}，帮我登录一下测试环境看看订单页面是不是挂了",
        "chat-chinese-password",
        v,
    )
    v = g.an(18)
    add(
        f"数据库密码是 {v} ，用户名 root，端口 3306，帮我写个备份脚本。",
        "chat-chinese-db-password",
        v,
    )
    v = g.strong(16).replace("#", "")
    add(
        f"# 生产环境配置\n数据库:\n  地址: 10.0.1.5\n  用户名: app\n  密码: {v}\n",
        "yaml-chinese-label",
        v,
    )
    v = g.an(32)
    add(
        f"[接口]\n地址 = https://open.example.cn/api\nAPI密钥 = {v}\n超时 = 30\n",
        "ini-chinese-label",
        v,
    )
    v = g.unique("Grüße-Kätzchen-" + g.dig(3) + "!")
    add(
        f'smtp:\n  host: mail.example.de\n  user: bestellung@example.de\n  password: "{v}"\n',
        "yaml-unicode-value",
        v,
    )
    v = g.unique("春风十里" + g.pick(["#", "@", "!"]) + g.dig(4))
    add(
        f"ADMIN_USER=admin\nADMIN_PASSWORD={v}\n",
        "dotenv-chinese-value",
        v,
    )
    v = g.hex(32)
    add(
        f"DD_API_KEY={v}\nDD_SITE=datadoghq.eu\nDD_ENV=prod\n",
        "dotenv-datadog",
        v,
    )
    v = g.hex(32)
    add(
        "TWILIO_ACCOUNT_SID=AC" + g.hex(32) + f"\nTWILIO_AUTH_TOKEN={v}\n",
        "dotenv-twilio-auth-token",
        v,
    )
    v = g.b64(32)
    add(
        f"[Interface]\nAddress = 10.8.0.2/24\nPrivateKey = {v}\nDNS = 1.1.1.1\n\n[Peer]\n"
        f"PublicKey = {g.b64(32)}\nEndpoint = vpn.acme.io:51820\nAllowedIPs = 0.0.0.0/0\n",
        "wireguard-private-key",
        v,
    )
    v = g.strong(20).replace('"', "").replace("\\", "")
    add(
        _call(
            "write_file",
            path="config/prod.json",
            content=json.dumps({"smtp_host": "smtp.acme.io", "smtp_password": v}, indent=2),
        ),
        "tool-call-nested-json",
        v,
    )
    v = g.password()
    add(
        "all:\n  hosts:\n    db01.acme.internal:\n  vars:\n    ansible_user: deploy\n"
        f"    ansible_become_password: {v}\n",
        "ansible-inventory",
        v,
    )
    v = g.an(24)
    add(
        "      - name: Log in to registry\n        uses: docker/login-action@v3\n"
        "        with:\n          registry: registry.acme.io\n          username: ci\n"
        f"          password: {v}\n",
        "github-actions-with",
        v,
    )
    v = g.an(16)
    add(
        f"keystore.path=/etc/acme/keystore.p12\nkeystore.password={v}\nkeystore.type=PKCS12\n",
        "java-properties",
        v,
    )
    v = g.password()
    add(
        "2024-06-03 11:02:17,554 INFO  etl.db  connecting with settings "
        f"{{'host': 'warehouse', 'port': 5432, 'user': 'etl', 'password': '{v}'}}\n",
        "python-log-dict-repr",
        v,
    )
    v = g.an(32)
    add(
        'func init() {\n\tos.Setenv("API_SECRET", "' + v + '")\n}\n',
        "go-setenv",
        v,
    )
    v = g.uuid()
    add(
        f"//registry.npmjs.org/:_authToken={v}\n@acme:registry=https://npm.acme.io/\n",
        "npmrc-legacy-uuid-token",
        v,
    )
    v = g.b64(32)
    add(
        f"NEXTAUTH_URL=http://localhost:3000\nNEXTAUTH_SECRET={v}\n",
        "dotenv-nextauth",
        v,
    )
    v = g.strong(14).replace("'", "")
    add(
        f"sshpass -p '{v}' ssh -o StrictHostKeyChecking=no pi@192.168.1.42 'sudo reboot'",
        "cli-sshpass",
        v,
    )
    v = g.s(_AN + "~._-", 40)
    add(
        f"az login --service-principal -u {g.uuid()} -p {v} --tenant {g.uuid()}",
        "cli-az-service-principal",
        v,
    )
    v = g.password()
    add(
        json.dumps(
            {
                "Smtp": {
                    "Host": "smtp.office365.com",
                    "Port": 587,
                    "User": "noreply@acme.io",
                    "Password": v,
                },
                "Serilog": {"MinimumLevel": "Information"},
            },
            indent=2,
        ),
        "appsettings-json",
        v,
    )
    v = g.an(28)
    add(
        "sasl.mechanism=PLAIN\nsecurity.protocol=SASL_SSL\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="{g.upan(16)}" password="{v}";\n',
        "kafka-jaas",
        v,
    )
    v = g.hex(32)
    add(
        f"app.config['SECRET_KEY'] = '{v}'\napp.config['SESSION_COOKIE_SECURE'] = True\n",
        "flask-config",
        v,
    )
    v = g.password()
    add(
        f"keytool -importcert -alias acme-root -file root.crt -keystore truststore.jks "
        f"-storepass {v} -noprompt",
        "cli-keytool-storepass",
        v,
    )
    return out


# --------------------------------------------------------------------------------------------
# negatives: placeholders, docs examples, masked keys, references to a secret store, fixtures


def _placeholder(g: _Rand) -> list[Case]:
    out: list[Case] = []

    def add(text: str, shape: str) -> None:
        out.append(_n(text, "placeholder", shape))

    add(
        "# Copy to .env and fill in\nOPENAI_API_KEY=\nANTHROPIC_API_KEY=\n"
        "DATABASE_URL=postgres://user:password@localhost:5432/app\nREDIS_URL=redis://localhost:6379\n",
        "dotenv-example",
    )
    add(
        '## Quickstart\n\n```bash\npip install acme-sdk\nexport OPENAI_API_KEY="sk-..."\n'
        "python examples/chat.py\n```\n",
        "readme-ellipsis-key",
    )
    add(
        'import anthropic\n\nclient = anthropic.Anthropic(api_key="YOUR_API_KEY")\n',
        "your-api-key",
    )
    add(
        "curl https://api.acme.io/v1/projects \\\n  -H 'Authorization: Bearer <token>' \\\n"
        "  -H 'Content-Type: application/json'",
        "angle-bracket-token",
    )
    add(
        "STRIPE_PUBLISHABLE_KEY=pk_live_"
        + "x" * 24
        + "\nSTRIPE_SECRET_KEY=sk"
        + "_live_"
        + "x" * 24
        + "\nSTRIPE_WEBHOOK_SECRET=whsec_"
        + "x" * 32
        + "\n",
        "x-filled-stripe",
    )
    add(
        "$ gh auth status\ngithub.com\n  ✓ Logged in to github.com account octo-dev (keyring)\n"
        "  - Active account: true\n  - Git operations protocol: ssh\n"
        "  - Token: gh" + "o_" + "*" * 36 + "\n  - Token scopes: 'gist', 'read:org', 'repo'\n",
        "masked-gh-token",
    )
    add(
        "$ aws configure list\n      Name                    Value             Type    Location\n"
        "      ----                    -----             ----    --------\n"
        "   profile                <not set>             None    None\n"
        f"access_key     ****************{g.s(_B32, 4)} shared-credentials-file\n"
        f"secret_key     ****************{g.an(4)} shared-credentials-file\n"
        "    region                eu-west-1      config-file    ~/.aws/config\n",
        "masked-aws-configure-list",
    )
    add(
        "openai.AuthenticationError: Error code: 401 - {'error': {'message': 'Incorrect API key "
        "provided: sk-proj-" + "*" * 40 + g.an(4) + ". You can find your API key at "
        "https://platform.openai.com/account/api-keys.', 'type': 'invalid_request_error', "
        "'param': None, 'code': 'invalid_api_key'}}",
        "masked-openai-error",
    )
    add(
        "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server at "
        '"db" (172.18.0.3), port 5432 failed: Connection refused\n'
        "(Background on this error at: https://sqlalche.me/e/20/e3q8)\n"
        "engine url: postgresql+psycopg2://app:***@db:5432/app\n",
        "masked-sqlalchemy-url",
    )
    add(
        json.dumps(
            {
                "level": "info",
                "msg": "outbound request",
                "url": "https://api.acme.io/v1/charge",
                "headers": {"Authorization": "[REDACTED]", "X-Api-Key": "[REDACTED]"},
            }
        ),
        "redacted-log",
    )
    add(
        'smtp:\n  host: smtp.acme.io\n  port: 587\n  username: alerts\n  password: "********"\n',
        "asterisk-password",
    )
    add(
        "jobs:\n  publish:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/setup-node@v4\n        with:\n          registry-url: "
        "https://registry.npmjs.org\n      - run: npm publish --access public\n        env:\n"
        "          NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}\n",
        "github-actions-secrets-ref",
    )
    add(
        "        env:\n          - name: DB_PASSWORD\n            valueFrom:\n"
        "              secretKeyRef:\n                name: orders-db\n                key: "
        "password\n",
        "k8s-secretkeyref",
    )
    add(
        "# .env.tpl (resolved by `op run --env-file=.env.tpl -- npm start`)\n"
        "DATABASE_PASSWORD=op://Production/orders-postgres/password\n"
        "STRIPE_SECRET_KEY=op://Production/stripe/credential\n",
        "1password-op-reference",
    )
    add(
        "$ vault kv get -field=password secret/prod/orders-db\n"
        "Error reading secret/data/prod/orders-db: permission denied\n",
        "vault-path",
    )
    add(
        json.dumps(
            {
                "name": "api",
                "image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/api:1.4.0",
                "secrets": [
                    {
                        "name": "DB_PASSWORD",
                        "valueFrom": "arn:aws:secretsmanager:us-east-1:"
                        "123456789012:secret:prod/orders/db-password-Qx81Zk",
                    }
                ],
            },
            indent=2,
        ),
        "secretsmanager-arn-reference",
    )
    add(
        "      containers:\n        - name: app\n          env:\n            - name: DB_PASSWORD\n"
        "              value: {{ .Values.db.password | quote }}\n",
        "helm-template",
    )
    add(
        "services:\n  db:\n    image: postgres:16\n    environment:\n"
        "      POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD in .env}\n",
        "compose-interpolation",
    )
    add(
        'variable "db_password" {\n  type      = string\n  sensitive = true\n}\n\n'
        'resource "aws_db_instance" "main" {\n  username = "orders_admin"\n'
        "  password = var.db_password\n}\n",
        "terraform-variable-reference",
    )
    add(
        "spring.datasource.username=${DB_USER}\nspring.datasource.password=${DB_PASSWORD}\n",
        "spring-placeholder",
    )
    add(
        "@pytest.fixture\ndef client(monkeypatch):\n"
        '    monkeypatch.setenv("ACME_TOKEN", "test-token")\n    return TestClient(app)\n',
        "fixture-test-token",
    )
    add(
        'def test_missing_key_raises(monkeypatch):\n    monkeypatch.setenv("OPENAI_API_KEY", '
        '"dummy")\n'
        "    with pytest.raises(AuthError):\n        summarize('hello')\n",
        "fixture-dummy",
    )
    add(
        'client = OpenAI(api_key="fake-key", base_url="http://localhost:8000/v1")\n'
        'resp = client.chat.completions.create(model="local", messages=[{"role": "user", '
        '"content": "hi"}])\n',
        "fixture-fake-key",
    )
    add(
        "$ aws configure\nAWS Access Key ID [None]: " + "AKIA" + "IOSFODNN7" + "EXAMPLE\n"
        "AWS Secret Access Key [None]: wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY\n"
        "Default region name [None]: us-west-2\nDefault output format [None]: json\n",
        "aws-docs-example-keys",
    )
    add(
        "git clone https://<your-github-token>@github.com/acme/private-repo.git",
        "angle-bracket-url-token",
    )
    add(
        "Connect with the MongoDB Shell:\n\n"
        'mongosh "mongodb+srv://cluster0.x7kq2.mongodb.net/" --apiVersion 1 '
        "--username <db_username>\n\nOr your application:\n\n"
        "mongodb+srv://<db_username>:<db_password>@cluster0.x7kq2.mongodb.net/"
        "?retryWrites=true&w=majority&appName=Cluster0\n",
        "atlas-connection-template",
    )
    add(
        "Paste the key into `GITHUB_APP_PRIVATE_KEY`, keeping the line breaks:\n\n```\n"
        + _BEGIN
        + "RSA PRIVATE"
        + " KEY"
        + _DASH5
        + "\n...\n"
        + _END
        + "RSA PRIVATE"
        + " KEY"
        + _DASH5
        + "\n```\n",
        "pem-ellipsis",
    )
    add(
        '[[rules]]\nid = "github-pat"\ndescription = "GitHub Personal Access Token"\n'
        "regex = '''gh" + "p_[0-9a-zA-Z]{36}'''\nkeywords = [\"gh" + 'p_"]\n',
        "gitleaks-rule-regex",
    )
    add(
        'AWS_KEY_ID_RE = re.compile(r"\\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\\b")\n'
        'SLACK_RE = re.compile(r"xox[baprs]-[0-9A-Za-z-]{10,48}")\n',
        "python-regex",
    )
    add(
        "const JWT_SHAPE = /^eyJ[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]*$/;\n"
        "export const looksLikeJwt = (s: string) => JWT_SHAPE.test(s);\n",
        "js-regex-jwt",
    )
    add(
        "# .env.example\nJWT_SECRET=replace-me-with-a-long-random-string\n"
        "SESSION_SECRET=change-this-in-production\n",
        "dotenv-example-replace-me",
    )
    add(
        "# 配置说明\nAPI_KEY=你的密钥\n数据库密码: <在此填写>\n# 请勿将真实密钥提交到仓库\n",
        "chinese-placeholder",
    )
    add(
        'database:\n  host: localhost\n  user: app\n  password: ""\n  token: null\n',
        "empty-values",
    )
    add(
        json.dumps(
            {
                "type": "object",
                "properties": {
                    "api_key": {"type": "string", "description": "Your API key", "writeOnly": True},
                    "password": {"type": "string", "format": "password", "minLength": 12},
                },
                "required": ["api_key"],
            },
            indent=2,
        ),
        "json-schema",
    )
    add(
        "In the Stripe dashboard your live secret key is shown as "
        f"`sk_live_...{g.an(4)}`; click Reveal to copy it (you can only do this once).",
        "dashboard-masked-suffix",
    )
    add(
        "export GITHUB_TOKEN=gh"
        + "p_"
        + "X" * 36
        + "\nexport AWS_ACCESS_KEY_ID="
        + "AK"
        + "IA"
        + "X" * 16
        + "\n",
        "x-filled-token",
    )
    add(
        'app = App(\n    token=os.environ.get("SLACK_BOT_TOKEN"),  # xoxb-your-token\n'
        '    signing_secret=os.environ.get("SLACK_SIGNING_SECRET"),\n)\n',
        "slack-docs-comment",
    )
    add(
        "def test_mask_hides_key():\n"
        '    assert mask("sk-abc123def456") == "sk-a…456"\n'
        '    assert mask("") == ""\n',
        "masking-test",
    )
    add(
        "```\n"
        + _BEGIN
        + "OPENSSH PRIVATE"
        + " KEY"
        + _DASH5
        + "\n<contents of your private key>\n"
        + _END
        + "OPENSSH PRIVATE"
        + " KEY"
        + _DASH5
        + "\n```\nSave it as `~/.ssh/id_ed25519` and run `chmod 600` on it.",
        "pem-angle-placeholder",
    )
    add(
        '{"name": "http_request", "arguments": {"url": "https://api.acme.io/v1/me", '
        '"headers": {"Authorization": "Bearer ${ACME_TOKEN}"}}}',
        "tool-call-env-reference",
    )
    add(
        "$ pip config list\n"
        "global.index-url='https://deploy:****@nexus.acme.io/repository/pypi/simple'\n"
        "global.timeout='60'\n",
        "masked-pip-index",
    )
    add(
        "DB_PASSWORD=<password>\nAPI_TOKEN=<token>\nSMTP_PASSWORD=<smtp password>\n",
        "angle-bracket-dotenv",
    )
    add(
        "Settings → Developer settings → Personal access tokens → Generate new token. "
        "The token looks like `github_pat_11ABC…`; copy it into the `GH_TOKEN` secret.",
        "docs-truncated-prefix",
    )
    return out


def _hash(g: _Rand) -> list[Case]:
    out: list[Case] = []

    def add(text: str, shape: str) -> None:
        out.append(_n(text, "hash", shape))

    msgs = [
        "fix: retry token refresh on 401",
        "chore(deps): bump jsonwebtoken to 9.0.2",
        "feat: store API keys in the OS keychain",
        "docs: explain how to rotate the webhook secret",
        "test: cover expired password reset links",
    ]
    add(
        "$ git log --oneline -5\n" + "".join(f"{g.hex(7)} {m}\n" for m in msgs),
        "git-log-oneline",
    )
    add(
        f"$ git show --stat HEAD\ncommit {g.hex(40)}\nAuthor: Dana Li <dana@acme.io>\n"
        "Date:   Tue Apr 16 10:12:44 2024 +0200\n\n    Move secrets to Vault\n\n"
        " config/settings.py | 12 ++++--------\n 1 file changed, 4 insertions(+), 8 deletions(-)\n",
        "git-show-commit",
    )
    add(
        "$ sha256sum dist/*\n"
        f"{g.hex(64)}  dist/acme_cli-2.3.0-py3-none-any.whl\n"
        f"{g.hex(64)}  dist/acme_cli-2.3.0.tar.gz\n",
        "sha256sum",
    )
    add(
        "$ docker pull postgres:16\n16: Pulling from library/postgres\n"
        f"{g.hex(12)}: Already exists\n{g.hex(12)}: Pull complete\n"
        f"Digest: sha256:{g.hex(64)}\nStatus: Downloaded newer image for postgres:16\n"
        "docker.io/library/postgres:16\n",
        "docker-pull-digest",
    )
    add(
        "$ docker images --digests\nREPOSITORY        TAG     DIGEST"
        "                                                                    IMAGE ID       SIZE\n"
        f"ghcr.io/acme/api  1.4.0   sha256:{g.hex(64)}   {g.hex(12)}   182MB\n",
        "docker-images-digests",
    )
    add(
        "# requirements.txt (pip-compile --generate-hashes)\nrequests==2.31.0 \\\n"
        f"    --hash=sha256:{g.hex(64)} \\\n    --hash=sha256:{g.hex(64)}\n",
        "pip-hashes",
    )
    add(
        '    "node_modules/jsonwebtoken": {\n      "version": "9.0.2",\n'
        '      "resolved": "https://registry.npmjs.org/jsonwebtoken/-/jsonwebtoken-9.0.2.tgz",\n'
        f'      "integrity": "sha512-{g.b64(64)}",\n      "license": "MIT"\n    }},\n',
        "npm-lock-integrity",
    )
    add(
        '"@types/node@^20.11.0":\n  version "20.12.7"\n'
        f'  resolved "https://registry.yarnpkg.com/@types/node/-/node-20.12.7.tgz#{g.hex(40)}"\n'
        f"  integrity sha512-{g.b64(64)}\n",
        "yarn-lock",
    )
    add(
        f"github.com/golang-jwt/jwt/v5 v5.2.1 h1:{g.b64(32)}\n"
        f"github.com/golang-jwt/jwt/v5 v5.2.1/go.mod h1:{g.b64(32)}\n",
        "go-sum",
    )
    add(
        '[[package]]\nname = "ring"\nversion = "0.17.8"\n'
        'source = "registry+https://github.com/rust-lang/crates.io-index"\n'
        f'checksum = "{g.hex(64)}"\n',
        "cargo-lock-checksum",
    )
    add(
        '[[package]]\nname = "pyjwt"\nversion = "2.8.0"\nfiles = [\n'
        f'    {{file = "PyJWT-2.8.0-py3-none-any.whl", hash = "sha256:{g.hex(64)}"}},\n'
        f'    {{file = "PyJWT-2.8.0.tar.gz", hash = "sha256:{g.hex(64)}"}},\n]\n',
        "poetry-lock",
    )
    add(
        'provider "registry.terraform.io/hashicorp/aws" {\n  version     = "5.46.0"\n'
        '  constraints = "~> 5.0"\n  hashes = [\n'
        f'    "h1:{g.b64(32)}",\n    "zh:{g.hex(64)}",\n    "zh:{g.hex(64)}",\n  ]\n}}\n',
        "terraform-lock-hashes",
    )
    add(
        "diff --git a/src/auth/token.ts b/src/auth/token.ts\n"
        f"index {g.hex(7)}..{g.hex(7)} 100644\n--- a/src/auth/token.ts\n+++ b/src/auth/token.ts\n"
        "@@ -12,7 +12,7 @@ export function isExpired(exp: number): boolean {\n"
        "-  return exp < Date.now();\n+  return exp * 1000 < Date.now();\n",
        "git-diff-index",
    )
    add(
        '<script src="https://cdn.jsdelivr.net/npm/bootstrap@5.3.3/dist/js/bootstrap.bundle.min.js"\n'
        f'        integrity="sha384-{g.b64(48)}"\n        crossorigin="anonymous"></script>\n',
        "subresource-integrity",
    )
    nix = "0123456789abcdfghijklmnpqrsvwxyz"
    add(
        "$ nix-store -q --references $(which python3)\n"
        f"/nix/store/{g.s(nix, 32)}-glibc-2.39-52\n"
        f"/nix/store/{g.s(nix, 32)}-python3-3.11.9\n",
        "nix-store-path",
    )
    add(
        f"version https://git-lfs.github.com/spec/v1\noid sha256:{g.hex(64)}\nsize 48213504\n",
        "git-lfs-pointer",
    )
    add(
        "The authenticity of host 'bastion.acme.io (203.0.113.10)' can't be established.\n"
        f"ED25519 key fingerprint is SHA256:{g.b64(32).rstrip('=')}.\n"
        "This key is not known by any other names.\n"
        "Are you sure you want to continue connecting (yes/no/[fingerprint])? ",
        "ssh-host-fingerprint",
    )
    add(
        f"$ md5sum backup-2024-05-01.sql.gz\n{g.hex(32)}  backup-2024-05-01.sql.gz\n",
        "md5sum",
    )
    add(
        f'< HTTP/2 200\n< content-type: application/json\n< etag: W/"{g.hex(32)}"\n'
        "< cache-control: max-age=60\n",
        "http-etag",
    )
    add(
        "$ gpg --list-keys release@acme.io\npub   ed25519 2023-11-02 [SC] [expires: 2026-11-01]\n"
        f"      {g.s('0123456789ABCDEF', 40)}\n"
        "uid           [ultimate] Acme Release Signing <release@acme.io>\n"
        "sub   cv25519 2023-11-02 [E] [expires: 2026-11-01]\n",
        "gpg-fingerprint",
    )
    add(
        "Building wheels for collected packages: acme-auth\n  Building wheel for acme-auth "
        "(pyproject.toml) ... done\n  Created wheel for acme-auth: "
        f"filename=acme_auth-0.9.1-py3-none-any.whl size=18234 sha256={g.hex(64)}\n"
        f"  Stored in directory: /tmp/pip-ephem-wheel-cache-{g.loan(8)}/wheels/{g.hex(2)}/"
        f"{g.hex(2)}/{g.hex(60)}\n",
        "pip-wheel-sha256",
    )
    add(
        f"Cache restored from key: node-cache-Linux-x64-npm-{g.hex(64)}\n"
        "Run npm ci\nadded 812 packages in 14s\n",
        "actions-cache-key",
    )
    add(f"$ git rev-parse HEAD\n{g.hex(40)}\n", "git-rev-parse")
    add(
        "#12 exporting to image\n#12 exporting layers 0.4s done\n"
        f"#12 writing image sha256:{g.hex(64)} done\n"
        "#12 naming to docker.io/acme/api:dev done\n#12 DONE 0.5s\n",
        "docker-build-image-id",
    )
    add(
        "npm notice 📦  @acme/auth-client@3.1.0\nnpm notice package size: 12.4 kB\n"
        f"npm notice shasum:        {g.hex(40)}\n"
        f"npm notice integrity:     sha512-{g.b64(12)[:14]}[...]{g.b64(6)}\n",
        "npm-publish-shasum",
    )
    add(
        json.dumps(
            {
                "filename": "pyjwt-2.8.0-py3-none-any.whl",
                "digests": {"blake2b_256": g.hex(64), "md5": g.hex(32), "sha256": g.hex(64)},
                "size": 22591,
            },
            indent=2,
        ),
        "pypi-json-digests",
    )
    add(
        "      - uses: actions/checkout@" + g.hex(40) + " # v4.1.7\n"
        "      - uses: aws-actions/configure-aws-credentials@" + g.hex(40) + " # v4.0.2\n",
        "actions-pinned-sha",
    )
    add(
        "$ ssh-keygen -t ed25519 -C dana@acme.io\nGenerating public/private ed25519 key pair.\n"
        "Your identification has been saved in /home/dana/.ssh/id_ed25519\n"
        "Your public key has been saved in /home/dana/.ssh/id_ed25519.pub\n"
        f"The key fingerprint is:\nSHA256:{g.b64(32).rstrip('=')} dana@acme.io\n",
        "ssh-keygen-fingerprint",
    )
    add(
        f"Transaction 0x{g.hex(64)} confirmed in block 19842211 (gas used: 46,109)\n",
        "eth-tx-hash",
    )
    add(
        "CertUtil: -hashfile command completed successfully.\nSHA256 hash of installer.msi:\n"
        f"{g.hex(64)}\n",
        "certutil-hashfile",
    )
    add(
        json.dumps(
            {
                "id": "BAAI/bge-small-en-v1.5",
                "sha": g.hex(40),
                "lastModified": "2024-02-21T03:00:09.000Z",
                "siblings": [{"rfilename": "model.safetensors"}],
            }
        ),
        "hf-model-sha",
    )
    return out


def _uuid(g: _Rand) -> list[Case]:
    out: list[Case] = []

    def add(text: str, shape: str) -> None:
        out.append(_n(text, "uuid", shape))

    add(
        "< HTTP/2 500\n< content-type: application/json\n"
        f"< x-request-id: {g.uuid()}\n< date: Thu, 02 May 2024 10:11:12 GMT\n<\n"
        '{"error":"internal","message":"please retry"}\n',
        "x-request-id",
    )
    add(
        f"traceparent: 00-{g.hex(32)}-{g.hex(16)}-01\ntracestate: congo=t61rcWkgMzE\n",
        "w3c-traceparent",
    )
    rid = g.uuid()
    add(
        f"START RequestId: {rid} Version: $LATEST\n"
        f"2024-05-02T10:11:12.345Z\t{rid}\tINFO\tprocessing 12 records\n"
        f"END RequestId: {rid}\n"
        f"REPORT RequestId: {rid}\tDuration: 812.44 ms\tBilled Duration: 813 ms\t"
        "Memory Size: 512 MB\tMax Memory Used: 141 MB\n",
        "lambda-request-id",
    )
    add(
        json.dumps(
            {
                "environmentName": "AzureCloud",
                "homeTenantId": g.uuid(),
                "id": g.uuid(),
                "isDefault": True,
                "name": "Acme Production",
                "state": "Enabled",
                "tenantId": g.uuid(),
                "user": {"name": "dana@acme.io", "type": "user"},
            },
            indent=2,
        ),
        "az-account-show",
    )
    add(
        'metadata:\n  creationTimestamp: "2024-05-02T09:58:41Z"\n'
        "  generateName: api-7d9f8b6c5d-\n  name: api-7d9f8b6c5d-x2kqz\n  namespace: web\n"
        f'  resourceVersion: "48213077"\n  uid: {g.uuid()}\n',
        "k8s-metadata-uid",
    )
    add(
        "orders=> SELECT gen_random_uuid();\n           gen_random_uuid\n"
        f"--------------------------------------\n {g.uuid()}\n(1 row)\n",
        "postgres-gen-random-uuid",
    )
    add(f">>> import uuid\n>>> uuid.uuid4()\nUUID('{g.uuid()}')\n", "python-uuid4")
    add(
        "catalog> db.products.findOne({ sku: 'TSHIRT-RED-M' })\n{\n"
        f"  _id: ObjectId('{g.hex(24)}'),\n  sku: 'TSHIRT-RED-M',\n  price: 19.9\n}}\n",
        "mongodb-objectid",
    )
    crock = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    add(
        f'{{"level":"info","event_id":"01HX{g.s(crock, 22)}","msg":"order created",'
        f'"order_id":"01HX{g.s(crock, 22)}"}}',
        "ulid",
    )
    add(
        "Sentry is attempting to send 1 pending event\n"
        f"Sentry event ID: {g.hex(32)}\nWaiting up to 2 seconds\n",
        "sentry-event-id",
    )
    add(
        "2024-05-02 10:11:12,345 ERROR [api.views] [dd.service=api dd.env=prod "
        f"dd.trace_id={g.dig(19)} dd.span_id={g.dig(19)}] upstream timed out\n",
        "datadog-trace-ids",
    )
    add(
        f"View the run at https://github.com/acme/api/actions/runs/{g.dig(10)}/job/{g.dig(11)}\n",
        "actions-run-url",
    )
    add(
        json.dumps(
            {
                "traceId": g.hex(32),
                "spanId": g.hex(16),
                "parentSpanId": g.hex(16),
                "name": "POST /v1/charge",
                "kind": 2,
                "startTimeUnixNano": "1714644672345000000",
            },
            indent=2,
        ),
        "otel-span",
    )
    add(f"$ cat /etc/machine-id\n{g.hex(32)}\n", "machine-id")
    add(
        "$ docker ps\nCONTAINER ID   IMAGE          COMMAND                  STATUS\n"
        f'{g.hex(12)}   postgres:16    "docker-entrypoint.s…"   Up 3 hours\n'
        f'{g.hex(12)}   redis:7        "docker-entrypoint.s…"   Up 3 hours\n',
        "docker-container-ids",
    )
    add(
        "< HTTP/2 403\n< server: cloudflare\n"
        f"< cf-ray: {g.hex(16)}-FRA\n< content-type: text/html\n",
        "cf-ray",
    )
    add(
        "POST /v1/payment_intents HTTP/1.1\nHost: api.stripe.com\n"
        f"Idempotency-Key: {g.uuid()}\nContent-Type: application/x-www-form-urlencoded\n",
        "idempotency-key",
    )
    add(
        "Waiting for operation "
        f"[projects/acme-prod/locations/europe-west1/operations/operation-{g.dig(13)}-"
        f"{g.hex(13)}-{g.hex(8)}-{g.hex(8)}] to complete...done.\n",
        "gcp-operation-id",
    )
    add(
        "System.InvalidOperationException: Sequence contains no elements\n"
        "   at System.Linq.ThrowHelper.ThrowNoElementsException()\n"
        f"   TraceId: 00-{g.hex(32)}-{g.hex(16)}-00\n",
        "dotnet-trace-id",
    )
    add(
        f"/subscriptions/{g.uuid()}/resourceGroups/rg-web-prod/providers/Microsoft.Web/sites/"
        "acme-api",
        "azure-resource-id",
    )
    add(
        f"[2024-05-02 10:11:12,345: INFO/ForkPoolWorker-3] Task tasks.send_email[{g.uuid()}] "
        "succeeded in 0.214s: None\n",
        "celery-task-id",
    )
    add(
        f"here's the conversation where we worked it out: https://chatgpt.com/share/{g.uuid()}",
        "share-url-uuid",
    )
    add(
        "< HTTP/1.1 403 Forbidden\n"
        f"< x-amz-request-id: {g.s('0123456789ABCDEF', 16)}\n"
        f"< x-amz-id-2: {g.b64(57)}\n< Content-Type: application/xml\n",
        "s3-request-ids",
    )
    add(
        "GROUP           TOPIC     PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  CONSUMER-ID\n"
        f"billing-events  invoices  0          48213           48213           0    "
        f"consumer-billing-1-{g.uuid()}\n",
        "kafka-consumer-id",
    )
    add(
        f"Correlation ID: {g.uuid()}\nTimestamp: 2024-05-02 10:11:12Z\n"
        "AADSTS700016: Application with identifier "
        f"'{g.uuid()}' was not found in the directory 'Acme'.\n",
        "aad-error-ids",
    )
    add(
        f"Your order {g.upan(8)} has shipped. Track it with reference {g.uuid().upper()}.",
        "uppercase-uuid",
    )
    add(
        f"2024-05-02T10:11:12.345Z INFO  session={g.hex(32)} user=4821 path=/dashboard "
        "status=200 dur=41ms\n",
        "log-session-hash-id",
    )
    add(
        f'$ curl -s localhost:8080/healthz\n{{"status":"ok","instance":"{g.uuid()}",'
        f'"build":"{g.hex(7)}"}}\n',
        "healthz-instance-id",
    )
    return out


_SPKI_RSA = bytes.fromhex("30820122300d06092a864886f70d01010105000382010f003082010a0282010100")
_SPKI_EC = bytes.fromhex("3059301306072a8648ce3d020106082a8648ce3d030107034200")


def _identifier(g: _Rand) -> list[Case]:
    out: list[Case] = []

    def add(text: str, shape: str) -> None:
        out.append(_n(text, "identifier", shape))

    add(
        json.dumps(
            {
                "id": "msg_01" + g.an(22),
                "type": "message",
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_01" + g.an(22),
                        "name": "bash",
                        "input": {"command": "pytest -q tests/test_auth.py"},
                    }
                ],
                "stop_reason": "tool_use",
            }
        ),
        "anthropic-tool-use-id",
    )
    add(
        json.dumps(
            {
                "id": "chatcmpl-" + g.an(29),
                "object": "chat.completion",
                "model": "gpt-4o-2024-08-06",
                "choices": [
                    {
                        "index": 0,
                        "message": {
                            "role": "assistant",
                            "content": None,
                            "tool_calls": [
                                {
                                    "id": "call_" + g.an(24),
                                    "type": "function",
                                    "function": {
                                        "name": "read_file",
                                        "arguments": '{"path": "src/auth.py"}',
                                    },
                                }
                            ],
                        },
                        "finish_reason": "tool_calls",
                    }
                ],
            }
        ),
        "openai-call-and-chatcmpl-ids",
    )
    add(
        "< HTTP/2 529\n< content-type: application/json\n"
        f"< request-id: req_011C{g.an(20)}\n< anthropic-organization-id: {g.uuid()}\n<\n"
        '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n',
        "anthropic-request-id",
    )
    add(
        f'assistant_id = "asst_{g.an(24)}"\nthread_id = "thread_{g.an(24)}"\n'
        f"# run_{g.an(24)} finished with status=completed\n",
        "openai-assistant-ids",
    )
    add(
        json.dumps(
            {
                "id": "file-" + g.an(22),
                "object": "file",
                "bytes": 120000,
                "filename": "batch_input.jsonl",
                "purpose": "batch",
            }
        )
        + "\n"
        + json.dumps({"id": "batch_" + g.an(24), "status": "validating"}),
        "openai-file-batch-ids",
    )
    add(
        json.dumps(
            {
                "id": "evt_" + g.an(24),
                "object": "event",
                "livemode": True,
                "type": "payment_intent.succeeded",
                "data": {
                    "object": {
                        "id": "pi_" + g.an(24),
                        "customer": "cus_" + g.an(14),
                        "latest_charge": "ch_" + g.an(24),
                        "amount": 4200,
                        "currency": "eur",
                    }
                },
            },
            indent=2,
        ),
        "stripe-object-ids",
    )
    add(
        '<script src="https://js.stripe.com/v3/"></script>\n<script>\n'
        f"  const stripe = Stripe('pk_live_{g.an(99)}');\n"
        "  const elements = stripe.elements();\n</script>\n",
        "stripe-publishable-key",
    )
    add(
        "import * as Sentry from '@sentry/react';\n\nSentry.init({\n"
        f"  dsn: 'https://{g.hex(32)}@o{g.dig(6)}.ingest.us.sentry.io/{g.dig(16)}',\n"
        "  tracesSampleRate: 0.1,\n});\n",
        "sentry-dsn-frontend",
    )
    account = g.dig(12)
    add(
        "$ aws sts get-caller-identity\n"
        + json.dumps(
            {
                "UserId": "AIDA" + g.s(_B32, 17),
                "Account": account,
                "Arn": "arn:aws:iam::" + account + ":user/ci-deployer",
            },
            indent=4,
        ),
        "aws-caller-identity",
    )
    add(
        "$ aws ec2 describe-instances --query 'Reservations[].Instances[].[InstanceId,"
        "SecurityGroups[0].GroupId,SubnetId,ImageId]' --output text\n"
        f"i-0{g.hex(16)}\tsg-0{g.hex(16)}\tsubnet-0{g.hex(16)}\tami-0{g.hex(16)}\n"
        f"i-0{g.hex(16)}\tsg-0{g.hex(16)}\tsubnet-0{g.hex(16)}\tami-0{g.hex(16)}\n",
        "aws-resource-ids",
    )
    add(
        "$ kubectl get pods -n web\nNAME                      READY   STATUS    RESTARTS   AGE\n"
        f"api-7d9f8b6c5d-{g.loan(5)}   1/1     Running   0          3h\n"
        f"api-7d9f8b6c5d-{g.loan(5)}   1/1     Running   0          3h\n"
        f"worker-5c6b7d8e9f-{g.loan(5)}   1/1     Running   2          3h\n",
        "k8s-pod-names",
    )
    add(
        "> vite build\nvite v5.2.10 building for production...\n✓ 412 modules transformed.\n"
        f"dist/index.html                   0.46 kB\ndist/assets/index-{g.b64url(8)}.css   "
        f"12.31 kB\ndist/assets/index-{g.b64url(8)}.js   187.02 kB │ gzip: 60.11 kB\n",
        "vite-asset-hashes",
    )
    add(
        "import os\n\n\ndef get_api_key() -> str:\n"
        '    key = os.environ.get("OPENAI_API_KEY")\n    if not key:\n'
        '        raise RuntimeError("OPENAI_API_KEY is not set")\n    return key\n',
        "python-env-lookup",
    )
    add(
        "import getpass\n\nusername = input('Username: ')\npassword = getpass.getpass('Password: "
        "')\n"
        "session = client.login(username=username, password=password)\n",
        "python-getpass",
    )
    add(
        "export function bearer(req: Request): string | undefined {\n"
        '  const token = req.headers.get("authorization")?.split(" ")[1];\n'
        "  return token;\n}\n",
        "ts-header-parse",
    )
    add(
        'token := os.Getenv("GITHUB_TOKEN")\nif token == "" {\n'
        '\tlog.Fatal("GITHUB_TOKEN must be set")\n}\n'
        "client := github.NewClient(nil).WithAuthToken(token)\n",
        "go-getenv",
    )
    add(
        "SECRET_KEY = env('DJANGO_SECRET_KEY')\nDATABASES = {'default': env.db('DATABASE_URL')}\n"
        "EMAIL_HOST_PASSWORD = env('EMAIL_HOST_PASSWORD', default='')\n",
        "django-environ",
    )
    add(
        "def verify_password(plain_password: str, hashed_password: str) -> bool:\n"
        "    return pwd_context.verify(plain_password, hashed_password)\n\n\n"
        "def get_password_hash(password: str) -> str:\n    return pwd_context.hash(password)\n",
        "python-password-functions",
    )
    add(
        "export interface Credentials {\n  username: string;\n  password: string;\n"
        "  apiKey?: string;\n  refreshToken?: string;\n}\n",
        "ts-interface",
    )
    add(
        "CREATE TABLE users (\n  id BIGSERIAL PRIMARY KEY,\n  email TEXT UNIQUE NOT NULL,\n"
        "  password_hash TEXT NOT NULL,\n  api_token_digest CHAR(64),\n"
        "  reset_token_expires_at TIMESTAMPTZ\n);\n",
        "sql-schema",
    )
    pub = base64.b64encode(_ssh_string(b"ssh-ed25519") + _ssh_string(g.raw(32))).decode()
    add(
        f"$ cat ~/.ssh/authorized_keys\nssh-ed25519 {pub} dana@laptop\n",
        "ssh-ed25519-public-key",
    )
    pub = base64.b64encode(
        _ssh_string(b"ssh-rsa") + _ssh_string(b"\x01\x00\x01") + _ssh_string(b"\x00" + g.raw(384))
    ).decode()
    add(
        f"github.com ssh-rsa {pub}\n",
        "known-hosts-rsa",
    )
    lines = _wrap(
        base64.b64encode(_SPKI_RSA + g.raw(256) + bytes.fromhex("0203010001")).decode(), 64
    )
    pem = "\n".join([_BEGIN + "PUBLIC KEY" + _DASH5, *lines, _END + "PUBLIC KEY" + _DASH5])
    add(
        f"$ openssl rsa -in key.pem -pubout\nwriting RSA key\n{pem}\n",
        "pem-public-key",
    )
    cert_der = bytes.fromhex("308203c5308202ada003020102021400") + g.raw(940)
    lines = _wrap(base64.b64encode(cert_der).decode(), 64)
    pem = "\n".join([_BEGIN + "CERTIFICATE" + _DASH5, *lines, _END + "CERTIFICATE" + _DASH5])
    add(
        "$ openssl s_client -connect api.acme.io:443 -showcerts </dev/null\nCONNECTED(00000003)\n"
        "depth=0 CN = api.acme.io\nverify return:1\n---\nCertificate chain\n"
        " 0 s:CN = api.acme.io\n   i:C = US, O = Let's Encrypt, CN = R11\n" + pem + "\n",
        "pem-certificate",
    )
    lines = _wrap("mDMEZ" + g.b64(120), 64)
    blk = "PGP PUBLIC KEY" + " BLOCK"
    add(
        "$ gpg --armor --export release@acme.io\n"
        + "\n".join([_BEGIN + blk + _DASH5, "", *lines, "=" + g.b64(3), _END + blk + _DASH5])
        + "\n",
        "pgp-public-key-block",
    )
    add(
        f"creation_rules:\n  - path_regex: secrets/.*\\.yaml$\n    age: age1{g.s(_BECH32, 58)}\n",
        "age-public-key",
    )
    add(
        f"[Peer]\n# laptop\nPublicKey = {g.b64(32)}\nAllowedIPs = 10.8.0.3/32\n",
        "wireguard-public-key",
    )
    cursor = base64.urlsafe_b64encode(b'{"page":2,"sort":"created_at"}').decode().rstrip("=")
    add(
        json.dumps({"data": [{"id": 41}, {"id": 42}], "next_cursor": cursor, "has_more": True}),
        "base64-pagination-cursor",
    )
    add(
        '<img alt="logo" src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAYAAAAf8/9h'
        + g.b64(96)
        + '">',
        "data-uri-png",
    )
    body = base64.encodebytes(
        b"Hi team,\n\nthe quarterly report is attached. Numbers are up 12% on last quarter.\n\n"
        b"Best,\nDana\n"
    ).decode()
    add(
        "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n\n" + body,
        "mime-base64-body",
    )
    ca = base64.b64encode(
        (
            _BEGIN
            + "CERTIFICATE"
            + _DASH5
            + "\n"
            + g.b64(600)
            + "\n"
            + _END
            + "CERTIFICATE"
            + _DASH5
        ).encode()
    ).decode()
    add(
        "apiVersion: v1\nclusters:\n- cluster:\n"
        f"    certificate-authority-data: {ca}\n"
        "    server: https://k8s.acme.internal:6443\n  name: acme\n",
        "kubeconfig-ca-data",
    )
    add(
        "$ printenv | cut -d= -f1 | sort | grep -E 'KEY|TOKEN|SECRET|PASSWORD'\n"
        "AWS_SECRET_ACCESS_KEY\nGITHUB_TOKEN\nNPM_TOKEN\nOPENAI_API_KEY\nPGPASSWORD\n",
        "env-var-names",
    )
    add(
        '{\n  "dependencies": {\n    "jsonwebtoken": "^9.0.2",\n    "bcryptjs": "^2.4.3",\n'
        '    "passport-http-bearer": "^1.0.1",\n    "@octokit/auth-token": "^5.1.1"\n  }\n}\n',
        "package-json-auth-deps",
    )
    add(
        f"Account SID: AC{g.hex(32)}\nMessaging Service SID: MG{g.hex(32)}\n"
        f"Message SID: SM{g.hex(32)} (status: delivered)\n",
        "twilio-sids",
    )
    add(
        json.dumps(
            {
                "login": "octo-dev",
                "id": g.between(1_000_000, 99_999_999),
                "node_id": "U_kgDO" + g.an(8),
                "type": "User",
                "site_admin": False,
            },
            indent=2,
        ),
        "github-node-id",
    )
    add(
        json.dumps(
            {
                "ok": True,
                "channel": "C0" + g.upan(9),
                "ts": "1714644672.345679",
                "message": {
                    "user": "U0" + g.upan(9),
                    "bot_id": "B0" + g.upan(9),
                    "text": "deployed",
                },
            }
        ),
        "slack-ids",
    )
    add(
        f"✅  Production: https://acme-web-{g.loan(9)}-acme.vercel.app [2m]\n"
        f"   Deployment ID: dpl_{g.an(28)}\n   Project ID: prj_{g.an(28)}\n",
        "vercel-ids",
    )
    add(
        f"Send 0.05 ETH to 0x{g.hex(40)} (the multisig), not to the old address.",
        "eth-address",
    )
    add(
        "$ ip link show eth0\n2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state "
        "UP\n"
        "    link/ether 02:42:ac:11:00:02 brd ff:ff:ff:ff:ff:ff\n"
        f"$ ip -6 addr show eth0 | grep inet6\n    inet6 fe80::{g.hex(4)}:{g.hex(4)}:{g.hex(4)}:"
        f"{g.hex(4)}/64 scope link\n",
        "mac-and-ipv6",
    )
    add(
        f"image: ghcr.io/acme/api:sha-{g.hex(7)}\nimagePullPolicy: IfNotPresent\n",
        "image-tag-sha",
    )
    add(
        "class PasswordResetTokenGenerator:\n"
        '    key_salt = "django.contrib.auth.tokens.PasswordResetTokenGenerator"\n'
        "    algorithm = None\n    _secret = None\n",
        "class-with-token-names",
    )
    add(
        json.dumps(
            {
                "type": "service_account",
                "project_id": "acme-analytics-prod",
                "client_email": "etl-runner@acme-analytics-prod.iam.gserviceaccount.com",
                "client_id": g.dig(21),
                "auth_uri": "https://accounts.google.com/o/oauth2/auth",
                "token_uri": "https://oauth2.googleapis.com/token",
            },
            indent=2,
        ),
        "gcp-sa-metadata-without-key",
    )
    add(
        _BEGIN
        + "PUBLIC KEY"
        + _DASH5
        + "\n"
        + "\n".join(_wrap(base64.b64encode(_SPKI_EC + b"\x04" + g.raw(64)).decode(), 64))
        + "\n"
        + _END
        + "PUBLIC KEY"
        + _DASH5
        + "\n",
        "pem-ec-public-key",
    )
    return out


def _prose(g: _Rand) -> list[Case]:
    out: list[Case] = []

    def add(text: str, shape: str) -> None:
        out.append(_n(text, "prose", shape))

    add(
        "## Handling credentials\n\nRotate API keys every 90 days and never commit them to git. "
        "Keys live in the team vault; CI reads them from encrypted repository secrets. If a key "
        "leaks, revoke it first, then rotate, then clean the history.",
        "security-md",
    )
    add(
        "I accidentally committed my .env file with the Stripe key in it three commits ago. "
        "How do I remove it from the git history, and do I need to rotate the key too?",
        "user-question-leak",
    )
    add(
        "I've moved the OpenAI key out of `config.py`; the client now reads `OPENAI_API_KEY` "
        "from the environment and raises a clear error when it is missing. Set it in your "
        "shell (or in `.env`, which is already in `.gitignore`) before running the script.",
        "assistant-reply-env-move",
    )
    add(
        "请不要把 token 提交到仓库里，统一放在环境变量或者密钥管理服务中，CI 里用加密的 secrets。",
        "chinese-policy",
    )
    add(
        "我忘记了数据库密码，怎么在 PostgreSQL 里重置 postgres 用户的密码？服务器是 Ubuntu 22.04。",
        "chinese-question-reset",
    )
    add(
        "密码至少需要 12 个字符，必须同时包含大写字母、小写字母、数字和特殊符号，且不能与最近 5 "
        "次使用过的密码相同。",
        "chinese-password-policy",
    )
    add(
        'psql: error: connection to server at "db.internal" (10.0.0.5), port 5432 failed: '
        'FATAL:  password authentication failed for user "app"\n',
        "psql-auth-error",
    )
    add(
        "remote: Invalid username or token. Password authentication is not supported for Git "
        "operations.\nfatal: Authentication failed for 'https://github.com/acme/api.git/'\n",
        "git-auth-error",
    )
    add(
        "openai.AuthenticationError: Error code: 401 - {'error': {'message': \"You didn't provide "
        "an API key. You need to provide your API key in an Authorization header using Bearer "
        "auth (i.e. Authorization: Bearer YOUR_KEY).\", 'type': 'invalid_request_error'}}\n",
        "openai-missing-key-error",
    )
    add(
        "$ psql --help | grep -i pass\n"
        "  -w, --no-password        never prompt for password\n"
        "  -W, --password           force password prompt (should happen automatically)\n",
        "cli-help-psql",
    )
    add(
        "$ gh auth login --help\nAuthenticate with a GitHub host.\n\nFLAGS\n"
        "  -h, --hostname string   The hostname of the GitHub instance to authenticate with\n"
        "  -s, --scopes strings    Additional authentication scopes to request\n"
        "      --with-token        Read token from standard input\n",
        "cli-help-gh",
    )
    add(
        "Usage: acme deploy [OPTIONS] SERVICE\n\nOptions:\n"
        "  --token TEXT        API token used to authenticate  [env var: ACME_TOKEN; required]\n"
        "  --password TEXT     Password for the registry user  [env var: ACME_REGISTRY_PASSWORD]\n"
        "  --dry-run           Print the plan and exit\n  --help              Show this message "
        "and exit.\n",
        "cli-help-click",
    )
    add(
        "$ docker login --help\n\nUsage:  docker login [OPTIONS] [SERVER]\n\nOptions:\n"
        "  -p, --password string   Password\n      --password-stdin    Take the password from "
        "stdin\n"
        "  -u, --username string   Username\n",
        "cli-help-docker-login",
    )
    add(
        "$ git log --format='%h %s' -4\n"
        f"{g.hex(7)} fix: stop logging the Authorization header\n"
        f"{g.hex(7)} chore: rotate the leaked Slack webhook (old one revoked)\n"
        f"{g.hex(7)} refactor: read the database password from Vault\n"
        f"{g.hex(7)} docs: how to create a personal access token\n",
        "commit-messages",
    )
    add(
        "### Security\n\n- Tokens are now stored in the OS keychain instead of "
        "`~/.config/acme/token`.\n- `acme login` no longer echoes the password prompt.\n"
        "- Private keys are written with mode 0600.\n",
        "changelog",
    )
    add(
        "A JWT has three base64url parts separated by dots: header, payload and signature. "
        "Never put secrets in the payload: it is only encoded, not encrypted, so anyone holding "
        "the token can read it.",
        "docs-jwt-explainer",
    )
    add(
        "GitHub found a Slack API token in acme/api (commit 4e1b2a0, file scripts/notify.py). "
        "Slack has been notified and the token was revoked. Remove the token from the code and "
        "create a new one if you still need it.",
        "secret-scanning-alert-email",
    )
    add(
        "nit: we shouldn't default `password` to an empty string here; if the env var is "
        "missing we should fail fast at start-up instead of sending an empty credential.",
        "review-comment",
    )
    add(
        "Acceptance criteria:\n- The password reset link expires after 15 minutes.\n"
        "- The reset token is single use.\n- After three wrong passwords the account is locked "
        "for 10 minutes.",
        "ticket-acceptance-criteria",
    )
    add(
        "2024-05-02T10:11:12.345Z INFO  vault  loaded 14 secrets from secret/data/api in 212ms\n"
        "2024-05-02T10:11:12.402Z WARN  auth   token for user 4821 expires in 3 days; refresh "
        "scheduled\n",
        "log-lines-about-secrets",
    )
    add(
        "我已经把 API 密钥从代码里移除了，现在从环境变量 OPENAI_API_KEY 读取；"
        "本地开发时把它写进 .env，这个文件已经加进 .gitignore 了。",
        "chinese-assistant-reply",
    )
    add(
        "为什么 ssh 一直提示 Permission denied (publickey)？我已经把公钥加到服务器的 "
        "~/.ssh/authorized_keys 里了，权限也改成了 600。",
        "chinese-ssh-question",
    )
    add(
        "FAILED tests/test_auth.py::test_login_rejects_wrong_password - AssertionError: "
        "expected 401, got 200\nFAILED tests/test_auth.py::test_token_expires - "
        "freezegun not installed\n2 failed, 48 passed in 3.12s\n",
        "pytest-summary",
    )
    add(
        "$ ssh-add ~/.ssh/id_ed25519\nEnter passphrase for /home/dana/.ssh/id_ed25519: \n"
        "Identity added: /home/dana/.ssh/id_ed25519 (dana@laptop)\n",
        "ssh-add-prompt",
    )
    add(
        "An access token is short-lived and sent with every API call; a refresh token lives "
        "longer and is only sent to the authorization server to get a new access token. Store "
        "the refresh token somewhere the browser's JavaScript cannot read, such as an HttpOnly "
        "cookie.",
        "docs-access-vs-refresh",
    )
    add(
        "Terraform will perform the following actions:\n\n"
        '  # aws_db_instance.main will be updated in-place\n  ~ resource "aws_db_instance" "main" '
        "{\n"
        '        id       = "orders"\n      ~ password = (sensitive value)\n'
        "        # (41 unchanged attributes hidden)\n    }\n\nPlan: 0 to add, 1 to change, 0 to "
        "destroy.\n",
        "terraform-plan-sensitive",
    )
    add(
        "$ kubectl describe secret orders-db -n shop\nName:         orders-db\nNamespace:    shop\n"
        "Type:  Opaque\n\nData\n====\npassword:  24 bytes\nusername:  6 bytes\n",
        "kubectl-describe-secret",
    )
    add(
        "这个接口需要在请求头里带上 Authorization: Bearer <token>，token 从 /api/login 接口获取，"
        "有效期两个小时。",
        "chinese-api-docs",
    )
    add(
        "The password you entered is incorrect. You have 2 attempts remaining before your "
        "account is locked.",
        "ui-error-message",
    )
    add("登录失败：用户名或密码错误，请重新输入。", "chinese-login-error")
    add(
        "my password is not being accepted after the reset this morning, can you check whether "
        "the account got locked?",
        "chat-password-is-not",
    )
    add(
        "我的密码是对的，但是一直登录不上，提示“账号已被锁定”，是不是要找管理员解锁？",
        "chinese-chat-password-is-correct",
    )
    add(
        "Error: token is expired\nUsage:\n  acme whoami [flags]\n\nRun 'acme login' to get a new "
        "token.\n",
        "cli-token-expired",
    )
    add(
        json.dumps(
            {
                "errors": {
                    "password": ["This field is required."],
                    "api_key": ["Ensure this field has at least 32 characters."],
                }
            }
        ),
        "validation-errors-json",
    )
    add(
        'HTTP/1.1 401 Unauthorized\nContent-Type: application/json\n\n{"detail": "Invalid '
        'token."}\n',
        "http-401-body",
    )
    add(
        "Secrets must be stored in AWS Secrets Manager. Access is granted per service through "
        "IAM roles, every read is logged in CloudTrail, and database passwords rotate "
        "automatically every 30 days.",
        "policy-paragraph",
    )
    add(
        "what's the difference between `--password` and `--password-stdin` for docker login? "
        "our CI logs show a warning about the first one",
        "user-question-flags",
    )
    add(
        "The webhook signature check failed because the handler was reading the secret from "
        "`STRIPE_WEBHOOK_SECRET` while the deployment sets `STRIPE_SIGNING_SECRET`. I renamed "
        "the variable in `settings.py` so both environments agree.",
        "assistant-reply-env-rename",
    )
    add(
        "Password:\nsu: Authentication failure\n",
        "su-prompt",
    )
    return out


def final() -> list[Case]:
    """The corpus: about 160 positives then about 160 negatives, the same on every call."""
    g = _Rand(_SEED)
    positives = _provider(g) + _private_key(g) + _connection_string(g) + _jwts(g) + _labelled(g)
    negatives = _placeholder(g) + _hash(g) + _uuid(g) + _identifier(g) + _prose(g)
    return positives + negatives

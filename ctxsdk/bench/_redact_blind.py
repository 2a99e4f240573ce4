"""A blind held-out corpus for the secret-redaction engine.

Written without reading the engine, its rules or its tuning corpora, so a score on it estimates
how the engine does on data nobody tuned it to. Cases imitate what coding-agent session logs hold:
whole tool results, chat messages (English and Chinese), quoted configs and JSON tool-call
arguments. Every credential is generated at run time from split pieces and seeded random bodies;
no real or literal token appears in this file.
"""

from __future__ import annotations

import base64
import json
import random
import string
import urllib.parse
from collections.abc import Callable

from ._redact_corpus import Case

_SEED = 20240917

_HEX = "0123456789abcdef"
_DIG = string.digits
_UP = string.ascii_uppercase
_LOW = string.ascii_lowercase
_ALNUM = string.ascii_letters + string.digits
_UPNUM = _UP + _DIG
_LOWNUM = _LOW + _DIG
_URLSAFE = _ALNUM + "-_"
_B64 = _ALNUM + "+/"
_B32 = _UP + "234567"


class _G:
    """Seeded generator of random bodies."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def pick(self, alphabet: str, n: int) -> str:
        return "".join(self.r.choice(alphabet) for _ in range(n))

    def digits(self, n: int) -> str:
        return self.r.choice("123456789") + self.pick(_DIG, n - 1)

    def hex(self, n: int) -> str:
        return self.pick(_HEX, n)

    def alnum(self, n: int) -> str:
        return self.pick(_ALNUM, n)

    def upnum(self, n: int) -> str:
        return self.pick(_UPNUM, n)

    def lownum(self, n: int) -> str:
        return self.pick(_LOWNUM, n)

    def urlsafe(self, n: int) -> str:
        return self.pick(_URLSAFE, n)

    def b64(self, nbytes: int) -> str:
        return base64.b64encode(self.r.randbytes(nbytes)).decode()

    def b64url(self, nbytes: int) -> str:
        return base64.urlsafe_b64encode(self.r.randbytes(nbytes)).decode().rstrip("=")

    def b64url_json(self, obj: object) -> str:
        raw = json.dumps(obj, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    def choice(self, items: list[str]) -> str:
        return self.r.choice(items)

    def password(self, n: int = 14, symbols: str = "!#$%&*+-=?@^_") -> str:
        body = list(self.alnum(n - 3) + self.pick(symbols, 2) + self.pick(_DIG, 1))
        self.r.shuffle(body)
        return "".join(body)

    def uuid(self) -> str:
        h = self.hex(32)
        v = "89ab"[self.r.randrange(4)]
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{v}{h[17:20]}-{h[20:]}"


def _pos(text: str, family: str, shape: str, secret: str) -> Case:
    assert secret in text, (shape, secret)
    return Case(text=text, family=family, shape=shape, positive=True, secret=secret)


def _neg(text: str, family: str, shape: str) -> Case:
    return Case(text=text, family=family, shape=shape, positive=False)


def _lines(*parts: str) -> str:
    return "\n".join(parts)


# --------------------------------------------------------------------------------------------
# contexts: wrap one NAME=value pair the way a session log shows it


def _ctx_env_sort(g: _G, name: str, value: str) -> str:
    rows = [
        "HOME=/home/dev",
        "HOSTNAME=devbox-" + g.lownum(5),
        "LANG=C.UTF-8",
        f"{name}={value}",
        "PATH=/usr/local/bin:/usr/bin:/bin",
        "PWD=/workspace/app",
        "SHLVL=1",
        "TERM=xterm-256color",
    ]
    return "$ env | sort\n" + "\n".join(sorted(rows))


def _ctx_dotenv_cat(g: _G, name: str, value: str) -> str:
    return _lines(
        "$ cat .env",
        "NODE_ENV=production",
        "PORT=8080",
        f"{name}={value}",
        "LOG_LEVEL=info",
    )


def _ctx_json_tool(g: _G, name: str, value: str) -> str:
    args = {"command": f"export {name}={value} && npm run deploy", "timeout": 120000}
    return json.dumps({"name": "Bash", "input": args})


def _ctx_yaml(g: _G, name: str, value: str) -> str:
    return _lines(
        "$ cat config/settings.yaml",
        "app:",
        "  name: billing-worker",
        "  region: eu-west-1",
        "integrations:",
        f"  {name.lower()}: {value}",
        "  retries: 3",
    )


def _ctx_git_diff(g: _G, name: str, value: str) -> str:
    return _lines(
        "diff --git a/.env.production b/.env.production",
        "index " + g.hex(7) + ".." + g.hex(7) + " 100644",
        "--- a/.env.production",
        "+++ b/.env.production",
        "@@ -3,4 +3,5 @@ DATABASE_POOL=10",
        " REDIS_TTL=300",
        " FEATURE_FLAGS=beta_ui",
        f"+{name}={value}",
        " SENTRY_ENVIRONMENT=production",
    )


def _ctx_compose(g: _G, name: str, value: str) -> str:
    return _lines(
        "$ docker compose config",
        "name: shop",
        "services:",
        "  api:",
        "    build:",
        "      context: /home/dev/shop",
        "      dockerfile: Dockerfile",
        "    environment:",
        "      APP_ENV: production",
        f"      {name}: {value}",
        "    ports:",
        "      - mode: ingress",
        "        target: 8000",
        '        published: "8000"',
    )


def _ctx_chat_en(g: _G, name: str, value: str) -> str:
    return (
        f"ok here's the key, I put it in {name} but the script still says unauthorized: "
        f"{value} -- can you check what's wrong with the request?"
    )


def _ctx_chat_zh(g: _G, name: str, value: str) -> str:
    return f"这是我的 key：{value}，帮我配置到 {name} 里面，然后跑一下测试看看能不能连上。"


def _ctx_ci_log(g: _G, name: str, value: str) -> str:
    return _lines(
        "2024-05-14T09:12:03.114Z ##[group]Run ./scripts/publish.sh",
        "2024-05-14T09:12:03.115Z + set -x",
        f"2024-05-14T09:12:03.201Z + {name}={value}",
        "2024-05-14T09:12:03.202Z + ./node_modules/.bin/release --ci",
        "2024-05-14T09:12:05.877Z ##[endgroup]",
    )


def _ctx_traceback(g: _G, name: str, value: str) -> str:
    return _lines(
        "Traceback (most recent call last):",
        '  File "/app/worker/main.py", line 41, in <module>',
        "    client = make_client(settings)",
        '  File "/app/worker/client.py", line 17, in make_client',
        '    raise ConfigError(f"bad settings: {settings!r}")',
        "worker.errors.ConfigError: bad settings: {'debug': False, 'region': 'us-east-1', "
        f"'{name.lower()}': '{value}', 'timeout': 30}}",
    )


def _ctx_jupyter(g: _G, name: str, value: str) -> str:
    return _lines(
        "In [3]: import os",
        f'   ...: os.environ["{name}"] = "{value}"',
        "   ...: client = Client()",
        "   ...: client.ping()",
        "Out[3]: {'ok': True, 'latency_ms': 84}",
    )


def _ctx_kubectl(g: _G, name: str, value: str) -> str:
    pod = "api-7d9c6b8f5-" + g.lownum(5)
    return _lines(
        "$ kubectl describe pod " + pod,
        "Name:         " + pod,
        "Namespace:    prod",
        "Containers:",
        "  api:",
        "    Image:          registry.internal/api:1.42.0",
        "    Environment:",
        "      APP_ENV:        production",
        f"      {name}:  {value}",
        "      LOG_FORMAT:     json",
        "    Mounts:",
        "      /var/run/secrets/kubernetes.io/serviceaccount from kube-api-access (ro)",
    )


def _ctx_assistant(g: _G, name: str, value: str) -> str:
    return _lines(
        "I found the problem. Your `.env.local` sets the variable twice:",
        "",
        "```",
        f"{name}=",
        f"{name}={value}",
        "```",
        "",
        "The first empty assignment is harmless, but the loader keeps the last one. "
        "Remove the duplicate line and restart the dev server.",
    )


_CONTEXTS: list[Callable[[_G, str, str], str]] = [
    _ctx_env_sort,
    _ctx_dotenv_cat,
    _ctx_json_tool,
    _ctx_yaml,
    _ctx_git_diff,
    _ctx_compose,
    _ctx_chat_en,
    _ctx_chat_zh,
    _ctx_ci_log,
    _ctx_traceback,
    _ctx_jupyter,
    _ctx_kubectl,
    _ctx_assistant,
]


# --------------------------------------------------------------------------------------------
# provider keys


def _provider_tokens(g: _G) -> list[tuple[str, str, str]]:
    """(shape, env var name, token) for vendor formats with a recognisable structure."""
    letters = string.ascii_letters
    azure_tail = g.pick(_ALNUM + "_~.-", 31)
    grafana_cloud = {
        "o": g.digits(6),
        "n": "stack-" + g.digits(6) + "-hm-read-write",
        "k": g.alnum(24),
        "m": {"r": "prod-us-east-0"},
    }
    mapbox = {"u": "acme-maps", "a": "cl" + g.lownum(23)}
    return [
        ("aws-access-key-id", "AWS_ACCESS_KEY_ID", "AK" + "IA" + g.pick(_B32, 16)),
        ("github-pat-classic", "GITHUB_TOKEN", "gh" + "p_" + g.alnum(36)),
        (
            "github-pat-fine-grained",
            "GH_TOKEN",
            "git" + "hub_pat_" + "11" + g.upnum(20) + "_" + g.alnum(59),
        ),
        ("github-oauth", "GITHUB_OAUTH_TOKEN", "gh" + "o_" + g.alnum(36)),
        ("github-app-installation", "GITHUB_APP_TOKEN", "gh" + "s_" + g.alnum(36)),
        ("gitlab-pat", "GITLAB_TOKEN", "gl" + "pat-" + g.urlsafe(20)),
        (
            "slack-bot",
            "SLACK_BOT_TOKEN",
            "xo" + "xb-" + g.digits(12) + "-" + g.digits(13) + "-" + g.alnum(24),
        ),
        (
            "slack-user",
            "SLACK_USER_TOKEN",
            "xo" + "xp-" + g.digits(12) + "-" + g.digits(12) + "-" + g.digits(13) + "-" + g.hex(32),
        ),
        (
            "slack-webhook",
            "SLACK_WEBHOOK_URL",
            "https://hooks."
            + "slack.com/services/T"
            + g.upnum(8)
            + "/B"
            + g.upnum(10)
            + "/"
            + g.alnum(24),
        ),
        (
            "discord-bot",
            "DISCORD_TOKEN",
            base64.b64encode(g.digits(19).encode()).decode().rstrip("=")
            + "."
            + g.urlsafe(6)
            + "."
            + g.urlsafe(38),
        ),
        (
            "discord-webhook",
            "DISCORD_WEBHOOK",
            "https://discord.com/api/" + "webhooks/" + g.digits(19) + "/" + g.urlsafe(68),
        ),
        ("stripe-secret-live", "STRIPE_SECRET_KEY", "sk" + "_live_" + "51" + g.alnum(97)),
        ("stripe-secret-test", "STRIPE_KEY", "sk" + "_test_" + "51" + g.alnum(97)),
        ("stripe-webhook-secret", "STRIPE_WEBHOOK_SECRET", "wh" + "sec_" + g.alnum(32)),
        (
            "sendgrid",
            "SENDGRID_API_KEY",
            "S" + "G." + g.urlsafe(22) + "." + g.urlsafe(43),
        ),
        ("mailgun", "MAILGUN_API_KEY", "ke" + "y-" + g.hex(32)),
        ("mailchimp", "MAILCHIMP_API_KEY", g.hex(32) + "-us" + str(g.r.randint(2, 21))),
        (
            "openai-project",
            "OPENAI_API_KEY",
            "sk-" + "proj-" + g.urlsafe(74) + "T3Blbk" + "FJ" + g.urlsafe(74),
        ),
        (
            "openai-legacy",
            "OPENAI_KEY",
            "sk-" + g.alnum(20) + "T3Blbk" + "FJ" + g.alnum(20),
        ),
        (
            "anthropic",
            "ANTHROPIC_API_KEY",
            "sk-" + "ant-api03-" + g.urlsafe(93) + "AA",
        ),
        ("google-api-key", "GOOGLE_API_KEY", "AI" + "za" + "Sy" + g.urlsafe(33)),
        ("google-oauth-client-secret", "GOOGLE_CLIENT_SECRET", "GOCS" + "PX-" + g.urlsafe(28)),
        ("google-oauth-access", "GOOGLE_ACCESS_TOKEN", "ya" + "29." + "a0A" + g.urlsafe(160)),
        ("huggingface", "HF_TOKEN", "h" + "f_" + g.pick(letters, 34)),
        ("groq", "GROQ_API_KEY", "gs" + "k_" + g.alnum(52)),
        ("replicate", "REPLICATE_API_TOKEN", "r" + "8_" + g.alnum(37)),
        ("perplexity", "PERPLEXITY_API_KEY", "pp" + "lx-" + g.alnum(48)),
        ("openrouter", "OPENROUTER_API_KEY", "sk-" + "or-v1-" + g.hex(64)),
        ("langsmith", "LANGSMITH_API_KEY", "lsv2" + "_pt_" + g.hex(32) + "_" + g.hex(10)),
        ("tavily", "TAVILY_API_KEY", "tv" + "ly-" + g.alnum(32)),
        ("npm", "NPM_TOKEN", "np" + "m_" + g.alnum(36)),
        (
            "pypi",
            "TWINE_PASSWORD",
            "py" + "pi-" + "AgEIcHlwaS5vcmc" + "CJ" + g.urlsafe(150),
        ),
        ("rubygems", "GEM_HOST_API_KEY", "ruby" + "gems_" + g.hex(48)),
        ("docker-hub-pat", "DOCKERHUB_TOKEN", "dckr" + "_pat_" + g.urlsafe(27)),
        ("twilio-api-key", "TWILIO_API_KEY", "S" + "K" + g.hex(32)),
        ("shopify-admin", "SHOPIFY_ACCESS_TOKEN", "sh" + "pat_" + g.hex(32)),
        ("digitalocean", "DIGITALOCEAN_TOKEN", "do" + "p_v1_" + g.hex(64)),
        ("newrelic-user-key", "NEW_RELIC_API_KEY", "NR" + "AK-" + g.upnum(27)),
        ("sentry-user-token", "SENTRY_AUTH_TOKEN", "sntr" + "yu_" + g.hex(64)),
        (
            "grafana-service-account",
            "GRAFANA_TOKEN",
            "gl" + "sa_" + g.alnum(32) + "_" + g.hex(8),
        ),
        (
            "grafana-cloud",
            "GRAFANA_CLOUD_TOKEN",
            "gl"
            + "c_"
            + base64.b64encode(json.dumps(grafana_cloud, separators=(",", ":")).encode()).decode(),
        ),
        (
            "dynatrace",
            "DT_API_TOKEN",
            "dt0" + "c01." + g.upnum(24) + "." + g.upnum(64),
        ),
        ("buildkite", "BUILDKITE_API_TOKEN", "bk" + "ua_" + g.hex(40)),
        ("sonarqube", "SONAR_TOKEN", "sq" + "p_" + g.hex(40)),
        ("doppler", "DOPPLER_TOKEN", "dp" + ".st." + "prd." + g.alnum(40)),
        ("linear", "LINEAR_API_KEY", "lin" + "_api_" + g.alnum(40)),
        ("notion", "NOTION_TOKEN", "nt" + "n_" + g.digits(11) + g.alnum(35)),
        (
            "atlassian-api-token",
            "JIRA_API_TOKEN",
            "ATATT" + "3xFfGF0" + g.urlsafe(170) + "=" + g.hex(8).upper(),
        ),
        ("postman", "POSTMAN_API_KEY", "PM" + "AK-" + g.hex(24) + "-" + g.hex(34)),
        ("telegram-bot", "TELEGRAM_BOT_TOKEN", g.digits(10) + ":" + "AA" + g.urlsafe(33)),
        (
            "terraform-cloud",
            "TFE_TOKEN",
            g.alnum(14) + ".atlas" + "v1." + g.alnum(67),
        ),
        ("vault-service-token", "VAULT_TOKEN", "hv" + "s." + "CAESI" + g.urlsafe(86)),
        ("pulumi", "PULUMI_ACCESS_TOKEN", "pu" + "l-" + g.hex(40)),
        (
            "braintree-access",
            "BRAINTREE_ACCESS_TOKEN",
            "access_token" + "$production$" + g.lownum(16) + "$" + g.hex(32),
        ),
        ("alibaba-access-key-id", "ALIBABA_CLOUD_ACCESS_KEY_ID", "LT" + "AI5t" + g.alnum(18)),
        (
            "azure-ad-client-secret",
            "AZURE_CLIENT_SECRET",
            g.alnum(3) + "8" + "Q~" + azure_tail,
        ),
        ("airtable-pat", "AIRTABLE_TOKEN", "p" + "at" + g.alnum(14) + "." + g.hex(64)),
        ("databricks", "DATABRICKS_TOKEN", "da" + "pi" + g.hex(32)),
        ("supabase-pat", "SUPABASE_ACCESS_TOKEN", "sb" + "p_" + g.hex(40)),
        (
            "mapbox-secret",
            "MAPBOX_SECRET_TOKEN",
            "s" + "k." + g.b64url_json(mapbox) + "." + g.urlsafe(22),
        ),
    ]


def _provider(g: _G) -> list[Case]:
    out: list[Case] = []
    for i, (shape, name, token) in enumerate(_provider_tokens(g)):
        ctx = _CONTEXTS[(i * 5) % len(_CONTEXTS)]
        out.append(_pos(ctx(g, name, token), "provider", shape, token))
    out.extend(_provider_bespoke(g))
    return out


def _provider_bespoke(g: _G) -> list[Case]:
    """Provider keys in contexts the generic wrappers do not cover."""
    out: list[Case] = []
    fam = "provider"

    asia = "AS" + "IA" + g.pick(_B32, 16)
    text = _lines(
        "$ cat ~/.aws/credentials",
        "[default]",
        "region = us-east-1",
        "",
        "[ci-deployer]",
        "aws_access_key_id = " + asia,
        "aws_secret_access_key = " + g.pick(_ALNUM + "/+", 40),
        "aws_session_token = IQoJb3JpZ2luX2VjE" + g.pick(_ALNUM + "/+", 200) + "==",
    )
    out.append(_pos(text, fam, "aws-temporary-access-key-id", asia))

    ghs = "gh" + "s_" + g.alnum(36)
    text = _lines(
        "$ git remote -v",
        f"origin\thttps://x-access-token:{ghs}@github.com/acme/payments.git (fetch)",
        f"origin\thttps://x-access-token:{ghs}@github.com/acme/payments.git (push)",
    )
    out.append(_pos(text, fam, "github-token-in-remote-url", ghs))

    npm = "np" + "m_" + g.alnum(36)
    text = _lines(
        "$ cat ~/.npmrc",
        "registry=https://registry.npmjs.org/",
        f"//registry.npmjs.org/:_authToken={npm}",
        "save-exact=true",
    )
    out.append(_pos(text, fam, "npmrc-auth-token", npm))

    pypi = "py" + "pi-" + "AgEIcHlwaS5vcmc" + "CJ" + g.urlsafe(140)
    text = _lines(
        "$ cat ~/.pypirc",
        "[distutils]",
        "index-servers =",
        "    pypi",
        "",
        "[pypi]",
        "username = __token__",
        "password = " + pypi,
    )
    out.append(_pos(text, fam, "pypirc-token", pypi))

    ant = "sk-" + "ant-api03-" + g.urlsafe(93) + "AA"
    cmd = (
        "curl -s https://api.anthropic.com/v1/messages "
        f'-H "x-api-key: {ant}" -H "anthropic-version: 2023-06-01" '
        '-H "content-type: application/json" '
        '-d \'{"model": "claude-3-5-haiku-latest", "max_tokens": 64, '
        '"messages": [{"role": "user", "content": "ping"}]}\''
    )
    text = json.dumps({"command": cmd, "description": "Smoke-test the API key"})
    out.append(_pos(text, fam, "anthropic-in-curl-tool-call", ant))

    hook = "https://hooks." + "slack.com/services/T" + g.upnum(9) + "/B" + g.upnum(11)
    hook += "/" + g.alnum(24)
    text = _lines(
        "Terraform will perform the following actions:",
        "",
        "  # aws_lambda_function.alerts will be updated in-place",
        '  ~ resource "aws_lambda_function" "alerts" {',
        '        id            = "alerts-forwarder"',
        "      ~ environment {",
        "          ~ variables = {",
        f'              ~ "SLACK_WEBHOOK_URL" = "{hook}"',
        '                "STAGE"             = "prod"',
        "            }",
        "        }",
        "    }",
        "",
        "Plan: 0 to add, 1 to change, 0 to destroy.",
    )
    out.append(_pos(text, fam, "slack-webhook-in-terraform-plan", hook))

    oai = "sk-" + "proj-" + g.urlsafe(74) + "T3Blbk" + "FJ" + g.urlsafe(74)
    text = _lines(
        "DEBUG:httpcore.http11:send_request_headers.started request=<Request [b'POST']>",
        "DEBUG:openai._base_client:Request options: {'method': 'post', 'url': "
        "'/chat/completions', 'headers': {'Authorization': 'Bearer " + oai + "'}, "
        "'json_data': {'model': 'gpt-4o-mini', 'temperature': 0}}",
        "DEBUG:httpcore.http11:send_request_headers.complete",
    )
    out.append(_pos(text, fam, "openai-in-debug-log", oai))

    npm2 = "np" + "m_" + g.alnum(36)
    text = _lines(
        "diff --git a/.github/workflows/release.yml b/.github/workflows/release.yml",
        "--- a/.github/workflows/release.yml",
        "+++ b/.github/workflows/release.yml",
        "@@ -18,7 +18,7 @@ jobs:",
        "       - run: npm ci",
        "       - run: npm publish --access public",
        "         env:",
        "-          NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}",
        "+          NODE_AUTH_TOKEN: " + npm2,
    )
    out.append(_pos(text, fam, "npm-in-workflow-diff", npm2))

    oai2 = "sk-" + "proj-" + g.urlsafe(74) + "T3Blbk" + "FJ" + g.urlsafe(74)
    text = _lines(
        "In [1]: from openai import OpenAI",
        f'   ...: client = OpenAI(api_key="{oai2}")',
        "   ...: r = client.models.list()",
        "   ...: len(r.data)",
        "Out[1]: 87",
    )
    out.append(_pos(text, fam, "openai-in-jupyter", oai2))

    stripe = "sk" + "_live_" + "51" + g.alnum(97)
    text = (
        f"老板刚发给我的 Stripe 生产环境密钥 {stripe} ，"
        "你帮我放到 Vercel 的环境变量里，别提交到仓库。"
    )
    out.append(_pos(text, fam, "stripe-in-chinese-chat", stripe))

    ghp = "gh" + "p_" + g.alnum(36)
    inspect = [
        {
            "Id": g.hex(64),
            "Config": {
                "Hostname": g.hex(12),
                "Env": [
                    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    "GITHUB_TOKEN=" + ghp,
                    "LANG=C.UTF-8",
                ],
                "Cmd": ["node", "dist/index.js"],
            },
        }
    ]
    text = "$ docker inspect bot\n" + json.dumps(inspect, indent=4)
    out.append(_pos(text, fam, "github-in-docker-inspect", ghp))

    gho = "gh" + "o_" + g.alnum(36)
    text = _lines("$ gh auth token", gho)
    out.append(_pos(text, fam, "github-bare-output", gho))

    tg = g.digits(10) + ":" + "AA" + g.urlsafe(33)
    text = _lines(
        "2024-06-02 10:41:07,118 INFO httpx: HTTP Request: POST "
        f'https://api.telegram.org/bot{tg}/getMe "HTTP/1.1 200 OK"',
        "2024-06-02 10:41:07,322 INFO httpx: HTTP Request: POST "
        f'https://api.telegram.org/bot{tg}/deleteWebhook "HTTP/1.1 200 OK"',
        "2024-06-02 10:41:07,323 INFO telegram.ext.Application: Application started",
    )
    out.append(_pos(text, fam, "telegram-in-url-path", tg))

    gkey = "AI" + "za" + "Sy" + g.urlsafe(33)
    text = _lines(
        "$ curl -s 'https://maps.googleapis.com/maps/api/geocode/json?"
        f"address=1600+Amphitheatre+Parkway&key={gkey}' | jq .status",
        '"OK"',
    )
    out.append(_pos(text, fam, "google-key-in-query-string", gkey))

    sg = "S" + "G." + g.urlsafe(22) + "." + g.urlsafe(43)
    text = _lines(
        "$ heroku config -a shop-prod",
        "=== shop-prod Config Vars",
        "LOG_LEVEL:        info",
        "NODE_ENV:         production",
        "SENDGRID_API_KEY: " + sg,
        "WEB_CONCURRENCY:  2",
    )
    out.append(_pos(text, fam, "sendgrid-in-heroku-config", sg))

    glpat = "gl" + "pat-" + g.urlsafe(20)
    text = _lines(
        "$ cat .git/config",
        "[core]",
        "\trepositoryformatversion = 0",
        "\tfilemode = true",
        '[remote "origin"]',
        f"\turl = https://oauth2:{glpat}@gitlab.com/acme/infra.git",
        "\tfetch = +refs/heads/*:refs/remotes/origin/*",
        '[branch "main"]',
        "\tremote = origin",
    )
    out.append(_pos(text, fam, "gitlab-in-git-config", glpat))

    hf = "h" + "f_" + g.pick(string.ascii_letters, 34)
    text = _lines(
        "$ huggingface-cli login --token " + hf,
        "Token is valid (permission: write).",
        "Your token has been saved to /home/dev/.cache/huggingface/token",
        "Login successful",
    )
    out.append(_pos(text, fam, "huggingface-in-cli-login", hf))

    xoxb = "xo" + "xb-" + g.digits(11) + "-" + g.digits(13) + "-" + g.alnum(24)
    text = _lines(
        "```python",
        "from slack_sdk import WebClient",
        "",
        f'client = WebClient(token="{xoxb}")',
        'client.chat_postMessage(channel="#deploys", text="release 1.4.2 is out")',
        "```",
        "This posts to #deploys. Move the token into an environment variable before committing.",
    )
    out.append(_pos(text, fam, "slack-in-assistant-snippet", xoxb))

    akid = "AK" + "IA" + g.pick(_B32, 16)
    text = json.dumps(
        {
            "file_path": "/workspace/app/config/aws.json",
            "content": json.dumps(
                {"region": "ap-southeast-1", "accessKeyId": akid, "bucket": "media-uploads"},
                indent=2,
            ),
        }
    )
    out.append(_pos(text, fam, "aws-in-write-tool-call", akid))

    return out


# --------------------------------------------------------------------------------------------
# private keys

_RSA1_DER = bytes.fromhex("308204a40201000282010100")
_PKCS8_DER = bytes.fromhex(
    "308204bd020100300d06092a864886f70d0101010500048204a7308204a30201000282010100"
)
_EC_DER = bytes.fromhex("30770201010420")
_EC_TAIL = bytes.fromhex("a00a06082a8648ce3d030107a144034200")
_OPENSSH = (
    b"openssh-key-v1\x00\x00\x00\x00\x04none\x00\x00\x00\x04none\x00\x00\x00\x00"
    b"\x00\x00\x00\x01\x00\x00\x003\x00\x00\x00\x0bssh-ed25519\x00\x00\x00 "
)
_OPENSSH_RSA = (
    b"openssh-key-v1\x00\x00\x00\x00\x04none\x00\x00\x00\x04none\x00\x00\x00\x00"
    b"\x00\x00\x00\x01\x00\x00\x01\x97\x00\x00\x00\x07ssh-rsa\x00\x00\x00\x03\x01\x00\x01"
)


def _armor(kind: str, body: bytes, width: int = 64, headers: tuple[str, ...] = ()) -> list[str]:
    """PEM-style lines of one block, BEGIN and END included."""
    b64 = base64.b64encode(body).decode()
    rows = [b64[i : i + width] for i in range(0, len(b64), width)]
    dash = "-" * 5
    head = [f"{dash}BEGIN {kind}{dash}", *headers]
    if headers:
        head.append("")
    return [*head, *rows, f"{dash}END {kind}{dash}"]


def _mid(block: list[str]) -> str:
    """A full base64 line from the middle of a block."""
    body = [r for r in block if r and not r.startswith("-" * 5) and ":" not in r]
    return body[len(body) // 2]


def _key_rsa(g: _G) -> list[str]:
    return _armor("RSA " + "PRIVATE KEY", _RSA1_DER + g.r.randbytes(1180))


def _key_pkcs8(g: _G) -> list[str]:
    return _armor("PRIVATE" + " KEY", _PKCS8_DER + g.r.randbytes(1180))


def _key_ec(g: _G) -> list[str]:
    body = _EC_DER + g.r.randbytes(32) + _EC_TAIL + b"\x04" + g.r.randbytes(64)
    return _armor("EC " + "PRIVATE KEY", body)


def _key_openssh(g: _G) -> list[str]:
    return _armor("OPENSSH " + "PRIVATE KEY", _OPENSSH + g.r.randbytes(360), width=70)


def _key_openssh_rsa(g: _G) -> list[str]:
    return _armor("OPENSSH " + "PRIVATE KEY", _OPENSSH_RSA + g.r.randbytes(2200), width=70)


def _private_key(g: _G) -> list[Case]:
    out: list[Case] = []
    fam = "private-key"

    block = _key_rsa(g)
    text = "$ cat deploy/id_rsa\n" + "\n".join(block)
    out.append(_pos(text, fam, "rsa-pkcs1-cat", _mid(block)))

    block = _key_openssh(g)
    text = _lines(
        "$ cat ~/.ssh/id_ed25519",
        *block,
        "$ cat ~/.ssh/id_ed25519.pub",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + g.b64(24)[:43] + " dev@laptop",
    )
    out.append(_pos(text, fam, "openssh-ed25519-cat", _mid(block)))

    block = _key_pkcs8(g)
    sa = {
        "type": "service_account",
        "project_id": "acme-analytics-" + g.digits(6),
        "private_key_id": g.hex(40),
        "private_key": "\n".join(block) + "\n",
        "client_email": "etl-runner@acme-analytics.iam.gserviceaccount.com",
        "client_id": g.digits(21),
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token",
    }
    text = "$ cat secrets/gcp-sa.json\n" + json.dumps(sa, indent=2)
    out.append(_pos(text, fam, "pkcs8-gcp-service-account-json", _mid(block)))

    block = _key_rsa(g)
    escaped = "\\n".join(block)
    text = _lines(
        "$ grep GITHUB_APP .env",
        "GITHUB_APP_ID=" + g.digits(6),
        f'GITHUB_APP_PRIVATE_KEY="{escaped}\\n"',
    )
    out.append(_pos(text, fam, "rsa-escaped-in-dotenv", _mid(block)))

    block = _key_openssh(g)
    text = _lines(
        "$ mkdir -p ~/.ssh && cat > ~/.ssh/deploy_key <<'EOF'",
        *block,
        "EOF",
        "$ chmod 600 ~/.ssh/deploy_key && ssh-add ~/.ssh/deploy_key",
        "Identity added: /home/dev/.ssh/deploy_key (deploy@ci)",
    )
    out.append(_pos(text, fam, "openssh-heredoc", _mid(block)))

    block = _key_rsa(g)
    shown = block[:9]
    text = _lines(
        "$ cat /etc/nginx/ssl/server.key",
        *shown,
        "... [output truncated: 1675 more characters]",
    )
    out.append(_pos(text, fam, "rsa-truncated-output", shown[4]))

    block = _key_ec(g)
    text = _lines(
        "$ openssl ecparam -name prime256v1 -genkey -noout -out signing.pem && cat signing.pem",
        *block,
    )
    out.append(_pos(text, fam, "ec-openssl-output", block[2]))

    block = _key_ec(g)
    text = _lines(
        "```python",
        "SIGNING_KEY = (",
        *[f'    "{row}\\n"' for row in block],
        ")",
        "```",
    )
    out.append(_pos(text, fam, "ec-python-literal", block[2]))

    block = _key_pkcs8(g)
    content = "\n".join(block) + "\n"
    text = json.dumps({"file_path": "/workspace/api/keys/jwt-signing.pem", "content": content})
    out.append(_pos(text, fam, "pkcs8-write-tool-call-json", _mid(block)))

    block = _key_openssh_rsa(g)
    text = _lines(
        "diff --git a/ansible/files/deploy_key b/ansible/files/deploy_key",
        "new file mode 100600",
        "index 0000000.." + g.hex(7),
        "--- /dev/null",
        "+++ b/ansible/files/deploy_key",
        f"@@ -0,0 +1,{len(block)} @@",
        *["+" + row for row in block],
    )
    out.append(_pos(text, fam, "openssh-rsa-git-diff", _mid(block)))

    block = _key_pkcs8(g)
    text = _lines(
        "$ kubectl get secret ingress-tls -n prod -o yaml  # (decoded with ksd)",
        "apiVersion: v1",
        "kind: Secret",
        "metadata:",
        "  name: ingress-tls",
        "  namespace: prod",
        "type: kubernetes.io/tls",
        "stringData:",
        "  tls.key: |",
        *["    " + row for row in block],
    )
    out.append(_pos(text, fam, "pkcs8-yaml-block-scalar", _mid(block)))

    block = _key_openssh(g)
    text = "这是跳板机的私钥，帮我加到 ~/.ssh/config 里对应的 Host 下面：\n\n" + "\n".join(block)
    out.append(_pos(text, fam, "openssh-chinese-chat", _mid(block)))

    block = _key_rsa(g)
    text = (
        "can you add this deploy key to the staging box? it keeps failing with "
        "'Permission denied (publickey)'\n\n" + "\n".join(block) + "\n\nthanks"
    )
    out.append(_pos(text, fam, "rsa-english-chat", _mid(block)))

    iv = g.hex(32).upper()
    block = _armor(
        "RSA " + "PRIVATE KEY",
        g.r.randbytes(1190),
        headers=("Proc-Type: 4,ENCRYPTED", "DEK-Info: AES-256-CBC," + iv),
    )
    text = "$ head -c 2000 legacy/server.key\n" + "\n".join(block)
    out.append(_pos(text, fam, "rsa-legacy-encrypted", _mid(block)))

    block = _armor("ENCRYPTED " + "PRIVATE KEY", bytes.fromhex("308205") + g.r.randbytes(1300))
    text = "$ cat certs/client.key.enc\n" + "\n".join(block)
    out.append(_pos(text, fam, "pkcs8-encrypted", _mid(block)))

    block = _armor("DSA " + "PRIVATE KEY", bytes.fromhex("308201bb020100") + g.r.randbytes(436))
    text = "$ cat old/ssh_host_dsa_key\n" + "\n".join(block)
    out.append(_pos(text, fam, "dsa", _mid(block)))

    pgp_rows = [g.b64(48) for _ in range(14)]
    pgp_rows[0] = "lQVYBG" + pgp_rows[0][6:]
    text = _lines(
        "$ gpg --armor --export-secret-keys release@acme.dev",
        "-----BEGIN PGP " + "PRIVATE KEY BLOCK-----",
        "",
        *pgp_rows,
        "=" + g.b64(3),
        "-----END PGP " + "PRIVATE KEY BLOCK-----",
    )
    out.append(_pos(text, fam, "pgp-private-key-block", pgp_rows[7]))

    ppk_priv = g.b64(36)
    text = _lines(
        "$ type C:\\Users\\dev\\keys\\jump.ppk",
        "PuTTY-User-Key-File-3: ssh-ed25519",
        "Encryption: none",
        "Comment: eddsa-key-20240301",
        "Public-Lines: 2",
        "AAAAC3NzaC1lZDI1NTE5AAAAI" + g.b64(24)[:32],
        g.b64(9),
        "Private-Lines: 1",
        ppk_priv,
        "Private-MAC: " + g.hex(64),
    )
    out.append(_pos(text, fam, "putty-ppk", ppk_priv))

    bech = "qpzry9x8gf2tvdw0s3jn54khce6mua7l".upper()
    age = "AGE-" + "SECRET-KEY-1" + g.pick(bech, 58)
    text = _lines(
        "$ cat ~/.config/sops/age/keys.txt",
        "# created: 2024-03-11T14:02:55+08:00",
        "# public key: age1" + g.pick(bech.lower(), 58),
        age,
    )
    out.append(_pos(text, fam, "age-secret-key", age))

    block = _key_rsa(g)
    text = "\r\n".join(["PS C:\\deploy> Get-Content .\\id_rsa", *block])
    out.append(_pos(text, fam, "rsa-crlf-powershell", _mid(block)))

    block = _key_ec(g)
    text = _lines(
        'resource "tls_self_signed_cert" "edge" {',
        "  private_key_pem = <<-EOT",
        *["    " + row for row in block],
        "  EOT",
        "  validity_period_hours = 8760",
        "}",
    )
    out.append(_pos(text, fam, "ec-terraform-heredoc", block[2]))

    d = g.b64url(256)
    jwk = {
        "kty": "RSA",
        "kid": "signing-" + g.lownum(8),
        "use": "sig",
        "n": g.b64url(256),
        "e": "AQAB",
        "d": d,
        "p": g.b64url(128),
        "q": g.b64url(128),
    }
    text = "$ cat keys/private.jwk.json\n" + json.dumps(jwk, indent=2)
    out.append(_pos(text, fam, "jwk-private-exponent", d))

    block = _key_openssh(g)
    body = json.dumps(
        {"command": "cat > /tmp/key <<'EOF'\n" + "\n".join(block) + "\nEOF\nchmod 600 /tmp/key"}
    )
    out.append(_pos(body, fam, "openssh-heredoc-in-tool-call", _mid(block)))

    return out


# --------------------------------------------------------------------------------------------
# connection strings


def _pw_plain(g: _G) -> str:
    return g.alnum(g.r.randint(16, 24))


def _pw_raw(g: _G) -> str:
    """Symbols that may stand unencoded in a URL's userinfo."""
    return g.password(g.r.randint(12, 18), symbols="!*-_.~$")


def _pw_enc(g: _G) -> str:
    """A password with reserved characters, percent-encoded as it appears in a URL."""
    return urllib.parse.quote(g.password(g.r.randint(12, 18), symbols="@:/#?%&"), safe="")


_WORDS = [
    "otter", "maple", "rocket", "violet", "harbor", "pepper", "glacier", "tundra",
    "walnut", "falcon", "copper", "meadow", "cobalt", "lantern", "saffron", "quartz",
]  # fmt: skip


def _pw_human(g: _G) -> str:
    w1, w2 = g.choice(_WORDS), g.choice(_WORDS)
    return w1.capitalize() + g.choice(["-", "_", "."]) + w2 + g.digits(2) + g.choice(["!", "*", ""])


def _connection(g: _G) -> list[Case]:
    out: list[Case] = []
    fam = "connection-string"

    def add(ctx: Callable[[_G, str, str], str], name: str, url: str, shape: str, pw: str) -> None:
        out.append(_pos(ctx(g, name, url), fam, shape, pw))

    pw = _pw_plain(g)
    add(
        _ctx_env_sort,
        "DATABASE_URL",
        f"postgres://app:{pw}@db.internal:5432/app",
        "postgres-url",
        pw,
    )

    pw = _pw_enc(g)
    text = _lines(
        "$ sed -n '1,12p' alembic.ini",
        "[alembic]",
        "script_location = migrations",
        "prepend_sys_path = .",
        f"sqlalchemy.url = postgresql+psycopg2://migrator:{pw}@10.0.3.17:5432/ledger",
        "",
        "[loggers]",
        "keys = root,sqlalchemy,alembic",
    )
    out.append(_pos(text, fam, "sqlalchemy-psycopg2-percent-encoded", pw))

    pw = _pw_raw(g)
    text = _lines(
        ">>> from app.config import settings",
        ">>> settings",
        "Settings(debug=False, environment='staging', "
        f"database_url='postgresql+asyncpg://api:{pw}@pg-staging.internal:5432/api', "
        "redis_url='redis://cache:6379/0', cors_origins=['https://staging.acme.dev'])",
    )
    out.append(_pos(text, fam, "asyncpg-in-settings-repr", pw))

    pw = _pw_human(g)
    add(_ctx_compose, "DATABASE_URL", f"mysql://root:{pw}@mysql:3306/shop", "mysql-url", pw)

    pw = _pw_enc(g)
    text = _lines(
        "In [2]: from sqlalchemy import create_engine, text",
        "   ...: engine = create_engine(",
        f'   ...:     "mysql+pymysql://report:{pw}@analytics-db.corp:3306/warehouse"',
        "   ...: )",
        '   ...: with engine.connect() as c: print(c.execute(text("select 1")).scalar())',
        "1",
    )
    out.append(_pos(text, fam, "mysql-pymysql-jupyter", pw))

    pw = _pw_plain(g)
    url = (
        f"mongodb+srv://admin:{pw}@cluster0.{g.lownum(5)}.mongodb.net/?retryWrites=true&w=majority"
    )
    text = f"my atlas connection keeps timing out, this is the string from the dashboard: {url}"
    out.append(_pos(text, fam, "mongodb-srv-chat", pw))

    pw = _pw_raw(g)
    url = (
        f"mongodb://orders:{pw}@mongo-0.mongo:27017,mongo-1.mongo:27017,mongo-2.mongo:27017"
        "/orders?replicaSet=rs0&authSource=admin"
    )
    add(_ctx_kubectl, "MONGO_URI", url, "mongodb-replica-set", pw)

    pw = _pw_plain(g)
    add(_ctx_dotenv_cat, "REDIS_URL", f"redis://:{pw}@redis.internal:6379/0", "redis-no-user", pw)

    pw = g.alnum(32)
    url = f"rediss://default:{pw}@{g.choice(_WORDS)}-{g.digits(5)}.upstash.io:6379"
    add(_ctx_json_tool, "UPSTASH_REDIS_URL", url, "rediss-url", pw)

    pw = _pw_human(g)
    text = _lines(
        "$ cat proj/celeryconfig.py",
        f'broker_url = "amqp://worker:{pw}@rabbitmq.internal:5672/%2F"',
        'result_backend = "rpc://"',
        'task_serializer = "json"',
        "worker_prefetch_multiplier = 1",
    )
    out.append(_pos(text, fam, "amqp-url", pw))

    pw = _pw_plain(g)
    url = f"amqps://events:{pw}@b-{g.uuid()}.mq.us-east-1.amazonaws.com:5671"
    add(_ctx_git_diff, "AMQP_URL", url, "amqps-url", pw)

    pw = _pw_raw(g)
    cs = (
        "Server=tcp:acme-sql.database.windows.net,1433;Initial Catalog=shop;"
        "Persist Security Info=False;User ID=sqladmin;"
        f"Password={pw};MultipleActiveResultSets=False;Encrypt=True;"
        "TrustServerCertificate=False;Connection Timeout=30;"
    )
    settings = {
        "Logging": {"LogLevel": {"Default": "Information"}},
        "ConnectionStrings": {"DefaultConnection": cs},
        "AllowedHosts": "*",
    }
    text = "$ cat src/Shop.Api/appsettings.Production.json\n" + json.dumps(settings, indent=2)
    out.append(_pos(text, fam, "ado-net-sql-server", pw))

    inner = g.alnum(8) + ";" + g.alnum(6) + "=" + g.alnum(4)
    pw = "{" + inner + "}"
    cs = f"Data Source=sql01;Initial Catalog=Payroll;User Id=payroll_svc;Password={pw};"
    text = _lines(
        "PS> $env:PAYROLL_DB",
        cs,
    )
    out.append(_pos(text, fam, "ado-net-braced-password", inner))

    pw = _pw_plain(g)
    text = _lines(
        "$ cat src/main/resources/application-prod.properties",
        "server.port=8080",
        "spring.datasource.url=jdbc:postgresql://pg.prod.internal:5432/inventory"
        f"?user=inventory&password={pw}&ssl=true",
        "spring.jpa.hibernate.ddl-auto=validate",
    )
    out.append(_pos(text, fam, "jdbc-postgresql-query-password", pw))

    pw = _pw_raw(g)
    url = (
        "jdbc:mysql://mysql-primary:3306/crm?user=crm_app"
        f"&password={pw}&useSSL=true&serverTimezone=UTC"
    )
    add(_ctx_ci_log, "JDBC_URL", url, "jdbc-mysql", pw)

    pw = _pw_plain(g)
    url = f"jdbc:sqlserver://mssql.corp:1433;databaseName=hr;user=sa;password={pw};encrypt=true"
    add(_ctx_yaml, "DB_URL", url, "jdbc-sqlserver", pw)

    pw = _pw_plain(g)
    text = _lines(
        f"$ sqlplus -s system/{pw}@//oradb.corp:1521/ORCLPDB1 <<< 'select sysdate from dual;'",
        "",
        "SYSDATE",
        "---------",
        "14-MAY-24",
    )
    out.append(_pos(text, fam, "oracle-easy-connect", pw))

    pw = _pw_raw(g)
    text = _lines(
        "```python",
        "import psycopg",
        "",
        "conn = psycopg.connect(",
        f'    "host=db.prod port=5432 dbname=billing user=billing password={pw} sslmode=require"',
        ")",
        "```",
    )
    out.append(_pos(text, fam, "libpq-keyword-dsn", pw))

    pw = _pw_plain(g)
    text = _lines(
        "$ grep -n DSN cmd/server/main.go",
        f'27:\tdsn := "api:{pw}@tcp(127.0.0.1:3306)/orders?parseTime=true&loc=UTC"',
        '28:\tdb, err := sql.Open("mysql", dsn)',
    )
    out.append(_pos(text, fam, "go-mysql-dsn", pw))

    key = g.b64(64)
    cs = (
        "DefaultEndpointsProtocol=https;AccountName=acmemedia"
        + g.lownum(4)
        + ";AccountKey="
        + key
        + ";EndpointSuffix=core.windows.net"
    )
    add(_ctx_env_sort, "AZURE_STORAGE_CONNECTION_STRING", cs, "azure-storage", key)

    key = g.b64(32)
    cs = (
        "Endpoint=sb://acme-events.servicebus.windows.net/;"
        "SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=" + key
    )
    add(_ctx_traceback, "SERVICEBUS_CONNECTION", cs, "azure-service-bus", key)

    key = g.b64(32)
    cs = (
        "HostName=factory-hub.azure-devices.net;SharedAccessKeyName=iothubowner;"
        f"SharedAccessKey={key}"
    )
    text = _lines(
        "$ az iot hub connection-string show -n factory-hub",
        "{",
        f'  "connectionString": "{cs}"',
        "}",
    )
    out.append(_pos(text, fam, "azure-iot-hub", key))

    pw = _pw_raw(g)
    text = _lines(
        f"$ lftp -e 'mirror -R dist/ public_html/; bye' ftp://deploy:{pw}@ftp.hostbox.net",
        "Total: 12 directories, 87 files, 0 symlinks",
        "New: 3 files, 0 symlinks",
    )
    out.append(_pos(text, fam, "ftp-url", pw))

    pw = _pw_enc(g)
    add(
        _ctx_dotenv_cat,
        "EMAIL_URL",
        f"smtp+tls://noreply%40acme.dev:{pw}@smtp.mailgun.org:587",
        "smtp-url",
        pw,
    )

    pw = _pw_plain(g)
    text = _lines(
        "$ pip config list",
        "global.extra-index-url='https://ci-reader:"
        + pw
        + "@artifactory.acme.corp/artifactory/api/pypi/pypi-local/simple'",
        "global.timeout='60'",
    )
    out.append(_pos(text, fam, "https-basic-auth-index-url", pw))

    pw = _pw_human(g)
    text = _lines(
        f"$ git clone https://jsmith:{pw}@bitbucket.org/acme/legacy-portal.git",
        "Cloning into 'legacy-portal'...",
        "remote: Enumerating objects: 2211, done.",
        "Receiving objects: 100% (2211/2211), 4.81 MiB | 9.20 MiB/s, done.",
    )
    out.append(_pos(text, fam, "git-clone-basic-auth", pw))

    pw = _pw_plain(g)
    add(
        _ctx_assistant,
        "CLICKHOUSE_URL",
        f"clickhouse://default:{pw}@ch.internal:9000/analytics",
        "clickhouse-url",
        pw,
    )

    pw = _pw_enc(g)
    url = f"snowflake://etl_user:{pw}@xy12345.eu-central-1/RAW/PUBLIC?warehouse=ETL_WH&role=LOADER"
    add(_ctx_jupyter, "SNOWFLAKE_URL", url, "snowflake-url", pw)

    pw = _pw_plain(g)
    add(_ctx_chat_zh, "NEO4J_URI", f"bolt://neo4j:{pw}@graph.internal:7687", "bolt-url", pw)

    pw = _pw_raw(g)
    text = _lines(
        f"$ curl -s https://elastic:{pw}@es01.internal:9200/_cluster/health | jq .status",
        '"yellow"',
    )
    out.append(_pos(text, fam, "elasticsearch-basic-auth-url", pw))

    pw = _pw_plain(g)
    text = _lines(
        f"$ curl -s http://admin:{pw}@127.0.0.1:5984/_all_dbs",
        '["_replicator","_users","inventory","sessions"]',
    )
    out.append(_pos(text, fam, "couchdb-url", pw))

    pw = g.urlsafe(22)
    url = (
        f"postgresql://maria:{pw}@free-tier14.aws-us-east-1.cockroachlabs.cloud:26257"
        "/defaultdb?sslmode=verify-full"
    )
    add(_ctx_chat_en, "COCKROACH_URL", url, "cockroachdb-url", pw)

    pw = _pw_raw(g)
    text = _lines(
        "$ cat .env",
        "# Connect to Supabase via connection pooling",
        f'DATABASE_URL="postgresql://postgres.{g.lownum(20)}:{pw}'
        '@aws-0-us-east-1.pooler.supabase.com:6543/postgres?pgbouncer=true"',
        "# Direct connection to the database. Used for migrations",
        f'DIRECT_URL="postgresql://postgres.{g.lownum(20)}:{pw}'
        '@aws-0-us-east-1.pooler.supabase.com:5432/postgres"',
    )
    out.append(_pos(text, fam, "supabase-pooler-url", pw))

    pw = _pw_human(g)
    text = (
        f"数据库连接串是 mysql://dev:{pw}@192.168.1.20:3306/erp ，"
        "本地可以连，但是容器里一直报 Access denied，帮我看看是哪里配错了"
    )
    out.append(_pos(text, fam, "mysql-chinese-chat", pw))

    pw = _pw_plain(g)
    cmd = (
        "docker run -d --name api -p 8000:8000 "
        f"-e DATABASE_URL=postgres://api:{pw}@host.docker.internal:5432/api "
        "ghcr.io/acme/api:latest"
    )
    text = json.dumps({"command": cmd, "description": "Start the API container"})
    out.append(_pos(text, fam, "postgres-in-docker-run-tool-call", pw))

    pw = _pw_plain(g)
    add(_ctx_yaml, "NATS_URL", f"nats://orders:{pw}@nats.messaging.svc:4222", "nats-url", pw)

    pw = _pw_enc(g)
    url = f"mssql+pyodbc://sa:{pw}@sqlsrv:1433/reports?driver=ODBC+Driver+18+for+SQL+Server"
    add(_ctx_git_diff, "REPORTS_DB_URL", url, "mssql-pyodbc-url", pw)

    pw = _pw_raw(g)
    text = _lines(
        "[ODBC Data Sources]",
        "warehouse = ODBC Driver 18 for SQL Server",
        "",
        "$ python -c 'import pyodbc; print(pyodbc.connect(CONN).getinfo(2))'",
        "CONN = 'Driver={ODBC Driver 18 for SQL Server};Server=tcp:wh.corp,1433;"
        f"Database=wh;Uid=reporter;Pwd={pw};Encrypt=yes;'",
        "wh",
    )
    out.append(_pos(text, fam, "odbc-connection-string", pw))

    pw = _pw_plain(g)
    text = _lines(
        "spring:",
        "  data:",
        "    mongodb:",
        f"      uri: mongodb://catalog:{pw}@mongo.prod:27017/catalog?authSource=admin",
        "  jackson:",
        "    default-property-inclusion: non_null",
    )
    out.append(_pos(text, fam, "mongodb-spring-yaml", pw))

    pw = _pw_human(g)
    text = _lines(
        "$ redis-cli -u redis://default:" + pw + "@cache.prod:6379 ping",
        "PONG",
    )
    out.append(_pos(text, fam, "redis-cli-url", pw))

    return out


# --------------------------------------------------------------------------------------------
# JWTs


def _jwt(g: _G, alg: str, claims: dict[str, object], kid: bool = False) -> str:
    header: dict[str, object] = {"alg": alg, "typ": "JWT"}
    if kid:
        header["kid"] = g.urlsafe(43)
    sig_bytes = {"HS256": 32, "HS512": 64, "RS256": 256, "ES256": 64, "EdDSA": 64}[alg]
    return ".".join([g.b64url_json(header), g.b64url_json(claims), g.b64url(sig_bytes)])


def _claims(g: _G, **extra: object) -> dict[str, object]:
    iat = 1_714_000_000 + g.r.randrange(10_000_000)
    base: dict[str, object] = {"sub": g.uuid(), "iat": iat, "exp": iat + 3600}
    base.update(extra)
    return base


def _jwts(g: _G) -> list[Case]:
    out: list[Case] = []
    fam = "jwt"

    tok = _jwt(g, "RS256", _claims(g, iss="https://auth.acme.dev/", aud="api"), kid=True)
    text = _lines(
        '$ curl -v https://api.acme.dev/v2/me -H "Authorization: Bearer $TOKEN"',
        "*   Trying 104.18.22.31:443...",
        "* Connected to api.acme.dev (104.18.22.31) port 443",
        "> GET /v2/me HTTP/2",
        "> Host: api.acme.dev",
        "> user-agent: curl/8.5.0",
        "> accept: */*",
        f"> authorization: Bearer {tok}",
        ">",
        "< HTTP/2 401",
        '< www-authenticate: Bearer error="invalid_token", error_description="audience mismatch"',
    )
    out.append(_pos(text, fam, "bearer-in-curl-verbose", tok))

    tok = _jwt(g, "HS256", _claims(g, role="user", sid=g.hex(16)))
    text = _lines(
        "HTTP/1.1 200 OK",
        "Content-Type: application/json; charset=utf-8",
        f"Set-Cookie: session={tok}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=3600",
        "X-Request-Id: " + g.uuid(),
    )
    out.append(_pos(text, fam, "set-cookie", tok))

    tok = _jwt(g, "RS256", _claims(g, scope="openid profile email", azp=g.alnum(32)), kid=True)
    resp = {
        "access_token": tok,
        "token_type": "Bearer",
        "expires_in": 3600,
        "scope": "openid profile email",
    }
    text = "$ http --form POST :8080/oauth/token grant_type=client_credentials\n" + json.dumps(
        resp, indent=2
    )
    out.append(_pos(text, fam, "oauth-token-response", tok))

    tok = _jwt(
        g,
        "HS256",
        {
            "iss": "supabase",
            "ref": g.lownum(20),
            "role": "service_role",
            "iat": 1_700_000_000,
            "exp": 2_015_000_000,
        },
    )
    out.append(_pos(_ctx_env_sort(g, "SUPABASE_SERVICE_ROLE_KEY", tok), fam, "supabase-env", tok))

    tok = _jwt(
        g,
        "RS256",
        _claims(
            g,
            aud=["https://kubernetes.default.svc.cluster.local"],
            iss="https://kubernetes.default.svc.cluster.local",
        ),
        kid=True,
    )
    text = _lines("$ kubectl -n ci create token deployer --duration=24h", tok)
    out.append(_pos(text, fam, "k8s-service-account-token", tok))

    tok = _jwt(g, "RS256", _claims(g, nonce=g.alnum(16), email="li.wei@acme.dev"), kid=True)
    text = _lines(
        "the redirect lands here and then the page is blank:",
        f"https://app.acme.dev/auth/callback#id_token={tok}&state={g.alnum(24)}"
        "&session_state=" + g.uuid(),
    )
    out.append(_pos(text, fam, "id-token-in-url-fragment", tok))

    tok = _jwt(g, "HS512", _claims(g, user_id=g.digits(6), tenant="acme"))
    storage = {"theme": "dark", "auth.accessToken": tok, "lastVisited": "/dashboard"}
    text = "> JSON.stringify(localStorage)\n'" + json.dumps(storage) + "'"
    out.append(_pos(text, fam, "local-storage-dump", tok))

    tok = _jwt(g, "HS256", _claims(g, role="admin"))
    text = _lines(
        "In [7]: import requests",
        f'   ...: H = {{"Authorization": "Bearer {tok}"}}',
        '   ...: requests.get("http://localhost:8000/admin/users", headers=H).status_code',
        "Out[7]: 200",
    )
    out.append(_pos(text, fam, "bearer-in-jupyter", tok))

    tok = _jwt(g, "HS256", _claims(g, uid=g.digits(8)))
    text = f"这个 token 解出来 exp 是多少？为什么后端一直说过期了：{tok}"
    out.append(_pos(text, fam, "chinese-chat", tok))

    tok = _jwt(
        g, "RS256", _claims(g, iss="https://login.microsoftonline.com/" + g.uuid() + "/v2.0")
    )
    text = f"why is this JWT rejected by the gateway? it decodes fine on jwt.io\n\n{tok}"
    out.append(_pos(text, fam, "english-chat", tok))

    tok = _jwt(g, "ES256", _claims(g, aud="web"), kid=True)
    har = {
        "request": {
            "method": "GET",
            "url": "https://api.acme.dev/v1/orders?limit=20",
            "headers": [
                {"name": "accept", "value": "application/json"},
                {"name": "authorization", "value": "Bearer " + tok},
            ],
        },
        "response": {"status": 403, "statusText": "Forbidden"},
    }
    text = "$ jq '.log.entries[12]' session.har\n" + json.dumps(har, indent=2)
    out.append(_pos(text, fam, "har-entry", tok))

    tok = _jwt(g, "HS256", _claims(g, user=g.digits(5)))
    text = _lines(
        "2024-06-11T08:14:22.901Z WARN  auth.middleware  token expired "
        f'token={tok} path=/api/cart user_agent="Mozilla/5.0"',
        "2024-06-11T08:14:22.903Z INFO  http  GET /api/cart 401 2ms",
    )
    out.append(_pos(text, fam, "app-log-line", tok))

    tok = _jwt(
        g,
        "RS256",
        _claims(g, iss="https://oidc.eks.us-east-1.amazonaws.com/id/" + g.hex(32).upper()),
        kid=True,
    )
    text = _lines(
        "$ cat ~/.kube/config",
        "apiVersion: v1",
        "clusters:",
        "- cluster:",
        "    server: https://10.0.0.12:6443",
        "  name: prod",
        "users:",
        "- name: ci-bot",
        "  user:",
        "    token: " + tok,
    )
    out.append(_pos(text, fam, "kubeconfig-token", tok))

    tok = _jwt(g, "RS256", _claims(g, firebase={"sign_in_provider": "password"}), kid=True)
    cmd = (
        "curl -s -X POST http://localhost:5001/acme/us-central1/api/checkout "
        f'-H "Authorization: Bearer {tok}" -H "Content-Type: application/json" '
        '-d \'{"cartId": "c_1842"}\''
    )
    text = json.dumps({"command": cmd})
    out.append(_pos(text, fam, "bearer-in-tool-call", tok))

    tok = _jwt(
        g,
        "ES256",
        {"iss": g.uuid(), "iat": 1_716_000_000, "exp": 1_716_001_200, "aud": "appstoreconnect-v1"},
        kid=True,
    )
    text = _lines(
        "$ python scripts/asc_token.py",
        "Generated App Store Connect token (valid 20 min):",
        tok,
    )
    out.append(_pos(text, fam, "app-store-connect", tok))

    tok = _jwt(g, "EdDSA", _claims(g, scope="read:metrics"))
    env = {
        "id": g.uuid(),
        "name": "staging",
        "values": [
            {"key": "baseUrl", "value": "https://staging.acme.dev", "enabled": True},
            {"key": "authToken", "value": tok, "enabled": True},
        ],
    }
    text = _lines(
        "diff --git a/postman/staging.postman_environment.json "
        "b/postman/staging.postman_environment.json",
        "new file mode 100644",
        "--- /dev/null",
        "+++ b/postman/staging.postman_environment.json",
        *["+" + row for row in json.dumps(env, indent=2).splitlines()],
    )
    out.append(_pos(text, fam, "postman-environment-diff", tok))

    tok = _jwt(g, "HS256", _claims(g, role="anon"))
    text = _lines(
        "GraphQL playground → HTTP HEADERS",
        "{",
        f'  "Authorization": "Bearer {tok}"',
        "}",
    )
    out.append(_pos(text, fam, "graphql-headers", tok))

    return out


# --------------------------------------------------------------------------------------------
# labelled values: a secret that only its label marks


def _labelled(g: _G) -> list[Case]:
    out: list[Case] = []
    fam = "labelled"

    def add(text: str, shape: str, secret: str) -> None:
        out.append(_pos(text, fam, shape, secret))

    pw = _pw_raw(g)
    add(_ctx_dotenv_cat(g, "DB_PASSWORD", pw), "dotenv-password", pw)

    pw = "Blue " + g.choice(_WORDS) + " " + g.digits(3) + " walrus " + g.choice(_WORDS) + "!"
    text = _lines(
        "$ cat config/database.yml",
        "production:",
        "  adapter: postgresql",
        "  host: pg.prod.internal",
        "  username: shop",
        f'  password: "{pw}"',
        "  pool: 10",
    )
    add(text, "yaml-password-with-spaces", pw)

    sec = g.urlsafe(64)
    cfg = {
        "domain": "acme.eu.auth0.com",
        "clientId": g.alnum(32),
        "clientSecret": sec,
        "audience": "https://api.acme.dev",
    }
    add("$ cat auth_config.json\n" + json.dumps(cfg, indent=2), "json-client-secret", sec)

    key = g.hex(32)
    text = _lines(
        "$ cat ~/.config/weatherctl/config.toml",
        "[default]",
        'units = "metric"',
        "",
        "[provider.openweather]",
        f'api_key = "{key}"',
        "timeout_s = 5",
    )
    add(text, "toml-api-key", key)

    pw = _pw_plain(g)
    text = _lines(
        "$ cat /etc/myapp/app.ini",
        "[server]",
        "listen = 0.0.0.0:9000",
        "",
        "[database]",
        "host = localhost",
        "user = myapp",
        f"password = {pw}",
    )
    add(text, "ini-password", pw)

    dj = g.pick(_LOWNUM + "!@#%^&*(-_=+)", 50)
    text = _lines(
        "$ grep -n -A2 SECRET_KEY mysite/settings/production.py",
        "23:# SECURITY WARNING: keep the secret key used in production secret!",
        f"24:SECRET_KEY = '{dj}'",
        "25:",
    )
    add(text, "django-secret-key", dj)

    key = g.hex(40)
    text = _lines(
        "```js",
        "// src/lib/search.js",
        "import algoliasearch from 'algoliasearch';",
        "",
        f"const adminKey = '{key}';",
        "export const client = algoliasearch('" + g.upnum(10) + "', adminKey);",
        "```",
    )
    add(text, "js-const", key)

    pw = _pw_plain(g)
    text = _lines(
        "$ sed -n '14,22p' internal/cache/redis.go",
        "func New() *redis.Client {",
        "\treturn redis.NewClient(&redis.Options{",
        '\t\tAddr:     "redis-master.cache.svc:6379",',
        f'\t\tPassword: "{pw}",',
        "\t\tDB:       2,",
        "\t})",
        "}",
    )
    add(text, "go-struct-field", pw)

    pw = _pw_raw(g)
    text = _lines(
        "spring.datasource.url=jdbc:postgresql://db:5432/orders",
        "spring.datasource.username=orders",
        f"spring.datasource.password={pw}",
        "spring.jpa.open-in-view=false",
    )
    add(text, "java-properties", pw)

    pw = g.password(20, symbols="!#%*-_.")
    text = _lines(
        "$ cat ~/.m2/settings.xml",
        "<settings>",
        "  <servers>",
        "    <server>",
        "      <id>nexus-releases</id>",
        "      <username>deployment</username>",
        f"      <password>{pw}</password>",
        "    </server>",
        "  </servers>",
        "</settings>",
    )
    add(text, "maven-settings-xml", pw)

    sec = g.b64(24)
    text = _lines(
        "  <appSettings>",
        '    <add key="webpages:Version" value="3.0.0.0" />',
        f'    <add key="PaymentGatewaySecret" value="{sec}" />',
        '    <add key="EnableTelemetry" value="false" />',
        "  </appSettings>",
    )
    add(text, "web-config-appsetting", sec)

    skb = g.hex(128)
    text = _lines(
        "$ EDITOR=cat bin/rails credentials:show",
        f"secret_key_base: {skb}",
        "",
        "smtp:",
        "  user_name: apikey",
    )
    add(text, "rails-credentials", skb)

    salts = g.pick("".join(chr(c) for c in range(33, 127) if chr(c) not in "'\\"), 64)
    text = _lines(
        '$ grep -E "DB_|AUTH_KEY" wp-config.php',
        "define( 'DB_NAME', 'wordpress' );",
        "define( 'DB_USER', 'wp' );",
        f"define( 'AUTH_KEY',         '{salts}' );",
    )
    add(text, "wordpress-salt", salts)

    pw = _pw_raw(g)
    text = _lines(
        "$ grep DB_PASSWORD wp-config.php",
        f"define( 'DB_PASSWORD', '{pw}' );",
    )
    add(text, "php-define", pw)

    key = g.b64(32)
    text = _lines(
        "$ cat .env | head -5",
        "APP_NAME=Laravel",
        "APP_ENV=production",
        f"APP_KEY=base64:{key}",
        "APP_DEBUG=false",
    )
    add(text, "laravel-app-key", key)

    pw = _pw_raw(g)
    text = _lines(
        f"$ mysql -h 127.0.0.1 -u root -p'{pw}' -e 'show databases;'",
        "mysql: [Warning] Using a password on the command line interface can be insecure.",
        "+--------------------+",
        "| Database           |",
        "+--------------------+",
        "| information_schema |",
        "| shop               |",
        "+--------------------+",
    )
    add(text, "mysql-cli-p-flag", pw)

    pw = _pw_plain(g)
    text = _lines(
        f"$ curl -s -u admin:{pw} 'https://jenkins.corp/api/json?tree=jobs[name]'"
        " | jq -r '.jobs[].name'",
        "build-api",
        "build-web",
        "nightly-e2e",
    )
    add(text, "curl-basic-auth-flag", pw)

    pw = _pw_human(g)
    text = json.dumps(
        {"command": f"sshpass -p '{pw}' ssh -o StrictHostKeyChecking=no deploy@10.0.4.21 uptime"}
    )
    add(text, "sshpass-tool-call", pw)

    pw = g.alnum(24)
    text = _lines(
        f"$ docker login -u acme-ci -p {pw} registry.acme.corp",
        "WARNING! Using --password via the CLI is insecure. Use --password-stdin.",
        "Login Succeeded",
    )
    add(text, "docker-login-p-flag", pw)

    pw = _pw_raw(g)
    text = _lines(
        "apiVersion: v1",
        "kind: Secret",
        "metadata:",
        "  name: grafana-admin",
        "type: Opaque",
        "stringData:",
        "  admin-user: admin",
        f"  admin-password: {pw}",
    )
    add(text, "k8s-secret-stringdata", pw)

    raw = _pw_plain(g)
    enc = base64.b64encode(raw.encode()).decode()
    text = _lines(
        "$ kubectl get secret pg-credentials -o yaml",
        "apiVersion: v1",
        "data:",
        "  password: " + enc,
        "  username: " + base64.b64encode(b"app").decode(),
        "kind: Secret",
        "metadata:",
        "  name: pg-credentials",
        "  namespace: default",
        "type: Opaque",
    )
    add(text, "k8s-secret-data-base64", enc)

    pw = _pw_raw(g)
    text = _lines(
        "$ cat envs/prod/terraform.tfvars",
        'region      = "eu-central-1"',
        'db_username = "admin"',
        f'db_password = "{pw}"',
        'db_instance = "db.t4g.medium"',
    )
    add(text, "terraform-tfvars", pw)

    pw = _pw_human(g)
    text = _lines(
        "$ cat inventory/group_vars/web.yml",
        "ansible_user: deploy",
        f"ansible_become_password: {pw}",
        "nginx_worker_processes: auto",
    )
    add(text, "ansible-vars", pw)

    auth = base64.b64encode(("ci:" + _pw_plain(g)).encode()).decode()
    text = _lines(
        "$ cat .npmrc",
        "registry=https://nexus.acme.corp/repository/npm-group/",
        f"_auth={auth}",
        "always-auth=true",
    )
    add(text, "npmrc-auth-base64", auth)

    tok = g.uuid()
    text = _lines(
        "$ cat ~/.netrc",
        "machine api.heroku.com",
        "  login dev@acme.dev",
        f"  password {tok}",
        "machine git.heroku.com",
        "  login dev@acme.dev",
        f"  password {tok}",
    )
    add(text, "netrc-uuid-token", tok)

    pw = "Зимний-" + g.choice(["Пароль", "Ключ", "Сад"]) + "-" + g.digits(4)
    text = _lines(
        "$ cat config/local.yml",
        "mail:",
        "  host: smtp.yandex.ru",
        "  user: robot@acme.ru",
        f"  password: {pw}",
    )
    add(text, "yaml-unicode-password", pw)

    pw = _pw_raw(g)
    add(
        f"数据库密码：{pw}\n用户名：root\n地址：10.1.2.30:3306\n帮我写个脚本每天备份一下。",
        "chinese-label-password",
        pw,
    )

    key = g.hex(32)
    text = _lines(
        "# 第三方短信平台配置",
        "sms:",
        "  签名: 阿克米科技",
        f"  API密钥: {key}",
        "  模板编号: SMS_" + g.digits(9),
    )
    add(text, "chinese-yaml-key", key)

    tok = g.alnum(40)
    add(f"访问令牌是 {tok} ，有效期 90 天，先用这个调一下内部接口。", "chinese-access-token", tok)

    pw = _pw_human(g)
    add(
        f"服务器 root 口令：{pw}，登录以后看一下 /var/log/nginx/error.log 最后一百行",
        "chinese-koulling",
        pw,
    )

    pw = _pw_raw(g)
    text = (
        f"the admin password for the staging dashboard is {pw} -- log in and check whether "
        "the nightly cron actually ran"
    )
    add(text, "english-chat-password", pw)

    sk = g.alnum(50)
    add(_ctx_traceback(g, "SECRET_KEY", sk), "settings-dict-in-traceback", sk)

    key = g.alnum(32)
    text = _lines(
        "In [4]: from mistralai import Mistral",
        f'   ...: client = Mistral(api_key="{key}")',
        "   ...: client.models.list().data[0].id",
        "Out[4]: 'ministral-3b-2410'",
    )
    add(text, "python-kwarg-api-key", key)

    key = g.hex(32)
    add(_ctx_env_sort(g, "AZURE_OPENAI_API_KEY", key), "env-azure-openai-key", key)

    key = g.hex(32)
    text = _lines(
        "$ cat values-prod.yaml",
        "datadog:",
        f"  apiKey: {key}",
        "  appKey: " + g.hex(40),
        "  site: datadoghq.eu",
        "  logs:",
        "    enabled: true",
    )
    add(text, "helm-values-api-key", key)

    tok = g.urlsafe(40)
    add(_ctx_ci_log(g, "CLOUDFLARE_API_TOKEN", tok), "ci-log-api-token", tok)

    pw = _pw_plain(g)
    text = _lines(
        "$ cat client.properties",
        "bootstrap.servers=pkc-" + g.lownum(5) + ".us-east-1.aws.confluent.cloud:9092",
        "security.protocol=SASL_SSL",
        "sasl.mechanism=PLAIN",
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="{g.upnum(16)}" password="{pw}";',
    )
    add(text, "kafka-jaas-config", pw)

    pw = g.alnum(32)
    text = _lines(
        "$ grep -v '^#' /etc/redis/redis.conf | grep -v '^$' | head",
        "bind 127.0.0.1 -::1",
        "protected-mode yes",
        "port 6379",
        f"requirepass {pw}",
        "maxmemory 2gb",
    )
    add(text, "redis-requirepass", pw)

    pw = _pw_raw(g).replace(":", "")
    text = _lines("$ cat ~/.pgpass", f"db.prod.internal:5432:billing:billing_ro:{pw}")
    add(text, "pgpass-line", pw)

    wg = g.b64(32)
    text = _lines(
        "$ sudo cat /etc/wireguard/wg0.conf",
        "[Interface]",
        "Address = 10.8.0.2/24",
        f"PrivateKey = {wg}",
        "DNS = 1.1.1.1",
        "",
        "[Peer]",
        "PublicKey = " + g.b64(32),
        "Endpoint = vpn.acme.dev:51820",
        "AllowedIPs = 0.0.0.0/0",
    )
    add(text, "wireguard-private-key", wg)

    psk = g.choice(_WORDS) + " " + g.choice(_WORDS) + " " + g.digits(4)
    text = _lines(
        "$ nmcli --show-secrets connection show Office-5G | grep -i psk",
        "802-11-wireless-security.psk:            " + psk,
        "802-11-wireless-security.psk-flags:      0 (none)",
    )
    add(text, "nmcli-wifi-psk", psk)

    basic = base64.b64encode(("svc-metrics:" + _pw_plain(g)).encode()).decode()
    text = _lines(
        "GET /api/v1/query?query=up HTTP/1.1",
        "Host: prometheus.corp",
        f"Authorization: Basic {basic}",
        "Accept: application/json",
    )
    add(text, "http-basic-auth-header", basic)

    key = g.alnum(40)
    text = _lines(
        "$ http GET https://api.vendor-x.io/v3/reports x-api-key:" + key,
        "HTTP/1.1 200 OK",
        "Content-Type: application/json",
        "",
        '{"reports": [], "next": null}',
    )
    add(text, "x-api-key-header", key)

    pw = g.alnum(18)
    call = {
        "id": "call_" + g.alnum(24),
        "type": "function",
        "function": {
            "name": "connect_database",
            "arguments": json.dumps(
                {"host": "10.0.2.15", "port": 5432, "user": "analyst", "password": pw}
            ),
        },
    }
    add(json.dumps({"tool_calls": [call]}), "function-call-arguments", pw)

    sak = g.pick(_ALNUM + "/+", 40)
    text = _lines(
        "```python",
        "s3 = boto3.client(",
        '    "s3",',
        '    aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],',
        f'    aws_secret_access_key="{sak}",',
        '    region_name="us-west-2",',
        ")",
        "```",
    )
    add(text, "aws-secret-access-key-kwarg", sak)

    sak = g.pick(_ALNUM + "/+", 40)
    text = _lines(
        "$ aws configure --profile backup",
        "AWS Access Key ID [None]: AK" + "IA" + g.pick(_B32, 16),
        f"AWS Secret Access Key [None]: {sak}",
        "Default region name [None]: eu-west-1",
        "Default output format [None]: json",
    )
    add(text, "aws-configure-transcript", sak)

    old, new = _pw_plain(g), _pw_plain(g)
    text = _lines(
        "diff --git a/deploy/values.yaml b/deploy/values.yaml",
        "--- a/deploy/values.yaml",
        "+++ b/deploy/values.yaml",
        "@@ -40,7 +40,7 @@ rabbitmq:",
        "   auth:",
        "     username: app",
        f"-    password: {old}",
        f"+    password: {new}",
        "     erlangCookie: " + g.upnum(32),
    )
    add(text, "yaml-password-diff", new)

    pw = _pw_raw(g)
    text = _lines(
        "$ dotnet user-secrets list",
        "Smtp:Host = smtp.office365.com",
        f"Smtp:Password = {pw}",
        "Smtp:User = noreply@acme.dev",
    )
    add(text, "dotnet-user-secrets", pw)

    tok = g.alnum(48)
    text = _lines(
        "```rust",
        "// src/config.rs",
        f'const WEBHOOK_SIGNING_SECRET: &str = "{tok}";',
        "const MAX_BODY: usize = 1 << 20;",
        "```",
    )
    add(text, "rust-const", tok)

    key = g.hex(32)
    text = _lines(
        "    defaultConfig {",
        '        applicationId "dev.acme.courier"',
        "        minSdk 24",
        f'        buildConfigField "String", "MAPS_SECRET", "\\"{key}\\""',
        "    }",
    )
    add(text, "gradle-build-config-field", key)

    pw = _pw_plain(g)
    text = _lines(
        "$ docker history --no-trunc acme/admin:latest | head -4",
        "IMAGE          CREATED       CREATED BY                                          SIZE",
        f"sha256:{g.hex(64)}   2 days ago   ENV ADMIN_PASSWORD={pw}   0B",
        f"sha256:{g.hex(64)}   2 days ago   COPY dist/ /app/ # buildkit   12.4MB",
    )
    add(text, "dockerfile-env-in-history", pw)

    pw = _pw_plain(g)
    text = _lines(
        "$ helm upgrade --install pg bitnami/postgresql -n data "
        f"--set auth.postgresPassword={pw} --set primary.persistence.size=50Gi",
        'Release "pg" has been upgraded. Happy Helming!',
        "NAME: pg",
        "STATUS: deployed",
        "REVISION: 4",
    )
    add(text, "helm-set-flag", pw)

    sec = g.alnum(32)
    text = _lines(
        "$ systemctl cat invoicer.service",
        "# /etc/systemd/system/invoicer.service",
        "[Service]",
        "User=invoicer",
        f'Environment="INVOICER_API_SECRET={sec}"',
        "ExecStart=/opt/invoicer/bin/invoicer serve",
    )
    add(text, "systemd-environment", sec)

    pw = _pw_raw(g)
    out_json = {
        "db_endpoint": {"sensitive": False, "type": "string", "value": "db.internal:5432"},
        "db_password": {"sensitive": True, "type": "string", "value": pw},
    }
    add("$ terraform output -json\n" + json.dumps(out_json, indent=2), "terraform-output-json", pw)

    pw = "My dog ate " + g.digits(2) + " tacos & " + g.choice(_WORDS) + "!"
    text = _lines(
        "$ cat .env.local",
        "NEXT_PUBLIC_SITE_URL=http://localhost:3000",
        f'SMTP_PASSWORD="{pw}"',
    )
    add(text, "dotenv-quoted-spaces", pw)

    pw = _pw_raw(g)
    text = (
        "PS> $cred = New-Object System.Management.Automation.PSCredential('corp\\svc-backup', "
        f"(ConvertTo-SecureString '{pw}' -AsPlainText -Force))"
    )
    add(text, "powershell-securestring", pw)

    tok = g.alnum(36)
    add(
        f'C:\\> setx SONAR_LOGIN "{tok}"\n\nSUCCESS: Specified value was saved.',
        "windows-setx",
        tok,
    )

    return out


# --------------------------------------------------------------------------------------------
# negatives: placeholders, masked values, references, fake fixtures


def _placeholder(g: _G) -> list[Case]:
    out: list[Case] = []
    fam = "placeholder"

    def add(text: str, shape: str) -> None:
        out.append(_neg(text, fam, shape))

    add(
        _lines(
            "$ cat .env.example",
            "# Copy to .env and fill in",
            "OPENAI_API_KEY=sk-...",
            "ANTHROPIC_API_KEY=",
            "DATABASE_URL=",
            "SECRET_KEY=change-me-to-a-long-random-string",
        ),
        "env-example",
    )
    add(
        _lines(
            "## Quick start",
            "",
            "```bash",
            'export ANTHROPIC_API_KEY="<your-api-key>"',
            "pip install -e .",
            "python -m demo",
            "```",
        ),
        "readme-angle-placeholder",
    )
    add(
        _lines(
            "$ aws configure list",
            "      Name                    Value             Type    Location",
            "      ----                    -----             ----    --------",
            "   profile                <not set>             None    None",
            "access_key     ****************" + g.upnum(4) + " shared-credentials-file",
            "secret_key     ****************" + g.alnum(4) + " shared-credentials-file",
            "    region                us-east-1      config-file    ~/.aws/config",
        ),
        "aws-configure-list-masked",
    )
    add(
        _lines(
            "$ npm config list",
            '; "user" config from /home/dev/.npmrc',
            "",
            "//registry.npmjs.org/:_authToken = (protected)",
            'registry = "https://registry.npmjs.org/"',
            "",
            "; node bin location = /usr/local/bin/node",
            "; node version = v20.12.2",
        ),
        "npm-config-list-protected",
    )
    add(
        _lines(
            "$ gh auth status",
            "github.com",
            "  ✓ Logged in to github.com account dev-acme (keyring)",
            "  - Active account: true",
            "  - Git operations protocol: https",
            "  - Token: gh" + "o_" + "*" * 36,
            "  - Token scopes: 'gist', 'read:org', 'repo', 'workflow'",
        ),
        "gh-auth-status-masked",
    )
    add(
        _lines(
            "2024-05-14T09:12:03.114Z ##[group]Run npm publish --access public",
            "2024-05-14T09:12:03.114Z npm publish --access public",
            "2024-05-14T09:12:03.115Z shell: /usr/bin/bash -e {0}",
            "2024-05-14T09:12:03.115Z env:",
            "2024-05-14T09:12:03.115Z   NODE_AUTH_TOKEN: ***",
            "2024-05-14T09:12:03.115Z   NPM_CONFIG_USERCONFIG: /home/runner/work/_temp/.npmrc",
            "2024-05-14T09:12:03.116Z ##[endgroup]",
        ),
        "ci-log-masked",
    )
    add(
        _lines(
            "openai.AuthenticationError: Error code: 401 - {'error': {'message': "
            "'Incorrect API key provided: sk-proj-" + "*" * 40 + g.alnum(4) + ". You can find "
            "your API key at https://platform.openai.com/account/api-keys.', "
            "'type': 'invalid_request_error', 'param': None, 'code': 'invalid_api_key'}}",
        ),
        "masked-key-in-error",
    )
    add(
        "the dashboard shows the live key as sk" + "_live_..." + g.alnum(4) + " -- is that the "
        "one the webhook handler should use, or the restricted one?",
        "masked-key-ellipsis",
    )
    add(
        _lines(
            "  # aws_db_instance.main will be updated in-place",
            '  ~ resource "aws_db_instance" "main" {',
            '        id       = "prod-main"',
            "      ~ password = (sensitive value)",
            "        # (41 unchanged attributes hidden)",
            "    }",
        ),
        "terraform-sensitive-value",
    )
    add(
        _lines(
            "$ cat docker-compose.yml",
            "services:",
            "  db:",
            "    image: postgres:16",
            "    environment:",
            "      POSTGRES_USER: app",
            "      POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:?set it in .env}",
            "      POSTGRES_DB: app",
        ),
        "compose-variable-reference",
    )
    add(
        _lines(
            "      - name: Publish",
            "        run: npm publish",
            "        env:",
            "          NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}",
            "          SENTRY_AUTH_TOKEN: ${{ secrets.SENTRY_AUTH_TOKEN }}",
        ),
        "github-actions-secrets-expression",
    )
    add(
        _lines(
            "        env:",
            "          - name: DB_PASSWORD",
            "            valueFrom:",
            "              secretKeyRef:",
            "                name: pg-credentials",
            "                key: password",
            "          - name: STRIPE_SECRET_KEY",
            "            valueFrom:",
            "              secretKeyRef: {name: stripe, key: secret-key}",
        ),
        "k8s-secret-key-ref",
    )
    add(
        _lines(
            "DB_PASSWORD=vault:secret/data/prod/billing#password",
            "STRIPE_KEY=vault:secret/data/prod/stripe#secret_key",
        ),
        "vault-path-reference",
    )
    add(
        _lines(
            '{{ with secret "secret/data/prod/db" }}',
            'export DATABASE_PASSWORD="{{ .Data.data.password }}"',
            "{{ end }}",
        ),
        "vault-agent-template",
    )
    add(
        _lines(
            "$ cat .env.tpl",
            "OPENAI_API_KEY=op://Engineering/OpenAI/credential",
            "GITHUB_TOKEN=op://Private/GitHub PAT/token",
            "$ op run --env-file=.env.tpl -- npm test",
        ),
        "1password-reference",
    )
    add(
        json.dumps(
            {
                "name": "api",
                "secrets": [
                    {
                        "name": "DB_PASSWORD",
                        "valueFrom": "arn:aws:secretsmanager:us-east-1:"
                        + g.digits(12)
                        + ":secret:prod/db-"
                        + g.alnum(6),
                    },
                    {
                        "name": "API_TOKEN",
                        "valueFrom": "arn:aws:ssm:us-east-1:"
                        + g.digits(12)
                        + ":parameter/prod/token",
                    },
                ],
            },
            indent=2,
        ),
        "ecs-secret-arn-reference",
    )
    add(
        _lines(
            "  password: {{ .Values.postgresql.auth.password | quote }}",
            '  api-key: {{ required "apiKey is required" .Values.apiKey | b64enc }}',
        ),
        "helm-template-reference",
    )
    add(
        _lines(
            "From the AWS docs, the credentials file looks like this:",
            "",
            "[default]",
            "aws_access_key_id = AK" + "IAIOSFODNN7" + "EXAMPLE",
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCY" + "EXAMPLEKEY",
        ),
        "aws-docs-example-keys",
    )
    add(
        "Connection string format: postgres://user:password@localhost:5432/mydb "
        "(replace user, password and mydb with your values).",
        "docs-url-user-password",
    )
    add(
        _lines(
            "Go to Database Access in Atlas and copy the connection string:",
            "mongodb+srv://<username>:<password>@cluster0.xxxxx.mongodb.net/"
            "?retryWrites=true&w=majority",
        ),
        "mongodb-angle-placeholder",
    )
    add(
        "DATABASE_URL=postgresql://postgres:[YOUR-PASSWORD]@db.abcdefghijklmnop.supabase.co"
        ":5432/postgres",
        "supabase-bracket-placeholder",
    )
    add(
        _lines(
            "curl https://api.example.com/v1/items \\",
            '  -H "Authorization: Bearer <token>" \\',
            '  -H "Content-Type: application/json"',
        ),
        "bearer-angle-placeholder",
    )
    add(
        json.dumps(
            {"command": 'curl -H "Authorization: Bearer $GITHUB_TOKEN" https://api.github.com/user'}
        ),
        "bearer-shell-variable",
    )
    add(
        _lines(
            "database:",
            "  host: db.internal",
            "  user: app",
            '  password: "********"',
        ),
        "yaml-stars",
    )
    add(
        json.dumps(
            {"user": "deploy", "password": "<redacted>", "token": "[REDACTED]", "host": "10.0.0.4"}
        ),
        "redacted-markers",
    )
    add(
        _lines(
            "```python",
            "def test_client_sends_token(monkeypatch):",
            '    monkeypatch.setenv("OPENAI_API_KEY", "test-key")',
            '    client = make_client(token="test-token")',
            '    assert client.headers["Authorization"] == "Bearer test-token"',
            "```",
        ),
        "test-fixture-token",
    )
    add(
        _lines(
            "@pytest.fixture",
            "def settings():",
            '    return Settings(api_key="dummy", password="fake-password", '
            'secret_key="not-a-real-secret")',
        ),
        "test-fixture-dummy",
    )
    add(
        'FAKE_GITHUB_TOKEN = "gh' + 'p_" + "x" * 36  # shape only, for the parser tests',
        "fixture-token-expression",
    )
    add(
        "GITHUB_TOKEN=gh" + "p_" + "x" * 36,
        "github-x-placeholder",
    )
    add(
        'SLACK_WEBHOOK_URL="https://hooks.slack.com/services/T00000000/B00000000/' + "X" * 24 + '"',
        "slack-webhook-docs-placeholder",
    )
    add(
        _lines(
            "TWILIO_ACCOUNT_SID=AC" + "X" * 32,
            "TWILIO_AUTH_TOKEN=your_auth_token",
        ),
        "twilio-docs-placeholder",
    )
    add(
        _lines(
            "STRIPE_SECRET_KEY=sk_test_your_key_here",
            "STRIPE_WEBHOOK_SECRET=whsec_...",
        ),
        "stripe-your-key-here",
    )
    add(
        _lines(
            "$ cat .env.sample",
            "API_KEY=YOUR_API_KEY",
            "API_SECRET=REPLACE_ME",
            "JWT_SECRET=changeme",
            "ADMIN_PASSWORD=",
        ),
        "env-sample-uppercase",
    )
    add(
        _lines(
            "# 配置说明",
            "API_KEY=你的密钥",
            "DB_PASSWORD=<在这里填写数据库密码>",
            "# 注意：不要把真实的密钥提交到仓库",
        ),
        "chinese-placeholder",
    )
    add("我的 key 是 sk-****（已经打码了），你看看格式对不对？", "chinese-masked-key")
    add(
        _lines(
            "password: ${DB_PASSWORD}",
            "token: ${API_TOKEN:-}",
            'secret: "$(cat /run/secrets/app_secret)"',
        ),
        "shell-expansion-reference",
    )
    add(
        _lines(
            "In [2]: import getpass",
            '   ...: api_key = getpass.getpass("API key: ")',
            "API key: ········",
        ),
        "getpass-prompt",
    )
    add(
        "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=<account>;"
        "AccountKey=<account-key>;EndpointSuffix=core.windows.net",
        "azure-connection-placeholder",
    )
    add(
        _lines(
            "Paste the token into the field, it looks like eyJhbGciOi... (three dot-separated",
            "parts). Do not include the `Bearer ` prefix.",
        ),
        "jwt-truncated-docs",
    )
    add(
        _lines(
            "GOOGLE_APPLICATION_CREDENTIALS=./service-account.json",
            "# service-account.json contains:",
            '#   "private_key": "-----BEGIN PRIVATE KEY-----\\n...\\n-----END PRIVATE KEY-----\\n"',
        ),
        "private-key-ellipsis",
    )
    add(
        _lines(
            '$ echo "$NPM_TOKEN" | docker login ghcr.io -u acme-bot --password-stdin',
            "Login Succeeded",
        ),
        "password-stdin",
    )
    add(
        "kubectl create secret generic db --from-literal=username=app "
        '--from-literal=password="$DB_PASSWORD" --dry-run=client -o yaml | kubectl apply -f -',
        "from-literal-variable",
    )
    add(
        _lines(
            "$ cat .npmrc",
            "//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
            "@acme:registry=https://npm.pkg.github.com",
        ),
        "npmrc-variable",
    )
    add(
        _lines(
            "```python",
            'os.environ["OPENAI_API_KEY"] = "sk-..."  # put your key here',
            'llm = ChatOpenAI(model="gpt-4o-mini")',
            "```",
        ),
        "sk-ellipsis-in-notebook",
    )
    add(
        _lines(
            "$ cat envs/prod/terraform.tfvars.example",
            'region      = "eu-central-1"',
            'db_username = "admin"',
            'db_password = "<set-in-secrets-manager>"',
        ),
        "tfvars-example",
    )
    add(
        _lines(
            '{"level":"info","msg":"outgoing request","method":"POST",'
            '"url":"https://api.vendor-x.io/v3/send",'
            '"headers":{"authorization":"Bearer [FILTERED]","x-api-key":"[FILTERED]"}}',
        ),
        "filtered-log-headers",
    )
    add(
        _lines(
            "ssh_config:",
            "  IdentityFile: ~/.ssh/id_ed25519",
            "  # private key: <paste your key here, or mount it as a secret>",
        ),
        "paste-your-key-here",
    )
    add(
        'password = ""\ntoken = None\napi_key = os.getenv("API_KEY", "")',
        "empty-values",
    )
    add(
        "ANTHROPIC_API_KEY=sk-ant-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "anthropic-x-placeholder",
    )
    add(
        _lines(
            "heroku config:set SENDGRID_API_KEY=SG.xxxxxx.yyyyyy -a shop-prod",
            "(replace SG.xxxxxx.yyyyyy with the key from Settings → API Keys)",
        ),
        "sendgrid-xy-placeholder",
    )
    return out


# --------------------------------------------------------------------------------------------
# negatives: prose, code and help text about credentials


def _prose(g: _G) -> list[Case]:
    out: list[Case] = []
    fam = "prose"

    def add(text: str, shape: str) -> None:
        out.append(_neg(text, fam, shape))

    add(
        "I rotated the Stripe API key and updated the secret in the GitHub environment; the old "
        "key is revoked, so any job still using it will fail with a 401 until it is re-run.",
        "english-rotation-note",
    )
    add(
        "请不要把密钥和密码提交到仓库里。本地开发用 .env 文件，生产环境统一从 Vault 读取，"
        "CI 里用平台自带的 secrets 功能注入。",
        "chinese-policy",
    )
    add(
        "数据库密码过期了，DBA 说今天下午会重置，重置以后他会通过密码管理器共享给我们，"
        "到时候更新一下 Kubernetes 里的 secret 就行。",
        "chinese-password-expired",
    )
    add(
        _lines(
            "The token is a JWT: three base64url parts separated by dots "
            "(header.payload.signature).",
            "The header names the algorithm, the payload carries claims such as `sub` and `exp`,",
            "and the signature is an HMAC or RSA signature over the first two parts.",
        ),
        "jwt-explanation",
    )
    add(
        _lines(
            "```python",
            "import os",
            "",
            'api_key = os.environ["OPENAI_API_KEY"]',
            'db_password = os.environ.get("DB_PASSWORD")',
            "if not api_key:",
            '    raise RuntimeError("OPENAI_API_KEY is not set")',
            "```",
        ),
        "python-env-lookup",
    )
    add(
        _lines(
            "def mask(secret: str) -> str:",
            '    """Show only the first and last four characters of a key."""',
            "    if len(secret) <= 8:",
            '        return "*" * len(secret)',
            '    return f"{secret[:4]}…{secret[-4:]}"',
        ),
        "python-mask-function",
    )
    add(
        _lines(
            "class Settings(BaseSettings):",
            "    database_url: PostgresDsn",
            "    stripe_secret_key: SecretStr",
            "    jwt_secret: SecretStr = Field(min_length=32)",
            "",
            '    model_config = SettingsConfigDict(env_file=".env", secret_dir="/run/secrets")',
        ),
        "pydantic-secretstr",
    )
    add(
        _lines(
            "const token = req.headers.authorization?.replace(/^Bearer /, '');",
            "if (!token) return res.status(401).json({ error: 'missing token' });",
            "const claims = jwt.verify(token, process.env.JWT_SECRET, { algorithms: ['HS256'] });",
        ),
        "js-verify-token",
    )
    add(
        _lines(
            "func loadConfig() Config {",
            "\treturn Config{",
            '\t\tDBPassword: os.Getenv("DB_PASSWORD"),',
            '\t\tAPIToken:   mustEnv("API_TOKEN"),',
            "\t}",
            "}",
        ),
        "go-getenv",
    )
    add(
        _lines(
            "salt = os.urandom(16)",
            'digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 600_000)',
            "user.password_hash = salt + digest",
        ),
        "python-password-hashing",
    )
    add(
        _lines(
            "$ psql --help | grep -i -A1 password",
            "  -w, --no-password        never prompt for password",
            "  -W, --password           force password prompt (should happen automatically)",
        ),
        "cli-help-psql",
    )
    add(
        _lines(
            "$ docker login --help",
            "",
            "Usage:  docker login [OPTIONS] [SERVER]",
            "",
            "Authenticate to a registry.",
            "",
            "Options:",
            "  -p, --password string   Password",
            "      --password-stdin    Take the password from stdin",
            "  -u, --username string   Username",
        ),
        "cli-help-docker-login",
    )
    add(
        _lines(
            "$ gh auth login --help | sed -n '1,12p'",
            "Authenticate with a GitHub host.",
            "",
            "The default authentication mode is a web-based browser flow.",
            "",
            "Alternatively, use `--with-token` to pass in a token on standard input.",
            "The minimum required scopes for the token are: `repo`, `read:org`, and `gist`.",
            "",
            "FLAGS",
            "  -h, --hostname string   The hostname of the GitHub instance to authenticate with",
            "      --with-token        Read token from standard input",
        ),
        "cli-help-gh-auth",
    )
    add(
        _lines(
            "usage: deploy.py [-h] [--token TOKEN] [--api-key API_KEY] [--password PASSWORD]",
            "",
            "options:",
            "  --token TOKEN        access token (default: $DEPLOY_TOKEN)",
            "  --api-key API_KEY    vendor API key (default: read from keychain)",
            "  --password PASSWORD  database password; prefer --password-file",
        ),
        "cli-help-argparse",
    )
    add(
        _lines(
            "$ vault login -h | head -8",
            "Usage: vault login [options] [AUTH K=V...]",
            "",
            "  Authenticates users or machines to Vault using the provided arguments. A",
            "  successful authentication results in a Vault token - conceptually similar to",
            "  a session token on a website. By default, this token is cached on the local",
            "  machine for future requests.",
        ),
        "cli-help-vault",
    )
    add(
        _lines(
            "用法: sync-tool [选项]",
            "  --token <令牌>      访问令牌，默认读取环境变量 SYNC_TOKEN",
            "  --password <密码>   数据库密码，建议改用 --password-file",
        ),
        "cli-help-chinese",
    )
    add(
        _lines(
            "[[rules]]",
            'id = "github-pat"',
            'description = "GitHub Personal Access Token"',
            "regex = '''ghp_[0-9a-zA-Z]{36}'''",
            'keywords = ["ghp_"]',
        ),
        "gitleaks-rule",
    )
    add(
        _lines(
            "PATTERNS = {",
            '    "aws_access_key_id": re.compile(r"\\b(AKIA|ASIA)[0-9A-Z]{16}\\b"),',
            '    "slack_token": re.compile(r"xox[baprs]-[0-9A-Za-z-]{10,48}"),',
            '    "stripe_live": re.compile(r"[rs]k_live_[0-9a-zA-Z]{24,99}"),',
            "}",
        ),
        "python-regex-table",
    )
    add(
        _lines(
            "var keyPat = regexp.MustCompile(`\\b(sk-ant-api03-[\\w\\-]{93}AA)`)",
            "",
            "// Keywords are used for efficiently pre-filtering chunks.",
            'func (s Scanner) Keywords() []string { return []string{"sk-ant-api03"} }',
        ),
        "trufflehog-detector-source",
    )
    add(
        'FATAL:  password authentication failed for user "app"\n'
        'DETAIL:  Connection matched pg_hba.conf line 99: "host all all 0.0.0.0/0 scram-sha-256"',
        "error-password-auth-failed",
    )
    add(
        _lines(
            "$ git push origin main",
            "remote: Support for password authentication was removed on August 13, 2021.",
            "remote: Please see https://docs.github.com/get-started/getting-started-with-git/"
            "about-remote-repositories#cloning-with-https-urls for information on currently "
            "recommended modes of authentication.",
            "fatal: Authentication failed for 'https://github.com/acme/api.git/'",
        ),
        "error-git-auth-failed",
    )
    add(
        _lines(
            "botocore.exceptions.NoCredentialsError: Unable to locate credentials",
            "",
            'You can configure credentials by running "aws configure".',
        ),
        "error-no-credentials",
    )
    add(
        "anthropic.AuthenticationError: Error code: 401 - {'type': 'error', 'error': "
        "{'type': 'authentication_error', 'message': 'invalid x-api-key'}}",
        "error-invalid-api-key",
    )
    add(
        _lines(
            "commit " + g.hex(40),
            "Author: Li Wei <li.wei@acme.dev>",
            "Date:   Tue May 14 10:22:31 2024 +0800",
            "",
            "    chore: rotate leaked Slack bot token and load it from Secrets Manager",
            "",
            "    The old token was revoked in the Slack admin console.",
        ),
        "commit-message",
    )
    add(
        _lines(
            "## Configuration",
            "",
            "| Variable | Required | Description |",
            "|---|---|---|",
            "| `ANTHROPIC_API_KEY` | yes | API key from the Console, starts with `sk-ant-` |",
            "| `DATABASE_URL` | yes | Postgres connection string |",
            "| `JWT_SECRET` | yes | at least 32 random bytes; "
            "generate with `openssl rand -hex 32` |",
        ),
        "env-var-table",
    )
    add(
        _lines(
            "Security review — src/settings.py",
            "",
            "1. Line 12 contains a hardcoded credential (value omitted here). Move it to the",
            "   secret store and rotate it, since it is in the git history.",
            "2. `DEBUG = True` in production settings.",
        ),
        "security-review-report",
    )
    add(
        "Passwords must be at least 12 characters long and contain an uppercase letter, a digit "
        "and a symbol. Passwords expire after 90 days and the last 5 cannot be reused.",
        "password-policy",
    )
    add(
        _lines(
            "tests/test_auth.py::test_rejects_expired_token PASSED                  [ 20%]",
            "tests/test_auth.py::test_password_reset_flow PASSED                    [ 40%]",
            "tests/test_auth.py::test_api_key_must_start_with_prefix PASSED         [ 60%]",
            "tests/test_auth.py::test_secret_not_logged PASSED                      [ 80%]",
            "tests/test_auth.py::test_token_refresh PASSED                          [100%]",
        ),
        "pytest-test-names",
    )
    add(
        _lines(
            "I can't read the key from here — the `.env` file is git-ignored and not in the",
            "workspace. Could you run `echo ${#OPENAI_API_KEY}` so we can at least check that the",
            "variable is set and has the expected length (around 164 characters for project keys)?",
        ),
        "assistant-asks-length",
    )
    add(
        "我已经把 token 存到系统钥匙串里了，脚本里用 keyring.get_password('deploy', 'token') 读取，"
        "这样就不用写在配置文件里。",
        "chinese-keyring",
    )
    add(
        _lines(
            "ALTER ROLE app WITH LOGIN PASSWORD :'app_password';",
            "GRANT CONNECT ON DATABASE billing TO app;",
        ),
        "sql-psql-variable",
    )
    add(
        _lines(
            "diff --git a/app/config.py b/app/config.py",
            "--- a/app/config.py",
            "+++ b/app/config.py",
            "@@ -8,3 +8,3 @@",
            '-SECRET_KEY = os.environ.get("SECRET_KEY", "")',
            '+SECRET_KEY = os.environ["SECRET_KEY"]',
        ),
        "diff-env-lookup",
    )
    add(
        "To create a token go to Settings → Developer settings → Personal access tokens → "
        "Fine-grained tokens, pick the repository, grant Contents: read and write, and copy the "
        "value once; GitHub will not show it again.",
        "docs-create-token",
    )
    add(
        _lines(
            "$ openssl rand -help 2>&1 | head -4",
            "Usage: rand [options] num",
            "General options:",
            " -help               Display this summary",
            " -engine val         Use engine, possibly a hardware device",
        ),
        "cli-help-openssl-rand",
    )
    add(
        _lines(
            "The `secret` parameter of `hmac.new` is the shared signing key; compute",
            "`hmac.new(secret, body, hashlib.sha256).hexdigest()` and compare it with the",
            "`X-Signature` header using `hmac.compare_digest`, never with `==`.",
        ),
        "webhook-signature-explanation",
    )
    add(
        "Why does my SSH key keep asking for a passphrase? I added it with ssh-add but after a "
        "reboot it asks again.",
        "question-ssh-passphrase",
    )
    add(
        _lines(
            "$ ssh deploy@10.0.4.21",
            "deploy@10.0.4.21: Permission denied (publickey).",
        ),
        "error-publickey",
    )
    add(
        _lines(
            '  File "/app/auth.py", line 33, in verify',
            '    payload = jwt.decode(token, key, algorithms=["RS256"], audience=AUDIENCE)',
            "jwt.exceptions.ExpiredSignatureError: Signature has expired",
        ),
        "error-jwt-expired",
    )
    add(
        "password reset link sent to j***@acme.dev — it expires in 30 minutes",
        "password-reset-notice",
    )
    add(
        _lines(
            "secrets:",
            "  db_password:",
            "    file: ./secrets/db_password.txt",
            "  api_token:",
            "    external: true",
        ),
        "compose-secrets-declaration",
    )
    add(
        _lines(
            "1. Open the Google Cloud console and create a service account.",
            "2. Under Keys, choose Add key → Create new key → JSON.",
            "3. Save the file outside the repository and point "
            "GOOGLE_APPLICATION_CREDENTIALS at it.",
        ),
        "docs-service-account-steps",
    )
    add(
        "用 openssl rand -base64 32 生成一个随机字符串作为 JWT_SECRET，然后在服务器上设置环境变量，"
        "千万不要写死在代码里。",
        "chinese-generate-secret",
    )
    add(
        _lines(
            "[core]",
            "  askPass = /usr/lib/git-core/git-gui--askpass",
            "[credential]",
            "  helper = osxkeychain",
            "  useHttpPath = true",
        ),
        "git-credential-helper-config",
    )
    return out


# --------------------------------------------------------------------------------------------
# negatives: hashes, digests, public keys, certificates, base64 of ordinary data


def _hash(g: _G) -> list[Case]:
    out: list[Case] = []
    fam = "hash"

    def add(text: str, shape: str) -> None:
        out.append(_neg(text, fam, shape))

    msgs = ["fix flaky retry test", "bump deps", "add billing export", "refactor auth middleware",
            "docs: update README", "ci: cache pip"]  # fmt: skip
    add("$ git log --oneline -6\n" + "\n".join(g.hex(7) + " " + m for m in msgs), "git-log-short")
    add(_lines("$ git rev-parse HEAD", g.hex(40)), "git-full-sha")
    add(
        _lines(
            "$ sha256sum dist/*",
            g.hex(64) + "  dist/acme_cli-1.4.2-py3-none-any.whl",
            g.hex(64) + "  dist/acme_cli-1.4.2.tar.gz",
        ),
        "sha256sum",
    )
    add(
        _lines(
            "$ docker pull ghcr.io/acme/api:1.42.0",
            "1.42.0: Pulling from acme/api",
            g.hex(12) + ": Already exists",
            g.hex(12) + ": Pull complete",
            "Digest: sha256:" + g.hex(64),
            "Status: Downloaded newer image for ghcr.io/acme/api:1.42.0",
        ),
        "docker-digest",
    )
    add(
        json.dumps(
            {
                "node_modules/lodash": {
                    "version": "4.17.21",
                    "resolved": "https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz",
                    "integrity": "sha512-" + g.b64(64),
                }
            },
            indent=2,
        ),
        "npm-integrity",
    )
    add(
        _lines(
            "requests==2.32.3 \\",
            "    --hash=sha256:" + g.hex(64) + " \\",
            "    --hash=sha256:" + g.hex(64),
        ),
        "pip-hash",
    )
    add(_lines("$ md5sum backup.sql.gz", g.hex(32) + "  backup.sql.gz"), "md5sum")
    add(
        _lines(
            "golang.org/x/crypto v0.23.0 h1:" + g.b64(32),
            "golang.org/x/crypto v0.23.0/go.mod h1:" + g.b64(32),
        ),
        "go-sum",
    )
    add(
        _lines(
            "[[package]]",
            'name = "serde"',
            'version = "1.0.203"',
            'source = "registry+https://github.com/rust-lang/crates.io-index"',
            f'checksum = "{g.hex(64)}"',
        ),
        "cargo-lock-checksum",
    )
    add(
        _lines(
            "diff --git a/src/app.py b/src/app.py",
            f"index {g.hex(7)}..{g.hex(7)} 100644",
            "--- a/src/app.py",
            "+++ b/src/app.py",
            "@@ -1,3 +1,4 @@",
            " import os",
            "+import sys",
        ),
        "git-diff-index",
    )
    add(
        f'<script src="https://cdn.jsdelivr.net/npm/htmx.org@1.9.12" '
        f'integrity="sha384-{g.b64(48)}" crossorigin="anonymous"></script>',
        "sri-integrity",
    )
    add(
        _lines(
            "HTTP/2 200",
            "content-type: application/octet-stream",
            f'etag: "{g.hex(32)}"',
            "x-amz-checksum-sha256: " + g.b64(32),
            "x-amz-version-id: " + g.urlsafe(32),
        ),
        "s3-etag-checksum",
    )
    add(
        _lines(
            "$ ssh-keygen -lf ~/.ssh/id_ed25519.pub",
            "256 SHA256:" + g.b64(32).rstrip("=") + " dev@laptop (ED25519)",
        ),
        "ssh-fingerprint",
    )
    add(
        _lines(
            "$ cat ~/.ssh/id_ed25519.pub",
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + g.b64(32)[:43] + " li.wei@acme.dev",
        ),
        "ssh-ed25519-public-key",
    )
    add(
        _lines(
            "$ cat ~/.ssh/authorized_keys",
            "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ" + g.b64(380).rstrip("=") + " ci@runner",
        ),
        "ssh-rsa-public-key",
    )
    pub = _armor(
        "PUBLIC" + " KEY",
        bytes.fromhex("30820122300d06092a864886f70d01010105000382010f00") + g.r.randbytes(270),
    )
    add("$ openssl rsa -in key.pem -pubout\nwriting RSA key\n" + "\n".join(pub), "pem-public-key")
    cert = _armor("CERTIFICATE", bytes.fromhex("308203") + g.r.randbytes(900))
    add(
        _lines(
            "$ openssl s_client -connect api.acme.dev:443 -showcerts </dev/null 2>/dev/null | "
            "sed -n '1,40p'",
            "CONNECTED(00000003)",
            "---",
            "Certificate chain",
            " 0 s:CN = api.acme.dev",
            "   i:C = US, O = Let's Encrypt, CN = R11",
            *cert,
        ),
        "x509-certificate",
    )
    add(
        _lines(
            "$ head -2 ~/.ssh/known_hosts",
            f"|1|{g.b64(20)}|{g.b64(20)} ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{g.b64(32)[:43]}",
            f"|1|{g.b64(20)}|{g.b64(20)} ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAI"
            + g.b64(72),
        ),
        "known-hosts-hashed",
    )
    pgp_pub = [g.b64(48) for _ in range(8)]
    add(
        _lines(
            "$ gpg --armor --export release@acme.dev",
            "-----BEGIN PGP PUBLIC KEY BLOCK-----",
            "",
            *pgp_pub,
            "=" + g.b64(3),
            "-----END PGP PUBLIC KEY BLOCK-----",
        ),
        "pgp-public-key",
    )
    add(
        _lines(
            "$ cat .sops.yaml",
            "creation_rules:",
            "  - path_regex: secrets/.*\\.yaml$",
            "    age: age1" + g.pick("qpzry9x8gf2tvdw0s3jn54khce6mua7l", 58),
        ),
        "age-public-recipient",
    )
    add(
        _lines(
            "$ sudo wg show",
            "interface: wg0",
            "  public key: " + g.b64(32),
            "  private key: (hidden)",
            "  listening port: 51820",
            "",
            "peer: " + g.b64(32),
            "  endpoint: 203.0.113.7:51820",
            "  allowed ips: 10.8.0.2/32",
            "  latest handshake: 1 minute, 12 seconds ago",
        ),
        "wireguard-public-keys",
    )
    add(
        _lines(
            "$ echo -n 'build=1842;branch=main;ts=2024-05-14T09:12:03Z' | base64",
            base64.b64encode(b"build=1842;branch=main;ts=2024-05-14T09:12:03Z").decode(),
        ),
        "base64-of-plain-text",
    )
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + g.r.randbytes(180)).decode()
    add(
        '<img alt="logo" src="data:image/png;base64,' + png + '" width="32" height="32">',
        "data-uri-image",
    )
    cm = base64.b64encode(
        b"server {\n  listen 80;\n  server_name _;\n  root /srv/www;\n}\n"
    ).decode()
    add(
        _lines(
            "$ kubectl get configmap nginx-conf -o yaml",
            "apiVersion: v1",
            "binaryData:",
            "  default.conf: " + cm,
            "kind: ConfigMap",
        ),
        "base64-configmap",
    )
    add(
        json.dumps(
            {
                "type": "image",
                "source": {
                    "type": "base64",
                    "media_type": "image/jpeg",
                    "data": base64.b64encode(
                        b"\xff\xd8\xff\xe0\x00\x10JFIF" + g.r.randbytes(240)
                    ).decode(),
                },
            }
        ),
        "base64-image-content-block",
    )
    add(
        _lines(
            'provider "registry.terraform.io/hashicorp/aws" {',
            '  version     = "5.49.0"',
            '  constraints = "~> 5.0"',
            "  hashes = [",
            f'    "h1:{g.b64(32)}",',
            f'    "zh:{g.hex(64)}",',
            f'    "zh:{g.hex(64)}",',
            "  ]",
            "}",
        ),
        "terraform-lock-hashes",
    )
    add(
        _lines(
            "  /@babel/core@7.24.5:",
            "    resolution: {integrity: sha512-" + g.b64(64) + "}",
            "    engines: {node: '>=6.9.0'}",
        ),
        "pnpm-lock-integrity",
    )
    add(
        _lines(
            "[metadata]",
            'lock-version = "2.0"',
            'python-versions = "^3.11"',
            f'content-hash = "{g.hex(64)}"',
        ),
        "poetry-content-hash",
    )
    add(
        _lines(
            "$ nix path-info ./result",
            "/nix/store/" + g.pick("0123456789abcdfghijklmnpqrsvwxyz", 32) + "-acme-cli-1.4.2",
        ),
        "nix-store-path",
    )
    add(
        _lines(
            "acme_cli/__init__.py,sha256=" + g.b64url(32) + ",412",
            "acme_cli/main.py,sha256=" + g.b64url(32) + ",6120",
            "acme_cli-1.4.2.dist-info/RECORD,,",
        ),
        "wheel-record",
    )
    add(
        _lines(
            "POST /webhooks/github HTTP/1.1",
            "X-GitHub-Event: push",
            "X-GitHub-Delivery: " + g.uuid(),
            "X-Hub-Signature-256: sha256=" + g.hex(64),
            "Content-Type: application/json",
        ),
        "webhook-signature-header",
    )
    add(
        json.dumps(
            {
                "keys": [
                    {
                        "kty": "RSA",
                        "use": "sig",
                        "kid": g.urlsafe(43),
                        "alg": "RS256",
                        "n": g.b64url(256),
                        "e": "AQAB",
                    }
                ]
            },
            indent=2,
        ),
        "jwks-public",
    )
    add(
        _lines(
            "version https://git-lfs.github.com/spec/v1",
            "oid sha256:" + g.hex(64),
            "size 48213094",
        ),
        "git-lfs-pointer",
    )
    add(
        "tx 0x" + g.hex(64) + " confirmed in block 19876543 (from 0x" + g.hex(40) + ")",
        "ethereum-tx-hash",
    )
    fp = ":".join(g.hex(64).upper()[i : i + 2] for i in range(0, 64, 2))
    add(
        _lines(
            "$ openssl x509 -in cert.pem -noout -fingerprint -sha256",
            "sha256 Fingerprint=" + fp,
        ),
        "cert-fingerprint",
    )
    add(
        _lines(
            "$ docker ps --no-trunc --format '{{.ID}} {{.Names}}'",
            g.hex(64) + " api",
            g.hex(64) + " worker",
        ),
        "docker-container-ids",
    )
    add(
        _lines(
            "Fetching 4 files: 100%|██████████| 4/4 [00:03<00:00,  1.12it/s]",
            "Downloaded Qwen/Qwen2.5-0.5B-Instruct at revision " + g.hex(40),
        ),
        "model-revision-sha",
    )
    add(
        _lines(
            "dist/assets/index-" + g.urlsafe(8) + ".js     142.31 kB │ gzip: 45.80 kB",
            "dist/assets/index-" + g.urlsafe(8) + ".css     12.04 kB │ gzip:  3.11 kB",
            "✓ built in 2.41s",
        ),
        "asset-hashes",
    )
    add(
        _lines(
            "$ gpg --list-keys release@acme.dev",
            "pub   ed25519 2023-02-01 [SC] [expires: 2026-02-01]",
            "      " + g.hex(40).upper(),
            "uid           [ultimate] Acme Release <release@acme.dev>",
        ),
        "gpg-fingerprint",
    )
    add(
        _lines(
            "$ cat .secrets.baseline | jq '.results[\"config/settings.py\"][0]'",
            "{",
            '  "type": "Secret Keyword",',
            '  "filename": "config/settings.py",',
            f'  "hashed_secret": "{g.hex(40)}",',
            '  "is_verified": false,',
            '  "line_number": 12',
            "}",
        ),
        "detect-secrets-baseline",
    )
    add(
        "ipfs://bafybei" + g.pick("abcdefghijklmnopqrstuvwxyz234567", 52) + "/metadata.json",
        "ipfs-cid",
    )
    return out


# --------------------------------------------------------------------------------------------
# negatives: UUIDs and request, trace and correlation ids


def _uuid(g: _G) -> list[Case]:
    out: list[Case] = []
    fam = "uuid"

    def add(text: str, shape: str) -> None:
        out.append(_neg(text, fam, shape))

    add(
        "\n".join(
            f"2024-06-11T08:14:{10 + i}.{g.digits(3)}Z INFO http request_id={g.uuid()} "
            f"method=GET path=/api/orders status=200 duration_ms={g.r.randint(3, 90)}"
            for i in range(4)
        ),
        "request-id-log",
    )
    add(
        _lines(
            "metadata:",
            '  creationTimestamp: "2024-05-02T11:20:44Z"',
            "  name: api-7d9c6b8f5-" + g.lownum(5),
            "  namespace: prod",
            '  resourceVersion: "' + g.digits(9) + '"',
            "  uid: " + g.uuid(),
        ),
        "k8s-uid",
    )
    add(
        _lines(
            "app=# select id, email, created_at from users order by created_at desc limit 3;",
            "                  id                  |        email        |      created_at",
            "--------------------------------------+---------------------+---------------------",
            f" {g.uuid()} | ana@example.org     | 2024-06-10 09:12:01",
            f" {g.uuid()} | bo@example.org      | 2024-06-09 17:40:55",
            f" {g.uuid()} | chen@example.org    | 2024-06-09 08:03:19",
            "(3 rows)",
        ),
        "psql-uuid-column",
    )
    add(
        json.dumps(
            {
                "environmentName": "AzureCloud",
                "id": g.uuid(),
                "isDefault": True,
                "name": "Acme Production",
                "state": "Enabled",
                "tenantId": g.uuid(),
                "user": {"name": "li.wei@acme.dev", "type": "user"},
            },
            indent=2,
        ),
        "az-account-show",
    )
    add(
        _lines(
            "traceparent: 00-" + g.hex(32) + "-" + g.hex(16) + "-01",
            "tracestate: rojo=" + g.hex(16),
        ),
        "w3c-traceparent",
    )
    add(
        json.dumps(
            {
                "timestamp": "2024-06-11T08:14:22.901Z",
                "level": "error",
                "message": "upstream timeout",
                "trace_id": g.hex(32),
                "span_id": g.hex(16),
                "service": "checkout",
            }
        ),
        "otel-trace-id-json",
    )
    rid = g.uuid()
    add(
        _lines(
            f"START RequestId: {rid} Version: $LATEST",
            f"END RequestId: {rid}",
            f"REPORT RequestId: {rid}\tDuration: 412.33 ms\tBilled Duration: 413 ms\t"
            "Memory Size: 512 MB\tMax Memory Used: 141 MB",
        ),
        "lambda-request-id",
    )
    add(
        "Sentry event " + g.hex(32) + " captured: ZeroDivisionError in billing.totals",
        "sentry-event-id",
    )
    add(
        _lines(
            "$ ulid gen -n 3",
            "01HZ" + g.pick("0123456789ABCDEFGHJKMNPQRSTVWXYZ", 22),
            "01HZ" + g.pick("0123456789ABCDEFGHJKMNPQRSTVWXYZ", 22),
            "01HZ" + g.pick("0123456789ABCDEFGHJKMNPQRSTVWXYZ", 22),
        ),
        "ulid",
    )
    add(
        json.dumps(
            {
                "cell_type": "code",
                "execution_count": 3,
                "id": g.hex(8),
                "metadata": {},
                "outputs": [],
                "source": ["df.describe()"],
            },
            indent=1,
        ),
        "notebook-cell-id",
    )
    add(
        _lines(
            "$ jupyter kernel list",
            "Kernel " + g.uuid() + " (python3) started at 2024-06-11 08:00",
        ),
        "jupyter-kernel-id",
    )
    guid = g.uuid().upper()
    add(
        f'Project("{{FAE04EC0-301F-11D3-BF4B-00C04F79EFBC}}") = "Shop.Api", '
        f'"src\\Shop.Api\\Shop.Api.csproj", "{{{guid}}}"\nEndProject',
        "sln-project-guid",
    )
    add(
        _lines(
            "POST /v1/charges HTTP/1.1",
            "Idempotency-Key: " + g.uuid(),
            "Content-Type: application/x-www-form-urlencoded",
        ),
        "idempotency-key",
    )
    add(
        json.dumps(
            {"version": 4, "terraform_version": "1.8.4", "serial": 112, "lineage": g.uuid()},
            indent=2,
        ),
        "terraform-state-lineage",
    )
    add(
        _lines(
            "> db.orders.find({}, {_id: 1, status: 1}).limit(2)",
            f"[ {{ _id: ObjectId('{g.hex(24)}'), status: 'paid' }},",
            f"  {{ _id: ObjectId('{g.hex(24)}'), status: 'shipped' }} ]",
        ),
        "mongodb-objectid",
    )
    h = g.hex(32)
    add(
        f"created export job {h[:8]}-{h[8:12]}-7{h[13:16]}-a{h[17:20]}-{h[20:]} (uuid v7), "
        "poll /jobs/{id} for status",
        "uuid-v7",
    )
    add(
        f"[2024-06-11 08:14:22,118: INFO/ForkPoolWorker-3] Task billing.tasks.send_invoice"
        f"[{g.uuid()}] succeeded in 0.412s: None",
        "celery-task-id",
    )
    add(
        _lines(
            "$ cat /etc/machine-id", g.hex(32), "$ cat /proc/sys/kernel/random/boot_id", g.uuid()
        ),
        "machine-and-boot-id",
    )
    add(
        "rebalance: assigned partitions [orders-0, orders-1] to consumer-billing-1-" + g.uuid(),
        "kafka-member-id",
    )
    add(
        _lines(
            "$ ls ~/.claude/projects/-work-main/ | tail -3",
            g.uuid() + ".jsonl",
            g.uuid() + ".jsonl",
            g.uuid() + ".jsonl",
        ),
        "session-file-ids",
    )
    add(
        _lines(
            "$ sudo blkid",
            f'/dev/nvme0n1p1: UUID="{g.hex(4).upper()}-{g.hex(4).upper()}" TYPE="vfat" '
            f'PARTUUID="{g.uuid()}"',
            f'/dev/nvme0n1p2: UUID="{g.uuid()}" TYPE="ext4" PARTUUID="{g.uuid()}"',
        ),
        "blkid",
    )
    add(
        "HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Uninstall\\{"
        + g.uuid().upper()
        + "}",
        "windows-registry-guid",
    )
    add(
        _lines(
            "Query ID: 01b4" + g.hex(4) + "-0000-" + g.hex(4) + "-0000-" + g.hex(12),
            "Rows produced: 1,204   Elapsed: 3.2s   Warehouse: ETL_WH",
        ),
        "snowflake-query-id",
    )
    add(
        "这是订单 " + g.uuid() + " 的退款记录，用户说重复扣款了，帮我查一下日志里有没有两次回调。",
        "chinese-order-uuid",
    )
    add(
        "https://chatgpt.com/share/" + g.uuid(),
        "share-link-uuid",
    )
    add(
        json.dumps(
            {
                "correlationId": g.uuid(),
                "causationId": g.uuid(),
                "type": "OrderPlaced",
                "aggregateId": g.uuid(),
                "version": 7,
            }
        ),
        "event-envelope-ids",
    )
    add(
        _lines(
            "GitHub Actions runner",
            "Job ID: " + g.uuid(),
            "Run ID: " + g.digits(10),
            "Runner name: GitHub Actions " + g.digits(3),
        ),
        "ci-job-id",
    )
    add(
        "x-ms-request-id: " + g.uuid() + "\nx-ms-correlation-request-id: " + g.uuid(),
        "azure-request-headers",
    )
    add(
        f"dd.trace_id={g.digits(19)} dd.span_id={g.digits(19)} "
        'level=warn msg="slow query" duration=1.2s',
        "datadog-decimal-trace-id",
    )
    add(
        _lines(
            "$ gcloud projects describe acme-analytics",
            "createTime: '2023-01-09T10:02:11.422Z'",
            "lifecycleState: ACTIVE",
            "name: acme-analytics",
            "projectId: acme-analytics",
            "projectNumber: '" + g.digits(12) + "'",
        ),
        "gcp-project-number",
    )
    add(
        json.dumps(
            {
                "appId": g.uuid(),
                "displayName": "ci-deployer",
                "objectId": g.uuid(),
                "servicePrincipalType": "Application",
            },
            indent=2,
        ),
        "azure-service-principal-ids",
    )
    add(
        'android:value="' + g.uuid() + '" tools:replace="android:value"  <!-- install referrer -->',
        "manifest-uuid",
    )
    add(
        "Upload complete. Asset ID: " + g.uuid() + ", checksum verified.",
        "asset-id",
    )
    add(
        _lines(
            "$ docker network ls",
            "NETWORK ID     NAME            DRIVER    SCOPE",
            g.hex(12) + "   bridge          bridge    local",
            g.hex(12) + "   shop_default    bridge    local",
        ),
        "docker-network-ids",
    )
    return out


# --------------------------------------------------------------------------------------------
# negatives: ids, resource names and label-like keys whose values are not secrets


def _identifier(g: _G) -> list[Case]:
    out: list[Case] = []
    fam = "identifier"

    def add(text: str, shape: str) -> None:
        out.append(_neg(text, fam, shape))

    b58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    add(
        json.dumps(
            {
                "type": "tool_use",
                "id": "toolu_01" + g.pick(b58, 22),
                "name": "Bash",
                "input": {"command": "pytest -q tests/test_api.py", "timeout": 120000},
            }
        ),
        "anthropic-tool-use-id",
    )
    add(
        json.dumps(
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01" + g.pick(b58, 22),
                "content": "12 passed in 3.41s",
            }
        ),
        "anthropic-tool-result-id",
    )
    add(
        json.dumps(
            {
                "id": "msg_01" + g.pick(b58, 22),
                "type": "message",
                "role": "assistant",
                "model": "claude-3-5-sonnet-20241022",
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 2143, "output_tokens": 87},
            }
        ),
        "anthropic-message-id",
    )
    add(
        json.dumps(
            {
                "id": "chatcmpl-" + g.alnum(29),
                "object": "chat.completion",
                "created": 1_718_090_062,
                "model": "gpt-4o-2024-08-06",
                "choices": [
                    {
                        "index": 0,
                        "message": {
                            "role": "assistant",
                            "content": None,
                            "tool_calls": [
                                {
                                    "id": "call_" + g.alnum(24),
                                    "type": "function",
                                    "function": {
                                        "name": "read_file",
                                        "arguments": '{"path": "src/app.py"}',
                                    },
                                }
                            ],
                        },
                        "finish_reason": "tool_calls",
                    }
                ],
                "usage": {"prompt_tokens": 812, "completion_tokens": 19, "total_tokens": 831},
                "system_fingerprint": "fp_" + g.hex(10),
            }
        ),
        "openai-completion-and-call-ids",
    )
    add(
        json.dumps(
            {
                "id": "resp_" + g.hex(48),
                "object": "response",
                "status": "completed",
                "previous_response_id": "resp_" + g.hex(48),
            }
        ),
        "openai-response-id",
    )
    add(
        _lines(
            "uploaded file-" + g.alnum(22) + " (training.jsonl, 2.1 MB)",
            "assistant asst_"
            + g.alnum(24)
            + " thread thread_"
            + g.alnum(24)
            + " run run_"
            + g.alnum(24)
            + " status=completed",
            "batch batch_" + g.hex(32) + " validating",
        ),
        "openai-object-ids",
    )
    add(
        _lines(
            "< HTTP/2 529",
            "< request-id: req_011C" + g.pick(b58, 20),
            "< anthropic-organization-id: " + g.uuid(),
            '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
        ),
        "anthropic-request-id",
    )
    add(
        _lines(
            "x-request-id: req_" + g.hex(32),
            "openai-organization: org-" + g.alnum(24),
            "openai-project: proj_" + g.alnum(24),
            "openai-processing-ms: 412",
        ),
        "openai-org-project-ids",
    )
    acct = g.digits(12)
    add(
        json.dumps(
            {
                "UserId": "AR" + "OA" + g.upnum(17) + ":ci-session",
                "Account": acct,
                "Arn": f"arn:aws:sts::{acct}:assumed-role/ci-deployer/ci-session",
            },
            indent=4,
        ),
        "aws-caller-identity",
    )
    add(
        _lines(
            "$ aws ec2 describe-instances --query "
            "'Reservations[].Instances[].[InstanceId,ImageId,SubnetId]' --output text",
            f"i-0{g.hex(16)}\tami-0{g.hex(16)}\tsubnet-0{g.hex(16)}",
            f"i-0{g.hex(16)}\tami-0{g.hex(16)}\tsubnet-0{g.hex(16)}",
            f"sg-0{g.hex(16)}  vpc-0{g.hex(16)}  vol-0{g.hex(16)}",
        ),
        "aws-resource-ids",
    )
    add(
        f"arn:aws:iam::{g.digits(12)}:role/service-role/lambda-exec-{g.lownum(8)}\n"
        f"arn:aws:s3:::acme-media-uploads-{g.digits(6)}/avatars/*\n"
        f"arn:aws:kms:eu-west-1:{g.digits(12)}:key/{g.uuid()}",
        "aws-arns",
    )
    add(
        json.dumps(
            {
                "id": "pi_3" + g.alnum(23),
                "object": "payment_intent",
                "amount": 4999,
                "currency": "eur",
                "customer": "cus_" + g.alnum(14),
                "latest_charge": "ch_3" + g.alnum(23),
                "payment_method": "pm_1" + g.alnum(23),
                "status": "succeeded",
            },
            indent=2,
        ),
        "stripe-object-ids",
    )
    add(
        _lines(
            "NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY=pk" + "_live_" + "51" + g.alnum(97),
            "NEXT_PUBLIC_SITE_URL=https://shop.acme.dev",
        ),
        "stripe-publishable-key",
    )
    add(
        _lines(
            "price_1" + g.alnum(23) + "  Pro monthly  €19.00",
            "prod_" + g.alnum(14) + "  Pro",
            "evt_1" + g.alnum(23) + "  invoice.paid",
        ),
        "stripe-price-product-event-ids",
    )
    add(
        json.dumps(
            {
                "ok": True,
                "channel": "C0" + g.upnum(9),
                "ts": "1718090062." + g.digits(6),
                "message": {
                    "user": "U0" + g.upnum(9),
                    "team": "T0" + g.upnum(9),
                    "text": "deployed",
                },
            }
        ),
        "slack-ids",
    )
    add(
        "Messages sent from AC" + g.hex(32) + " via MG" + g.hex(32) + " to +1 415 555 0134",
        "twilio-account-sid",
    )
    add(
        "GOOGLE_CLIENT_ID=" + g.digits(12) + "-" + g.lownum(32) + ".apps.googleusercontent.com",
        "google-oauth-client-id",
    )
    mb = {"u": "acme-maps", "a": "cl" + g.lownum(23)}
    add(
        "mapboxgl.accessToken = 'p" + "k." + g.b64url_json(mb) + "." + g.urlsafe(22) + "';",
        "mapbox-public-token",
    )
    add(
        json.dumps(
            {
                "data": {
                    "repository": {
                        "id": "R_kgDO" + g.urlsafe(10),
                        "pullRequest": {"id": "PR_kwDO" + g.urlsafe(20), "number": 1842},
                    }
                }
            }
        ),
        "github-graphql-node-ids",
    )
    add(
        _lines(
            "$ kubectl get pods -n prod",
            "NAME                          READY   STATUS    RESTARTS   AGE",
            f"api-7d9c6b8f5-{g.lownum(5)}         1/1     Running   0          3h",
            f"api-7d9c6b8f5-{g.lownum(5)}         1/1     Running   0          3h",
            f"worker-5f6d8c9b7d-{g.lownum(5)}     1/1     Running   2          1d",
        ),
        "k8s-pod-names",
    )
    add(
        _lines(
            "$ git branch -a",
            "* feature/rotate-api-keys",
            "  fix/token-refresh-race",
            "  main",
            "  remotes/origin/chore/move-secrets-to-vault",
        ),
        "branch-names",
    )
    add(
        _lines(
            "$ printenv | cut -d= -f1 | grep -Ei 'key|token|secret|pass'",
            "ANTHROPIC_API_KEY",
            "GITHUB_TOKEN",
            "SECRET_KEY_BASE",
            "PGPASSFILE",
        ),
        "env-var-names",
    )
    add(
        json.dumps(
            {
                "model": "claude-3-5-haiku-20241022",
                "max_tokens": 4096,
                "temperature": 0.2,
                "messages": [{"role": "user", "content": "summarise the diff"}],
            }
        ),
        "max-tokens",
    )
    add(
        _lines(
            "usage:",
            "  input_tokens: 18211",
            "  cache_read_input_tokens: 16384",
            "  output_tokens: 412",
            "tokenizer: cl100k_base",
            "token_budget: 200000",
        ),
        "token-counts",
    )
    add(
        _lines(
            "auth:",
            "  token_url: https://oauth2.googleapis.com/token",
            "  token_ttl_seconds: 3600",
            "  api_key_header: X-API-Key",
            "  secret_name: prod-db-credentials",
            "  password_min_length: 12",
            "  password_file: /run/secrets/db_password",
            "  ssh_key_path: ~/.ssh/id_ed25519",
        ),
        "credential-shaped-labels",
    )
    add(
        json.dumps(
            {
                "key": "user:42:profile",
                "ttl": 300,
                "primary_key": "id",
                "sort_key": "created_at",
                "partition_key": "tenant_id",
            }
        ),
        "cache-and-table-keys",
    )
    add(
        _lines(
            "Resolved model ids:",
            "  anthropic/claude-3-5-sonnet-20241022",
            "  openai/gpt-4o-mini-2024-07-18",
            "  meta-llama/Llama-3.1-8B-Instruct",
            "  Qwen/Qwen2.5-Coder-7B-Instruct-GGUF",
        ),
        "model-ids",
    )
    add(
        "Deployed ghcr.io/acme/api:1.42.0-rc.3+build."
        + g.digits(4)
        + " to prod (helm revision 88)",
        "image-tag-version",
    )
    add(
        '<div class="css-' + g.lownum(7) + " r-" + g.lownum(6) + '" data-testid="login-form">',
        "css-class-hashes",
    )
    add(
        "Order ORD-2024-" + g.digits(6) + " shipped with tracking 1Z" + g.upnum(16) + " (UPS)",
        "order-and-tracking-numbers",
    )
    add(
        _lines(
            "$ aws cloudfront list-distributions --query 'DistributionList.Items[].Id'",
            "[",
            f'    "E{g.upnum(13)}",',
            f'    "E{g.upnum(13)}"',
            "]",
        ),
        "cloudfront-distribution-ids",
    )
    add(
        "supabase link --project-ref " + g.pick(_LOW, 20),
        "supabase-project-ref",
    )
    add(
        _lines(
            "$ gh run list --limit 3",
            f"completed  success  ci: cache pip  CI  main  push  {g.digits(10)}  2m11s"
            "  about 1 hour ago",
            f"completed  failure  bump deps      CI  main  push  {g.digits(10)}  1m58s"
            "  about 3 hours ago",
        ),
        "gh-run-ids",
    )
    add(
        "Device: iPhone15,2  UDID " + g.hex(8).upper() + "-" + g.hex(16).upper() + "  build 21F90",
        "device-udid",
    )
    add(
        "CloudWatch log stream 2024/06/11/[$LATEST]" + g.hex(32),
        "log-stream-name",
    )
    add(
        _lines(
            "$ npm ls --depth=0",
            "shop@1.4.2 /workspace/shop",
            "├── @acme/secret-manager@2.3.1",
            "├── jsonwebtoken@9.0.2",
            "└── passport-jwt@4.0.1",
        ),
        "package-names",
    )
    add(
        "用户 ID："
        + g.digits(10)
        + "，会话 ID：sess_"
        + g.alnum(24)
        + "，请查一下这个会话的日志。",
        "chinese-session-id",
    )
    add(
        _lines(
            "Firebase project: acme-mobile-" + g.hex(5),
            "App ID: 1:" + g.digits(12) + ":android:" + g.hex(16),
            "Measurement ID: G-" + g.upnum(10),
        ),
        "firebase-app-ids",
    )
    add(
        "Published @acme/ui@3.2.0 (shasum " + g.hex(40) + ", tarball acme-ui-3.2.0.tgz)",
        "npm-publish-shasum",
    )
    return out


def blind() -> list[Case]:
    """The blind corpus: positives first, then negatives; deterministic."""
    g = _G(_SEED)
    positives = _provider(g) + _private_key(g) + _connection(g) + _jwts(g) + _labelled(g)
    negatives = _placeholder(g) + _prose(g) + _hash(g) + _uuid(g) + _identifier(g)
    return positives + negatives

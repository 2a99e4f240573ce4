# ruff: noqa: E501  (corpus data: long literal lines are part of realistic samples)
"""Blind held-out redaction corpus, written without sight of the engine or its tuned corpora.

Every credential is assembled at run time from split literal pieces plus seeded random
bodies, so the source holds no real-looking token.  Positives come first.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable

from ._redact_corpus import Case

_UP = string.ascii_uppercase
_LO = string.ascii_lowercase
_DG = string.digits
_AN = _UP + _LO + _DG
_B64 = _AN + "+/"
_URL = _AN + "-_"
_HEX = "0123456789abcdef"
_B32 = _UP + "234567"
_WORDS = (
    "river", "copper", "falcon", "maple", "orbit", "velvet", "harbor", "tundra",
    "saffron", "glacier", "lantern", "meadow", "cobalt", "ember", "quartz", "willow",
    "thunder", "pebble", "nectar", "vortex", "cinder", "juniper", "marble", "raven",
)  # fmt: skip
_SYMS = "!@#$%^&*-_+=?."

_PosFn = Callable[[str, str, str, str], None]
_NegFn = Callable[[str, str, str], None]


class _Gen:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def s(self, n: int, alpha: str = _AN) -> str:
        return "".join(self.r.choice(alpha) for _ in range(n))

    def hx(self, n: int) -> str:
        return self.s(n, _HEX)

    def word(self) -> str:
        return self.r.choice(_WORDS)

    def human(self) -> str:
        a, b = self.word().capitalize(), self.word()
        return f"{a}{self.r.choice(_SYMS)}{b}{self.r.randint(10, 9999)}{self.r.choice('!#%*')}"

    def phrase(self) -> str:
        return " ".join(self.word() for _ in range(4)) + f" {self.r.randint(100, 999)}"

    def uuid(self) -> str:
        h = self.hx(32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{self.r.choice('89ab')}{h[17:20]}-{h[20:]}"

    def num(self, n: int) -> str:
        return str(self.r.randint(1, 9)) + self.s(n - 1, _DG)


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _jwt(g: _Gen, alg: str, claims: dict[str, object]) -> str:
    head = _b64url(json.dumps({"alg": alg, "typ": "J" + "WT"}, separators=(",", ":")).encode())
    body = _b64url(json.dumps(claims, separators=(",", ":")).encode())
    sig_len = {"HS256": 43, "RS256": 342, "ES256": 86}[alg]
    return f"{head}.{body}.{g.s(sig_len, _URL)}"


_PK = "PRIV" + "ATE KEY"


def _pem_lines(g: _Gen, lead: str, n: int, width: int = 64) -> list[str]:
    lines = [lead + g.s(width - len(lead), _B64)]
    lines += [g.s(width, _B64) for _ in range(n - 2)]
    lines.append(g.s(g.r.randint(20, width - 4), _B64) + "==")
    return lines


def _pem(kind: str, lines: list[str], sep: str = "\n", indent: str = "") -> str:
    head = f"-----BEGIN {kind}{_PK}-----"
    tail = f"-----END {kind}{_PK}-----"
    return sep.join(indent + x for x in [head, *lines, tail])


# --------------------------------------------------------------------------- provider


def _provider(g: _Gen, pos: _PosFn) -> None:
    def p(text: str, shape: str, tok: str) -> None:
        pos(text, "provider", shape, tok)

    t = "AK" + "IA" + g.s(16, _B32)
    p(
        f"$ cat ~/.aws/credentials\n[default]\naws_access_key_id = {t}\n"
        f"aws_secret_access_key = {g.s(40, _B64)}\nregion = eu-west-1\n",
        "aws-access-key-id",
        t,
    )
    t = "gh" + "p_" + g.s(36)
    p(
        f"$ history | grep TOKEN\n  412  export GITHUB_TOKEN={t}\n  413  gh repo list acme\n",
        "github-pat",
        t,
    )
    t = "github" + "_pat_" + g.s(22) + "_" + g.s(59)
    p(
        json.dumps(
            {"tool": "bash", "arguments": {"command": f"echo {t} | gh auth login --with-token"}}
        ),
        "github-fine-grained-pat",
        t,
    )
    t = "gh" + "o_" + g.s(36)
    p(
        f"==> ~/.config/gh/hosts.yml <==\ngithub.com:\n    user: mlin\n"
        f"    oauth_token: {t}\n    git_protocol: https\n",
        "github-oauth",
        t,
    )
    t = "gh" + "s_" + g.s(36)
    p(
        f"Run git clone https://x-access-token:{t}@github.com/acme/billing.git\n"
        "Cloning into 'billing'...\nremote: Enumerating objects: 1432, done.\n",
        "github-app-token",
        t,
    )
    t = "gl" + "pat-" + g.s(20, _URL)
    p(
        f"I exported GITLAB_TOKEN as {t} but `glab mr list` still says 401 Unauthorized. "
        "Does the token need the read_api scope?",
        "gitlab-pat",
        t,
    )
    t = "xo" + "xb-" + g.num(12) + "-" + g.num(13) + "-" + g.s(24)
    p(
        "from slack_sdk import WebClient\n\n"
        f'client = WebClient(token="{t}")\n'
        'client.chat_postMessage(channel="#deploys", text="build green")\n',
        "slack-bot-token",
        t,
    )
    t = "xo" + "xp-" + g.num(12) + "-" + g.num(12) + "-" + g.num(13) + "-" + g.hx(32)
    p(
        f"2024-05-02T10:14:03Z DEBUG slack.http POST https://slack.com/api/users.list "
        f"headers={{'Authorization': 'Bearer {t}'}}\n",
        "slack-user-token",
        t,
    )
    t = "https://hooks.slack.com/" + "services/T" + g.s(8, _UP + _DG) + "/B"
    t += g.s(10, _UP + _DG) + "/" + g.s(24)
    p(
        f"curl -X POST -H 'Content-type: application/json' --data "
        f'\'{{"text":"deploy finished"}}\' {t}\nok\n',
        "slack-webhook",
        t,
    )
    t = "sk" + "_live_" + g.s(99)
    p(
        f"// server/payments.js\nconst stripe = require('stripe')('{t}');\n\n"
        "module.exports = async function charge(amount) {\n",
        "stripe-secret-key",
        t,
    )
    t = "rk" + "_live_" + g.s(99)
    p(f"STRIPE_PUBLISHABLE=pk_live_{g.s(24)}\nSTRIPE_RESTRICTED={t}\n", "stripe-restricted", t)
    t = "wh" + "sec_" + g.s(32)
    p(
        f"ok so the endpoint secret stripe gave me is {t} — why does constructEvent "
        "throw 'No signatures found matching the expected signature'?",
        "stripe-webhook-secret",
        t,
    )
    t = "sk-" + "proj-" + g.s(74, _URL) + "T3Blbk" + "FJ" + g.s(74, _URL)
    p(
        f"In [3]: %env OPENAI_API_KEY={t}\nenv: OPENAI_API_KEY={t}\n",
        "openai-project-key",
        t,
    )
    t = "sk-" + "ant-api03-" + g.s(93, _URL) + "AA"
    p(
        "curl https://api.anthropic.com/v1/messages \\\n"
        f'  -H "x-api-key: {t}" \\\n  -H "anthropic-version: 2023-06-01" \\\n'
        '  -H "content-type: application/json"\n',
        "anthropic-key",
        t,
    )
    t = "AI" + "za" + g.s(35, _URL)
    p(
        f"GET /maps/api/geocode/json?address=1600+Amphitheatre&key={t} HTTP/1.1\n"
        "Host: maps.googleapis.com\nUser-Agent: python-requests/2.31.0\n",
        "google-api-key",
        t,
    )
    t = "SG" + "." + g.s(22, _URL) + "." + g.s(43, _URL)
    p(
        f"<?php\n$email = new \\SendGrid\\Mail\\Mail();\n$sendgrid = new \\SendGrid('{t}');\n"
        "$response = $sendgrid->send($email);\n",
        "sendgrid-key",
        t,
    )
    t = "S" + "K" + g.hx(32)
    p(
        f"from twilio.rest import Client\nclient = Client('{t}', '{g.hx(32)}', 'AC{g.hx(32)}')\n",
        "twilio-api-key",
        t,
    )
    t = "np" + "m_" + g.s(36)
    p(
        f"$ cat .npmrc\n@acme:registry=https://registry.npmjs.org/\n"
        f"//registry.npmjs.org/:_authToken={t}\n",
        "npm-token",
        t,
    )
    t = "py" + "pi-AgEIcHlwaS5vcmc" + g.s(120, _URL)
    p(
        f"$ twine upload -u __token__ -p {t} dist/*\nUploading distributions to "
        "https://upload.pypi.org/legacy/\n",
        "pypi-token",
        t,
    )
    t = "h" + "f_" + g.s(34, _UP + _LO)
    p(
        f"!huggingface-cli login --token {t}\nToken is valid (permission: write).\n"
        "Your token has been saved to /root/.cache/huggingface/token\n",
        "huggingface-token",
        t,
    )
    t = "shp" + "at_" + g.hx(32)
    p(
        "ShopifyAPI::Context.setup(\n  api_key: ENV['SHOPIFY_KEY'],\n"
        f"  access_token: '{t}',\n  host: 'acme.myshopify.com'\n)\n",
        "shopify-token",
        t,
    )
    t = "do" + "p_v1_" + g.hx(64)
    p(
        f"$ cat ~/.config/doctl/config.yaml\naccess-token: {t}\ncontext: default\n",
        "digitalocean-token",
        t,
    )
    t = "da" + "pi" + g.hx(32)
    p(
        f"[DEFAULT]\nhost  = https://adb-{g.num(16)}.7.azuredatabricks.net\ntoken = {t}\n",
        "databricks-token",
        t,
    )
    t = g.num(10) + ":" + "AA" + g.s(33, _URL)
    p(
        f"httpx.HTTPStatusError: Client error '400 Bad Request' for url "
        f"'https://api.telegram.org/bot{t}/sendMessage'\n",
        "telegram-bot-token",
        t,
    )
    t = "hv" + "s." + g.s(90, _URL)
    p(
        "$ vault login -method=userpass username=ops\nSuccess! You are now authenticated.\n\n"
        f"Key                    Value\n---                    -----\ntoken                  {t}\n"
        "token_duration         768h\n",
        "vault-token",
        t,
    )
    t = "gl" + "sa_" + g.s(32) + "_" + g.hx(8)
    p(
        "services:\n  alloy:\n    image: grafana/alloy:latest\n    environment:\n"
        f"      GRAFANA_CLOUD_TOKEN: {t}\n",
        "grafana-service-account",
        t,
    )
    t = "NR" + "AK-" + g.s(27, _UP + _DG)
    p(
        "--- a/newrelic.yml\n+++ b/newrelic.yml\n@@ -3,2 +3,2 @@\n"
        f"-  api_key: <%= ENV['NR_KEY'] %>\n+  api_key: {t}\n",
        "newrelic-user-key",
        t,
    )
    t = "AGE-" + "SECRET-KEY-1" + g.s(58, _UP + "023456789")
    p(
        f"# created: 2024-03-11T09:12:44+01:00\n# public key: age1{g.s(58, _LO + _DG)}\n{t}\n",
        "age-secret-key",
        t,
    )
    t = "PM" + "AK-" + g.hx(24) + "-" + g.hx(34)
    p(f"这个 Postman 的 key 是 {t}，为什么调用 /collections 一直返回 401？", "postman-key", t)
    t = "lin" + "_api_" + g.s(40)
    p(
        f"import {{ LinearClient }} from '@linear/sdk';\n\n"
        f"const linear = new LinearClient({{ apiKey: '{t}' }});\n",
        "linear-key",
        t,
    )
    t = "gs" + "k_" + g.s(52)
    p(f'from groq import Groq\nclient = Groq(api_key="{t}")\n', "groq-key", t)
    t = "r" + "8_" + g.s(37)
    p(
        f"$ REPLICATE_API_TOKEN={t} python predict.py\nstarting prediction...\n",
        "replicate-token",
        t,
    )
    t = "dp" + ".st." + "prd." + g.s(40)
    p(
        "$ doppler configs tokens create ci --plain\n" + t + "\n",
        "doppler-token",
        t,
    )
    t = "pu" + "l-" + g.hx(40)
    p(
        f"Run pulumi login\n  env:\n    PULUMI_ACCESS_TOKEN: {t}\n"
        "Logged in to pulumi.com as acme-ci (https://app.pulumi.com/acme-ci)\n",
        "pulumi-token",
        t,
    )
    uid = base64.b64encode(g.num(19).encode()).decode().rstrip("=")
    t = uid + "." + g.s(6, _URL) + "." + g.s(38, _URL)
    p(f"bot.run('{t}')  # TODO move to env\n", "discord-bot-token", t)


# ------------------------------------------------------------------------ private key


def _private_keys(g: _Gen, pos: _PosFn) -> None:
    def p(text: str, shape: str, secret: str) -> None:
        pos(text, "private-key", shape, secret)

    ln = _pem_lines(g, "MIIEpAIBAAKCAQEA", 25)
    p("$ cat ~/.ssh/id_rsa\n" + _pem("RSA ", ln) + "\n$ ", "pem-rsa", ln[7])

    ln = _pem_lines(g, "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", 26)
    sa = {
        "type": "service_account",
        "project_id": "acme-data-prod",
        "private_key_id": g.hx(40),
        "private_key": _pem("", ln) + "\n",
        "client_email": "etl@acme-data-prod.iam.gserviceaccount.com",
    }
    p(json.dumps(sa, indent=2), "gcp-service-account-json", ln[12])

    ln = _pem_lines(g, "MHcCAQEEI", 4)
    ln[-1] = g.s(24, _B64) + "=="
    body = _pem("EC ", ln, indent="    ")
    p(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: api-tls\ntype: kubernetes.io/tls\n"
        f"stringData:\n  tls.crt: |\n    -----BEGIN CERTIFICATE-----\n    ...\n  tls.key: |\n{body}\n",
        "pem-ec-k8s",
        ln[1],
    )

    ln = _pem_lines(
        g, "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW", 7, 70
    )
    p(
        "this deploy key keeps getting 'Load key: invalid format' in the action, here it is:\n\n"
        + _pem("OPENSSH ", ln)
        + "\n\nwhat am I doing wrong?",
        "openssh-chat",
        ln[2],
    )

    ln = _pem_lines(g, "MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQI", 28)
    p(
        'SIGNING_KEY = b"""\n' + _pem("ENCRYPTED ", ln) + '\n"""\n\n'
        'key = serialization.load_pem_private_key(SIGNING_KEY, password=b"hunter-ops")\n',
        "pem-encrypted-python",
        ln[9],
    )

    ln = _pem_lines(g, "MIIEowIBAAKCAQEA", 25)
    diff = "\n".join("+" + x for x in _pem("RSA ", ln).split("\n"))
    p(
        "diff --git a/deploy/keys/app.pem b/deploy/keys/app.pem\nnew file mode 100644\n"
        "--- /dev/null\n+++ b/deploy/keys/app.pem\n@@ -0,0 +1,27 @@\n" + diff + "\n",
        "pem-rsa-diff",
        ln[14],
    )

    ln = [g.s(64, _B64) for _ in range(20)] + [g.s(40, _B64)]
    p(
        "$ gpg --export-secret-keys --armor ops@acme.io\n"
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
        + "\n".join(ln)
        + f"\n={g.s(4, _B64)}\n-----END PGP PRIVATE KEY BLOCK-----\n",
        "pgp-private-block",
        ln[5],
    )

    ln = _pem_lines(g, "MIIEvgIBADANBgkqhkiG9w0BAQEFAASC", 26)
    p(
        f'JWT_ISSUER=auth.acme.io\nJWT_PRIVATE_KEY="{_pem("", ln, sep=chr(92) + "n")}"\n',
        "pem-escaped-dotenv",
        ln[4],
    )

    ln = _pem_lines(g, "MIIBuwIBAAKBgQ", 10)
    p(
        'resource "tls_private_key" "legacy" {}\n\nlocals {\n  legacy_key = <<-EOT\n'
        + _pem("DSA ", ln, indent="    ")
        + "\n    EOT\n}\n",
        "pem-dsa-terraform",
        ln[3],
    )

    ln = _pem_lines(g, "b3BlbnNzaC1rZXktdjEAAAAACmFlczI1Ni1jdHIAAAAGYmNyeXB0AAAAGAAAABD", 8, 70)
    p(
        "deploy_user: deploy\ndeploy_ssh_key: |\n" + _pem("OPENSSH ", ln, indent="  ") + "\n",
        "openssh-ansible-vars",
        ln[4],
    )

    ln = _pem_lines(g, "MIIEogIBAAKCAQEA", 25)
    args = {"path": "certs/dev.key", "content": _pem("RSA ", ln) + "\n"}
    p(
        json.dumps({"name": "write_file", "arguments": args}),
        "pem-rsa-tool-call",
        ln[20],
    )

    ln = _pem_lines(g, "MHcCAQEEI", 4)
    ln[-1] = g.s(24, _B64) + "=="
    p(
        "print(key.private_bytes(Encoding.PEM, PrivateFormat.TraditionalOpenSSL, NoEncryption())"
        ".decode())\n" + _pem("EC ", ln) + "\n",
        "pem-ec-notebook",
        ln[2],
    )

    priv = [g.s(64, _B64) for _ in range(13)] + [g.s(24, _B64)]
    pub = [g.s(64, _B64) for _ in range(5)] + [g.s(44, _B64)]
    p(
        "PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nComment: rsa-key-20240311\n"
        "Public-Lines: 6\n"
        + "\n".join(pub)
        + "\nPrivate-Lines: 14\n"
        + "\n".join(priv)
        + f"\nPrivate-MAC: {g.hx(64)}\n",
        "putty-ppk",
        priv[6],
    )


# ------------------------------------------------------------------ connection string


def _conn(g: _Gen, pos: _PosFn) -> None:
    def p(text: str, shape: str, secret: str) -> None:
        pos(text, "connection-string", shape, secret)

    pw = g.s(20)
    p(
        f"NODE_ENV=production\nDATABASE_URL=postgres://app_user:{pw}@db.internal.acme.io:5432/app\n",
        "postgres-url",
        pw,
    )
    pw = g.human().replace("@", "").replace("#", "").replace("?", "").replace("%", "")
    pw = pw.replace("/", "")
    p(
        "from sqlalchemy import create_engine\n\nengine = create_engine(\n"
        f'    "postgresql+psycopg2://etl:{pw}@10.0.4.17:5432/warehouse",\n    pool_size=10,\n)\n',
        "sqlalchemy-url",
        pw,
    )
    pw = g.s(18)
    p(
        "2024/05/02 10:22:41 main.go:58: connecting with dsn "
        f"orders:{pw}@tcp(mysql-primary:3306)/orders?parseTime=true&loc=UTC\n",
        "go-mysql-dsn",
        pw,
    )
    pw = g.s(16)
    p(
        "const { MongoClient } = require('mongodb');\n"
        f"const uri = 'mongodb+srv://admin:{pw}@cluster0.x7k2p.mongodb.net/?retryWrites=true&w=majority';\n",
        "mongodb-srv",
        pw,
    )
    pw = g.s(22)
    p(
        "mongo:\n  uri: mongodb://svc_reports:"
        f"{pw}@mongo-0.mongo:27017,mongo-1.mongo:27017/reports?replicaSet=rs0&authSource=admin\n",
        "mongodb-replicaset",
        pw,
    )
    pw = g.s(32)
    p(
        f"# celeryconfig.py\nbroker_url = 'redis://:{pw}@redis.prod.internal:6379/0'\n"
        "result_backend = broker_url\n",
        "redis-url",
        pw,
    )
    pw = g.s(34)
    p(
        f"upstash 给的连接串 rediss://default:{pw}@eu1-fond-hornet-38211.upstash.io:6379 "
        "连不上，报 ECONNRESET，是要开 TLS 吗？",
        "rediss-url-chat",
        pw,
    )
    pw = g.s(14)
    p(
        "services:\n  worker:\n    environment:\n"
        f"      - AMQP_URL=amqp://jobs:{pw}@rabbitmq:5672/prod\n",
        "amqp-url",
        pw,
    )
    pw = g.human().replace(";", "")
    p(
        "spring.datasource.url=jdbc:sqlserver://sql01.corp.local:1433;databaseName=Payroll;"
        f"user=sa;password={pw};encrypt=true;trustServerCertificate=true\n",
        "jdbc-sqlserver",
        pw,
    )
    pw = g.s(24)
    p(
        json.dumps(
            {
                "ConnectionStrings": {
                    "Default": "Server=tcp:acme-sql.database.windows.net,1433;Initial "
                    f"Catalog=orders;User ID=sqladmin;Password={pw};Encrypt=True;"
                }
            },
            indent=2,
        ),
        "ado-net",
        pw,
    )
    pw = g.s(86, _B64) + "=="
    p(
        "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acmelogs;"
        f"AccountKey={pw};EndpointSuffix=core.windows.net\n",
        "azure-storage",
        pw,
    )
    pw = g.s(43, _B64) + "="
    p(
        "Endpoint=sb://acme-bus.servicebus.windows.net/;SharedAccessKeyName="
        f"RootManageSharedAccessKey;SharedAccessKey={pw}",
        "azure-service-bus",
        pw,
    )
    pw = g.s(20)
    p(
        "conn = pyodbc.connect(\n    'Driver={ODBC Driver 18 for SQL Server};Server=tcp:10.1.2.3,1433;'\n"
        f"    'Database=ledger;Uid=ledger_rw;Pwd={{{pw}}};Encrypt=yes;'\n)\n",
        "odbc",
        pw,
    )
    pw = g.s(18)
    p(
        f'$ psql "host=pg.acme.io port=5432 dbname=analytics user=analyst password={pw} '
        'sslmode=require"\npsql (16.2)\nSSL connection (protocol: TLSv1.3)\nanalytics=>',
        "libpq-keyvalue",
        pw,
    )
    pw = g.s(16)
    p(
        "jdbc.url=jdbc:mysql://mysql.acme.io:3306/shop?useSSL=true&user=shop_app"
        f"&password={pw}&serverTimezone=UTC\n",
        "jdbc-mysql-params",
        pw,
    )
    pw = g.s(12)
    p(
        f"$ wget ftp://backup:{pw}@ftp.acme-legacy.com/dumps/2024-05-01.sql.gz\n"
        "--2024-05-02 03:00:01--  ftp://ftp.acme-legacy.com/dumps/2024-05-01.sql.gz\n",
        "ftp-url",
        pw,
    )
    pw = g.s(16, _LO)
    p(
        f"EMAIL_URL=smtps://alerts%40acme.io:{pw}@smtp.gmail.com:465\n",
        "smtp-url",
        pw,
    )
    pw = g.human().replace("@", "").replace("/", "").replace("#", "").replace("?", "")
    pw = pw.replace("%", "")
    p(
        f"$ cat ~/.git-credentials\nhttps://jdoe:{pw}@git.corp.acme.io\n",
        "git-credentials",
        pw,
    )
    pw = g.s(14)
    p(
        f"$ sqlplus scott/{pw}@//ora-db.acme.io:1521/ORCLPDB1\n\n"
        "SQL*Plus: Release 19.0.0.0.0 - Production\nConnected to:\n",
        "oracle-ezconnect",
        pw,
    )
    pw = g.s(20)
    p(
        "let client = clickhouse::Client::default()\n"
        f'    .with_url("http://default:{pw}@ch.acme.io:8123")\n    .with_database("events");\n',
        "clickhouse-url-rust",
        pw,
    )
    pw = g.s(43, _URL)
    p(
        f"NEO4J_URI=neo4j+s://neo4j:{pw}@5f2a9c1b.databases.neo4j.io\n",
        "neo4j-url",
        pw,
    )
    pw = g.s(18)
    p(
        "SNOWFLAKE_URL = (\n"
        f'    "snowflake://dbt_user:{pw}@xy12345.eu-central-1/ANALYTICS/PUBLIC"\n'
        '    "?warehouse=TRANSFORMING&role=DBT"\n)\n',
        "snowflake-url",
        pw,
    )
    pw = g.s(20)
    p(
        "output {\n  elasticsearch {\n"
        f'    hosts => ["https://elastic:{pw}@es.internal:9200"]\n    index => "logs-%{{+YYYY.MM.dd}}"\n  }}\n}}\n',
        "elasticsearch-url",
        pw,
    )
    pw = g.s(22)
    p(
        f"cockroach 连接串：postgresql://root:{pw}@free-tier.gcp-us-central1.cockroachlabs.cloud"
        ":26257/defaultdb?sslmode=verify-full 帮我看下为什么 SSL 验证失败",
        "cockroach-url-chat",
        pw,
    )
    raw = g.s(8) + "%40" + g.s(6) + "%23" + g.s(4)
    p(
        "MongoServerError: bad auth : Authentication failed.\n    at Connection.onMessage\n"
        f"  uri: 'mongodb://ingest:{raw}@10.0.0.12:27017/metrics'\n",
        "mongodb-urlencoded",
        raw,
    )
    pw = g.s(20)
    p(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: api-config\ndata:\n"
        f'  SQLALCHEMY_DATABASE_URI: "mssql+pyodbc://sa:{pw}@mssql:1433/app?driver=ODBC+Driver+18"\n',
        "mssql-url-configmap",
        pw,
    )


# ------------------------------------------------------------------------------- jwt


def _jwts(g: _Gen, pos: _PosFn) -> None:
    def p(text: str, shape: str, tok: str) -> None:
        pos(text, "jwt", shape, tok)

    def claims() -> dict[str, object]:
        iat = 1714000000 + g.r.randint(0, 9000000)
        return {"sub": g.num(8), "name": g.word(), "iat": iat, "exp": iat + 3600}

    t = _jwt(g, "HS256", claims())
    p(
        "> GET /api/v2/orders HTTP/2\n> Host: api.acme.io\n> user-agent: curl/8.5.0\n"
        f"> authorization: Bearer {t}\n>\n< HTTP/2 403\n",
        "curl-verbose-bearer",
        t,
    )
    t = _jwt(g, "HS256", claims())
    p(
        json.dumps({"access_token": t, "token_type": "Bearer", "expires_in": 3600}),
        "oauth-response-json",
        t,
    )
    t = _jwt(g, "HS256", claims())
    p(f"> localStorage.getItem('auth_token')\n< '{t}'\n", "devtools-console", t)
    t = _jwt(g, "HS256", {"iss": "supabase", "ref": g.s(20, _LO), "role": "service_role"})
    p(
        f"NEXT_PUBLIC_SUPABASE_URL=https://{g.s(20, _LO)}.supabase.co\n"
        f"SUPABASE_SERVICE_ROLE_KEY={t}\n",
        "supabase-service-role",
        t,
    )
    t = _jwt(g, "HS256", claims())
    p(
        f'headers = {{"Authorization": f"Bearer {{TOKEN}}"}}\nTOKEN = "{t}"\n'
        'r = requests.get(f"{BASE}/me", headers=headers)\n',
        "python-constant",
        t,
    )
    t = _jwt(g, "HS256", claims())
    p(
        f"Cookie: theme=dark; session={t}; _ga=GA1.2.{g.num(9)}.{g.num(10)}\n",
        "cookie-header",
        t,
    )
    t = _jwt(g, "HS256", claims())
    p(
        f"[ws] connecting to wss://rt.acme.io/socket/websocket?token={t}&vsn=2.0.0\n"
        "[ws] closed: 1006\n",
        "query-param",
        t,
    )
    t = _jwt(g, "HS256", claims())
    p(f"这个 token 解析不出来：{t}\n后端说签名不对", "chat-chinese", t)
    c: dict[str, object] = {
        "iss": "https://login.acme.io/",
        "aud": g.s(24),
        "sub": g.uuid(),
        "nonce": g.s(16),
        "iat": 1714000000,
    }
    t = _jwt(g, "RS256", c)
    p(f"INFO oidc.callback id_token={t} state={g.s(12)}\n", "oidc-id-token-log", t)
    c = {"iss": "kubernetes/serviceaccount", "sub": "system:serviceaccount:ci:deployer"}
    t = _jwt(g, "RS256", c)
    p(
        f"users:\n- name: ci-deployer\n  user:\n    token: {t}\n",
        "kubeconfig-token",
        t,
    )
    t = _jwt(g, "HS256", claims())
    p(
        json.dumps(
            {
                "name": "staging",
                "values": [
                    {"key": "baseUrl", "value": "https://staging.acme.io"},
                    {"key": "jwt", "value": t},
                ],
            },
            indent=2,
        ),
        "postman-environment",
        t,
    )
    t = _jwt(g, "ES256", claims())
    p(
        "--- FAIL: TestAuthMiddleware (0.01s)\n"
        f"    auth_test.go:41: unexpected 401 for token {t}\n",
        "go-test-log",
        t,
    )
    t = _jwt(g, "HS256", claims())
    p(f"the token is {t} — can you decode it and tell me when it expires?", "chat-english", t)


# -------------------------------------------------------------------------- labelled


def _labelled(g: _Gen, pos: _PosFn) -> None:
    rows: list[tuple[str, str, Callable[[str], str]]] = []

    def add(shape: str, kind: str, fmt: Callable[[str], str]) -> None:
        rows.append((shape, kind, fmt))

    add("python-settings", "h", lambda v: f'# settings.py\nDEBUG = False\nDB_PASSWORD = "{v}"\n')
    add(
        "python-boto3-kwarg",
        "aws",
        lambda v: (
            's3 = boto3.client(\n    "s3",\n    aws_access_key_id=os.environ["AK"],\n'
            f'    aws_secret_access_key="{v}",\n)\n'
        ),
    )
    add("python-notebook-environ", "r", lambda v: f'In [1]: os.environ["API_KEY"] = "{v}"\n')
    add("django-secret-key", "dj", lambda v: f"SECRET_KEY = '{v}'\nALLOWED_HOSTS = ['*']\n")
    add("flask-config", "r", lambda v: f'app = Flask(__name__)\napp.config["SECRET_KEY"] = "{v}"\n')
    add(
        "pydantic-default",
        "h",
        lambda v: (
            f'class Settings(BaseSettings):\n    db_user: str = "app"\n    db_password: str = "{v}"\n'
        ),
    )
    add(
        "js-const",
        "r",
        lambda v: f'const apiKey = "{v}";\nfetch(`${{BASE}}/v1/items?key=${{apiKey}}`);\n',
    )
    add(
        "js-object",
        "r",
        lambda v: f"export default {{\n  clientId: 'web',\n  clientSecret: '{v}',\n}};\n",
    )
    add("js-env-fallback", "r", lambda v: f'const secret = process.env.JWT_SECRET || "{v}";\n')
    add(
        "ts-template-literal",
        "h",
        lambda v: f"class Api {{\n  private readonly token = `{v}`;\n}}\n",
    )
    add("go-const", "h", lambda v: f'package db\n\nconst dbPassword = "{v}"\n')
    add(
        "go-struct",
        "r",
        lambda v: f'cfg := &Config{{\n\tUser:     "svc",\n\tPassword: "{v}",\n}}\n',
    )
    add("go-setenv", "r", lambda v: f'os.Setenv("SECRET_TOKEN", "{v}")\n')
    add("java-constant", "r", lambda v: f'private static final String API_SECRET = "{v}";\n')
    add(
        "spring-properties",
        "h",
        lambda v: f"spring.datasource.username=orders\nspring.datasource.password={v}\n",
    )
    add("kotlin-val", "r", lambda v: f'object Keys {{\n    const val SIGNING_KEY = "{v}"\n}}\n')
    add(
        "csharp-assign",
        "r",
        lambda v: f'options.ClientId = "portal";\noptions.ClientSecret = "{v}";\n',
    )
    add(
        "appsettings-json",
        "r",
        lambda v: json.dumps(
            {"Payments": {"Endpoint": "https://pay.acme.io", "ApiKey": v}}, indent=2
        ),
    )
    add(
        "ruby-config", "h", lambda v: f"Acme.configure do |config|\n  config.api_key = '{v}'\nend\n"
    )
    add(
        "rails-credentials",
        "hx",
        lambda v: f"# config/credentials.yml (decrypted)\nsecret_key_base: {v}\n",
    )
    add(
        "php-define",
        "h",
        lambda v: f"define( 'DB_USER', 'wp' );\ndefine( 'DB_PASSWORD', '{v}' );\n",
    )
    add("php-variable", "q", lambda v: f"<?php\n$user = 'admin';\n$password = '{v}';\n")
    add(
        "laravel-app-key",
        "b64",
        lambda v: f"APP_NAME=Shop\nAPP_ENV=production\nAPP_KEY=base64:{v}\n",
    )
    add("rust-const", "r", lambda v: f'const API_KEY: &str = "{v}";\n')
    add("swift-let", "r", lambda v: f'enum Secrets {{\n    static let clientSecret = "{v}"\n}}\n')
    add(
        "elixir-config",
        "h",
        lambda v: (
            f'config :shop, Shop.Repo,\n  username: "shop",\n  password: "{v}",\n  hostname: "db"\n'
        ),
    )
    add("scala-val", "r", lambda v: f'val secretKey: String = "{v}"\n')
    add("hocon", "h", lambda v: f'db {{\n  user = "play"\n  password = "{v}"\n}}\n')
    add("yaml-plain", "h", lambda v: f"database:\n  host: db\n  user: app\n  password: {v}\n")
    add("yaml-quoted-apikey", "r", lambda v: f'weather:\n  provider: owm\n  api_key: "{v}"\n')
    add("yaml-single-quoted-with-dquote", "dq", lambda v: f"smtp:\n  password: '{v}'\n")
    add("json-password", "h", lambda v: json.dumps({"username": "svc-report", "password": v}))
    add(
        "json-unicode-password",
        "uni",
        lambda v: json.dumps({"user": "li.wei", "password": v}, ensure_ascii=False),
    )
    add(
        "json-tool-call-mysql-flag",
        "r",
        lambda v: json.dumps(
            {"name": "bash", "arguments": {"command": f"mysql -u root -p{v} -e 'SHOW DATABASES'"}}
        ),
    )
    add("toml-table", "h", lambda v: f'[database]\nurl = "localhost"\npassword = "{v}"\n')
    add(
        "toml-token",
        "r",
        lambda v: (
            f'[registries.internal]\nindex = "sparse+https://crates.acme.io/"\ntoken = "{v}"\n'
        ),
    )
    add(
        "pypirc",
        "r",
        lambda v: (
            f"[distutils]\nindex-servers = internal\n\n[internal]\nusername = deploy\npassword = {v}\n"
        ),
    )
    add("my-cnf", "h", lambda v: f"[client]\nuser=root\npassword={v}\n")
    add("ini-spaces", "sp", lambda v: f"[mail]\nserver = smtp.acme.io\npassword = {v}\n")
    add(
        "terraform-resource",
        "h",
        lambda v: (
            f'resource "aws_db_instance" "main" {{\n  username = "admin"\n  password = "{v}"\n}}\n'
        ),
    )
    add(
        "terraform-variable-default",
        "r",
        lambda v: f'variable "api_token" {{\n  type    = string\n  default = "{v}"\n}}\n',
    )
    add("tfvars", "h", lambda v: f'region      = "eu-west-1"\ndb_password = "{v}"\n')
    add(
        "maven-settings-xml",
        "h",
        lambda v: (
            f"<server>\n  <id>nexus</id>\n  <username>ci</username>\n  <password>{v}</password>\n</server>\n"
        ),
    )
    add(
        "web-config-xml",
        "r",
        lambda v: f'<appSettings>\n  <add key="ApiSecret" value="{v}" />\n</appSettings>\n',
    )
    add("dotenv", "r", lambda v: f"PORT=3000\nSESSION_SECRET={v}\n")
    add("dotenv-quoted-spaces", "sp", lambda v: f'SMTP_USER=alerts\nSMTP_PASSWORD="{v}"\n')
    add("shell-export", "h", lambda v: f"export ADMIN_PASSWORD='{v}'\n./bootstrap.sh\n")
    add("curl-basic-user", "r", lambda v: f"$ curl -u admin:{v} https://jenkins.acme.io/api/json\n")
    add(
        "sshpass",
        "h",
        lambda v: f"sshpass -p '{v}' ssh -o StrictHostKeyChecking=no root@10.0.0.5\n",
    )
    add(
        "powershell-env",
        "r",
        lambda v: f'PS C:\\repo> $env:API_TOKEN = "{v}"\nPS C:\\repo> npm run sync\n',
    )
    add(
        "powershell-securestring",
        "h",
        lambda v: (
            f'$pw = ConvertTo-SecureString "{v}" -AsPlainText -Force\n$cred = New-Object PSCredential("svc", $pw)\n'
        ),
    )
    add("dockerfile-env", "r", lambda v: f"FROM node:20-alpine\nENV DB_PASSWORD={v}\nCOPY . .\n")
    add("dockerfile-arg", "r", lambda v: f"ARG NPM_TOKEN={v}\nRUN npm ci\n")
    add(
        "compose-list-env",
        "h",
        lambda v: (
            f"  db:\n    image: postgres:16\n    environment:\n      - POSTGRES_PASSWORD={v}\n"
        ),
    )
    add(
        "compose-map-env",
        "h",
        lambda v: f'  mysql:\n    environment:\n      MYSQL_ROOT_PASSWORD: "{v}"\n',
    )
    add(
        "k8s-secret-stringdata",
        "h",
        lambda v: f"kind: Secret\nmetadata:\n  name: db\nstringData:\n  password: {v}\n",
    )
    add(
        "k8s-env-name-value",
        "r",
        lambda v: (
            f'        env:\n        - name: API_KEY\n          value: "{v}"\n        - name: LOG_LEVEL\n          value: info\n'
        ),
    )
    add("helm-values", "h", lambda v: f"auth:\n  enabled: true\n  rootPassword: {v}\n")
    add(
        "helm-set-flag",
        "r",
        lambda v: f"helm upgrade --install cache bitnami/redis --set auth.password={v}\n",
    )
    add("ansible-vars", "h", lambda v: f"---\nansible_user: deploy\nansible_become_password: {v}\n")
    add(
        "ansible-inventory",
        "h",
        lambda v: f"[web]\n10.0.1.11 ansible_user=ubuntu ansible_ssh_pass={v}\n",
    )
    add(
        "github-actions-env",
        "r",
        lambda v: (
            f"jobs:\n  deploy:\n    runs-on: ubuntu-latest\n    env:\n      DEPLOY_TOKEN: {v}\n"
        ),
    )
    add(
        "http-x-api-key",
        "r",
        lambda v: f"POST /v1/ingest HTTP/1.1\nHost: collector.acme.io\nX-API-Key: {v}\n",
    )
    add(
        "http-token-auth", "r", lambda v: f"GET /api/projects/ HTTP/1.1\nAuthorization: Token {v}\n"
    )
    add("http-cookie-session", "r", lambda v: f"Cookie: csrftoken=abc; sessionid={v}\n")
    add(
        "docker-login-flag",
        "h",
        lambda v: f"$ docker login registry.acme.io -u ci --password {v}\nLogin Succeeded\n",
    )
    add("cli-api-key-eq", "r", lambda v: f"$ acme-cli deploy --region eu --api-key={v} --yes\n")
    add("sql-create-user", "h", lambda v: f"CREATE USER reporting WITH PASSWORD '{v}';\n")
    add("sql-alter-user", "h", lambda v: f"ALTER USER 'root'@'localhost' IDENTIFIED BY '{v}';\n")
    add(
        "chat-my-password",
        "h",
        lambda v: f"my password is {v} and it still says access denied, any idea?",
    )
    add("chat-zh-password", "h", lambda v: f"这是我的密码：{v}，帮我登录一下测试环境")
    add("chat-token-is", "r", lambda v: f"the token is {v}, can you check why the webhook fails?")
    add("chat-zh-db-password", "sp", lambda v: f"数据库密码是 {v} ，你直接连上去看看表结构")
    add("chat-api-key-colon", "r", lambda v: f"API key: {v}\nplease add it to the config for me")
    add("chat-zh-api-key", "r", lambda v: f"我的 API 密钥是 {v}")
    add(
        "yaml-chinese-label",
        "uni",
        lambda v: f"服务器:\n  地址: 10.0.0.8\n  用户名: root\n  密码: {v}\n",
    )
    add("netrc", "h", lambda v: f"machine api.heroku.com\n  login ops@acme.io\n  password {v}\n")
    add(
        "git-credential-fill",
        "h",
        lambda v: f"protocol=https\nhost=git.acme.io\nusername=bot\npassword={v}\n",
    )
    add("redis-conf", "h", lambda v: f"bind 0.0.0.0\nrequirepass {v}\nmaxmemory 2gb\n")
    add("gradle-properties", "h", lambda v: f"signing.keyId=ABCD1234\nsigning.password={v}\n")
    add(
        "log-kv",
        "h",
        lambda v: (
            f"2024-05-02 11:03:12 INFO auth login attempt user=alice password={v} ip=10.2.3.4\n"
        ),
    )
    add(
        "traceback-locals",
        "q",
        lambda v: (
            f"  File \"app/db.py\", line 42, in connect\n    conn = psycopg.connect(**kw)\n    kw = {{'user': 'app', 'password': '{v}'}}\n"
        ),
    )
    add(
        "diff-added-secret",
        "r",
        lambda v: (
            f"@@ -10,3 +10,4 @@ webhook:\n   url: https://hooks.acme.io\n+  signing_secret: {v}\n"
        ),
    )
    add(
        "kafka-jaas",
        "h",
        lambda v: (
            f'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="app" password="{v}";\n'
        ),
    )
    add("requests-auth-tuple", "h", lambda v: f'resp = requests.get(url, auth=("admin", "{v}"))\n')
    add("chat-passphrase", "sp", lambda v: f"the passphrase is {v}")
    add(
        "aws-secret-env",
        "aws",
        lambda v: f"AWS_ACCESS_KEY_ID=$(cat key_id)\nAWS_SECRET_ACCESS_KEY={v}\n",
    )
    add(
        "client-secret-azure",
        "az",
        lambda v: f'AZURE_CLIENT_ID={g.uuid()}\nAZURE_CLIENT_SECRET="{v}"\n',
    )

    for shape, kind, fmt in rows:
        if kind == "h":
            v = g.human()
        elif kind == "r":
            v = g.s(g.r.choice((24, 32, 40)))
        elif kind == "hx":
            v = g.hx(128)
        elif kind == "aws":
            v = g.s(40, _B64)
        elif kind == "dj":
            v = g.s(50, _LO + _DG + "!@#%^&*(-_=+)")
        elif kind == "b64":
            v = base64.b64encode(g.r.randbytes(32)).decode()
        elif kind == "az":
            v = g.s(3) + "8Q~" + g.s(34, _URL + ".~")
        elif kind == "sp":
            v = g.phrase()
        elif kind == "dq":
            v = f'{g.word()}"{g.s(6)}"{g.r.randint(10, 99)}'
        elif kind == "q":
            v = g.human().replace("'", "") + '"' + g.s(4)
        else:  # uni
            v = (
                g.r.choice(("天空", "月亮", "长城", "熊猫"))
                + g.word()
                + f"{g.r.randint(100, 999)}！Sé"
            )
        pos(fmt(v), "labelled", shape, v)


# ------------------------------------------------------------------------- negatives


def _placeholders(g: _Gen, neg: _NegFn) -> None:
    def n(text: str, shape: str) -> None:
        neg(text, "placeholder", shape)

    n("# .env.example\nDATABASE_URL=\nOPENAI_API_KEY=\nSTRIPE_SECRET_KEY=\n", "env-example-empty")
    n("API_KEY=your-api-key-here\nAPI_SECRET=your-api-secret-here\n", "your-key-here")
    n('password: "changeme"  # change before deploying\n', "changeme")
    n("export GITHUB_TOKEN=<YOUR_GITHUB_TOKEN>\n", "angle-bracket")
    n("OPENAI_API_KEY=sk-" + "proj-" + "*" * 20 + g.s(4) + "\n", "masked-openai")
    n("token: gh" + "p_" + "x" * 36 + "\n", "x-filled-github")
    n(
        "[default]\naws_access_key_id = AK" + "IAIOSFODNN7" + "EXAMPLE\n"
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY\n",
        "aws-docs-example",
    )
    n(
        "- name: Publish\n  run: npm publish\n  env:\n    NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}\n",
        "gha-secret-ref",
    )
    n("db:\n  password: ${DB_PASSWORD}\n  user: ${DB_USER:-app}\n", "env-interpolation")
    n("password: vault:secret/data/prod/db#password\n", "vault-ref")
    n(
        'export ANTHROPIC_API_KEY="$(op read op://Engineering/Anthropic/credential)"\n',
        "1password-ref",
    )
    n(
        "env:\n- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: postgres\n"
        "      key: password\n",
        "k8s-secretkeyref",
    )
    n("password: {{ .Values.postgresql.auth.password | quote }}\n", "helm-template")
    n("DATABASE_URL=postgres://user:password@localhost:5432/mydb\n", "docs-conn-string")
    n('conn = "postgres://${PGUSER}:${PGPASSWORD}@${PGHOST}/app"\n', "conn-string-vars")
    n("Password: ********\nToken: [REDACTED]\n", "redacted-output")
    n("Authorization: Bearer <token>\n", "bearer-placeholder")
    n("AWS_SECRET_ACCESS_KEY=\nAWS_SESSION_TOKEN=\n", "empty-values")
    n("client = WebClient(token='xo" + "xb-your-bot-token')\n", "slack-placeholder")
    n(
        "curl -H 'x-api-key: sk-" + "ant-api03-XXXXXXXXXXXXXXXX...' https://api.anthropic.com\n",
        "x-filled-anthropic",
    )
    n(
        "-----BEGIN " + _PK + "-----\n...\n-----END " + _PK + "-----\n",
        "elided-pem",
    )
    n(
        "DB_PASSWORD=@Microsoft.KeyVault(SecretUri=https://acme-kv.vault.azure.net/secrets/db-password/)\n",
        "azure-keyvault-ref",
    )
    n(
        'secret = client.access_secret_version(name="projects/acme/secrets/api-key/versions/latest")\n',
        "gcp-secret-path",
    )
    n(
        f"arn:aws:secretsmanager:us-east-1:{g.num(12)}:secret:prod/db-credentials-{g.s(6)}\n",
        "aws-secret-arn",
    )
    n("mysql -u root -p$MYSQL_ROOT_PASSWORD -h db\n", "shell-var-flag")
    n('STRIPE_KEY = "sk' + "_test_" + "0" * 24 + '"  # fixture\n', "zeroed-fixture")
    n(
        'def test_login(client):\n    r = client.post("/login", json={"user": "alice", "password": "test-password"})\n',
        "test-fixture",
    )
    n("token: eyJhbGciOi...（省略）\n", "truncated-jwt")
    n("API 密钥：在这里填写你的密钥\n", "zh-fill-in")
    n(f"Your key ending in ...{g.s(4)} was rotated on 2024-04-30.\n", "last-four")
    n('password = "<%= @db_password %>"\n', "erb-template")
    n("  api_key: !vault |\n    $ANSIBLE_VAULT;1.1;AES256\n", "ansible-vault-header")


def _hashes(g: _Gen, neg: _NegFn) -> None:
    def n(text: str, shape: str) -> None:
        neg(text, "hash", shape)

    log = "\n".join(f"{g.hx(7)} {m}" for m in ("fix token refresh", "bump deps", "add retry"))
    n("$ git log --oneline -3\n" + log + "\n", "git-log-short")
    n(f"commit {g.hx(40)}\nAuthor: Jane <jane@acme.io>\nDate:   Tue Apr 30 2024\n", "git-commit")
    n(f"$ sha256sum dist/app.tar.gz\n{g.hx(64)}  dist/app.tar.gz\n", "sha256sum")
    b = base64.b64encode(g.r.randbytes(64)).decode()
    n(f'"node_modules/lodash": {{\n  "integrity": "sha512-{b}"\n}}\n', "npm-integrity")
    n(f"requests==2.31.0 \\\n    --hash=sha256:{g.hx(64)}\n", "pip-hash")
    n(
        f"Digest: sha256:{g.hx(64)}\nStatus: Downloaded newer image for python:3.12\n",
        "docker-digest",
    )
    b = base64.b64encode(g.r.randbytes(32)).decode()
    n(f"golang.org/x/net v0.24.0 h1:{b}\n", "go-sum")
    n(f"$ md5sum backup.sql\n{g.hx(32)}  backup.sql\n", "md5sum")
    n(f"index {g.hx(7)}..{g.hx(7)} 100644\n--- a/auth.py\n+++ b/auth.py\n", "diff-index")
    b = base64.b64encode(g.r.randbytes(48)).decode()
    n(
        f'<script src="https://cdn.acme.io/lib.js" integrity="sha384-{b}" crossorigin></script>\n',
        "sri",
    )
    n(f"ED25519 key fingerprint is SHA256:{_b64url(g.r.randbytes(32))}.\n", "ssh-fingerprint")
    fp = " ".join(g.hx(4).upper() for _ in range(10))
    n(f"pub   rsa4096 2023-01-01 [SC]\n      {fp}\n", "gpg-fingerprint")
    n(f"https://github.com/acme/api/commit/{g.hx(40)}\n", "commit-url")
    n(f"/nix/store/{g.s(32, '0123456789abcdfghijklmnpqrsvwxyz')}-python3-3.11.9\n", "nix-store")
    lock = f'[[package]]\nname = "serde"\nversion = "1.0.200"\nchecksum = "{g.hx(64)}"\n'
    n(lock, "cargo-lock")
    n(
        f'provider "registry.terraform.io/hashicorp/aws" {{\n  hashes = [\n    "h1:{_b64url(g.r.randbytes(32))}=",\n'
        f'    "zh:{g.hx(64)}",\n  ]\n}}\n',
        "terraform-lock",
    )
    n(
        f'files = [\n    {{file = "idna-3.7.tar.gz", hash = "sha256:{g.hx(64)}"}},\n]\n',
        "poetry-lock",
    )
    n(f"dist/assets/index-{g.s(8, _URL)}.js   142.31 kB │ gzip: 45.12 kB\n", "bundle-hash")
    n(f'ETag: "{g.hx(32)}"\nCache-Control: max-age=3600\n', "etag")
    n(f"100644 blob {g.hx(40)}\tREADME.md\n100644 blob {g.hx(40)}\tsetup.py\n", "git-ls-tree")
    n(f"{g.hx(12)}: Pull complete\n{g.hx(12)}: Pull complete\n", "docker-layers")
    n(f'  resolved "https://registry.yarnpkg.com/ms/-/ms-2.1.3.tgz#{g.hx(40)}"\n', "yarn-lock")
    n(f"Successfully built {g.hx(12)}\nSuccessfully tagged api:latest\n", "docker-image-id")
    n(f">>> hashlib.sha1(b'hello').hexdigest()\n'{g.hx(40)}'\n", "python-hexdigest")
    n(f"缓存键为 {g.hx(64)}，命中率 93%\n", "zh-cache-key")
    n(f"ipfs://bafybei{g.s(52, _LO + '234567')}\n", "ipfs-cid")
    n(f"conda: md5 {g.hx(32)}  numpy-1.26.4-py312.conda\n", "conda-md5")
    b = base64.b64encode(
        b"just some plain config text for the build step\n" + g.s(8).encode()
    ).decode()
    n(
        f"$ echo {b} | base64 -d\njust some plain config text for the build step\n",
        "base64-plain-data",
    )
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + g.r.randbytes(60)).decode()
    n(f'<img src="data:image/png;base64,{png}" alt="logo">\n', "data-uri")
    n(f"etag={g.hx(16)} revision={g.hx(40)} build=1287\n", "build-metadata")


def _uuids(g: _Gen, neg: _NegFn) -> None:
    def n(text: str, shape: str) -> None:
        neg(text, "uuid", shape)

    n(f'metadata:\n  name: api-0\n  uid: {g.uuid()}\n  resourceVersion: "{g.num(8)}"\n', "k8s-uid")
    n(f"< x-request-id: {g.uuid()}\n< content-type: application/json\n", "request-id-header")
    n(f">>> uuid.uuid4()\nUUID('{g.uuid()}')\n", "python-uuid4")
    n(f"AZURE_TENANT_ID={g.uuid()}\nAZURE_SUBSCRIPTION_ID={g.uuid()}\n", "azure-tenant-sub")
    n(
        f'client_id: "{g.uuid()}"\nauthority: https://login.microsoftonline.com/common\n',
        "oauth-client-id",
    )
    n(f"2024-05-02T10:00:01Z ERROR correlation_id={g.uuid()} payment declined\n", "correlation-id")
    n(
        f" id                                   | email\n {g.uuid()} | a@acme.io\n {g.uuid()} | b@acme.io\n",
        "db-rows",
    )
    n(
        f'Project("{{{g.uuid().upper()}}}") = "Api", "Api\\Api.csproj", "{{{g.uuid().upper()}}}"\n',
        "sln-guid",
    )
    n(f"aws_instance.web: Creation complete after 42s [id=i-{g.hx(17)}]\n", "aws-instance-id")
    n(f"RequestId: {g.uuid()} Duration: 12.3 ms Billed Duration: 13 ms\n", "lambda-request-id")
    n(f"traceparent: 00-{g.hx(32)}-{g.hx(16)}-01\n", "w3c-traceparent")
    n(f"order_id={g.s(26, '0123456789ABCDEFGHJKMNPQRSTVWXYZ')} status=shipped\n", "ulid")
    n(f'db.users.find({{_id: ObjectId("{g.hx(24)}")}})\n', "mongo-objectid")
    n(f'{{"cell_type": "code", "id": "{g.hx(8)}", "metadata": {{}}}}\n', "notebook-cell-id")
    n(f'{{"id": "chatcmpl-{g.s(29)}", "object": "chat.completion"}}\n', "completion-id")
    n(f"tweet id {g.num(19)} has 42 likes\n", "snowflake-id")
    n(f"Subscription: {g.uuid()}\nResource group: rg-prod-weu\n", "azure-cli-output")
    n(f"工单号：{g.uuid()}，请在 24 小时内处理\n", "zh-ticket")
    n(f"stripe: created customer cus_{g.s(14)} and invoice in_{g.s(24)}\n", "stripe-object-ids")
    n(f"sentry event {g.hx(32)} captured\n", "sentry-event-id")
    n(f"GET /api/v1/workspaces/{g.uuid()}/members HTTP/1.1\n", "url-path-uuid")
    n(f"Installation ID: {g.uuid()}\n", "installation-id")
    n(f"docker run --name job-{g.hx(12)} worker:1.4\n{g.hx(64)}\n", "container-id")
    n(f"git: detached HEAD at {g.hx(8)}; pipeline #{g.num(7)} job {g.num(10)}\n", "ci-ids")
    n(f"spanId={g.hx(16)} traceId={g.hx(32)} service=checkout\n", "otel-ids")
    n(f"ksuid: {g.s(27)}\n", "ksuid")
    n(f"Firebase app id: 1:{g.num(12)}:web:{g.hx(22)}\n", "firebase-app-id")
    n(f'device_id = "{g.uuid()}"\nsession_count = 4\n', "device-id")


def _prose(g: _Gen, neg: _NegFn) -> None:
    def n(text: str, shape: str) -> None:
        neg(text, "prose", shape)

    n("Rotate your API keys every 90 days and never commit them to the repository.", "policy")
    n("请不要把密钥和密码提交到仓库里，用环境变量或者 Vault 管理。", "zh-policy")
    n('Error: password authentication failed for user "postgres"\n', "auth-error")
    n(
        "The token expired at 2024-05-01T12:00:00Z; request a new one via /oauth/token.",
        "token-expiry",
    )
    n(
        "Remove hard-coded password from settings and read it from the environment (#412)",
        "commit-message",
    )
    n("我的密码忘了怎么办？重置邮件一直收不到。", "zh-forgot-password")
    n("Set the OPENAI_API_KEY environment variable before running the examples.", "readme")
    n(
        "Options:\n  -u, --user TEXT       Database user\n  -p, --password TEXT   Database password"
        " [env var: DB_PASSWORD]\n  --api-key TEXT        API key for the service\n",
        "cli-help",
    )
    n('GITHUB_PAT = re.compile(r"gh' + 'p_[A-Za-z0-9]{36}")\n', "regex-github")
    n(
        "[[rules]]\nid = \"aws-access-key\"\nregex = '''(A3T[A-Z0-9]|AKIA|ASIA)[A-Z0-9]{16}'''\n",
        "gitleaks-rule",
    )
    n("password: must be at least 12 characters and contain a digit\n", "validation-message")
    n("Password: \n(typed password is not echoed)\n", "terminal-prompt")
    n(
        "The prod DB password lives in 1Password under 'Prod / Postgres'; ask Sam for access.",
        "pointer",
    )
    n("密钥长度必须为 32 字节，建议使用 AES-256-GCM。", "zh-key-length")
    n(
        "Anthropic keys start with sk-ant- and OpenAI project keys start with sk-proj-.",
        "format-doc",
    )
    n("401 Unauthorized: invalid api key provided\n", "http-error")
    n(
        "I think the token is wrong, but I can't share it here. How do I debug a 403?",
        "chat-no-secret",
    )
    n(
        "the password is stored as a bcrypt hash with cost 12, so we can't recover it",
        "hash-explainer",
    )
    n("Fixed: session token was not refreshed after password change.", "changelog")
    n("Warning: Using a password on the command line interface can be insecure.\n", "mysql-warning")
    n("登录失败：用户名或密码错误（剩余尝试次数 2）", "zh-login-error")
    n(
        "JWTs have three base64url parts: header, payload and signature, separated by dots.",
        "jwt-doc",
    )
    n(
        "Private keys should be 0600; `chmod 600 ~/.ssh/id_ed25519` fixes 'UNPROTECTED PRIVATE KEY FILE'.",
        "ssh-advice",
    )
    n(
        "The secret key is derived from the master password with PBKDF2 (600k iterations).",
        "kdf-doc",
    )
    n("这个接口需要在 header 里带 token，格式是 Bearer 加空格再加 token。", "zh-api-doc")
    n("Connection strings look like postgres://USER:PASSWORD@HOST:PORT/DB.", "conn-doc")
    n("Q: Where do I find my API key?\nA: Dashboard → Settings → API Keys → Create new key.", "faq")
    n("TODO: move the webhook secret into the secrets manager before launch", "todo-comment")
    n("# The password is the same as the username for the local dev container.\n", "comment")
    n("Reset password link sent to j***@acme.io", "masked-email")
    n('PATTERN = r"-----BEGIN [A-Z ]*PRIVATE KEY-----"\n', "regex-pem")


def _identifiers(g: _Gen, neg: _NegFn) -> None:
    def n(text: str, shape: str) -> None:
        neg(text, "identifier", shape)

    n("password = getpass.getpass('DB password: ')\n", "getpass")
    n('token = os.environ["GITHUB_TOKEN"]\n', "environ-lookup")
    n("api_key = settings.OPENAI_API_KEY\n", "settings-attr")
    n("const secret = process.env.JWT_SECRET;\n", "process-env")
    n('password := os.Getenv("DB_PASSWORD")\n', "go-getenv")
    n('String pwd = config.getProperty("db.password");\n', "java-property")
    n("token = get_access_token(client_id, scopes=['read'])\n", "function-call")
    n(
        "def __init__(self, user: str, password: str) -> None:\n    self.password = password\n",
        "self-assign",
    )
    n("conn = psycopg.connect(host=host, user=user, password=password)\n", "kwarg-passthrough")
    n("password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())\n", "hashing-call")
    n("def reset_password_for_user(user_id: int) -> None:\n", "function-name")
    n("PASSWORD_MIN_LENGTH = 12\nTOKEN_EXPIRY_SECONDS = 3600\n", "constants")
    n('api_key_header = APIKeyHeader(name="X-API-Key", auto_error=False)\n', "header-name")
    n(
        "secret: str = Field(default_factory=lambda: secrets.token_urlsafe(32))\n",
        "generated-at-runtime",
    )
    n(
        f"payments-api-{g.s(9, _LO + _DG)}-{g.s(5, _LO + _DG)}   1/1   Running   0   3d\n",
        "pod-name",
    )
    n(f"{g.num(12)}.dkr.ecr.eu-west-1.amazonaws.com/api:2024.05.02-{g.hx(7)}\n", "ecr-image")
    n(f"arn:aws:iam::{g.num(12)}:role/github-actions-deploy\n", "iam-role-arn")
    n("AbstractSingletonProxyFactoryBeanTokenResolverConfigurationProvider\n", "long-java-name")
    n(f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{g.s(43, _B64)} jane@laptop\n", "ssh-public-key")
    n(
        f"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ{g.s(300, _B64)}= deploy@ci\n",
        "ssh-rsa-public-key",
    )
    cert = "\n".join(
        [f"MIID{g.s(60, _B64)}"] + [g.s(64, _B64) for _ in range(8)] + [g.s(30, _B64) + "=="]
    )
    n(f"-----BEGIN CERTIFICATE-----\n{cert}\n-----END CERTIFICATE-----\n", "x509-certificate")
    pk = "\n".join(
        ["MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA" + g.s(20, _B64)]
        + [g.s(64, _B64) for _ in range(5)]
        + [g.s(6, _B64) + "IDAQAB"]
    )
    n(f"-----BEGIN PUBLIC KEY-----\n{pk}\n-----END PUBLIC KEY-----\n", "pem-public-key")
    n("pk_live_" + g.s(24) + "  # publishable key, safe for the browser\n", "stripe-publishable")
    n(f"s3://acme-prod-artifacts-{g.s(6, _LO + _DG)}/releases/v2.3.1/app.zip\n", "s3-path")
    n(
        "ls -la ~/.ssh\n-rw-------  1 me  staff   411 id_ed25519\n-rw-r--r--  1 me  staff   97 id_ed25519.pub\n",
        "ssh-dir-listing",
    )
    n("let token = try await auth.refreshToken(for: account)\n", "swift-await")
    n("$password = Read-Host -AsSecureString 'Password'\n", "powershell-read-host")
    n('secret_value = client.get_secret("db-password").value\n', "keyvault-sdk")
    n('token = request.headers.get("Authorization", "").removeprefix("Bearer ")\n', "header-parse")
    n(
        'NEXT_PUBLIC_POSTHOG_HOST=https://eu.i.posthog.com\nNEXT_PUBLIC_APP_NAME="Acme Console"\n',
        "public-env",
    )
    n(
        "import { useAuthToken } from '@/hooks/useAuthToken';\nconst { token, refresh } = useAuthToken();\n",
        "react-hook",
    )
    n('password = password or prompt_password("Password for %s: " % user)\n', "fallback-expr")


def unseen() -> list[Case]:
    """Return the blind held-out corpus: positives first, then negatives."""
    g = _Gen(20240517)
    positives: list[Case] = []
    negatives: list[Case] = []

    def pos(text: str, family: str, shape: str, secret: str) -> None:
        if secret not in text:
            raise AssertionError(f"{shape}: secret not in text")
        positives.append(Case(text=text, family=family, shape=shape, positive=True, secret=secret))

    def neg(text: str, family: str, shape: str) -> None:
        negatives.append(Case(text=text, family=family, shape=shape, positive=False))

    _provider(g, pos)
    _private_keys(g, pos)
    _conn(g, pos)
    _jwts(g, pos)
    _labelled(g, pos)
    _placeholders(g, neg)
    _hashes(g, neg)
    _uuids(g, neg)
    _prose(g, neg)
    _identifiers(g, neg)
    return positives + negatives

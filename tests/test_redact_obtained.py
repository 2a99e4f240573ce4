"""Redaction of a credential's name assigned code that obtains the credential when it runs
(a cmdlet, a command substitution, a call, an environment lookup): no literal is there to
withhold, while a literal beside such code still is."""

from __future__ import annotations

import pytest

from ctxsdk.session import redact


@pytest.mark.parametrize(
    "text",
    [
        # PowerShell: a cmdlet after a $variable is run, its output the value
        "$cred = Get-Credential",
        "$credential = Get-Credential -UserName admin -Message 'Admin account'",
        "$pw = Read-Host -Prompt 'Enter the vault password' -AsSecureString",
        "$Password = Read-Host 'DB password'",
        "$securePwd = Read-Host -AsSecureString",
        "$token = Get-Secret -Name GitHubToken -AsPlainText",
        "$secret = Get-Secret MyToken",
        "$apiKey = Get-AzKeyVaultSecret -VaultName kv -Name api",
        "$apiKey = Get-Content -Raw key.txt",
        "$password = Get-Content .\\pw.txt | ConvertTo-SecureString",
        "$password = ConvertTo-SecureString $plain -AsPlainText -Force",
        '$pw = ConvertTo-SecureString "$env:DB_PASSWORD" -AsPlainText -Force',
        "$env:GITHUB_TOKEN = Get-Secret gh -AsPlainText",
        "$script:token = Unprotect-CmsMessage -Path token.cms",
        "$password = read-host -assecurestring",
        # a cmdlet run with a parameter, whatever names the variable
        "password = Read-Host -AsSecureString 'vault'",
        # PowerShell's environment variables
        "$token = $env:GITHUB_TOKEN",
        "$token = $Env:GH_TOKEN",
        "$password = ${env:DB_PASSWORD}",
        # shell: command substitution, backquotes
        "PASSWORD=$(cat /run/secrets/db)",
        "export TOKEN=$(gh auth token)",
        "export API_TOKEN=`vault read -field=token secret/ci`",
        "DB_PASSWORD=`security find-generic-password -w -s db`",
        # calls and lookups
        "password = getpass.getpass('Password: ')",
        "api_key = input('API key: ')",
        "token = os.environ.get('GITHUB_TOKEN')",
        "const apiKey = prompt('API key?');",
        "const token = process.env.GITHUB_TOKEN;",
        'let token = std::env::var("GITHUB_TOKEN")?;',
        'auto secret = std::getenv("APP_SECRET");',
        "token = os.getenv('GH_TOKEN', '')",
        'password = os.environ.get("DB_PASSWORD", "changeme")',
    ],
)
def test_code_that_obtains_a_credential_is_kept(text: str) -> None:
    assert redact(text).text == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        # a literal is a literal, whatever it spells
        ("$password = 'hunter2-real'", "hunter2-real"),
        ('$token = "Read-Host-9x!Kq"', "Read-Host-9x!Kq"),
        ("password: Open-Sesame", "Open-Sesame"),
        ("$password = Get-Pass!w0rd", "Get-Pass!w0rd"),
        ("const token = `Xy9aB3dE5fG7hI9jK1lM3qq`;", "Xy9aB3dE5fG7hI9jK1lM3qq"),
        ("PASSWORD = `Tr0ub4dor&3`", "Tr0ub4dor&3"),
        # the plain text handed to ConvertTo-SecureString, wherever -AsPlainText stands
        ("$pw = ConvertTo-SecureString 'S3cr3t!Pw' -AsPlainText -Force", "S3cr3t!Pw"),
        ("$pw = ConvertTo-SecureString -AsPlainText -Force -String 'S3cr3t!Pw'", "S3cr3t!Pw"),
        ("$pw = ConvertTo-SecureString -AsPlainText 'Kq2!vL9#x' -Force", "Kq2!vL9#x"),
        ("$pw = convertto-securestring P@ssw0rd9 -asplaintext -force", "P@ssw0rd9"),
        (
            "$c = New-Object PSCredential('svc', (ConvertTo-SecureString \"Hunter2!x\" "
            "-AsPlainText -Force))",
            "Hunter2!x",
        ),
        # a literal fallback or default beside a lookup is the value
        ("db_password = os.getenv('DB_PASSWORD') or 'Tr0ub4dor&3'", "Tr0ub4dor&3"),
        ('SMTP_PASSWORD = os.environ.get("SMTP_PASSWORD", "p@ss w0rd#77")', "p@ss w0rd#77"),
        ("token = ENV.fetch('API_TOKEN', 'Xy9aB3dE5fG7hI9jK1lM3qq')", "Xy9aB3dE5fG7hI9jK1lM3qq"),
        (
            "const token = process.env.TOKEN ?? 'Xy9aB3dE5fG7hI9jK1lM3qq';",
            "Xy9aB3dE5fG7hI9jK1lM3qq",
        ),
    ],
)
def test_a_literal_beside_such_code_is_withheld(text: str, secret: str) -> None:
    r = redact(text)
    assert secret not in r.text and r.withheld >= 1


def test_a_prompt_text_after_read_host_is_no_credential() -> None:
    # the prompt's words stay, and so does the code around them
    text = '$dbPassword = Read-Host -Prompt "Password for $user" -AsSecureString\n'
    assert redact(text).text == text


def test_without_an_argument_or_a_variable_a_verb_noun_word_is_a_value() -> None:
    # "password: Read-Only" is no PowerShell: the word may be the password itself
    assert redact("password: Read-Only").text == "password: [REDACTED:labelled]"

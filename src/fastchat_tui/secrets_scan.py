"""Finds what looks like a secret or private data in text and file names.

Used by the router: a prompt, attachment or earlier message with a finding is
``sensitive`` and stays on a local source. A finding names *what* was found and
*where*, never the secret itself, so it can be shown in the status bar, in
``--json`` output and in logs.

The built-in patterns cover common key formats (AWS, GitHub, OpenAI-style
``sk-``, Groq, Cerebras, Hugging Face, Slack, Google, Stripe), JWTs, private
key blocks, ``.env``-style assignments of secrets, secret string literals in
code, bearer tokens, passwords in URLs and payment card numbers (Luhn-checked).
Users add their own regexes and path globs in ``[router]``.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

# A variable name that holds a secret: DB_PASSWORD, SECRET_KEY, GITHUB_TOKEN, API_KEY, ... (whole words).
_SECRET_NAME = re.compile(
    r"(?:^|_)(?:PASSWORD|PASSWD|PASS|PWD|SECRET|TOKEN|API_?KEY|PRIVATE_?KEY|ACCESS_?KEY|CREDENTIALS?|DSN)(?:_|$)"
)

# Values that are references or placeholders, not secrets.
_PLACEHOLDER = re.compile(
    r"""^(?:\$|%|<|\{|\[|\(|\*{3}|\.{3}|…|os\.|process\.env|getenv|env\(|none$|null$|nil$|true$|false$|undefined$)"""
    r"""|your[_-]?|xxxx|placeholder|redacted|changeme$|example|^\w+\("""
    r"""|^(?:password|passwd|secret|token|api_?key)s?$""",
    re.IGNORECASE,
)
_URL_PASSWORD_PLACEHOLDERS = {"password", "pass", "passwd", "pwd", "secret", "pw", "xxx", "****", "token"}


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing that looks sensitive: ``what`` it is and ``where`` (never the value)."""

    what: str
    where: str

    def __str__(self) -> str:
        return f"{self.what} in {self.where}"


@dataclass(frozen=True, slots=True)
class _Pattern:
    what: str
    regex: re.Pattern[str]
    check: Callable[[re.Match[str]], bool] | None = None


def _not_placeholder(group: int | str) -> Callable[[re.Match[str]], bool]:
    def check(match: re.Match[str]) -> bool:
        value = match.group(group).strip("'\"")
        return len(set(value)) > 3 and not _PLACEHOLDER.search(value)

    return check


def _url_password(match: re.Match[str]) -> bool:
    value = match.group("pw")
    return value.lower() not in _URL_PASSWORD_PLACEHOLDERS and not _PLACEHOLDER.search(value) and len(set(value)) > 1


def _luhn(match: re.Match[str]) -> bool:
    digits = [int(c) for c in match.group(0) if c.isdigit()]
    if not 13 <= len(digits) <= 19 or len(set(digits)) < 2:
        return False
    total = 0
    for index, digit in enumerate(reversed(digits)):
        if index % 2:
            digit *= 2
            if digit > 9:
                digit -= 9
        total += digit
    return total % 10 == 0


def _env_secret(match: re.Match[str]) -> bool:
    return bool(_SECRET_NAME.search(match.group("name"))) and _not_placeholder("v")(match)


BUILTIN: tuple[_Pattern, ...] = (
    _Pattern("private key block", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    _Pattern("AWS access key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b")),
    _Pattern(
        "AWS secret key",
        re.compile(r"(?i)aws_?secret_?access_?key\W{0,4}[=:]\s*['\"]?(?P<v>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"),
    ),
    _Pattern("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b")),
    _Pattern("Groq API key", re.compile(r"\bgsk_[A-Za-z0-9]{40,}\b")),
    _Pattern("Cerebras API key", re.compile(r"\bcsk-[A-Za-z0-9]{32,}\b")),
    _Pattern("Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{32,}")),
    _Pattern("OpenRouter API key", re.compile(r"\bsk-or-v1-[a-f0-9]{40,}\b")),
    _Pattern("OpenAI-style API key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    _Pattern("Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
    _Pattern("Slack token", re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}")),
    _Pattern("Slack webhook URL", re.compile(r"hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]{16,}")),
    _Pattern("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])")),
    _Pattern("Stripe secret key", re.compile(r"\b[rs]k_live_[0-9A-Za-z]{20,}\b")),
    _Pattern("JSON Web Token", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")),
    _Pattern(
        "bearer token",
        re.compile(r"(?i)\bauthorization\W{0,3}\s*[:=]\s*['\"]?bearer\s+(?P<v>[A-Za-z0-9._~+/=-]{20,})"),
        _not_placeholder("v"),
    ),
    _Pattern(
        "password in a URL",
        re.compile(r"\b[a-z][a-z0-9+.-]{1,20}://[^\s/:@'\"]{1,64}:(?P<pw>[^\s/@'\"]{3,128})@[\w.-]+"),
        _url_password,
    ),
    _Pattern(
        ".env-style secret assignment",
        re.compile(
            r"(?m)^[ \t]*(?:export[ \t]+)?(?P<name>[A-Z][A-Z0-9_]*)[ \t]*[=:][ \t]*"
            r"(?P<v>\"[^\"\n]{6,}\"|'[^'\n]{6,}'|[^\s'\"#]{6,})"
        ),
        _env_secret,
    ),
    _Pattern(
        "secret string literal",
        re.compile(
            r"(?i)\b[\w.]*?(?:password|passwd|secret|api_?key|access_?key|auth_?token|private_?key|client_?secret)"
            r"[\w]*['\"]?\]?\s*(?::=|=>|[:=])\s*(?P<q>['\"])(?P<v>[^'\"\s]{8,})(?P=q)"
        ),
        _not_placeholder("v"),
    ),
    _Pattern(
        "payment card number",
        re.compile(r"(?<![\d.-])(?:[3-6]\d{3}(?:[ -]?\d{4}){3}|3[47]\d{2}[ -]?\d{6}[ -]?\d{5})(?![\d.-])"),
        _luhn,
    ),
    _Pattern("social security number", re.compile(r"(?i)\b(?:SSN|social security(?: number)?)\W{0,4}\d{3}-\d{2}-\d{4}\b")),
)

# File names that hold secrets whatever their content.
DEFAULT_PATH_GLOBS: tuple[str, ...] = (
    ".env", ".env.*", "*.env", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.kdbx", "*.keystore",
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", ".netrc", ".pgpass", ".htpasswd", ".git-credentials",
    "**/.aws/credentials", "**/.ssh/*", "credentials.json", "service-account*.json", "*.tfvars", "secrets.*",
)
# Names that look like a secret file but are templates by convention.
_TEMPLATE_SUFFIXES = (".example", ".sample", ".template", ".dist", ".pub")


class Scanner:
    """Built-in patterns plus a user's extra regexes and path globs."""

    def __init__(self, extra_patterns: Iterable[tuple[str, str]] = (), path_globs: Iterable[str] = DEFAULT_PATH_GLOBS):
        self.patterns = list(BUILTIN) + [
            _Pattern(what, re.compile(regex)) for what, regex in extra_patterns
        ]
        self.path_globs = tuple(path_globs)

    def scan_text(self, text: str, where: str) -> Finding | None:
        """The first finding in ``text``, if any."""
        for pattern in self.patterns:
            for match in pattern.regex.finditer(text):
                if pattern.check is None or pattern.check(match):
                    what = pattern.what
                    if "name" in pattern.regex.groupindex:
                        what = f"{what} ({match.group('name')}=…)"
                    return Finding(what, where)
        return None

    def scan_path(self, path: str) -> Finding | None:
        """A finding if the file name matches a sensitive glob (templates such as ``.env.example`` excluded)."""
        posix = str(PurePosixPath(path.replace("\\", "/")))
        name = posix.rsplit("/", 1)[-1]
        if not name or name.lower().endswith(_TEMPLATE_SUFFIXES):
            return None
        for glob in self.path_globs:
            flat = glob.replace("**/", "*")
            target = posix if "/" in glob else name
            if fnmatch.fnmatchcase(target, flat) or ("/" in glob and fnmatch.fnmatchcase("/" + posix, flat)):
                return Finding(f"file name matches sensitive path '{glob}'", name)
        return None

"""Finds what looks like a secret or private data in text and file names.

Used by the router: a prompt, attachment or earlier message with a finding is
``sensitive`` and stays on a local source. A finding names *what* was found and
*where* (the line), never the value, so it can be shown in the status bar, in
``--json`` output and in logs.

The built-in patterns cover key and token formats, private key blocks, secret-named
keys assigned anywhere in a line (env, INI, YAML, JSON, code, ``.npmrc``, connection
strings), Kubernetes Secret data, ``.netrc`` entries, passwords in URLs, passwords
stated in words (in the languages of the router's table), payment cards (Luhn), IBANs
(mod 97), national ID numbers with their check digits, labelled passport numbers and
a phone number given with a street address. A unified diff's file names are checked
against the path globs. Users add their own regexes and path globs in ``[router]``.

Every built-in regex is linear on adversarial input: each quantifier is bounded and no
repetition nests an ambiguous one, so a megabyte of pasted text scans in well under a
second (``tests/test_secrets_scan.py`` feeds each pattern its worst cases).
"""

from __future__ import annotations

import datetime
import fnmatch
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

from fastchat_tui.diff import diff_files


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
    describe: Callable[[re.Match[str]], str] | None = None
    """A more precise ``what`` for a match (e.g. the key's name), when there is one."""
    requires: re.Pattern[str] | None = None
    """The pattern counts only in a text where this also matches (a phone number *with* an address)."""
    needs: tuple[str, ...] = ()
    """Lower-case words of which the text must hold one for the regex to run: a fast skip, never a match."""


# --- values: placeholders, references and what a real secret looks like -------------------------

# Values that are references, placeholders or code, not secrets.
_PLACEHOLDER = re.compile(
    r"""^(?:\$|%|<|\{|\[|\(|!|[*&]\w|\*{3}|os\.|process\.env|getenv|env\(|none$|null$|nil$|true$|false$|undefined$)"""
    r"""|your[_-]?|xxxx|placeholder|redacted|change[_-]?me|example|replace[_-]?(?:me|this|with)|[_-]here$|^todo$|^tbd$"""
    r"""|^[\w.]{1,64}[(\[]|^[A-Za-z_]\w{0,63}(?:\.\w{1,64}){1,8}$|^[a-z]{1,32}(?:_[a-z]{1,32}){1,8}$|^(?:\.{0,2}/|~/)"""
    r"""|^(?:password|passwd|pass|secret|token|api_?key|key|value|string|pw|pwd)s?\d?$|^x+$|^\*+$|^#[0-9a-f]{3,8}$"""
    r"""|\.{3}|…|^\d{1,10}(?:\.\d{1,10}){1,16}$|^(?:arn|urn):|^[a-z][a-z0-9+.-]{1,20}://[^@\s]{0,512}$""",
    re.IGNORECASE,
)
# Type names after ``name:`` in code (``password: str``, ``token: SecretStr``), not values.
_TYPE_NAME = re.compile(
    r"^(?:str|string|int|bool|bytes|boolean|number|any|float|object|char)$|^[A-Z][a-z]{1,20}(?:[A-Z][a-z]{1,20}){0,4}$"
)
_URL_PASSWORD_PLACEHOLDERS = {"password", "pass", "passwd", "pwd", "secret", "pw", "xxx", "****", "token", "foo", "bar", "baz"}
_TRAILING = ".,:;!?)]}>»”"
_QUOTES = "\"'`“”«»「」"


def _plausible(value: str, min_len: int = 6) -> bool:
    """A value long and varied enough to be a secret, and not a placeholder, reference or code."""
    whole = value.strip(_QUOTES)
    value = whole.rstrip(_TRAILING).strip(_QUOTES)
    return len(value) >= min_len and len(set(value)) > 3 and not (_PLACEHOLDER.search(value) or _PLACEHOLDER.search(whole))


def _strong(value: str) -> bool:
    """A word that reads as a password rather than prose: it has a digit, a symbol or mixed case."""
    value = value.strip(_QUOTES).rstrip(_TRAILING)
    return (
        any(c.isdigit() for c in value)
        or any(not c.isalnum() for c in value)
        or (any(c.isupper() for c in value[1:]) and any(c.islower() for c in value))
    )


def _group_not_placeholder(group: str, min_len: int = 6) -> Callable[[re.Match[str]], bool]:
    def check(match: re.Match[str]) -> bool:
        return _plausible(match.group(group), min_len)

    return check


# --- secret-named keys assigned anywhere in a line ------------------------------------------------

# The secret words a key name ends in, searched for first (they are rare), then the name around them.
_ASSIGNMENT = re.compile(
    r"(?i)(?:password|passwd|passphrase|passcode|pass|pwd|pw|secret|token|api[_-]?key"
    r"|(?:access|private|encryption|signing|master|client|app|auth)[_-]?key|credentials?|dsn|auth)"
    r"(?P<tail>[\w.-]{0,24})[\"'\]]{0,2}[ \t]{0,4}(?P<sep>:=|=>|=|:)[ \t]{0,4}"
    r"(?:(?P<q>[\"'`])(?P<qv>[^\"'`\n]{1,256})(?P=q)|(?P<v>[^\s\"'`;,&]{1,256}))"
)
# A normalised key name (upper case, ``_`` between words) that holds a secret.
_SECRET_NAME = re.compile(
    r"(?:PASSWORD|PASSWD|PASSPHRASE|PASSCODE|SECRET|TOKEN|API_?KEY"
    r"|(?:ACCESS|PRIVATE|SECRET|ENCRYPTION|SIGNING|MASTER|CLIENT|APP|AUTH)_?KEY|CREDENTIALS?)"
    r"(?:_?(?:KEY|VALUE|BASE|B64|BASE64|STRING|STR))?$"
    r"|(?:^|_)(?:PASS|PWD|PW|DSN|AUTH)$"
)
_WEAK_NAME = re.compile(r"(?:^|_)(?:PASS|PWD|PW|DSN|AUTH|CREDENTIALS?)$")
# Letters and underscores only: a variable, constant or class in code (``token = Punctuation``).
_IDENTIFIER = re.compile(r"_{0,4}[A-Za-z][A-Za-z_]{0,255}")
# Letters, underscores and dashes: a field's name when it holds the secret word (``no-password-required``).
_LABEL = re.compile(r"[A-Za-z_-]{1,256}")
# Words and spaces: a message (``"auth failed"``), not a secret.
_PROSE = re.compile(r"[^\W\d_]{1,40}(?: [^\W\d_]{1,40}){1,40}")
_NAME_CHARS = re.compile(r"[\w.-]{0,64}")
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_SHELL_NAMES = {"PWD", "OLDPWD"}  # the shell's working directories


def _key_name(match: re.Match[str]) -> tuple[str, int]:
    """The whole key name around the secret word (``DB_PASSWORD``, ``dbPassword``, ``_authToken``) and where it starts."""
    text, start = match.string, match.start()
    before = _NAME_CHARS.match(text[max(0, start - 64):start][::-1])
    head = before.group(0)[::-1].lstrip(".-") if before else ""
    return head + text[start:match.start("tail")] + match.group("tail"), start - len(head)


def _normalised(name: str) -> str:
    return re.sub(r"[.-]", "_", _CAMEL.sub(r"\1_\2", name.rsplit(".", 1)[-1])).upper()


def _at_line_start(text: str, start: int) -> bool:
    """Only indentation, list dashes, quotes or braces before ``start`` on its line: a config line, not prose."""
    before = text[max(0, start - 64):start]
    if "\n" not in before and start > 64:
        return False
    return not before.rsplit("\n", 1)[-1].strip(" \t-{[,\"'")


def _ends_line(text: str, end: int) -> bool:
    after = text[end:end + 64].split("\n", 1)[0].strip()
    return not after or after.startswith("#")


def _assignment(match: re.Match[str]) -> bool:
    text = match.string
    name, start = _key_name(match)
    normalised = _normalised(name)
    if normalised in _SHELL_NAMES or "PUBLIC" in normalised or not _SECRET_NAME.search(normalised):
        return False
    if text[start - 2:start] == "::":
        return False  # ``AWS::ApiGateway::ApiKey``: a type's name, not a key
    quoted = match.group("qv")
    raw = quoted if quoted is not None else match.group("v")
    value = raw.rstrip(_TRAILING)
    if not _plausible(raw) or value == name:
        return False
    word = re.sub(r"[_-]", "", text[match.start():match.start("tail")].lower())
    if _LABEL.fullmatch(value) and word in re.sub(r"[_-]", "", value.lower()):
        return False  # ``CHALLENGE_PASSWORD: "challengePassword"`` names a field
    if _WEAK_NAME.search(normalised) and not any(c.isdigit() for c in value):
        return False  # ``auth = "serverAuth"``: a short, common name needs a value that looks generated
    if quoted is not None:
        # ``"output_token": "NextMarker"`` and ``"error": "the token has expired"`` are labels and messages.
        digits = any(c.isdigit() for c in value)
        generated = digits or any(not c.isalnum() for c in value)
        return generated and not (_PROSE.fullmatch(value) or (value.count(" ") >= 2 and not digits))
    if match.group("sep") == ":":
        # YAML or INI ``password: value`` fills its line; ``private_key: KeyType,`` and ``Password: forgotten, so…`` do not.
        return _at_line_start(text, start) and _ends_line(text, match.end()) and not _TYPE_NAME.match(value)
    # ``token = Punctuation`` is code; ``DB_PASSWORD=SuperSecret`` in an env file is not.
    env_style = name.isupper() and text[match.end("tail"):match.start("v")] == "="
    return env_style or not _IDENTIFIER.fullmatch(value)


def _describe_assignment(match: re.Match[str]) -> str:
    return f"secret assignment ({_key_name(match)[0][-40:]}=…)"


# --- values checked by arithmetic ----------------------------------------------------------------

def _luhn(digits: str) -> bool:
    if len(set(digits)) < 2:
        return False
    total = 0
    for index, char in enumerate(reversed(digits)):
        digit = int(char)
        if index % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


# Card networks: a range of first digits and the lengths its numbers have.
_CARD_NETWORKS: tuple[tuple[int, int, tuple[int, ...]], ...] = (
    (4, 4, (13, 16)),  # Visa
    (51, 55, (16,)), (2221, 2720, (16,)),  # Mastercard
    (34, 34, (15,)), (37, 37, (15,)),  # American Express
    (6011, 6011, (16, 19)), (644, 649, (16, 19)), (65, 65, (16, 19)),  # Discover
    (3528, 3589, (16, 19)),  # JCB
    (300, 305, (14, 16)), (36, 36, (14, 16)), (38, 39, (14, 16)),  # Diners Club
    (62, 62, (16, 17, 18, 19)),  # UnionPay
)


def _card(digits: str) -> bool:
    """A card network's prefix and length, and the Luhn check digit."""
    return _luhn(digits) and any(
        low <= int(digits[:len(str(low))]) <= high and len(digits) in lengths for low, high, lengths in _CARD_NETWORKS
    )


# IBAN lengths by country, from the SWIFT IBAN registry (release 101).
_IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27, "BR": 29, "BY": 28,
    "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18,
    "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HN": 28, "HR": 21, "HU": 28,
    "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20,
    "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28,
    "NL": 18, "NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24,
    "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28, "TL": 23, "TN": 24, "TR": 26,
    "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}


def _iban(value: str) -> bool:
    if _IBAN_LENGTHS.get(value[:2]) != len(value):
        return False
    return int("".join(str(int(c, 36)) for c in value[4:] + value[:4])) % 97 == 1


def _date(year: int, month: int, day: int) -> bool:
    try:
        datetime.date(year, month, day)
    except ValueError:
        return False
    return True


def _china_resident_id(value: str) -> bool:
    """GB 11643: a real birth date and the ISO 7064 MOD 11-2 check character."""
    if not _date(int(value[6:10]), int(value[10:12]), int(value[12:14])):
        return False
    total = sum(int(c) * (2 ** (17 - i) % 11) for i, c in enumerate(value[:17]))
    return "10X98765432"[total % 11] == value[17].upper()


def _us_ssn(value: str) -> bool:
    """Area 001-899 but not 666, group 01-99, serial 0001-9999; not a published sample (123-45-6789) or 111-22-3333."""
    area, group, serial = int(value[:3]), int(value[3:5]), int(value[5:])
    sample = value in {"123456789", "078051120", "219099999"} or all(len(set(p)) == 1 for p in (value[:3], value[3:5], value[5:]))
    return 0 < area < 900 and area != 666 and group > 0 and serial > 0 and not sample


def _uk_nino(value: str) -> bool:
    return value[:2] not in {"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"}


_VERHOEFF_D = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5], [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
    [3, 4, 0, 1, 2, 8, 9, 5, 6, 7], [4, 0, 1, 2, 3, 9, 5, 6, 7, 8], [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
    [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3], [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
    [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
]
_VERHOEFF_P = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 5, 7, 6, 2, 8, 3, 0, 9, 4], [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
    [8, 9, 1, 6, 0, 4, 3, 5, 2, 7], [9, 4, 5, 3, 1, 2, 6, 8, 7, 0], [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
    [2, 7, 9, 3, 8, 0, 6, 4, 1, 5], [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
]


def _aadhaar(value: str) -> bool:
    """India's Aadhaar: 12 digits, not starting 0 or 1, with a Verhoeff check digit."""
    check = 0
    for index, char in enumerate(reversed(value)):
        check = _VERHOEFF_D[check][_VERHOEFF_P[index % 8][int(char)]]
    return check == 0 and len(set(value)) > 1


def _brazil_cpf(value: str) -> bool:
    if len(set(value)) == 1:
        return False
    digits = [int(c) for c in value]
    for length in (9, 10):
        total = sum(d * (length + 1 - i) for i, d in enumerate(digits[:length]))
        if (total * 10) % 11 % 10 != digits[length]:
            return False
    return True


def _spain_dni(value: str) -> bool:
    """DNI (8 digits) or NIE (X/Y/Z and 7 digits) with its mod-23 letter."""
    number = "XYZ".index(value[0]) if value[0] in "XYZ" else None
    digits = f"{number}{value[1:-1]}" if number is not None else value[:-1]
    return "TRWAGMYFPDXBNJZSQVHLCKE"[int(digits) % 23] == value[-1]


def _france_nir(value: str) -> bool:
    """Numéro de sécurité sociale: 13 characters (Corsica 2A/2B counted as 19/18) and a key 97 - n mod 97."""
    body = value[:13].replace("2A", "19").replace("2B", "18")
    return 97 - int(body) % 97 == int(value[13:])


def _russia_snils(value: str) -> bool:
    total = sum(int(c) * (9 - i) for i, c in enumerate(value[:9]))
    return int(value[:9]) > 1001998 and total % 101 % 100 == int(value[9:])


def _korea_rrn(value: str) -> bool:
    """A real birth date, the century read from the seventh digit (numbers since 2020 carry no check digit)."""
    century = {"1": 1900, "2": 1900, "5": 1900, "6": 1900, "3": 2000, "4": 2000, "7": 2000, "8": 2000}[value[6]]
    return _date(century + int(value[:2]), int(value[2:4]), int(value[4:6]))


def _japan_my_number(value: str) -> bool:
    total = sum(int(c) * (n + 1 if n <= 6 else n - 5) for n, c in enumerate(reversed(value[:11]), start=1))
    remainder = total % 11
    return int(value[11]) == (0 if remainder <= 1 else 11 - remainder)


def _germany_tax_id(value: str) -> bool:
    """Steuer-ID: 11 digits, no leading zero, one digit of the first ten repeated (2 or 3 times), ISO 7064 MOD 11,10."""
    repeated = [value[:10].count(c) for c in set(value[:10]) if value[:10].count(c) > 1]
    if value[0] == "0" or len(repeated) != 1 or repeated[0] > 3:
        return False
    product = 10
    for char in value[:10]:
        total = (int(char) + product) % 10 or 10
        product = total * 2 % 11
    return (11 - product) % 10 == int(value[10])


def _compact(match: re.Match[str]) -> str:
    return re.sub(r"[\s.-]", "", match.group("id")).upper()


def _checked(valid: Callable[[str], bool]) -> Callable[[re.Match[str]], bool]:
    def check(match: re.Match[str]) -> bool:
        return valid(_compact(match))

    return check


# Between a label and its number: punctuation, then optionally "number" and "is" in the table's languages.
_GAP = (
    r"[^\w\n]{0,6}(?:(?:numbers?|no|nr|num|numero|número|nummer|番号|号码|号|번호)[^\w\n]{0,4})?"
    r"(?:(?:is|was|ist|lautet|es|est|é|是|为|は|는|это)[^\w\n]{0,4})?"
)

# (what, regex with a group ``id``, validator of the compacted id, words one of which the text must hold).
# An unlabelled number's "not inside a longer number" lookbehind comes after its first digit
# (``[1-9](?<![0-9].)``, not ``(?<![0-9])[1-9]``): a regex that starts with a lookbehind or ``\b`` is tried at every
# position, one that starts with a character class lets the engine skip to the candidates, about ten times faster.
_NUMBERS: tuple[tuple[str, str, Callable[[str], bool], tuple[str, ...]], ...] = (
    ("payment card number",
     r"(?P<id>[2-6](?<!\w.)(?<![0-9][.-].)(?:[0-9]{3}(?:[ -]?[0-9]{4}){3}(?:[ -]?[0-9]{1,3})?"
     r"|[0-9]{3}[ -]?[0-9]{6}[ -]?[0-9]{4,5}|[0-9]{12}))(?!\w)(?![.-][0-9])", _card, ()),
    ("IBAN", r"(?P<id>[A-Z](?<!\w.)[A-Z][0-9]{2}(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,3})?))\b", _iban, ()),
    ("China resident ID number",
     r"(?P<id>[1-9](?<![0-9A-Za-z].)[0-9]{5}(?:18|19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])[0-9]{3}[0-9Xx])"
     r"(?![0-9A-Za-z])", _china_resident_id, ()),
    ("US social security number", r"(?P<id>[0-9](?<![0-9-].)[0-9]{2}-[0-9]{2}-[0-9]{4})(?![0-9-])", _us_ssn, ()),
    ("US social security number",
     r"(?i)\b(?:ssn|social[ \t]{1,3}security)" + _GAP + r"(?P<id>[0-9]{3}[ -]?[0-9]{2}[ -]?[0-9]{4})(?![0-9])", _us_ssn,
     ("ssn", "social")),
    ("UK National Insurance number",
     r"(?P<id>[A-CEGHJ-PR-TW-Z](?<![A-Za-z0-9].)[A-CEGHJ-NPR-TW-Z] ?[0-9]{2} ?[0-9]{2} ?[0-9]{2} ?[A-D])(?![A-Za-z0-9])",
     _uk_nino, ()),
    ("Aadhaar number",
     r"(?P<id>[2-9](?<![0-9].)(?<![0-9][ -].)[0-9]{3}[ -][0-9]{4}[ -][0-9]{4})(?![0-9])(?![ -][0-9])", _aadhaar, ()),
    ("Aadhaar number", r"(?i)(?:aadh?aar|आधार)" + _GAP + r"(?P<id>[2-9][0-9]{3}[ -]?[0-9]{4}[ -]?[0-9]{4})(?![0-9])", _aadhaar,
     ("aadhaar", "aadhar", "आधार")),
    ("Brazil CPF number", r"(?P<id>[0-9](?<![0-9.].)[0-9]{2}\.[0-9]{3}\.[0-9]{3}-[0-9]{2})(?![0-9])", _brazil_cpf, ()),
    ("Brazil CPF number", r"(?i)\bCPF" + _GAP + r"(?P<id>[0-9]{11})(?![0-9])", _brazil_cpf, ("cpf",)),
    ("Spain DNI/NIE number",
     r"(?i)\b(?:DNI|NIE|NIF)" + _GAP + r"(?P<id>(?-i:(?:[XYZ]-?[0-9]{7}|[0-9]{8})-?[A-Z]))(?![A-Za-z0-9])", _spain_dni,
     ("dni", "nie", "nif")),
    ("France social security number",
     r"(?P<id>[1278](?<![0-9].) ?[0-9]{2} ?(?:0[1-9]|1[0-2]) ?(?:[0-9]{2}|2[AB]) ?[0-9]{3} ?[0-9]{3} ?[0-9]{2})(?![0-9])",
     _france_nir, ()),
    ("Russia SNILS number", r"(?P<id>[0-9](?<![0-9].)[0-9]{2}-[0-9]{3}-[0-9]{3}[ -][0-9]{2})(?![0-9])", _russia_snils, ()),
    ("Russia SNILS number", r"(?i)снилс" + _GAP + r"(?P<id>[0-9]{11})(?![0-9])", _russia_snils, ("снилс",)),
    ("Korea resident registration number",
     r"(?P<id>[0-9](?<![0-9].)[0-9](?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])-[1-8][0-9]{6})(?![0-9])", _korea_rrn, ()),
    ("Japan My Number", r"(?:マイナンバー|個人番号)" + _GAP + r"(?P<id>[0-9]{4}[ -]?[0-9]{4}[ -]?[0-9]{4})(?![0-9])",
     _japan_my_number, ("マイナンバー", "個人番号")),
    ("Germany tax ID",
     r"(?i)(?:steuer-?id(?:entifikationsnummer)?|identifikationsnummer|idnr\.?)" + _GAP
     + r"(?P<id>[0-9]{2} ?[0-9]{3} ?[0-9]{3} ?[0-9]{3})(?![0-9])", _germany_tax_id, ("steuer", "identifikationsnummer", "idnr")),
)

# --- passwords stated in words, one row per language of the router's table -----------------------

# (language, words one of which the text must hold, noun, optional qualifier before the verb (``for gmail``), verb)
_STATED_LATIN: tuple[tuple[str, tuple[str, ...], str, str, str], ...] = (
    ("en", ("pass", "pin"), r"pass(?:word|code|phrase)|passwd|pin(?:[ \t]{1,3}(?:code|number))?", r"for|to|on|of|at",
     r"is|was|will[ \t]{1,3}be|would[ \t]{1,3}be|is[ \t]{1,3}(?:now|still)"
     r"|(?:has[ \t]{1,3}been[ \t]{1,3})?(?:set|changed)[ \t]{1,3}to"),
    ("es", ("contrase", "clave"), r"contraseña|contrasena|clave", r"de|del|para", r"es|era|será|sera"),
    ("de", ("passwort", "kennwort"), r"passwort|kennwort", r"für|fur|von|zu|bei", r"ist|lautet|war"),
    ("fr", ("passe",), r"mot[ \t]{1,3}de[ \t]{1,3}passe", r"pour|de|du", r"est|était|etait|sera"),
    ("pt", ("senha",), r"senha", r"de|do|da|para", r"é|era|será"),
)
# (language, words one of which the text must hold, noun, what may come between it and the password)
_STATED_OTHER: tuple[tuple[str, tuple[str, ...], str, str], ...] = (
    ("ru", ("парол",), r"парол[ьяю]", r"(?:[ \t]{1,3}(?:от|для)[ \t]{1,3}\S{1,40})?[ \t]{0,3}(?:[:—-]|это|был|будет|такой)?"),
    ("zh", ("密码", "密碼", "口令"), r"密码|密碼|口令", r"[ \t]{0,3}(?:是|为|為|:|：|=)"),
    ("ja", ("パスワード", "暗証番号"), r"パスワード|暗証番号", r"[ \t]{0,3}(?:は|が|:|：)"),
    ("ko", ("비밀번호", "패스워드", "암호"), r"비밀번호|패스워드|암호", r"[ \t]{0,3}(?:는|은|가|:|：)"),
)


def _stated_patterns() -> list[_Pattern]:
    patterns = []
    for lang, needs, noun, qualifier, verb in _STATED_LATIN:
        regex = (
            rf"(?i)\b(?:{noun})(?:[ \t]{{1,3}}(?:{qualifier})(?:[ \t]{{1,3}}\S{{1,40}}){{1,3}})?"
            rf"[ \t]{{1,3}}(?:{verb})[ \t]{{0,3}}:?[ \t]{{0,3}}(?P<q>[\"'“«]?)(?P<v>[^\s\"'”»]{{4,64}})"
        )
        patterns.append(_Pattern(f"password stated in words ({lang})", re.compile(regex), _stated_latin, needs=needs))
    for lang, needs, noun, verb in _STATED_OTHER:
        regex = rf"(?i)(?:{noun}){verb}[ \t]{{0,3}}(?P<q>[\"'“「]?)(?P<v>[!-~]{{4,64}})"
        patterns.append(_Pattern(f"password stated in words ({lang})", re.compile(regex), _stated_other, needs=needs))
    return patterns


def _stated_latin(match: re.Match[str]) -> bool:
    value = match.group("v")
    return _plausible(value, 4) and (bool(match.group("q")) or _strong(value))


def _stated_other(match: re.Match[str]) -> bool:
    value = match.group("v")
    return _plausible(value, 4) and _strong(value)


# --- a phone number with a street address, in the languages of the router's table ----------------

_STREET_ADDRESS = re.compile(
    r"\b[0-9]{1,5}[A-Za-z]?(?:[ \t]{1,2}[A-Z][a-z]{1,20}){1,3}[ \t]{1,2}"
    r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Square|Sq|Parkway"
    r"|Highway|Hwy|Close|Crescent|Row|Gardens)\b"
    r"|(?:路|街|大道|胡同|巷|弄)[0-9]{1,5}[号號]"
    r"|[0-9０-９]{1,4}丁目|(?:都|府|県)[\u4e00-\u9fff]{1,8}[市区町村]"
    r"|[가-힣]{1,12}(?:로|길)[ \t]?[0-9]{1,5}"
    r"|[A-ZÄÖÜ][a-zäöüß]{1,30}(?:straße|strasse|str\.|weg|gasse|platz|allee|ring|damm)[ \t]{1,2}[0-9]{1,4}[a-z]?\b"
    r"|(?i:\b(?:straße|strasse|calle|avenida|avda\.|paseo|plaza|carrera|rua|travessa|alameda)"
    r"(?:[ \t]{1,2}[^\W\d]{1,20}){1,4},?[ \t]{1,2}(?:n[º°o]\.?[ \t]?)?[0-9]{1,4}\b)"
    r"|\b[0-9]{1,4}(?:[ \t]?(?:bis|ter))?,?[ \t]{1,2}(?i:rue|avenue|boulevard|bd|place|chemin|allée|impasse|quai)[ \t]{1,2}"
    r"(?:(?:de|du|des|la|le|les|l'|d')[ \t']{0,2}){0,3}[A-ZÀ-Ý]"
    r"|(?i:(?:ул\.|улица|просп\.|проспект|пер\.|переулок|бульвар|наб\.)[ \t]{0,2}[^\W\d]{1,25}(?:[ \t]{1,2}[^\W\d]{1,25}){0,2}"
    r",?[ \t]{0,2}(?:д\.|дом)[ \t]{0,2}[0-9]{1,4})"
)
# The lookbehind comes after the first character so that the engine can skip to candidates (see _NUMBERS).
_PHONE_BODY = r"(?:[0-9]{2,8}(?:[ .-][0-9]{2,8}){1,4}|[0-9]{9,15})"
_PHONE = re.compile(
    r"(?P<id>\+(?<![\w+.:/-].)[0-9]{1,3}[ .-]?(?:\([0-9]{1,5}\)[ .-]?)?" + _PHONE_BODY
    + r"|\((?<![\w+.:/-].)[0-9]{1,5}\)[ .-]?" + _PHONE_BODY
    + r"|[0-9](?<![\w+.:/-].)(?:[0-9]{1,7}(?:[ .-][0-9]{2,8}){1,4}|[0-9]{8,14}))(?!\w)(?![.:/-]\w)"
)


def _phone(match: re.Match[str]) -> bool:
    """9 to 15 digits with an international prefix, an area code in brackets, ten digits or three groups (not a ZIP+4)."""
    number = match.group("id")
    digits = "".join(c for c in number if c.isdigit())
    groups = len(re.findall(r"[0-9]+", number))
    if "." in number and groups < 3:
        return False  # 289206.03125
    if groups == 1 and len(digits) == 10 and digits[0] == "1":
        return False  # a Unix time (no North American number starts with 1)
    if len(digits) in (10, 11) and digits[-7:-4] == "555":
        return False  # North America's fictional 555 numbers
    return 9 <= len(digits) <= 15 and (number[0] in "+(" or len(digits) >= 10 or groups >= 3)


# --- the built-in patterns, in the order they are tried ------------------------------------------

def _url_password(match: re.Match[str]) -> bool:
    value = match.group("pw")
    return value.lower() not in _URL_PASSWORD_PLACEHOLDERS and not _PLACEHOLDER.search(value) and len(set(value)) > 1


def _token_shaped(match: re.Match[str]) -> bool:
    value = match.group("v")
    return _plausible(value, 16) and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _key_format(what: str, regex: str, *needs: str) -> _Pattern:
    """A vendor's key or token format; the samples in its documentation (``AKIAIOSFODNN7EXAMPLE``) excluded."""
    return _Pattern(what, re.compile(regex), _not_a_sample, needs=needs)


def _not_a_sample(match: re.Match[str]) -> bool:
    value = match.group(0).lower()
    return "example" not in value and "xxxxxxxx" not in value


def _passport(match: re.Match[str]) -> bool:
    before = match.string[match.start() - 1:match.start()]
    return not (before.isascii() and before.isalpha()) and sum(c.isdigit() for c in match.group("v")) >= 5


BUILTIN: tuple[_Pattern, ...] = (
    _Pattern(
        "private key block",  # with some key material after the header, not a mention of the header
        re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]{0,400}?[A-Za-z0-9+/]{32}"
                   r"|PuTTY-User-Key-File-[0-9]: "),
        needs=("private key", "putty-user-key-file"),
    ),
    _key_format("AWS access key", r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b", "akia", "asia", "abia", "acca", "a3t"),
    _Pattern(
        "AWS secret key",
        re.compile(r"(?i)aws_?secret_?access_?key\W{0,4}[=:][ \t]{0,4}['\"]?(?P<v>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"),
        _group_not_placeholder("v", 40),
        needs=("secret",),
    ),
    _key_format("GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{40,255})\b",
                "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    _key_format("GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,64}", "glpat-"),
    _key_format("npm token", r"\bnpm_[A-Za-z0-9]{36}\b", "npm_"),
    _key_format("PyPI token", r"\bpypi-AgE[A-Za-z0-9_-]{50,512}", "pypi-"),
    _key_format("Groq API key", r"\bgsk_[A-Za-z0-9]{40,255}\b", "gsk_"),
    _key_format("Cerebras API key", r"\bcsk-[A-Za-z0-9]{32,255}\b", "csk-"),
    _key_format("Anthropic API key", r"\bsk-ant-[A-Za-z0-9_-]{32,255}", "sk-ant-"),
    _key_format("OpenRouter API key", r"\bsk-or-v1-[a-f0-9]{40,255}\b", "sk-or-"),
    _key_format("OpenAI-style API key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,255}", "sk-"),
    _key_format("Hugging Face token", r"\bhf_[A-Za-z0-9]{30,255}\b", "hf_"),
    _key_format("Slack token", r"\bxox[abposre]-[A-Za-z0-9-]{10,255}", "xox"),
    _key_format("Slack webhook URL", r"hooks\.slack\.com/services/T[A-Za-z0-9_]{1,32}/B[A-Za-z0-9_]{1,32}/[A-Za-z0-9_]{16,64}",
                "hooks.slack.com"),
    _key_format("Google API key", r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])", "aiza"),
    _key_format("Stripe secret key", r"\b[rs]k_live_[0-9A-Za-z]{20,255}\b", "k_live_"),
    _key_format("SendGrid API key", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b", "sg."),
    _key_format("JSON Web Token", r"\beyJ[A-Za-z0-9_-]{10,4096}\.eyJ[A-Za-z0-9_-]{10,8192}\.[A-Za-z0-9_-]{10,4096}", "eyj"),
    _Pattern(
        "authorization header",
        re.compile(
            r"(?i)\bauthorization\W{0,3}[ \t]{0,4}[:=][ \t]{0,4}['\"]?(?:bearer|basic|token)[ \t]{1,4}"
            r"(?P<v>[A-Za-z0-9._~+/=-]{8,1024})"
        ),
        _group_not_placeholder("v", 8),
        needs=("authorization",),
    ),
    _Pattern("bearer token", re.compile(r"(?i)\bbearer[ \t]{1,4}(?P<v>[A-Za-z0-9._~+/=-]{20,1024})"), _token_shaped,
             needs=("bearer",)),
    _Pattern(
        "password in a URL",
        re.compile(r"://(?<=[A-Za-z0-9]://)[^\s/:@'\",]{0,64}:(?P<pw>[^\s/@'\",]{3,128})@[\w.-]{1,253}"),
        _url_password,
    ),
    _Pattern(
        "connection string password",
        re.compile(r"(?i)(?<![\w-])(?:password|pwd)[ \t]{0,4}=[ \t]{0,4}(?P<v>\{[^}\n]{1,256}\}|[^;\n'\"{]{1,256});"),
        _group_not_placeholder("v", 4),
        needs=("password", "pwd"),
    ),
    _Pattern(
        ".netrc entry",
        re.compile(
            r"\b(?:machine[ \t\r\n]{1,16}(?:localhost|[\w-]{1,63}\.[\w.:-]{1,190})|default)"
            r"(?:[ \t\r\n]{1,64}login[ \t\r\n]{1,16}\S{1,256})?(?:[ \t\r\n]{1,64}account[ \t\r\n]{1,16}\S{1,256})?"
            r"[ \t\r\n]{1,64}password[ \t\r\n]{1,16}(?P<v>\S{1,256})"
        ),
        _group_not_placeholder("v", 4),
        needs=("password",),
    ),
    _Pattern(
        "Kubernetes Secret data",
        re.compile(
            r"(?m)^[ \t]{0,16}(?:data|stringData):[ \t]{0,16}\r?\n[ \t]{1,32}[\"']?[\w.-]{1,253}[\"']?:[ \t]{1,8}"
            r"(?P<v>[^\s#]{1,64})"
        ),
        _group_not_placeholder("v", 4),
        requires=re.compile(r"(?m)^kind:[ \t]{0,8}[\"']?Secret[\"']?[ \t]{0,8}\r?$"),
        needs=("kind:",),
    ),
    _Pattern("secret assignment", _ASSIGNMENT, _assignment, _describe_assignment,
             needs=("pass", "pwd", "pw", "secret", "token", "key", "credential", "dsn", "auth")),
    _Pattern(
        "secret in a name/value pair",
        re.compile(
            r"(?i)\b(?:name|key)[ \t]{0,4}[:=][ \t]{0,4}[\"']?(?P<name>[\w.-]{1,64})[\"']?[ \t\r\n,]{1,32}-?[ \t]{0,4}"
            r"value[ \t]{0,4}[:=][ \t]{0,4}[\"']?(?P<v>[^\s\"'#]{1,256})"
        ),
        lambda m: bool(_SECRET_NAME.search(_normalised(m.group("name")))) and _plausible(m.group("v")),
        needs=("value",),
    ),
    _Pattern(
        "secret in an XML element",
        re.compile(r"<(?P<name>[\w.-]{1,64})>(?P<v>[^<\n]{1,256})</(?P=name)>"),
        lambda m: bool(_SECRET_NAME.search(_normalised(m.group("name")))) and _plausible(m.group("v")),
    ),
    *(_Pattern(what, re.compile(regex), _checked(valid), needs=needs) for what, regex, valid, needs in _NUMBERS),
    _Pattern(
        "passport number",
        re.compile(
            r"(?i)(?:passport|护照|護照|パスポート|旅券|여권|pasaporte|reisepass|passnummer|passeport|passaporte"
            r"|паспорт[а-я]{0,2}(?:[ \t]{1,3}(?:№|серия))?)" + _GAP
            + r"(?P<v>[A-Z0-9]{6,9}|[0-9]{2} ?[0-9]{2} ?[0-9]{6})(?![A-Za-z0-9])"
        ),
        _passport,
        needs=("passport", "护照", "護照", "パスポート", "旅券", "여권", "pasaporte", "reisepass", "passnummer", "passeport",
               "passaporte", "паспорт"),
    ),
    *_stated_patterns(),
    _Pattern("phone number with a street address", _PHONE, _phone, requires=_STREET_ADDRESS),
)

# File names that hold secrets whatever their content.
DEFAULT_PATH_GLOBS: tuple[str, ...] = (
    ".env", ".env.*", "*.env", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.kdbx", "*.keystore",
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", ".netrc", ".pgpass", ".htpasswd", ".git-credentials",
    "**/.aws/credentials", "**/.ssh/*", "credentials.json", "service-account*.json", "*.tfvars", "secrets.*",
)
# Names that look like a secret file but are templates by convention.
_TEMPLATE_SUFFIXES = (".example", ".sample", ".template", ".dist", ".pub")


def _position(match: re.Match[str]) -> int:
    """Where the value itself starts (the line to report), else where the match does."""
    return _value_span(match)[0]


def _value_span(match: re.Match[str]) -> tuple[int, int]:
    """Where the value itself is (the part to mask), else the whole match."""
    for group in ("v", "qv", "pw", "id"):
        if group in match.re.groupindex and match.group(group) is not None:
            return match.span(group)
    return match.span()


MEMO_MIN_CHARS = 2_000
"""Texts at least this long have their findings remembered: a conversation's earlier messages are scanned
again with every prompt, and twelve 10,000-token replies took 30-57 ms to scan each time."""
MEMO_TEXTS = 256


class Scanner:
    """Built-in patterns plus a user's extra regexes and path globs."""

    def __init__(self, extra_patterns: Iterable[tuple[str, str]] = (), path_globs: Iterable[str] = DEFAULT_PATH_GLOBS):
        self.patterns = list(BUILTIN) + [
            _Pattern(what, re.compile(regex)) for what, regex in extra_patterns
        ]
        self.path_globs = tuple(path_globs)
        self._memo: OrderedDict[tuple[str, str], Finding | None] = OrderedDict()
        """The findings of the last :data:`MEMO_TEXTS` long texts scanned (the patterns never change)."""

    def scan_text(self, text: str, where: str) -> Finding | None:
        """The first finding in ``text``, if any: a sensitive file name in a diff, then the patterns in order."""
        if len(text) < MEMO_MIN_CHARS:
            return self._scan(text, where)
        key = (text, where)
        if key in self._memo:
            self._memo.move_to_end(key)
            return self._memo[key]
        finding = self._memo[key] = self._scan(text, where)
        if len(self._memo) > MEMO_TEXTS:
            self._memo.popitem(last=False)
        return finding

    def _scan(self, text: str, where: str) -> Finding | None:
        if "+++ " in text or "diff --git " in text:
            for name in diff_files(text):
                if finding := self.scan_path(name):
                    return Finding(finding.what, f"{where} (diff of {name})")
        lowered = text.lower()
        for pattern in self.patterns:
            if pattern.needs and not any(word in lowered for word in pattern.needs):
                continue
            for match in pattern.regex.finditer(text):
                if pattern.check is None or pattern.check(match):
                    if pattern.requires is not None and not pattern.requires.search(text):
                        break
                    what = pattern.describe(match) if pattern.describe else pattern.what
                    return Finding(what, f"{where}, line {text.count(chr(10), 0, _position(match)) + 1}")
        return None

    def mask(self, text: str) -> str:
        """``text`` with every value a pattern finds replaced by ``[sensitive: what]``: how history keeps
        a prompt that was refused for looking sensitive."""
        spans: list[tuple[int, int, str]] = []
        for pattern in self.patterns:
            if pattern.requires is not None and not pattern.requires.search(text):
                continue
            for match in pattern.regex.finditer(text):
                if pattern.check is None or pattern.check(match):
                    start, end = _value_span(match)
                    spans.append((start, end, pattern.describe(match) if pattern.describe else pattern.what))
        out: list[str] = []
        last = 0
        for start, end, what in sorted(spans):
            if start < last:  # overlaps a value already masked
                continue
            out += (text[last:start], f"[sensitive: {what}]")
            last = end
        return "".join(out) + text[last:]

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

"""Finds what looks like a secret or private data in text and file names.

Used by the router: a prompt, attachment or earlier message with a finding is
``sensitive`` and stays on a local source. A finding names *what* was found and
*where* (the line), never the value, so it can be shown in the status bar, in
``--json`` output and in logs; a text reports every finding, one per kind and line.

The built-in patterns cover key and token formats, private key blocks, secret-named
keys assigned anywhere in a line (env, INI, YAML, JSON, code, ``.npmrc``, connection
strings), Azure storage account keys, Kubernetes Secret data, ``.netrc`` entries,
passwords and tokens in URLs, signed URLs, passwords on the command lines of tools that
take them (``mysql -p…``, ``curl -u``, ``docker login -p``...) and in secret-named flags,
passwords passed by position to a login or connect call, passwords stated in words (in
the languages of the router's table), payment cards (Luhn), IBANs (mod 97), national ID
numbers with their check digits, labelled passport numbers, a medical record (a record
number with a date of birth and a diagnosis), a phone number given with a street address,
and base64 or hex that decodes to any of these. A unified diff's file names are checked
against the path globs. Users add their own regexes and path globs in ``[router]``.

Every built-in regex is linear on adversarial input: each quantifier is bounded and no
repetition nests an ambiguous one, so a megabyte of pasted text scans in well under a
second (``tests/test_secrets_scan.py`` feeds each pattern its worst cases).
"""

from __future__ import annotations

import base64
import datetime
import fnmatch
import functools
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
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
    requires: tuple[re.Pattern[str], ...] = ()
    """The pattern counts only in a text where these all match too (a phone number *with* an address)."""
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
    r"|(?:路|街|大道|胡同|巷|弄)[ \t]?[0-9０-９]{1,5}[ \t]?[号號]"
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


# A mainland China mobile number (11 digits from 13-19), which Chinese text writes right after its label (``手机13912345678``).
_CN_MOBILE = re.compile(
    r"(?P<id>\+86[ -]?1[3-9][0-9](?:[ -]?[0-9]{4}){2}|1(?<![0-9A-Za-z+].)[3-9][0-9](?:[ -]?[0-9]{4}){2})(?![0-9A-Za-z])"
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


# --- passwords on the command lines of tools that take them as arguments -------------------------

# A tool that takes a password as an argument, and the rest of its line. In lower case, as shells take them:
# a regex of plain alternatives lets the engine skip to their first letters.
_COMMAND = re.compile(
    r"(?P<tool>mysql(?:dump|admin|import|check|sh)?|mariadb(?:-dump|-admin)?|mongo(?:sh|dump|restore|import|export)?"
    r"|redis-cli|sshpass|htpasswd|docker|podman|nerdctl|buildah|skopeo|oras|helm|curl"
    r"|ldap(?:search|modify|add|delete|passwd|whoami)|smbclient|openssl|keytool)"
    r"(?P<args>[ \t][^\n]{1,400})"
)
# The flags that take the password as their next argument, and those that hold it after ``=``, per tool family.
_NEXT_ARG = {
    "mongo": ("-p", "--password"), "redis-cli": ("-a", "--pass"), "sshpass": ("-p",), "ldap": ("-w",),
    "login": ("-p", "--password"), "keytool": ("-storepass", "-keypass", "-srcstorepass", "-deststorepass",
                                               "-srckeypass", "-destkeypass"),
}
_VARIABLE = re.compile(r"\$|%\w{1,64}%|\{\{")


# A shell word (quoted and unquoted pieces run together: ``-p'S3 cret'``) or a run of separators.
_SHELL_WORD = re.compile(r"""(?:'[^'\n]{0,512}'|"[^"\n]{0,512}"|[^\s'"|;&<>])+|[|;&<>]+""")
_QUOTED = re.compile(r"'([^'\n]{0,512})'|\"([^\"\n]{0,512})\"")
# What a tool family's line must hold for it to pass a password at all (a fast skip before reading the words).
_FLAG_HINTS = {"mysql": ("-p", "--password="), "login": ("-p", "--password"), "curl": ("-u", "--user", "-U"),
               "smbclient": ("-U", "--user"), "openssl": ("pass:",), "htpasswd": ("b",)}


def _arguments(text: str) -> list[str]:
    """The words of a command line, quotes removed, up to the first pipe, ``;``, ``&&`` or redirection."""
    words = []
    for word in _SHELL_WORD.findall(text):
        if word[0] in "|;&<>":
            break
        words.append(_QUOTED.sub(lambda m: m.group(1) or m.group(2) or "", word))
    return words


def _command_password(match: re.Match[str]) -> str | None:
    """The password that a command line gives its tool, if any (``mysql -pS3cret``, ``curl -u me:S3cret``...)."""
    before = match.string[match.start() - 1:match.start()]
    if before and (before.isalnum() or before in "_-."):
        return None  # part of a longer name (``my-docker``, ``libcurl``); ``/usr/bin/curl`` is the tool
    tool = match.group("tool")
    family = ("mongo" if tool.startswith("mongo") else "ldap" if tool.startswith("ldap") else
              "mysql" if tool.startswith(("mysql", "mariadb")) else
              "login" if tool in {"docker", "podman", "nerdctl", "buildah", "skopeo", "oras", "helm"} else tool)
    args = match.group("args")
    if not any(hint in args for hint in _FLAG_HINTS.get(family, ("-",))) or (family == "login" and "login" not in args):
        return None
    words = _arguments(args)
    for index, word in enumerate(words):
        following = words[index + 1] if index + 1 < len(words) else ""
        value: str | None = None
        if family == "mysql":
            if word.startswith("-p") and len(word) > 2 and not word.startswith("--"):
                value = word[2:]  # ``-pSECRET``: ``-p SECRET`` would be a prompt, then a database name
            elif word.startswith("--password="):
                value = word.split("=", 1)[1]
        elif family == "sshpass" and word.startswith("-p") and len(word) > 2:
            value = word[2:]
        elif family == "curl":
            credentials = (following if word in {"-u", "--user", "--proxy-user", "-U"} else word[7:]
                           if word.startswith("--user=") else word[2:] if word.startswith("-u") else "")
            value = credentials.split(":", 1)[1] if ":" in credentials else None
        elif family == "smbclient" and word in {"-U", "--user"} and "%" in following:
            value = following.split("%", 1)[1]
        elif family == "openssl" and word in {"-passin", "-passout", "-pass"} and following.startswith("pass:"):
            value = following[5:]
        elif family == "htpasswd" and word.startswith("-") and "b" in word:
            positional = [w for w in words[index + 1:] if not w.startswith("-")]
            wanted = 1 if "n" in word else 2  # ``-nb user password``, ``-b file user password``
            value = positional[wanted] if len(positional) > wanted else None
        elif word in _NEXT_ARG.get(family, ()):
            value = following
        elif family in {"mongo", "redis-cli", "login"} and word.startswith(("--password=", "--pass=")):
            value = word.split("=", 1)[1]
        if value and not _VARIABLE.search(value) and _plausible(value, 4) and value.lower() not in _URL_PASSWORD_PLACEHOLDERS:
            return tool
    return None


_SECRET_FLAG = re.compile(
    r"(?i)--(?P<name>(?:[a-z]{1,20}-){0,3}(?:password|passwd|token|api-?key|secret-?key|master-?key|client-?secret"
    r"|access-?key|auth-?key))(?:[ \t]{1,4}|=)(?P<q>[\"']?)(?P<v>[^\s\"'-][^\s\"']{0,255})"
)


def _secret_flag(match: re.Match[str]) -> bool:
    value = match.group("v")
    return not _VARIABLE.search(value) and _plausible(value, 8) and (_strong(value) or bool(match.group("q")))


# --- passwords passed by position to a function that logs in, authenticates or connects ----------

# Spelt out in each case rather than ``(?i)``: a regex of plain alternatives lets the engine skip to their first letters.
_CALL = re.compile(
    r"(?:login|Login|LogIn|LOGIN|log_in|logon|Logon|signin|signIn|SignIn|sign_in|auth|Auth|AUTH|connect|Connect|CONNECT"
    r"|bind|Bind)(?P<tail>\w{0,16})[ \t]{0,2}\((?P<args>[^()\n]{3,400})\)"
)
_STRING_LITERAL = re.compile(r"([\"'`])([^\"'`\\\n]{0,256})\1")
_HOST_OR_EMAIL = re.compile(r"[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}|[a-z0-9-]{1,63}(?:\.[a-z0-9-]{1,63}){1,8}")


def _positional_password(match: re.Match[str]) -> bool:
    """A call such as ``login("user", "S3cret!")`` or ``connect(host, "app", "S3cret!")``: a string literal after
    another one that reads as a password (not a placeholder, a host, an address or a message)."""
    strings = [value for _, value in _STRING_LITERAL.findall(match.group("args"))]
    return any(
        _plausible(value, 6) and _strong(value) and " " not in value and "://" not in value
        and not _HOST_OR_EMAIL.fullmatch(value) and value.lower() not in _URL_PASSWORD_PLACEHOLDERS
        for value in strings[1:]
    )


# --- a medical record: a record number with a date of birth and a diagnosis ----------------------

_RECORD_NUMBER = re.compile(
    r"(?i)(?:\bMRN|medical[ \t]record(?:[ \t](?:number|no\.?|#))?|patient[ \t]?(?:id|number|no\.?|#)|\bchart[ \t](?:number|no\.?)"
    r"|patienten(?:nummer|-?id|-?nr\.?)|fallnummer|病历号|病案号|住院号|门诊号|病歷號|病历编号|カルテ番号|患者ID|患者番号|診察券番号"
    r"|historia[ \t]cl[ií]nica|\bNHC|n[º°]?[ \t]de[ \t]dossier|num[ée]ro[ \t]de[ \t]dossier|dossier[ \t]m[ée]dical|prontu[aá]rio"
    r"|номер[ \t]медицинской[ \t]карты|медкарт[аы]|номер[ \t]истории[ \t]болезни|환자[ \t]?번호|병록[ \t]?번호|차트[ \t]?번호)"
    r"[^\w\n]{0,6}(?:(?:n[º°o]|nr|number|nummer|番号|号|번호)\.?[^\w\n]{0,4})?(?P<v>[A-Za-z]{0,4}-?[0-9]{5,12})(?![0-9])"
)
_BIRTH_DATE = re.compile(
    r"(?i)(?:\bDOB|date[ \t]of[ \t]birth|\bborn(?:[ \t]on)?|birth[ \t]?date|\bgeb\.|geboren(?:[ \t]am)?|geburtsdatum"
    r"|出生日期|出生年月日?|生年月日|fecha[ \t]de[ \t]nacimiento|\bf\.[ \t]?nac\.|\bn[ée]e?[ \t]le|date[ \t]de[ \t]naissance"
    r"|data[ \t]de[ \t]nascimento|nascid[oa][ \t]em|дата[ \t]рождения|생년월일)[^\w\n]{0,6}"
    r"(?:[0-9]{1,4}[./-][0-9]{1,2}[./-][0-9]{1,4}|[0-9]{4}[ \t]?[年년][ \t]?[0-9]{1,2}[ \t]?[月월][ \t]?[0-9]{1,2}"
    r"|[0-9]{1,2}\.?[ \t][^\W\d_]{3,10}\.?[ \t][0-9]{4}|[A-Z][a-z]{2,8}\.?[ \t][0-9]{1,2},?[ \t][0-9]{4})"
)
_DIAGNOSIS = re.compile(
    r"(?i)(?:diagnos[ie]s|\bdx\b|diagnose|diagnostic|diagn[óo]stico|diagnosi|диагноз|诊断|診断|진단(?:명)?)[^\w\n]{0,4}[^\W_]"
)
_MEDICAL_NEEDS = (
    "mrn", "medical record", "patient", "chart", "fallnummer", "病历", "病案", "住院号", "门诊号", "病歷", "カルテ", "患者",
    "診察券", "historia", "nhc", "dossier", "prontu", "карт", "истории болезни", "환자", "병록", "차트",
)


# --- base64 or hex that decodes to something secret ---------------------------------------------

_ENCODED = re.compile(r"(?P<v>[A-Za-z0-9+/_-](?<![A-Za-z0-9+/_=-].)[A-Za-z0-9+/_-]{31,65535}={0,2})")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2}){16,}")
ENCODED_DECODE_CHARS = 8_192
"""How much of one encoded run is decoded and scanned: enough for a key block's header and some key material."""


def _encoded_finding(match: re.Match[str]) -> str | None:
    return _decoded_finding(match.group("v")[:ENCODED_DECODE_CHARS])


@functools.lru_cache(maxsize=256)
def _decoded_finding(head: str) -> str | None:
    """What a built-in pattern finds in the text that ``head`` (base64 or hex) decodes to, if it is text."""
    try:
        if _HEX.fullmatch(head):
            raw, encoding = bytes.fromhex(head), "hex"
        else:
            body = head.rstrip("=").replace("-", "+").replace("_", "/")
            body = body[:len(body) // 4 * 4]
            raw, encoding = base64.b64decode(body, validate=True), "base64"
    except ValueError:
        return None
    decoded = raw.decode("utf-8", "ignore")
    printable = sum(c.isprintable() or c in "\n\r\t" for c in decoded)
    if len(decoded) < 16 or printable < 0.97 * len(raw):
        return None
    for pattern in BUILTIN:
        if pattern.regex is not _ENCODED and _first_match(pattern, decoded, decoded.lower()) is not None:
            return f"{encoding}-encoded {pattern.what}"
    return None


# --- the built-in patterns, in the order they are tried ------------------------------------------

def _url_password(match: re.Match[str]) -> bool:
    value = match.group("pw")
    return value.lower() not in _URL_PASSWORD_PLACEHOLDERS and not _PLACEHOLDER.search(value) and len(set(value)) > 1


def _token_shaped(match: re.Match[str]) -> bool:
    value = match.group("v")
    return _plausible(value, 16) and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


# The Azure storage emulator's account key, published in Microsoft's documentation for every developer.
_AZURITE_KEY_START = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1"


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
    _key_format("GitLab token", r"\bgl(?:pat|ptt|dt|rt|rtr|cbt|ft|imt|oas|soat|ffct)-[A-Za-z0-9_-]{20,64}",
                "glpat-", "glptt-", "gldt-", "glrt-", "glrtr-", "glcbt-", "glft-", "glimt-", "gloas-", "glsoat-", "glffct-"),
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
    _key_format("Hugging Face organisation token", r"\bapi_org_[A-Za-z0-9]{34}\b", "api_org_"),
    _key_format("Slack app token", r"\bxapp-[0-9]-[A-Za-z0-9-]{20,255}", "xapp-"),
    _key_format("Stripe webhook secret", r"\bwhsec_[A-Za-z0-9]{32,64}\b", "whsec_"),
    _key_format("Docker Hub token", r"\bdckr_(?:pat|oat)_[A-Za-z0-9_-]{27,64}", "dckr_"),
    _key_format("Twilio API key", r"\bSK[0-9a-fA-F]{32}\b", "sk"),
    _key_format("Shopify token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", "shpat_", "shpca_", "shppa_", "shpss_"),
    _key_format("Square token", r"\bsq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}\b", "sq0"),
    _key_format("New Relic key", r"\bNR(?:AK|AA|II|JS)-[A-Z0-9]{27}\b", "nrak-", "nraa-", "nrii-", "nrjs-"),
    _key_format("HashiCorp Vault token", r"\bhv[sbr]\.[A-Za-z0-9_-]{24,255}", "hvs.", "hvb.", "hvr."),
    _key_format("Doppler token", r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9._-]{40,64}", "dp."),
    _key_format("Linear API key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b", "lin_api_", "lin_oauth_"),
    _key_format("Atlassian API token", r"\bAT(?:ATT|CTT)3[A-Za-z0-9_=-]{180,255}", "atatt3", "atctt3"),
    _key_format("DigitalOcean token", r"\bdo[opr]_v1_[a-f0-9]{64}\b", "dop_v1_", "doo_v1_", "dor_v1_"),
    _key_format("Cloudflare Origin CA key", r"\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}\b", "v1.0-"),
    _key_format("Databricks token", r"\bdapi[a-f0-9]{32}(?:-[0-9])?\b", "dapi"),
    _key_format("Postman API key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", "pmak-"),
    _key_format("Telegram bot token", r"\b[0-9]{8,10}:AA[A-Za-z0-9_-]{33}\b", ":aa"),
    _key_format("Azure AD client secret",
                r"[A-Za-z0-9_~.-](?<![A-Za-z0-9_~.-].)[A-Za-z0-9_~.-]{2}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])", "q~"),
    _key_format("Google OAuth client secret", r"\bGOCSPX-[A-Za-z0-9_-]{28}", "gocspx-"),
    _key_format("Google OAuth access token", r"\bya29\.[0-9A-Za-z_-]{30,2048}", "ya29."),
    _key_format("age secret key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b", "age-secret-key-"),
    _key_format("Grafana token", r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b|\bglc_[A-Za-z0-9+/]{32,400}", "glsa_", "glc_"),
    _key_format("Sentry token", r"\bsntry[su]_[A-Za-z0-9+/=_-]{40,1024}", "sntrys_", "sntryu_"),
    _key_format("Supabase token", r"\bsbp_[a-f0-9]{40}\b", "sbp_"),
    _key_format("xAI API key", r"\bxai-[A-Za-z0-9]{70,100}\b", "xai-"),
    _key_format("Perplexity API key", r"\bpplx-[A-Za-z0-9]{40,64}\b", "pplx-"),
    _key_format("Replicate token", r"\br8_[A-Za-z0-9]{37}\b", "r8_"),
    _key_format("Terraform Cloud token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,90}", "atlasv1"),
    _key_format("Pulumi token", r"\bpul-[a-f0-9]{40}\b", "pul-"),
    _key_format("Brevo API key", r"\bxkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}\b", "xkeysib-"),
    _key_format("Mailgun API key", r"\bkey-[0-9a-f]{32}\b", "key-"),
    _key_format("Mailchimp API key", r"\b[0-9a-f]{32}-us[0-9]{1,2}\b", "-us"),
    _key_format("Tencent Cloud secret ID", r"\bAKID[A-Za-z0-9]{32}\b", "akid"),
    _key_format("Alibaba Cloud access key", r"\bLTAI[A-Za-z0-9]{12,20}\b", "ltai"),
    _key_format("Yandex Cloud key", r"\bAQVN[A-Za-z0-9_-]{35,38}\b", "aqvn"),
    _key_format("Heroku token", r"\bHRKU-[A-Za-z0-9_-]{56,64}\b", "hrku-"),
    _key_format("Notion token", r"\bntn_[0-9]{11}[A-Za-z0-9]{32,40}\b|\bsecret_[A-Za-z0-9]{43}\b", "ntn_", "secret_"),
    _key_format("Airtable token", r"pat(?<=\bpat)[A-Za-z0-9]{14}\.[a-f0-9]{64}\b", "pat"),
    _key_format("Figma token", r"\bfigd_[A-Za-z0-9_-]{40,128}", "figd_"),
    _key_format("Contentful token", r"\bCFPAT-[A-Za-z0-9_-]{43}", "cfpat-"),
    _key_format("Netlify token", r"\bnfp_[A-Za-z0-9]{36}\b", "nfp_"),
    _key_format("Braintree access token", r"access_token\$production\$[a-z0-9]{16}\$[a-f0-9]{32}", "access_token$"),
    _key_format("Shippo token", r"\bshippo_(?:live|test)_[a-f0-9]{40}\b", "shippo_"),
    _key_format("Discord webhook URL", r"discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/[A-Za-z0-9_-]{60,80}", "discord"),
    _Pattern(
        "Azure storage account key",
        re.compile(r"(?i)\b(?:AccountKey|SharedAccessKey)[ \t]{0,2}=[ \t]{0,2}(?P<v>[A-Za-z0-9+/]{20,100}={0,2})"),
        lambda m: _plausible(m.group("v"), 20) and not m.group("v").startswith(_AZURITE_KEY_START),
        needs=("accountkey", "sharedaccesskey"),
    ),
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
        requires=(re.compile(r"(?m)^kind:[ \t]{0,8}[\"']?Secret[\"']?[ \t]{0,8}\r?$"),),
        needs=("kind:",),
    ),
    _Pattern(
        "token in a URL",  # ``https://TOKEN@host``: a token as the URL's user name
        re.compile(r"://(?<=[A-Za-z]://)(?P<v>[A-Za-z0-9_-]{30,255})@[\w.-]{1,253}"),
        _token_shaped,
    ),
    _Pattern(
        "signed URL signature",  # Azure SAS, S3 and GCS presigned URLs: whoever has the link has the access
        re.compile(r"(?i)[?&](?:sig|x-amz-signature|x-goog-signature|signature)=(?P<v>[A-Za-z0-9%+/=_-]{32,1024})"),
        _group_not_placeholder("v", 32),
        needs=("sig=", "signature="),
    ),
    _Pattern("password on a command line", _COMMAND, lambda m: _command_password(m) is not None,
             lambda m: f"password on a command line ({_command_password(m)})",
             needs=("mysql", "mariadb", "mongo", "redis-cli", "sshpass", "htpasswd", "login", "curl", "ldap", "smbclient",
                    "openssl", "keytool")),
    _Pattern("secret in a command-line flag", _SECRET_FLAG, _secret_flag, lambda m: f"secret in a command-line flag "
             f"(--{m.group('name')[-40:]})", needs=("--",)),
    _Pattern("password passed by position", _CALL, _positional_password,
             needs=("login", "logon", "signin", "sign_in", "auth", "connect", "bind")),
    _Pattern("medical record (record number, date of birth and diagnosis)", _RECORD_NUMBER,
             requires=(_BIRTH_DATE, _DIAGNOSIS), needs=_MEDICAL_NEEDS),
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
    _Pattern("phone number with a street address", _PHONE, _phone, requires=(_STREET_ADDRESS,)),
    _Pattern("Chinese mobile number with a street address", _CN_MOBILE, requires=(_STREET_ADDRESS,),
             needs=("路", "街", "道", "巷", "弄", "号", "號")),
    _Pattern("encoded secret", _ENCODED, lambda m: _encoded_finding(m) is not None,
             lambda m: _encoded_finding(m) or "encoded secret"),
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
MAX_FINDINGS = 20
"""The most findings one text reports (one per kind and line): enough to show what to take out, and a pasted
dump of ten thousand card numbers costs no more to scan than the first twenty."""


def _first_match(pattern: _Pattern, text: str, lowered: str) -> re.Match[str] | None:
    """``pattern``'s first match in ``text`` that passes its check, where its prefilter and its requirements allow."""
    for match in _matches(pattern, text, lowered):
        return match
    return None


def _matches(pattern: _Pattern, text: str, lowered: str) -> Iterator[re.Match[str]]:
    """``pattern``'s matches in ``text`` that pass its check, where its prefilter and its requirements allow."""
    if pattern.needs and not any(word in lowered for word in pattern.needs):
        return
    required = False
    for match in pattern.regex.finditer(text):
        if pattern.check is None or pattern.check(match):
            if not required:
                if not all(regex.search(text) for regex in pattern.requires):
                    return
                required = True
            yield match


class Scanner:
    """Built-in patterns plus a user's extra regexes and path globs."""

    def __init__(self, extra_patterns: Iterable[tuple[str, str]] = (), path_globs: Iterable[str] = DEFAULT_PATH_GLOBS):
        self.patterns = list(BUILTIN) + [
            _Pattern(what, re.compile(regex)) for what, regex in extra_patterns
        ]
        self.path_globs = tuple(path_globs)
        self._memo: OrderedDict[tuple[str, str], tuple[Finding, ...]] = OrderedDict()
        """The findings of the last :data:`MEMO_TEXTS` long texts scanned (the patterns never change)."""

    def findings(self, text: str, where: str) -> tuple[Finding, ...]:
        """Everything in ``text`` that looks sensitive, one finding per kind and line (at most :data:`MAX_FINDINGS`):
        sensitive file names in a diff first, then the patterns in order; ``()`` for a clean text."""
        if len(text) < MEMO_MIN_CHARS:
            return self._scan(text, where)
        key = (text, where)
        if key in self._memo:
            self._memo.move_to_end(key)
            return self._memo[key]
        found = self._memo[key] = self._scan(text, where)
        if len(self._memo) > MEMO_TEXTS:
            self._memo.popitem(last=False)
        return found

    def _scan(self, text: str, where: str) -> tuple[Finding, ...]:
        found: dict[Finding, None] = {}  # ordered, without repeats
        if "+++ " in text or "diff --git " in text:
            for name in diff_files(text):
                if finding := self.scan_path(name):
                    found[Finding(finding.what, f"{where} (diff of {name})")] = None
        lowered = text.lower()
        for pattern in self.patterns:
            line, counted = 1, 0  # the line of the last match, counted up to there: matches come in order
            for match in _matches(pattern, text, lowered):
                if len(found) >= MAX_FINDINGS:
                    return tuple(found)
                position = max(_position(match), counted)
                line += text.count("\n", counted, position)
                counted = position
                what = pattern.describe(match) if pattern.describe else pattern.what
                found[Finding(what, f"{where}, line {line}")] = None
        return tuple(found)

    def mask(self, text: str) -> str:
        """``text`` with every value a pattern finds replaced by ``[sensitive: what]``: how history keeps
        a prompt that was refused for looking sensitive."""
        spans: list[tuple[int, int, str]] = []
        lowered = text.lower()
        for pattern in self.patterns:
            for match in _matches(pattern, text, lowered):
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
        """A finding if the file name matches a sensitive glob, in any case (``.ENV``, ``ID_RSA``: file systems on
        Windows and macOS ignore case); templates such as ``.env.example`` excluded."""
        written = str(PurePosixPath(path.replace("\\", "/")))
        posix = written.lower()
        name = posix.rsplit("/", 1)[-1]
        if not name or name.endswith(_TEMPLATE_SUFFIXES):
            return None
        for glob in self.path_globs:
            flat = glob.lower().replace("**/", "*")
            target = posix if "/" in glob else name
            if fnmatch.fnmatchcase(target, flat) or ("/" in glob and fnmatch.fnmatchcase("/" + posix, flat)):
                return Finding(f"file name matches sensitive path '{glob}'", written.rsplit("/", 1)[-1])
        return None

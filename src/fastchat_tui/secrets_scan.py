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


# --- values: placeholders, references and what a real secret looks like -------------------------

# Values that are references, placeholders or code, not secrets.
_PLACEHOLDER = re.compile(
    r"""^(?:\$|%|<|\{|\[|\(|!|[*&]\w|\*{3}|\.{3}|…|os\.|process\.env|getenv|env\(|none$|null$|nil$|true$|false$|undefined$)"""
    r"""|your[_-]?|xxxx|placeholder|redacted|change[_-]?me|example|replace[_-]?(?:me|this|with)|[_-]here$|^todo$|^tbd$"""
    r"""|^[\w.]{1,64}[(\[]|^[A-Za-z_]\w{0,63}(?:\.\w{1,64}){1,8}$|^[a-z]{1,32}(?:_[a-z]{1,32}){1,8}$|^(?:\.{0,2}/|~/)"""
    r"""|^(?:password|passwd|pass|secret|token|api_?key|key|value|string|pw|pwd)s?\d?$|^x+$|^\*+$""",
    re.IGNORECASE,
)
# Type names after ``name:`` in code (``password: str``, ``token: SecretStr``), not values.
_TYPE_NAME = re.compile(r"^(?:str|string|int|bool|bytes|boolean|number|any|float|object|char)$|^[A-Z][a-z]{1,20}(?:[A-Z][a-z]{1,20}){0,4}$")
_URL_PASSWORD_PLACEHOLDERS = {"password", "pass", "passwd", "pwd", "secret", "pw", "xxx", "****", "token"}
_TRAILING = ".,:;!?)]}>»”"
_QUOTES = "\"'`“”«»「」"


def _plausible(value: str, min_len: int = 6) -> bool:
    """A value long and varied enough to be a secret, and not a placeholder, reference or code."""
    value = value.strip(_QUOTES).rstrip(_TRAILING).strip(_QUOTES)
    return len(value) >= min_len and len(set(value)) > 3 and not _PLACEHOLDER.search(value)


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
    r"(?P<tail>[\w.-]{0,24})[\"'\]]{0,2}[ \t]{0,4}(?P<sep>:=|=>|==|=|:)[ \t]{0,4}"
    r"(?:(?P<q>[\"'`])(?P<qv>[^\"'`\n]{1,256})(?P=q)|(?P<v>[^\s\"'`;,&]{1,256}))"
)
# A normalised key name (upper case, ``_`` between words) that holds a secret.
_SECRET_NAME = re.compile(
    r"(?:PASSWORD|PASSWD|PASSPHRASE|PASSCODE|SECRET|TOKEN|API_?KEY"
    r"|(?:ACCESS|PRIVATE|SECRET|ENCRYPTION|SIGNING|MASTER|CLIENT|APP|AUTH)_?KEY|CREDENTIALS?)"
    r"(?:_?(?:KEY|VALUE|BASE|B64|BASE64|STRING|STR))?$"
    r"|(?:^|_)(?:PASS|PWD|PW|DSN|AUTH)$"
)
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


def _assignment(match: re.Match[str]) -> bool:
    name, start = _key_name(match)
    normalised = _normalised(name)
    if normalised in _SHELL_NAMES or not _SECRET_NAME.search(normalised):
        return False
    quoted = match.group("qv")
    value = quoted if quoted is not None else match.group("v")
    if not _plausible(value):
        return False
    if quoted is None and match.group("sep") == ":":
        if _TYPE_NAME.match(value.rstrip(_TRAILING)):
            return False
        # ``Password: forgotten`` in a sentence is prose; a config line or a value with a digit is not.
        if not _at_line_start(match.string, start) and not _strong(value):
            return False
    return True


def _describe_assignment(match: re.Match[str]) -> str:
    return f"secret assignment ({_key_name(match)[0][-40:]}=…)"


# --- values checked by arithmetic ----------------------------------------------------------------

def _luhn(digits: str) -> bool:
    if not 13 <= len(digits) <= 19 or len(set(digits)) < 2:
        return False
    total = 0
    for index, char in enumerate(reversed(digits)):
        digit = int(char)
        if index % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


# IBAN lengths by country, from the SWIFT IBAN registry (release 101).
_IBAN_LENGTHS = {
    entry[:2]: int(entry[2:]) for entry in (
        "AD24 AE23 AL28 AT20 AZ28 BA20 BE16 BG22 BH22 BI27 BR29 BY28 CH21 CR22 CY28 CZ24 DE22 DJ27 DK18 DO28 EE20 EG29 "
        "ES24 FI18 FK18 FO18 FR27 GB22 GE22 GI23 GL18 GR27 GT28 HN28 HR21 HU28 IE22 IL23 IQ23 IS26 IT27 JO30 KW30 KZ20 "
        "LB28 LC32 LI21 LT20 LU20 LV21 LY25 MC27 MD24 ME22 MK19 MN20 MR27 MT31 MU30 NI28 NL18 NO15 OM23 PK24 PL28 PS29 "
        "PT25 QA29 RO24 RS22 RU33 SA24 SC31 SD18 SE24 SI19 SK24 SM27 SO23 ST25 SV28 TL23 TN24 TR26 UA29 VA22 VG24 XK20 YE30"
    ).split()
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
    """Area 001-899 but not 666, group 01-99, serial 0001-9999 (the SSA's never-issued ranges excluded)."""
    area, group, serial = int(value[:3]), int(value[3:5]), int(value[5:])
    return 0 < area < 900 and area != 666 and group > 0 and serial > 0


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
    """Steuer-ID: 11 digits, no leading zero, an ISO 7064 MOD 11,10 check digit."""
    if value[0] == "0":
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


# (what, regex with a group ``id``, validator of the compacted id): one row per format, labelled or not.
_NUMBERS: tuple[tuple[str, str, Callable[[str], bool]], ...] = (
    ("payment card number",
     r"(?<![0-9])(?<![0-9][.-])(?P<id>[3-6][0-9]{3}(?:[ -]?[0-9]{4}){3}(?:[ -]?[0-9]{3})?|3[47][0-9]{2}[ -]?[0-9]{6}[ -]?[0-9]{5})"
     r"(?![0-9])(?![.-][0-9])", _luhn),
    ("IBAN", r"\b(?P<id>[A-Z]{2}[0-9]{2}(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,3})?))\b", _iban),
    ("China resident ID number",
     r"(?<![0-9A-Za-z])(?P<id>[1-9][0-9]{5}(?:18|19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])[0-9]{3}[0-9Xx])"
     r"(?![0-9A-Za-z])", _china_resident_id),
    ("US social security number", r"(?<![0-9-])(?P<id>[0-9]{3}-[0-9]{2}-[0-9]{4})(?![0-9-])", _us_ssn),
    ("US social security number",
     r"(?i)\b(?:ssn|social[ \t]{1,3}security(?:[ \t]{1,3}(?:number|no\.?|#))?)\W{0,4}(?P<id>[0-9]{3}[ -]?[0-9]{2}[ -]?[0-9]{4})(?![0-9])",
     _us_ssn),
    ("UK National Insurance number",
     r"(?<![A-Za-z0-9])(?P<id>[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?[0-9]{2} ?[0-9]{2} ?[0-9]{2} ?[A-D])(?![A-Za-z0-9])", _uk_nino),
    ("Aadhaar number", r"(?<![0-9])(?<![0-9][ -])(?P<id>[2-9][0-9]{3}[ -][0-9]{4}[ -][0-9]{4})(?![0-9])(?![ -][0-9])", _aadhaar),
    ("Aadhaar number", r"(?i)(?:\baadh?aar|आधार)\W{0,12}(?P<id>[2-9][0-9]{3}[ -]?[0-9]{4}[ -]?[0-9]{4})(?![0-9])", _aadhaar),
    ("Brazil CPF number", r"(?<![0-9.])(?P<id>[0-9]{3}\.[0-9]{3}\.[0-9]{3}-[0-9]{2})(?![0-9])", _brazil_cpf),
    ("Brazil CPF number", r"(?i)\bCPF\W{0,4}(?P<id>[0-9]{11})(?![0-9])", _brazil_cpf),
    ("Spain DNI/NIE number", r"(?<![A-Za-z0-9])(?P<id>(?:[XYZ]-?[0-9]{7}|[0-9]{8})-?[A-Z])(?![A-Za-z0-9])", _spain_dni),
    ("France social security number",
     r"(?<![0-9])(?P<id>[1278] ?[0-9]{2} ?(?:0[1-9]|1[0-2]) ?(?:[0-9]{2}|2[AB]) ?[0-9]{3} ?[0-9]{3} ?[0-9]{2})(?![0-9])", _france_nir),
    ("Russia SNILS number", r"(?<![0-9])(?P<id>[0-9]{3}-[0-9]{3}-[0-9]{3}[ -][0-9]{2})(?![0-9])", _russia_snils),
    ("Russia SNILS number", r"(?i)снилс\W{0,4}(?P<id>[0-9]{11})(?![0-9])", _russia_snils),
    ("Korea resident registration number",
     r"(?<![0-9])(?P<id>[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])-[1-8][0-9]{6})(?![0-9])", _korea_rrn),
    ("Japan My Number",
     r"(?i)(?:マイナンバー|個人番号|\bmy[ \t]?number\b)\W{0,6}(?:は[ \t]{0,3})?(?P<id>[0-9]{4}[ -]?[0-9]{4}[ -]?[0-9]{4})(?![0-9])",
     _japan_my_number),
    ("Germany tax ID",
     r"(?i)(?:steuer-?id(?:entifikationsnummer)?|identifikationsnummer|\bidnr\.?)\W{0,6}"
     r"(?P<id>[0-9]{2} ?[0-9]{3} ?[0-9]{3} ?[0-9]{3})(?![0-9])", _germany_tax_id),
)

# --- passwords stated in words, one row per language of the router's table -----------------------

# (language, noun, optional qualifier before the verb (``for gmail``), verb or colon)
_STATED_LATIN = (
    ("en", r"pass(?:word|code|phrase)|passwd|pin(?:[ \t]{1,3}(?:code|number))?", r"for|to|on|of|at",
     r"is|was|will[ \t]{1,3}be|would[ \t]{1,3}be|is[ \t]{1,3}(?:now|still)|(?:has[ \t]{1,3}been[ \t]{1,3})?(?:set|changed)[ \t]{1,3}to"),
    ("es", r"contraseña|contrasena|clave", r"de|del|para", r"es|era|será|sera"),
    ("de", r"passwort|kennwort", r"für|fur|von|zu|bei", r"ist|lautet|war"),
    ("fr", r"mot[ \t]{1,3}de[ \t]{1,3}passe", r"pour|de|du", r"est|était|etait|sera"),
    ("pt", r"senha", r"de|do|da|para", r"é|era|será"),
)
_STATED_OTHER = (
    ("ru", r"парол[ьяю]", r"(?:[ \t]{1,3}(?:от|для)[ \t]{1,3}\S{1,40})?[ \t]{0,3}(?:[:—-]|это|был|будет|такой)?"),
    ("zh", r"密码|密碼|口令", r"[ \t]{0,3}(?:是|为|為|:|：|=)"),
    ("ja", r"パスワード|暗証番号", r"[ \t]{0,3}(?:は|が|:|：)"),
    ("ko", r"비밀번호|패스워드|암호", r"[ \t]{0,3}(?:는|은|가|:|：)"),
)


def _stated_patterns() -> list[_Pattern]:
    patterns = []
    for lang, noun, qualifier, verb in _STATED_LATIN:
        regex = (
            rf"(?i)\b(?:{noun})(?:[ \t]{{1,3}}(?:{qualifier})[ \t]{{1,3}}\S{{1,40}})?[ \t]{{1,3}}(?:{verb})[ \t]{{0,3}}:?[ \t]{{0,3}}"
            r"(?P<q>[\"'“«]?)(?P<v>[^\s\"'”»]{4,64})"
        )
        patterns.append(_Pattern(f"password stated in words ({lang})", re.compile(regex), _stated_latin))
    for lang, noun, verb in _STATED_OTHER:
        regex = rf"(?i)(?:{noun}){verb}[ \t]{{0,3}}(?P<q>[\"'“「]?)(?P<v>[!-~]{{4,64}})"
        patterns.append(_Pattern(f"password stated in words ({lang})", re.compile(regex), _stated_other))
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
    r"|(?i:\b[0-9]{1,4}(?:[ \t]?(?:bis|ter))?,?[ \t]{1,2}(?:rue|avenue|boulevard|bd|place|chemin|allée|impasse|quai)[ \t])"
    r"|(?i:(?:ул\.|улица|просп\.|проспект|пер\.|переулок|бульвар|наб\.)[ \t]{0,2}[^\W\d]{1,25}(?:[ \t]{1,2}[^\W\d]{1,25}){0,2}"
    r",?[ \t]{0,2}(?:д\.|дом)[ \t]{0,2}[0-9]{1,4})"
)
_PHONE = re.compile(
    r"(?<![\w+])(?P<id>(?:\+[0-9]{1,3}[ .-]?)?(?:\([0-9]{1,5}\)[ .-]?)?[0-9]{2,5}(?:[ .-][0-9]{2,5}){1,4}|\+?[0-9]{9,15})(?!\w)"
)


def _phone(match: re.Match[str]) -> bool:
    return 9 <= sum(c.isdigit() for c in match.group("id")) <= 15


# --- the built-in patterns, in the order they are tried ------------------------------------------

def _url_password(match: re.Match[str]) -> bool:
    value = match.group("pw")
    return value.lower() not in _URL_PASSWORD_PLACEHOLDERS and not _PLACEHOLDER.search(value) and len(set(value)) > 1


def _token_shaped(match: re.Match[str]) -> bool:
    value = match.group("v")
    return _plausible(value, 16) and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


BUILTIN: tuple[_Pattern, ...] = (
    _Pattern("private key block", re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-[0-9]: ")),
    _Pattern("AWS access key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b")),
    _Pattern(
        "AWS secret key",
        re.compile(r"(?i)aws_?secret_?access_?key\W{0,4}[=:][ \t]{0,4}['\"]?(?P<v>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"),
    ),
    _Pattern("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{40,255})\b")),
    _Pattern("GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,64}")),
    _Pattern("npm token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    _Pattern("PyPI token", re.compile(r"\bpypi-AgE[A-Za-z0-9_-]{50,512}")),
    _Pattern("Groq API key", re.compile(r"\bgsk_[A-Za-z0-9]{40,255}\b")),
    _Pattern("Cerebras API key", re.compile(r"\bcsk-[A-Za-z0-9]{32,255}\b")),
    _Pattern("Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{32,255}")),
    _Pattern("OpenRouter API key", re.compile(r"\bsk-or-v1-[a-f0-9]{40,255}\b")),
    _Pattern("OpenAI-style API key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,255}")),
    _Pattern("Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,255}\b")),
    _Pattern("Slack token", re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,255}")),
    _Pattern("Slack webhook URL", re.compile(r"hooks\.slack\.com/services/T[A-Za-z0-9_]{1,32}/B[A-Za-z0-9_]{1,32}/[A-Za-z0-9_]{16,64}")),
    _Pattern("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])")),
    _Pattern("Stripe secret key", re.compile(r"\b[rs]k_live_[0-9A-Za-z]{20,255}\b")),
    _Pattern("SendGrid API key", re.compile(r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b")),
    _Pattern("JSON Web Token", re.compile(r"\beyJ[A-Za-z0-9_-]{10,4096}\.eyJ[A-Za-z0-9_-]{10,8192}\.[A-Za-z0-9_-]{10,4096}")),
    _Pattern(
        "authorization header",
        re.compile(r"(?i)\bauthorization\W{0,3}[ \t]{0,4}[:=][ \t]{0,4}['\"]?(?:bearer|basic|token)[ \t]{1,4}(?P<v>[A-Za-z0-9._~+/=-]{8,1024})"),
        _group_not_placeholder("v", 8),
    ),
    _Pattern("bearer token", re.compile(r"(?i)\bbearer[ \t]{1,4}(?P<v>[A-Za-z0-9._~+/=-]{20,1024})"), _token_shaped),
    _Pattern(
        "password in a URL",
        re.compile(r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s/:@'\"]{0,64}:(?P<pw>[^\s/@'\"]{3,128})@[\w.-]{1,253}"),
        _url_password,
    ),
    _Pattern(
        "connection string password",
        re.compile(r"(?i)(?<![\w-])(?:password|pwd)[ \t]{0,4}=[ \t]{0,4}(?P<v>\{[^}\n]{1,256}\}|[^;\n'\"{]{1,256});"),
        _group_not_placeholder("v", 4),
    ),
    _Pattern(".netrc entry", re.compile(
        r"(?i)\b(?:machine[ \t\r\n]{1,16}(?:localhost|[\w-]{1,63}\.[\w.:-]{1,190})|default)"
        r"(?:[ \t\r\n]{1,64}login[ \t\r\n]{1,16}\S{1,256})?(?:[ \t\r\n]{1,64}account[ \t\r\n]{1,16}\S{1,256})?"
        r"[ \t\r\n]{1,64}password[ \t\r\n]{1,16}(?P<v>\S{1,256})"
    ), _group_not_placeholder("v", 4)),
    _Pattern(
        "Kubernetes Secret data",
        re.compile(r"(?m)^[ \t]{0,16}(?:data|stringData):[ \t]{0,16}\r?\n[ \t]{1,32}[\"']?[\w.-]{1,253}[\"']?:[ \t]{1,8}(?P<v>[^\s#]{1,64})"),
        _group_not_placeholder("v", 4),
        requires=re.compile(r"(?m)^kind:[ \t]{0,8}[\"']?Secret[\"']?[ \t]{0,8}\r?$"),
    ),
    _Pattern("secret assignment", _ASSIGNMENT, _assignment, _describe_assignment),
    _Pattern(
        "secret in a name/value pair",
        re.compile(
            r"(?i)\b(?:name|key)[ \t]{0,4}[:=][ \t]{0,4}[\"']?(?P<name>[\w.-]{1,64})[\"']?[ \t\r\n,]{1,32}-?[ \t]{0,4}"
            r"value[ \t]{0,4}[:=][ \t]{0,4}[\"']?(?P<v>[^\s\"'#]{1,256})"
        ),
        lambda m: bool(_SECRET_NAME.search(_normalised(m.group("name")))) and _plausible(m.group("v")),
    ),
    _Pattern(
        "secret in an XML element",
        re.compile(r"<(?P<name>[\w.-]{1,64})>(?P<v>[^<\n]{1,256})</(?P=name)>"),
        lambda m: bool(_SECRET_NAME.search(_normalised(m.group("name")))) and _plausible(m.group("v")),
    ),
    *(_Pattern(what, re.compile(regex), _checked(valid)) for what, regex, valid in _NUMBERS),
    _Pattern(
        "passport number",
        re.compile(
            r"(?i)(?:\bpassport(?:[ \t]{1,3}(?:no\.?|number|num\.?|#))?|护照(?:号码|号|編号|编号)?|護照(?:號碼|號)?"
            r"|パスポート(?:番号)?|旅券番号|여권[ \t]?(?:번호)?|\bpasaporte|\breisepass(?:nummer)?|\bpassnummer"
            r"|\bpasseport|\bpassaporte|паспорт[а-я]{0,2}(?:[ \t]{1,3}(?:№|номер|серия))?)"
            r"[ \t:：#№.,-]{0,4}(?:(?:is|was|es|ist|est|é|是|为|は|는)[ \t:：]{0,3})?"
            r"(?P<v>[A-Z0-9]{6,9}|[0-9]{2} ?[0-9]{2} ?[0-9]{6})(?![A-Za-z0-9])"
        ),
        lambda m: sum(c.isdigit() for c in m.group("v")) >= 5,
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


class Scanner:
    """Built-in patterns plus a user's extra regexes and path globs."""

    def __init__(self, extra_patterns: Iterable[tuple[str, str]] = (), path_globs: Iterable[str] = DEFAULT_PATH_GLOBS):
        self.patterns = list(BUILTIN) + [
            _Pattern(what, re.compile(regex)) for what, regex in extra_patterns
        ]
        self.path_globs = tuple(path_globs)

    def scan_text(self, text: str, where: str) -> Finding | None:
        """The first finding in ``text``, if any: a sensitive file name in a diff, then the patterns in order."""
        if "+++ " in text or "diff --git " in text:
            for name in diff_files(text):
                if finding := self.scan_path(name):
                    return Finding(finding.what, f"{where} (diff of {name})")
        for pattern in self.patterns:
            if pattern.requires is not None and not pattern.requires.search(text):
                continue
            for match in pattern.regex.finditer(text):
                if pattern.check is None or pattern.check(match):
                    what = pattern.describe(match) if pattern.describe else pattern.what
                    return Finding(what, f"{where}, line {text.count(chr(10), 0, match.start()) + 1}")
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

"""The sensitive-data detector: what it catches, what it leaves alone, and that it stays linear.

Every secret, ID and card number below is synthetic and assembled from pieces at run time, so the
repository holds no string that a secret scanner would flag. The check digits are real: each number
passes its format's checksum, and a copy with one digit changed must not be flagged.
"""

from __future__ import annotations

import time

import pytest

from fastchat_tui.secrets_scan import BUILTIN, MAX_FINDINGS, Finding, Scanner, _Pattern
from tests.detector_pastes import CONTROLS as PASTE_CONTROLS, POSITIVES

SCANNER = Scanner()


def _first(scanner: Scanner, text: str, where: str) -> Finding | None:
    """The first of ``text``'s findings (the one a one-line summary names), if any."""
    findings = scanner.findings(text, where)
    return findings[0] if findings else None


HUNTER2 = "hunter2" + "isgreat"
RANDOM16 = "abcd1234" + "efgh5678"
B64_PW = "aHVudGVy" + "MmlzZ3JlYXQ="  # base64 of HUNTER2
AWS_ID = "AKIA" + "Z7FAKE" + "TESTKEY0" + "01"
GITHUB = "ghp" + "_" + "FAKEfake0123456789" + "FAKEfake0123456789"
OPENAI = "sk" + "-proj-" + "FAKEfakeFAKEfake" + "0123456789abcdef"
NPM = "npm" + "_" + "FAKEfake" * 4 + "0123"
PRIVATE_KEY = "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA" + "fake" * 12 + "\n-----END " + "RSA PRIVATE KEY-----"

CARD = "4111 " + "1111 " + "1111 " + "1111"
IBAN = "DE89 " + "3704 " + "0044 " + "0532 " + "0130 00"
IBAN_COMPACT = "GB82" + "WEST" + "1234" + "5698" + "7654" + "32"
CN_ID = "110105" + "19491231" + "002X"
SSN = "536-" + "22-" + "1234"
NINO = "AB 12" + " 34 56 C"
AADHAAR = "4918 " + "3726 " + "5017"
CPF = "529.982." + "247-25"
DNI = "1234" + "5678Z"
NIR = "1 85 05 " + "78 006 084 91"
SNILS = "112-233-" + "445 95"
RRN = "900101-" + "1234567"
MY_NUMBER = "1234 5678 " + "9018"
STEUER_ID = "86 095 " + "742 719"
PASSPORT = "X123" + "4567"
CN_PASSPORT = "E1234" + "5678"

# (label, text, value that must not appear in the finding)
SENSITIVE: list[tuple[str, str, str]] = [
    # secret-named keys assigned anywhere in a line, any case
    ("env mid-sentence", f"my app fails with DB_PASSWORD={HUNTER2} set, why?", HUNTER2),
    ("token mid-sentence", f"why does this fail? GITHUB_TOKEN={RANDOM16}", RANDOM16),
    ("lowercase key", f"db_password={HUNTER2}", HUNTER2),
    ("diff line", f"--- a/run.sh\n+++ b/run.sh\n@@ -1 +1 @@\n-X=1\n+DB_PASSWORD={HUNTER2}\n", HUNTER2),
    ("export", f"export API_KEY='{RANDOM16}'", RANDOM16),
    ("camelCase JSON", f'{{"dbPassword": "{HUNTER2}", "user": "app"}}', HUNTER2),
    ("Python literal", f'login(user="admin", password="{HUNTER2}")', HUNTER2),
    ("dict index", f'config["client_secret"] = "{RANDOM16}"', RANDOM16),
    ("CLI flag", f"psql --password={HUNTER2} -h db", HUNTER2),
    ("query string", f"GET /callback?code=1&access_token={RANDOM16}&state=x", RANDOM16),
    ("INI", f"[database]\nhost = db.internal\npassword = {HUNTER2}\n", HUNTER2),
    ("INI mixed case", f"[smtp]\nPassword: {HUNTER2}\n", HUNTER2),
    ("YAML", f"database:\n  user: app\n  password: {HUNTER2}\n", HUNTER2),
    ("k8s Secret data base64", f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: {B64_PW}\n", B64_PW),
    ("k8s Secret any key", f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\ndata:\n  DATABASE_URL: {B64_PW}\n", B64_PW),
    ("k8s Secret stringData", f"kind: Secret\napiVersion: v1\nstringData:\n  password: {HUNTER2}\n", HUNTER2),
    ("k8s env name/value", f"env:\n  - name: DB_PASSWORD\n    value: {HUNTER2}\n", HUNTER2),
    ("XML element", f"<config><password>{HUNTER2}</password></config>", HUNTER2),
    ("spring properties", f"spring.datasource.password={HUNTER2}", HUNTER2),
    # connection strings
    ("MSSQL", f"Server=tcp:db.example.net,1433;Initial Catalog=app;User ID=sa;Password={HUNTER2};Encrypt=True;", HUNTER2),
    ("MSSQL spaces", "Data Source=db;User Id=sa;Password=" + "correct horse 42;", "correct horse 42"),
    ("ODBC Pwd", f"Driver={{ODBC Driver 18}};Server=db;Uid=sa;Pwd={HUNTER2};", HUNTER2),
    ("postgres URL", f"psycopg2 cannot connect to postgres://app:{HUNTER2}@db.internal:5432/app", HUNTER2),
    ("mysql URL", f"mysql://root:{HUNTER2}@10.0.0.5/shop", HUNTER2),
    ("mongodb+srv URL", f"mongodb+srv://admin:{HUNTER2}@cluster0.abcde.mongodb.net/?retryWrites=true", HUNTER2),
    ("redis URL no user", f"redis://:{HUNTER2}@cache:6379/0", HUNTER2),
    ("JDBC", f"jdbc:postgresql://db:5432/app?user=app&password={HUNTER2}", HUNTER2),
    # config files
    (".netrc one line", f"machine api.example.com login alice password {HUNTER2}", HUNTER2),
    (".netrc lines", f"machine github.com\n  login alice\n  password {HUNTER2}\n", HUNTER2),
    (".npmrc", f"//registry.npmjs.org/:_authToken={RANDOM16}\n", RANDOM16),
    (".npmrc _auth", f"registry=https://npm.example.com/\n_auth={B64_PW}\n", B64_PW),
    ("authorization basic", f"curl -H 'Authorization: Basic {B64_PW}' https://api.example.com", B64_PW),
    # key formats
    ("private key", f"Is this key right?\n{PRIVATE_KEY}", "MIIEowIBAAKCAQEA"),
    ("AWS id", f"My key is {AWS_ID} and region eu-west-1", AWS_ID),
    ("GitHub", f"git clone https://{GITHUB}@github.com/acme/app.git", GITHUB),
    ("OpenAI", f"client = OpenAI(api_key={OPENAI!r})", OPENAI),
    ("npm token", f"the token {NPM} stopped working", NPM),
    # numbers with check digits
    ("card", f"Customer card {CARD} was charged twice.", CARD),
    ("card at sentence end", f"Charge it to {CARD.replace(' ', '')}.", CARD.replace(" ", "")),
    ("IBAN spaced", f"Please wire it to IBAN {IBAN}, thanks", IBAN),
    ("IBAN compact", f"iban: {IBAN_COMPACT}", IBAN_COMPACT),
    ("IBAN with passport", f"My IBAN is {IBAN_COMPACT} and my passport no. {PASSPORT}", PASSPORT),
    ("China resident ID", f"我的身份证号是{CN_ID}，帮我填表", CN_ID),
    ("US SSN", f"Employee SSN {SSN} needs updating", SSN),
    ("US SSN unlabelled", f"record: Jane Roe, {SSN}, hired 2019", SSN),
    ("UK NINO", f"My National Insurance number is {NINO}.", NINO),
    ("Aadhaar", f"Aadhaar: {AADHAAR}", AADHAAR),
    ("Aadhaar grouped", f"id {AADHAAR} on file", AADHAAR),
    ("Brazil CPF", f"Meu CPF é {CPF}", CPF),
    ("Spain DNI", f"Mi DNI es {DNI}", DNI),
    ("France NIR", f"Mon numéro de sécurité sociale : {NIR}", NIR),
    ("Russia SNILS", f"СНИЛС {SNILS}", SNILS),
    ("Korea RRN", f"주민등록번호 {RRN}", RRN),
    ("Japan My Number", f"マイナンバーは{MY_NUMBER}です", MY_NUMBER),
    ("Germany tax ID", f"Meine Steuer-ID ist {STEUER_ID}", STEUER_ID),
    # passports
    ("passport en", f"passport no. {PASSPORT}", PASSPORT),
    ("passport zh", f"护照号：{CN_PASSPORT}", CN_PASSPORT),
    ("passport ja", f"パスポート番号は{CN_PASSPORT}です", CN_PASSPORT),
    ("passport de", f"Reisepassnummer {PASSPORT}", PASSPORT),
    # a phone number with a street address
    ("phone and address en", "Jane Roe, 221B Baker Street, London, phone +44 20 7946 0958", "7946 0958"),
    ("phone and address us", "Ship to John Smith, 1600 Pennsylvania Avenue, (202) 456-1111", "456-1111"),
    ("phone and address zh", "收件人：张伟，北京市朝阳区建国路88号，电话 138 0013 8000", "0013 8000"),
    ("phone and address de", "Max Mustermann, Hauptstraße 12, 10115 Berlin, Tel. 030 12345678", "12345678"),
    ("phone and address fr", "Marie Dupont, 12 rue de la Paix, Paris, tél. 01 42 68 53 00", "68 53 00"),
    ("phone and address es", "Juan Pérez, Calle de Alcalá 45, Madrid, teléfono 912 345 678", "345 678"),
    ("phone and address ru", "Иван Петров, ул. Тверская, д. 7, тел. +7 495 123-45-67", "123-45-67"),
    ("phone and address ko", "홍길동, 서울시 강남구 테헤란로 123, 010-1234-5678", "1234-5678"),
    ("phone and address ja", "山田太郎、東京都港区六本木6丁目, 03-1234-5678", "1234-5678"),
    # passwords stated in words, in the languages of the router's table
    ("stated en", "my password is hunter2", "hunter2"),
    ("stated en for", f"the password for the staging box is {HUNTER2}", HUNTER2),
    ("stated en quoted", "My password is 'letmein'", "letmein"),
    ("stated zh", "密码是 abc12345", "abc12345"),
    ("stated zh colon", "WiFi密码：Tp2024link", "Tp2024link"),
    ("stated es", "mi contraseña es Gato2024!", "Gato2024!"),
    ("stated de", "mein Passwort ist Sommer2024", "Sommer2024"),
    ("stated fr", "mon mot de passe est Soleil#42", "Soleil#42"),
    ("stated pt", "minha senha é Praia2024", "Praia2024"),
    ("stated ru", "мой пароль qwerty123", "qwerty123"),
    ("stated ja", "パスワードはabc12345です", "abc12345"),
    ("stated ko", "비밀번호는 abc12345입니다", "abc12345"),
]

CONTROLS: list[tuple[str, str]] = [
    # placeholders
    ("placeholder your-key", "Example: OPENAI_API_KEY=your-api-key-here — where do I put this line?"),
    ("placeholder ${}", "export GITHUB_TOKEN=${RANDOM16}"),
    ("placeholder actions", "token: ${{ secrets.GITHUB_TOKEN }}"),
    ("placeholder <>", "mysql --password=<password> -h db"),
    ("placeholder changeme", "DB_PASSWORD=changeme"),
    ("placeholder stars", "password: ****"),
    ("placeholder stars long", "PASSWORD=********"),
    ("placeholder redacted", "api_key = [REDACTED]"),
    ("placeholder xxx", "SECRET_KEY=xxxxxxxxxxxx"),
    ("docs URL", "postgres://user:password@localhost:5432/db — what does each part mean?"),
    ("docs URL mysql", "mysql://user:pass@localhost/app"),
    (".env.example", "diff --git a/.env.example b/.env.example\n--- a/.env.example\n+++ b/.env.example\n@@ -1 +1,2 @@\n"
                     " DEBUG=true\n+SECRET_KEY=change-me\n+DATABASE_URL=postgres://user:password@localhost:5432/app\n"),
    # code that names a secret without holding one
    ("env lookup", 'DB_PASSWORD = os.environ["DB_PASSWORD"]'),
    ("getenv", 'password := os.Getenv("DB_PASSWORD")'),
    ("function call", "token = get_token(user)"),
    ("attribute", "password = self.password"),
    ("identifier", "password = new_password"),
    ("form field", "password = request.form['password']"),
    ("type annotation", "class Settings(BaseModel):\n    api_key: SecretStr\n    password: str = ''\n    token: str | None\n"),
    ("typescript type", "interface Login { password: string; token?: string }"),
    ("max tokens", "max_tokens = 4096 in my config, is that too high for a 8k context model?"),
    ("token count", "max_tokens=128000"),
    ("password file", "PASSWORD_FILE=/run/secrets/db_password"),
    ("shell cwd", "PWD=/home/alice/projects/app"),
    ("password hashers", "PASSWORD_HASHERS = ['django.contrib.auth.hashers.Argon2PasswordHasher']"),
    ("tokenizer path", "tokenizer_path=/models/gemma/tokenizer.json"),
    # prose that mentions passwords
    ("reset", "how do I reset my password?"),
    ("hashing", "password hashing with bcrypt"),
    ("manager", "My password manager asks for a master password — how long should it be?"),
    ("env safely", "How do I set PASSWORD in a .env file safely?"),
    ("spanish prose", "Mi contraseña no funciona en el portal, ¿qué hago?"),
    ("prose is", "my password is too short, what are the rules?"),
    ("prose is wrong", "The password is incorrect according to the server"),
    ("prose colon", "Password: forgotten, so I clicked the reset link"),
    ("german prose", "mein Passwort ist abgelaufen"),
    ("french prose", "mon mot de passe est trop court"),
    ("chinese prose", "密码是什么意思？如何设置一个安全的密码"),
    ("japanese prose", "パスワードはどこで変更できますか"),
    ("korean prose", "비밀번호는 어떻게 바꾸나요?"),
    ("russian prose", "мой пароль не подходит, что делать?"),
    ("passport prose", "What documents do I need besides my passport number for the visa?"),
    ("machine learning", "machine learning password strength classifier"),
    ("bearer prose", "How do bearer tokens differ from API keys in OAuth 2.0?"),
    # numbers that are not IDs
    ("numbers", "The build took 1234567 ms and processed 98765432 rows out of 1234567890123 total."),
    ("digits 16 not luhn", "order 4111111111111112 shipped"),
    ("dates", "Released 2024-01-15, patched 2024-02-01T10:00:00Z, EOL 20261231."),
    ("uuid", "request id 550e8400-e29b-41d4-a716-446655440000 and 6F9619FF-8B86-D011-B42D-00C04FC964FF"),
    ("git sha", "fixed in commit 3b18e51a9c4f2d0e7a1b2c3d4e5f60718293a4b5 (short 3b18e51)"),
    ("versions", "upgrade from v1.2.3 to 2.10.4-rc.1, python 3.11.7, node 20.11.1, build 1.2.3.4567"),
    ("phone without address", "Call our support line at +1 415 555 0132 between 9 and 5."),
    ("address without phone", "The museum is at 1000 Fifth Avenue, open daily."),
    ("ip and port", "listen on 192.168.10.254:8080 and 10.0.0.1:5432"),
    ("log line", "2026-11-01T10:05:00Z INFO request served path=/api/items status=200 in 5 ms"),
    ("card with wrong digit", f"card {CARD[:-1]}2"),
    ("iban with wrong digit", f"IBAN {IBAN_COMPACT[:-1]}3"),
    ("cn id wrong check", f"{CN_ID[:-1]}5"),
    ("cpf wrong check", f"{CPF[:-1]}6"),
    ("aadhaar wrong check", f"Aadhaar {AADHAAR[:-1]}8"),
    ("ssn invalid area", "SSN 666-12-3456 and 000-12-3456 and 900-12-3456"),
    ("ssn samples", "Format: 123-45-6789 or 111-22-3333"),
    ("key header mentioned", "PyCrypto fails when the file starts with '-----BEGIN RSA PRIVATE KEY-----' and not PKCS#8"),
    ("AWS documentation key", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"),
    ("truncated token", '"nextToken": "Ci33ACF6...omitted for brevity...U+AkMx8=", "PurchaseToken": "eyJ2IjoiMSIsInMiOi..."'),
    ("pagination labels", '{"input_token": "Marker", "output_token": "NextMarker", "limit_key": "MaxItems"}'),
    ("ARN reference", '"encryptionKey": "arn:aws:kms:us-west-2:123456789012:alias/aws/s3"'),
    ("field name holding the word", 'CHALLENGE_PASSWORD: "challengePassword"'),
    ("keyword argument passed on", "connect(host=host, password=password, auth_token=auth_token)"),
    ("public key token", '<assemblyIdentity name="Microsoft.VC90.CRT" publicKeyToken="1fc8b3b9a1e18e3b"/>'),
    ("OID", "SERVER_AUTH = '1.3.6.1.5.5.7.3.1'"),
    ("GPL header", "Free Software Foundation, Inc., 51 Franklin Street, Fifth Floor, Boston, MA 02110-1301 USA"),
    ("address with a timestamp", '"address": "410 Terry Avenue North, Seattle", "created": "1475626164"'),
    ("address with decimals", "values (0.000274, 289206.03125) rounded to 8 places, see 12 Main Street"),
    ("hex digest", "sha256 b12e76d157a900eb52e81bc6e9f3069344290341720e9178cde2407113ac8d89"),
    ("float exponent", "Decimal('1.38435736E+12') and doi 10.1137/10081232X"),
]


@pytest.mark.parametrize(("label", "text", "value"), SENSITIVE, ids=[c[0] for c in SENSITIVE])
def test_sensitive_text_is_found_and_the_finding_never_holds_the_value(label: str, text: str, value: str) -> None:
    finding = _first(SCANNER, text, "the prompt")
    assert finding is not None, f"{label}: not caught"
    assert value not in str(finding) and value.replace(" ", "") not in str(finding)
    assert finding.where.startswith("the prompt, line ") or "diff of" in finding.where


@pytest.mark.parametrize(("label", "text"), CONTROLS, ids=[c[0] for c in CONTROLS])
def test_controls_stay_not_sensitive(label: str, text: str) -> None:
    assert _first(SCANNER, text, "the prompt") is None


def test_the_finding_names_the_key_and_the_line() -> None:
    finding = _first(SCANNER, f"why?\n\nDEBUG=1\nmy app fails with DB_PASSWORD={HUNTER2} set", "the prompt")
    assert finding == Finding("secret assignment (DB_PASSWORD=…)", "the prompt, line 4")
    stated = _first(SCANNER, "密码是 abc12345", "attachment notes.txt")
    assert stated == Finding("password stated in words (zh)", "attachment notes.txt, line 1")


@pytest.mark.parametrize(
    ("diff", "name"),
    [
        ("diff --git a/.env b/.env\nindex 1..2 100644\n--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-DEBUG=0\n+DEBUG=1\n", ".env"),
        ("--- a/certs/server.pem\n+++ b/certs/server.pem\n@@ -1 +1 @@\n-a\n+b\n", "certs/server.pem"),
        ("diff --git a/deploy/id_ed25519 b/deploy/id_ed25519\ndeleted file mode 100600\n", "deploy/id_ed25519"),
    ],
)
def test_file_names_inside_a_diff_are_checked_against_the_path_globs(diff: str, name: str) -> None:
    finding = _first(SCANNER, diff, "the prompt")
    assert finding is not None and finding.where == f"the prompt (diff of {name})"
    assert "sensitive path" in finding.what


def test_user_globs_apply_to_diff_file_names_too() -> None:
    diff = "--- a/conf/db.secret.yaml\n+++ b/conf/db.secret.yaml\n@@ -1 +1 @@\n-a: 1\n+a: 2\n"
    assert _first(Scanner(), diff, "the prompt") is None
    assert _first(Scanner((), ("*.secret.yaml",)), diff, "the prompt") is not None


def test_every_leaked_case_of_issue_12_is_caught() -> None:
    """The prompts that reached the hosted source in auto mode, and the two a new user tried."""
    leaked = [
        f"我的身份证号码是 {CN_ID}",
        "I keep forgetting: my password is hunter2",
        "我的密码是 abc12345，帮我记住",
        f"db_password={HUNTER2}",
        f"[client]\npassword = {HUNTER2}\n",
        f"kind: Secret\ndata:\n  password: {B64_PW}\n",
        f"Server=db;Database=app;User Id=sa;Password={HUNTER2};",
        f"IBAN {IBAN}, passport no. {PASSPORT}",
        f"machine api.example.com\nlogin alice\npassword {HUNTER2}\n",
        "Jane Roe, 221B Baker Street, London NW1 6XE, +44 20 7946 0958",
        f"my app fails with DB_PASSWORD={HUNTER2} set, why?",
        f"why does this fail? GITHUB_TOKEN={RANDOM16}",
        f"+DB_PASSWORD={HUNTER2}",
    ]
    missed = [text for text in leaked if _first(SCANNER, text, "the prompt") is None]
    assert missed == []


# -- linear time on adversarial input ----------------------------------------------------------------

SIZE = 100_000


def _worst_cases() -> dict[str, str]:
    """Inputs that make a backtracking regex with unbounded or nested repetition go quadratic or worse."""
    def fill(unit: str) -> str:
        return (unit * (SIZE // len(unit) + 1))[:SIZE]

    units = {
        "a.": "a.", "digits": "1", "digit groups": "1234 ", "digit dashes": "12-", "=": "=", "-": "-", "spaces": " ",
        "tabs and newlines": " \t\n", "base64": "QUJDRGVmZ2g0NTY3+/", "letters": "a", "upper": "A", "A_": "A_",
        "word chars": "a_1", "dots and dashes": ".-", "key=": "key=", "password=": "password=", "password ": "password ",
        "password is ": "password is ", "token:": "token: ", "passwd.": "passwd.", "-----BEGIN ": "-----BEGIN A ",
        "scheme://": "a://", "user:": "a:", "@": "a@", "quotes": "'\"", "semicolons": "a=;", "machine ": "machine a.b ",
        "login ": "login a ", "data:": "data:\n  a: b\n", "kind: Secret": "kind: Secret\n", "name: value": "name: a\n",
        "<a>": "<a>", "IBAN-ish": "DE89 ", "digits and X": "1X", "plus digits": "+1 ", "parens": "(1) ",
        "Capitalised words": "Baker ", "cjk": "密码", "cjk digits": "路1", "cyrillic": "пароль ", "hangul": "로",
        "bearer": "bearer ", "authorization": "Authorization: ", "sk-": "sk-", "eyJ.": "eyJaaaaaaaaaaa.",
        "key header": "-----BEGIN RSA PRIVATE KEY-----",
        "header and short runs": "-----BEGIN A PRIVATE KEY-----" + "a" * 31 + " ",
        "passport no. ": "passport no. ", "SSN ": "SSN 1", "DNI ": "DNI 1", "Steuer-ID ": "Steuer-ID 1", "Aadhaar ": "Aadhaar 2",
        "my password is ": "my password is a", "password for ": "password for a ", "密码是": "密码是a",
        "パスワードは": "パスワードは",
        "machine login": "machine a.b login a ", "Password=;": "Password=a", "name/value": "name: a_password\n value: ",
        "+44 (20) ": "+44 (20) ", "1-2 ": "12-34 ", "Street": "1 Baker Street ", "rue": "12 rue de ", "calle": "calle de ",
        "ул.": "ул. Тверская ", "路": "建国路", "::": "a::b=", "<password>": "<password>a",
        "AccountKey=": "AccountKey=", "mysql -p": "mysql -p", "curl -u": "curl -u a:", "docker login": "docker login -p ",
        "login(": "login(\"a\", ", "connect(": "connect(", "--token ": "--token ", "--a-b-": "--a-b-c-",
        "MRN ": "MRN 12345 ", "DOB ": "DOB 1/2/", "diagnosis": "diagnosis: ", "病历号": "病历号：1", "base64 run": "QUJD",
        "hex run": "2d2d", "-----BEGIN base64": "LS0tLS1CRUdJTi", "手机1": "手机1", "1 digits": "13912345678 ",
        "sig=": "&sig=", "://token@": "://aaaaaaaaaa", "Q~": "abc8Q~", ":AA": "12345678:AA",
    }
    return {name: fill(unit) for name, unit in units.items()}


@pytest.mark.timing
@pytest.mark.parametrize("pattern", BUILTIN, ids=[f"{i:02d}-{p.what}" for i, p in enumerate(BUILTIN)])
def test_each_builtin_pattern_is_linear_on_100_kb_of_its_worst_cases(pattern: _Pattern) -> None:
    slow = {}
    for name, text in _worst_cases().items():
        for regex in (pattern.regex, *pattern.requires):
            started = time.perf_counter()
            for match in regex.finditer(text):
                if regex is pattern.regex and pattern.check is not None:
                    pattern.check(match)
            elapsed = time.perf_counter() - started
            if elapsed >= 1.0:
                slow[name] = round(elapsed, 2)
    assert slow == {}, f"{pattern.what}: {slow}"


def _mixed_megabyte() -> str:
    parts = [
        "The committee met on Tuesday to discuss the new library opening hours, and agreed on nine in the evening.\n",
        "def parse(text: str) -> list[int]:\n    return [int(x) for x in text.split(',') if x.strip()]\n",
        "2026-11-01T10:05:00Z INFO request served path=/api/items?page=2&token_count=3 status=200 in 5 ms\n",
        "我们的团队在过去一年里完成了三个主要版本的发布，密码学课程在周三。パスワードの再設定方法。비밀번호 재설정.\n",
        "diff --git a/app/models.py b/app/models.py\n--- a/app/models.py\n+++ b/app/models.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n",
        "SELECT id, email FROM users WHERE created_at > '2024-01-15' ORDER BY id LIMIT 100;\n",
        "version 1.2.3, uuid 550e8400-e29b-41d4-a716-446655440000, sha 3b18e51a9c4f2d0e7a1b2c3d4e5f60718293a4b5\n",
        "password hashing with bcrypt; the token: is explained; machine learning; passport office at 12 Main Street\n",
        "a." * 40 + "1" * 80 + "=" * 40 + " " * 40 + "QUJDRGVmZ2g0NTY3+/" * 4 + "\n",
    ]
    text = "".join(parts)
    return (text * (1_000_000 // len(text) + 1))[:1_000_000]


@pytest.mark.timing
def test_scan_text_over_a_megabyte_of_mixed_text_takes_a_few_seconds_at_most() -> None:
    text = _mixed_megabyte()
    started = time.perf_counter()
    assert _first(SCANNER, text, "the prompt") is None
    assert time.perf_counter() - started < 3.0


class _Counting(Scanner):
    def __init__(self) -> None:
        super().__init__()
        self.scans = 0

    def _scan(self, text: str, where: str) -> tuple[Finding, ...]:
        self.scans += 1
        return super()._scan(text, where)


def test_a_long_text_scanned_again_is_not_scanned_again_and_gives_the_same_finding() -> None:
    """Every prompt scans the whole conversation before it (find_sensitive's history): a long earlier
    message's finding is remembered, so a conversation of long replies does not cost more with each prompt."""
    scanner = _Counting()
    clean = "a plain line of text\n" * 500
    leaky = clean + "token = ghp_" + "a1B2c3D4e5" * 4 + "\n"
    first = [_first(scanner, text, "an earlier message") for text in (clean, leaky)]
    again = [_first(scanner, text, "an earlier message") for text in (clean, leaky)]
    assert first[0] is None and first[1] is not None and "line 501" in first[1].where
    assert again == first
    assert scanner.scans == 2
    assert _first(scanner, leaky, "the prompt") is not None and scanner.scans == 3  # where it is said: its own key
    assert _first(scanner, clean + "x", "an earlier message") is None and scanner.scans == 4
    short = "password = hunter2hunter2"
    _first(scanner, short, "the prompt")
    _first(scanner, short, "the prompt")
    assert scanner.scans == 6  # short texts are cheap to scan: not remembered


# -- the held-out style paste set (issue 25): kinds that reached a hosted source, and the next ones ---------

@pytest.mark.parametrize(("label", "language", "text", "value"), POSITIVES, ids=[c[0] for c in POSITIVES])
def test_each_realistic_paste_with_a_secret_is_found_without_its_value(label: str, language: str, text: str,
                                                                     value: str) -> None:
    findings = SCANNER.findings(text, "the prompt")
    assert findings, f"{label} ({language}): not caught"
    assert all(value not in str(finding) for finding in findings)


@pytest.mark.parametrize(("label", "language", "text"), PASTE_CONTROLS, ids=[c[0] for c in PASTE_CONTROLS])
def test_each_realistic_lookalike_paste_stays_clean(label: str, language: str, text: str) -> None:
    assert SCANNER.findings(text, "the prompt") == ()


def test_a_paste_with_several_secrets_reports_each_kind_and_line_once() -> None:
    text = (f"DB_PASSWORD={HUNTER2}\nDB_PASSWORD={HUNTER2}x\nmy key is {AWS_ID}\n"
            f"mysqldump -u root -p{HUNTER2} shop\n{CARD} and {CARD}\n")
    findings = SCANNER.findings(text, "the prompt")
    assert [str(f) for f in findings] == [
        "AWS access key in the prompt, line 3",
        "password on a command line (mysqldump) in the prompt, line 4",
        "secret assignment (DB_PASSWORD=…) in the prompt, line 1",
        "secret assignment (DB_PASSWORD=…) in the prompt, line 2",
        "payment card number in the prompt, line 5",
    ]


def test_a_dump_of_many_secrets_reports_a_bounded_number() -> None:
    text = "".join(f"user{n}: DB_PASSWORD={HUNTER2}{n}\n" for n in range(500))
    assert len(SCANNER.findings(text, "the prompt")) == MAX_FINDINGS


@pytest.mark.parametrize("name", [".ENV", "config/.Env.production", "ID_RSA", "home/me/.ssh/Id_Ed25519", "KEY.PEM",
                                  "Secrets.YAML", "PROD.TFVARS", ".AWS/CREDENTIALS"])
def test_sensitive_file_names_match_in_any_case(name: str) -> None:
    finding = SCANNER.scan_path(name)
    assert finding is not None and finding.where == name.rsplit("/", 1)[-1]


def test_templates_stay_allowed_in_any_case() -> None:
    assert SCANNER.scan_path(".ENV.EXAMPLE") is None and SCANNER.scan_path("ID_RSA.PUB") is None

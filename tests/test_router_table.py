"""The task-kind table: realistic prompts in several languages, each with the kind auto mode must give it.

Every secret below is synthetic and assembled from pieces at run time, so the repository holds no
string that a secret scanner would flag, while the router still sees a realistic-looking key.
"""

from __future__ import annotations

import pytest

from fastchat_tui.attachment import Attachment
from fastchat_tui.classify import classify

# -- synthetic secrets, split so that no complete key appears in the source ------------------
AWS_ID = "AKIA" + "Z7FAKE" + "TESTKEY0" + "01"
AWS_SECRET = "wJalr" + "FAKE" + "xUtnFEMI" + "/K7MDENG" + "/bPxRfiCY" + "FAKEKE"
GITHUB = "ghp" + "_" + "FAKEfake0123456789" + "FAKEfake0123456789"
OPENAI = "sk" + "-proj-" + "FAKEfakeFAKEfake" + "0123456789abcdef"
GROQ = "gsk" + "_" + "FAKEfake" * 3 + "0123456789abcdef"
CEREBRAS = "csk" + "-" + "fakefake" * 3 + "0123456789ab"
SLACK = "xox" + "b-" + "123456789012-" + "123456789012-" + "FAKEfakeFAKEfake"
GOOGLE = "AI" + "za" + "Sy" + "FAKEfake" * 4 + "0"
STRIPE = "sk" + "_live_" + "FAKEfake" * 3
JWT = "ey" + "JhbGciOiJIUzI1NiJ9" + ".ey" + "JzdWIiOiJmYWtlLXVzZXIifQ" + "." + "FAKEsignature_0123456789"
BEARER = "Fk" + "9dQ2" + "vTzLp" + "Rr4wXyZ0" + "aB7cD"
PRIVATE_KEY = (
    "-----BEGIN " + "OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAAfakefakefakefakefakefake\n"
    "-----END " + "OPENSSH PRIVATE KEY-----"
)
DB_PW = "Tr0ub4dor" + "-fake-" + "3x"
DJANGO_KEY = "d9f8" + "a7c6b5" + "fake" + "e4d3c2b1"
DB_URL = "postgres://app:" + "s3cr3t-" + "FAKE" + "@db.internal:5432/app"
CARD = "4111 " + "1111 " + "1111 " + "1111"
LITERAL_PW = "Sup3r" + "S3cret!" + "fake"
SECRETS = [AWS_ID, AWS_SECRET, GITHUB, OPENAI, GROQ, CEREBRAS, SLACK, GOOGLE, STRIPE, JWT, BEARER,
           DB_PW, DJANGO_KEY, "s3cr3t-FAKE", CARD, LITERAL_PW]
# The prompts of issue 12 that reached a hosted source (check digits real, numbers synthetic).
APP_PW = "hunter2" + "isgreat"
TOKEN16 = "abcd1234" + "efgh5678"
B64_PW = "aHVudGVy" + "MmlzZ3JlYXQ="
IBAN = "DE89 " + "3704 " + "0044 " + "0532 " + "0130 00"
PASSPORT = "X123" + "4567"
CN_ID = "110105" + "19491231" + "002X"
SECRETS += [APP_PW, TOKEN16, B64_PW, IBAN, PASSPORT, CN_ID, "hunter2", "abc12345", "Gato2024!", "7946 0958"]

LOG = "".join(f"2026-11-{day:02d}T10:{minute:02d}:00Z INFO request served path=/api/items status=200 in {minute} ms\n"
              for day in range(1, 29) for minute in range(0, 60, 5))
ENGLISH_TEXT = (
    "The committee met on Tuesday to discuss the new library opening hours. After a long debate, the members "
    "agreed that the reading rooms would stay open until nine in the evening on weekdays, and that the children's "
    "section would host a story hour every Saturday morning. "
) * 12
DIFF = (
    "diff --git a/app/models.py b/app/models.py\n"
    "index 3b18e51..a9c4f2d 100644\n"
    "--- a/app/models.py\n"
    "+++ b/app/models.py\n"
    "@@ -10,7 +10,8 @@ class Order(Model):\n"
    "     total = DecimalField()\n"
    "-    status = CharField(max_length=10)\n"
    "+    status = CharField(max_length=20)\n"
    "+    shipped_at = DateTimeField(null=True)\n"
)

# (prompt, expected task kind, keyword arguments for classify)
CASES: list = [
    # -- completion: asks, fill-in-the-middle markers, code that stops mid-statement -----------
    ("complete this function:\n\ndef parse_duration(text: str) -> int:\n    \"\"\"Parse '1h30m' into seconds.\"\"\"\n", "completion", {}),
    ("def fibonacci(n):\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(", "completion", {}),
    ("<|fim_prefix|>def add(a, b):\n    <|fim_suffix|>\n    return result<|fim_middle|>", "completion", {}),
    ("<PRE> fn main() {\n    let v = vec![1, 2, 3];\n <SUF>\n} <MID>", "completion", {}),
    ("function debounce(fn, ms) {\n  let timer;\n  return (...args) => {\n    clearTimeout(timer);\n", "completion", {}),
    ("impl fmt::Display for Point {\n    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {\n        write!(f, \"({}, {})\", ", "completion", {}),
    ("func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {\n\tw.Header().Set(\"Content-Type\", \"application/json\")\n\tjson.NewEncoder(w).", "completion", {}),
    ("SELECT u.id, u.email, count(o.id) AS orders\nFROM users u\nLEFT JOIN orders o ON o.user_id = u.id\nWHERE", "completion", {}),
    ("补全这个函数：\n\ndef is_palindrome(s):\n", "completion", {}),
    ("帮我把这个函数写完\nfunction sum(arr) {", "completion", {}),
    ("この関数を完成させてください:\nconst clamp = (x, lo, hi) =>", "completion", {}),
    ("Completa esta función en Python:\ndef media(valores):", "completion", {}),
    ("Vervollständige diese Funktion:\nfn parse_port(s: &str) -> Option<u16> {", "completion", {}),
    ("Complète cette fonction :\nfunction slugify(title) {", "completion", {}),
    ("Допиши функцию:\ndef merge_sorted(a, b):", "completion", {}),
    ("이 함수를 완성해 주세요\ndef area(r):", "completion", {}),
    ("import numpy as np\nimport pandas as pd\n\ndf = pd.read_csv(", "completion", {}),
    ("export interface User {\n  id: string;\n  name: string;\n", "completion", {}),
    ("#include <stdio.h>\n\nint main(void) {\n    for (int i = 0; i < 10; i++) {\n", "completion", {}),
    ("class Stack:\n    def __init__(self):\n        self.items = []\n", "completion", {}),
    ("fill in the TODO in this function:\ndef retry(fn, attempts=3):\n    # TODO\n", "completion", {}),
    ("finish the implementation of this method, keep the signature", "completion", {}),
    ("Autocomplete: const users = await db.query(", "completion", {}),
    ("for f in *.log; do\n  gzip \"$f\" &&", "completion", {}),
    ("```python\nasync def fetch_all(urls):\n    async with httpx.AsyncClient() as client:\n        return await asyncio.gather(*[", "completion", {}),
    # -- long: documents, detailed explanations, big inputs, explicit max_tokens ---------------
    ("Write a detailed article about how Raft leader election works, with the failure cases.", "long", {}),
    ("Write a comprehensive test suite for this module:\n```python\ndef add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n```", "long", {}),
    ("Explain in detail how the Linux page cache interacts with mmap and fsync.", "long", {}),
    ("写一篇详细的文档，介绍我们的 API 网关的架构和部署方式", "long", {}),
    ("请详细解释 TCP 三次握手和四次挥手的过程", "long", {}),
    ("Escribe un artículo detallado sobre la historia de Unix", "long", {}),
    ("Explica en detalle cómo funciona el recolector de basura de Go", "long", {}),
    ("Schreibe einen ausführlichen Artikel über Kubernetes-Operatoren", "long", {}),
    ("Erkläre ausführlich, wie Paxos funktioniert", "long", {}),
    ("Rédige un guide complet sur la migration de Python 2 vers Python 3", "long", {}),
    ("Explique en détail le fonctionnement de TLS 1.3", "long", {}),
    ("Rustの所有権について詳しく説明してください", "long", {}),
    ("技術ブログの記事を書いてください。テーマはgRPCです。", "long", {}),
    ("Напиши подробную статью о том, как работает MVCC в PostgreSQL", "long", {}),
    ("Подробно объясни, как устроен сборщик мусора в JVM", "long", {}),
    ("Write a full module implementing an LRU cache with TTL, type hints and docstrings", "long", {}),
    ("Summarize the design decisions so far", "long", {"max_tokens": 4096}),
    ("Summarize this log", "long", {"attachments": (Attachment("server.log", LOG),)}),
    ("Translate the following text into German:\n\n" + ENGLISH_TEXT, "long", {}),
    ("Write a README for my CLI tool that converts CSV files to Parquet", "long", {}),
    ("Draft a design doc for moving our monolith to separate services", "long", {}),
    ("이 라이브러리에 대한 문서를 작성해 주세요", "long", {}),
    ("Escreva um artigo sobre observabilidade em sistemas distribuídos", "long", {}),
    ("Write a 2000 word essay on the history of the transistor", "long", {}),
    ("把这篇文章翻译成英文：\n\n" + "我们的团队在过去一年里完成了三个主要版本的发布，并且在性能和稳定性上都有了很大的提升。" * 40, "long", {}),
    # -- sensitive: keys and tokens of many formats, private data, sensitive files -------------
    (f"Why does boto3 say access denied? My key is {AWS_ID} and region eu-west-1", "sensitive", {}),
    (f"git clone https://{GITHUB}@github.com/acme/app.git fails with 403", "sensitive", {}),
    (f"export OPENAI_API_KEY={OPENAI}\nwhy does the client still say 401?", "sensitive", {}),
    (f"client = Groq(api_key=\"{GROQ}\")\nresp = client.chat.completions.create(", "sensitive", {}),
    (f"curl https://api.cerebras.ai/v1/models -H 'x-key: {CEREBRAS}'", "sensitive", {}),
    (f"client = WebClient(token=\"{SLACK}\")\nclient.chat_postMessage(channel=", "sensitive", {}),
    (f"const firebaseConfig = {{ apiKey: \"{GOOGLE}\", authDomain: \"demo.firebaseapp.com\" }};", "sensitive", {}),
    (f"Decode this token for me: {JWT}", "sensitive", {}),
    (f"Is this key in the right format for ssh-agent?\n{PRIVATE_KEY}", "sensitive", {}),
    (f"Here is my .env, why does Django not pick it up?\n\nDEBUG=1\nSECRET_KEY={DJANGO_KEY}\nALLOWED_HOSTS=*\n", "sensitive", {}),
    (f"psycopg2 cannot connect to {DB_URL}, what is wrong?", "sensitive", {}),
    (f"这个配置为什么不生效？\nDB_PASSWORD={DB_PW}\nDB_HOST=10.0.0.5", "sensitive", {}),
    (DIFF + f"+STRIPE_KEY = \"{STRIPE}\"\n", "sensitive", {}),
    ("What does this config do?", "sensitive", {"attachments": (Attachment(".env", "DEBUG=true\n"),)}),
    ("explain this file", "sensitive", {"attachments": (Attachment("deploy/keys/id_ed25519", "not shown"),)}),
    (f"curl -H 'Authorization: Bearer {BEARER}' https://api.internal.example/v1/items returns 403", "sensitive", {}),
    (f"Customer card {CARD} was charged twice; draft a short apology email", "sensitive", {}),
    (f"このAWS設定は正しいですか？\n[default]\naws_secret_access_key = {AWS_SECRET}\n", "sensitive", {}),
    (f"login(user=\"admin\", password=\"{LITERAL_PW}\")\nWhy does this fail on the server?", "sensitive", {}),
    ("¿Por qué falla?", "sensitive", {"attachments": (Attachment("settings.py", f"API_KEY = '{OPENAI}'\n"),)}),
    ("continue", "sensitive", {"history": (f"my token is {GITHUB}", "Noted.")}),
    (f"my app fails with DB_PASSWORD={APP_PW} set, why?", "sensitive", {}),
    (f"why does this fail? GITHUB_TOKEN={TOKEN16}", "sensitive", {}),
    (f"db_password={APP_PW}\ndb_host=10.0.0.5\nwhy can't the worker log in?", "sensitive", {}),
    (f"[mysqld]\nuser = app\npassword = {APP_PW}\n\nIs this my.cnf right?", "sensitive", {}),
    (f"Why is the pod pending?\n\napiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: {B64_PW}\n",
     "sensitive", {}),
    (f"SqlClient says login failed: Server=db,1433;Database=app;User Id=sa;Password={APP_PW};", "sensitive", {}),
    (f"is my .netrc right?\nmachine api.example.com\n  login alice\n  password {APP_PW}\n", "sensitive", {}),
    (f"npm publish says 401 with //registry.npmjs.org/:_authToken={TOKEN16}", "sensitive", {}),
    (f"Fill in the form: IBAN {IBAN}, passport no. {PASSPORT}", "sensitive", {}),
    (f"帮我检查一下这个身份证号 {CN_ID} 的格式", "sensitive", {}),
    ("I keep forgetting it, my password is hunter2", "sensitive", {}),
    ("记住：我的密码是 abc12345", "sensitive", {}),
    ("¿Puedes guardarlo? mi contraseña es Gato2024!", "sensitive", {}),
    ("Write a letter to Jane Roe, 221B Baker Street, London, phone +44 20 7946 0958", "sensitive", {}),
    (DIFF + f"+DB_PASSWORD={APP_PW}\n", "sensitive", {}),
    ("review this", "sensitive", {"attachments": (Attachment("<stdin>", DIFF.replace("app/models.py", ".env")),)}),
    ("--- a/certs/server.pem\n+++ b/certs/server.pem\n@@ -1 +1 @@\n-old\n+new\n", "sensitive", {}),
    # -- review: diffs, review requests, the review command --------------------------------------
    (DIFF, "review", {}),
    ("Review this code for race conditions:\n\nasync def incr(self):\n    self.n += 1\n", "review", {}),
    ("请帮我做代码审查，重点看错误处理", "review", {}),
    ("Is the error handling fine?", "review", {"hint": "review"}),
    ("Bitte überprüfe diesen Code auf Fehler:\nfn main() { println!(\"hi\"); }", "review", {}),
    ("what do you think?", "review", {"attachments": (Attachment("<stdin>", DIFF),)}),
    ("このPRをコードレビューしてください", "review", {}),
    # -- chat: everything else -------------------------------------------------------------------
    ("What is the difference between a process and a thread?", "chat", {}),
    ("How do I reverse a list in Python?", "chat", {}),
    ("explain this error: TypeError: 'NoneType' object is not subscriptable", "chat", {}),
    ("Why does this loop never end?\n\nwhile i < 10:\n    print(i)\n", "chat", {}),
    ("什么是向量数据库？", "chat", {}),
    ("¿Cuál es la diferencia entre TCP y UDP?", "chat", {}),
    ("Wie funktioniert ein Mutex?", "chat", {}),
    ("Quelle est la différence entre let et const en JavaScript ?", "chat", {}),
    ("Pythonでリストを逆順にする方法は？", "chat", {}),
    ("Что такое замыкание в JavaScript?", "chat", {}),
    ("Translate 'good morning' into Japanese", "chat", {}),
    ("Write a function that checks whether a number is prime", "chat", {}),
    ("thanks, that worked!", "chat", {}),
    ("Give me a regex that matches ISO 8601 dates", "chat", {}),
    ("My password manager asks for a master password — how long should it be?", "chat", {}),
    ("How do I set PASSWORD in a .env file safely?", "chat", {}),
    ("postgres://user:password@localhost:5432/db — what does each part mean?", "chat", {}),
    ("Example: OPENAI_API_KEY=your-api-key-here — where do I put this line?", "chat", {}),
    ("What is 2+2?", "chat", {}),
    ("Summarize the plot of Hamlet in three sentences.", "chat", {}),
    ("In Rust, when should I use Box<dyn Trait> instead of generics?", "chat", {}),
    ("Compare Go and Rust for writing CLI tools.", "chat", {}),
    ("这段代码是做什么的？\nconst x = arr.map(v => v * 2);", "chat", {}),
    ("const total = items.reduce((a, b) => a + b, 0);\nIs reduce slower than a for loop here?", "chat", {}),
    ("hi 👋", "chat", {}),
    ("max_tokens = 4096 in my config, is that too high for a 8k context model?", "chat", {}),
    ("Mi contraseña no funciona en el portal, ¿qué hago?", "chat", {}),
    ("How do I reset my password?", "chat", {}),
    ("What is password hashing with bcrypt and why is it slow on purpose?", "chat", {}),
    ("export GITHUB_TOKEN=${TOKEN} — why is it empty in CI?", "chat", {}),
    ("mysql --password=<password> prints a warning, why?", "chat", {}),
    ("Is DB_PASSWORD=changeme fine for a local dev database?", "chat", {}),
    ("Is a UUID like 550e8400-e29b-41d4-a716-446655440000 safe to show users?", "chat", {}),
    ("Upgrading from 1.2.3 to 2.10.4 on 2024-01-15 broke commit 3b18e51, why?", "chat", {}),
    ("我的密码忘记了，怎么重置？", "chat", {}),
    ("Mein Passwort ist abgelaufen, was tun?", "chat", {}),
    ("mon mot de passe est trop court ?", "chat", {}),
    ("What documents do I need besides my passport number for the visa?", "chat", {}),
    ("review this", "review", {"attachments": (Attachment("<stdin>", DIFF.replace("app/models.py", ".env.example")),)}),
]


def _case(case: object) -> tuple[str, str, dict]:
    return case.values if hasattr(case, "values") else case  # type: ignore[return-value]


def test_the_table_is_big_and_covers_every_kind() -> None:
    assert len(CASES) >= 60
    kinds = {kind for _, kind, _ in map(_case, CASES)}
    assert kinds == {"completion", "long", "sensitive", "review", "chat"}
    assert min(sum(1 for _, k, _ in map(_case, CASES) if k == kind) for kind in kinds) >= 7


@pytest.mark.parametrize(("prompt", "expected", "options"), CASES, ids=[f"{i:02d}-{k}" for i, (_, k, _) in enumerate(map(_case, CASES))])
def test_task_kind(prompt: str, expected: str, options: dict) -> None:
    task, reason = classify(prompt, **options)
    assert task == expected, f"{task}: {reason}"
    assert reason and len(reason) < 120
    for secret in SECRETS:
        assert secret not in reason, "a reason must never repeat the secret it found"

"""Hand-written pieces of the routing corpus: what users ask, in nine languages, and what they paste.

Each request template is (task, reason, text); the text may hold slots that :mod:`build_corpus` fills:
``{code}`` a whole snippet, ``{cut}`` a snippet stopped mid-statement, ``{todo}`` a snippet with a TODO,
``{diff}`` a unified diff, ``{hunks}`` a diff without file headers, ``{trace}`` a traceback, ``{doc}`` a
document, ``{data}`` a table or log, ``{topic}``, ``{app}``, ``{func}`` and ``{plang}`` (the snippet's
programming language). The shapes follow what people type into coding assistants (aider, llm, Continue,
Copilot Chat issue threads and examples): short imperative asks, pasted code with a line of words,
code with no words at all, and whole-document requests.
"""

from __future__ import annotations

TOPICS = [
    "Raft leader election", "the Rust borrow checker", "Kubernetes operators", "OAuth 2.0 with PKCE", "Python's GIL",
    "B-tree indexes", "CRDTs", "WebAssembly", "React hooks", "TCP congestion control", "git rebase", "Docker image layers",
    "gRPC streaming", "MVCC in PostgreSQL", "consistent hashing", "JWT refresh tokens", "event sourcing", "Go channels",
    "async/await in JavaScript", "CSS grid", "vector databases", "LLVM IR", "memory-mapped files", "bloom filters",
    "the actor model", "zero-downtime deploys", "SQL window functions", "the TLS 1.3 handshake", "Linux cgroups",
    "GraphQL resolvers", "Redis streams", "Terraform state", "Unicode normalization", "floating point rounding",
    "garbage collection in the JVM", "WebSockets", "dependency injection", "monads", "virtual DOM diffing",
    "eventual consistency", "the CAP theorem", "Paxos", "epoll", "copy-on-write", "Kafka consumer groups",
]

APPS = {
    "en": ["a todo app", "a URL shortener", "a multi-room chat server", "a Markdown to HTML converter", "a concurrent web crawler",
           "a CSV to JSON command-line tool", "an inventory management system", "a blog engine with comments",
           "a rate limiter service", "a file sync daemon", "a Tetris clone", "a personal budget tracker", "a Slack bot",
           "a static site generator", "a job queue with retries", "a pastebin"],
    "zh": ["一个待办事项应用", "一个短链接服务", "一个聊天室服务器", "一个 Markdown 转 HTML 的工具", "一个并发网页爬虫", "一个库存管理系统",
           "一个博客系统", "一个记账应用"],
    "ja": ["TODOアプリ", "短縮URLサービス", "チャットサーバー", "MarkdownをHTMLに変換するツール", "Webクローラー", "在庫管理システム",
           "ブログエンジン", "家計簿アプリ"],
    "ko": ["할 일 관리 앱", "URL 단축 서비스", "채팅 서버", "마크다운을 HTML로 바꾸는 도구", "웹 크롤러", "재고 관리 시스템", "블로그 엔진",
           "가계부 앱"],
    "es": ["una app de tareas", "un acortador de URLs", "un servidor de chat", "un conversor de Markdown a HTML", "un rastreador web",
           "un sistema de inventario", "un motor de blog", "una app de presupuesto personal"],
    "pt": ["um app de tarefas", "um encurtador de URL", "um servidor de chat", "um conversor de Markdown para HTML", "um crawler web",
           "um sistema de estoque", "um motor de blog", "um app de controle financeiro"],
    "de": ["eine To-do-App", "einen URL-Kürzer", "einen Chat-Server", "einen Markdown-zu-HTML-Konverter", "einen Webcrawler",
           "ein Lagerverwaltungssystem", "eine Blog-Engine", "einen Haushaltsbuch-Tracker"],
    "fr": ["une application de tâches", "un raccourcisseur d'URL", "un serveur de chat", "un convertisseur Markdown vers HTML",
           "un robot d'indexation web", "un système de gestion de stock", "un moteur de blog", "une appli de budget"],
    "ru": ["приложение для списка дел", "сокращатель ссылок", "чат-сервер", "конвертер Markdown в HTML", "веб-краулер",
           "систему учёта склада", "движок блога", "приложение для учёта расходов"],
}

FUNCS = {
    "en": ["checks whether a number is prime", "reverses a linked list", "parses an ISO 8601 date", "removes duplicates from a list but keeps the order",
           "converts Celsius to Fahrenheit", "validates an email address", "flattens a nested list", "counts the vowels in a string",
           "returns the nth Fibonacci number", "merges two sorted arrays", "chunks a list into pieces of size n", "formats bytes as KB/MB/GB"],
    "zh": ["判断一个数是不是质数", "反转链表", "解析 ISO 日期", "列表去重并保持顺序", "校验邮箱地址", "把嵌套列表拍平"],
    "ja": ["素数かどうか判定する", "連結リストを反転する", "ISO形式の日付をパースする", "順序を保ったまま重複を削除する", "メールアドレスを検証する",
           "ネストしたリストを平坦化する"],
    "ko": ["소수인지 판별하는", "연결 리스트를 뒤집는", "ISO 날짜를 파싱하는", "순서를 유지하면서 중복을 제거하는", "이메일 주소를 검증하는",
           "중첩 리스트를 평탄화하는"],
    "es": ["compruebe si un número es primo", "invierta una lista enlazada", "parsee una fecha ISO", "quite duplicados de una lista sin perder el orden",
           "valide un correo electrónico", "aplane una lista anidada"],
    "pt": ["verifique se um número é primo", "inverta uma lista ligada", "faça o parse de uma data ISO", "remova duplicados de uma lista mantendo a ordem",
           "valide um e-mail", "achate uma lista aninhada"],
    "de": ["prüft, ob eine Zahl eine Primzahl ist", "eine verkettete Liste umdreht", "ein ISO-Datum parst", "Duplikate aus einer Liste entfernt und die Reihenfolge behält",
           "eine E-Mail-Adresse validiert", "eine verschachtelte Liste flach macht"],
    "fr": ["vérifie si un nombre est premier", "inverse une liste chaînée", "parse une date ISO", "supprime les doublons d'une liste en gardant l'ordre",
           "valide une adresse e-mail", "aplatit une liste imbriquée"],
    "ru": ["проверяет, простое ли число", "разворачивает связный список", "парсит дату в формате ISO", "удаляет дубликаты из списка, сохраняя порядок",
           "проверяет адрес почты", "делает вложенный список плоским"],
}

TRACES = [
    '''Traceback (most recent call last):
  File "/app/main.py", line 42, in <module>
    main()
  File "/app/main.py", line 37, in main
    total = sum(row["amount"] for row in rows)
  File "/app/main.py", line 37, in <genexpr>
    total = sum(row["amount"] for row in rows)
TypeError: 'NoneType' object is not subscriptable''',
    '''TypeError: Cannot read properties of undefined (reading 'map')
    at TodoList (webpack-internal:///./src/TodoList.jsx:12:23)
    at renderWithHooks (react-dom.development.js:16305:18)
    at mountIndeterminateComponent (react-dom.development.js:20074:13)''',
    '''panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x4a2b3c]

goroutine 1 [running]:
main.(*Server).Start(0x0)
	/home/dev/api/server.go:58 +0x3c
main.main()
	/home/dev/api/main.go:21 +0x85''',
    '''thread 'main' panicked at 'called `Option::unwrap()` on a `None` value', src/config.rs:27:41
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace''',
    '''Exception in thread "main" java.lang.NullPointerException: Cannot invoke "String.length()" because "name" is null
	at com.acme.users.UserService.normalize(UserService.java:88)
	at com.acme.users.UserService.create(UserService.java:41)
	at com.acme.Main.main(Main.java:15)''',
    '''error[E0502]: cannot borrow `items` as mutable because it is also borrowed as immutable
  --> src/main.rs:14:9
   |
12 |     let first = &items[0];
   |                  ----- immutable borrow occurs here
13 |
14 |         items.push(4);
   |         ^^^^^^^^^^^^^ mutable borrow occurs here''',
    '''sqlalchemy.exc.OperationalError: (sqlite3.OperationalError) database is locked
[SQL: INSERT INTO jobs (name, status) VALUES (?, ?)]
(Background on this error at: https://sqlalche.me/e/20/e3q8)''',
    '''npm ERR! code ERESOLVE
npm ERR! ERESOLVE unable to resolve dependency tree
npm ERR! While resolving: my-app@0.1.0
npm ERR! Found: react@18.3.1
npm ERR! Could not resolve dependency:
npm ERR! peer react@"^17.0.0" from react-beautiful-dnd@13.1.1''',
    '''Traceback (most recent call last):
  File "/usr/lib/python3.12/asyncio/runners.py", line 118, in run
    return self._loop.run_until_complete(task)
  File "/srv/bot/handlers.py", line 77, in on_message
    await channel.send(reply)
RuntimeError: Task got Future attached to a different loop''',
    '''error TS2345: Argument of type 'string | undefined' is not assignable to parameter of type 'string'.
  Type 'undefined' is not assignable to type 'string'.

src/api/client.ts:33:27 - 33     return fetchJson(process.env.API_URL, opts);''',
]

DOCS = {
    "en": '''# fastq-tools

fastq-tools is a small command-line toolkit for cleaning sequencing reads. It trims adapters, drops
low-quality reads and writes a short report of what it removed.

## Installation

    pip install fastq-tools

## Usage

    fastq-tools trim reads.fastq --adapter AGATCGGAAGAGC --min-quality 20 -o clean.fastq

The report lists the number of reads kept, trimmed and dropped, and the mean quality before and after.
Options can also be read from a fastq-tools.toml file in the working directory.

## Contributing

Open an issue before a large change. Run the tests with `pytest` and the linter with `ruff check`.
''',
    "zh": '''# 部署说明

本服务由三个组件构成：网关、任务调度器和存储层。网关负责鉴权和限流，调度器把任务分发给工作节点，
存储层使用 PostgreSQL 和对象存储。

## 环境要求

- Linux x86_64，内核 5.10 以上
- Docker 24 以上
- 至少 8 GB 内存

## 部署步骤

1. 复制 `.env.example` 为 `.env` 并填写数据库地址。
2. 运行 `docker compose up -d` 启动全部服务。
3. 访问 `http://localhost:8080/health` 确认服务正常。

升级时请先备份数据库，再按版本说明执行迁移脚本。
''',
    "ja": '''# 開発ガイド

このリポジトリはモバイルアプリのバックエンドです。API は Go で書かれ、データベースには MySQL を使います。

## セットアップ

`make setup` を実行すると依存関係がインストールされ、ローカル用のデータベースが作成されます。

## ブランチ運用

main ブランチへの直接のプッシュは禁止です。機能ごとにブランチを作り、プルリクエストを送ってください。
レビューが一件以上承認されたらマージできます。
''',
    "de": '''# Betriebshandbuch

Der Dienst verarbeitet Bestellungen aus dem Webshop und schreibt sie in das ERP-System. Er läuft als
Container in unserem Kubernetes-Cluster und skaliert nach der Länge der Warteschlange.

## Störungen

Wenn die Warteschlange länger als zehn Minuten wächst, prüfe zuerst die Verbindung zum ERP-System.
Danach die Logs der Worker mit `kubectl logs -l app=orders-worker`.

## Wartung

Updates werden dienstags zwischen 6 und 7 Uhr eingespielt.
''',
}

DATA = [
    "\n".join(f"2026-11-{d:02d}T10:{m:02d}:00Z {lvl} worker-{d % 4} job={1000 + d * 7 + m} took {m * 13 % 900} ms"
              for d in range(1, 9) for m, lvl in zip(range(0, 60, 7), ["INFO", "INFO", "WARN", "INFO", "ERROR", "INFO", "INFO", "INFO", "WARN"])),
    "region,month,orders,revenue\n" + "\n".join(f"{r},2026-{m:02d},{(m * 37 + len(r) * 11) % 400},{(m * 1913 + len(r) * 701) % 90000}"
                                              for r in ("north", "south", "east", "west") for m in range(1, 13)),
    "\n".join(f"| {name} | {p}% | {t} s |" for name, p, t in [("auth", 99.1, 0.2), ("search", 97.4, 1.3), ("upload", 92.8, 4.1),
                                                              ("billing", 99.9, 0.4), ("export", 88.2, 9.7), ("feed", 98.5, 0.8)]),
]

# -- request templates: (task, reason, text) per language ------------------------------------------------------
T = tuple[str, str, str]

EN: list[T] = [
    # chat
    ("chat", "a concept question", "What is the difference between {topic} and a regular approach?"),
    ("chat", "a concept question", "explain {topic}"),
    ("chat", "a concept question", "can you explain {topic} briefly?"),
    ("chat", "a how-to question", "How do I use {topic} in a small project?"),
    ("chat", "a short function", "Write a function that {func}"),
    ("chat", "a short function", "write a {plang} function that {func}"),
    ("chat", "a short function", "quick one: a one-liner that {func}?"),
    ("chat", "asks what a pasted snippet does", "what does this do?\n\n{code}"),
    ("chat", "asks about a pasted snippet", "```\n{code}```\nwhy is this slow for big inputs?"),
    ("chat", "asks about an error", "{trace}\n\nwhat does this error mean?"),
    ("chat", "asks about an error", "getting this, any idea?\n{trace}"),
    ("chat", "asks about an error", "I get this when I run the tests:\n```\n{trace}\n```\nhow do I fix it?"),
    ("chat", "a short translation", "translate this sentence to Spanish: the build is broken again"),
    ("chat", "a short translation", "how do you say 'pull request' in Japanese?"),
    ("chat", "asks for one test idea", "what test would catch this bug?\n\n{code}"),
    ("chat", "asks for one test idea", "what's a good edge case to test here?\n{code}"),
    ("chat", "a comparison question", "{topic} vs the alternatives — which should I pick for a startup?"),
    ("chat", "small talk", "thanks, that fixed it!"),
    ("chat", "small talk", "ok cool, and what about Windows?"),
    ("chat", "a short ask", "give me a regex for semver strings"),
    ("chat", "a short ask", "one-line summary of {topic} please"),
    ("chat", "a command question", "what's the git command to undo the last commit but keep the changes?"),
    ("chat", "asks about pasted code", "is there a more idiomatic way to write this in {plang}?\n{code}"),
    ("chat", "asks about pasted code", "{code}\nwhere does the None come from?"),
    ("chat", "a concept question", "tl;dr of {topic}?"),
    # completion
    ("completion", "code cut mid-statement", "{cut}"),
    ("completion", "code cut mid-statement", "```{plang_lower}\n{cut}"),
    ("completion", "asks to finish the code", "finish this:\n{cut}"),
    ("completion", "asks to finish the code", "complete this {plang} code\n\n{cut}"),
    ("completion", "asks to continue the code", "continue from here\n```\n{cut}\n```"),
    ("completion", "asks to fill a TODO", "fill in the TODO\n\n{todo}"),
    ("completion", "asks to fill a TODO", "{todo}\nimplement the TODO, nothing else"),
    ("completion", "asks to continue the code", "keep going:\n{cut}"),
    ("completion", "asks to finish the code", "can you write the rest of this function?\n{cut}"),
    ("completion", "asks to continue the code", "{cut}\n\n^ autocomplete the next lines"),
    ("completion", "asks to finish the code", "finish the loop\n{cut}"),
    ("completion", "code cut mid-statement", "    {cut_tail}"),
    # long
    ("long", "asks for a full program", "Build me a complete {plang} REST API for {app}, with models, routes, validation and tests"),
    ("long", "asks for a full program", "Write a full {plang} program: {app}, with a README and a Makefile"),
    ("long", "asks for a full program", "create {app} in {plang}, all the files please"),
    ("long", "asks for a full program", "scaffold an entire project for {app}: backend, frontend and docker-compose"),
    ("long", "asks for a full module", "write a full module implementing {topic} with type hints, docstrings and examples"),
    ("long", "asks for a full module", "Create a full {plang} module that implements {app} end to end"),
    ("long", "asks for documentation", "Write comprehensive API reference docs for this:\n\n{code}"),
    ("long", "asks for documentation", "write a detailed onboarding doc for new engineers joining a team that works on {topic}"),
    ("long", "asks for documentation", "write the README for this project, with install, usage, config and FAQ sections\n\n{code}"),
    ("long", "asks for documentation", "draft a design doc for adding {topic} to our platform: goals, non-goals, alternatives, rollout"),
    ("long", "asks for a test suite", "generate jest unit tests for every method in this class\n\n{code}"),
    ("long", "asks for a test suite", "write tests for every function here, cover the edge cases and errors:\n{code}"),
    ("long", "asks for a test suite", "I need a complete pytest suite for this, with fixtures and parametrized cases\n```\n{code}```"),
    ("long", "asks for a long explanation", "explain {topic} in detail with examples"),
    ("long", "asks for a long explanation", "give me an in-depth tutorial on {topic}, from the basics to production use"),
    ("long", "asks for a long explanation", "walk me through {topic} step by step, with code for each step and the pitfalls"),
    ("long", "asks to translate a whole document", "translate this README to Chinese\n\n{doc}"),
    ("long", "asks to translate a whole document", "translate this whole document into French, keep the markdown:\n{doc}"),
    ("long", "asks to translate a whole document", "please translate the entire docs folder I pasted below into Portuguese\n\n{doc}"),
    ("long", "asks for a report from a large input", "turn this into a full incident report with timeline, impact, root cause and action items\n\n{data}"),
    ("long", "asks for a report from a large input", "analyze this data and write a detailed report with sections per region\n{data}"),
    ("long", "asks for long writing", "write a 2000-word blog post about {topic}"),
    ("long", "asks for long writing", "write a long article comparing {topic} approaches, with benchmarks and diagrams described in text"),
    ("long", "asks to rewrite a whole file", "rewrite this entire file in {plang} with proper error handling, logging and tests:\n{code}"),
    ("long", "asks for a full program", "port this whole thing to Rust, every function, with a Cargo.toml\n{code}"),
    # review
    ("review", "asks about a diff in words", "thoughts on this diff?\n\n{hunks}"),
    ("review", "asks about a diff in words", "anything wrong here?\n{hunks}"),
    ("review", "asks about a diff in words", "{hunks}\n\nlgtm?"),
    ("review", "a pasted diff", "{diff}"),
    ("review", "asks for a code review", "review this please\n\n{code}"),
    ("review", "asks for a code review", "can you look over this {plang} for bugs and bad practices?\n{code}"),
    ("review", "asks for a code review", "anything wrong here?\n```\n{code}```"),
    ("review", "asks for a code review", "{code}\n\nbe brutal, what would you change before merging?"),
    ("review", "asks for a security review", "audit this for security issues (injection, auth, secrets handling)\n{code}"),
    ("review", "asks for a code review", "is this production-ready? point out problems\n\n{code}"),
    ("review", "asks about a diff in words", "here's my change, does it look right?\n{diff}"),
    ("review", "asks for a code review", "critique my implementation, I'm preparing for a code interview\n{code}"),
    ("review", "asks about a diff in words", "would you approve this PR?\n{hunks}"),
]

ZH: list[T] = [
    ("chat", "a concept question", "什么是{topic}？"),
    ("chat", "a concept question", "简单解释一下{topic}"),
    ("chat", "a short function", "写一个函数，{func}"),
    ("chat", "asks what a pasted snippet does", "这段代码是做什么的？\n{code}"),
    ("chat", "asks about an error", "{trace}\n这个报错是什么意思？"),
    ("chat", "asks about an error", "运行的时候报错了，怎么解决\n```\n{trace}\n```"),
    ("chat", "a short translation", "把这句话翻译成英文：构建又失败了"),
    ("chat", "asks for one test idea", "什么样的测试能发现这个 bug？\n{code}"),
    ("chat", "a comparison question", "{topic}和其他方案比有什么优缺点？"),
    ("chat", "small talk", "谢谢，问题解决了"),
    ("completion", "asks to finish the code", "帮我把这段 {plang} 代码写完\n{cut}"),
    ("completion", "asks to continue the code", "续写下面的代码\n{cut}"),
    ("completion", "asks to fill a TODO", "把这个 TODO 补上\n{todo}"),
    ("completion", "asks to finish the code", "补完整\n```\n{cut}\n```"),
    ("completion", "asks to continue the code", "{cut}\n接着写"),
    ("completion", "asks to finish the code", "这个函数写了一半，帮我补全\n{cut}"),
    ("long", "asks for a full program", "用 {plang} 写一个完整的{app}，包括数据库、接口和测试"),
    ("long", "asks for documentation", "写一篇详细的文档，介绍{topic}的原理和用法"),
    ("long", "asks for a long explanation", "详细讲解{topic}，并给出完整的示例代码"),
    ("long", "asks for a test suite", "为这个类的每个方法写单元测试\n{code}"),
    ("long", "asks to translate a whole document", "把这份文档完整翻译成英文\n\n{doc}"),
    ("long", "asks for a report from a large input", "根据下面的数据写一份完整的分析报告\n{data}"),
    ("long", "asks for a full module", "写一个完整的模块，实现{topic}，要有注释和示例"),
    ("review", "asks for a code review", "帮我review一下这段代码\n{code}"),
    ("review", "asks about a diff in words", "这个改动有没有问题？\n{hunks}"),
    ("review", "asks for a code review", "看看这段代码有什么问题，哪里可以改进\n{code}"),
    ("review", "asks about a diff in words", "{hunks}\n这样改对吗？"),
    ("review", "asks for a code review", "代码审查：\n```\n{code}```"),
]

JA: list[T] = [
    ("chat", "a concept question", "{topic}とは何ですか？"),
    ("chat", "a concept question", "{topic}について簡単に教えて"),
    ("chat", "a short function", "{func}関数を書いて"),
    ("chat", "asks what a pasted snippet does", "このコードは何をしていますか？\n{code}"),
    ("chat", "asks about an error", "{trace}\nこのエラーの原因は？"),
    ("chat", "a short translation", "「ビルドが壊れた」を英語で何と言いますか"),
    ("chat", "asks for one test idea", "このバグを見つけるにはどんなテストを書けばいい？\n{code}"),
    ("chat", "small talk", "ありがとう、動きました"),
    ("completion", "asks to continue the code", "続きを書いて\n{cut}"),
    ("completion", "asks to finish the code", "このコードを完成させて\n```\n{cut}\n```"),
    ("completion", "asks to fill a TODO", "TODOの部分を実装して\n{todo}"),
    ("completion", "asks to continue the code", "{cut}\nこの続きをお願いします"),
    ("long", "asks for a full program", "{plang}で{app}を一式作ってください。テストとREADMEも"),
    ("long", "asks for documentation", "{topic}についての詳細な技術ドキュメントを書いてください"),
    ("long", "asks for a long explanation", "{topic}を例を交えて詳しく解説してください"),
    ("long", "asks for a test suite", "このクラスの全メソッドのユニットテストを書いて\n{code}"),
    ("long", "asks to translate a whole document", "このドキュメントを全部英語に翻訳して\n\n{doc}"),
    ("long", "asks for a report from a large input", "このログから障害報告書を作成してください\n{data}"),
    ("review", "asks for a code review", "このコードをレビューしてください\n{code}"),
    ("review", "asks about a diff in words", "この差分、問題ありますか？\n{hunks}"),
    ("review", "asks for a code review", "改善点があれば指摘してください\n```\n{code}```"),
    ("review", "asks about a diff in words", "{hunks}\nこの変更で大丈夫？"),
]

KO: list[T] = [
    ("chat", "a concept question", "{topic}이 뭐야?"),
    ("chat", "a concept question", "{topic}에 대해 간단히 설명해 줘"),
    ("chat", "a short function", "{func} 함수 만들어 줘"),
    ("chat", "asks what a pasted snippet does", "이 코드가 뭘 하는 거야?\n{code}"),
    ("chat", "asks about an error", "{trace}\n이 에러 왜 나는 거야?"),
    ("chat", "a short translation", "'빌드가 또 깨졌다'를 영어로 번역해 줘"),
    ("chat", "small talk", "고마워, 해결됐어"),
    ("completion", "asks to finish the code", "이 코드 마저 작성해 줘\n{cut}"),
    ("completion", "asks to continue the code", "이어서 써 줘\n```\n{cut}\n```"),
    ("completion", "asks to fill a TODO", "TODO 부분 채워 줘\n{todo}"),
    ("completion", "asks to continue the code", "{cut}\n계속 작성해 줘"),
    ("long", "asks for a full program", "{plang}로 {app}을 전체 코드로 만들어 줘. 테스트와 README 포함"),
    ("long", "asks for documentation", "{topic}에 대한 자세한 기술 문서를 작성해 줘"),
    ("long", "asks for a long explanation", "{topic}을 예제와 함께 자세히 설명해 줘"),
    ("long", "asks for a test suite", "이 클래스의 모든 메서드에 대한 단위 테스트를 작성해 줘\n{code}"),
    ("long", "asks to translate a whole document", "이 문서 전체를 한국어로 번역해 줘\n\n{doc}"),
    ("long", "asks for a report from a large input", "이 데이터로 상세한 분석 보고서를 써 줘\n{data}"),
    ("review", "asks for a code review", "이 코드 리뷰해 줘\n{code}"),
    ("review", "asks about a diff in words", "이 변경 사항 괜찮아?\n{hunks}"),
    ("review", "asks for a code review", "문제 있는 부분 찾아 줘\n```\n{code}```"),
]

ES: list[T] = [
    ("chat", "a concept question", "¿Qué es {topic}?"),
    ("chat", "a concept question", "explícame {topic} en pocas palabras"),
    ("chat", "a short function", "escribe una función que {func}"),
    ("chat", "asks what a pasted snippet does", "¿qué hace este código?\n{code}"),
    ("chat", "asks about an error", "{trace}\n¿por qué me sale este error?"),
    ("chat", "a short translation", "traduce esta frase al inglés: el despliegue falló otra vez"),
    ("chat", "asks for one test idea", "¿qué test detectaría este fallo?\n{code}"),
    ("chat", "small talk", "gracias, ya funciona"),
    ("completion", "asks to finish the code", "termina este código\n{cut}"),
    ("completion", "asks to continue the code", "sigue desde aquí\n```\n{cut}\n```"),
    ("completion", "asks to fill a TODO", "completa el TODO\n{todo}"),
    ("completion", "asks to continue the code", "{cut}\ncontinúa"),
    ("long", "asks for a full program", "hazme {app} completa en {plang}, con tests y README"),
    ("long", "asks for documentation", "escribe una documentación detallada sobre {topic} para el equipo"),
    ("long", "asks for a long explanation", "explica {topic} en detalle con ejemplos"),
    ("long", "asks for a test suite", "genera tests unitarios para todos los métodos de esta clase\n{code}"),
    ("long", "asks to translate a whole document", "traduce todo este documento al español\n\n{doc}"),
    ("long", "asks for a report from a large input", "redacta un informe completo a partir de estos datos\n{data}"),
    ("review", "asks for a code review", "revisa este código, por favor\n{code}"),
    ("review", "asks about a diff in words", "¿ves algún problema en este cambio?\n{hunks}"),
    ("review", "asks for a code review", "¿qué mejorarías aquí?\n```\n{code}```"),
]

PT: list[T] = [
    ("chat", "a concept question", "o que é {topic}?"),
    ("chat", "a concept question", "me explica {topic} rapidinho"),
    ("chat", "a short function", "escreve uma função que {func}"),
    ("chat", "asks what a pasted snippet does", "o que esse código faz?\n{code}"),
    ("chat", "asks about an error", "{trace}\nalguém sabe o que é esse erro?"),
    ("chat", "a short translation", "traduz essa frase pro inglês: o build quebrou de novo"),
    ("chat", "small talk", "valeu, funcionou"),
    ("completion", "asks to finish the code", "termina esse código\n{cut}"),
    ("completion", "asks to continue the code", "continua daqui\n```\n{cut}\n```"),
    ("completion", "asks to fill a TODO", "implementa o TODO\n{todo}"),
    ("completion", "asks to finish the code", "{cut}\ncompleta pra mim"),
    ("long", "asks for a full program", "cria {app} completo em {plang}, com testes e README"),
    ("long", "asks for documentation", "escreva uma documentação detalhada sobre {topic}"),
    ("long", "asks for a long explanation", "explique {topic} em detalhes, com exemplos"),
    ("long", "asks for a test suite", "gere testes unitários para todos os métodos desta classe\n{code}"),
    ("long", "asks to translate a whole document", "traduza este documento inteiro para o português\n\n{doc}"),
    ("long", "asks for a report from a large input", "faça um relatório completo a partir desses dados\n{data}"),
    ("review", "asks for a code review", "faz um code review disso aqui\n{code}"),
    ("review", "asks about a diff in words", "essa mudança tá certa?\n{hunks}"),
    ("review", "asks for a code review", "tem algum problema nesse código?\n```\n{code}```"),
]

DE: list[T] = [
    ("chat", "a concept question", "Was ist {topic}?"),
    ("chat", "a concept question", "erklär mir kurz {topic}"),
    ("chat", "a short function", "schreib eine Funktion, die {func}"),
    ("chat", "asks what a pasted snippet does", "was macht dieser Code?\n{code}"),
    ("chat", "asks about an error", "{trace}\nwas bedeutet dieser Fehler?"),
    ("chat", "a short translation", "übersetze den Satz ins Englische: der Build ist wieder kaputt"),
    ("chat", "asks for one test idea", "welcher Test würde diesen Fehler finden?\n{code}"),
    ("chat", "small talk", "danke, klappt jetzt"),
    ("completion", "asks to finish the code", "mach das fertig\n{cut}"),
    ("completion", "asks to continue the code", "schreib hier weiter\n```\n{cut}\n```"),
    ("completion", "asks to fill a TODO", "füll das TODO aus\n{todo}"),
    ("completion", "asks to finish the code", "{cut}\nbitte vervollständigen"),
    ("long", "asks for a full program", "schreib mir {app} komplett in {plang}, mit Tests und README"),
    ("long", "asks for documentation", "schreib eine ausführliche Dokumentation zu {topic} für neue Kollegen"),
    ("long", "asks for a long explanation", "erkläre {topic} ausführlich mit Beispielen"),
    ("long", "asks for a test suite", "schreib Unit-Tests für jede Methode dieser Klasse\n{code}"),
    ("long", "asks to translate a whole document", "übersetze das ganze Dokument ins Englische\n\n{doc}"),
    ("long", "asks for a report from a large input", "erstelle aus diesen Daten einen vollständigen Bericht\n{data}"),
    ("review", "asks for a code review", "kannst du den Code reviewen?\n{code}"),
    ("review", "asks about a diff in words", "passt diese Änderung so?\n{hunks}"),
    ("review", "asks for a code review", "siehst du hier Probleme?\n```\n{code}```"),
]

FR: list[T] = [
    ("chat", "a concept question", "c'est quoi {topic} ?"),
    ("chat", "a concept question", "explique-moi {topic} rapidement"),
    ("chat", "a short function", "écris une fonction qui {func}"),
    ("chat", "asks what a pasted snippet does", "que fait ce code ?\n{code}"),
    ("chat", "asks about an error", "{trace}\nd'où vient cette erreur ?"),
    ("chat", "a short translation", "traduis cette phrase en anglais : le build est encore cassé"),
    ("chat", "small talk", "merci, ça marche"),
    ("completion", "asks to finish the code", "termine ce code\n{cut}"),
    ("completion", "asks to continue the code", "continue à partir d'ici\n```\n{cut}\n```"),
    ("completion", "asks to fill a TODO", "remplis le TODO\n{todo}"),
    ("completion", "asks to finish the code", "{cut}\nla suite stp"),
    ("long", "asks for a full program", "écris {app} complet en {plang}, avec tests et README"),
    ("long", "asks for documentation", "rédige une documentation détaillée sur {topic}"),
    ("long", "asks for a long explanation", "explique {topic} en détail avec des exemples"),
    ("long", "asks for a test suite", "écris des tests unitaires pour toutes les méthodes de cette classe\n{code}"),
    ("long", "asks to translate a whole document", "traduis tout ce document en français\n\n{doc}"),
    ("long", "asks for a report from a large input", "rédige un rapport complet à partir de ces données\n{data}"),
    ("review", "asks for a code review", "tu peux relire ce code ?\n{code}"),
    ("review", "asks about a diff in words", "ce changement te paraît correct ?\n{hunks}"),
    ("review", "asks for a code review", "qu'est-ce qui ne va pas ici ?\n```\n{code}```"),
]

RU: list[T] = [
    ("chat", "a concept question", "что такое {topic}?"),
    ("chat", "a concept question", "объясни вкратце {topic}"),
    ("chat", "a short function", "напиши функцию, которая {func}"),
    ("chat", "asks what a pasted snippet does", "что делает этот код?\n{code}"),
    ("chat", "asks about an error", "{trace}\nпочему падает?"),
    ("chat", "a short translation", "переведи фразу на английский: сборка опять сломалась"),
    ("chat", "small talk", "спасибо, заработало"),
    ("completion", "asks to finish the code", "допиши код\n{cut}"),
    ("completion", "asks to continue the code", "продолжи\n```\n{cut}\n```"),
    ("completion", "asks to fill a TODO", "реализуй TODO\n{todo}"),
    ("completion", "asks to finish the code", "{cut}\nдопиши до конца"),
    ("long", "asks for a full program", "напиши {app} целиком на {plang}, с тестами и README"),
    ("long", "asks for documentation", "напиши подробную документацию по {topic}"),
    ("long", "asks for a long explanation", "подробно объясни {topic} с примерами"),
    ("long", "asks for a test suite", "напиши юнит-тесты для всех методов этого класса\n{code}"),
    ("long", "asks to translate a whole document", "переведи весь этот документ на русский\n\n{doc}"),
    ("long", "asks for a report from a large input", "составь полный отчёт по этим данным\n{data}"),
    ("review", "asks for a code review", "сделай ревью этого кода\n{code}"),
    ("review", "asks about a diff in words", "норм такие изменения?\n{hunks}"),
    ("review", "asks for a code review", "что здесь не так?\n```\n{code}```"),
]

TEMPLATES: dict[str, list[T]] = {"en": EN, "zh": ZH, "ja": JA, "ko": KO, "es": ES, "pt": PT, "de": DE, "fr": FR, "ru": RU}

# The misses quoted in issues 29 and 25 (item 10), kept verbatim in the test split: (task, text, slot).
QUOTED: list[tuple[str, str, str]] = [
    ("long", "Build me a complete Flask REST API for a todo app…", ""),
    ("long", "Write a full Go program: concurrent web crawler…", ""),
    ("long", "Write comprehensive API reference docs…", ""),
    ("long", "write a detailed onboarding doc…", ""),
    ("long", "generate jest unit tests for every method in this class…", "code"),
    ("long", "Create a full Python module that converts Markdown to HTML", ""),
    ("completion", "帮我把这段 Go 代码写完", "cut:Go"),
    ("completion", "续写下面的 useEffect", "cut:useFetch"),
    ("completion", "把这个 TODO 补上", "todo"),
    ("completion", "続きを書いて", "cut"),
    ("completion", "mach das fertig", "cut"),
    ("completion", "termina esse código", "cut"),
    ("completion", "", "cut:rotate_logs"),
    ("review", "thoughts on this diff?", "hunks"),
    ("review", "anything wrong here?", "hunks"),
    ("completion", "补完整", "cut"),
    ("long", "translate this whole document", "doc"),
    ("long", "write a full module implementing a token bucket rate limiter", ""),
]

# More ways to say the same things: several phrasings per kind and language, so that holding out one
# template still leaves its kind taught by others.
EN += [
    ("chat", "a concept question", "in one paragraph, how does {topic} work?"),
    ("chat", "a how-to question", "how can I debug {topic} issues locally?"),
    ("chat", "a short function", "snippet to {func}? {plang} please"),
    ("chat", "asks about pasted code", "why does this return the wrong value sometimes?\n{code}"),
    ("chat", "asks about an error", "{trace}\n\nany idea what's going on? started after upgrading"),
    ("chat", "a short ask", "what's the default port for {topic}?"),
    ("completion", "asks to finish the code", "finish the implementation of this method, keep the signature\n{cut}"),
    ("completion", "inline completion", "Autocomplete: {cut_tail}"),
    ("completion", "asks to finish the code", "complete the function body\n```{plang_lower}\n{cut}\n```"),
    ("completion", "asks to fill a TODO", "write the missing part where the TODO is\n{todo}"),
    ("long", "asks for a full program", "I want a production-ready {app} in {plang}: project layout, config, logging, tests, Dockerfile"),
    ("long", "asks for documentation", "document every public function of this file, with parameters, return values and examples\n{code}"),
    ("long", "asks for a long explanation", "teach me {topic} like a full course chapter: theory, worked examples, exercises"),
    ("long", "asks for a test suite", "add an exhaustive test suite for this, unit and integration\n{code}"),
    ("long", "asks to translate a whole document", "can you translate the whole thing below to German? all sections\n{doc}"),
    ("review", "asks for a code review", "what would a senior engineer flag in this code?\n{code}"),
    ("review", "asks about a diff in words", "{hunks}\nis this change safe to ship?"),
    ("review", "asks for a code review", "check this for bugs\n{code}"),
]
ZH += [
    ("chat", "a how-to question", "{topic}怎么用？"),
    ("chat", "asks about pasted code", "为什么这段代码有时候返回错误的结果？\n{code}"),
    ("completion", "asks to finish the code", "把下面的函数补完\n{cut}"),
    ("completion", "asks to continue the code", "继续写完这个{plang}函数\n```\n{cut}\n```"),
    ("long", "asks for a full program", "帮我从零实现{app}，给出全部代码和部署说明"),
    ("long", "asks for documentation", "为下面的代码写完整的 API 文档，每个函数都要有参数说明和示例\n{code}"),
    ("long", "asks for a long explanation", "系统地讲一下{topic}，越详细越好，配上例子"),
    ("long", "asks for a test suite", "给这个模块写一整套测试，覆盖所有边界情况\n{code}"),
    ("review", "asks for a code review", "这段代码写得怎么样？有没有 bug？\n{code}"),
    ("review", "asks about a diff in words", "帮我看下这个 diff\n{hunks}"),
]
JA += [
    ("chat", "a how-to question", "{topic}はどうやって使いますか？"),
    ("completion", "asks to finish the code", "この関数の残りを書いてください\n{cut}"),
    ("completion", "asks to continue the code", "{cut}\n続きをお願い"),
    ("long", "asks for a full program", "{app}をゼロから作って。全ファイルのコードをください"),
    ("long", "asks for documentation", "このコードのAPIリファレンスを全関数分書いてください\n{code}"),
    ("long", "asks for a long explanation", "{topic}について網羅的に、サンプルコード付きで解説して"),
    ("review", "asks for a code review", "このコードにバグはありますか？確認してください\n{code}"),
    ("review", "asks about a diff in words", "この修正を見てもらえますか\n{hunks}"),
]
KO += [
    ("chat", "a how-to question", "{topic}은 어떻게 써?"),
    ("completion", "asks to finish the code", "이 함수 나머지 부분 완성해 줘\n{cut}"),
    ("long", "asks for a full program", "{app} 처음부터 끝까지 전체 프로젝트로 만들어 줘"),
    ("long", "asks for a long explanation", "{topic}을 아주 자세하게, 예제 코드와 함께 설명해 줘"),
    ("long", "asks for a test suite", "이 코드의 모든 함수에 대한 테스트 코드를 작성해 줘\n{code}"),
    ("review", "asks for a code review", "이 코드에 버그 있는지 봐 줘\n{code}"),
    ("review", "asks about a diff in words", "{hunks}\n이렇게 고쳐도 돼?"),
]
ES += [
    ("chat", "a how-to question", "¿cómo uso {topic}?"),
    ("completion", "asks to finish the code", "completa esta función\n{cut}"),
    ("long", "asks for a full program", "quiero {app} de principio a fin, con todo el código y el despliegue"),
    ("long", "asks for a long explanation", "explícame a fondo {topic}, con ejemplos y casos reales"),
    ("long", "asks to translate a whole document", "traduce el README entero al inglés\n{doc}"),
    ("review", "asks for a code review", "¿tiene bugs este código?\n{code}"),
    ("review", "asks about a diff in words", "{hunks}\n¿está bien este diff?"),
]
PT += [
    ("chat", "a how-to question", "como eu uso {topic}?"),
    ("completion", "asks to continue the code", "{cut}\ncontinua esse código"),
    ("long", "asks for a full program", "gera o projeto inteiro de {app}, todos os arquivos"),
    ("long", "asks for a long explanation", "explica {topic} a fundo, com exemplos passo a passo"),
    ("long", "asks for a test suite", "escreve testes para cada função desse arquivo\n{code}"),
    ("review", "asks for a code review", "revisa esse código pra mim\n{code}"),
    ("review", "asks about a diff in words", "dá uma olhada nesse diff\n{hunks}"),
]
DE += [
    ("chat", "a how-to question", "wie benutze ich {topic}?"),
    ("completion", "asks to continue the code", "{cut}\nmach weiter"),
    ("long", "asks for a full program", "bau mir {app} von Grund auf, mit allen Dateien"),
    ("long", "asks for a long explanation", "gib mir eine gründliche Einführung in {topic} mit Codebeispielen"),
    ("long", "asks for documentation", "schreib eine vollständige API-Dokumentation für diesen Code\n{code}"),
    ("review", "asks for a code review", "ist der Code so in Ordnung? Bitte prüfen\n{code}"),
    ("review", "asks about a diff in words", "{hunks}\nkannst du dir den Diff anschauen?"),
]
FR += [
    ("chat", "a how-to question", "comment utiliser {topic} ?"),
    ("completion", "asks to continue the code", "complète la suite\n{cut}"),
    ("long", "asks for a full program", "génère le projet complet pour {app}, tous les fichiers"),
    ("long", "asks for a long explanation", "fais-moi un cours complet sur {topic}, avec des exemples"),
    ("long", "asks for a test suite", "écris une suite de tests complète pour ce module\n{code}"),
    ("review", "asks for a code review", "fais une revue de ce code\n{code}"),
    ("review", "asks about a diff in words", "{hunks}\nce diff est bon ?"),
]
RU += [
    ("chat", "a how-to question", "как пользоваться {topic}?"),
    ("completion", "asks to continue the code", "{cut}\nпродолжи код"),
    ("long", "asks for a full program", "сделай полностью проект {app}, все файлы"),
    ("long", "asks for a long explanation", "расскажи подробно про {topic}, с примерами кода"),
    ("long", "asks for documentation", "напиши полную документацию к этому коду\n{code}"),
    ("review", "asks for a code review", "посмотри код, есть ли ошибки?\n{code}"),
    ("review", "asks about a diff in words", "{hunks}\nглянь дифф, всё ок?"),
]
TEMPLATES = {"en": EN, "zh": ZH, "ja": JA, "ko": KO, "es": ES, "pt": PT, "de": DE, "fr": FR, "ru": RU}

# A third round of phrasings: the words people use for the same asks vary more than one template shows.
ZH += [
    ("long", "asks for a long explanation", "请深入讲解{topic}，包括原理、实现和常见坑，最好有代码"),
    ("long", "asks for documentation", "帮我写一份{topic}的技术方案文档，包含背景、目标、设计和上线计划"),
    ("completion", "asks to finish the code", "剩下的部分你来写\n{cut}"),
    ("review", "asks for a code review", "帮忙检查一下这段代码有没有隐患\n{code}"),
    ("chat", "a concept question", "{topic}一句话概括是什么？"),
]
JA += [
    ("long", "asks for a long explanation", "{topic}の仕組みを詳細に、具体例をたくさん入れて説明して"),
    ("long", "asks for a test suite", "このモジュールのテストを一通り全部書いてください\n{code}"),
    ("completion", "asks to finish the code", "{cut}\nここから先を補完して"),
    ("review", "asks for a code review", "このコード、問題点を洗い出して\n{code}"),
    ("chat", "a concept question", "{topic}って一言でいうと何？"),
]
KO += [
    ("long", "asks for documentation", "{topic}에 대한 온보딩 문서를 처음부터 끝까지 작성해 줘"),
    ("long", "asks to translate a whole document", "아래 문서 전체를 영어로 번역해 줘\n{doc}"),
    ("completion", "asks to continue the code", "이 코드 뒷부분 마무리해 줘\n{cut}"),
    ("review", "asks for a code review", "코드 리뷰 부탁해. 개선할 점 알려 줘\n{code}"),
    ("chat", "a how-to question", "{topic} 쓸 때 주의할 점이 뭐야?"),
]
ES += [
    ("long", "asks for a long explanation", "cuéntame con todo detalle cómo funciona {topic}, con ejemplos de código"),
    ("long", "asks for a test suite", "escribe una batería completa de tests para este módulo\n{code}"),
    ("completion", "asks to continue the code", "{cut}\nterminá esto porfa"),
    ("review", "asks for a code review", "hazle un code review a esto\n{code}"),
    ("chat", "asks about an error", "me sale esto, ¿qué significa?\n{trace}"),
]
PT += [
    ("long", "asks for documentation", "escreve um guia completo de onboarding sobre {topic} para o time"),
    ("long", "asks to translate a whole document", "traduz esse documento todo pro inglês\n{doc}"),
    ("completion", "asks to finish the code", "completa o resto dessa função\n{cut}"),
    ("review", "asks for a code review", "vê se tem bug nesse código\n{code}"),
    ("chat", "asks about an error", "{trace}\npor que dá esse erro?"),
]
DE += [
    ("long", "asks for a long explanation", "erklär mir {topic} bis ins Detail, mit vielen Beispielen"),
    ("long", "asks for a test suite", "schreib eine komplette Testsuite für dieses Modul\n{code}"),
    ("completion", "asks to finish the code", "vervollständige den Rest\n{cut}"),
    ("review", "asks for a code review", "mach ein Code-Review, was würdest du ändern?\n{code}"),
    ("chat", "asks about an error", "{trace}\nwoher kommt der Fehler?"),
]
FR += [
    ("long", "asks for a long explanation", "explique-moi {topic} de façon approfondie, avec plein d'exemples"),
    ("long", "asks for documentation", "écris la documentation complète de ce code, fonction par fonction\n{code}"),
    ("completion", "asks to finish the code", "finis cette fonction\n{cut}"),
    ("review", "asks for a code review", "relis ce code et dis-moi ce qui cloche\n{code}"),
    ("chat", "a how-to question", "comment déboguer {topic} ?"),
]
RU += [
    ("long", "asks for a long explanation", "объясни {topic} максимально подробно, с примерами"),
    ("long", "asks for a test suite", "напиши полный набор тестов для этого модуля\n{code}"),
    ("completion", "asks to finish the code", "закончи эту функцию\n{cut}"),
    ("review", "asks for a code review", "проверь этот код на баги\n{code}"),
    ("chat", "asks about an error", "{trace}\nчто означает эта ошибка?"),
]
EN += [
    ("long", "asks for a long explanation", "deep dive into {topic}: internals, trade-offs, worked examples, common mistakes"),
    ("long", "asks for documentation", "write user docs for this CLI, a page per command with examples\n{code}"),
    ("completion", "asks to finish the code", "{cut}\nfinish it"),
    ("review", "asks for a code review", "sanity check this before I open the PR\n{code}"),
    ("chat", "a concept question", "eli5 {topic}"),
]
TEMPLATES = {"en": EN, "zh": ZH, "ja": JA, "ko": KO, "es": ES, "pt": PT, "de": DE, "fr": FR, "ru": RU}

# Long writing that is not code: articles, essays, blog posts, guides, in every language.
EN += [
    ("long", "asks for long writing", "Write a detailed article about how {topic} works, with the failure cases"),
    ("long", "asks for long writing", "write an essay on the history of {topic}, about 1500 words"),
    ("long", "asks for long writing", "draft a whitepaper on adopting {topic} at a bank"),
    ("chat", "a short ask", "give me a regex that matches {topic} identifiers"),
    ("chat", "a short ask", "name three libraries for {topic}"),
]
ZH += [("long", "asks for long writing", "写一篇关于{topic}的技术博客，三千字左右"),
       ("review", "asks for a code review", "请检查这段代码有没有错误\n{code}")]
JA += [("long", "asks for long writing", "{topic}をテーマに技術ブログの記事を書いてください"),
       ("review", "asks for a code review", "このコードに誤りがないか確認してください\n{code}")]
KO += [("long", "asks for long writing", "{topic}에 관한 블로그 글을 길게 써 줘"),
       ("review", "asks for a code review", "이 코드에 오류가 있는지 검토해 줘\n{code}")]
ES += [("long", "asks for long writing", "escribe un artículo largo sobre {topic} para el blog de la empresa"),
       ("review", "asks for a code review", "revisa si este código tiene errores\n{code}")]
PT += [("long", "asks for long writing", "escreva um artigo completo sobre {topic} para o blog"),
       ("review", "asks for a code review", "confere se esse código tem erros\n{code}")]
DE += [("long", "asks for long writing", "schreib einen ausführlichen Blogartikel über {topic}"),
       ("review", "asks for a code review", "Bitte überprüfe diesen Code auf Fehler\n{code}")]
FR += [("long", "asks for long writing", "rédige un guide complet sur {topic}"),
       ("long", "asks for long writing", "écris un article de blog détaillé sur {topic}"),
       ("review", "asks for a code review", "vérifie ce code, il y a des erreurs ?\n{code}")]
RU += [("long", "asks for long writing", "напиши большую статью про {topic} для блога"),
       ("review", "asks for a code review", "глянь код на ошибки\n{code}")]
TEMPLATES = {"en": EN, "zh": ZH, "ja": JA, "ko": KO, "es": ES, "pt": PT, "de": DE, "fr": FR, "ru": RU}

# Shapes the router's own test table holds (paraphrased, not copied): READMEs and references for a named
# tool, a review with its focus named, a comparison asked in one line, "explain how X is built" in detail.
EN += [
    ("long", "asks for documentation", "Write a README for my {app}, with install, usage and examples"),
    ("long", "asks for documentation", "write reference documentation for every endpoint of {app}"),
    ("long", "asks for documentation", "Write comprehensive docs for {topic}: concepts, API, configuration, troubleshooting"),
    ("review", "asks for a code review", "Review this code for race conditions:\n\n{code}"),
    ("review", "asks for a code review", "review this for error handling and edge cases\n{code}"),
    ("chat", "a comparison question", "Compare {topic} and the usual alternative for a small team."),
    ("chat", "a comparison question", "compare two ways of doing {topic}, briefly"),
]
RU += [("long", "asks for a long explanation", "Подробно объясни, как устроен {topic}"),
       ("chat", "a comparison question", "сравни {topic} и альтернативы в двух словах")]
DE += [("chat", "a comparison question", "vergleiche kurz {topic} mit den Alternativen")]
ZH += [("chat", "a comparison question", "{topic}和别的方案比较一下，简单说"),
       ("long", "asks for documentation", "给{app}写一份 README，包括安装、使用和示例")]
TEMPLATES = {"en": EN, "zh": ZH, "ja": JA, "ko": KO, "es": ES, "pt": PT, "de": DE, "fr": FR, "ru": RU}

# Questions that carry a config line or a number, and detailed explanations asked politely.
EN += [
    ("chat", "a question about a setting", "max_workers = 32 in my config, is that too many for a 4-core box?"),
    ("chat", "a question about a setting", "timeout = 30 in {topic} settings — seconds or milliseconds?"),
    ("chat", "a question about a setting", "is batch_size=512 too big for 8 GB of VRAM?"),
    ("chat", "a comparison question", "Compare {plang} and Go for writing small services."),
    ("review", "asks for a code review", "Review this for thread safety:\n\n{code}"),
]
ZH += [("long", "asks for a long explanation", "请详细解释{topic}的整个过程"),
       ("chat", "a question about a setting", "配置里 pool_size = 50 会不会太大？")]
JA += [("chat", "a question about a setting", "設定の retries = 10 は多すぎますか？")]
DE += [("chat", "a question about a setting", "ist max_connections = 500 für Postgres zu hoch?")]
TEMPLATES = {"en": EN, "zh": ZH, "ja": JA, "ko": KO, "es": ES, "pt": PT, "de": DE, "fr": FR, "ru": RU}

# Asks whose payload comes in a file or a later message: the words alone say how long the answer is.
EN += [
    ("long", "asks to translate a whole document", "translate this whole document to Japanese, I'll attach it"),
    ("long", "asks to translate a whole document", "translate the entire manual into Korean"),
    ("long", "asks for long writing", "Write a 3000 word essay on the history of {topic}"),
    ("long", "asks for long writing", "write a 1000-word report on {topic} for management"),
    ("long", "asks for documentation", "Write comprehensive API reference docs for {app}"),
    ("review", "asks for a code review", "Review this for deadlocks:\n\nasync def transfer(a, b):\n    async with a.lock:\n        async with b.lock:\n"
     "            a.balance -= 1\n"),
    ("review", "asks for a code review", "review this function for off-by-one errors:\n{code}"),
]
ES += [("long", "asks to translate a whole document", "traduce todo el documento al alemán")]
DE += [("long", "asks to translate a whole document", "übersetze das komplette Handbuch ins Französische")]
TEMPLATES = {"en": EN, "zh": ZH, "ja": JA, "ko": KO, "es": ES, "pt": PT, "de": DE, "fr": FR, "ru": RU}

# Coverage phrasings, all trained on (their own rows, after the held-out ones, so the test split stays as it was):
# whole programs, modules and APIs asked with and without a framework or language named, READMEs and docs for
# a named tool, and "explain in detail" in every language — set against the short asks they differ from.
FRAMEWORKS = ["Django", "FastAPI", "Express", "Spring Boot", "Rails", "Gin", "Axum", "Laravel", "NestJS", "Sinatra"]
COVERAGE: dict[str, list[T]] = {
    "en": [
        *[("long", "asks for a full program", f"build a complete {fw} REST API for {{app}} with auth, models and tests")
          for fw in FRAMEWORKS[:5]],
        *[("long", "asks for a full program", f"I need a whole {fw} backend for {{app}}, every endpoint and the database schema")
          for fw in FRAMEWORKS[5:]],
        ("long", "asks for a full program", "make me a complete web API for {app}: endpoints, storage, validation, docs"),
        ("long", "asks for a full program", "Build the complete backend service for {app}, not a sketch: all of it"),
        ("long", "asks for a full program", "code up {app} from scratch as a full {plang} project"),
        ("long", "asks for a full program", "Implement a complete CRUD REST service for {app}"),
        ("long", "asks for a full module", "Create a complete {plang} module for {app}, with tests and docstrings"),
        ("long", "asks for a full module", "create a full library that implements {topic}, every public function documented"),
        ("long", "asks for a full module", "Create an entire {plang} package that handles {topic}"),
        ("long", "asks for a full module", "Create a whole Rust crate that converts YAML to TOML"),
        ("long", "asks for a full module", "create a full TypeScript module that parses and validates config files"),
        ("long", "asks for a full module", "Generate a complete Go package implementing {topic}, with examples"),
        ("long", "asks for documentation", "Write a README for my {plang} library that handles {topic}"),
        ("long", "asks for documentation", "write a README for my command-line tool that resizes images in bulk"),
        ("long", "asks for documentation", "Write the README for my app that syncs calendars between Google and Outlook"),
        ("long", "asks for documentation", "write a README.md for this repo: a Discord bot that posts build results"),
        ("long", "asks for documentation", "Write a user guide for my CLI that converts JSON logs to CSV"),
        ("long", "asks for documentation", "write the docs for our SDK: getting started, authentication, every method"),
        ("long", "asks for documentation", "Write a CONTRIBUTING guide and a README for {app}"),
        ("long", "asks for a long explanation", "Explain in detail how {topic} works"),
        ("long", "asks for a long explanation", "explain {topic} in depth, with the internals"),
        ("long", "asks for a long explanation", "Describe in detail the inner workings of {topic}"),
        ("chat", "a short function", "write a small helper that {func}"),
        ("chat", "a short ask", "what should I put in a README?"),
        ("chat", "a concept question", "what is a README for?"),
        ("chat", "a concept question", "explain {topic} in one paragraph"),
        ("chat", "a how-to question", "how do I add a route to a Flask app?"),
        ("chat", "a how-to question", "how do I structure a Python module with several files?"),
        ("completion", "asks to finish the code", "complete this function\n{cut}"),
        ("completion", "asks to finish the code", "complete the rest of this\n{cut}"),
    ],
    "zh": [
        ("long", "asks for a full program", "用 Django 写一个完整的{app}后端，包括所有接口"),
        ("long", "asks for a full module", "写一个完整的 Python 模块，把 CSV 转成 JSON"),
        ("long", "asks for documentation", "给我的命令行工具写一份 README"),
        ("long", "asks for a long explanation", "详细解释一下{topic}的工作原理"),
        ("long", "asks for a long explanation", "请详细说明{topic}是怎么工作的"),
        ("chat", "a concept question", "{topic}是什么意思？一句话就行"),
    ],
    "ja": [
        ("long", "asks for a full program", "FastAPIで{app}のREST APIを完全に作ってください"),
        ("long", "asks for a full module", "PythonでCSVをJSONに変換するモジュールを丸ごと書いて"),
        ("long", "asks for documentation", "私のCLIツールのREADMEを書いてください"),
        ("long", "asks for a long explanation", "{topic}の仕組みを詳しく説明してください"),
        ("long", "asks for a long explanation", "{topic}について詳細に解説して"),
        ("chat", "a concept question", "{topic}を一言で説明して"),
    ],
    "ko": [
        ("long", "asks for a full program", "Express로 {app} REST API 전체를 만들어 줘"),
        ("long", "asks for a full module", "CSV를 JSON으로 바꾸는 파이썬 모듈 전체를 작성해 줘"),
        ("long", "asks for documentation", "내 CLI 도구의 README를 작성해 줘"),
        ("long", "asks for a long explanation", "{topic}이 어떻게 동작하는지 자세히 설명해 줘"),
        ("long", "asks for a long explanation", "{topic}의 원리를 상세하게 설명해 주세요"),
        ("chat", "a concept question", "{topic}을 짧게 설명해 줘"),
    ],
    "es": [
        ("long", "asks for a full program", "Crea una API REST completa en Django para {app}"),
        ("long", "asks for a full module", "Crea un módulo completo de Python que convierta CSV a JSON"),
        ("long", "asks for documentation", "Escribe un README para mi herramienta de línea de comandos"),
        ("long", "asks for a long explanation", "Explica en detalle el funcionamiento de {topic}"),
        ("long", "asks for a long explanation", "explícame en detalle cómo funciona {topic}"),
        ("chat", "a concept question", "explica {topic} en una frase"),
    ],
    "pt": [
        ("long", "asks for a full program", "Cria uma API REST completa em Express para {app}"),
        ("long", "asks for a full module", "Crie um módulo Python completo que converta CSV em JSON"),
        ("long", "asks for documentation", "Escreva um README para a minha ferramenta de linha de comando"),
        ("long", "asks for a long explanation", "Explique em detalhe o funcionamento de {topic}"),
        ("long", "asks for a long explanation", "explica detalhadamente como funciona {topic}"),
        ("chat", "a concept question", "explica {topic} em uma frase"),
    ],
    "de": [
        ("long", "asks for a full program", "Bau mir eine vollständige FastAPI-REST-API für {app}"),
        ("long", "asks for a full module", "Erstelle ein komplettes Python-Modul, das CSV in JSON umwandelt"),
        ("long", "asks for documentation", "Schreib eine README für mein Kommandozeilen-Tool"),
        ("long", "asks for a long explanation", "Erkläre im Detail, wie {topic} funktioniert"),
        ("long", "asks for a long explanation", "erklär ausführlich die Funktionsweise von {topic}"),
        ("chat", "a concept question", "erklär {topic} in einem Satz"),
    ],
    "fr": [
        ("long", "asks for a full program", "Crée une API REST complète en Django pour {app}"),
        ("long", "asks for a full module", "Écris un module Python complet qui convertit du CSV en JSON"),
        ("long", "asks for documentation", "Écris un README pour mon outil en ligne de commande"),
        ("long", "asks for documentation", "rédige la documentation complète de mon application {app}"),
        ("long", "asks for a long explanation", "Explique en détail comment fonctionne {topic}"),
        ("long", "asks for a long explanation", "explique-moi en détail le principe de {topic}"),
        ("long", "asks for a long explanation", "Décris en détail le fonctionnement de {topic}"),
        ("chat", "a concept question", "explique {topic} en une phrase"),
        ("chat", "a concept question", "c'est quoi {topic} ?"),
    ],
    "ru": [
        ("long", "asks for a full program", "Сделай полноценный REST API на Django для {app}"),
        ("long", "asks for a full module", "Напиши полный модуль на Python, который конвертирует CSV в JSON"),
        ("long", "asks for documentation", "Напиши README для моей консольной утилиты"),
        ("long", "asks for a long explanation", "Объясни в деталях, как работает {topic}"),
        ("long", "asks for a long explanation", "подробно опиши принцип работы {topic}"),
        ("chat", "a concept question", "объясни {topic} в одном предложении"),
    ],
}
# The short asks and reviews that the long phrasings above must not pull along: "explain X briefly", small
# talk, a list of names, a review asked in words, in every language.
COVERAGE["en"] += [
    ("chat", "a short ask", "list three tools for {topic}"),
    ("chat", "a short ask", "recommend two libraries for {topic}"),
    ("chat", "a short ask", "which library should I use for {topic}?"),
    ("chat", "a short ask", "name a good book about {topic}"),
    ("chat", "a concept question", "explain {topic} quickly, two sentences max"),
    ("chat", "small talk", "thanks, works now"),
    ("chat", "small talk", "great, thank you!"),
    ("review", "asks for a code review", "critique this code, I have an interview tomorrow\n{code}"),
    ("review", "asks for a code review", "look over my solution and tell me what's off\n{code}"),
]
COVERAGE["fr"] += [
    ("chat", "a concept question", "explique-moi {topic} vite fait"),
    ("chat", "a concept question", "explique {topic} simplement, en deux lignes"),
    ("chat", "a short ask", "donne-moi deux bibliothèques pour {topic}"),
    ("chat", "small talk", "merci, ça marche"),
    ("chat", "small talk", "super, merci beaucoup !"),
    ("review", "asks for a code review", "jette un œil à ce code, tu vois des problèmes ?\n{code}"),
    ("review", "asks for a code review", "dis-moi ce qui ne va pas dans ce code\n{code}"),
    ("review", "asks for a code review", "peux-tu relire mon code avant la PR ?\n{code}"),
    ("review", "asks about a diff in words", "peux-tu relire ce diff ?\n{hunks}"),
]
COVERAGE["es"] += [
    ("chat", "a concept question", "explícame {topic} rápido"),
    ("chat", "a concept question", "explica {topic} brevemente"),
    ("chat", "small talk", "gracias, ahora sí funciona"),
    ("chat", "small talk", "¡genial, muchas gracias!"),
    ("review", "asks for a code review", "mira este código y dime qué falla\n{code}"),
]
COVERAGE["pt"] += [
    ("chat", "a concept question", "me explica {topic} rapidinho"),
    ("chat", "small talk", "valeu, funcionou"),
    ("review", "asks for a code review", "dá uma revisada nesse código\n{code}"),
]
COVERAGE["de"] += [
    ("chat", "a concept question", "erklär {topic} kurz"),
    ("chat", "small talk", "danke, läuft jetzt"),
    ("review", "asks for a code review", "schau mal über den Code, passt das so?\n{code}"),
    ("review", "asks for a code review", "kannst du den Code prüfen? Was stimmt nicht?\n{code}"),
]
COVERAGE["ru"] += [
    ("chat", "a concept question", "объясни {topic} вкратце"),
    ("chat", "small talk", "спасибо, всё работает"),
    ("chat", "small talk", "отлично, спасибо!"),
    ("review", "asks for a code review", "глянь этот код, что не так?\n{code}"),
]
COVERAGE["zh"] += [
    ("chat", "a comparison question", "简单比较一下{topic}和其他做法"),
    ("chat", "a comparison question", "{topic}和别的比，哪个好？一句话"),
    ("chat", "small talk", "谢谢，搞定了"),
    ("review", "asks for a code review", "帮我看看这段代码对不对\n{code}"),
]
COVERAGE["ja"] += [
    ("chat", "a concept question", "{topic}をざっくり教えて"),
    ("chat", "small talk", "助かりました、ありがとう"),
    ("review", "asks for a code review", "このコードをレビューしてください\n{code}"),
]
COVERAGE["ko"] += [
    ("chat", "a concept question", "{topic} 간단히 알려 줘"),
    ("chat", "small talk", "고마워, 이제 돼"),
    ("review", "asks for a code review", "이 코드 리뷰해 줘\n{code}"),
]
# A setting or an environment line asked about in words is a question, not code to continue; "please finish
# this" said politely is still completion; and whole-file asks over pasted code stay long in Japanese and Chinese.
COVERAGE["en"] += [
    ("chat", "a question about a setting", "API_URL=http://localhost:8080 — should this go in .env or in the config?"),
    ("chat", "a question about a setting", "export PATH=$HOME/bin:$PATH — why doesn't it stick after a reboot?"),
    ("chat", "a question about a setting", "is LOG_LEVEL=debug too noisy for production?"),
    ("chat", "a question about a setting", "PORT=3000 — can two apps share it?"),
    ("chat", "a question about a setting", "Is CACHE_TTL=0 the same as no cache at all?"),
    ("chat", "a question about a setting", "NODE_ENV=production in my Dockerfile, where else should I set it?"),
]
COVERAGE["ko"] += [
    ("completion", "asks to finish the code", "이 코드를 완성해 주세요\n{cut}"),
    ("completion", "asks to finish the code", "함수를 마저 작성해 주세요\n{cut}"),
]
COVERAGE["ja"] += [
    ("long", "asks for documentation", "このコードの全関数にドキュメントコメントを付けてください\n{code}"),
    ("long", "asks for a test suite", "このコードのテストを全部書いてください\n{code}"),
]
COVERAGE["zh"] += [
    ("long", "asks for documentation", "给这段代码的每个函数写文档\n{code}"),
    ("long", "asks for a test suite", "为这个模块写完整的测试用例\n{code}"),
]

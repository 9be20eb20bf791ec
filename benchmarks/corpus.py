"""A deterministic, realistic Markdown reply for render benchmarks.

`tokens(n)` gives the reply as `n` token-like pieces (about four characters each,
whitespace kept); `"".join(tokens(n))` is the reply text. The reply mixes headings,
paragraphs, bullet and numbered lists, tables and fenced code blocks in Python,
JavaScript and Rust of 10 to 60 lines, the way a chat model answers a coding question.
"""

from __future__ import annotations

import random
import re
from functools import lru_cache

__all__ = ["text", "tokens"]

SEED = 1500

_TOKEN = re.compile(r"\n+|[ \t]{2,}(?=\S)|[ \t]*\S{1,4}|[ \t]+")

_NOUNS = [
    "request", "token", "stream", "buffer", "cache", "worker", "queue", "socket",
    "session", "handler", "parser", "frame", "batch", "client", "server", "index",
    "record", "payload", "channel", "scheduler", "endpoint", "timeout", "retry",
]
_VERBS = [
    "parses", "buffers", "flushes", "validates", "schedules", "retries", "encodes",
    "decodes", "streams", "caches", "collects", "drops", "merges", "renders",
]
_ADJECTIVES = [
    "incremental", "bounded", "lazy", "concurrent", "idempotent", "stale", "partial",
    "asynchronous", "cheap", "expensive", "stable", "monotonic", "fresh",
]
_OPENERS = [
    "In practice,", "The key point is that", "Note that", "Under load,", "By default,",
    "In most deployments,", "As a rule of thumb,", "When the connection drops,",
    "For small inputs,", "Once the first chunk arrives,",
]
_TOPICS = [
    "Streaming responses", "Rate limiting", "Connection pooling", "Backpressure",
    "Error handling", "Caching strategy", "Benchmark setup", "Token accounting",
    "Graceful shutdown", "Retry policy", "Configuration", "Observability",
]


def _word(rng: random.Random, pool: list[str]) -> str:
    return rng.choice(pool)


def _inline(rng: random.Random) -> str:
    """A noun, sometimes decorated with inline Markdown."""
    noun = _word(rng, _NOUNS)
    roll = rng.random()
    if roll < 0.12:
        return f"`{noun}_{_word(rng, _NOUNS)}()`"
    if roll < 0.2:
        return f"**{noun}**"
    if roll < 0.25:
        return f"*{noun}*"
    return noun


def _sentence(rng: random.Random) -> str:
    parts = [
        _word(rng, _OPENERS),
        "the",
        _word(rng, _ADJECTIVES),
        _inline(rng),
        _word(rng, _VERBS),
        "each",
        _inline(rng),
    ]
    if rng.random() < 0.6:
        parts += ["before the", _word(rng, _ADJECTIVES), _inline(rng), "is", _word(rng, _ADJECTIVES)]
    if rng.random() < 0.3:
        parts += [", so the", _inline(rng), "never", _word(rng, _VERBS), "twice"]
    return " ".join(parts).replace(" ,", ",") + "."


def _paragraph(rng: random.Random, sentences: int | None = None) -> str:
    count = sentences or rng.randint(2, 5)
    return " ".join(_sentence(rng) for _ in range(count))


def _bullets(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randint(3, 7)):
        item = f"- {_inline(rng).capitalize()} {_word(rng, _VERBS)} the {_word(rng, _ADJECTIVES)} {_inline(rng)}"
        lines.append(item)
        if rng.random() < 0.25:
            lines.append(f"  - then it {_word(rng, _VERBS)} the {_inline(rng)}")
    return "\n".join(lines)


def _numbered(rng: random.Random) -> str:
    return "\n".join(
        f"{n}. {_word(rng, _VERBS).capitalize()} the {_word(rng, _ADJECTIVES)} {_inline(rng)}."
        for n in range(1, rng.randint(3, 6) + 1)
    )


def _table(rng: random.Random) -> str:
    header = "| Setting | Default | Effect |"
    rule = "|---|---:|---|"
    rows = [
        f"| `{_word(rng, _NOUNS)}_{_word(rng, _NOUNS)}` | {rng.randint(1, 500)} "
        f"| {_word(rng, _VERBS)} the {_word(rng, _ADJECTIVES)} {_word(rng, _NOUNS)} |"
        for _ in range(rng.randint(3, 8))
    ]
    return "\n".join([header, rule, *rows])


def _fill(head: list[str], groups: list[list[str]], filler: str, tail: list[str], n_lines: int) -> list[str]:
    """Balanced statement groups between `head` and `tail`, padded to `n_lines`."""
    lines = list(head)
    index = 0
    while len(lines) + len(groups[index % len(groups)]) + len(tail) <= n_lines:
        lines += groups[index % len(groups)]
        index += 1
    while len(lines) + len(tail) < n_lines:
        lines.append(filler.format(n=len(lines)))
    return lines + tail


def _python(rng: random.Random, n_lines: int) -> list[str]:
    name = f"{_word(rng, _VERBS)[:-1]}_{_word(rng, _NOUNS)}"
    head = [
        f"def {name}(items, limit={rng.randint(2, 64)}):",
        f'    """Keep the {_word(rng, _ADJECTIVES)} {_word(rng, _NOUNS)}s seen more than once."""',
        "    seen = {}",
    ]
    groups = [
        [
            "    for index, item in enumerate(items):",
            "        if item is None:",
            "            continue",
            "        key = item.get('id', index)",
            "        seen[key] = seen.get(key, 0) + 1",
        ],
        ["    # drop entries that were only seen once", "    result = [k for k, v in seen.items() if v > 1]"],
        [
            "    total = sum(len(str(k)) for k in result)",
            "    while total > limit and result:",
            "        total -= len(str(result.pop()))",
        ],
        ['    print(f"kept {len(result)} of {len(seen)}")'],
    ]
    return _fill(head, groups, "    checks.append({n})", ["    return result"], n_lines)


def _javascript(rng: random.Random, n_lines: int) -> list[str]:
    name = f"{_word(rng, _VERBS)[:-1]}{_word(rng, _NOUNS).capitalize()}"
    head = [f"async function {name}(url, options = {{}}) {{", "  const started = performance.now();"]
    groups = [
        [
            "  const response = await fetch(url, { ...options });",
            "  if (!response.ok) {",
            "    throw new Error(`HTTP ${response.status}`);",
            "  }",
        ],
        [
            "  const reader = response.body.getReader();",
            "  let received = 0; // bytes so far",
            "  for (;;) {",
            "    const { done, value } = await reader.read();",
            "    if (done) break;",
            "    received += value.length;",
            "  }",
        ],
        ["  console.log(`took ${performance.now() - started} ms`);"],
    ]
    return _fill(head, groups, "  marks.push({n});", ["  return received;", "}"], n_lines)


def _rust(rng: random.Random, n_lines: int) -> list[str]:
    name = f"{_word(rng, _VERBS)[:-1]}_{_word(rng, _NOUNS)}"
    head = [
        f"pub fn {name}(input: &[u8], limit: usize) -> Result<Vec<u8>, Error> {{",
        "    let mut out = Vec::with_capacity(limit);",
    ]
    groups = [
        [
            "    for (i, byte) in input.iter().enumerate() {",
            "        if *byte == b'\\n' {",
            "            continue;",
            "        }",
            "        // keep at most `limit` bytes",
            "        if out.len() >= limit {",
            '            return Err(Error::new(format!("overflow at {}", i)));',
            "        }",
            "        out.push(byte.wrapping_add(1));",
            "    }",
        ],
        ["    let checksum: u32 = out.iter().map(|b| *b as u32).sum();", '    log::debug!("checksum {}", checksum);'],
    ]
    return _fill(head, groups, "    out.push({n});", ["    Ok(out)", "}"], n_lines)


def _code(rng: random.Random) -> str:
    language, make = rng.choice([("python", _python), ("javascript", _javascript), ("rust", _rust)])
    return "\n".join([f"```{language}", *make(rng, rng.randint(10, 60)), "```"])


def _section(rng: random.Random) -> list[str]:
    blocks = [f"## {_word(rng, _TOPICS)}", _paragraph(rng)]
    for _ in range(rng.randint(2, 4)):
        kind = rng.choices(["para", "bullets", "numbered", "table", "code", "sub"], [4, 2, 1, 1, 2, 1])[0]
        if kind == "para":
            blocks.append(_paragraph(rng))
        elif kind == "bullets":
            blocks.append(_bullets(rng))
        elif kind == "numbered":
            blocks.append(_numbered(rng))
        elif kind == "table":
            blocks.append(_table(rng))
        elif kind == "code":
            blocks += [f"Here is the {_word(rng, _ADJECTIVES)} version:", _code(rng)]
        else:
            blocks += [f"### {_word(rng, _ADJECTIVES).capitalize()} {_word(rng, _NOUNS)}s", _paragraph(rng, 2)]
    return blocks


def _split(markdown: str) -> list[str]:
    return _TOKEN.findall(markdown)


@lru_cache(maxsize=8)
def _tokens(n: int) -> tuple[str, ...]:
    rng = random.Random(SEED)
    pieces: list[str] = _split("# " + _word(rng, _TOPICS) + "\n\n" + _paragraph(rng, 3))
    while True:
        section = _split("\n\n" + "\n\n".join(_section(rng)))
        if len(pieces) + len(section) > n - 8:
            break
        pieces += section
    filler = _split("".join("\n\n" + _paragraph(rng) for _ in range(n // 40 + 1)))
    return tuple((pieces + filler)[:n])


def tokens(n: int = 10_000) -> list[str]:
    """The reply as `n` token-like pieces; joining them gives the reply text."""
    return list(_tokens(n))


def text(n: int = 10_000) -> str:
    """The reply text of `n` tokens."""
    return "".join(_tokens(n))


if __name__ == "__main__":
    print(text())

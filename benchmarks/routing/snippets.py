"""Code the corpus builder pastes into prompts: whole snippets in many languages, cut mid-statement for completions.

Each entry is (language, name, code). :func:`cut` stops a snippet inside a statement, as an editor's buffer
does when the user asks for the rest.
"""

from __future__ import annotations

SNIPPETS: list[tuple[str, str, str]] = [
    ("Python", "parse_duration", '''def parse_duration(text: str) -> int:
    """Parse '1h30m' into seconds."""
    units = {"h": 3600, "m": 60, "s": 1}
    total, number = 0, ""
    for char in text:
        if char.isdigit():
            number += char
        else:
            total += int(number) * units[char]
            number = ""
    return total
'''),
    ("Python", "retry", '''import time

def retry(fn, attempts=3, delay=0.5):
    last = None
    for attempt in range(attempts):
        try:
            return fn()
        except Exception as exc:
            last = exc
            time.sleep(delay * 2 ** attempt)
    raise last
'''),
    ("Python", "fetch_all", '''async def fetch_all(urls: list[str]) -> list[bytes]:
    async with httpx.AsyncClient(timeout=10) as client:
        responses = await asyncio.gather(*[client.get(url) for url in urls])
        return [r.content for r in responses if r.status_code == 200]
'''),
    ("Python", "UserRepo", '''class UserRepository:
    def __init__(self, conn):
        self.conn = conn

    def get(self, user_id: int) -> dict | None:
        row = self.conn.execute("SELECT id, email FROM users WHERE id = ?", (user_id,)).fetchone()
        return dict(row) if row else None

    def create(self, email: str) -> int:
        cur = self.conn.execute("INSERT INTO users (email) VALUES (?)", (email,))
        return cur.lastrowid

    def delete(self, user_id: int) -> None:
        self.conn.execute("DELETE FROM users WHERE id = ?", (user_id,))
'''),
    ("JavaScript", "debounce", '''function debounce(fn, ms) {
  let timer;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn.apply(this, args), ms);
  };
}
'''),
    ("TypeScript", "useFetch", '''export function useUser(id: string) {
  const [user, setUser] = useState<User | null>(null);
  const [error, setError] = useState<Error | null>(null);
  useEffect(() => {
    let cancelled = false;
    fetch(`/api/users/${id}`)
      .then((res) => res.json())
      .then((data) => { if (!cancelled) setUser(data); })
      .catch(setError);
    return () => { cancelled = true; };
  }, [id]);
  return { user, error };
}
'''),
    ("TypeScript", "CartService", '''export class CartService {
  private items = new Map<string, number>();

  add(sku: string, qty = 1): void {
    this.items.set(sku, (this.items.get(sku) ?? 0) + qty);
  }

  remove(sku: string): void {
    this.items.delete(sku);
  }

  total(prices: Record<string, number>): number {
    let sum = 0;
    for (const [sku, qty] of this.items) sum += (prices[sku] ?? 0) * qty;
    return sum;
  }
}
'''),
    ("Go", "handleHealth", '''func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	status := map[string]string{"status": "ok", "version": s.version}
	if err := s.db.PingContext(r.Context()); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		status["status"] = "db down"
	}
	json.NewEncoder(w).Encode(status)
}
'''),
    ("Go", "worker", '''func worker(ctx context.Context, jobs <-chan Job, results chan<- Result) {
	for {
		select {
		case <-ctx.Done():
			return
		case job, ok := <-jobs:
			if !ok {
				return
			}
			results <- process(job)
		}
	}
}
'''),
    ("Rust", "parse_port", '''fn parse_port(s: &str) -> Option<u16> {
    let n: u32 = s.trim().parse().ok()?;
    if n == 0 || n > 65535 {
        return None;
    }
    Some(n as u16)
}
'''),
    ("Rust", "Display", '''impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

impl Point {
    pub fn distance(&self, other: &Point) -> f64 {
        ((self.x - other.x).powi(2) + (self.y - other.y).powi(2)).sqrt()
    }
}
'''),
    ("Java", "OrderService", '''public class OrderService {
    private final OrderRepository repo;

    public OrderService(OrderRepository repo) {
        this.repo = repo;
    }

    public Order place(Customer customer, List<Item> items) {
        if (items.isEmpty()) {
            throw new IllegalArgumentException("empty order");
        }
        Order order = new Order(customer, items);
        return repo.save(order);
    }
}
'''),
    ("C", "main_loop", '''#include <stdio.h>
#include <string.h>

int count_words(const char *s) {
    int count = 0, in_word = 0;
    for (; *s; s++) {
        if (*s == ' ' || *s == '\\n') {
            in_word = 0;
        } else if (!in_word) {
            in_word = 1;
            count++;
        }
    }
    return count;
}
'''),
    ("C++", "LruCache", '''template <typename K, typename V>
class LruCache {
public:
    explicit LruCache(size_t capacity) : capacity_(capacity) {}

    std::optional<V> get(const K& key) {
        auto it = index_.find(key);
        if (it == index_.end()) return std::nullopt;
        items_.splice(items_.begin(), items_, it->second);
        return it->second->second;
    }

private:
    size_t capacity_;
    std::list<std::pair<K, V>> items_;
    std::unordered_map<K, typename std::list<std::pair<K, V>>::iterator> index_;
};
'''),
    ("C#", "Controller", '''[ApiController]
[Route("api/[controller]")]
public class TodoController : ControllerBase
{
    private readonly TodoContext _db;

    public TodoController(TodoContext db) => _db = db;

    [HttpGet("{id}")]
    public async Task<ActionResult<Todo>> Get(long id)
    {
        var todo = await _db.Todos.FindAsync(id);
        return todo is null ? NotFound() : todo;
    }
}
'''),
    ("Ruby", "slugify", '''class Post < ApplicationRecord
  before_save :set_slug

  def set_slug
    self.slug = title.downcase.strip.gsub(/[^a-z0-9]+/, "-").gsub(/^-|-$/, "")
  end

  def self.published
    where(published: true).order(created_at: :desc)
  end
end
'''),
    ("PHP", "login", '''<?php
function find_user(PDO $pdo, string $email): ?array {
    $stmt = $pdo->prepare("SELECT * FROM users WHERE email = :email");
    $stmt->execute(["email" => $email]);
    $user = $stmt->fetch(PDO::FETCH_ASSOC);
    return $user ?: null;
}
'''),
    ("Kotlin", "viewmodel", '''class ProfileViewModel(private val repo: ProfileRepository) : ViewModel() {
    private val _state = MutableStateFlow<ProfileState>(ProfileState.Loading)
    val state: StateFlow<ProfileState> = _state

    fun load(id: String) {
        viewModelScope.launch {
            _state.value = try {
                ProfileState.Ready(repo.fetch(id))
            } catch (e: IOException) {
                ProfileState.Failed(e.message ?: "network error")
            }
        }
    }
}
'''),
    ("Swift", "ImageLoader", '''final class ImageLoader {
    private let cache = NSCache<NSURL, UIImage>()

    func load(_ url: URL) async throws -> UIImage {
        if let cached = cache.object(forKey: url as NSURL) {
            return cached
        }
        let (data, _) = try await URLSession.shared.data(from: url)
        guard let image = UIImage(data: data) else { throw LoaderError.badData }
        cache.setObject(image, forKey: url as NSURL)
        return image
    }
}
'''),
    ("SQL", "orders_report", '''SELECT u.id, u.email, count(o.id) AS orders, sum(o.total) AS revenue
FROM users u
LEFT JOIN orders o ON o.user_id = u.id AND o.created_at >= now() - interval '30 days'
WHERE u.deleted_at IS NULL
GROUP BY u.id, u.email
HAVING count(o.id) > 0
ORDER BY revenue DESC
LIMIT 50;
'''),
    ("Bash", "rotate_logs", '''#!/usr/bin/env bash
set -euo pipefail

LOG_DIR=${1:-/var/log/myapp}
for f in "$LOG_DIR"/*.log; do
  if [ -s "$f" ]; then
    gzip -c "$f" > "$f.$(date +%F).gz"
    : > "$f"
  fi
done
'''),
    ("Lua", "neovim", '''local function toggle_quickfix()
  for _, win in ipairs(vim.fn.getwininfo()) do
    if win.quickfix == 1 then
      vim.cmd("cclose")
      return
    end
  end
  vim.cmd("copen")
end

vim.keymap.set("n", "<leader>q", toggle_quickfix, { desc = "toggle quickfix" })
'''),
    ("Haskell", "wordfreq", '''wordFreq :: String -> Map.Map String Int
wordFreq = foldr bump Map.empty . words . map toLower
  where
    bump w = Map.insertWith (+) w 1

topN :: Int -> Map.Map String Int -> [(String, Int)]
topN n = take n . sortBy (comparing (Down . snd)) . Map.toList
'''),
    ("Elixir", "genserver", '''defmodule Counter do
  use GenServer

  def start_link(initial), do: GenServer.start_link(__MODULE__, initial, name: __MODULE__)
  def increment, do: GenServer.cast(__MODULE__, :increment)
  def value, do: GenServer.call(__MODULE__, :value)

  @impl true
  def init(initial), do: {:ok, initial}

  @impl true
  def handle_cast(:increment, n), do: {:noreply, n + 1}

  @impl true
  def handle_call(:value, _from, n), do: {:reply, n, n}
end
'''),
    ("Scala", "wordcount", '''object WordCount {
  def main(args: Array[String]): Unit = {
    val counts = scala.io.Source.fromFile(args(0))
      .getLines()
      .flatMap(_.split("\\\\W+"))
      .filter(_.nonEmpty)
      .toSeq
      .groupBy(identity)
      .view.mapValues(_.size)
    counts.toSeq.sortBy(-_._2).take(10).foreach(println)
  }
}
'''),
    ("R", "summary", '''library(dplyr)

sales_summary <- function(df) {
  df %>%
    filter(!is.na(amount)) %>%
    group_by(region, month = format(date, "%Y-%m")) %>%
    summarise(total = sum(amount), orders = n(), .groups = "drop") %>%
    arrange(region, month)
}
'''),
    ("YAML", "k8s", '''apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  replicas: 3
  selector:
    matchLabels:
      app: api
  template:
    metadata:
      labels:
        app: api
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/api:1.4.2
          ports:
            - containerPort: 8080
'''),
    ("Dockerfile", "dockerfile", '''FROM python:3.12-slim AS build
WORKDIR /app
COPY pyproject.toml .
RUN pip install --no-cache-dir build && python -m build --wheel

FROM python:3.12-slim
COPY --from=build /app/dist/*.whl /tmp/
RUN pip install /tmp/*.whl
CMD ["myapp", "serve", "--port", "8000"]
'''),
    ("Python", "pandas_clean", '''import pandas as pd

def clean(df: pd.DataFrame) -> pd.DataFrame:
    df = df.rename(columns=str.lower)
    df["date"] = pd.to_datetime(df["date"], errors="coerce")
    df = df.dropna(subset=["date", "amount"])
    df["amount"] = df["amount"].astype(float)
    return df.sort_values("date").reset_index(drop=True)
'''),
    ("JavaScript", "express", '''const express = require("express");
const app = express();
app.use(express.json());

app.get("/todos", async (req, res) => {
  const todos = await db.all("SELECT * FROM todos WHERE done = ?", [req.query.done ?? 0]);
  res.json(todos);
});

app.post("/todos", async (req, res) => {
  const { title } = req.body;
  const result = await db.run("INSERT INTO todos (title) VALUES (?)", [title]);
  res.status(201).json({ id: result.lastID, title });
});
'''),
    ("Go", "crawler_fetch", '''func fetch(url string, depth int, seen map[string]bool) {
	if depth <= 0 || seen[url] {
		return
	}
	seen[url] = true
	links, err := extractLinks(url)
	if err != nil {
		log.Printf("fetch %s: %v", url, err)
		return
	}
	for _, link := range links {
		fetch(link, depth-1, seen)
	}
}
'''),
    ("Java", "StringUtils", '''public final class StringUtils {
    private StringUtils() {}

    public static boolean isBlank(String s) {
        return s == null || s.trim().isEmpty();
    }

    public static String capitalize(String s) {
        if (isBlank(s)) return s;
        return Character.toUpperCase(s.charAt(0)) + s.substring(1);
    }

    public static String reverse(String s) {
        return new StringBuilder(s).reverse().toString();
    }
}
'''),
]


def cut(code: str, share: float = 0.6) -> str:
    """``code`` up to about ``share`` of its lines, the last line stopped inside its statement."""
    lines = code.rstrip("\n").split("\n")
    index = max(1, min(len(lines) - 1, round(len(lines) * share)))
    while index < len(lines) - 1 and len(lines[index].strip()) < 6:
        index += 1
    last = lines[index]
    indent = len(last) - len(last.lstrip())
    stops = [last.find(mark) for mark in ("(", " = ", ".", ": ", " := ", "[", " ") if last.find(mark, indent + 1) > 0]
    stop = min((s for s in stops if s > indent), default=len(last) // 2)
    return "\n".join([*lines[:index], last[: stop + 1]])

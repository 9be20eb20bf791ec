"""Auto mode: which source a prompt goes to, and why.

Pure decisions, with no I/O but the task model's weights, read once. :class:`Router` classifies a
request (:mod:`fastchat_tui.classify`), maps its task kind to sources through the ordered rules of the
``[router]`` config (:mod:`fastchat_tui.router_config`), skips sources that are cooling down after failures or
are over their monthly budget, and among the sources a rule allows picks the one with the
lowest predicted completion time (TTFT + expected tokens / decode rate) from measured
statistics, which it reads from a :class:`~fastchat_tui.routing.Ledger`.

A :class:`Router` is what :class:`fastchat_tui.session.Router` asks for: the session hands it each
:class:`~fastchat_tui.routing.Request` (the prompt with the conversation's earlier messages) to
:meth:`Router.decide`, tells it how each attempt went with :meth:`Router.record` and hands it
finished replies' readings with :meth:`Router.observe`. :meth:`Router.record` is the one health
policy: auto mode's cool-down, and (:func:`refused_every_time`) when the bench stops sending to a
source. :func:`hedge_routes` is the rule for which sources a request may be hedged across
(``[router] hedge``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence

from fastchat_tui.classify import decide_task, find_sensitive, scanner_for
from fastchat_tui.config import Config, SourceConfig
from fastchat_tui.events import Hedged
from fastchat_tui.meter import Reading, milliseconds
from fastchat_tui.pricing import cost
from fastchat_tui.routing import (
    EXPECTED_TOKENS,
    PRIORS,
    Decision,
    Health,
    Ledger,
    MemoryLedger,
    Request,
    Route,
    RouterSettings,
    candidate,
    default_rules,
)
from fastchat_tui.sources.base import HEALTH_KINDS, ErrorKind, NotRunning, SourceError

HEDGED_TASKS = ("completion",)
"""Task kinds whose replies are short enough that the first token decides how long the user waits:
the only ones auto mode hedges."""
HEDGE_WIDTH = 2
"""How many sources a hedged request goes to."""
REFUSED_KINDS = frozenset({ErrorKind.AUTH})
"""Error kinds that say every request to the source would be refused the same way (a rejected key is rejected
every time): one cools the source down at once, and the bench sends it nothing more."""


def refused_every_time(kind: ErrorKind | str | None) -> bool:
    """Whether a failure of ``kind`` means every further request to its source fails alike (:data:`REFUSED_KINDS`)."""
    return kind is not None and kind in REFUSED_KINDS


class Router:
    """Routes each request by the rules, health, budgets and measured speed of the configured sources."""

    def __init__(
        self,
        sources: dict[str, SourceConfig],
        settings: RouterSettings | None = None,
        *,
        ledger: Ledger | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.sources = sources
        self.settings = settings or RouterSettings()
        self.ledger: Ledger = ledger if ledger is not None else MemoryLedger()
        self.clock = clock
        self.health: dict[str, Health] = {}
        self.served: dict[str, str] = {}
        """The model each source last answered with (its configured one, one given by hand, or one it chose)."""
        self.scanner = scanner_for(self.settings)

    @classmethod
    def from_config(cls, config: Config, *, ledger: Ledger | None = None, clock: Callable[[], float] = time.time) -> Router:
        """A router for a loaded :class:`~fastchat_tui.config.Config` (``load`` checked its ``[router]``)."""
        return cls(config.sources, config.router, ledger=ledger, clock=clock)

    # -- the session's interface (fastchat_tui.session.Router: decide, record, observe, retry_route) --

    def route(self, request: Request) -> Route:
        """Where ``request`` goes; raises :class:`SourceError` when no source may take it."""
        return self.decide(request).route

    def record(
        self,
        source: str,
        ok: bool,
        error_kind: ErrorKind | str | None = None,
        t: float | None = None,
        *,
        retry_after: float | None = None,
    ) -> None:
        """Tell the router how one attempt on ``source`` went; failures that keep coming cool it down."""
        now = self.clock() if t is None else t
        health = self.health.setdefault(source, Health())
        if ok:
            health.failures, health.cooled_until, health.last_error = 0, 0.0, None
            return
        kind = ErrorKind(error_kind) if error_kind else ErrorKind.SERVER
        if kind not in HEALTH_KINDS:
            return
        settings = self.settings
        health.failures += 1
        health.last_error = str(kind)
        if kind == ErrorKind.RATE_LIMITED and retry_after is not None:
            # The source already waited out a short Retry-After once; a longer one is honoured by not asking.
            health.cooled_until = max(health.cooled_until, now + min(retry_after, settings.cooldown_max_s))
        threshold = 1 if refused_every_time(kind) else settings.cooldown_after
        if health.failures >= threshold:
            extra = health.failures - threshold
            span = min(settings.cooldown_s * (2 ** min(extra, 16)), settings.cooldown_max_s)
            health.cooled_until = max(health.cooled_until, now + span)

    def observe(self, source: str, reading: Reading | None, t: float | None = None, *, model: str | None = None) -> None:
        """Learn from a finished reply's meter reading; ``model`` is the one that answered (``None``: the configured one).

        The pair (source, model) is its own candidate (:func:`~fastchat_tui.routing.candidate`): its speed is
        learned apart, and routing predicts a source by the model it last answered with. A store-backed ledger
        learns the figures from the history instead, as the recorder writes the reply there.
        """
        spec = self.sources.get(source)
        if model is not None:
            self.served[source] = model
        ledger = self.ledger
        if reading is None or not isinstance(ledger, MemoryLedger):
            return
        if reading.ttft_s is not None:
            ledger.add_latency(candidate(source, model, spec.model if spec else None), reading.ttft_s,
                               reading.decode_tps)
        if spec is not None and reading.tokens_exact:
            usd = cost(spec, reading.input_tokens, reading.output_tokens, model)
            if usd:
                ledger.add_spend(source, usd, self.clock() if t is None else t)

    def retry_route(self, route: Route, failed: str) -> Route | None:
        """The route for the one-key retry after ``failed`` cut a reply: the next source of the fallback list."""
        order = [route.source, *route.fallbacks]
        rest = order[order.index(failed) + 1:] if failed in order else list(route.fallbacks)
        rest = [name for name in rest if name != failed]
        if not rest:
            return None
        return _make_route(rest[0], f"{route.task}: retry after {failed} cut the reply", route.task, rest[1:], [])

    def manual(self, request: Request, name: str) -> Route:
        """A hand-chosen source: always allowed, with warnings (over budget, sensitive prompt to a hosted source)."""
        if name not in self.sources:
            raise SourceError(ErrorKind.NOT_FOUND, f"no source named '{name}' (configured: {', '.join(self.sources)})")
        warnings = self._budget_warnings(name, self.clock())
        found = find_sensitive(request.prompt, request.attachments, request.history, self.settings, self.scanner,
                               system=request.system)
        why = "; ".join(map(str, found)) or request.held
        if why and not self.sources[name].is_private:
            warnings.append(f"this prompt looks sensitive ({why}) and {name} is not local")
        return _make_route(name, "chosen by hand", "chat", [], warnings)

    def cooling(self, name: str) -> float:
        """Seconds left of ``name``'s cool-down (0 when it is not cooling down)."""
        health = self.health.get(name)
        return max(0.0, health.cooled_until - self.clock()) if health else 0.0

    # -- the decision ------------------------------------------------------------------

    def decide(self, request: Request, chosen: str | None = None) -> Decision:
        """Classify, match a rule, drop what may not be used, and pick the fastest allowed source; ``chosen``: a
        source picked by hand (:meth:`manual`), with the request's task kind if it names one."""
        if chosen is not None:
            route = self.manual(request, chosen)
            route.task = request.hint or route.task
            return Decision(route)
        settings, now = self.settings, self.clock()
        kind = decide_task(request.prompt, request.attachments, request.max_tokens, settings,
                           history=request.history, hint=request.hint, scanner=self.scanner, system=request.system)
        task, why = kind.task, kind.reason
        if request.held and task != "sensitive":
            task, why = "sensitive", request.held
        size = len(request.prompt) + sum(len(a.text) for a in request.attachments)
        rule = next((r for r in settings.all_rules() if r.applies(task, request.prompt, size)), None)
        if rule is None:  # pragma: no cover - the default rules cover every task
            rule = default_rules(settings.default)[-1]
        decision = Decision(Route("", ""), finding=why if task == "sensitive" else None, scores=kind.scores)
        primary = self._resolve(rule.source)
        fallback = [name for name in self._resolve(rule.fallbacks) if name not in primary]
        notes: list[str] = []
        mentioned: set[str] = set()  # sources a note already names, with why
        private_only = task == "sensitive" or (task == "review" and settings.review_private)
        if private_only:
            hosted = [n for n in (*primary, *fallback) if not self.sources[n].is_private]
            for name in hosted:
                decision.skipped[name] = "not private"
            primary = [n for n in primary if self.sources[n].is_private]
            fallback = [n for n in fallback if self.sources[n].is_private]
            if not primary and not fallback:
                primary = [n for n, spec in self.sources.items() if spec.is_private]
            if not primary and not fallback:
                because, remedy = (
                    (f"this prompt looks sensitive ({why})", "remove the secret from the prompt") if task == "sensitive"
                    else ("[router] review_private = true keeps reviews private", "choose a source by hand (-s)"))
                raise SourceError(
                    ErrorKind.NOT_FOUND,
                    f"not sent: {because}, so it may only go to a private source (tagged 'local' on this machine, "
                    f"or marked private = true), and none is configured. Add a local source (e.g. Ollama) or "
                    f"{remedy}.",
                )
        # Over budget: skipped in auto mode (still selectable by hand).
        for name in [*primary, *fallback]:
            over = self._over_budget(name, now)
            if over:
                decision.skipped[name] = over
        primary = [n for n in primary if n not in decision.skipped]
        fallback = [n for n in fallback if n not in decision.skipped]
        if not primary and not fallback:
            left_out = "; ".join(f"{n}: {why_}" for n, why_ in decision.skipped.items()) or "none configured"
            raise SourceError(
                ErrorKind.NOT_FOUND,
                f"no source may take this {task} prompt in auto mode ({left_out}); choose a source by hand",
            )
        # Cooling down: tried only as a last resort.
        cooled = [n for n in [*primary, *fallback] if self._health(n).cooling(now)]
        for name in cooled:
            decision.skipped[name] = f"cooling down {self.cooling(name):.0f} s after {self._health(name).last_error}"
        live_primary = [n for n in primary if n not in cooled]
        live_fallback = [n for n in fallback if n not in cooled]
        expected = _expected_tokens(task, request.max_tokens)
        predicted = {n: self._predict(n, expected) for n in live_primary}
        ranked = sorted(live_primary, key=lambda n: (predicted[n], live_primary.index(n)))
        decision.predictions = {n: predicted[n] for n in ranked}
        if ranked:
            chosen = ranked[0]
            if len(ranked) > 1:
                other = ranked[1]
                notes.append(f"predicted {_secs(predicted[chosen])} vs {other} {_secs(predicted[other])}")
            rest = ranked[1:] + live_fallback
        elif live_fallback:
            chosen, rest = live_fallback[0], live_fallback[1:]
            missing = [n for n in _resolve_all(rule.source, self) if n in decision.skipped]
            mentioned.update(missing)
            why_not = [f"{n} {decision.skipped[n]}" for n in missing] or [self._unmatched(rule.source)]
            notes.append("fallback: " + "; ".join(why_not))
        else:
            chosen, rest = cooled[0], []
            notes.append(f"every allowed source is cooling down; trying {chosen} anyway")
        mentioned.add(chosen)
        rest = rest + [n for n in cooled if n != chosen]
        if task == "sensitive":
            notes.append("local only, never sent to a hosted source")
        elif private_only:
            notes.append("private only (review_private)")
        if rule.origin != "default":
            notes.append(f"by {rule.origin}")
        for name, what in decision.skipped.items():
            if what != "not private" and name not in mentioned:
                notes.append(f"skipped {name}: {what}")
        reason = " · ".join([f"{task}: {why}", *notes])
        decision.route = _make_route(chosen, reason, task, rest, self._budget_warnings(chosen, now))
        return decision

    # -- helpers -----------------------------------------------------------------------

    def _health(self, name: str) -> Health:
        return self.health.get(name) or Health()

    def _resolve(self, selectors: Iterable[str]) -> list[str]:
        return _resolve_all(selectors, self)

    def _unmatched(self, selectors: Sequence[str]) -> str:
        """Why selectors that matched no source matched none, never mistaking a tag for a source's name."""
        parts = []
        for selector in selectors:
            if not selector.startswith("tag:"):
                parts.append(f"no source named '{selector}'")
                continue
            tags = selector[4:].split("+")
            text = "no source tagged " + " + ".join(f"'{tag}'" for tag in tags)
            for tag in tags:
                if tag in self.sources:
                    text += f" (the source named '{tag}' is tagged {', '.join(self.sources[tag].tags) or 'nothing'})"
            parts.append(text)
        return " or ".join(parts)

    def _predict(self, name: str, expected: int) -> float:
        """Seconds ``name`` should take for ``expected`` tokens: measured figures where known, else its tags' priors."""
        spec = self.sources[name]
        ttft, tps = _prior(spec)
        stats = self.ledger.latency(candidate(name, self.served.get(name), spec.model))
        if stats is not None and stats.ttft_s is not None:
            ttft = stats.ttft_s
        if stats is not None and stats.decode_tps and stats.decode_tps > 0:
            tps = stats.decode_tps
        return ttft + expected / tps

    def _spend(self, name: str, now: float) -> tuple[float, float] | None:
        spec = self.sources.get(name)
        budget = spec.monthly_budget if spec is not None else None
        if not budget:
            return None
        return self.ledger.spend_this_month(name, now), float(budget)

    def _over_budget(self, name: str, now: float) -> str | None:
        spend = self._spend(name, now)
        if spend and spend[0] >= spend[1]:
            return f"over its monthly budget (${spend[0]:.2f} of ${spend[1]:.2f})"
        return None

    def _budget_warnings(self, name: str, now: float) -> list[str]:
        spend = self._spend(name, now)
        if not spend:
            return []
        used, budget = spend
        if used >= budget:
            return [f"{name} is over its monthly budget: ${used:.2f} of ${budget:.2f}"]
        if used >= self.settings.budget_warn * budget:
            return [f"{name} has used {used / budget:.0%} of its ${budget:.2f} monthly budget"]
        return []


def hedge_routes(route: Route, sources: Mapping[str, SourceConfig], *, sensitive: bool) -> list[Route]:
    """The routes auto mode hedges ``route``'s request across: its first :data:`HEDGE_WIDTH` sources (the
    source, then its fallbacks), for a task in :data:`HEDGED_TASKS` only; ``[]`` means no hedge. The last
    one keeps the fallbacks left after them, so a hedged request is answered whenever the route alone
    would have been.

    A hedge never sends a copy of a ``sensitive`` request (something in the prompt, the attachments or the
    earlier messages looks sensitive) to a source that is not private: then only private sources are
    candidates. The user's per-request override of that rule does not reach here: it lets the one request
    they chose go, not copies a hedge adds.
    """
    if route.task not in HEDGED_TASKS:
        return []
    names = [name for name in dict.fromkeys([route.source, *route.fallbacks]) if name in sources]
    if sensitive:
        names = [name for name in names if sources[name].is_private]
    chosen, rest = names[:HEDGE_WIDTH], names[HEDGE_WIDTH:]
    if len(chosen) < 2:
        return []
    reason = f"{route.reason} · hedged: {' and '.join(chosen)}"
    return [_make_route(name, reason, route.task, rest if index == len(chosen) - 1 else [],
                        route.warnings if name == route.source else [])
            for index, name in enumerate(chosen)]


def _resolve_all(selectors: Iterable[str], router: Router) -> list[str]:
    """Source names for selectors, in order, without repeats: a name, or ``tag:A`` / ``tag:A+B``."""
    out: list[str] = []
    for selector in selectors:
        if selector.startswith("tag:"):
            wanted = set(selector[4:].split("+"))
            names = [n for n, spec in router.sources.items() if wanted <= set(spec.tags)]
        else:
            names = [selector] if selector in router.sources else []
        out.extend(n for n in names if n not in out)
    return out


def _prior(spec: SourceConfig) -> tuple[float, float]:
    tags = set(spec.tags)
    if "local" in tags:
        return PRIORS["local"]
    if "fast" in tags:
        return PRIORS["fast"]
    return PRIORS["hosted"]


def _expected_tokens(task: str, max_tokens: int | None) -> int:
    expected = EXPECTED_TOKENS.get(task, 400)
    if max_tokens is None:
        return expected
    return max_tokens if task == "long" else min(max_tokens, expected)


def _secs(value: float) -> str:
    return f"{value:.2f} s" if value < 10 else f"{value:.0f} s"


def _make_route(source: str, reason: str, task: str, fallbacks: list[str], warnings: list[str]) -> Route:
    return Route(source, reason, task, list(fallbacks), list(warnings))


# --------------------------------------------------------------------------------------
# Text for the status bar and --json
# --------------------------------------------------------------------------------------


def status_text(route: Route, selected: str = "auto", model: str | None = None) -> str:
    """The status bar's routing line: ``auto → local · completion: code ends mid-statement; model 0.97``
    (with ``model``: ``auto → local · qwen2.5-coder:7b · completion: …``)."""
    if selected != "auto":
        return f"{route.source} · chosen by hand"
    where = f"{route.source} · {model}" if model else route.source
    return f"auto → {where} · {route.reason}"


def fallback_text(from_source: str, to_source: str, error: SourceError, to_model: str | None = None) -> str:
    """``fast → regular: 429 rate limited``, for the transcript and the status bar. A source whose server is not
    running was never asked, so the line names that reason at the source it belongs to, and where the request
    went instead: ``local: Ollama is not running → embedded (gemma-3-270m-q4_k_m)``."""
    if isinstance(error, NotRunning):
        return f"{from_source}: {error.label} → {to_source}" + (f" ({to_model})" if to_model else "")
    return f"{from_source} → {to_source}: {error.label}"


def hedge_text(hedged: Hedged) -> str:
    """``hedged: fast won (first token 80 ms; local none yet)``, for the status bar and ``ask``."""
    if hedged.winner is None:
        return f"hedged across {' and '.join(hedged.sources)}: none answered"
    figures = []
    for name in (hedged.winner, *(name for name in hedged.sources if name != hedged.winner)):
        ttft = hedged.first_tokens.get(name)
        figure = "none yet" if ttft is None else f"{milliseconds(ttft)} ms"
        figures.append(f"first token {figure}" if name == hedged.winner else f"{name} {figure}")
    return f"hedged: {hedged.winner} won ({'; '.join(figures)})"

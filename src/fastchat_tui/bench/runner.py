"""The bench runner: pure orchestration over a :class:`~fastchat_tui.session.Session`.

Each request is an ordinary ``Session.send(..., source=NAME, remember=False)``, so every
figure is the meter's (:mod:`fastchat_tui.meter`). Nothing here recomputes a figure.

Method (as in vLLM's ``bench serve``, GenAI-Perf and LLMPerf):

* one warm-up per source first (a batch of ``concurrency`` requests, so every
  connection the measured runs use is already open); warm-ups are not counted;
* the measured runs are interleaved by round -- A B A B ... -- so drift of the
  network or of the machine hits every source alike;
* with ``concurrency`` C, each run of a source is a batch of C requests sent at
  once; per-request figures come from each request, and the batch's aggregate
  rate is its exact output tokens / the batch's wall time (first send to last
  end);
* a request that fails is reported with its error kind and is never averaged
  in; a batch with a failure has no aggregate rate;
* after an error that auto mode's health policy says every request would meet
  alike (:func:`~fastchat_tui.router.refused_every_time`: a rejected key), a source
  gets no more requests (the table and the progress lines say it once);
* each figure is summarised as median, min and max over the successful runs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from fastchat_tui.attachment import Attachment
from fastchat_tui.bench.results import Batch, BenchResult, Progress, Run
from fastchat_tui.config import Config
from fastchat_tui.meter import Reading
from fastchat_tui.router import refused_every_time
from fastchat_tui.session import Router, Session

DEFAULT_PROMPT = (
    "Explain, in about 400 words, how a hash map works: hashing, buckets, collisions, "
    "resizing and the cost of each operation. Use plain prose."
)
DEFAULT_REPEAT = 5
DEFAULT_MAX_TOKENS = 512

ProgressCallback = Callable[[Progress], None]


def schedule(sources: list[str], repeat: int, warmup: bool = True) -> list[tuple[str, int]]:
    """The order of batches: warm-ups (round -1) A B, then rounds A B A B ... (never all of A first)."""
    order = [(name, -1) for name in sources] if warmup else []
    order += [(name, round_) for round_ in range(repeat) for name in sources]
    return order


async def run_bench(
    session: Session,
    sources: list[str],
    *,
    prompt: str = DEFAULT_PROMPT,
    prompt_file: Attachment | None = None,
    repeat: int = DEFAULT_REPEAT,
    max_tokens: int | None = DEFAULT_MAX_TOKENS,
    concurrency: int = 1,
    warmup: bool = True,
    on_progress: ProgressCallback | None = None,
) -> BenchResult:
    """Run the bench over ``session``'s sources and return every run and a summary per source.

    ``prompt_file``: the file ``prompt`` was read from, sent along as an attachment so the data boundary reads its
    name too (the request itself is the prompt alone).

    Cancelling (Ctrl+C, Esc in the TUI) propagates; the runs so far stay in the result
    object handed to ``on_progress``, but no partial :class:`BenchResult` is returned.
    """
    if repeat < 1:
        raise ValueError("repeat must be at least 1")
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    unknown = [name for name in sources if name not in session.config.sources]
    if unknown:
        raise ValueError(f"no source named {', '.join(map(repr, unknown))} (configured: {', '.join(session.config.sources)})")
    result = BenchResult(list(sources), prompt, repeat, max_tokens, concurrency)
    plan = schedule(result.sources, repeat, warmup)
    step = 0
    while step < len(plan):
        name, round_ = plan[step]
        step += 1
        phase = "warmup" if round_ < 0 else "run"
        if on_progress:
            on_progress(Progress(name, phase, round_ + 1, repeat, step, len(plan)))
        runs = await _batch(session, name, round_, prompt, prompt_file, max_tokens, concurrency)
        result.runs.extend(runs)
        if round_ >= 0:
            result.batches.append(Batch(name, round_, runs))
        if any(refused_every_time(run.error_kind) for run in runs):
            plan = plan[:step] + [batch for batch in plan[step:] if batch[0] != name]
        if on_progress:
            on_progress(Progress(name, phase, round_ + 1, repeat, step, len(plan), tuple(runs)))
    result.finished_at = time.time()
    result.summarise()
    return result


async def _batch(session: Session, name: str, round_: int, prompt: str, prompt_file: Attachment | None,
                 max_tokens: int | None, concurrency: int) -> list[Run]:
    """``concurrency`` requests to one source at once, each through ``Session.send``."""

    async def one(slot: int) -> Run:
        turn = await session.send(prompt, source=name, max_tokens=max_tokens, remember=False,
                                  attachments=(prompt_file,) if prompt_file else ())
        return Run.from_turn(name, round_, slot, turn)

    if concurrency == 1:
        return [await one(0)]
    return list(await asyncio.gather(*(one(slot) for slot in range(concurrency))))


def bench_session(config: Config) -> Session:
    """A session for ``fastchat bench``: the same sources, keys and meter as chat, but no history recorder
    (runs are not chat turns; the bench saves its own summary) and the default router (every request
    names its source). The TUI benches on the chat's session instead (:meth:`Session.detached`)."""
    return Session(config)


def feed_router(router: Router, result: BenchResult) -> list[str]:
    """Give each source's medians to the router's latency statistics (:meth:`Router.observe`); returns the
    sources fed.

    The reading is marked inexact so the router does not book spend for it: the runs themselves were real
    requests, but a median is not a reply.
    """
    fed: list[str] = []
    for name in result.sources:
        summary = result.summaries.get(name)
        if summary is None or (ttft := summary.stat("ttft_s")) is None:
            continue
        decode, e2e, total = summary.stat("decode_tps"), summary.stat("e2e_tps"), summary.stat("total_s")
        tokens = summary.stat("output_tokens")
        router.observe(name, Reading(
            ttft_s=ttft.median, live_tps=None, decode_tps=decode.median if decode else None,
            e2e_tps=e2e.median if e2e else None, output_tokens=int(tokens.median) if tokens else 0,
            tokens_exact=False, total_s=total.median if total else None, server_tps=None, input_tokens=None,
        ))
        fed.append(name)
    return fed

"""What the hosted presets charge per model, so ``usage``, the router's budgets and the status line show real costs.

USD per million input and output tokens, standard (not batch, not cached) rates, each with the page it came
from and the date that page was read (by the page itself or by the source that quoted it, as noted). Prices
change: a source's ``price_in``/``price_out`` in the config win over these (:func:`fastchat_tui.pricing.rates`).
A model whose price could not be found is left out, and so is unpriced (``–``), never guessed. Local sources
(Ollama, embedded) are in no table: they cost nothing, and show no cost.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Price:
    input: float
    """USD per million input tokens."""
    output: float
    """USD per million output tokens."""


PRICES: dict[str, dict[str, Price]] = {
    "cerebras": {
        # https://inference-docs.cerebras.ai/models/qwen-3-32b ("Input $0.40 / M tokens, Output $0.80 / M tokens",
        # exploration pricing); the stored page shows no date: read 2026-12-02
        "qwen-3-32b": Price(0.40, 0.80),
        # https://inference-docs.cerebras.ai/models/openai-oss ("Input $0.35 / M tokens, Output $0.75 / M tokens");
        # the stored page shows no date: read 2026-12-02
        "gpt-oss-120b": Price(0.35, 0.75),
    },
    "groq": {
        # https://groq.com/pricing, as quoted with a screenshot in builderz-labs/mission-control PR #736 on 2026-06-08
        "llama-3.1-8b-instant": Price(0.05, 0.08),
        "llama-3.3-70b-versatile": Price(0.59, 0.79),
        # https://groq.com/pricing, as quoted in BerriAI/litellm issue #19309 on 2026-01-18; the same in
        # https://console.groq.com/docs/models as quoted in pydantic/genai-prices issue #701 on 2026-09-17
        "openai/gpt-oss-120b": Price(0.15, 0.60),
        "openai/gpt-oss-20b": Price(0.075, 0.30),
    },
    "openai": {
        # https://platform.openai.com/docs/pricing ("OpenAI model pricing"), as checked by tokenmath.io on 2026-06-21
        # (https://tokenmath.io/openai-api-pricing-explained)
        "gpt-4.1": Price(2.00, 8.00),
        "gpt-4.1-mini": Price(0.40, 1.60),
        # https://developers.openai.com/api/docs/pricing, as listed by https://chatgptpricing-akr.pages.dev/api-pricing
        # (no date shown: read 2026-12-02); gpt-4o and gpt-4o-mini also so in platform.openai.com/docs/pricing as
        # quoted by https://aimodelcalc.pages.dev/guides/openai-api-pricing.html in May 2026
        "gpt-5": Price(1.25, 10.00),
        "gpt-5-mini": Price(0.25, 2.00),
        "gpt-4o": Price(2.50, 10.00),
        "gpt-4o-mini": Price(0.15, 0.60),
    },
    "openrouter": {
        # https://openrouter.ai/openai/gpt-4.1-mini ("$0.40/M input tokens, $1.60/M output tokens"), as shown by
        # https://www.llmreference.com/model/gpt-4.1-mini/openrouter, refreshed 2026-05-11
        "openai/gpt-4.1-mini": Price(0.40, 1.60),
        # https://openrouter.ai/models/openai/gpt-4o-mini ("$0.15/M input tokens, $0.6/M output tokens"); the
        # stored page shows no date: read 2026-12-02
        "openai/gpt-4o-mini": Price(0.15, 0.60),
    },
}
"""Each hosted preset's models and their prices (:data:`fastchat_tui.presets.PRESETS` names the presets)."""


def price_of(preset: str | None, model: str) -> Price | None:
    """The table's price of ``model`` at ``preset``, or ``None`` when it has none."""
    return PRICES.get(preset or "", {}).get(model)

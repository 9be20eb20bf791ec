"""What a reply costs, and how a sum of money is shown.

One module so that the recorder (which stores a reply's cost), the router (which counts
spend against a budget) and ``fastchat usage`` price and print alike.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from fastchat_tui.config import SourceConfig
from fastchat_tui.presets import PRESETS
from fastchat_tui.prices import Price, price_of


def rates(source: SourceConfig, model: str | None = None) -> Price | None:
    """The source's prices (USD per million tokens) for ``model`` (``None``: its configured one), or ``None``.

    The config's ``price_in``/``price_out`` win (one of them alone prices the other side at nothing, as
    written); else :data:`fastchat_tui.prices.PRICES` for the preset the source was made from, or whose host it
    points at (a source written by hand for ``api.groq.com`` is priced as Groq's). A local source has none.
    """
    if source.price_in is not None or source.price_out is not None:
        return Price(source.price_in or 0.0, source.price_out or 0.0)
    return price_of(source.preset or _preset_at(source.base_url), model or source.model)


def cost(source: SourceConfig | None, input_tokens: int | None, output_tokens: int | None,
         model: str | None = None) -> float | None:
    """USD for one reply of ``model`` (``None``: the source's configured one) from :func:`rates`, or ``None`` if
    unpriced.

    Callers price replies with exact token counts, and streams stopped before their usage came (cancelled,
    cut: billed all the same) on the meter's estimates, as the router's budgets count (the recorder's rule).
    """
    price = rates(source, model) if source is not None else None
    if price is None:
        return None
    return ((input_tokens or 0) * price.input + (output_tokens or 0) * price.output) / 1_000_000


def _preset_at(base_url: str) -> str | None:
    """The hosted preset whose API is at ``base_url``'s host, if any."""
    host = urlsplit(base_url).hostname
    return next((name for name, preset in PRESETS.items()
                 if preset.key_env and host and urlsplit(preset.base_url).hostname == host), None)


def money(usd: float) -> str:
    """``$1.23``, or up to six decimals for the small sums one reply usually costs."""
    return f"${usd:,.2f}" if usd >= 1 else f"${usd:.6f}".rstrip("0").rstrip(".") if usd else "$0"

"""What a reply costs, and how a sum of money is shown.

One module so that the recorder (which stores a reply's cost), the router (which counts
spend against a budget) and ``fastchat usage`` price and print alike.
"""

from __future__ import annotations

from fastchat_tui.config import SourceConfig


def cost(source: SourceConfig | None, input_tokens: int | None, output_tokens: int | None) -> float | None:
    """USD for one reply from the source's prices (USD per million tokens), or ``None`` if unpriced.

    Callers price replies with exact token counts, and streams stopped before their usage came (cancelled,
    cut: billed all the same) on the meter's estimates, as the router's budgets count (the recorder's rule).
    """
    if source is None or (source.price_in is None and source.price_out is None):
        return None
    return ((input_tokens or 0) * (source.price_in or 0.0) + (output_tokens or 0) * (source.price_out or 0.0)) / 1_000_000


def money(usd: float) -> str:
    """``$1.23``, or up to six decimals for the small sums one reply usually costs."""
    return f"${usd:,.2f}" if usd >= 1 else f"${usd:.6f}".rstrip("0").rstrip(".") if usd else "$0"

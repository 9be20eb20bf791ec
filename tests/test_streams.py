"""`Merge` hands on a burst of items a few milliseconds at a time: the other tasks of the loop run meanwhile."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import aclosing

from fastchat_tui.streams import Merge


async def burst(count: int) -> AsyncGenerator[int, None]:
    """Items all ready at once, as the tokens of a read that brought a hundred of them."""
    for item in range(count):
        yield item


async def test_a_burst_from_a_stream_lets_the_other_tasks_run_while_it_is_handed_on() -> None:
    ticks: list[int] = []
    handed = 0

    async def ticker() -> None:
        while True:
            ticks.append(handed)
            await asyncio.sleep(0)

    merge: Merge[int, int] = Merge([lambda: burst(200_000)], lambda index, item: item)
    task = asyncio.get_running_loop().create_task(ticker())
    await asyncio.sleep(0)
    async with aclosing(merge):
        async for _item in merge:
            handed += 1
    task.cancel()
    assert handed == 200_000
    during = [tick for tick in ticks if 0 < tick < handed]
    assert during, "the burst went through in one step"

"""A loopback OpenAI server that notices at once when a client goes away, as inference servers stop generating.

The servers of :mod:`tests.servers` find a closed connection only when they next write, so a request still
waiting for its first token (the loser of a hedged race) looks alive until then. :class:`WatchfulOpenAIServer`
watches the socket while it answers: when the client closes it, the time goes to ``disconnects[n]`` (``n``
the request's number), the response stops and its outcome is ``client_gone``. An HTTP/1.1 client sends
nothing while its response streams, so any read that returns is the client leaving.

Run one in its own process (benchmarks), like :mod:`tests.servers`; each record also has ``t_disconnect``::

    python -m tests.race_servers --tokens-file reply.json --rate 5000 --ttft 0.05 --record sends.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from typing import Any

from tests.servers import OpenAIServer, RecordedRequest, Script, _Response, perf_counter, serve_until_signalled

__all__ = ["WatchfulOpenAIServer"]


class WatchfulOpenAIServer(OpenAIServer):
    """An :class:`~tests.servers.OpenAIServer` that sees a client leave mid-response the moment it does."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.disconnects: dict[int, float] = {}
        """Request number -> ``perf_counter()`` when its client closed the connection during the response."""
        self._readers: dict[int, asyncio.StreamReader] = {}

    async def _read_request(self, reader: asyncio.StreamReader, conn_id: int) -> RecordedRequest | None:
        self._readers[conn_id] = reader
        return await super()._read_request(reader, conn_id)

    async def handle(self, req: RecordedRequest, resp: _Response) -> None:
        answer = asyncio.ensure_future(super().handle(req, resp))
        watch = asyncio.ensure_future(self._readers[req.conn_id].read(1))
        await asyncio.wait({answer, watch}, return_when=asyncio.FIRST_COMPLETED)
        if not watch.done():
            watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watch  # the reader serves the next request on this connection
            answer.result()  # raises what ended the response early (a scripted cut, a failed write)
            return
        self.disconnects[req.n] = perf_counter()
        with contextlib.suppress(Exception):
            watch.result()
        answer.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await answer
        raise ConnectionResetError("the client closed the connection")

    def _record(self, req: RecordedRequest) -> None:
        if self.record_path:
            with open(self.record_path, "a", encoding="utf-8") as f:
                f.write(json.dumps({**req.summary(), "t_disconnect": self.disconnects.get(req.n)}) + "\n")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.race_servers", description=__doc__.split("\n")[0])
    parser.add_argument("--tokens-file", required=True, help="a .json list of token strings")
    parser.add_argument("--rate", type=float, default=None, help="tokens per second (default: as fast as possible)")
    parser.add_argument("--ttft", type=float, default=0.0, help="seconds before the first token")
    parser.add_argument("--model", default="bench-model")
    parser.add_argument("--record", help="append one JSON line per finished request to this file")
    args = parser.parse_args(argv)
    with open(args.tokens_file, encoding="utf-8") as f:
        tokens = json.load(f)
    script = Script(tokens=tokens, ttft_s=args.ttft, rate_tps=args.rate)
    serve_until_signalled(WatchfulOpenAIServer(default=script, models=[args.model], record_path=args.record))


if __name__ == "__main__":
    main(sys.argv[1:])

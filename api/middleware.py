"""Request body size (413) and per-request time (504) limits, as plain ASGI middleware.

The time limit stops the work too, not only the answer: each request runs under a
:class:`graph.deadline.Deadline` that its worker threads inherit, stopped when the limit
fires (or the request is cancelled), so the query layer gives the work up at its next
check and a Neo4j query ends on the server at the deadline.

``/export/...`` has its own time limit (``export_timeout_s``): a whole-graph export streams
for as long as the graph takes to read, far past a query's limit."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graph.deadline import Deadline, bounded

log = logging.getLogger(__name__)

#: set in a request's ASGI scope once it starts a write (api.graphql.context.Context.writing)
WRITE_UNDER_WAY = "citegraph.write_under_way"
#: the paths that run under the export time limit
EXPORT_PREFIX = "/export/"


def error_body(message: str, code: str) -> bytes:
    """A GraphQL-shaped error body, for answers given outside GraphQL execution."""
    return json.dumps({"errors": [{"message": message, "extensions": {"code": code}}]}).encode()


class LimitsMiddleware:
    """Request body size (413) and per-request time (504), as plain ASGI."""

    def __init__(
        self, app: ASGIApp, max_body_bytes: int, timeout_s: float,
        export_timeout_s: float | None = None,
    ) -> None:
        self.app = app
        self.max_body = max_body_bytes
        self.timeout = timeout_s
        self.export_timeout = timeout_s if export_timeout_s is None else export_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body:
            await self._reply(send, 413, self._too_large())
            return
        seen = 0
        started = False
        exporting = str(scope.get("path", "")).startswith(EXPORT_PREFIX)
        timeout = self.export_timeout if exporting else self.timeout

        async def limited_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body:
                    raise _BodyTooLargeError
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        # the task, and every worker thread it starts, inherits the deadline (context)
        limit = Deadline(timeout)
        with bounded(limit):
            task = asyncio.ensure_future(self.app(scope, limited_receive, tracking_send))
        try:
            done, _ = await asyncio.wait({task}, timeout=timeout)
            if not done and scope.get(WRITE_UNDER_WAY):
                # a write cannot be stopped once it runs (its thread commits regardless):
                # answer its real outcome, however long, rather than a TIMEOUT that lies
                log.info("write to %s ran past %.1fs; waiting for its outcome",
                         scope.get("path"), timeout)
                await task
            elif not done:
                limit.stop()  # threads computing for it stop at their next check
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
                raise TimeoutError
            else:
                task.result()
        except _BodyTooLargeError:
            if not started:
                await self._reply(send, 413, self._too_large())
        except TimeoutError:
            log.warning("request to %s ran past %.1fs%s", scope.get("path"), timeout,
                        "; its answer is cut off" if started else "")
            if not started and exporting:
                await self._reply(send, 504, error_body(
                    f"the export took longer than {timeout:g} s "
                    "(CITEGRAPH_EXPORT_TIMEOUT_S)", "TIMEOUT",
                ))
            elif not started:
                await self._reply(send, 504, error_body(
                    f"the request took longer than {timeout:g} s "
                    "(CITEGRAPH_REQUEST_TIMEOUT_S); narrow it (depth, limit, first, maxHops)",
                    "TIMEOUT",
                ))
        except RecursionError:
            # e.g. a JSON body nested tens of thousands deep (small enough to pass the size
            # limit): json.loads gives up inside strawberry; that is the client's error
            log.warning("request to %s nested too deeply to parse", scope.get("path"))
            if not started:
                await self._reply(send, 400, error_body(
                    "the request body is nested too deeply to parse", "BAD_REQUEST"
                ))
        finally:
            # answered: whatever still runs for it is computing for nobody (a resolver
            # orphaned when a sibling's error nulled their parent; a cancelled request's
            # threads). A write is not stopped: it runs under no deadline.
            limit.stop()
            if not task.done():  # this request itself was cancelled (shutdown, disconnect)
                task.cancel()

    def _too_large(self) -> bytes:
        return error_body(
            f"request body larger than {self.max_body} bytes (CITEGRAPH_MAX_BODY_BYTES)",
            "PAYLOAD_TOO_LARGE",
        )

    @staticmethod
    async def _reply(send: Send, status: int, body: bytes) -> None:
        await send({
            "type": "http.response.start", "status": status,
            "headers": [(b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode())],
        })
        await send({"type": "http.response.body", "body": body})


class _BodyTooLargeError(Exception):
    pass

"""One around shape on both sides (issue #47 item 1): `async def __call__(call, next)` runs around
requests and notifications, put there by a runtime feature on the dispatch seam, by user middleware
and by a client hook alike; notifications go through the seam too (`wrap_notification`; a version's
unknown notification goes to the features' `notified`, not to a hard-wired module)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from mcp_bindings.runtime.client.seam import OutgoingCall, Send
from mcp_bindings.runtime.memory import connect_in_memory
from mcp_bindings.runtime.middleware.chain import use_middleware
from mcp_bindings.runtime.protocol import custom_methods
from mcp_bindings.runtime.rpc.jsonrpc import Notification
from mcp_bindings.runtime.server.calls import NoticeCall, ServerCall
from mcp_bindings.runtime.server.host import host_for
from mcp_bindings.runtime.server.peer import PeerView
from mcp_bindings.runtime.server.runtime import ServerRuntime
from mcp_bindings.runtime.server.seam import NoticeNext, NoticePlan, Plan, ServerFeature
from tests.support.docs import block
from tests.support.seam import VERSION, client_class, echo_server

pytestmark = pytest.mark.anyio


class Note(BaseModel):
    text: str


POKED = custom_methods.notification("notifications/acme/poked", Note, extension="com.acme/poke")


class Tally:
    """One around, of the one shape: notes `(where, method)` before and after the rest of the chain."""

    def __init__(self, where: str, log: list[tuple[str, str]]) -> None:
        self.where = where
        self.log = log

    async def __call__(self, call: ServerCall | NoticeCall | OutgoingCall, next: Any) -> object:
        self.log.append((self.where, call.method))
        return await next(call)


class Wrapping(ServerFeature):
    """A third-party feature putting an around on tools/call and on every notification a handler takes."""

    def __init__(self, around: Tally) -> None:
        self.around = around

    def wrap(self, runtime: ServerRuntime, plan: Plan, view: PeerView) -> None:
        if plan.spec.method == "tools/call":
            plan.wrap(self.around)

    def wrap_notification(self, runtime: ServerRuntime, plan: NoticePlan, view: PeerView) -> None:
        plan.wrap(self.around)


class Catching(ServerFeature):
    """Takes the notifications of the version no one registered (`notified`)."""

    def __init__(self) -> None:
        self.caught: list[str] = []

    async def notified(self, runtime: ServerRuntime, notification: Notification, view: PeerView | None) -> bool:
        if notification.method != "notifications/acme/unheard":
            return False
        self.caught.append(notification.method)
        return True


async def _until(check: Any) -> None:
    with anyio.fail_after(5):
        while not check():
            await anyio.sleep(0.01)


async def test_one_around_runs_as_a_feature_a_middleware_and_a_client_hook() -> None:
    server = echo_server()
    log: list[tuple[str, str]] = []
    host_for(server).use(Wrapping(Tally("feature", log)))
    use_middleware(server, Tally("middleware", log))
    hook = Tally("client", log)
    with anyio.fail_after(10):
        async with connect_in_memory(server, client_class(), protocol_version=VERSION, hooks=[hook]) as client:
            await client.list_tools()
            log.clear()
            result = await client.call_tool(name="echo", arguments={"text": "hi"})
    assert result.content[0].text == "hi"
    # outermost first: the client's hook, then (the server) the user's middleware, then the feature
    assert log == [("client", "tools/call"), ("middleware", "tools/call"), ("feature", "tools/call")]


async def test_notifications_go_through_the_seam() -> None:
    server = echo_server()
    log: list[tuple[str, str]] = []
    poked: list[str] = []

    async def on_poked(params: Note, ctx: Any) -> None:
        poked.append(params.text)

    server.register_method(POKED, on_poked)
    catching = Catching()
    host_for(server).use(Wrapping(Tally("feature", log)))
    host_for(server).use(catching)
    with anyio.fail_after(10):
        async with connect_in_memory(server, client_class(), protocol_version=VERSION) as client:
            await client.session.session.notify("notifications/roots/list_changed", None)  # to the stub's handler
            await client.session.notify_extension(POKED, {"text": "hi"})  # a custom one
            await client.session.session.notify("notifications/acme/unheard", None)  # nobody's: a feature's
            await _until(lambda: server.heard and poked and catching.caught)
    assert server.heard == ["roots"]
    assert poked == ["hi"]
    assert log == [("feature", "notifications/roots/list_changed"), ("feature", "notifications/acme/poked")]
    assert catching.caught == ["notifications/acme/unheard"]


async def test_a_middleware_naming_a_notification_runs_around_it_and_may_change_its_params() -> None:
    server = echo_server()
    seen: list[str] = []
    poked: list[str] = []

    async def on_poked(params: Note, ctx: Any) -> None:
        poked.append(params.text)

    async def shout(call: NoticeCall, next: NoticeNext) -> object:
        seen.append(call.method)
        call.params = Note(text=call.params.text.upper())
        return await next(call)

    shout.methods = {POKED.method}  # type: ignore[attr-defined]
    server.register_method(POKED, on_poked)
    use_middleware(server, shout)  # type: ignore[arg-type]  # a notification's call is a NoticeCall
    with anyio.fail_after(10):
        async with connect_in_memory(server, client_class(), protocol_version=VERSION) as client:
            await client.call_tool(name="echo", arguments={"text": "hi"})  # not named: not run around
            await client.session.notify_extension(POKED, {"text": "hi"})
            await _until(lambda: poked)
    assert seen == [POKED.method]
    assert poked == ["HI"]


async def test_a_client_around_with_methods_runs_for_those_only() -> None:
    server = echo_server()
    seen: list[str] = []

    async def only_calls(call: OutgoingCall, next: Send) -> object:
        seen.append(call.method)
        return await next(call)

    only_calls.methods = ("tools/call",)  # type: ignore[attr-defined]
    with anyio.fail_after(10):
        async with connect_in_memory(server, client_class(), protocol_version=VERSION, hooks=[only_calls]) as client:
            await client.list_tools()
            await client.call_tool(name="echo", arguments={"text": "hi"})
    assert seen == ["tools/call"]


def test_the_architecture_docs_plug_in_runs(capsys: pytest.CaptureFixture[str]) -> None:
    code = block("A plug-in on the dispatch seam: an around on every tools/call")
    exec(compile(code, "docs/architecture.md", "exec"), {"__name__": "docs_example"})  # noqa: S102 - our own docs
    assert capsys.readouterr().out.strip() == "['client tools/call', 'feature tools/call', 'middleware tools/call']"


async def test_a_client_around_naming_a_notification_runs_around_its_sending() -> None:
    server = echo_server()
    sent: list[tuple[str, object]] = []

    async def progress_only(call: OutgoingCall, next: Send) -> object:
        sent.append((call.method, call.params))
        return await next(call)

    progress_only.methods = ("notifications/progress",)  # type: ignore[attr-defined]
    hooks = [progress_only]
    with anyio.fail_after(10):
        async with connect_in_memory(server, client_class(), protocol_version=VERSION, hooks=hooks) as client:
            await client.call_tool(name="echo", arguments={"text": "hi"})  # a request it does not name
            await client.notify_progress(progress_token="t", progress=1)
            await client.notify_progress(progress_token="t", progress=2)  # the chain kept: built once
    assert [method for method, _ in sent] == ["notifications/progress"] * 2
    assert sent[1][1] == {"progress": 2, "progressToken": "t"}

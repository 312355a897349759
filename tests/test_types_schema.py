"""The models build messages the official schemas accept, in every simulated revision.

For 2025-06-18, 2025-11-25 and 2026-07-28 this builds at least one instance of every request,
notification and result type the revision's schema lists in its unions (``ClientRequest``,
``ServerRequest``/``InputRequest``, ``ClientNotification``, ``ServerNotification``, ``ClientResult``,
``ServerResult``), plus 2026-07-28's typed responses and error types and the tasks extension, and checks:

1. the object is valid against the schema's definition of that type name (shaped with or without the
   JSON-RPC envelope as that revision's definition wants it: ``envelopes.as_schema_type``);
2. the full JSON-RPC message (``envelopes.to_request`` ...) is a valid ``JSONRPCMessage``;
3. ``parse_request``/``parse_notification``/``parse_result`` pick the same model back from the method.

A revision whose union names a type with no sample here fails loudly, so a new type cannot slip by.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from mcp_sim.protocol import envelopes, ext_tasks
from mcp_sim.protocol import types as T
from mcp_sim.protocol.base import MCPModel
from mcp_sim.protocol.revisions import REVISIONS
from mcp_sim.protocol.schema import (
    definition_names,
    definitions_key,
    find_spec_dir,
    load_schema,
    schema_errors,
)

NO_SPEC = "official MCP schemas not found (set MCP_SIM_SPEC_DIR)"
MODERN = "2026-07-28"
VERSIONS = ("2025-06-18", "2025-11-25", MODERN)

Samples = list[tuple[str, MCPModel]]
"""(label, model) pairs: one or more instances of one spec type."""


# --- small building blocks --------------------------------------------------------------------------

IMPL = T.Implementation(name="mcp-sim", version="1.0.0")


def _after(rev: str, first: str) -> bool:
    return rev >= first


def req_meta(rev: str) -> T.RequestMetaObject | None:
    """2026-07-28 requests must say their version and the client's capabilities."""
    if rev != MODERN:
        return None
    return T.RequestMetaObject(protocolVersion=MODERN, clientCapabilities=T.ClientCapabilities(), clientInfo=IMPL)


def meta_kw(rev: str) -> dict[str, Any]:
    meta = req_meta(rev)
    return {} if meta is None else {"meta": meta}


def result_kw(rev: str, cacheable: bool = False) -> dict[str, Any]:
    """2026-07-28 results carry ``resultType``; cacheable ones ``ttlMs``/``cacheScope`` too."""
    if rev != MODERN:
        return {}
    kw: dict[str, Any] = {"resultType": "complete"}
    if cacheable:
        kw.update(ttlMs=60_000, cacheScope="public")
    return kw


def tool(rev: str) -> T.Tool:
    kw: dict[str, Any] = {}
    if _after(rev, "2025-11-25"):
        kw["icons"] = [T.Icon(src="https://example.com/add.png", mimeType="image/png", sizes=["48x48"])]
    if rev == "2025-11-25":
        kw["execution"] = T.ToolExecution(taskSupport="optional")
    return T.Tool(
        name="add", title="Add", description="Add two numbers",
        inputSchema={"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                     "required": ["a", "b"]},
        outputSchema={"type": "object", "properties": {"sum": {"type": "number"}}},
        annotations=T.ToolAnnotations(readOnlyHint=True, idempotentHint=True), **kw)


def task(status: T.TaskStatus = "working") -> T.Task:
    return T.Task(taskId="task-1", status=status, createdAt="2025-11-25T10:00:00Z",
                  lastUpdatedAt="2025-11-25T10:00:01Z", ttl=60_000, pollInterval=1000)


def sampling_params(rev: str) -> T.CreateMessageRequestParams:
    kw: dict[str, Any] = {}
    if _after(rev, "2025-11-25"):
        kw.update(tools=[tool(rev)], toolChoice=T.ToolChoice(mode="auto"))
    return T.CreateMessageRequestParams(
        messages=[T.SamplingMessage(role="user", content=T.TextContent(text="What is 2 + 3?"))],
        modelPreferences=T.ModelPreferences(hints=[T.ModelHint(name="claude")], speedPriority=0.5),
        systemPrompt="Be brief.", maxTokens=100, temperature=0.2, **kw)


def form_fields(rev: str) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "name": T.StringSchema(title="Name", minLength=1),
        "age": T.NumberSchema(type="integer", minimum=0),
        "subscribe": T.BooleanSchema(default=False),
        "color": T.LegacyTitledEnumSchema(enum=["r", "g"], enumNames=["Red", "Green"]),
    }
    if _after(rev, "2025-11-25"):
        option = [T.EnumOption(const="r", title="Red"), T.EnumOption(const="g", title="Green")]
        fields.update(
            size=T.UntitledSingleSelectEnumSchema(enum=["S", "M", "L"], default="M"),
            shade=T.TitledSingleSelectEnumSchema(oneOf=option),
            tags=T.UntitledMultiSelectEnumSchema(items=T.UntitledMultiSelectItems(enum=["a", "b"]), maxItems=2),
            colors=T.TitledMultiSelectEnumSchema(items=T.TitledMultiSelectItems(anyOf=option), default=["r"]),
        )
    return fields


def elicit_form(rev: str) -> T.ElicitRequest:
    return T.ElicitRequest(params=T.ElicitRequestFormParams(
        message="Tell me about you",
        requestedSchema=T.ElicitRequestedSchema(properties=form_fields(rev), required=["name"])))


def elicit_url(rev: str) -> T.ElicitRequest:
    extra = {"elicitationId": "el-1"} if rev == "2025-11-25" else {}
    return T.ElicitRequest(params=T.ElicitRequestURLParams(
        message="Sign in to continue", url="https://example.com/login", **extra))


def all_content() -> list[Any]:
    return [
        T.TextContent(text="5", annotations=T.Annotations(audience=["user"], priority=0.5)),
        T.ImageContent(data="iVBORw0KGgo=", mimeType="image/png"),
        T.AudioContent(data="UklGRg==", mimeType="audio/wav"),
        T.ResourceLink(uri="file:///notes.txt", name="notes", mimeType="text/plain"),
        T.EmbeddedResource(resource=T.TextResourceContents(uri="file:///notes.txt", text="hello")),
    ]


def paginated(rev: str) -> T.PaginatedRequestParams:
    return T.PaginatedRequestParams(cursor="page-2", **meta_kw(rev))


# --- one entry per spec type --------------------------------------------------------------------------

SAMPLES: dict[str, Callable[[str], Samples]] = {
    # requests, client to server
    "InitializeRequest": lambda rev: [("", T.InitializeRequest(params=T.InitializeRequestParams(
        protocolVersion=rev, clientInfo=IMPL,
        capabilities=T.ClientCapabilities(roots=T.RootsCapability(listChanged=True), sampling=T.SamplingCapability(),
                                          elicitation=T.ElicitationCapability()))))],
    "PingRequest": lambda rev: [("", T.PingRequest())],
    "DiscoverRequest": lambda rev: [("", T.DiscoverRequest(params=T.RequestParams(**meta_kw(rev))))],
    "ListResourcesRequest": lambda rev: [("", T.ListResourcesRequest(params=paginated(rev)))],
    "ListResourceTemplatesRequest": lambda rev: [("", T.ListResourceTemplatesRequest(params=paginated(rev)))],
    "ReadResourceRequest": lambda rev: [("", T.ReadResourceRequest(params=T.ReadResourceRequestParams(
        uri="file:///notes.txt", **meta_kw(rev))))],
    "SubscribeRequest": lambda rev: [("", T.SubscribeRequest(params=T.SubscribeRequestParams(uri="file:///a")))],
    "UnsubscribeRequest": lambda rev: [("", T.UnsubscribeRequest(params=T.UnsubscribeRequestParams(uri="file:///a")))],
    "SubscriptionsListenRequest": lambda rev: [("", T.SubscriptionsListenRequest(
        params=T.SubscriptionsListenRequestParams(notifications=T.SubscriptionFilter(
            toolsListChanged=True, resourceSubscriptions=["file:///a"]), **meta_kw(rev))))],
    "ListPromptsRequest": lambda rev: [("", T.ListPromptsRequest(params=paginated(rev)))],
    "GetPromptRequest": lambda rev: [("", T.GetPromptRequest(params=T.GetPromptRequestParams(
        name="greet", arguments={"who": "Ada"}, **meta_kw(rev))))],
    "ListToolsRequest": lambda rev: [("", T.ListToolsRequest(params=paginated(rev)))],
    "CallToolRequest": lambda rev: [
        ("", T.CallToolRequest(params=T.CallToolRequestParams(name="add", arguments={"a": 2, "b": 3},
                                                              **meta_kw(rev)))),
        *([("as-task", T.CallToolRequest(params=T.CallToolRequestParams(
            name="add", arguments={"a": 2, "b": 3}, task=T.TaskMetadata(ttl=60_000))))]
          if rev == "2025-11-25" else []),
        *([("mrtr-retry", T.CallToolRequest(params=T.CallToolRequestParams(
            name="add", arguments={"a": 2, "b": 3}, requestState="opaque-state",
            inputResponses=T.InputResponses({"who": T.ElicitResult(action="accept", content={"name": "Ada"})}),
            **meta_kw(rev))))] if rev == MODERN else []),
    ],
    "CompleteRequest": lambda rev: [("", T.CompleteRequest(params=T.CompleteRequestParams(
        ref=T.PromptReference(name="greet"), argument=T.CompleteArgument(name="who", value="A"),
        context=T.CompleteContext(arguments={"lang": "en"}), **meta_kw(rev)))),
        ("template", T.CompleteRequest(params=T.CompleteRequestParams(
            ref=T.ResourceTemplateReference(uri="file:///{path}"), argument=T.CompleteArgument(name="path", value="n"),
            **meta_kw(rev))))],
    "SetLevelRequest": lambda rev: [("", T.SetLevelRequest(params=T.SetLevelRequestParams(level="warning")))],
    "GetTaskRequest": lambda rev: [("", T.GetTaskRequest(params=T.TaskIdRequestParams(taskId="task-1")))],
    "GetTaskPayloadRequest": lambda rev: [("", T.GetTaskPayloadRequest(params=T.TaskIdRequestParams(taskId="task-1")))],
    "CancelTaskRequest": lambda rev: [("", T.CancelTaskRequest(params=T.TaskIdRequestParams(taskId="task-1")))],
    "ListTasksRequest": lambda rev: [("", T.ListTasksRequest(params=T.PaginatedRequestParams()))],
    # requests, server to client (2026-07-28: only inside inputRequests)
    "CreateMessageRequest": lambda rev: [("", T.CreateMessageRequest(params=sampling_params(rev)))],
    "ListRootsRequest": lambda rev: [("", T.ListRootsRequest())],
    "ElicitRequest": lambda rev: [("form", elicit_form(rev)),
                                  *([("url", elicit_url(rev))] if _after(rev, "2025-11-25") else [])],
    # notifications
    "InitializedNotification": lambda rev: [("", T.InitializedNotification())],
    "CancelledNotification": lambda rev: [("", T.CancelledNotification(
        params=T.CancelledNotificationParams(requestId=7, reason="the user gave up")))],
    "ProgressNotification": lambda rev: [("", T.ProgressNotification(params=T.ProgressNotificationParams(
        progressToken="p-1", progress=50, total=100, message="halfway")))],
    "RootsListChangedNotification": lambda rev: [("", T.RootsListChangedNotification())],
    "ResourceListChangedNotification": lambda rev: [("", T.ResourceListChangedNotification())],
    "ResourceUpdatedNotification": lambda rev: [("", T.ResourceUpdatedNotification(
        params=T.ResourceUpdatedNotificationParams(uri="file:///a")))],
    "PromptListChangedNotification": lambda rev: [("", T.PromptListChangedNotification())],
    "ToolListChangedNotification": lambda rev: [("", T.ToolListChangedNotification(
        **({"params": T.NotificationParams(meta=T.NotificationMetaObject(subscriptionId=1))}
           if rev == MODERN else {})))],
    "LoggingMessageNotification": lambda rev: [("", T.LoggingMessageNotification(
        params=T.LoggingMessageNotificationParams(level="info", logger="db", data={"rows": 3})))],
    "TaskStatusNotification": lambda rev: [("", T.TaskStatusNotification(
        params=T.TaskStatusNotificationParams(**task("completed").to_json())))],
    "ElicitationCompleteNotification": lambda rev: [("", T.ElicitationCompleteNotification(
        params=T.ElicitationCompleteNotificationParams(elicitationId="el-1")))],
    "SubscriptionsAcknowledgedNotification": lambda rev: [("", T.SubscriptionsAcknowledgedNotification(
        params=T.SubscriptionsAcknowledgedNotificationParams(
            meta=T.NotificationMetaObject(subscriptionId="listen-1"),
            notifications=T.SubscriptionFilter(toolsListChanged=True))))],
    # results
    "Result": lambda rev: [("", T.Result(**result_kw(rev)))],
    "PaginatedResult": lambda rev: [("", T.PaginatedResult(nextCursor="page-2", **result_kw(rev)))],
    "CacheableResult": lambda rev: [("", T.CacheableResult(**result_kw(rev, cacheable=True)))],
    "EmptyResult": lambda rev: [("", T.EmptyResult(**result_kw(rev)))],
    "InitializeResult": lambda rev: [("", T.InitializeResult(
        protocolVersion=rev, serverInfo=IMPL, instructions="Call add to add.",
        capabilities=T.ServerCapabilities(
            tools=T.ListChangedCapability(listChanged=True), prompts=T.ListChangedCapability(),
            resources=T.ResourcesCapability(subscribe=True, listChanged=True), logging={}, completions={})))],
    "DiscoverResult": lambda rev: [("", T.DiscoverResult(
        supportedVersions=[MODERN], capabilities=T.ServerCapabilities(tools=T.ListChangedCapability(listChanged=True)),
        instructions="Call add to add.", meta=T.ResultMetaObject(serverInfo=IMPL), **result_kw(rev, cacheable=True)))],
    "InputRequiredResult": lambda rev: [
        ("", T.InputRequiredResult(requestState="opaque", inputRequests=T.InputRequests({
            "who": elicit_form(rev), "url": elicit_url(rev), "llm": T.CreateMessageRequest(params=sampling_params(rev)),
            "roots": T.ListRootsRequest()}))),
        ("state-only", T.InputRequiredResult(requestState="opaque")),
    ],
    "ListResourcesResult": lambda rev: [("", T.ListResourcesResult(resources=[T.Resource(
        uri="file:///notes.txt", name="notes", title="Notes", mimeType="text/plain", size=5,
        annotations=T.Annotations(audience=["user", "assistant"], priority=1))], nextCursor="page-3",
        **result_kw(rev, cacheable=True)))],
    "ListResourceTemplatesResult": lambda rev: [("", T.ListResourceTemplatesResult(resourceTemplates=[
        T.ResourceTemplate(uriTemplate="file:///{path}", name="files", mimeType="text/plain")],
        **result_kw(rev, cacheable=True)))],
    "ReadResourceResult": lambda rev: [("", T.ReadResourceResult(contents=[
        T.TextResourceContents(uri="file:///notes.txt", mimeType="text/plain", text="hello"),
        T.BlobResourceContents(uri="file:///logo.png", mimeType="image/png", blob="iVBORw0KGgo=")],
        **result_kw(rev, cacheable=True)))],
    "SubscriptionsListenResult": lambda rev: [("", T.SubscriptionsListenResult(
        meta=T.SubscriptionsListenResultMetaObject(subscriptionId="listen-1"), **result_kw(rev)))],
    "ListPromptsResult": lambda rev: [("", T.ListPromptsResult(prompts=[T.Prompt(
        name="greet", description="Say hello", arguments=[T.PromptArgument(name="who", required=True)])],
        **result_kw(rev, cacheable=True)))],
    "GetPromptResult": lambda rev: [("", T.GetPromptResult(description="A greeting", messages=[
        T.PromptMessage(role="user", content=T.TextContent(text="Say hello to Ada")),
        T.PromptMessage(role="assistant", content=T.EmbeddedResource(
            resource=T.TextResourceContents(uri="file:///style.md", text="Be warm.")))], **result_kw(rev)))],
    "ListToolsResult": lambda rev: [("", T.ListToolsResult(tools=[tool(rev)], **result_kw(rev, cacheable=True)))],
    "CallToolResult": lambda rev: [
        ("", T.CallToolResult(content=all_content(), structuredContent={"sum": 5}, isError=False, **result_kw(rev))),
        ("tool-error", T.CallToolResult(content=[T.TextContent(text="b must be a number")], isError=True,
                                        **result_kw(rev))),
    ],
    "CompleteResult": lambda rev: [("", T.CompleteResult(
        completion=T.Completion(values=["Ada", "Alan"], total=2, hasMore=False), **result_kw(rev)))],
    "CreateMessageResult": lambda rev: [
        ("", T.CreateMessageResult(role="assistant", content=T.TextContent(text="5"), model="claude",
                                   stopReason="endTurn")),
        *([("tool-use", T.CreateMessageResult(role="assistant", model="claude", stopReason="toolUse", content=[
            T.ToolUseContent(id="call-1", name="add", input={"a": 2, "b": 3})]))]
          if _after(rev, "2025-11-25") else []),
    ],
    "ListRootsResult": lambda rev: [("", T.ListRootsResult(roots=[T.Root(uri="file:///users/ada/project",
                                                                        name="project")]))],
    "ElicitResult": lambda rev: [
        ("accept", T.ElicitResult(action="accept", content={
            "name": "Ada", "age": 36, "subscribe": True,
            **({"tags": ["a", "b"]} if _after(rev, "2025-11-25") else {})})),
        ("decline", T.ElicitResult(action="decline")),
    ],
    "GetTaskResult": lambda rev: [("", T.GetTaskResult(**task().to_json()))],
    "GetTaskPayloadResult": lambda rev: [("", T.GetTaskPayloadResult.model_validate(
        T.CallToolResult(content=[T.TextContent(text="5")]).to_json()))],
    "CancelTaskResult": lambda rev: [("", T.CancelTaskResult(**task("cancelled").to_json()))],
    "ListTasksResult": lambda rev: [("", T.ListTasksResult(tasks=[task(), task("failed")]))],
    "CreateTaskResult": lambda rev: [("", T.CreateTaskResult(task=task()))],
}

_SAMPLING_REPLY = {"role": "user", "content": [
    {"type": "tool_result", "toolUseId": "call-1", "content": [{"type": "text", "text": "5"}]}]}

# 2026-07-28 typed responses and errors (not members of the unions, but messages a peer sends).
EXTRA_2026: dict[str, Callable[[], MCPModel]] = {
    "CallToolResultResponse": lambda: T.CallToolResultResponse(id=1, result=T.InputRequiredResult(requestState="s")),
    "GetPromptResultResponse": lambda: T.GetPromptResultResponse(id=1, result=SAMPLES["GetPromptResult"](MODERN)[0][1]),
    "ReadResourceResultResponse": lambda: T.ReadResourceResultResponse(
        id=1, result=SAMPLES["ReadResourceResult"](MODERN)[0][1]),
    "ListToolsResultResponse": lambda: T.ListToolsResultResponse(id=1, result=SAMPLES["ListToolsResult"](MODERN)[0][1]),
    "ListPromptsResultResponse": lambda: T.ListPromptsResultResponse(
        id=1, result=SAMPLES["ListPromptsResult"](MODERN)[0][1]),
    "ListResourcesResultResponse": lambda: T.ListResourcesResultResponse(
        id=1, result=SAMPLES["ListResourcesResult"](MODERN)[0][1]),
    "ListResourceTemplatesResultResponse": lambda: T.ListResourceTemplatesResultResponse(
        id=1, result=SAMPLES["ListResourceTemplatesResult"](MODERN)[0][1]),
    "CompleteResultResponse": lambda: T.CompleteResultResponse(id=1, result=SAMPLES["CompleteResult"](MODERN)[0][1]),
    "DiscoverResultResponse": lambda: T.DiscoverResultResponse(id=1, result=SAMPLES["DiscoverResult"](MODERN)[0][1]),
    "SubscriptionsListenResultResponse": lambda: T.SubscriptionsListenResultResponse(
        id="listen-1", result=SAMPLES["SubscriptionsListenResult"](MODERN)[0][1]),
    "ParseError": lambda: T.ParseError(message="Parse error"),
    "InvalidRequestError": lambda: T.InvalidRequestError(message="Invalid Request"),
    "MethodNotFoundError": lambda: T.MethodNotFoundError(message="Method not found: ping"),
    "InvalidParamsError": lambda: T.InvalidParamsError(message="Unknown tool: nope"),
    "InternalError": lambda: T.InternalError(message="Internal error", data={"trace": "x"}),
    "HeaderMismatchError": lambda: T.HeaderMismatchError(
        id=1, error=T.HeaderMismatchErrorDetail(message="Mcp-Name does not match params.name")),
    "MissingRequiredClientCapabilityError": lambda: T.MissingRequiredClientCapabilityError(
        id=1, error=T.MissingRequiredClientCapabilityErrorDetail(
            message="Needs elicitation", data=T.MissingRequiredClientCapabilityErrorData(
                requiredCapabilities=T.ClientCapabilities(elicitation=T.ElicitationCapability())))),
    "UnsupportedProtocolVersionError": lambda: T.UnsupportedProtocolVersionError(
        error=T.UnsupportedProtocolVersionErrorDetail(message="Unsupported protocol version",
                                                      data=T.UnsupportedProtocolVersionErrorData(
                                                          requested="1900-01-01", supported=[MODERN]))),
    "SamplingMessage": lambda: T.SamplingMessage.model_validate(_SAMPLING_REPLY),
}

EXTRA_2025_11_25: dict[str, Callable[[], MCPModel]] = {
    "URLElicitationRequiredError": lambda: T.URLElicitationRequiredError(
        id=3, error=T.URLElicitationRequiredErrorDetail(
            message="Sign in first", data=T.URLElicitationRequiredErrorData(
                elicitations=[T.ElicitRequestURLParams(message="Sign in", url="https://example.com/login",
                                                       elicitationId="el-1")]))),
}


# --- which types each revision lists ----------------------------------------------------------------

UNIONS = {
    "request": ("ClientRequest", "ServerRequest", "InputRequest"),
    "notification": ("ClientNotification", "ServerNotification"),
    "result": ("ClientResult", "ServerResult", "InputResponse"),
}


ABSTRACT = frozenset({
    # the unions themselves, and the JSON-RPC envelopes (validated as JSONRPCMessage below)
    "ClientRequest", "ServerRequest", "InputRequest", "ClientNotification", "ServerNotification",
    "ClientResult", "ServerResult", "JSONRPCRequest", "JSONRPCNotification",
    # generic bases whose ``method`` is any string: every concrete request above is one of them
    "Request", "Notification", "PaginatedRequest",
})


def _member_names(rev: str, union: str) -> list[str]:
    defs = load_schema(rev)[definitions_key(rev)]
    if union not in defs:
        return []
    body = defs[union]
    if "anyOf" in body:
        return [ref["$ref"].split("/")[-1] for ref in body["anyOf"]]
    if "$ref" in body:
        return [body["$ref"].split("/")[-1]]
    # 2026-07-28's ClientNotification is written out inline: it is CancelledNotification.
    return [T.notification_model(body["properties"]["method"]["const"], rev).__name__]


def _cases() -> list[Any]:
    if find_spec_dir() is None:
        return [pytest.param(None, None, None, None, marks=pytest.mark.skip(reason=NO_SPEC), id="no-spec")]
    cases = []
    for rev in VERSIONS:
        seen: set[str] = set()
        for kind, unions in UNIONS.items():
            for union in unions:
                for name in _member_names(rev, union):
                    if name in seen:
                        continue
                    seen.add(name)
                    build = SAMPLES.get(name)
                    if build is None:
                        cases.append(pytest.param(rev, kind, name, None, id=f"{rev}-{name}-MISSING"))
                        continue
                    for label, model in build(rev):
                        cases.append(pytest.param(rev, kind, name, model,
                                                  id=f"{rev}-{name}" + (f"-{label}" if label else "")))
        # Message types outside the unions: EmptyResult, the cacheable/paginated bases, and
        # 2025-11-25's CreateTaskResult (the answer to a task-augmented request).
        for name in definition_names(rev):
            match = re.search(r"(Request|Notification|Result)$", name)
            if match is None or name in seen or name in ABSTRACT:
                continue
            kind = match.group(1).lower()
            build = SAMPLES.get(name)
            if build is None:
                cases.append(pytest.param(rev, kind, name, None, id=f"{rev}-{name}-MISSING"))
                continue
            cases.extend(pytest.param(rev, kind, name, model, id=f"{rev}-{name}" + (f"-{label}" if label else ""))
                         for label, model in build(rev))
    return cases


def _method_answered_by(rev: str, result_type: str) -> str | None:
    """A method whose request this result type answers (``None`` for the generic bases)."""
    if result_type in ("InputRequiredResult", "CreateTaskResult"):
        return "tools/call"
    for method, info in REVISIONS[rev].requests.items():
        if info.result_type == result_type:
            return method
    return None


@pytest.mark.parametrize(("rev", "kind", "type_name", "model"), _cases())
def test_every_message_type_is_schema_valid(rev: str, kind: str, type_name: str, model: MCPModel | None) -> None:
    assert model is not None, f"no sample for {type_name} of {rev}: add one to SAMPLES"
    assert type(model).__name__ == type_name or (type_name == "Result" and type(model) is T.Result)

    back: MCPModel
    if kind == "request":
        assert isinstance(model, T.Request)
        obj = envelopes.as_schema_type(model, rev, id=42)
        assert schema_errors(obj, rev, type_name) == []
        info = REVISIONS[rev].method(model.method)
        assert info is not None
        if info.only_inside_input_requests:
            wrapped = T.InputRequiredResult(inputRequests=T.InputRequests({"k": model}))
            assert schema_errors(wrapped.to_json(), rev, "InputRequiredResult") == []
            message = envelopes.to_result_response(wrapped, 42).to_dict()
        else:
            message = envelopes.to_request(model, 42).to_dict()
        assert schema_errors(message, rev, "JSONRPCMessage") == []
        back = T.parse_request(model.method, obj.get("params"), revision=rev)
        assert type(back) is type(model) and back.to_json() == model.to_json()

    elif kind == "notification":
        assert isinstance(model, T.Notification)
        obj = envelopes.as_schema_type(model, rev)
        assert schema_errors(obj, rev, type_name) == []
        message = envelopes.to_notification(model).to_dict()
        assert schema_errors(message, rev, "JSONRPCMessage") == []
        back = T.parse_notification(model.method, obj.get("params"), revision=rev)
        assert type(back) is type(model) and back.to_json() == model.to_json()

    else:
        assert isinstance(model, T.Result)
        obj = model.to_json()
        assert schema_errors(obj, rev, type_name) == []
        if type_name in _member_names(rev, "InputResponse"):
            # 2026-07-28: the client's answer to an input request travels in the retried request.
            retry = T.CallToolRequest(params=T.CallToolRequestParams(
                name="add", requestState="s", inputResponses=T.InputResponses({"k": model}), **meta_kw(rev)))
            message = envelopes.to_request(retry, 43).to_dict()
            assert schema_errors(message, rev, "CallToolRequest") == []
        else:
            message = envelopes.to_result_response(model, 42).to_dict()
        assert schema_errors(message, rev, "JSONRPCMessage") == []
        method = _method_answered_by(rev, type_name)
        if method is not None:
            back = T.parse_result(method, obj, revision=rev)
            assert type(back) is type(model) and back.to_json() == obj


def _extra_cases() -> list[Any]:
    if find_spec_dir() is None:
        return [pytest.param(None, None, None, marks=pytest.mark.skip(reason=NO_SPEC), id="no-spec")]
    return ([pytest.param(MODERN, name, build, id=f"{MODERN}-{name}") for name, build in EXTRA_2026.items()]
            + [pytest.param("2025-11-25", name, build, id=f"2025-11-25-{name}")
               for name, build in EXTRA_2025_11_25.items()])


@pytest.mark.parametrize(("rev", "type_name", "build"), _extra_cases())
def test_responses_and_errors_are_schema_valid(rev: str, type_name: str, build: Callable[[], MCPModel]) -> None:
    model = build()
    assert type(model).__name__ == type_name
    obj = model.to_json()
    assert schema_errors(obj, rev, type_name) == []
    if "jsonrpc" in obj:  # a whole message (the error-object types are only the "error" member)
        assert schema_errors(obj, rev, "JSONRPCMessage") == []
    elif isinstance(model, T.Error):
        wire = envelopes.to_error_response(model, 42).to_dict()
        assert schema_errors(wire, rev, "JSONRPCMessage") == []
        assert envelopes.from_error_response(envelopes.to_error_response(model, 42)).to_json() == obj
    assert type(T.parse_as(type_name, obj)) is type(model)


# --- the tasks extension (2026-07-28) ------------------------------------------------------------------

def _detailed(status: str) -> dict[str, Any]:
    base: dict[str, Any] = {"taskId": "task-1", "status": status, "createdAt": "2026-07-28T10:00:00Z",
                            "lastUpdatedAt": "2026-07-28T10:00:05Z", "ttlMs": 60_000, "pollIntervalMs": 500}
    extra: dict[str, dict[str, Any]] = {
        "input_required": {"inputRequests": {"who": elicit_form(MODERN).to_json()}},
        "completed": {"result": {"resultType": "complete", "content": [{"type": "text", "text": "5"}]}},
        "failed": {"error": {"code": -32603, "message": "worker crashed"}},
    }
    return {**base, **extra.get(status, {})}


STATUSES = ("working", "input_required", "completed", "failed", "cancelled")

EXT_SAMPLES: list[tuple[str, str, Callable[[], MCPModel]]] = [
    ("GetTaskRequest", "", lambda: ext_tasks.GetTaskRequest(params=T.TaskIdRequestParams(taskId="task-1"))),
    ("UpdateTaskRequest", "", lambda: ext_tasks.UpdateTaskRequest(params=ext_tasks.UpdateTaskRequestParams(
        taskId="task-1", inputResponses=T.InputResponses({"who": T.ElicitResult(action="accept",
                                                                                 content={"name": "Ada"})})))),
    ("CancelTaskRequest", "", lambda: ext_tasks.CancelTaskRequest(params=T.TaskIdRequestParams(taskId="task-1"))),
    ("CreateTaskResult", "", lambda: ext_tasks.CreateTaskResult.model_validate(_detailed("working"))),
    *[("GetTaskResult", status, (lambda s=status: ext_tasks.GetTaskResult.model_validate(_detailed(s))))
      for status in STATUSES],
    ("UpdateTaskResult", "", lambda: ext_tasks.UpdateTaskResult()),
    ("CancelTaskResult", "", lambda: ext_tasks.CancelTaskResult()),
    *[("TaskStatusNotification", status, (lambda s=status: ext_tasks.TaskStatusNotification(
        params=ext_tasks.TaskStatusNotificationParams.model_validate(_detailed(s))))) for status in STATUSES],
]


def _ext_cases() -> list[Any]:
    if find_spec_dir() is None:
        return [pytest.param(None, None, marks=pytest.mark.skip(reason=NO_SPEC), id="no-spec")]
    return [pytest.param(name, build, id=f"ext-tasks-{name}" + (f"-{label}" if label else ""))
            for name, label, build in EXT_SAMPLES]


@pytest.mark.parametrize(("type_name", "build"), _ext_cases())
def test_tasks_extension_messages_are_schema_valid(type_name: str, build: Callable[[], MCPModel]) -> None:
    model = build()
    assert type(model).__name__ == type_name
    back: MCPModel
    if isinstance(model, T.Request):
        obj = envelopes.to_request(model, 9).to_dict()
        back = T.parse_request(model.method, obj["params"], revision=MODERN)
    elif isinstance(model, T.Notification):
        obj = envelopes.to_notification(model).to_dict()
        back = T.parse_notification(model.method, obj["params"], revision=MODERN)
    else:
        assert isinstance(model, T.Result)
        obj = model.to_json()
        back = T.parse_result("tools/call" if type_name == "CreateTaskResult" else
                              {"GetTaskResult": "tasks/get", "UpdateTaskResult": "tasks/update",
                               "CancelTaskResult": "tasks/cancel"}[type_name], obj, revision=MODERN)
        assert schema_errors(envelopes.to_result_response(model, 9).to_dict(), MODERN, "JSONRPCMessage") == []
    assert schema_errors(obj, "ext-tasks", type_name) == []
    assert type(back) is type(model) and back.to_json() == model.to_json()


def test_detailed_task_variants() -> None:
    result = ext_tasks.GetTaskResult.model_validate(_detailed("input_required"))
    assert isinstance(result.detailed(), ext_tasks.InputRequiredTask)
    with pytest.raises(ValueError, match="must carry 'result'"):
        ext_tasks.GetTaskResult.model_validate({**_detailed("working"), "status": "completed"})


# --- parse_* helpers: errors ---------------------------------------------------------------------------

def test_parse_request_rejects_bad_params() -> None:
    from pydantic import ValidationError
    with pytest.raises(ValidationError):
        T.parse_request("tools/call", {"arguments": {}})  # no name


def test_parse_request_rejects_unknown_methods() -> None:
    with pytest.raises(T.UnknownMethodError):
        T.parse_request("tools/explode", {})
    with pytest.raises(T.UnknownMethodError):
        T.parse_request("ping", None, revision=MODERN)  # removed in 2026-07-28


def test_input_required_only_where_allowed() -> None:
    from pydantic import ValidationError
    state = {"resultType": "input_required", "requestState": "s"}
    assert isinstance(T.parse_result("prompts/get", state), T.InputRequiredResult)
    with pytest.raises(ValidationError, match="only tools/call"):
        T.parse_result("tools/list", state, revision=MODERN)


def test_same_method_different_models_per_revision() -> None:
    legacy = T.request_model("tasks/get")
    modern = T.request_model("tasks/get", MODERN)
    assert legacy is T.GetTaskRequest and modern is ext_tasks.GetTaskRequest


# --- the schema, not the superset model, decides what a revision allows ------------------------------

def test_revision_rules_the_models_leave_to_the_schema() -> None:
    if find_spec_dir() is None:
        pytest.skip(NO_SPEC)
    call = T.CallToolRequest(params=T.CallToolRequestParams(name="add"))
    # 2026-07-28 requires _meta with the protocol version and client capabilities on every request.
    assert schema_errors(envelopes.as_schema_type(call, MODERN, id=1), MODERN, "CallToolRequest") != []
    assert schema_errors(envelopes.as_schema_type(call, "2025-11-25", id=1), "2025-11-25", "CallToolRequest") == []
    # 2026-07-28 list results must say how long they may be cached.
    tools = T.ListToolsResult(tools=[], resultType="complete")
    assert schema_errors(tools.to_json(), MODERN, "ListToolsResult") != []
    # URL-mode elicitation needs elicitationId in 2025-11-25 and does not exist in 2025-06-18.
    url = elicit_url(MODERN)
    assert schema_errors(envelopes.as_schema_type(url, "2025-11-25", id=1), "2025-11-25", "ElicitRequest") != []
    assert schema_errors(envelopes.as_schema_type(url, "2025-06-18"), "2025-06-18", "ElicitRequest") != []

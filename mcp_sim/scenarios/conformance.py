"""The conformance server: the fixtures the official MCP conformance suite expects of a server.

The suite (``@modelcontextprotocol/conformance`` on npm) connects to a server as a real client and
checks one behaviour per *scenario*: ``tools-call-image`` calls ``test_image_content`` and expects an
image block, ``resources-templates-read`` reads ``test://template/123/data`` and expects the ``123``
back, and so on. Each scenario names the tool, resource or prompt it needs; this module offers exactly
those, built with the same decorators as the course's other servers (course chapter 05), so::

    mcp-sim serve conformance --transport http --port 3000

is a server the suite can run against, in every revision it tests. The contents (a 1x1 PNG, a tiny
WAV, fixed texts) are the suite's own reference values, so a check that compares them can pass.
``tests/test_conformance.py`` runs the suite against it.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from mcp_sim.roles.context import Context
from mcp_sim.roles.server import Server

PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
"""A 1x1 red PNG pixel: the image every image scenario expects."""
WAV_BASE64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
"""A minimal WAV file: the audio the audio scenario expects."""

JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"address": {"type": "object", "properties": {"street": {"type": "string"},
                                                           "city": {"type": "string"}}}},
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}
"""SEP-1613: a tool's ``inputSchema`` may use any JSON Schema 2020-12 keyword (``$schema``, ``$defs``,
``$ref``, ``additionalProperties``), and ``tools/list`` must hand it to the client unchanged."""

ELICITATION_DEFAULTS = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"],
                   "default": "active"},
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}
"""SEP-1034 (2025-11-25): every primitive field of an elicitation form may carry a ``default``."""

ELICITATION_ENUMS = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "description": "Select one option",
                           "enum": ["option1", "option2", "option3"]},
        "titledSingle": {"type": "string", "description": "Select one option with titles",
                         "oneOf": [{"const": "value1", "title": "First Option"},
                                   {"const": "value2", "title": "Second Option"},
                                   {"const": "value3", "title": "Third Option"}]},
        "legacyEnum": {"type": "string", "description": "Select one option (legacy)",
                       "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
        "untitledMulti": {"type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3,
                          "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {"type": "array", "description": "Select multiple options with titles", "minItems": 1,
                        "maxItems": 3,
                        "items": {"anyOf": [{"const": "value1", "title": "First Choice"},
                                            {"const": "value2", "title": "Second Choice"},
                                            {"const": "value3", "title": "Third Choice"}]}},
    },
    "required": [],
}
"""SEP-1330 (2025-11-25): the five ways a form offers a choice — plain or titled, one or many, and the
deprecated ``enumNames``."""


def _answer(result: dict[str, Any]) -> str:
    """An elicitation's answer as one line: ``action=accept, content={...}``."""
    return f"action={result.get('action')}, content={json.dumps(result.get('content') or {}, separators=(',', ':'))}"


def build() -> Server:
    """A fresh conformance server."""
    server = Server("mcp-conformance-test-server", version="1.0.0")

    # -- tools: one per content type, then logging, progress, errors, and asking the client ------------
    @server.tool()
    def test_simple_text() -> str:
        """Tests simple text content response"""
        return "This is a simple text response for testing."

    @server.tool()
    def test_image_content() -> dict[str, Any]:
        """Tests image content response"""
        return {"type": "image", "data": PNG_BASE64, "mimeType": "image/png"}

    @server.tool()
    def test_audio_content() -> dict[str, Any]:
        """Tests audio content response"""
        return {"type": "audio", "data": WAV_BASE64, "mimeType": "audio/wav"}

    @server.tool()
    def test_embedded_resource() -> dict[str, Any]:
        """Tests embedded resource content response"""
        return {"type": "resource", "resource": {"uri": "test://embedded-resource", "mimeType": "text/plain",
                                                 "text": "This is an embedded resource content."}}

    @server.tool()
    def test_multiple_content_types() -> list[dict[str, Any]]:
        """Tests response with multiple content types (text, image, resource)"""
        return [
            {"type": "text", "text": "Multiple content types test:"},
            {"type": "image", "data": PNG_BASE64, "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "test://mixed-content-resource", "mimeType": "application/json",
                                              "text": json.dumps({"test": "data", "value": 123})}},
        ]

    @server.tool()
    async def test_tool_with_logging(ctx: Context) -> str:
        """Tests tool that emits log messages during execution"""
        for step in ("Tool execution started", "Tool processing data", "Tool execution completed"):
            await ctx.log("info", step)
            await ctx.sleep(0.05)
        return "Tool with logging executed successfully"

    @server.tool()
    async def test_tool_with_progress(ctx: Context) -> str:
        """Tests tool that reports progress notifications"""
        for done in (0, 50, 100):
            await ctx.report_progress(done, 100, f"Completed step {done} of 100")
            await ctx.sleep(0.05)
        return str(ctx.progress_token)

    @server.tool()
    def test_error_handling() -> str:
        """Tests error response handling"""
        # An exception inside a tool is a *result* with isError: true, which the model can read — not a
        # JSON-RPC error (spec "Tools", error handling).
        raise RuntimeError("This tool intentionally returns an error for testing")

    @server.tool()
    async def test_sampling(prompt: str, ctx: Context) -> str:
        """Tests server-initiated sampling (LLM completion request)"""
        result = await ctx.sample([{"role": "user", "content": {"type": "text", "text": prompt}}], 100)
        content = result.get("content")
        text = content.get("text") if isinstance(content, dict) else None
        return f"LLM response: {text or 'No response'}"

    @server.tool(input_schema={"type": "object", "properties": {
        "message": {"type": "string", "description": "The message to show the user"}}, "required": ["message"]})
    async def test_elicitation(message: str, ctx: Context) -> str:
        """Tests server-initiated elicitation (user input request)"""
        schema = {"type": "object", "properties": {"response": {"type": "string", "description": "User's response"}},
                  "required": ["response"]}
        return f"User response: {_answer(await ctx.elicit(message, schema))}"

    @server.tool()
    async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
        """Tests elicitation with default values per SEP-1034"""
        result = await ctx.elicit("Please review and update the form fields with defaults", ELICITATION_DEFAULTS)
        return f"Elicitation completed: {_answer(result)}"

    @server.tool()
    async def test_elicitation_sep1330_enums(ctx: Context) -> str:
        """Tests elicitation with enum schema improvements per SEP-1330"""
        result = await ctx.elicit("Please select options from the enum fields", ELICITATION_ENUMS)
        return f"Elicitation completed: {_answer(result)}"

    @server.tool(input_schema=JSON_SCHEMA_2020_12)
    def json_schema_2020_12_tool(name: str | None = None, address: dict[str, Any] | None = None) -> str:
        """Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)"""
        given = {k: v for k, v in (("name", name), ("address", address)) if v is not None}
        return f"JSON Schema 2020-12 tool called with: {json.dumps(given, separators=(',', ':'))}"

    # -- resources: text, binary, a template, and one to subscribe to ---------------------------------
    @server.resource("test://static-text", name="static-text", title="Static Text Resource", mime_type="text/plain")
    def static_text() -> str:
        """A static text resource for testing"""
        return "This is the content of the static text resource."

    @server.resource("test://static-binary", name="static-binary", title="Static Binary Resource",
                     mime_type="image/png")
    def static_binary() -> bytes:
        """A static binary resource (image) for testing"""
        return base64.b64decode(PNG_BASE64)

    @server.resource_template("test://template/{id}/data", name="template", title="Resource Template",
                              mime_type="application/json")
    def template(id: str) -> dict[str, Any]:  # the suite names the variable "id"
        """A resource template with parameter substitution"""
        return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}

    @server.resource("test://watched-resource", name="watched-resource", title="Watched Resource",
                     mime_type="text/plain")
    def watched_resource() -> str:
        """A resource a client can subscribe to"""
        return "Watched resource content"

    # -- prompts: plain, with arguments, with an embedded resource, with an image ------------------------
    @server.prompt(title="Simple Test Prompt")
    def test_simple_prompt() -> str:
        """A simple prompt without arguments"""
        return "This is a simple prompt for testing."

    @server.prompt(title="Prompt With Arguments", complete={"arg1": ["test-value-1", "test-value-2"]},
                   argument_descriptions={"arg1": "First test argument", "arg2": "Second test argument"})
    def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
        """A prompt with required arguments"""
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @server.prompt(title="Prompt With Embedded Resource",
                   argument_descriptions={"resourceUri": "URI of the resource to embed"})
    def test_prompt_with_embedded_resource(resourceUri: str) -> list[Any]:  # the suite spells it so
        """A prompt that includes an embedded resource"""
        embedded = {"type": "resource", "resource": {"uri": resourceUri, "mimeType": "text/plain",
                                                     "text": "Embedded resource content for testing."}}
        return [{"role": "user", "content": embedded}, "Please process the embedded resource above."]

    @server.prompt(title="Prompt With Image")
    def test_prompt_with_image() -> list[Any]:
        """A prompt that includes image content"""
        image = {"type": "image", "data": PNG_BASE64, "mimeType": "image/png"}
        return [{"role": "user", "content": image}, "Please analyze the image above."]

    return server

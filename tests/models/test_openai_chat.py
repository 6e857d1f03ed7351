"""docs/spec.md §5.13: the OpenAI-compatible chat model against a real chat-completions server on 127.0.0.1
(tests/models/chat_server.py): success and usage, retries on 429/5xx, timeouts, bodies that are not JSON,
structured output, tool calls, and the model-router strings."""

from __future__ import annotations

import json
import time

import pytest

from mastra_memory.errors import ConfigError, ModelError, ModelOutputError
from mastra_memory.models import ChatModel, OpenAIChatModel, resolve_model

from .chat_server import ChatServer, Scripted, completion

NO_WAIT = {"retry_base_delay": 0, "retry_max_delay": 0}
HELLO = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello"}]

pytestmark = pytest.mark.timeout(60)


def local(server: ChatServer, **options: object) -> ChatModel:
    return resolve_model("local/test-model", {"base_url": server.url, **NO_WAIT, **options})


async def test_a_reply_carries_text_usage_and_the_request_is_the_wire_format(server: ChatServer) -> None:
    model = local(server, api_key="sk-local", temperature=0)
    reply = await model(HELLO)
    assert reply.text == "A test title"
    assert (reply.usage.input_tokens, reply.usage.output_tokens, reply.usage.total_tokens) == (7, 3, 10)
    assert reply.model_id == "local/test-model"
    assert reply.finish_reason == "stop"
    assert server.requests == [{"model": "test-model", "messages": HELLO, "temperature": 0}]
    assert server.headers[0]["authorization"] == "Bearer sk-local"


async def test_429_then_success_is_retried(server: ChatServer) -> None:
    server.script.append(Scripted(429, b'{"error": {"message": "slow down"}}', {"retry-after-ms": "10"}))
    reply = await local(server)(HELLO)
    assert reply.text == "A test title"
    assert len(server.requests) == 2


async def test_5xx_until_retries_run_out_is_a_model_error(server: ChatServer) -> None:
    server.script.extend(Scripted(503, b'{"error": {"message": "overloaded"}}') for _ in range(3))
    with pytest.raises(ModelError, match=r"failed after 3 attempts, last: HTTP 503: overloaded") as info:
        await local(server, max_retries=2)(HELLO)
    assert info.value.details["status"] == 503
    assert len(server.requests) == 3


async def test_a_400_is_not_retried(server: ChatServer) -> None:
    server.script.append(Scripted(400, b'{"error": {"message": "bad model"}}'))
    with pytest.raises(ModelError, match="rejected with HTTP 400: bad model"):
        await local(server)(HELLO)
    assert len(server.requests) == 1


async def test_a_slow_server_times_out_within_the_bound(server: ChatServer) -> None:
    server.script.append(Scripted(200, json.dumps(completion("late")).encode(), delay=3))
    started = time.monotonic()
    with pytest.raises(ModelError, match="ReadTimeout"):
        await local(server, timeout=0.3, max_retries=0)(HELLO)
    assert time.monotonic() - started < 2.5


async def test_a_body_that_is_not_json_is_a_model_error(server: ChatServer) -> None:
    server.script.append(Scripted(200, b"<html>proxy error</html>", {"Content-Type": "text/html"}))
    with pytest.raises(ModelError, match="not JSON"):
        await local(server)(HELLO)


async def test_json_that_is_not_a_completion_is_a_model_error(server: ChatServer) -> None:
    server.script.append(Scripted(200, b'{"data": []}'))
    with pytest.raises(ModelError, match=r"no choices\[0\]\.message"):
        await local(server)(HELLO)


SCHEMA = {
    "type": "object",
    "properties": {"title": {"type": "string"}},
    "required": ["title"],
    "additionalProperties": False,
}


async def test_structured_output_is_parsed_and_checked(server: ChatServer) -> None:
    server.reply = lambda body: '{"title": "Trip"}'
    reply = await local(server)(HELLO, schema=SCHEMA)
    assert reply.parsed == {"title": "Trip"}
    sent = server.requests[0]["response_format"]
    assert sent == {"type": "json_schema", "json_schema": {"name": "output", "schema": SCHEMA}}


@pytest.mark.parametrize(
    ("text", "problem"),
    [("Sure! Trip", "not JSON"), ('{"name": "Trip"}', "lacks the required property 'title'")],
)
async def test_invalid_structured_output_is_a_typed_error_with_the_reply(
    server: ChatServer, text: str, problem: str
) -> None:
    server.reply = lambda body: text
    with pytest.raises(ModelOutputError, match=problem) as info:
        await local(server)(HELLO, schema=SCHEMA)
    assert info.value.reply == text


async def test_tool_calls_are_decoded(server: ChatServer) -> None:
    body = completion("")
    body["choices"][0]["message"]["tool_calls"] = [
        {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "x"}'}}
    ]
    server.script.append(Scripted(200, json.dumps(body).encode()))
    tool = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}
    reply = await local(server)(HELLO, tools=[tool])
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [("c1", "lookup", {"q": "x"})]
    assert server.requests[0]["tools"] == [tool]


async def test_the_api_key_never_appears_in_an_error(server: ChatServer) -> None:
    server.script.append(Scripted(401, b'{"error": {"message": "invalid key sk-secret-123"}}'))
    with pytest.raises(ModelError) as info:
        await local(server, api_key="sk-secret-123")(HELLO)
    assert "sk-secret-123" not in str(info.value)


async def test_openai_needs_a_key_at_the_first_call() -> None:
    model = resolve_model("openai/gpt-4o-mini")
    assert isinstance(model, OpenAIChatModel)
    assert model.base_url == "https://api.openai.com/v1"
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        await model(HELLO)


def test_router_strings_and_mastra_model_configs(server: ChatServer) -> None:
    routed = resolve_model("openrouter/openai/gpt-4o-mini")
    assert isinstance(routed, OpenAIChatModel)
    assert (routed.model, routed.base_url) == ("openai/gpt-4o-mini", "https://openrouter.ai/api/v1")
    ollama = resolve_model("ollama/llama3.2")
    assert isinstance(ollama, OpenAIChatModel)
    assert ollama.base_url == "http://localhost:11434/v1"
    mastra_style = resolve_model({"id": "lmstudio/qwen", "url": server.url, "apiKey": "k"})
    assert isinstance(mastra_style, OpenAIChatModel)
    assert (mastra_style.model_id, mastra_style.base_url) == ("lmstudio/qwen", server.url)
    assert resolve_model(mastra_style) is mastra_style


@pytest.mark.parametrize(
    ("spec", "options", "problem"),
    [
        ("mystery/model", {}, "Unknown model provider 'mystery'"),
        ("openai/", {}, "names no model"),
        ("/gpt", {}, "names no provider"),
        ("local/m", {"base_url": "ftp://x"}, "http:// or https://"),
        ("openai/gpt-4o-mini", {"timeout": 0}, "timeout"),
        ("openai/gpt-4o-mini", {"max_retries": -1}, "max_retries"),
        (42, {}, "model must be"),
    ],
)
def test_bad_model_specs_are_config_errors_before_any_io(
    spec: object, options: dict[str, object], problem: str
) -> None:
    with pytest.raises(ConfigError, match=problem):
        resolve_model(spec, options)  # type: ignore[arg-type]

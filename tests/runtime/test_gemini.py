"""Gemini driven through the real google-genai client against FakeGemini, a local server speaking the REST wire format."""

from __future__ import annotations

import asyncio
import copy
import socket

import pytest
from google.genai import types

from runtime.errors import ModelNotConfiguredError, RetryableModelError, UsageError
from runtime.models import BaseLlm, Gemini, LlmRequest, LlmResponse, ScriptedLlm, registry
from tests.fake_gemini import (
    FakeGemini,
    conversation_responder,
    error_body,
    error_reply,
    function_call_response,
    response,
    stream_reply,
    text_response,
)

WEATHER = types.FunctionDeclaration(
    name="get_weather",
    description="The weather in a city.",
    parameters=types.Schema(type="OBJECT", properties={"city": types.Schema(type="STRING")}, required=["city"]),
)


@pytest.fixture
def fake():
    with FakeGemini() as server:
        yield server


@pytest.fixture
def gemini(fake):
    return Gemini(base_url=fake.base_url, api_key="test-key")


def user_request(text: str = "What is the weather in Paris?", **config) -> LlmRequest:
    return LlmRequest(
        contents=[types.Content(role="user", parts=[types.Part(text=text)])],
        config=types.GenerateContentConfig(**config),
    )


def model_text(text: str) -> types.Content:
    return types.Content(role="model", parts=[types.Part(text=text)])


def usage(prompt: int, candidates: int) -> types.GenerateContentResponseUsageMetadata:
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt, candidates_token_count=candidates, total_token_count=prompt + candidates
    )


async def collect(llm: BaseLlm, request: LlmRequest, stream: bool = False) -> list[LlmResponse]:
    return [answer async for answer in llm.generate_content_async(request, stream=stream)]


async def test_text_answer_comes_back_as_one_llm_response(fake, gemini):
    fake.add(text_response("Sunny in Paris.", usage=(12, 4)))

    answers = await collect(gemini, user_request())

    assert answers == [
        LlmResponse(content=model_text("Sunny in Paris."), finish_reason=types.FinishReason.STOP,
                    usage_metadata=usage(12, 4))
    ]
    assert [(r.path, r.model, r.stream) for r in fake.requests] == [
        ("/v1/models/gemini-2.5-flash:generateContent", "gemini-2.5-flash", False)
    ]
    assert fake.requests[0].headers["x-goog-api-key"] == "test-key"


async def test_function_call_answer_carries_the_call_and_the_request_declares_tools_and_instruction(fake, gemini):
    fake.add(function_call_response(("get_weather", {"city": "Paris"})))
    request = user_request(system_instruction="You report the weather.",
                           tools=[types.Tool(function_declarations=[WEATHER])])

    answers = await collect(gemini, request)

    call = types.Part(function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"}))
    assert answers == [
        LlmResponse(content=types.Content(role="model", parts=[call]), finish_reason=types.FinishReason.STOP,
                    usage_metadata=usage(10, 5))
    ]
    assert fake.requests[0].body == {
        "contents": [{"role": "user", "parts": [{"text": "What is the weather in Paris?"}]}],
        "systemInstruction": {"role": "user", "parts": [{"text": "You report the weather."}]},
        "tools": [{"functionDeclarations": [{
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "required": ["city"]},
        }]}],
        "generationConfig": {},
    }


async def test_streaming_yields_text_chunks_as_partials_then_one_aggregated_final(fake, gemini):
    fake.add(stream_reply(
        text_response("It is ", finish_reason=None, usage=None),
        text_response("sunny ", finish_reason=None, usage=None),
        text_response("today.", usage=(7, 3)),
    ))

    answers = await collect(gemini, user_request(), stream=True)

    assert answers == [
        LlmResponse(content=model_text("It is "), partial=True),
        LlmResponse(content=model_text("sunny "), partial=True),
        LlmResponse(content=model_text("today."), partial=True),
        LlmResponse(content=model_text("It is sunny today."), partial=False,
                    finish_reason=types.FinishReason.STOP, usage_metadata=usage(7, 3)),
    ]
    assert [(r.path, r.stream) for r in fake.requests] == [
        ("/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse", True)
    ]


async def test_streamed_function_calls_are_aggregated_in_order_after_the_text(fake, gemini):
    fake.add(stream_reply(
        text_response("Let me check.", finish_reason=None, usage=None),
        function_call_response(("get_weather", {"city": "Paris"}), finish_reason=None, usage=None),
        function_call_response(("get_weather", {"city": "Rome"}), usage=(9, 6)),
    ))

    answers = await collect(gemini, user_request(tools=[types.Tool(function_declarations=[WEATHER])]), stream=True)

    calls = [types.Part(function_call=types.FunctionCall(name="get_weather", args={"city": city}))
             for city in ("Paris", "Rome")]
    assert answers == [
        LlmResponse(content=model_text("Let me check."), partial=True),
        LlmResponse(content=types.Content(role="model", parts=[types.Part(text="Let me check."), *calls]),
                    partial=False, finish_reason=types.FinishReason.STOP, usage_metadata=usage(9, 6)),
    ]


async def test_streamed_thought_text_is_kept_apart_from_the_answer_text(fake, gemini):
    fake.add(stream_reply(
        response([{"text": "Paris, ", "thought": True}], finish_reason=None, usage=None),
        response([{"text": "so sunny.", "thought": True}, {"text": "Sunny."}], usage=(2, 2)),
    ))

    answers = await collect(gemini, user_request(), stream=True)

    assert answers[-1] == LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text="Paris, so sunny.", thought=True),
                                                   types.Part(text="Sunny.")]),
        partial=False, finish_reason=types.FinishReason.STOP, usage_metadata=usage(2, 2),
    )


@pytest.mark.parametrize("code", [429, 500, 503, 504])
async def test_rate_limit_and_overload_raise_retryable_model_error_after_one_attempt(fake, gemini, code):
    fake.add(error_reply(code, "try later"), text_response("never sent"))

    with pytest.raises(RetryableModelError) as caught:
        await collect(gemini, user_request())

    assert caught.value.code == str(code)
    assert "try later" in str(caught.value) and "'gemini-2.5-flash'" in str(caught.value)
    assert len(fake.requests) == 1  # the client did not retry on its own
    assert fake.pending == 1


@pytest.mark.parametrize("code", [400, 403, 404])
async def test_client_errors_become_an_error_response(fake, gemini, code):
    fake.add(error_reply(code, "the request is wrong"))

    answers = await collect(gemini, user_request())

    assert answers == [LlmResponse(error_code=str(code), error_message="the request is wrong")]


async def test_client_error_while_streaming_becomes_an_error_response(fake, gemini):
    fake.add(error_reply(400, "bad schema"))

    answers = await collect(gemini, user_request(), stream=True)

    assert answers == [LlmResponse(error_code="400", error_message="bad schema")]


async def test_overload_in_the_middle_of_a_stream_raises_retryable_after_the_partials(fake, gemini):
    fake.add(stream_reply(text_response("It is ", finish_reason=None, usage=None), error_body(503, "overloaded")))
    answers: list[LlmResponse] = []

    with pytest.raises(RetryableModelError) as caught:
        async for answer in gemini.generate_content_async(user_request(), stream=True):
            answers.append(answer)

    assert answers == [LlmResponse(content=model_text("It is "), partial=True)]
    assert caught.value.code == "503"


@pytest.mark.parametrize("stream", [False, True])
async def test_blocked_prompt_becomes_an_error_response(fake, gemini, stream):
    fake.add({"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 3}})

    answers = await collect(gemini, user_request(), stream=stream)

    final = answers[-1].model_dump(exclude_none=True, exclude={"partial"})
    assert (len(answers), final) == (1, {"error_code": "SAFETY", "error_message": "the prompt was blocked",
                                          "usage_metadata": {"prompt_token_count": 3}})


@pytest.mark.parametrize("stream", [False, True])
async def test_empty_candidate_becomes_an_error_response(fake, gemini, stream):
    fake.add({"candidates": [{"finishReason": "SAFETY", "index": 0}]})

    answers = await collect(gemini, user_request(), stream=stream)

    final = answers[-1].model_dump(exclude_none=True, exclude={"partial"})
    assert (len(answers), final) == (1, {"error_code": "SAFETY", "error_message": "the model returned no content",
                                          "finish_reason": types.FinishReason.SAFETY})


async def test_unreachable_endpoint_raises_retryable_model_error():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    llm = Gemini(base_url=f"http://127.0.0.1:{port}", api_key="test-key")

    with pytest.raises(RetryableModelError) as caught:
        await collect(llm, user_request())

    assert caught.value.code == "UNAVAILABLE"


async def test_the_request_model_name_wins_over_the_instance_model(fake, gemini):
    fake.add(text_response("ok"))
    request = user_request()
    request.model = "gemini-2.5-pro"

    await collect(gemini, request)

    assert [r.model for r in fake.requests] == ["gemini-2.5-pro"]


async def test_a_conversation_not_ending_with_the_user_gets_a_user_turn_appended(fake, gemini):
    fake.add(text_response("one"), text_response("two"))
    after_model = user_request()
    after_model.contents.append(model_text("Let me think."))

    await collect(gemini, LlmRequest())
    await collect(gemini, after_model)

    assert [[c["role"] for c in r.body["contents"]] for r in fake.requests] == [["user"], ["user", "model", "user"]]
    assert len(after_model.contents) == 2  # the caller's request is left as it was


async def test_base_url_and_key_come_from_the_environment(fake, monkeypatch):
    monkeypatch.setenv("AGENTQ_GEMINI_BASE_URL", fake.base_url)
    monkeypatch.setenv("GOOGLE_API_KEY", "env-key")
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    fake.add(text_response("from env"))

    answers = await collect(Gemini(), user_request())

    assert answers[0].content == model_text("from env")
    assert fake.requests[0].headers["x-goog-api-key"] == "env-key"


async def test_missing_credentials_raise_model_not_configured(monkeypatch):
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)

    llm = Gemini()  # the client is made lazily, so constructing needs no credentials

    with pytest.raises(ModelNotConfiguredError, match="'gemini-2.5-flash'"):
        await collect(llm, user_request())


async def test_vertex_ai_without_cloud_credentials_raises_model_not_configured(monkeypatch, tmp_path):
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "1")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "p1")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path))  # no gcloud login on this machine or any other
    # Nor a metadata server to ask (google.auth reads NO_GCE_CHECK once, at import).
    monkeypatch.setattr("google.auth.compute_engine._metadata._NO_GCE_CHECK", True)

    with pytest.raises(ModelNotConfiguredError, match="no Google Cloud credentials for Gemini model 'gemini-2.5-pro'"):
        await collect(Gemini(model="gemini-2.5-pro"), user_request())


def test_each_event_loop_gets_its_own_client_made_on_first_use(gemini):
    async def client() -> object:
        return gemini.api_client

    first_loop, second_loop = asyncio.new_event_loop(), asyncio.new_event_loop()
    try:
        assert len(gemini._clients) == 0
        first = first_loop.run_until_complete(client())
        second = second_loop.run_until_complete(client())
        first_again = first_loop.run_until_complete(client())
    finally:
        first_loop.close()
        second_loop.close()

    assert (first_again is first, second is first, len(gemini._clients)) == (True, False, 2)


def test_copying_a_gemini_leaves_the_client_behind(gemini):
    client = gemini.api_client

    copied = copy.deepcopy(gemini)

    assert (copied.model, copied.base_url, len(copied._clients)) == ("gemini-2.5-flash", gemini.base_url, 0)
    assert gemini.api_client is client


@pytest.mark.parametrize("name", [
    "gemini-2.5-flash",
    "gemini-2.0-flash-lite",
    "projects/p1/locations/us-central1/endpoints/123",
    "projects/p1/locations/us-central1/publishers/google/models/gemini-2.5-pro",
])
def test_gemini_model_names_resolve_through_the_registry(name):
    llm = registry.resolve(name)

    assert (type(llm), llm.model) == (Gemini, name)


def test_unknown_model_names_are_refused_by_the_registry():
    with pytest.raises(UsageError, match="'gpt-4o'"):
        registry.resolve("gpt-4o")


def test_a_registered_class_takes_precedence_over_gemini(monkeypatch):
    class Custom(ScriptedLlm):
        @classmethod
        def supported_models(cls) -> list[str]:
            return [r"gemini-custom-.*"]

    monkeypatch.setattr(registry, "_registered", [])
    registry.register(Custom)

    assert [type(registry.resolve(n)) for n in ("gemini-custom-1", "gemini-2.5-flash")] == [Custom, Gemini]


async def test_client_retries_happen_only_when_http_options_ask_for_them(fake):
    retrying = types.HttpOptions(retry_options=types.HttpRetryOptions(attempts=2, initial_delay=0.01, max_delay=0.01))
    llm = Gemini(base_url=fake.base_url, api_key="test-key", http_options=retrying)
    fake.add(error_reply(503), text_response("second try"))

    answers = await collect(llm, user_request())

    assert [a.content for a in answers] == [model_text("second try")]
    assert len(fake.requests) == 2


async def test_the_client_reports_calls_to_python_tools_instead_of_running_them(fake, gemini):
    ran: list[str] = []

    def get_weather(city: str) -> dict:
        """The weather in a city."""
        ran.append(city)
        return {"weather": "sunny"}

    fake.add(function_call_response(("get_weather", {"city": "Paris"})), text_response("not reached"))

    answers = await collect(gemini, user_request(tools=[get_weather]))

    call = types.Part(function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"}))
    assert ([a.content for a in answers], ran, len(fake.requests)) == (
        [types.Content(role="model", parts=[call])], [], 1
    )


async def test_thought_signatures_survive_streaming_and_go_back_to_the_model(fake, gemini):
    signed_call = {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": "c2lnbmVk"}
    fake.add(
        stream_reply(response([{"text": "Check"}], finish_reason=None, usage=None),
                     response([{"text": "ing.", "thoughtSignature": "dGV4dA=="}], finish_reason=None, usage=None),
                     response([signed_call])),
        text_response("Sunny."),
    )
    request = user_request(tools=[types.Tool(function_declarations=[WEATHER])])

    answers = await collect(gemini, request, stream=True)
    request.contents.append(answers[-1].content)
    request.contents.append(types.Content(role="user", parts=[types.Part.from_function_response(
        name="get_weather", response={"weather": "sunny"})]))
    await collect(gemini, request)

    assert fake.requests[1].body["contents"][1] == {"role": "model", "parts": [
        {"text": "Checking.", "thoughtSignature": "dGV4dA=="}, signed_call,
    ]}


async def test_conversation_responder_answers_from_the_number_of_model_turns(fake, gemini):
    fake.responder = conversation_responder([("get_weather", {"city": "Paris"}), "Sunny in Paris."])
    request = user_request()

    first = await collect(gemini, request)
    request.contents += [first[0].content, types.Content(role="user", parts=[types.Part.from_function_response(
        name="get_weather", response={"weather": "sunny"})])]
    second = await collect(gemini, request)
    request.contents.append(second[0].content)
    third = await collect(gemini, request)

    assert [a.content for a in first + second] == [
        types.Content(role="model", parts=[types.Part(
            function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"}))]),
        model_text("Sunny in Paris."),
    ]
    assert (third[0].error_code, third[0].error_message) == (
        "400", "conversation_responder has 2 turns; model turn #3 has none"
    )

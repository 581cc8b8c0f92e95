"""With GOOGLE_API_KEY set, the weather example runs on Gemini: the real google-genai client in a real worker,
talking to a local server that speaks the Gemini wire format."""

from __future__ import annotations

import httpx

from agentq.local_stack import LocalStack
from runtime.events import Event
from tests.fake_gemini import FakeGemini, function_call_response, text_response

from .conftest import user_message


def test_the_weather_example_uses_gemini_when_an_api_key_is_set(tmp_path):
    with FakeGemini() as fake:
        fake.add(function_call_response(("get_weather", {"city": "Tokyo"})), text_response("Tokyo: cloudy, 18°C."))
        env = {"GOOGLE_API_KEY": "test-key", "AGENTQ_GEMINI_BASE_URL": fake.base_url}
        with LocalStack(tmp_path, apps=["examples.weather:app"], extra_env=env) as stack:
            with httpx.Client(base_url=stack.base_url, timeout=30) as http:
                http.post("/apps/weather/users/ann/sessions/g1")
                response = http.post("/run", json={"appName": "weather", "userId": "ann", "sessionId": "g1",
                                                   "newMessage": user_message("Weather in Tokyo?")})
        sent = [request.model for request in fake.requests]
        tool_result = fake.requests[1].body["contents"][-1]["parts"][0]["functionResponse"]
    said = [Event.model_validate(item) for item in response.json() if item.get("content")]
    assert response.status_code == 200
    assert sent == ["gemini-2.0-flash", "gemini-2.0-flash"]
    assert (tool_result["name"], tool_result["response"]) == (
        "get_weather", {"status": "success", "report": "The weather in Tokyo is cloudy, 18°C."}
    )
    assert said[-1].text() == "Tokyo: cloudy, 18°C."

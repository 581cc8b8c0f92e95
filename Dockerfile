# The one image compose.yaml runs as api, worker and flower.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY runtime ./runtime
COPY worker ./worker
COPY api ./api
COPY agentq ./agentq
COPY examples ./examples
RUN pip install --no-cache-dir .
ENV PYTHONPATH=/app PYTHONUNBUFFERED=1
EXPOSE 8000
CMD ["agentq", "api", "--host", "0.0.0.0"]

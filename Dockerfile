# The one image compose.yaml runs as api, worker and flower.
FROM python:3.11-slim
WORKDIR /app
# Dependencies first, from the runtime lock (exact versions, hashes checked), so a code change reuses this layer.
COPY requirements.lock ./
RUN pip install --no-cache-dir --require-hashes -r requirements.lock
COPY pyproject.toml README.md ./
COPY runtime ./runtime
COPY worker ./worker
COPY api ./api
COPY agentq ./agentq
COPY examples ./examples
# --no-deps: everything agentq needs came from the lock above; pip must not resolve anything anew.
RUN pip install --no-cache-dir --no-deps .
ENV PYTHONPATH=/app PYTHONUNBUFFERED=1
# Not root: a process that is taken over cannot take the container with it (and Celery warns when run as root).
RUN useradd --system --uid 10001 --home-dir /app agentq && chown agentq /app
USER agentq
EXPOSE 8000
CMD ["agentq", "api", "--host", "0.0.0.0"]

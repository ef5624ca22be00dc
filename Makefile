# scorewire: `make serve` runs the server, `make test` runs every test. Both set up
# whatever a fresh machine lacks (the virtualenv, packages, redis-server, buf, ...).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SERVER := $(VENV)/.server
NATIVE := $(VENV)/.native
NATIVE_SOURCES := $(wildcard service/native/Cargo.* service/native/pyproject.toml service/native/*.pyi service/native/src/*.rs)
BUF    := .tools/buf/node_modules/.bin/buf
PYTEST_ARGS ?=
# The Python tests run in one process per core (pytest-xdist), a test file to a process
# (its module-scoped servers stay in one process): 11 min on one core, 7 on two.
# PYTEST_WORKERS=0 runs them in this process (a debugger, a single test).
PYTEST_WORKERS ?= auto

.PHONY: install install-server serve test test-deps lint docs generate check-generated test-python \
        test-clients test-install test-image bench bench-engine bench-regex bench-service \
        bench-judge bench-judge-value bench-e2e bench-load bench-hostile bench-viewer clean

# `make serve` needs the server alone: its runtime dependencies, none of the dev tools
# (a development install, below, includes it).
$(SERVER): pyproject.toml
	@test -x $(BIN)/python || { echo "creating the virtualenv $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); }
	@echo "installing the server into $(VENV) (its runtime dependencies only)"
	@$(BIN)/pip install -q --upgrade pip
	@$(BIN)/pip install --progress-bar off -e . | grep -E '^(Collecting|Successfully installed)' || true
	@$(BIN)/python -c 'import scorewire.cli.main' || { echo "the install failed: run '$(BIN)/pip install -e .' to see why" >&2; exit 1; }
	@touch $(SERVER)

# The first install takes about 30 s: say what is happening, and let pip show each package.
$(STAMP): pyproject.toml clients/python/pyproject.toml
	@test -x $(BIN)/python || { echo "creating the virtualenv $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); }
	@echo "upgrading pip in $(VENV)"
	@$(BIN)/pip install -q --upgrade pip
	@echo "installing the server, the Python client, the dev and docs tools into $(VENV) (about 30 s the first time)"
	@$(BIN)/pip install --progress-bar off -e clients/python -e '.[dev,docs]' | grep -E '^(Collecting|Successfully installed)' || true
	@$(BIN)/python -c 'import scorewire.cli.main' || { echo "the install failed: run '$(BIN)/pip install -e clients/python -e .[dev,docs]' to see why" >&2; exit 1; }
	@touch $(STAMP) $(SERVER)
	@echo "installed: $(BIN)/scorewire"

# The native scoring kernel (Rust, service/native): cargo fetches its crates from
# crates.io the first time and builds it in about 30 s; rebuilt when its sources change.
# Without cargo the server still runs, scoring every check in Python (slower); the tests
# that need the kernel then skip, and fail under CI.
$(NATIVE): $(SERVER) $(NATIVE_SOURCES)
	@if ! command -v cargo >/dev/null; then \
		echo "cargo not found: the native scoring kernel is not built, so the server scores every check in Python (slower); install Rust (rustup, or Debian's cargo-web) and run make install again" >&2; \
	else \
		echo "building the native scoring kernel (service/native, Rust) into $(VENV) (about 30 s the first time)"; \
		$(BIN)/pip install -q ./service/native \
			&& $(BIN)/python -c 'import scorewire_native' \
			|| { echo "the native kernel did not install: run '$(BIN)/pip install ./service/native' to see why" >&2; exit 1; }; \
		touch $(NATIVE); \
	fi

## install: create .venv and install the server, the Python client, the native kernel and the dev tools
install: $(STAMP) $(NATIVE)

## install-server: create .venv and install the server and its native kernel only
install-server: $(SERVER) $(NATIVE)

## serve: run the server on 127.0.0.1:50051 (in-memory cache, no external service)
serve: install-server
	@echo "starting $(BIN)/scorewire serve on 127.0.0.1:50051 (metrics on :9464; Ctrl-C stops it)"
	@$(BIN)/scorewire serve

## test-deps: install the services and tools the tests start (redis-server, buf, ...)
test-deps:
	@scripts/install_test_deps.sh

## lint: ruff, mypy (strict on service/), buf lint
lint: install test-deps
	$(BIN)/ruff check service tests bench clients/python scripts hatch_build.py
	$(BIN)/ruff format --check service tests bench clients/python scripts hatch_build.py
	$(BIN)/mypy
	$(BUF) lint

## docs: build the documentation site into site/ (strict: a broken link or a missing page fails)
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

## generate: regenerate every language's code from protos/
generate: install test-deps
	scripts/generate.sh .
	$(BIN)/python scripts/gen_schemas.py

## check-generated: fail when regenerating would change committed code
check-generated: install test-deps
	scripts/check_generated.sh

## test-python: the Python test suite (engine, server, judge, Python client)
test-python: install test-deps
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

## test-clients: the Go, TypeScript and Java clients against a real server
test-clients: install test-deps
	scripts/test_clients.sh

## test-install: install the server and every client as users outside the repository do
## (wheels with the index off, a Go replace directive, npm install of the directory,
## mvn install) and call the installed server from a tiny program in each language
test-install: install test-deps
	scripts/test_install_routes.sh

## test-image: build deploy/Dockerfile (buildah, on a cached mmdebstrap Debian base) and
## run the image as it declares: health, Score, /metrics, labels, SIGTERM (needs root)
test-image: install test-deps
	$(BIN)/pytest -m image tests/image $(PYTEST_ARGS)

## test: everything CI runs
test: lint check-generated test-python test-clients test-install test-image

## bench: every benchmark (not part of test)
bench: bench-engine bench-regex bench-service

bench-engine: install
	$(BIN)/python bench/engine_bench.py

## bench-regex: user patterns on the linear-time engine, (a+)+$ on 50,000 characters included
bench-regex: install
	$(BIN)/python bench/regex_bench.py

bench-service: install
	$(BIN)/python bench/service_bench.py

bench-judge: install
	PYTHONPATH=. $(BIN)/python bench/judge_bench.py

## bench-judge-value: kappa (with its interval), accuracy, F1 and dollars of single judges, a panel and a cascade of stand-in judges of known accuracy (loopback only)
bench-judge-value: install
	PYTHONPATH=. $(BIN)/python bench/judge_value.py

## bench-e2e: scorewire against the fastest peer library in alternating rounds; writes docs/benchmarks.md's table (needs the peers' environment, see bench/peer_bench.py)
bench-e2e: install
	$(BIN)/python bench/e2e_bench.py --json .tmp/e2e.json
	$(BIN)/python bench/readme_table.py .tmp/e2e.json

## bench-load: 50 RunSuite streams x 2,000 cases plus Score traffic for 60 s (loopback only)
bench-load: install
	$(BIN)/python bench/load_test.py

## bench-hostile: a steady Score caller beside the worst single requests (loopback only)
bench-hostile: install
	$(BIN)/python bench/hostile_neighbour.py

## bench-viewer: the results viewer on a 20,000-case run: report, served pages, Chromium
bench-viewer: install
	$(BIN)/python bench/viewer_bench.py

clean:
	rm -rf $(VENV) .tools .mypy_cache .ruff_cache .pytest_cache service/native/target

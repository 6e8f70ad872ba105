# The two commands a newcomer needs: `make run` and `make test`. Both set up what is missing.
.PHONY: run test test-scale unit integration cluster e2e screenshots validate build checkov lint bench bootstrap clean seed load capacity chaos

PY := .venv/bin/python
PYTEST := $(PY) -m pytest

bootstrap:
	@scripts/bootstrap.sh

## Start the whole stack locally (moto, PostgreSQL, Redis, HTTP :3000, WebSocket :3001, the web
## client :3002); Ctrl-C stops it.
run: bootstrap
	$(PY) -m infra.local serve

## Fill the running stack (`make run`) with a population: 20,000 users, 100,000 follows, ...
## SEED_ARGS passes options, e.g. `make seed SEED_ARGS="--small --seed 7"` (infra/local/seed.py).
seed: bootstrap
	$(PY) -m infra.local seed $(SEED_ARGS)

## The load test (bench/load/): Locust, headless, against `make run` after `make seed`; a
## LOAD_WARMUP, then the measured window of LOAD_TIME (bounded by LOAD_REQUESTS over both); targets
## drawn Zipf-like by follower rank (LOAD_SKEW=0: uniform, the cold-cache bound); then the checks
## against the tables over the whole run (bench/load/check.py).
LOAD_USERS ?= 30
LOAD_WARMUP ?= 2m
LOAD_TIME ?= 3m
LOAD_SKEW ?= 1
LOAD_REQUESTS ?= 20000
LOAD_HTTP ?= http://127.0.0.1:3000
LOAD_WS ?= ws://127.0.0.1:3001
LOAD_MOTO ?= http://127.0.0.1:5005
LOAD_CHECK_ARGS ?=
## The stores' own counters over the window (from the warm-up's end, which the locustfile marks,
## to the settled streams, before the check's own reads) go to bench/results/load-ops.json
## (bench/load/ops.py), which `python -m bench.capacity` uses.
load: bootstrap
	LOAD_MAX_REQUESTS=$(LOAD_REQUESTS) LOAD_WS=$(LOAD_WS) LOAD_HTTP=$(LOAD_HTTP) \
	  LOAD_WARMUP=$(LOAD_WARMUP) LOAD_WINDOW=$(LOAD_TIME) LOAD_SKEW=$(LOAD_SKEW) \
	  LOAD_OPS_ARGS="--endpoint-url $(LOAD_MOTO) $(LOAD_CHECK_ARGS)" \
	  $(PY) -m locust -f bench/load/locustfile.py --headless --host $(LOAD_HTTP) \
	  -u $(LOAD_USERS) -r 10 --stop-timeout 10 \
	  --csv bench/results/load --only-summary --exit-code-on-error 0
	$(PY) -m bench.load.ops finish --endpoint-url $(LOAD_MOTO) $(LOAD_CHECK_ARGS)
	$(PY) -m bench.load.check --csv bench/results/load --http $(LOAD_HTTP) --endpoint-url $(LOAD_MOTO) \
	  $(LOAD_CHECK_ARGS)

## Issue 40's faults under the load test's traffic (bench/chaos/; minutes, not in `make test`): a
## stack of its own (free ports, its own Redis or Redis Cluster, database, PostgreSQL proxy), one
## table row per fault, pictures in docs/chaos/. CHAOS_ARGS, e.g. `--only pg-down --users 4`.
CHAOS_ARGS ?=
chaos: bootstrap
	$(PY) -m bench.chaos $(CHAOS_ARGS)

## Run every test: unit, integration and end-to-end, with the coverage of the shared package and
## the local runtime (in-process code; the e2e tier's child processes are not measured), and the
## 30 slowest tests (where the time goes: the suite must stay under 10 minutes on 2 cores).
## Coverage measures through sys.monitoring on Python 3.12 and later (at no cost; 3.11's trace
## function cost about a quarter of the in-process tests' time).
test:
	@scripts/bootstrap.sh --browser
	COVERAGE_CORE=$$($(PY) -c 'import sys; print("sysmon" if sys.version_info >= (3, 12) else "ctrace")') \
	  $(PYTEST) -n 2 --dist loadgroup --cov --cov-report=term:skip-covered --durations=30 tests

## The tests at scale (marker `scale`; tens of minutes, so not in `make test`): an account of
## 20,000 followers and 10,000 tweets deleted with its workflow killed half-way (issue 32).
test-scale: bootstrap
	WARBLE_SCALE_TESTS=1 $(PYTEST) -m scale tests

## The rules with in-memory fakes of the stores, the network switched off: seconds.
unit: bootstrap
	$(PYTEST) tests/unit

integration: bootstrap
	$(PYTEST) tests/integration

## The Redis-touching integration tests on a local 3-node Redis Cluster (started by the fixtures).
cluster: bootstrap
	$(PYTEST) -m cluster tests/integration

e2e:
	@scripts/bootstrap.sh --browser
	$(PYTEST) tests/e2e

## The browser tests alone, refreshing the screenshots in docs/screenshots/ (README, docs/web-client.md).
screenshots:
	@scripts/bootstrap.sh --browser
	WARBLE_SCREENSHOTS=docs $(PYTEST) tests/e2e/test_web_client.py tests/e2e/test_web_discover.py tests/e2e/test_web_connection.py tests/e2e/test_web_moderation.py

## Template checks: sam validate --lint, then the SAM transform and cfn-lint.
validate:
	scripts/validate-template.sh

## sam build (needs python3.13 on PATH; with pyenv: PYENV_VERSION=3.11.7:3.12.1:3.13.0).
build:
	scripts/validate-template.sh --build

## The template against checkov (CI runs it): a finding fails unless its resource skips it, with a
## reason, in its Metadata (docs/deploying.md).
checkov:
	scripts/checkov.sh

lint: bootstrap
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy

## Benchmarks: ratios against the raw store operations, measured in the same run.
bench: bootstrap
	$(PY) -m bench

clean:
	rm -rf .aws-sam .pytest_cache .mypy_cache .ruff_cache .stamps

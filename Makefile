# recall: the two commands a newcomer needs are `make run` and `make test` (each sets up first).
SHELL := /bin/bash
TSX := node_modules/.bin/tsx
# The Node scripts/setup.sh installs under .cache/node/ when the one on PATH is older than .node-version's major
# (absent otherwise): first on PATH for every target and everything it spawns.
export PATH := $(CURDIR)/.cache/node/bin:$(PATH)

.PHONY: setup setup-run run dev build start test test-only model openapi openapi-check config-doc config-doc-check client client-check neo4j bench bench-context bench-lexical bench-nrt bench-namespaces bench-replicas bench-concurrency bench-cpu-bound bench-node-runtimes bench-qdrant-cluster quality charts fuzz load overload startup crash typecheck clean

setup:          ## npm packages, the model, redis-server and the Neo4j jars (idempotent)
	bash scripts/setup.sh all

setup-run:
	bash scripts/setup.sh run

run: setup-run build   ## build and serve on the embedded default (loads the demo world into an empty store)
	npm start

dev: setup-run         ## serve from source with tsx
	$(TSX) src/http/server.ts

build:
	npm run build

test: setup test-only  ## set up, then run every test (the OpenAPI drift check is one of them)

test-only:
	npx vitest run

typecheck:
	npm run typecheck

model:          ## put bge-small-zh-v1.5 under MODEL_DIR (hub, else Maven Central)
	$(TSX) scripts/fetch-model.ts

openapi:        ## regenerate openapi/openapi.json from the route schemas
	$(TSX) scripts/openapi.ts write

openapi-check:
	$(TSX) scripts/openapi.ts check

config-doc:     ## regenerate docs/configuration.md from the config schema (src/config.ts); checks .env.example
	$(TSX) scripts/config-doc.ts write

config-doc-check:
	$(TSX) scripts/config-doc.ts check

client:         ## regenerate clients/typescript/schema.d.ts from openapi/openapi.json (openapi-typescript)
	$(TSX) scripts/client.ts write

client-check:
	$(TSX) scripts/client.ts check

neo4j:          ## a Neo4j 5.26 Community from Maven artifacts in the foreground (Bolt port printed)
	$(TSX) scripts/neo4j/server.ts

bench:          ## benchmarks (not timed tests); results and SVG charts under bench/results/
	$(TSX) bench/hybrid.ts
	$(TSX) bench/embedder.ts
	$(TSX) bench/vector-store.ts
	$(TSX) bench/graphrag.ts
	$(TSX) bench/episodic.ts
	$(TSX) bench/analyzer.ts
	$(TSX) bench/lexical.ts
	$(TSX) bench/nrt.ts
	$(TSX) bench/namespaces.ts
	$(TSX) bench/charts.ts

bench-context:  ## packing cost of /context at max_tokens 2k and 16k, and the share of the budget filled on CMRC; bench/results/context.json
	nice -n 10 $(TSX) bench/context.ts

bench-lexical:  ## the analyzer and the lexical leg beside Lucene 9.12 (Java 17 + Maven) at 10k/50k/100k chunks; bench/results/analyzer.json, lexical.json
	$(TSX) bench/analyzer.ts
	$(TSX) bench/lexical.ts

bench-nrt:      ## one-document ingest/delete under query load at 10k/50k/100k, start-up, 200k ingest/persist/reload; bench/results/nrt.json
	$(TSX) bench/nrt.ts

bench-replicas:  ## two replicas over one Qdrant + Redis: hybrid vs embedded, write on A -> findable on B, answers/s with 1 and 2; bench/results/replicas-service.{json,md}, replicas.svg
	nice -n 10 $(TSX) bench/replicas-service.ts
	$(TSX) bench/charts.ts

bench-concurrency: ## 1/4/16/64 clients on hybrid, vector-only, lexical-only beside the previous main: answers/s, p50/p99, ratio to the CPU bound; bench/results/concurrency.json
	nice -n 10 $(TSX) bench/concurrency.ts

bench-cpu-bound: ## hybrid and the vector leg against the CPU bound at 1 and 16 clients (4 rounds of 8 s cells, each ratio with its min-max), this bench's client and the plain Python one (a connection per request, and kept) on one server, caches off; then where the CPU goes (--cpu-prof); CMRC_PATH=<CMRC 2018 dev>; bench/results/cpu-bound.json, cpu-bound-profile.json
	nice -n 5 $(TSX) bench/concurrency.ts --no-base --no-compare --python new,reuse --clients 1,16 --paths hybrid,vector --seconds 8 --repeats 4 --out bench/results/cpu-bound.json
	nice -n 5 $(TSX) bench/cpu-bound-profile.ts --clients 1,16

bench-node-runtimes: ## this commit on Node 20 (exported to .cache/node20-base, its node_modules installed by Node 20) beside it on Node 24: hybrid, episodic, nrt, ingest-rate, concurrency, as ratios; bench/results/node-runtimes.json
	nice -n 5 $(TSX) bench/node-runtimes.ts --rounds 2

bench-qdrant-cluster: ## hybrid p50/p99 and write -> findable on a 3-node Qdrant cluster beside one node, and while a node is down; bench/results/qdrant-cluster.json
	nice -n 10 $(TSX) bench/qdrant-cluster.ts

bench-namespaces: ## hybrid p50 in one of 10 namespaces of 10k chunks vs alone, and with a filter keeping 1% of 50k vs none; bench/results/namespaces.json
	$(TSX) bench/namespaces.ts

quality:
	$(TSX) bench/quality.ts
	$(TSX) bench/episodic-quality.ts
	$(TSX) bench/charts.ts

charts:         ## bench/results/*.svg from the committed bench/results/*.json
	$(TSX) bench/charts.ts

fuzz:           ## schemathesis over every route, at least 1,000 cases (builds and starts the service)
	npm run --silent build
	bash scripts/fuzz.sh

load: build      ## autocannon, 60 s at 64 connections per mode, uncached then cached beside a bare route; bench/results/load-*.json
	$(TSX) scripts/load.ts --unique --duration 60 --connections 64 $(if $(RECALL_URL),--url $(RECALL_URL)) --out bench/results/load-uncached.json
	$(TSX) scripts/load.ts --duration 60 --connections 64 $(if $(RECALL_URL),--url $(RECALL_URL)) --out bench/results/load-cached.json

overload: build  ## shedding only past real overload: capacity, 4x, 0.5x, 0.5x beside stress-ng --cpu 2; bench/results/overload.json
	@command -v stress-ng > /dev/null || { echo "make overload needs stress-ng (apt-get install stress-ng)"; exit 1; }
	$(TSX) bench/overload.ts --duration 60 --capacity-duration 30 --out bench/results/overload.json

startup: build   ## ms from `npm start` to /healthz and to /readyz, fresh DATA_DIR with the demo world; bench/results/startup.json
	$(TSX) bench/startup.ts --runs 3 --out bench/results/startup.json

crash: build     ## 200 rounds of SIGKILL during a mixed ingest, each restart checked store by store; bench/results/crash.json
	$(TSX) scripts/crash.ts --rounds $(or $(ROUNDS),200) --out bench/results/crash.json

clean:
	rm -rf dist .cache/vitest-report.json

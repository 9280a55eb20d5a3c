# recall: the two commands a newcomer needs are `make run` and `make test` (each sets up first).
SHELL := /bin/bash
TSX := node_modules/.bin/tsx

.PHONY: setup setup-run run dev build start test test-only model openapi openapi-check neo4j bench quality fuzz load typecheck clean

setup:          ## npm packages, the model, redis-server and the Neo4j jars (idempotent)
	bash scripts/setup.sh all

setup-run:
	bash scripts/setup.sh run

run: setup-run build   ## build and serve on the embedded default (loads the demo world into an empty store)
	npm start

dev: setup-run         ## serve from source with tsx
	$(TSX) src/server.ts

build:
	npm run build

test: setup test-only  ## set up, then run every test and the OpenAPI drift check

test-only:
	npx vitest run
	npm run --silent openapi:check

typecheck:
	npm run typecheck

model:          ## put bge-small-zh-v1.5 under MODEL_DIR (hub, else Maven Central)
	$(TSX) scripts/fetch-model.ts

openapi:        ## regenerate openapi/openapi.json from the route schemas
	$(TSX) scripts/openapi.ts write

openapi-check:
	$(TSX) scripts/openapi.ts check

neo4j:          ## a Neo4j 5.26 Community from Maven artifacts in the foreground (Bolt port printed)
	$(TSX) scripts/neo4j/server.ts

bench:          ## benchmarks and the quality harness; results under bench/results/
	$(TSX) bench/run-all.ts

quality:
	$(TSX) bench/quality.ts

fuzz:
	bash scripts/fuzz.sh

load:
	$(TSX) scripts/load.ts

clean:
	rm -rf dist .cache/vitest-report.json

#!/usr/bin/env bash
# Everything recall needs on a fresh machine, idempotent: Node (.node-version's major; scripts/node/ensure.sh installs
# it under .cache/node/ when the Node on PATH is older), npm packages, the embedding model, and for the
# tests Redis (Debian's redis-server), the Neo4j jars (from Maven Central) and, where ../shared/qdrant/ is
# there, its Qdrant server binary unpacked. Run by `make setup`.
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"   # all | run

node_bin=$(bash scripts/node/ensure.sh)
[ -n "$node_bin" ] && export PATH="$node_bin:$PATH"
echo "setup: Node $(node --version) ($(command -v node))"

# node_modules is installed again when the lockfile changed or when another Node major installed it (native addons
# and engines are checked against the Node that runs npm ci).
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ] ||
  [ "$(cat node_modules/.recall-node-major 2>/dev/null)" != "$node_major" ]; then
  echo "setup: installing npm packages with Node $(node --version), npm $(npm --version)"
  mkdir -p .cache
  # package.json's allowScripts denies every dependency's install script (npm 11); an older npm that still runs
  # them is told not to fetch onnxruntime's CUDA libraries. The log is what test/runtime/install-log.test.ts reads.
  ONNXRUNTIME_NODE_INSTALL_CUDA=skip ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund 2>&1 | tee .cache/npm-ci.log
  echo "$node_major" > node_modules/.recall-node-major
fi

echo "setup: embedding model"
node_modules/.bin/tsx scripts/fetch-model.ts

[ "$what" = "run" ] && exit 0

if ! command -v redis-server >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing redis-server (Debian)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  else
    echo "setup: the tests need redis-server on PATH (Debian: sudo apt-get install -y redis-server)" >&2
    exit 1
  fi
fi

# test/docker-proxy.test.ts runs docker/nginx.conf with Debian's nginx (skipped, saying so, where it is absent).
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing nginx-light (Debian)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null
  else
    echo "setup: the proxy test needs nginx (Debian: sudo apt-get install -y nginx-light); it is skipped without it" >&2
  fi
fi

# OCR (docs/formats.md, "OCR"): Tesseract 5 with the Chinese (simplified, traditional) and English data; poppler renders
# a PDF's pages without text for it; util-linux's flock holds the machine's OCR slots (Debian installs it everywhere).
# The OCR tests are skipped, saying so, where these are absent.
if ! command -v tesseract >/dev/null 2>&1 || ! tesseract --list-langs 2>/dev/null | grep -qx chi_sim || ! command -v pdftoppm >/dev/null 2>&1 || ! command -v flock >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing tesseract-ocr (chi-sim, chi-tra, eng) and poppler-utils (Debian)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tesseract-ocr tesseract-ocr-chi-sim tesseract-ocr-chi-tra tesseract-ocr-eng poppler-utils util-linux >/dev/null
  else
    echo "setup: OCR needs tesseract (Debian: sudo apt-get install -y tesseract-ocr tesseract-ocr-chi-sim tesseract-ocr-chi-tra tesseract-ocr-eng poppler-utils util-linux); its tests are skipped without it" >&2
  fi
fi

# The 1,000-page scan of test/corpus/ocr-long-scan.test.ts is drawn by ImageMagick and wrapped by img2pdf in its setup
# (too big to commit); the test is skipped, saying so, without them.
if ! command -v convert >/dev/null 2>&1 || ! command -v img2pdf >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing imagemagick and img2pdf (Debian)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq imagemagick img2pdf >/dev/null
  else
    echo "setup: the long-scan OCR test needs ImageMagick and img2pdf (Debian: sudo apt-get install -y imagemagick img2pdf); it is skipped without them" >&2
  fi
fi

# The /demo page's browser test drives Debian's chromium (playwright-core never downloads a browser here);
# a CJK font makes its screenshots readable.
if [ ! -x /usr/bin/chromium ] || ! fc-list 2>/dev/null | grep -qi 'wenquanyi\|noto sans cjk'; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing chromium and a CJK font (Debian)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-wqy-microhei >/dev/null
  else
    echo "setup: the browser test needs /usr/bin/chromium (Debian: sudo apt-get install -y chromium fonts-wqy-microhei)" >&2
    exit 1
  fi
fi

if [ -f scripts/neo4j/server.ts ]; then
  echo "setup: Neo4j jars from Maven Central"
  node_modules/.bin/tsx scripts/neo4j/server.ts --prepare
fi

if [ -x ../shared/qdrant/qdrant-bin ]; then
  echo "setup: Qdrant server binary ($(cat ../shared/qdrant/VERSION))"
  ../shared/qdrant/qdrant-bin >/dev/null
else
  echo "setup: no ../shared/qdrant/: the Qdrant-backed tests will be skipped unless QDRANT_URL names a server"
fi

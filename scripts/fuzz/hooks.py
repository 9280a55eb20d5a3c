"""schemathesis hooks of scripts/fuzz.sh (loaded through SCHEMATHESIS_HOOKS).

schemathesis.toml lets a few operations answer 503, because their refusals are by design: a replica that has not
seen `min_generation` in time, a job route while as many jobs run as run at once. A 503 of theirs must be one of
those refusals, named by its `code`; any other 503 (a store or the embedder down) fails the run as it would anywhere.
"""
import schemathesis

STALE = {"RECALL_STALE_REPLICA"}
EXPECTED_503_CODES = {
    "GET /retrieve": STALE,
    "POST /retrieve": STALE,
    "GET /retrieve/compare": STALE,
    "POST /retrieve/compare": STALE,
    "GET /documents": STALE,
    "GET /documents/{id}": STALE,
    "POST /context": STALE,
    "POST /ingest/files": {"RECALL_INGEST_BUSY"},
    "POST /ingest/documents": {"RECALL_INGEST_BUSY"},
    "POST /evaluate": {"RECALL_EVALUATION_BUSY"},
}


@schemathesis.check
def expected_503_only(ctx, response, case):
    """A 503 where the config allows one is one of the refusals it allows it for."""
    if response.status_code != 503:
        return None
    label = case.operation.label
    allowed = EXPECTED_503_CODES.get(label)
    if allowed is None:
        return None  # not_a_server_error already fails a 503 here
    try:
        code = response.json().get("code")
    except Exception:
        code = None
    if code not in allowed:
        raise AssertionError(f"{label} answered 503 with code {code!r}; only {sorted(allowed)} are expected refusals")
    return None

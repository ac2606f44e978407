"""Reading a benchmark result (docs/benchmarking.md, schema tileinfer-bench-1)
in the scripts that take one, with their one-line errors."""
import json
import sys

SCHEMA = "tileinfer-bench-1"


def failer(tool):
    """fail(message): prints 'tool: error: message' to stderr and exits 1."""
    def fail(message):
        print(f"{tool}: error: {message}", file=sys.stderr)
        sys.exit(1)
    return fail


def load(path, fail):
    """The result at path, or fail() with why it cannot be read."""
    try:
        with open(path) as f:
            result = json.load(f)
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    except ValueError as e:
        fail(f"{path}: not JSON: {e}")
    if not isinstance(result, dict) or result.get("schema") != SCHEMA:
        fail(f"{path}: not a {SCHEMA} result")
    return result

"""The local runtime: runs template.yaml's functions, HTTP API and WebSocket API on one machine.

`python -m infra.local serve` stands in for AWS (API Gateway, Lambda, DynamoDB Streams) so the
end-to-end tests and developers can use the real handlers without Docker or an AWS account.
"""

import sys
from pathlib import Path

# The local runtime uses the shared package itself (migrations), as Lambda functions see it in
# their layer: make it importable however the runtime is started.
_SHARED = str(Path(__file__).resolve().parents[2] / "layers" / "shared")
if _SHARED not in sys.path:
    sys.path.append(_SHARED)

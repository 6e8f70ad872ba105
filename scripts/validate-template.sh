#!/usr/bin/env bash
# CI validation of template.yaml, offline (no AWS credentials, no Docker):
#   1. sam validate --lint           SAM-aware cfn-lint on the SAM template itself
#   2. SAM transform (samtranslator) the template -> plain CloudFormation JSON, then cfn-lint on that,
#      which checks the resources SAM generates (roles, permissions, routes, the HTTP API body).
#   3. --build: sam build (python3.13/arm64 layers and functions; wheels from PyPI, no container),
#      then a check that the layers ship their bytecode (scripts/check_layer_bytecode.py).
# Exits non-zero on the first failing step. Usage: scripts/validate-template.sh [--build]
#
# Tools: SAM CLI from .venv-sam (or SAM=/path/to/sam); samtranslator is taken from the same
# environment as sam; cfn-lint from .venv-sam, .venv or PATH (or CFN_LINT=...).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

build=false
for arg in "$@"; do
  case "$arg" in
    --build) build=true ;;
    -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done

export SAM_CLI_TELEMETRY=0
# The transform only needs a region for partition/ARN generation; nothing calls AWS.
export AWS_DEFAULT_REGION="${AWS_DEFAULT_REGION:-us-east-1}"
export AWS_REGION="${AWS_REGION:-$AWS_DEFAULT_REGION}"

first_existing() {
  for candidate in "$@"; do
    if [[ -n "$candidate" && -x "$candidate" ]]; then echo "$candidate"; return 0; fi
  done
  return 1
}

# Versions the template is validated with; .venv-sam is created with them when no SAM CLI exists
# (a fresh CI machine). The SAM CLI gets its own venv because it pins its own boto3.
SAM_CLI_VERSION=1.170.0
CFN_LINT_VERSION=1.58.0
if [[ -z "${SAM:-}" ]] && ! SAM="$(first_existing "$repo_root/.venv-sam/bin/sam" "$(command -v sam || true)")"; then
  echo "==> no SAM CLI found: creating .venv-sam (aws-sam-cli==$SAM_CLI_VERSION, cfn-lint==$CFN_LINT_VERSION)"
  python3 -m venv "$repo_root/.venv-sam"
  "$repo_root/.venv-sam/bin/python" -m pip install --quiet --disable-pip-version-check \
    "aws-sam-cli==$SAM_CLI_VERSION" "cfn-lint==$CFN_LINT_VERSION"
  SAM="$repo_root/.venv-sam/bin/sam"
fi
SAM_PYTHON="${SAM_PYTHON:-$(dirname "$SAM")/python}"
[[ -x "$SAM_PYTHON" ]] || SAM_PYTHON="$(command -v python3)"
CFN_LINT="${CFN_LINT:-$(first_existing "$repo_root/.venv-sam/bin/cfn-lint" "$repo_root/.venv/bin/cfn-lint" "$(command -v cfn-lint || true)")}" || {
  echo "cfn-lint not found (set CFN_LINT=/path/to/cfn-lint)" >&2; exit 2; }

template="template.yaml"
workdir="$(mktemp -d)"
trap '[[ -n "${KEEP_TRANSFORMED:-}" ]] && echo "kept $workdir" || rm -rf "$workdir"' EXIT
transformed="$workdir/template.transformed.json"

step() { printf '\n==> %s\n' "$*"; }

step "sam validate --lint ($("$SAM" --version))"
"$SAM" validate --lint -t "$template"

step "SAM transform -> $transformed"
"$SAM_PYTHON" - "$template" "$transformed" <<'PY'
"""Translate a SAM template to CloudFormation offline, as `sam validate` does internally."""
import json
import sys

from samtranslator.internal.managed_policies import get_bundled_managed_policy_map
from samtranslator.model.exceptions import InvalidDocumentException
from samtranslator.translator.transform import transform
from samtranslator.yaml_helper import yaml_parse

source, target = sys.argv[1], sys.argv[2]


class BundledPolicyLoader:
    """Managed policy name -> ARN from the map bundled with samtranslator (no IAM call)."""

    def load(self) -> dict[str, str]:
        return get_bundled_managed_policy_map("aws") or {}


def to_s3_uri(props: dict, key: str) -> None:
    # The translator accepts only S3 locations; local code paths get a dummy one (like sam validate).
    value = props.get(key)
    if isinstance(value, str) and not value.startswith("s3://"):
        props[key] = f"s3://validate-template-bucket/{value.strip('/') or 'root'}"


with open(source, encoding="utf-8") as fh:
    template = yaml_parse(fh.read())

to_s3_uri(template.get("Globals", {}).get("Function", {}), "CodeUri")
for resource in template.get("Resources", {}).values():
    props = resource.setdefault("Properties", {})
    if resource.get("Type") == "AWS::Serverless::Function":
        to_s3_uri(props, "CodeUri")
    elif resource.get("Type") == "AWS::Serverless::LayerVersion":
        to_s3_uri(props, "ContentUri")

try:
    result = transform(template, {}, BundledPolicyLoader())
except InvalidDocumentException as exc:
    for cause in exc.causes:
        print(f"SAM transform error: {cause.message}", file=sys.stderr)
    sys.exit(1)

with open(target, "w", encoding="utf-8") as fh:
    json.dump(result, fh, indent=1, sort_keys=False)
kinds: dict[str, int] = {}
for resource in result["Resources"].values():
    kinds[resource["Type"]] = kinds.get(resource["Type"], 0) + 1
print(f"{len(result['Resources'])} CloudFormation resources:")
for kind in sorted(kinds):
    print(f"  {kinds[kind]:3d}  {kind}")
PY

step "cfn-lint on the transformed template ($("$CFN_LINT" --version))"
# W2001 (unused parameter) is skipped here only: SAM inlines the parameters it embeds in the HTTP
# API's OpenAPI body (CorsAllowOrigin) with their values at transform time, so they look unused in
# the output. Step 1 has already run W2001 on the source template, where every parameter is used.
"$CFN_LINT" --regions "$AWS_DEFAULT_REGION" --ignore-checks W2001 -- "$transformed"
echo "cfn-lint: no findings"

if [[ "$build" == true ]]; then
  step "sam build (python3.13, arm64)"
  # pyenv (dev machines): expose python3.13 next to the default interpreter for the builder.
  if command -v pyenv >/dev/null 2>&1 && [[ -z "${PYENV_VERSION:-}" ]]; then
    export PYENV_VERSION="3.11.7:3.12.1:3.13.0"
  fi
  if ! command -v python3.13 >/dev/null 2>&1 || ! python3.13 --version >/dev/null 2>&1; then
    echo "sam build needs a python3.13 interpreter on PATH (the functions' runtime)" >&2
    exit 2
  fi
  started=$SECONDS
  "$SAM" build -t "$template" --parallel --cached
  echo "sam build: $((SECONDS - started)) s"

  step "layer bytecode: every module of the built layers has its Python 3.13 pyc"
  python3.13 scripts/check_layer_bytecode.py .aws-sam/build
fi

step "template OK"

#!/usr/bin/env bash
# Build and deploy the Warble stack, publish the web client, then apply the database migrations.
#
#   infra/deploy.sh [--config-env ENV] [--guided] [--no-web] [--no-migrate] [-- extra `sam deploy` args]
#
#   --config-env ENV  samconfig.toml environment (default: "default"; "prod" for production)
#   --guided          first deploy: let `sam deploy --guided` ask for the parameters and save them
#   --no-web          skip publishing web/ to the stack's S3 bucket behind CloudFront
#   --no-migrate      skip invoking MigrateFunction after the deploy
#
# Needs AWS credentials (any usual source: AWS_PROFILE, env vars, SSO) and the SAM CLI
# (.venv-sam/bin/sam, or `sam` on PATH, or SAM=/path/to/sam). No Docker: the layers are built
# from manylinux arm64 wheels. MigrateFunction runs in the VPC, so it is the only thing that can
# reach Aurora; it is invoked synchronously and a function error fails this script.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

config_env=default
guided=false
migrate=true
web=true
extra_deploy_args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --config-env) config_env="${2:?--config-env needs a value}"; shift 2 ;;
    --guided) guided=true; shift ;;
    --no-migrate) migrate=false; shift ;;
    --no-web) web=false; shift ;;
    --) shift; extra_deploy_args=("$@"); break ;;
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done

export SAM_CLI_TELEMETRY=0
if [[ -z "${SAM:-}" ]]; then
  if [[ -x "$repo_root/.venv-sam/bin/sam" ]]; then SAM="$repo_root/.venv-sam/bin/sam"
  else SAM="$(command -v sam)" || { echo "sam not found (set SAM=/path/to/sam)" >&2; exit 2; }
  fi
fi
SAM_PYTHON="$(dirname "$SAM")/python"
[[ -x "$SAM_PYTHON" ]] || SAM_PYTHON="$(command -v python3)"

# pyenv (dev machines): the builder needs a python3.13 interpreter on PATH.
if command -v pyenv >/dev/null 2>&1 && [[ -z "${PYENV_VERSION:-}" ]]; then
  export PYENV_VERSION="3.11.7:3.12.1:3.13.0"
fi

echo "==> sam build (config env: $config_env)"
"$SAM" build --config-env "$config_env"

echo "==> sam deploy"
deploy_args=(--config-env "$config_env")
[[ "$guided" == true ]] && deploy_args+=(--guided)
"$SAM" deploy "${deploy_args[@]}" ${extra_deploy_args[@]+"${extra_deploy_args[@]}"}

if [[ "$web" == true ]]; then
  echo "==> web client: publishing web/ with the stack's HttpApiUrl and WebSocketUrl"
  "$SAM_PYTHON" infra/publish_web.py --config-env "$config_env"
fi

if [[ "$migrate" != true ]]; then
  echo "==> migrations skipped (--no-migrate)"
  exit 0
fi

# Invoke MigrateFunction with boto3 (from SAM's own environment) rather than `sam remote invoke`:
# that uses botocore's default 60 s read timeout and retries, so a long migration would be
# invoked twice. Here the timeout exceeds the function's (300 s) and retries are off.
echo "==> migrate: invoking MigrateFunction"
"$SAM_PYTHON" - "$config_env" <<'PY'
import json
import sys
import tomllib

import boto3
from botocore.config import Config

env = sys.argv[1]
with open("samconfig.toml", "rb") as fh:
    config = tomllib.load(fh).get(env, {})
params = {**config.get("global", {}).get("parameters", {}), **config.get("deploy", {}).get("parameters", {})}
stack_name = params.get("stack_name")
if not stack_name:
    sys.exit(f"no stack_name in samconfig.toml for config env {env!r}")
session = boto3.Session(profile_name=params.get("profile"), region_name=params.get("region"))

stack = session.client("cloudformation").describe_stacks(StackName=stack_name)["Stacks"][0]
outputs = {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}
function_name = outputs["MigrateFunctionName"]
print(f"stack {stack_name}: invoking {function_name}")

lambda_client = session.client(
    "lambda", config=Config(read_timeout=330, connect_timeout=10, retries={"total_max_attempts": 1})
)
response = lambda_client.invoke(
    FunctionName=function_name,
    InvocationType="RequestResponse",
    Payload=b"{}",
)
payload = response["Payload"].read().decode("utf-8")
print("migrate result:", payload)
if response.get("FunctionError"):
    sys.exit(f"MigrateFunction failed ({response['FunctionError']})")

print("\nstack outputs:")
for key in sorted(outputs):
    print(f"  {key:24} {outputs[key]}")
PY

"""One Lambda "container": imports a handler once and serves invocations over a private pipe.

The runtime (`lambdas.LambdaRuntime`) starts `python <this file> '<json config>'` with the
function's environment and its CodeUri as the working directory. The worker talks JSON lines on
duplicates of the original stdin/stdout; fd 1 is pointed at stderr so that anything the handler
prints (Powertools' JSON logs included) goes to the log and never corrupts the protocol.

Standard library only: it must not import anything that would shadow the handler's own modules.
"""

from __future__ import annotations

import decimal
import importlib
import io
import json
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any


def _take_protocol_fds() -> tuple[int, int]:
    """Move the protocol to private fds so that nothing the handler writes can reach it."""
    proto_in = os.dup(0)
    proto_out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return proto_in, proto_out


def _set_sys_path(paths: list[str]) -> None:
    """A Lambda function sees its code first, then its layers (/opt/python), then the runtime.

    The script's own directory (infra/local, sys.path[0]) holds modules named like a handler's
    could be (events, template): it must not be importable from the function.
    """
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    sys.path[0:0] = paths


class LambdaContext:
    """The context object of the Python runtime (awslambdaric's LambdaContext, same fields)."""

    def __init__(self, request_id: str, deadline_ms: int, invoked_function_arn: str) -> None:
        self.aws_request_id = request_id
        self.log_group_name = os.environ.get("AWS_LAMBDA_LOG_GROUP_NAME")
        self.log_stream_name = os.environ.get("AWS_LAMBDA_LOG_STREAM_NAME")
        self.function_name = os.environ.get("AWS_LAMBDA_FUNCTION_NAME")
        # A string, exactly as in the real runtime.
        self.memory_limit_in_mb = os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE")
        self.function_version = os.environ.get("AWS_LAMBDA_FUNCTION_VERSION")
        self.invoked_function_arn = invoked_function_arn
        self.tenant_id = None
        self.client_context = None
        self.identity = None
        self._deadline_ms = deadline_ms

    def get_remaining_time_in_millis(self) -> int:
        return max(self._deadline_ms - int(time.time() * 1000), 0)

    def log(self, message: str) -> None:
        sys.stdout.write(message)
        sys.stdout.flush()

    def __repr__(self) -> str:
        return (
            f"LambdaContext([aws_request_id={self.aws_request_id},"
            f"function_name={self.function_name},function_version={self.function_version}])"
        )


class FaultError(Exception):
    """A runtime fault (bad handler name, import failure) reported with Lambda's error type."""

    def __init__(self, error_type: str, message: str, trace: list[str] | None = None) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message
        self.trace = trace or []


def _error(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, FaultError):
        return {"errorType": exc.error_type, "errorMessage": exc.message, "stackTrace": exc.trace}
    # Like the real runtime, the trace starts at the handler: the worker's own frame is noise.
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if os.path.abspath(frame.filename) != os.path.abspath(__file__)
    ]
    return {
        "errorType": type(exc).__name__,
        "errorMessage": str(exc),
        "stackTrace": traceback.format_list(frames),
    }


def _load_handler(handler: str) -> Callable[[Any, Any], Any]:
    """Import the handler module the way the Lambda Python runtime does (and fail like it)."""
    try:
        module_name, function_name = handler.rsplit(".", 1)
    except ValueError as exc:
        raise FaultError("Runtime.MalformedHandlerName", f"Bad handler '{handler}': {exc}") from exc
    try:
        module = importlib.import_module(module_name.replace("/", "."))
    except ImportError as exc:
        raise FaultError(
            "Runtime.ImportModuleError", f"Unable to import module '{module_name}': {exc}"
        ) from exc
    except SyntaxError as exc:
        trace = [f'  File "{exc.filename}" Line {exc.lineno}\n    {exc.text}']
        raise FaultError(
            "Runtime.UserCodeSyntaxError",
            f"Syntax error in module '{module_name}': {exc}",
            trace,
        ) from exc
    function = getattr(module, function_name, None)
    if function is None:
        raise FaultError(
            "Runtime.HandlerNotFound",
            f"Handler '{function_name}' missing on module '{module_name}'",
        )
    return function


def _decimal_default(value: Any) -> Any:
    # The real runtime serialises Decimal (DynamoDB's number type) as a float.
    if isinstance(value, decimal.Decimal):
        return float(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# A synchronous invocation's answer is at most 6 MB (Lambda quotas: "Invocation payload
# (request and response) 6 MB each for synchronous"); a larger one fails, and API Gateway
# answers 500 as for any failed invocation.
RESPONSE_LIMIT = 6_291_456


def _too_large() -> dict[str, Any]:
    return {
        "errorType": "Function.ResponseSizeTooLarge",
        "errorMessage": "Response payload size exceeded maximum allowed payload size "
        f"({RESPONSE_LIMIT} bytes).",
        "stackTrace": [],
    }


def _watch_parent(parent_pid: int) -> None:
    """Exit when the runtime dies, even while a handler is busy, so no worker is orphaned."""
    while True:
        time.sleep(0.5)
        if os.getppid() != parent_pid:
            os._exit(0)


def _send(out: Any, message: dict[str, Any]) -> None:
    out.write(json.dumps(message).encode() + b"\n")
    out.flush()


def _log_error(error: dict[str, Any]) -> None:
    # The Python runtime logs "[ERROR] Type: message" and the trace for every failed invocation.
    trace = "".join(error.get("stackTrace") or [])
    sys.stderr.write(f"[ERROR] {error['errorType']}: {error['errorMessage']}\n{trace}")
    sys.stderr.flush()


def main() -> None:
    proto_in_fd, proto_out_fd = _take_protocol_fds()
    config = json.loads(sys.argv[1])
    _set_sys_path(config["paths"])
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(line_buffering=True)
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()

    proto_in = os.fdopen(proto_in_fd, "rb")
    proto_out = os.fdopen(proto_out_fd, "wb")
    started = time.perf_counter()
    try:
        handler = _load_handler(config["handler"])
    except BaseException as exc:
        error = _error(exc)
        _log_error(error)
        _send(proto_out, {"ready": False, "error": error})
        return
    _send(proto_out, {"ready": True, "init_ms": (time.perf_counter() - started) * 1000})

    for line in proto_in:
        request = json.loads(line)
        context = LambdaContext(
            request["request_id"], request["deadline_ms"], request["invoked_function_arn"]
        )
        try:
            result = handler(request["event"], context)
        except Exception as exc:
            error = _error(exc)
            _log_error(error)
            response: dict[str, Any] = {"ok": False, "error": error}
        else:
            try:
                text = json.dumps(result, default=_decimal_default)
                if len(text) > RESPONSE_LIMIT:  # ASCII (ensure_ascii): characters are bytes
                    response = {"ok": False, "error": _too_large()}
                else:
                    response = {"ok": True, "payload": json.loads(text)}
            except (TypeError, ValueError) as exc:
                response = {
                    "ok": False,
                    "error": {
                        "errorType": "Runtime.MarshalError",
                        "errorMessage": f"Unable to marshal response: {exc}",
                        "stackTrace": [],
                    },
                }
        sys.stdout.flush()
        sys.stderr.flush()
        _send(proto_out, response)


if __name__ == "__main__":
    main()

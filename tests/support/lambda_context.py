"""A Lambda context with the attributes Powertools reads, for handlers invoked in process."""

from __future__ import annotations


class Context:
    function_name = "test"
    function_version = "$LATEST"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:test"
    memory_limit_in_mb = 256
    aws_request_id = "c6af9ac6-7b61-11e6-9a41-93e812345678"
    log_group_name = "/aws/lambda/test"
    log_stream_name = "stream"

    def get_remaining_time_in_millis(self) -> int:
        return 10_000

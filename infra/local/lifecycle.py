"""S3's lifecycle rules, applied to the local buckets (moto stores none and runs none).

S3 runs a bucket's rules about once a day: an object expires at the first midnight UTC at least
``ExpirationInDays`` days after it was written, if its key has the rule's prefix and it carries
every tag of the rule's TagFilters; an incomplete multipart upload is aborted
``DaysAfterInitiation`` days after it started. `serve` applies them every hour
(`LIFECYCLE_PERIOD`), and a test can apply them at any `now`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from infra.local.buckets import BucketSpec

LIFECYCLE_PERIOD = 3600.0


def _due(written: datetime, days: int) -> datetime:
    later = written.astimezone(UTC) + timedelta(days=days)
    midnight = later.replace(hour=0, minute=0, second=0, microsecond=0)
    return midnight if midnight == later else midnight + timedelta(days=1)


def apply_lifecycle(s3: Any, spec: BucketSpec, now: datetime | None = None) -> list[str]:
    """Expire what the bucket's enabled rules say is due at ``now``; the keys deleted."""
    now = now or datetime.now(UTC)
    deleted: list[str] = []
    for rule in spec.lifecycle_rules:
        if rule.get("Status") != "Enabled":
            continue
        prefix = str(rule.get("Prefix") or "")
        tags = {str(t["Key"]): str(t["Value"]) for t in rule.get("TagFilters") or []}
        days = rule.get("ExpirationInDays")
        if days is not None:
            pages = s3.get_paginator("list_objects_v2").paginate(Bucket=spec.name, Prefix=prefix)
            for page in pages:
                for found in page.get("Contents") or []:
                    if now < _due(found["LastModified"], int(days)):
                        continue
                    if tags:
                        held = s3.get_object_tagging(Bucket=spec.name, Key=found["Key"])["TagSet"]
                        if not tags.items() <= {(t["Key"], t["Value"]) for t in held}:
                            continue
                    s3.delete_object(Bucket=spec.name, Key=found["Key"])
                    deleted.append(found["Key"])
        abort = (rule.get("AbortIncompleteMultipartUpload") or {}).get("DaysAfterInitiation")
        if abort is not None:
            uploads = (
                s3.list_multipart_uploads(Bucket=spec.name, Prefix=prefix).get("Uploads") or []
            )
            for upload in uploads:
                if now >= _due(upload["Initiated"], int(abort)):
                    s3.abort_multipart_upload(
                        Bucket=spec.name, Key=upload["Key"], UploadId=upload["UploadId"]
                    )
    return deleted

"""docs/capacity.md's generated section is what the committed measurements give: regenerated
here from docs/capacity-measurements.json (no stack, no network) and compared byte for byte,
so a change to the model or to template.yaml's profiles that moves a figure fails until the
document is regenerated (`python -m bench.capacity --model-only`)."""

from __future__ import annotations

from bench import capacity


def test_the_generated_section_is_the_committed_measurements_model() -> None:
    saved = capacity.saved_measurements()

    text, _, _ = capacity.generated(saved["capacity"], capacity.inputs_from(saved))

    assert text == capacity.doc_section(capacity.DOC.read_text()), (
        "docs/capacity.md is stale: run `python -m bench.capacity --model-only`"
    )

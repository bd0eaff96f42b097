"""An unknown field in a spec is named with the fields it could have been, spelled as specs
are written: snake_case (issue 20, item 7)."""

from __future__ import annotations

import pytest

from optimizer.batch.spec import spec_from_document
from optimizer.errors import InvalidInput


def _error(scenario: dict[str, object]) -> InvalidInput:
    with pytest.raises(InvalidInput) as err:
        spec_from_document({"catalogs": ["infiniband-ndr"], "scenarios": [scenario]})
    return err.value


def test_an_unknown_nested_field_lists_its_message_fields_in_snake_case() -> None:
    err = _error({"workload": {"modle": "bert-large"}})
    assert err.field == "scenarios[0]"
    assert "workload has no field named 'modle'" in str(err)
    assert "training_tokens" in str(err) and "micro_batch_size" in str(err)
    assert "trainingTokens" not in str(err) and "microBatchSize" not in str(err)


def test_an_unknown_top_level_field_lists_the_request_fields_in_snake_case() -> None:
    err = _error({"topk": 1})
    assert "OptimizeRequest has no field named 'topk'" in str(err)
    assert "top_k" in str(err) and "allowed_fabrics" in str(err) and "topK" not in str(err)


def test_an_unknown_field_in_the_defaults_is_named_too() -> None:
    with pytest.raises(InvalidInput, match="constraints has no field named 'budget'"):
        spec_from_document(
            {"catalogs": ["infiniband-ndr"], "defaults": {"constraints": {"budget": 1}}}
        )


def test_camel_case_keys_are_still_accepted() -> None:
    spec = spec_from_document(
        {"catalogs": ["infiniband-ndr"], "scenarios": [{"topK": 2, "workload": {"model": "x"}}]}
    )
    assert spec.rows[0].request.top_k == 2

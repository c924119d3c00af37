"""The JSON Schema (`qoslab schema`) accepts every scenario the core accepts."""

from __future__ import annotations

import json
import tomllib

import jsonschema
import pytest

import qoslab
from conftest import GOOD, SCENARIOS, files

ALL = sorted(SCENARIOS.rglob("*.toml")) + list(files(GOOD))


def test_schema_is_a_valid_json_schema():
    schema = json.loads(qoslab.schema())
    jsonschema.validators.validator_for(schema).check_schema(schema)


@pytest.mark.parametrize("path", ALL, ids=lambda p: str(p.relative_to(p.parents[1])))
def test_valid_scenarios_satisfy_the_schema(path):
    qoslab.load(path)  # the core accepts it...
    schema = json.loads(qoslab.schema())
    jsonschema.validate(tomllib.loads(path.read_text()), schema)  # ...and so does the schema

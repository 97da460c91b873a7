"""A script recorded before the foundations moved (issue 35) imports from the old homes; exported
again, it imports from the new ones, and every name it imports exists there."""

from __future__ import annotations

import importlib

from dpcore.release.exports import _imports_first


def test_a_recorded_scripts_old_imports_point_at_the_new_homes():
    body = (
        "from dpcore.privacy_unit import PrivacyUnit\n"
        "from dpcore.engines import aggregate_mean, DuckDBEngine\n"
        "unit = PrivacyUnit\n"
    )
    imports = _imports_first(body).split("\n\n")[0].splitlines()
    assert sorted(imports) == [
        "from dpcore.analyses.mean.aggregate import aggregate_mean",
        "from dpcore.engines import DuckDBEngine",
        "from dpcore.foundations.privacy_unit import PrivacyUnit",
    ]
    for line in imports:
        module, names = line.removeprefix("from ").split(" import ")
        assert all(hasattr(importlib.import_module(module), n) for n in names.split(", "))

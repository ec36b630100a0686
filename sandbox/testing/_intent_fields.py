"""The contract's ``intent_fields`` property: every task type declares the fields its intents hold.

Each field a generated intent holds must be declared (by its path, or an ancestor's), with the type its values
have; a column field must name a table and column of the domain's metadata; an enumeration value must be one of
its declared values. A benchmark domain declares fields for every task type; a light one may declare none (its
tickets then need a recorded intent to be replayed).
"""

from __future__ import annotations

from collections.abc import Sequence

from passhat.sandbox.domain import Domain, Scenario, leaves
from passhat.sandbox.inference import field_for


def intent_field_problems(domain: Domain, scenarios: Sequence[Scenario]) -> list[str]:
    """What breaks the property (empty when it holds)."""
    problems: list[str] = []
    for name, task in domain.task_types.items():
        if not task.intent_fields:
            if domain.grade == "benchmark":
                problems.append(f"{name}: declares no intent fields")
            continue
        for path, spec in task.intent_fields.items():
            if spec.source == "column":
                table = domain.metadata.tables.get(spec.table)
                if table is None or spec.column_name not in table.c:
                    problems.append(f"{name}: field {path} names {spec.column!r}, not a column of the domain's tables")
    for scenario in scenarios:
        task = domain.task_type(scenario.task_type)
        if not task.intent_fields:
            continue
        for path, value in leaves(dict(scenario.intent)):
            covering = field_for(task, path)
            if covering is None:
                problems.append(f"{task.name}: the intent's field {path} is not declared")
            elif value is not None and task.intent_fields.get(path) is covering and not covering.accepts(value):
                problems.append(f"{task.name}: field {path} is declared {covering.type}, but holds {value!r}")
            elif value is not None and covering.source == "enum" and str(value) not in covering.values:
                problems.append(f"{task.name}: field {path} holds {value!r}, not one of {list(covering.values)}")
    return sorted(set(problems))

"""What every table of passhat.toml shares: unknown keys refused, values of ``${NAME}`` references read as their
keys' types (`EnvText`), and checks across keys reported once per pass of `validate_config` (`CheckError`)."""

from __future__ import annotations

import functools
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError, ValidationInfo, model_validator

__all__ = ["REPORTED", "CheckError", "EnvText", "Table", "refuse"]


class EnvText(str):
    """A string a ``${NAME}`` reference in passhat.toml made. The environment holds only strings, so such a value is
    read as its key's type (``port = "${SMTP_PORT:-25}"`` is the number 25, ``enabled = "${ON:-false}"`` false),
    where a value written in the file must have its key's type already."""


#: The validation context's key for the checks across keys already reported: `validate_config` validates again
#: without them, so that the checks they stood in front of (and those of the tables around them) report too.
REPORTED = "reported"


class CheckError(ValueError):
    """A check across keys of a table found a problem; ``keys`` are the keys it reads, as paths in that table."""

    def __init__(self, message: str, keys: tuple[str, ...]) -> None:
        super().__init__(message)
        self.keys = keys


def refuse(info: ValidationInfo, message: str, *keys: str) -> None:
    """Raise a check across ``keys``' problem, unless an earlier pass of `validate_config` reported it already."""
    reported = info.context.get(REPORTED) if isinstance(info.context, dict) else None
    if reported is None or message not in reported:
        raise CheckError(message, keys)


@functools.cache
def _adapter(annotation: Any) -> TypeAdapter[Any]:
    return TypeAdapter(annotation)


def _from_environment(annotation: Any, text: EnvText) -> Any:
    """``text`` as its key's ``annotation`` reads it ("25" the integer 25, "no" false); ``text`` itself when it is no
    such value, for the strict validation to name the key, the value and the type expected."""
    try:
        return _adapter(annotation).validate_python(str(text), strict=False)
    except (ValidationError, TypeError, ValueError):
        return text


class Table(BaseModel):
    """A TOML table: unknown keys are errors (a typo must not pass silently)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _environment_values(cls, data: Any) -> Any:
        """Values a ``${NAME}`` made, read as their keys' types (`EnvText`); every other value is validated as
        written (strictly, by `validate_config`)."""
        if not isinstance(data, dict) or not any(isinstance(value, EnvText) for value in data.values()):
            return data
        fields = cls.model_fields
        return {
            key: _from_environment(fields[key].annotation, value)
            if isinstance(value, EnvText) and key in fields
            else value
            for key, value in data.items()
        }

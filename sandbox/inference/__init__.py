"""Intent inference: the parameters of a ticket that recorded none, from what the customer said and the rows
its starting state holds (never from what the production agent wrote)."""

from passhat.sandbox.inference._model import PROVIDERS, ModelExtractor, ModelSettings, Provider, intent_schema
from passhat.sandbox.inference._result import INTENT_SOURCES, InferredIntent, IntentNotInferredError, IntentSource
from passhat.sandbox.inference._rows import LinkedRow, RowLinks, references
from passhat.sandbox.inference._rules import RuleExtractor, date_forms, field_for
from passhat.sandbox.inference._said import CustomerWords, said_form

__all__ = [
    "INTENT_SOURCES",
    "PROVIDERS",
    "CustomerWords",
    "InferredIntent",
    "IntentNotInferredError",
    "IntentSource",
    "LinkedRow",
    "ModelExtractor",
    "ModelSettings",
    "Provider",
    "RowLinks",
    "RuleExtractor",
    "date_forms",
    "field_for",
    "intent_schema",
    "references",
    "said_form",
]

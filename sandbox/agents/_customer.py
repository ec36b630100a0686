"""The offline simulated customer: states its goal, answers what it is asked, confirms, then ends."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from passhat.checks import ANY_ACTION
from passhat.sandbox.agents._conversation import Message, TrialContext
from passhat.sandbox.domain import CustomerScript

STOP_TEXT = "Thank you, that's all."
"""The scripted customer's last words: the message's `stop` ends the conversation (a model customer's `###STOP###`
token is read and taken out of its text the same way)."""


def _say(key: str, value: Any) -> str:
    label = key.replace("_", " ")
    if isinstance(value, list | tuple):
        value = ", ".join(str(v) for v in value)
    return f"My {label} is {value}."


_CONVERSATION_WORDS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("another payment", "other payment", "different payment", "another option", "instead"), "fallback"),
    (("confirm", "shall i", "go ahead", "proceed", "would you like me to"), "confirm"),
)
"""Words of the conversation itself, the same in every domain: asking for a second choice, or for a yes."""


def infer_asks(text: str, script: CustomerScript) -> tuple[str, ...]:
    """Fact keys a free-text agent question asks for (how the scripted customer talks to a model agent).

    A fact is asked for when the question uses one of the words the script gives for it (`asked_as`, else
    the key's own words); facts the customer does not know are matched the same way, so they can say so.
    """
    lowered = text.lower()
    if "?" not in lowered:
        return ()
    asks: list[str] = []
    for key in (*script.facts, *script.unknown):
        if key not in asks and any(word.lower() in lowered for word in script.words_for(key)):
            asks.append(key)
    for words, key in _CONVERSATION_WORDS:
        if any(word in lowered for word in words):
            asks.append(key)
    return tuple(asks)


class ScriptedCustomer:
    """A deterministic customer driven by a CustomerScript.

    It reveals a fact only when the agent asks for it (by key in `Message.asks`), says so when it does not
    know one, gives its fallback choice when the first one failed, answers "yes" to a confirmation request
    (and records that turn's consent: the action the agent's turn `proposes`, else any action it proposed),
    and ends the conversation only after a final agent turn (an action, a refusal or an answer): a
    confirmation request is not the end.
    """

    def __init__(self, script: CustomerScript, *, patience: int = 3) -> None:
        self._script = script
        self._patience = patience
        self._idle_turns = 0

    @classmethod
    def for_trial(cls, context: TrialContext) -> ScriptedCustomer:
        """The CustomerFactory form: a scripted customer for the trial's scenario."""
        return cls(context.script)

    async def opening(self) -> Message:
        """The first message: the goal and the facts the customer states up front."""
        facts = {key: self._script.facts[key] for key in self._script.stated if key in self._script.facts}
        return Message("customer", self._script.opening, facts=facts)

    async def respond(self, conversation: Sequence[Message]) -> Message:
        """Answer the agent's last turn."""
        last = conversation[-1]
        asks = last.asks or infer_asks(last.text, self._script)
        if last.final or (not last.asks and not asks and "?" not in last.text):
            return Message("customer", STOP_TEXT, stop=True)
        if not asks:
            self._idle_turns += 1
            if self._idle_turns > self._patience:
                return Message("customer", "I'll try again later.", stop=True)
            return Message("customer", f"Could you help me with this? {self._script.goal}")
        parts: list[str] = []
        facts: dict[str, Any] = {}
        consent: str | None = None
        for key in asks:
            if key == "confirm":
                parts.append("Yes, please go ahead.")
                facts["confirm"] = True
                consent = last.proposes or ANY_ACTION
            elif key == "fallback":
                if self._script.fallback:
                    facts.update(self._script.fallback)
                    parts.extend(_say(k, v) for k, v in self._script.fallback.items())
                else:
                    parts.append("I don't have another option.")
            elif key in self._script.facts:
                facts[key] = self._script.facts[key]
                parts.append(_say(key, self._script.facts[key]))
            else:
                parts.append(f"Sorry, I don't know my {key.replace('_', ' ')}.")
        return Message("customer", " ".join(parts), facts=facts, consent=consent)

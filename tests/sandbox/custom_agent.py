"""A user's own agent, loaded by `--agent custom_agent:make` (the module:function factory form)."""

from __future__ import annotations

from collections.abc import Sequence

from passhat.sandbox import Message, Toolbox, TrialContext


class PoliteRefuser:
    """Refuses every request and explains the return path: right for shipped-order cancellations only."""

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        return Message(
            "agent",
            "I'm sorry, I cannot cancel an order that has shipped. Once it is delivered you can return it.",
            final=True,
        )


def make(context: TrialContext) -> PoliteRefuser:
    return PoliteRefuser()

"""Sandboxes for replay: one template per domain, and a derived template per ticket whose rows differ from it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from passhat.checks import values_equal
from passhat.sandbox import Domain, RowImage, Sandbox


class SandboxPool:
    """Builds each domain's sandbox once, and a ticket's own sandbox only when its captured rows differ."""

    def __init__(self, *, seed: int = 0, size: str = "small", workdir: Path | None = None) -> None:
        self.seed = seed
        self.size = size
        self.workdir = workdir
        self._bases: dict[str, Sandbox] = {}
        self._derived: list[Sandbox] = []

    def base(self, domain: Domain) -> Sandbox:
        """The domain's sandbox on its seeded data."""
        if domain.name not in self._bases:
            folder = None if self.workdir is None else self.workdir / domain.name
            self._bases[domain.name] = Sandbox(domain, seed=self.seed, size=self.size, workdir=folder)
        return self._bases[domain.name]

    def for_ticket(self, domain: Domain, images: Sequence[RowImage]) -> Sandbox:
        """The sandbox a ticket's trials start from: the base, or the base with the ticket's rows laid over it."""
        base = self.base(domain)
        differing = [image for image in images if not _matches(base, image)]
        if not differing:
            return base
        derived = base.derive(differing)
        self._derived.append(derived)
        return derived

    def is_base(self, sandbox: Sandbox) -> bool:
        """Whether ``sandbox`` is a domain's base (shared by every ticket whose rows fit the seed)."""
        return any(sandbox is base for base in self._bases.values())

    def check_ticket(self, domain: Domain, images: Sequence[RowImage]) -> Sandbox:
        """The base sandbox, once the ticket's rows are known to fit it (`DomainError` as `for_ticket` raises):
        for trials that run elsewhere and derive the ticket's own sandbox there."""
        base = self.base(domain)
        differing = [image for image in images if not _matches(base, image)]
        if differing:
            base.check_overlay(differing)
        return base

    def release(self, sandbox: Sandbox) -> None:
        """Close a ticket's own sandbox once its trials are done (bases stay until `close`)."""
        if sandbox in self._derived:
            self._derived.remove(sandbox)
            sandbox.close()

    def close(self) -> None:
        for sandbox in [*self._derived, *self._bases.values()]:
            sandbox.close()
        self._derived.clear()
        self._bases.clear()


def _matches(base: Sandbox, image: RowImage) -> bool:
    """Whether the seed already holds the row as the image has it (then nothing needs laying)."""
    if image.table not in base.domain.metadata.tables:
        return False  # let derive() name the problem
    table = base.initial.table(image.table)
    if image.values is None and set(image.key) == set(table.primary_key):
        # A row the ticket inserted: absent from the seed under its key (one lookup, not a scan of the table).
        return tuple(image.key[name] for name in table.primary_key) not in table.rows
    row = base.initial.get(image.table, dict(image.key))
    if image.values is None:
        return row is None
    if row is None:
        return False
    return all(name in row and values_equal(row[name], value) for name, value in image.values.items())

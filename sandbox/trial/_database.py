"""A domain's template database, built once, and the per-trial copies made from it."""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
import uuid
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, MetaData, StaticPool, create_engine, event

from passhat.checks import Snapshot, StartingState, StateDiff, install_change_log
from passhat.sandbox.domain import Domain, DomainError, Scenario, load_domain
from passhat.sandbox.trial._overlay import RowImage, apply_overlay
from passhat.sandbox.trial._parking import EMPTY_IMAGE, CopyPool, TrialConnection, new_connection

RowidMap = Mapping[str, Mapping[int, tuple[Any, ...]]]
"""Per table: rowid -> primary-key values of the starting state (`StartingState.rowids`)."""


def sqlite_engine(path: Path | str) -> Engine:
    """An engine on a sandbox's SQLite file (foreign keys on). A sandbox's files are thrown away, never recovered:
    commits do not wait for the disk (each DDL statement is a commit of its own, so building a template waited on
    the disk about sixty times, seconds on a busy machine)."""
    engine = create_engine(f"sqlite:///{path}")
    event.listen(engine, "connect", _sandbox_pragmas)
    return engine


def _sandbox_pragmas(connection: sqlite3.Connection, _: object) -> None:
    connection.execute("PRAGMA foreign_keys=ON")
    connection.execute("PRAGMA synchronous=OFF")


def build_database(domain: Domain, path: Path, *, seed: int = 0, size: str = "small") -> None:
    """Create the domain's tables in a new SQLite file at `path` and fill them from the seed generator."""
    if size not in domain.sizes:
        raise DomainError(f"domain {domain.name!r} has no seed size {size!r}; choose one of {', '.join(domain.sizes)}")
    engine = sqlite_engine(path)
    try:
        domain.metadata.create_all(engine)
        with engine.begin() as connection:
            domain.seed(connection, seed, size)
    finally:
        engine.dispose()


@dataclass
class TrialDatabase:
    """One trial's own copy of the database: an engine, the raw connection or the file behind it."""

    engine: Engine
    path: Path | None
    raw: sqlite3.Connection | None = None

    def diff(self, initial: Snapshot, metadata: MetaData, starting: RowidMap) -> StateDiff:
        """The trial's row changes relative to the starting snapshot (`starting`: its rowid map)."""
        start = StartingState(initial, starting, metadata.tables)
        if self.raw is not None:
            return start.diff(self.raw)
        connection = sqlite3.connect(str(self.path))
        try:
            return start.diff(connection)
        finally:
            connection.close()

    def park_when_idle(self) -> None:
        """Hold no connection while the in-memory copy is unused (`TrialConnection`): for a trial whose tool
        server runs on this asyncio loop, called from within it. A file copy is left as it is."""
        if isinstance(self.raw, TrialConnection):
            self.raw.arm()

    def close(self) -> None:
        """Dispose of the engine and delete the file, or hand the in-memory copy's connection back to its
        sandbox (`TrialConnection.close`: a late statement from a tool server fails, reaching no other trial)."""
        if isinstance(self.raw, TrialConnection):
            self.raw.close()
            self.raw = None
            return
        self.engine.dispose()
        if self.raw is not None:
            self.raw.close()
        if self.path is not None:
            self.path.unlink(missing_ok=True)


class Sandbox:
    """A domain with its template database built once; hands out isolated per-trial copies.

    In-memory copies (SQLite backup API) serve in-process tool servers; file copies serve tool servers in
    another process (stdio). The change log is installed once on the template (`install_change_log`), so every
    copy inherits it, and the starting state's snapshot is taken once and shared by every trial's grading.
    """

    def __init__(
        self,
        domain: Domain | str,
        *,
        seed: int = 0,
        size: str = "small",
        workdir: Path | None = None,
        template: Path | None = None,
        rebase: StartingState | None = None,
        statements_of: Sandbox | None = None,
    ):
        self.domain = load_domain(domain) if isinstance(domain, str) else domain
        self.seed = seed
        self.size = size
        self.workdir = Path(tempfile.mkdtemp(prefix=f"passhat-{self.domain.name}-")) if workdir is None else workdir
        self._removal: weakref.finalize[Any, Any] | None = None
        if workdir is None:
            self._own_workdir()
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.template_path = template or self.workdir / f"{self.domain.name}-{seed}-{size}.sqlite"
        if not self.template_path.exists():
            build_database(self.domain, self.template_path, seed=seed, size=size)
        self.template = sqlite_engine(self.template_path)
        # A derived template's writes are logged against the sandbox it came from: only the tables they name are
        # read again (`StartingState.rebased`), the others' rows are shared with it.
        self.start = (
            install_change_log(self.template, metadata=self.domain.metadata)
            if rebase is None
            else rebase.rebased(self.template)
        )
        self.rowids = self.start.rowids
        master = new_connection()
        source = sqlite3.connect(self.template_path)
        try:
            source.backup(master)
        finally:
            source.close()
        # A trial's copy is the template's bytes laid into a connection an earlier trial used: SQLite keeps that
        # connection's prepared statements, which a fresh connection prepares again (1-3 ms a trial, more than
        # the copy itself). The pool's connections wait holding a one-page empty database, not a copy.
        self._image = master.serialize()
        # A derived sandbox (a ticket's own template: the same tables) takes its trials' connections from its
        # origin's spares, and keeps its origin's compiled statements (`derive`): its first trials neither prepare
        # nor compile every statement again (about 16 ms a retail ticket before, a third of its 5 trials' CPU).
        # The spares are the origin's to trim and close.
        self._owns_spares = statements_of is None
        if statements_of is None:
            master.deserialize(EMPTY_IMAGE)
            self._pool = CopyPool()
            self._pool.spare.append(master)
        else:
            master.close()
            self._pool = CopyPool.sharing(statements_of._pool)
        self._spare = self._pool.spare
        # Statements compile once for all trials, not once per trial engine.
        self._compiled_cache: dict[Any, Any] = {} if statements_of is None else statements_of._compiled_cache
        if statements_of is None:
            prototype = create_engine("sqlite://", poolclass=StaticPool)
            with prototype.connect():
                pass  # the first connection initialises the dialect
            self._dialect, self._memory_url = prototype.dialect, prototype.url
        else:
            self._dialect, self._memory_url = statements_of._dialect, statements_of._memory_url

    @property
    def initial(self) -> Snapshot:
        """The starting state (every row of every table), taken once."""
        return self.start.snapshot

    def scenarios(self, task_type: str | None = None, count: int = 20, *, seed: int = 0) -> list[Scenario]:
        """`count` scenarios of one task type, or of every task type when `task_type` is None."""
        names = [task_type] if task_type is not None else sorted(self.domain.task_types)
        found: list[Scenario] = []
        with self.template.connect() as connection:
            for name in names:
                found.extend(self.domain.task_type(name).scenarios(self.domain.name, connection, count, seed=seed))
        return found

    def derive(self, images: Sequence[RowImage], *, workdir: Path | None = None) -> Sandbox:
        """A sandbox whose starting state is this one's with captured row images laid over it.

        The k trials of a replayed production ticket start from the rows as that ticket saw them. The new
        sandbox owns its working directory unless ``workdir`` is given; close it when done.
        """
        target = Path(tempfile.mkdtemp(prefix=f"passhat-{self.domain.name}-ticket-")) if workdir is None else workdir
        target.mkdir(parents=True, exist_ok=True)
        path = target / f"{self.domain.name}-{self.seed}-{self.size}-{uuid.uuid4().hex[:8]}.sqlite"
        try:
            shutil.copyfile(self.template_path, path)
            connection = sqlite3.connect(path)
            try:
                connection.execute("PRAGMA synchronous=OFF")  # a sandbox's file: no waiting on the disk
                # The overlay's writes are logged; the new sandbox reads what they changed, then empties the log.
                apply_overlay(connection, self.domain.metadata, images)
            finally:
                connection.close()
            derived = Sandbox(
                self.domain, seed=self.seed, size=self.size, workdir=target, template=path, rebase=self.start,
                statements_of=self,
            )  # fmt: skip
        except BaseException:
            path.unlink(missing_ok=True)
            if workdir is None:
                shutil.rmtree(target, ignore_errors=True)
            raise
        if workdir is None:
            derived._own_workdir()
        return derived

    def _own_workdir(self) -> None:
        """The working directory is this sandbox's: removed by `close`, or when the sandbox is collected or the
        process exits without it (a script that never closed it, an exception), so no copy is left in the
        temporary directory."""
        self._removal = weakref.finalize(self, shutil.rmtree, self.workdir, ignore_errors=True)

    def check_overlay(self, images: Sequence[RowImage]) -> None:
        """Raise as :meth:`derive` would when ``images`` cannot be laid over this sandbox's rows, without making
        a sandbox: the rows are laid into an in-memory copy that is dropped (a driver whose trials run in worker
        processes settles this once per ticket, and the workers derive the sandbox themselves)."""
        connection = sqlite3.connect(":memory:")
        try:
            connection.deserialize(self._image)
            apply_overlay(connection, self.domain.metadata, images)
        finally:
            connection.close()

    def memory_copy(self) -> TrialDatabase:
        """An in-memory copy of the template (for a tool server in this process): laid into a connection from
        this sandbox's pool when first used, and parked between uses when `TrialDatabase.park_when_idle`."""
        copy = TrialConnection(self._image, self._pool)

        # Every copy's engine shares one initialised dialect, so statements compile once for all trials.
        def creator() -> Any:
            return copy

        # No reset when a checkout ends: a tool server may never return its connection, and a late rollback from
        # it must not reach the next trial this connection serves (`close` rolls back, then hands it on).
        engine = Engine(StaticPool(creator, reset_on_return=None), self._dialect, self._memory_url)
        return TrialDatabase(engine.execution_options(compiled_cache=self._compiled_cache), None, copy)

    def file_copy(self) -> TrialDatabase:
        """A file copy of the template (for a tool server in another process)."""
        path = self.workdir / f"trial-{uuid.uuid4().hex}.sqlite"
        shutil.copyfile(self.template_path, path)
        return TrialDatabase(sqlite_engine(path).execution_options(compiled_cache=self._compiled_cache), path)

    def trim(self, spares: int = 1) -> None:
        """Close the pool's connections beyond ``spares`` (each holds its prepared statements): a sandbox that no
        trial is using keeps only what its next trial reuses."""
        if not self._owns_spares:
            return  # its origin's
        with self._pool.lock:
            while len(self._spare) > spares:
                self._spare.pop().close()

    def close(self) -> None:
        """Release the template and delete the working directory if this sandbox made it."""
        self.template.dispose()
        if self._owns_spares:
            with self._pool.lock:
                for spare in self._spare:
                    spare.close()
                self._spare.clear()
        if self._removal is not None:
            self._removal()  # once: a second close, or the collection after it, does nothing

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

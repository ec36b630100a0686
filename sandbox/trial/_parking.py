"""A trial's in-memory database that holds no SQLite connection while the trial waits (on a model, most of its life).

A trial's database is the template's pages with the few its tools wrote. While it is in use it is a whole
in-memory SQLite database on a connection from its sandbox's pool, as before; once nothing has touched it for
`IDLE_SECONDS` (the agent is waiting on its model), it is *parked*: the pages that differ from the template's
are kept, and the connection goes back to the pool holding a one-page empty database. A waiting trial then holds
neither the copy (about 0.6 MB for retail at ``size = "small"``, and the page cache its reads filled, as much
again) nor a connection (its prepared statements, a few hundred kB more). The next statement, from a tool, the
grading or anything else, takes a connection from the pool and lays the template's bytes with those pages over
them into it first, so what it reads is byte for byte the database it left: a trial's outcome cannot tell
whether it was parked.

Parking needs the asyncio loop the trial runs on (it is scheduled on it) and is armed only for tool servers on
the trial's own loop (`TrialConnection.arm`): a server on another thread keeps its copy for the whole trial. A
database is only ever parked on the thread that armed it, and one used from any other thread (an agent's own
synchronous tool, which pydantic-ai runs on a worker thread, reading the trial's database through `deps`) is
disarmed at that first use and keeps its connection to the trial's end: a statement on another thread can never
find its connection emptied or handed to another trial under it.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import sqlite3
import threading
import time
from types import TracebackType
from typing import Any, Literal

IDLE_SECONDS = 0.05
"""A trial's database unused this long is parked (an agent between two tool calls of one turn is faster)."""

LIVE_LIMIT = 8
"""A sandbox's trials holding a connection at once, at most, beyond which the longest held idle one is parked
at once: trials that all wake together (one model's answers arriving at once) park without waiting out the
delay on a loop too busy to run its timers."""


def _empty_image() -> bytes:
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute("PRAGMA page_size=512")
        connection.execute("PRAGMA user_version=1")  # a database with a header page, not a zero-byte one
        return connection.serialize()
    finally:
        connection.close()


EMPTY_IMAGE = _empty_image()


def new_connection() -> sqlite3.Connection:
    """A pool's connection: in memory, usable from the thread a trial's tool server runs on."""
    return sqlite3.connect(":memory:", check_same_thread=False)


class CopyPool:
    """A sandbox's connections: the spare ones (each holding a one-page empty database and the statements it
    prepared for earlier trials), and the trials' databases holding one now, in the order they took it."""

    def __init__(self, limit: int = LIVE_LIMIT) -> None:
        self.spare: list[sqlite3.Connection] = []
        self.live: dict[int, TrialConnection] = {}
        self.limit = limit
        self.lock = threading.RLock()
        """Held while a connection changes hands (taken, parked, given back) and while a trial's use of its
        connection is decided: the trials of one sandbox may use it from more than one thread."""

    @classmethod
    def sharing(cls, origin: CopyPool) -> CopyPool:
        """A pool of its own trials (its own limit on those holding a connection) whose spare connections are
        ``origin``'s: a derived sandbox's (the same tables), whose trials then reuse the statements its origin's
        connections prepared."""
        pool = cls(origin.limit)
        pool.spare, pool.lock = origin.spare, origin.lock
        return pool

    def take(self, taker: TrialConnection) -> sqlite3.Connection:
        with self.lock:
            self.live[id(taker)] = taker
            if len(self.live) > self.limit:
                for other in list(self.live.values()):  # each parks only on the thread that armed it
                    if other is not taker and other.park_now() and len(self.live) <= self.limit:
                        break
            return self.spare.pop() if self.spare else new_connection()

    def give(self, giver: TrialConnection, connection: sqlite3.Connection | None) -> None:
        with self.lock:
            self.live.pop(id(giver), None)
            if connection is not None:
                self.spare.append(connection)


class TrialConnection(sqlite3.Connection):
    """One trial's database, as the DB-API connection its engine and its grading use.

    A stand-in: it opens no SQLite connection of its own (the base class's ``__init__`` is not called) but runs
    every statement on the pool connection it holds while in use. What it does not forward fails loudly
    (``sqlite3.ProgrammingError``) rather than reaching some other database.
    """

    def __init__(self, template: bytes, pool: CopyPool) -> None:  # a stand-in: no `super().__init__`
        self._template = template
        self._pool = pool
        size = int.from_bytes(template[16:18], "big")
        self._page = 65536 if size == 1 else size
        self._live: sqlite3.Connection | None = None
        self._pages: dict[int, bytes] = {}  # offset -> a page that differs from the template's
        self._size = len(template)  # the database's size in bytes when parked
        self._written = (0, 0)  # (rows changed, schema version) when last laid in: the same means nothing to keep
        self._armed = False
        self._home = 0  # the thread that armed parking (its asyncio loop's): the only one that parks
        self._idle = IDLE_SECONDS
        self._used = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self.parks = 0  # how many times this trial's database was parked
        self._closed = False

    # ------------------------------------------------------------------------------------------ the DB-API part

    def cursor(self, *args: Any, **kwargs: Any) -> Any:
        return self._use().cursor(*args, **kwargs)

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        return self._use().execute(*args, **kwargs)

    def executemany(self, *args: Any, **kwargs: Any) -> Any:
        return self._use().executemany(*args, **kwargs)

    def executescript(self, *args: Any, **kwargs: Any) -> Any:
        return self._use().executescript(*args, **kwargs)

    def serialize(self, *args: Any, **kwargs: Any) -> bytes:
        return self._use().serialize(*args, **kwargs)

    def backup(self, *args: Any, **kwargs: Any) -> None:
        self._use().backup(*args, **kwargs)

    def __enter__(self) -> TrialConnection:
        """``with connection:`` as on a connection of its own: a transaction committed at the end (rolled back on
        an error), on the database laid in for it."""
        self._use()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> Literal[False]:
        live = self._live
        if live is not None:  # else nothing was laid in, nothing is open
            live.__exit__(kind, error, trace)
        return False

    def commit(self) -> None:
        if self._live is not None:  # a parked database has nothing open
            self._live.commit()

    def rollback(self) -> None:
        if self._live is not None:
            self._live.rollback()

    @property
    def in_transaction(self) -> bool:
        return self._live is not None and self._live.in_transaction

    @property
    def total_changes(self) -> int:
        return self._use().total_changes

    def close(self) -> None:
        """Hand the pool connection back (its database emptied); the trial's database is gone."""
        self.disarm()
        with self._pool.lock:
            self._closed = True
            live, self._live = self._live, None
        if live is None:
            return
        try:
            live.rollback()
            live.deserialize(EMPTY_IMAGE)
        except sqlite3.Error:  # an open statement: this connection is not reused
            live.close()
            self._pool.give(self, None)
        else:
            self._pool.give(self, live)

    # ------------------------------------------------------------------------------------------ parking

    @property
    def parked(self) -> bool:
        """Holding no connection (parked, or not used yet)."""
        return self._live is None

    def arm(self, idle: float = IDLE_SECONDS) -> None:
        """Park the database once it has been unused for ``idle`` seconds; needs a running asyncio loop."""
        self._armed, self._idle = True, idle
        self._home = threading.get_ident()
        self._used = time.monotonic()
        self._schedule(idle)

    def disarm(self) -> None:
        """Stop parking (a parked database is still laid back in by its next statement)."""
        self._armed = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _use(self) -> sqlite3.Connection:
        live = self._live
        if live is not None and not self._armed:  # a disarmed database is never parked: no one takes it away
            return live
        with self._pool.lock:
            if self._armed and threading.get_ident() != self._home:
                self._armed = False  # used from another thread: laid in until the trial's end (its timer sees it)
            live = self._live
            if live is None:
                if self._closed:
                    raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
                live = self._wake()
            if self._armed:
                self._used = time.monotonic()
                if self._timer is None:
                    self._schedule(self._idle)
            return live

    def _schedule(self, delay: float) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # used outside a loop (a synchronous caller): never parked
            return
        self._timer = loop.call_later(delay, self._due)

    def _due(self) -> None:
        self._timer = None
        live = self._live
        if not self._armed or live is None:
            return
        waited = time.monotonic() - self._used
        if waited < self._idle or not self.park_now():
            self._schedule(max(self._idle - waited, 0.005))

    def park_now(self) -> bool:
        """Park the database now if it is armed, this is the thread that armed it, and nothing is open on it (no
        transaction, no statement)."""
        if not self._armed or threading.get_ident() != self._home:
            return False
        with self._pool.lock:
            live = self._live
            return self._armed and live is not None and not live.in_transaction and self._park(live)

    def _park(self, live: sqlite3.Connection) -> bool:
        written = _written(live)
        if written != self._written:  # written since laid in: keep the pages that now differ from the template's
            image, page, template = live.serialize(), self._page, self._template
            pages = {
                offset: image[offset : offset + page]
                for offset in range(0, len(image), page)
                if image[offset : offset + page] != template[offset : offset + page]
            }
            size = len(image)
        else:
            pages, size = self._pages, self._size
        try:
            live.deserialize(EMPTY_IMAGE)
        except sqlite3.Error:  # a statement still open on it: try again later
            return False
        self._pages, self._size, self._written = pages, size, written
        self._live = None
        self._pool.give(self, live)
        self.parks += 1
        return True

    def _wake(self) -> sqlite3.Connection:
        image: bytes | bytearray = self._template
        if self._pages or self._size != len(self._template):
            built = bytearray(self._template[: self._size])
            built.extend(bytes(self._size - len(built)))
            for offset, data in self._pages.items():
                built[offset : offset + len(data)] = data
            image = built
        live = self._pool.take(self)
        try:
            live.deserialize(image)
        except sqlite3.Error:  # the connection cannot take the image (an open statement): a fresh one takes it
            live.close()
            live = new_connection()
            live.deserialize(image)
        self._live = live
        self._written = _written(live)
        return live


def _written(connection: sqlite3.Connection) -> tuple[int, int]:
    """What tells whether a database was written: the rows its connection changed, and its schema's version."""
    (version,) = connection.execute("PRAGMA schema_version").fetchone()
    return connection.total_changes, int(version)


M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
COPY_THRESHOLD = 128 * 1024
"""Allocations this large get pages of their own (glibc's initial threshold, kept from rising)."""


def release_copies_to_the_system() -> bool:
    """Make this process hand a database copy's memory back to the system when the copy is freed.

    glibc raises its threshold for giving a large allocation pages of its own (``mmap``) to the size of any such
    allocation freed, so after the first parked copy every copy (about 0.6 MB) comes from the heap, where the
    small allocations made meanwhile keep the freed space from going back: a process whose trials park their
    copies stayed at the size of every copy live at once. Fixing the threshold at glibc's initial 128 KiB gives
    each copy its own pages, returned when it is freed. For a process that runs many trials (a replay worker);
    False where the allocator is not glibc's (it returns memory its own way).
    """
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(M_MMAP_THRESHOLD, COPY_THRESHOLD))
    except (OSError, AttributeError):
        return False

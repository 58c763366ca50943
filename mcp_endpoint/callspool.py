"""The call log's spool: the rows of calls that committed nothing, kept in a file of the
worker's own and written to the database in batches, so that a read pays no round trip for
its row.

A write tool's row is committed with its writes (``CallRecord.within``, in the call log).
Any other call (a read, a call whose writes were rolled back) has no transaction to share,
and its row would be an INSERT of its own. With ``LOG_SPOOL_DIR`` set, that row is instead
appended to the worker's spool file, one line of JSON written with one ``write(2)`` before
the answer is sent: it survives the worker's death (``kill -9``) in the kernel's page
cache, as a committed row would.

The rows reach the table in batches, one transaction each, written by a thread of the
worker once the oldest has waited :data:`BATCH_SECONDS` (or by the call that finds
:data:`BATCH_ROWS` waiting), at the worker's exit, and before the admin lists the call
log. A batch locks the file's :class:`~mcp_endpoint.models.CallSpoolMark` (how far into the
file the rows are written), writes the rows past it and moves it, in one transaction: a
crash before the commit writes the batch again from the file, a crash after it never
writes a row twice, and two processes writing the same file take turns.

Each file is held with an exclusive ``flock`` by the process that appends to it. The
kernel drops the lock when that process dies, which is how another process knows the file
is an orphan: it takes the lock, writes what is left, marks the file finished and deletes
it. The admin's call log also writes the rows of live workers' files (their whole lines),
so that it lists every call made on the machine.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.db import DatabaseError, connections, router, transaction
from django.db.models import F, JSONField
from django.utils import timezone

from mcp_endpoint import client_logging, outages
from mcp_endpoint.conf import mcp_settings

if TYPE_CHECKING:
    from mcp_endpoint.models import CallSpoolMark, ToolCall

logger = logging.getLogger("mcp_endpoint.calllog")

SUFFIX = ".calls"
# A batch is written once the oldest row has waited this long (by the writer thread), or
# by the call that finds this many rows waiting (the thread is behind).
BATCH_ROWS = 200
BATCH_SECONDS = 2.0
# Each process writes its batches from a thread of its own (the unit tests turn it off,
# to see when rows reach the table).
BACKGROUND_WRITER = True
# Past this size a fully written file is deleted and the worker starts a new one.
ROTATE_BYTES = 1024 * 1024
# What a row's arguments become when the database refused the sanitised ones.
UNLOGGABLE = {"[unloggable]": "the database refused these arguments; see the server log"}


def row_fields(model: type[ToolCall]) -> tuple[Any, ...]:
    return tuple(f for f in model._meta.concrete_fields if not f.primary_key)


def encode(row: ToolCall) -> bytes:
    """``row`` as one line of JSON: each column by its attribute name, as the field writes
    it to text (a time in ISO 8601), the arguments as they are."""
    values: dict[str, Any] = {}
    for field in row_fields(type(row)):
        value = getattr(row, field.attname)
        if value is None or isinstance(field, JSONField):
            values[field.attname] = value
        elif isinstance(value, datetime):
            values[field.attname] = value.isoformat()
        elif isinstance(value, (str, int, float, bool)):
            values[field.attname] = value
        else:
            values[field.attname] = field.value_to_string(row)
    return json.dumps(values, ensure_ascii=False, allow_nan=False).encode("utf-8") + b"\n"


def decode(model: type[ToolCall], line: bytes) -> dict[str, Any]:
    """The column values of one spooled line, by attribute name, as Python values."""
    stored = json.loads(line)
    if not isinstance(stored, dict):
        raise ValueError("not an object")
    values: dict[str, Any] = {}
    for field in row_fields(model):
        value = stored.get(field.attname)
        if value is not None and not isinstance(field, JSONField):
            value = field.to_python(value)
        values[field.attname] = value
    return values


def complete_lines(data: bytes) -> tuple[list[bytes], int]:
    """The whole lines of ``data`` and how many bytes they take; a last line without its
    newline is one still being written, left for the next batch."""
    end = data.rfind(b"\n") + 1
    return [line for line in data[:end].split(b"\n") if line.strip()], end


class SpoolFile:
    """One spool file, by its name in the spool directory."""

    def __init__(self, directory: Path, name: str) -> None:
        self.directory = directory
        self.name = name
        self.path = directory / name

    def write_batch(
        self, *, to_end: bool = False, limit: int | None = None, finish: bool = False
    ) -> int:
        """Write the rows past the file's mark to the call log and move the mark, in one
        transaction that holds the mark's lock, so two processes never write the same rows;
        how many rows were written. Reads at most to ``limit`` bytes (what had been appended
        when the batch was asked for). ``finish`` marks the file written for good: its
        writer is gone, and the file is deleted next."""
        from mcp_endpoint.models import ToolCall

        using = router.db_for_write(ToolCall)
        with transaction.atomic(using=using):
            mark = locked_mark(self.name, using)
            if mark.finished:
                return 0  # written to its end by another process, which deletes it
            with open(self.path, "rb") as spooled:
                spooled.seek(mark.offset)
                data = spooled.read(-1 if limit is None else max(0, limit - mark.offset))
            lines, length = complete_lines(data)
            if to_end and length < len(data):
                # The writer is gone: a line it did not finish is all that is left of a
                # call whose answer was never sent.
                length = len(data)
            if not length and not finish:
                return 0
            rows = [r for r in (self.decoded(ToolCall, line) for line in lines) if r]
            try:
                with transaction.atomic(using=using):
                    insert_rows(ToolCall, rows, using)
            except DatabaseError:
                insert_each(ToolCall, rows, using)
            forget_counted_hours(ToolCall, rows, using)
            mark.offset += length
            mark.finished = finish
            mark.save(using=using)
        return len(lines)

    def decoded(self, model: type[ToolCall], line: bytes) -> dict[str, Any] | None:
        try:
            return decode(model, line)
        except (ValueError, TypeError, ValidationError, RecursionError):
            logger.error(
                "a line of the call-log spool %s could not be read; it is skipped: %r",
                self.path,
                line[:200],
                extra=client_logging.SERVER_ONLY,
            )
            return None

    def remove(self) -> None:
        """Delete the file, written to its end: its mark stays, finished, until
        ``mcp_prune_calls`` deletes it a day later, so that a process still reading the
        file then writes none of it again."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


def locked_mark(name: str, using: str) -> CallSpoolMark:
    """The mark of the file ``name``, made at 0 if it has none, locked to the end of the
    transaction: a row lock on PostgreSQL; on SQLite a write first, which holds the
    database's write lock (one writer at a time), as ``ToolCallRollup.lock`` does."""
    from mcp_endpoint.models import CallSpoolMark

    marks = CallSpoolMark.objects.using(using)
    marks.filter(name=name).update(offset=F("offset"))
    mark, _ = marks.select_for_update().get_or_create(name=name)
    return mark


def insert_rows(model: type[ToolCall], rows: list[dict[str, Any]], using: str) -> None:
    """INSERT ``rows`` (column values by attribute name) as they were spooled, their time
    included; a user deleted since the call leaves the row without one, as deleting the
    user would have done to a row written at once (``on_delete=SET_NULL``)."""
    if not rows:
        return
    connection = connections[using]
    fields = row_fields(model)
    user = model._meta.get_field("user")
    wanted = {r[user.attname] for r in rows if r[user.attname] is not None}
    if wanted:
        target = user.remote_field.model
        present = set(
            target._default_manager.using(using).filter(pk__in=wanted).values_list("pk", flat=True)
        )
        for row in rows:
            if row[user.attname] not in present:
                row[user.attname] = None
    quote = connection.ops.quote_name
    columns = ", ".join(quote(f.column) for f in fields)
    placeholders = ", ".join(["%s"] * len(fields))
    sql = f"INSERT INTO {quote(model._meta.db_table)} ({columns}) VALUES ({placeholders})"
    values = [[f.get_db_prep_save(row[f.attname], connection) for f in fields] for row in rows]
    with connection.cursor() as cursor:
        cursor.executemany(sql, values)


def forget_counted_hours(model: type[ToolCall], rows: list[dict[str, Any]], using: str) -> None:
    """Rows late enough that the overview may have counted their hour already
    (``ToolCallRollup.SETTLE`` after it ended) make it count those hours again, as
    deleting rows does; under the counting lock, so no count runs in between."""
    from mcp_endpoint.models import ToolCallRollup

    times = [row["created"] for row in rows if row["created"] is not None]
    # A minute short of SETTLE: the clocks of the machines that wrote and count may differ.
    if not times or min(times) > timezone.now() - ToolCallRollup.SETTLE + timedelta(minutes=1):
        return
    ToolCallRollup.lock(using)
    ToolCallRollup.forget_hours_of(
        model._default_manager.using(using).filter(created__gte=min(times), created__lte=max(times))
    )


def insert_each(model: type[ToolCall], rows: list[dict[str, Any]], using: str) -> None:
    """After a batch the database refused: each row in a savepoint of its own, one it
    refuses again written with :data:`UNLOGGABLE` arguments, as a row written at once would
    be. A row refused even so by a database that answers is left out with an error in the
    log, as one written at once is; while the database does not answer (an outage) the
    error is raised, and the batch stays in its file for the next try."""
    for row in rows:
        try:
            with transaction.atomic(using=using):
                insert_rows(model, [row], using)
            continue
        except DatabaseError:
            logger.warning(
                "the call log refused the arguments of a spooled call of %s; recording the "
                "call without them",
                row.get("tool"),
                exc_info=True,
                extra=client_logging.SERVER_ONLY,
            )
        try:
            with transaction.atomic(using=using):
                insert_rows(model, [{**row, "arguments": UNLOGGABLE}], using)
        except DatabaseError:
            if not connections[using].is_usable():
                raise
            logger.error(
                "could not record a spooled call of %s in the call log",
                row.get("tool"),
                exc_info=True,
                extra=client_logging.SERVER_ONLY,
            )


class Spool:
    """This process's spool file: rows appended by :meth:`add`, written in batches by a
    thread of its own every :data:`BATCH_SECONDS`, or by the call that makes
    :data:`BATCH_ROWS` wait."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.named = os.fspath(directory)
        self.pid = os.getpid()
        self.appending = threading.Lock()
        self.writing = threading.Lock()
        self.file: SpoolFile | None = None
        self.fd: int | None = None
        self.size = 0
        self.waiting = 0
        self.oldest = 0.0
        self.writer: threading.Thread | None = None
        self.closed = threading.Event()

    def open(self) -> None:
        """A new file of this process's, created and locked before its first row."""
        self.directory.mkdir(parents=True, exist_ok=True)
        host = socket.gethostname().replace(os.sep, "_")[:60]
        name = f"{database_tag()}-{host}-{self.pid}-{secrets.token_hex(6)}{SUFFIX}"
        spool = SpoolFile(self.directory, name)
        fd = os.open(spool.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self.file, self.fd, self.size = spool, fd, 0

    def add(self, row: ToolCall) -> None:
        """Append ``row``: one ``write(2)`` of one line, before the call is answered."""
        line = encode(row)
        with self.appending:
            if self.fd is None:
                self.open()
            assert self.fd is not None
            written = os.write(self.fd, line)
            while written < len(line):  # a regular file takes it whole but for a full disk
                written += os.write(self.fd, line[written:])
            self.size += len(line)
            if not self.waiting:
                self.oldest = time.monotonic()
            self.waiting += 1
            if self.writer is None and BACKGROUND_WRITER:
                self.writer = threading.Thread(
                    target=self.write_in_background, name="mcp-call-spool", daemon=True
                )
                self.writer.start()

    def write_in_background(self) -> None:
        """The writer thread: a batch once the oldest row has waited :data:`BATCH_SECONDS`,
        so a worker that takes no more calls still writes its rows soon."""
        while not self.closed.wait(BATCH_SECONDS / 2):
            if self.waiting and time.monotonic() - self.oldest >= BATCH_SECONDS:
                try:
                    self.write_now()
                finally:
                    # This thread's connection, not kept open between batches.
                    connections.close_all()

    def write_due(self) -> None:
        """Write a batch from the call's thread when :data:`BATCH_ROWS` rows wait (the
        writer thread is behind); a batch the database refuses stays for the next."""
        if self.waiting >= BATCH_ROWS:
            self.write_now()

    def write_now(self) -> int:
        """Write every row appended so far, then the files of processes that died; how many
        rows of those. Never raises: rows that could not be written stay in their file for
        the next try."""
        if not self.writing.acquire(blocking=False):
            return 0  # another thread of this process is writing them
        try:
            self.write_own()
            return adopt_orphans(self.directory)
        except (DatabaseError, OSError) as exc:
            not_written(exc)
            return 0
        finally:
            self.writing.release()

    def write_own(self) -> None:
        with self.appending:
            spool, size, waiting = self.file, self.size, self.waiting
            rotate = spool is not None and size >= ROTATE_BYTES
            if rotate:
                # New rows go to a new file from now on; the old one is written to its end.
                assert self.fd is not None
                os.close(self.fd)
                self.file, self.fd, self.size = None, None, 0
            self.waiting, self.oldest = 0, time.monotonic()
        if spool is None or (not waiting and not rotate):
            return
        try:
            spool.write_batch(limit=size, to_end=rotate, finish=rotate)
        except BaseException:
            with self.appending:
                self.waiting += waiting
            raise
        if rotate:
            spool.remove()

    def close(self) -> None:
        """At exit: every row written, the file deleted."""
        self.closed.set()
        with self.writing, self.appending:
            spool, fd = self.file, self.fd
            self.file, self.fd, self.waiting = None, None, 0
            if spool is None or fd is None:
                return
            try:
                spool.write_batch(to_end=True, finish=True)
                spool.remove()
            except (DatabaseError, OSError):
                # Left on disk, unlocked once this process is gone: the next process to
                # write a batch adopts it.
                logger.warning(
                    "the call-log spool %s is left for another process to write",
                    spool.path,
                    exc_info=True,
                    extra=client_logging.SERVER_ONLY,
                )
            finally:
                os.close(fd)


def database_tag() -> str:
    """A digest of the database the call log is written to (its engine, name, host and
    port), which starts the name of each spool file: a folder two hosts share by mistake
    never has one's rows written to the other's database."""
    from mcp_endpoint.models import ToolCall

    found = connections[router.db_for_write(ToolCall)].settings_dict
    named = "|".join(str(found.get(key) or "") for key in ("ENGINE", "NAME", "HOST", "PORT"))
    return hashlib.sha256(named.encode()).hexdigest()[:12]


def spool_files(directory: Path) -> Iterator[Path]:
    """The spool files in ``directory`` of the database the call log is written to."""
    with contextlib.suppress(FileNotFoundError):
        yield from sorted(directory.glob(f"{database_tag()}-*{SUFFIX}"))


def adopt_orphans(directory: Path, *, live_too: bool = False) -> int:
    """Write and delete the spool files no live process holds; with ``live_too``, also
    write the whole lines of the files other live processes hold (their batches and these
    take turns on each file's mark). How many rows of other processes' files were written."""
    own = _spools.get(os.getpid())
    skip = own.file.name if own is not None and own.file is not None else None
    written = 0
    for path in spool_files(directory):
        if path.name == skip:
            continue
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            continue  # adopted by another process meanwhile
        try:
            spool = SpoolFile(directory, path.name)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                # Its process is alive.
                if live_too:
                    written += spool.write_batch()
                continue
            if not path.exists():
                continue  # written and deleted by whoever held the lock before us
            written += spool.write_batch(to_end=True, finish=True)
            spool.remove()
        except FileNotFoundError:
            continue  # its process finished it and deleted it meanwhile
        finally:
            os.close(fd)
    return written


# The spool of this process, by process id: a forked worker starts a file of its own.
_spools: dict[int, Spool] = {}
_spools_lock = threading.Lock()


def process_spool(directory: str | os.PathLike[str]) -> Spool:
    """This process's spool in ``directory``, made on its first row there; one in another
    folder (the setting changed) is finished first. Asked once per spooled call: the
    folder is compared as the setting's text, no path is built."""
    pid, named = os.getpid(), os.fspath(directory)
    spool = _spools.get(pid)
    if spool is None or spool.named != named:
        with _spools_lock:
            spool = _spools.get(pid)
            if spool is None or spool.named != named:
                if spool is not None:
                    spool.close()
                spool = _spools[pid] = Spool(Path(named))
                spool.named = named  # as the setting spells it ("spool/" and "spool" alike)
    return spool


def spool_row(directory: str | os.PathLike[str], row: ToolCall) -> None:
    """Append ``row`` to this process's spool in ``directory``, then write a batch if one
    is due."""
    spool = process_spool(directory)
    spool.add(row)
    spool.write_due()


def write_spooled(directory: str | os.PathLike[str] | None) -> int:
    """Write every row spooled on this machine so far: this process's, those of the other
    live processes and the files of processes that died (the admin's call log and overview
    ask first, so that they list every call made on the machine); how many rows of other
    processes' files were written. Never raises: what cannot be written stays."""
    if directory is None:
        return 0
    spool = _spools.get(os.getpid())
    try:
        if spool is not None and spool.named == os.fspath(directory):
            with spool.writing:
                spool.write_own()
        return adopt_orphans(Path(directory), live_too=True)
    except (DatabaseError, OSError) as exc:
        not_written(exc)
        return 0


def not_written(exc: BaseException) -> None:
    """Say that a batch stays in its file: during an outage as the endpoint reports one
    (once an interval, no traceback: the batch is tried again every few seconds), else a
    warning with the traceback."""
    kind = outages.diagnose(exc) if isinstance(exc, DatabaseError) else None
    if kind is not None:
        outages.report(kind, exc, mcp_settings.OUTAGE_LOG_INTERVAL)
        return
    logger.warning(
        "the call-log spool could not be written to the database; it is kept for the next batch",
        exc_info=exc,
        extra=client_logging.SERVER_ONLY,
    )


def prune_marks(using: str | None = None, age: timedelta = timedelta(days=1)) -> int:
    """Delete the marks of files written to their end (and deleted) longer than ``age``
    ago; how many went. Run by ``mcp_prune_calls``."""
    from mcp_endpoint.models import CallSpoolMark, ToolCall

    using = using or router.db_for_write(ToolCall)
    marks = CallSpoolMark.objects.using(using)
    deleted, _ = marks.filter(finished=True, updated__lt=timezone.now() - age).delete()
    return deleted


@atexit.register
def close_spools() -> None:
    spool = _spools.get(os.getpid())
    if spool is not None:
        spool.close()


__all__ = ["Spool", "adopt_orphans", "spool_row", "write_spooled"]

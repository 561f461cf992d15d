"""A real PostgreSQL server for the tests: Debian's binaries, a fresh cluster in a
temporary directory, listening only on a private Unix socket (no TCP port).

PostgreSQL refuses to run as root; CI runs as root, so the cluster is then owned by,
and the server run as, the ``postgres`` user Debian's package creates. Without the
binaries the tests skip, unless ``ARK_REQUIRE_POSTGRES=1`` (``.ci/run`` sets it):
then a missing server fails them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

#: Where Debian puts the server's binaries (not on PATH).
_BIN_DIRS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)


def _binary(name: str) -> str | None:
    for d in _BIN_DIRS:
        if (d / name).is_file():
            return str(d / name)
    return shutil.which(name)


def _as_owner(cmd: list[str]) -> list[str]:
    """``cmd`` run as the ``postgres`` user when we are root."""
    if os.geteuid() != 0:
        return cmd
    return ["runuser", "-u", "postgres", "--", *cmd]


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start a cluster; yield a libpq connection URI for its ``postgres`` database
    (over the socket, no password; :func:`database` names another); stop and remove
    it afterwards."""
    initdb, pg_ctl = _binary("initdb"), _binary("pg_ctl")
    if initdb is None or pg_ctl is None:
        message = "PostgreSQL's server binaries (Debian's postgresql package) are not installed"
        if os.environ.get("ARK_REQUIRE_POSTGRES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    root = Path(tempfile.mkdtemp(prefix="ark-pg-"))
    data, sock = root / "data", root / "sock"
    sock.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        shutil.chown(sock, "postgres")
    user = "postgres" if os.geteuid() == 0 else None
    try:
        subprocess.run(
            _as_owner([initdb, "-D", str(data), "-A", "trust", "-E", "UTF8", "--no-sync"])
            + (["-U", user] if user else []),
            check=True,
            capture_output=True,
        )
        options = f"-c listen_addresses='' -c unix_socket_directories='{sock}' -c fsync=off"
        subprocess.run(
            _as_owner(
                [pg_ctl, "-D", str(data), "-o", options, "-w", "-l", str(root / "log"), "start"]
            ),
            check=True,
            capture_output=True,
        )
        try:
            yield f"postgresql:///postgres?host={sock}" + (f"&user={user}" if user else "")
        finally:
            subprocess.run(
                _as_owner([pg_ctl, "-D", str(data), "-m", "immediate", "stop"]),
                capture_output=True,
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)


def database(uri: str, name: str) -> str:
    """The connection URI of database ``name`` on the server of ``uri``."""
    return uri.replace("postgresql:///postgres?", f"postgresql:///{name}?", 1)


def fresh_database(uri: str, name: str, *, properties: str = "json") -> str:
    """Database ``name`` made anew on the server of ``uri``, holding an empty ``nodes``
    table (``id, name, type, properties`` of type ``properties``) and ``edges`` table
    (``from, to, type``), as the table files lay them out; its connection URI."""
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    target = database(uri, name)
    with psycopg.connect(target, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE nodes (id int PRIMARY KEY, name text, type text, "
            f"properties {properties})"
        )
        conn.execute('CREATE TABLE edges ("from" int, "to" int, type text)')
    return target

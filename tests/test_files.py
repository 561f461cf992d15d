"""One write path (``ark._files``): a link planted where ARK writes is replaced or
refused, never written through; files get the usual mode (issue 67)."""

import os

import pytest

from ark.errors import ArkError
from ark.probes import file_mode, open_append, write_atomic


def test_a_write_replaces_a_link_and_leaves_its_target(tmp_path):
    target = tmp_path / "users-file.txt"
    target.write_text("mine")
    link = tmp_path / "out.json"
    link.symlink_to(target)
    write_atomic(link, "ARK's")
    assert target.read_text() == "mine"
    assert not link.is_symlink() and link.read_text() == "ARK's"
    assert list(tmp_path.glob(".*.tmp")) == []


def test_written_files_get_the_mode_a_new_file_gets(tmp_path):
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "a.json", b"{}")
        with open_append(tmp_path / "b.jsonl") as f:
            f.write("{}\n")
    finally:
        os.umask(old)
    assert file_mode() == 0o666 & ~old
    assert (tmp_path / "a.json").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "b.jsonl").stat().st_mode & 0o777 == 0o644


def test_an_append_refuses_a_link_or_a_fifo(tmp_path):
    target = tmp_path / "users-log.txt"
    target.write_text("")
    link = tmp_path / "extractions.jsonl"
    link.symlink_to(target)
    with pytest.raises(ArkError, match="symbolic link"):
        open_append(link)
    os.mkfifo(tmp_path / "pipe.jsonl")
    with pytest.raises(ArkError, match=r"pipe\.jsonl"):
        open_append(tmp_path / "pipe.jsonl")
    assert target.read_text() == ""


def test_an_ingest_cache_linked_elsewhere_is_refused(tmp_path):
    from ark.ingest import Extraction
    from ark.probes import WorkDir

    victim = tmp_path / "victim.jsonl"
    victim.write_text("")
    work = WorkDir(tmp_path / "work")
    work.extractions_path.parent.mkdir(parents=True, exist_ok=True)
    work.extractions_path.symlink_to(victim)
    with pytest.raises(ArkError, match="symbolic link"):
        work.append("k", "c", "x", Extraction())
    assert victim.read_text() == ""


def test_a_streamed_write_is_all_or_nothing_and_replaces_a_link(tmp_path):
    from ark.probes import atomic_writer

    target = tmp_path / "users.txt"
    target.write_text("mine")
    out = tmp_path / "out.jsonl"
    out.symlink_to(target)
    with atomic_writer(out) as f:
        f.write("a\n")
    assert target.read_text() == "mine" and out.read_text() == "a\n" and not out.is_symlink()
    with pytest.raises(RuntimeError), atomic_writer(out) as f:
        f.write("half")
        raise RuntimeError
    assert out.read_text() == "a\n" and list(tmp_path.glob(".*.tmp")) == []

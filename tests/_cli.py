"""The ``graphmem`` command run in this process, through ``graphmem.cli.main(argv)``.

``main`` is what the console script calls (``graphmem = "graphmem.cli:main"``), so a test
whose point is the command's behaviour (its output, exit status and files) needs no process of
its own: :func:`run_cli` gives the same :class:`subprocess.CompletedProcess` a
``subprocess.run([graphmem, *args], capture_output=True, text=True)`` would, from the exit
status ``main`` returns (or the ``SystemExit`` argparse raises), with the command's stdout and
stderr captured and its stdin and environment as given. The spaCy pipeline is loaded once per
test process instead of once per call. Tests whose point is the process itself (a closed pipe,
what ``--help`` imports, a file size limit, a crash or a kill) start one.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from graphmem.cli import main

__all__ = ["run_cli"]


@contextmanager
def _environment(env: Mapping[str, str] | None) -> Iterator[None]:
    """``os.environ`` without ``GRAPHMEM_DB`` and with ``env``, restored afterwards."""
    saved = dict(os.environ)
    os.environ.pop("GRAPHMEM_DB", None)
    os.environ.update(env or {})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _text_stream(data: str = "") -> io.TextIOWrapper:
    """A text stream over bytes, as a process's standard streams are (it has ``.buffer``)."""
    return io.TextIOWrapper(io.BytesIO(data.encode("utf-8")), encoding="utf-8", newline="")


def _contents(stream: io.TextIOWrapper) -> str:
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("utf-8")


def run_cli(
    *args: str, stdin: str | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``graphmem ARGS`` in this process (see the module docstring): ``GRAPHMEM_DB`` is
    unset unless ``env`` sets it, stdin is ``stdin`` (empty when None)."""
    streams = _text_stream(stdin or ""), _text_stream(), _text_stream()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = streams
    try:
        with _environment(env):
            try:
                status = main(list(args))
            except SystemExit as exc:  # argparse: --help (0) and usage errors (2)
                code = exc.code
                if code is None or isinstance(code, int):
                    status = code or 0
                else:  # what the interpreter does with sys.exit("message")
                    print(code, file=sys.stderr)
                    status = 1
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return subprocess.CompletedProcess(
        ["graphmem", *args], status, _contents(streams[1]), _contents(streams[2])
    )

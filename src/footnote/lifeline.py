"""Child processes die with their parent; SIGTERM stops a command the way Ctrl-C does.

Footnote's worker processes (the embedding pool of ``ingest``/``reembed``/``serve``, the server's page
renderers) start with :func:`bind_to_parent` as (part of) their pool's initializer. A worker then ends
as soon as the process that started it is gone — however it went, ``kill -9`` included:

- Linux's ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` where the pool is driven by one long-lived thread (the
  signal follows the *thread* that started the child, so a pool fed from a server's short-lived request
  threads must not use it: those threads come and go while the server lives);
- a watchdog thread in the worker, woken by a pidfd of the parent the moment it exits (Linux ≥ 5.3),
  else polling ``os.getppid()`` every ``poll_s`` seconds (the parent's death re-parents the worker).

:func:`terminate_as_interrupt` turns SIGTERM into ``KeyboardInterrupt`` in the main thread, so that a
stopped command takes its Ctrl-C path: finished work committed, worker pools shut down, claims released.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import threading
import time
from collections.abc import Iterator
from types import FrameType

PR_SET_PDEATHSIG = 1


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread (a ``KeyboardInterrupt``: every Ctrl-C path handles it)."""


def set_death_signal(sig: int = signal.SIGKILL) -> bool:
    """Ask the kernel to send ``sig`` to this process when the thread that started it ends (Linux). True
    when set."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)) == 0
    except (OSError, AttributeError):  # not Linux
        return False


def _watch(parent_pid: int, poll_s: float) -> None:
    fd = -1
    with contextlib.suppress(OSError, AttributeError):
        fd = os.pidfd_open(parent_pid)
    if fd >= 0 and os.getppid() == parent_pid:  # the pidfd is of the real parent, not of a reused pid
        with contextlib.suppress(OSError, ValueError):
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            while not poller.poll():  # readable once the parent has exited
                pass
            os._exit(1)
    while os.getppid() == parent_pid:
        time.sleep(poll_s)
    os._exit(1)


def bind_to_parent(parent_pid: int, death_signal: bool = True, poll_s: float = 1.0) -> None:
    """Make this (worker) process end when ``parent_pid`` does: see the module docstring. Call it first
    thing in the worker (a pool initializer); ``death_signal``: also use ``PR_SET_PDEATHSIG``."""
    if death_signal:
        set_death_signal(signal.SIGKILL)
    if os.getppid() != parent_pid:  # the parent died before we got here
        os._exit(1)
    threading.Thread(target=_watch, args=(parent_pid, max(0.05, poll_s)), name="footnote-lifeline",
                     daemon=True).start()


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """While inside, SIGTERM raises :class:`Terminated` in the main thread (elsewhere: nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    try:
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    except (ValueError, OSError):  # pragma: no cover - not allowed here
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


__all__ = ["Terminated", "bind_to_parent", "set_death_signal", "terminate_as_interrupt"]

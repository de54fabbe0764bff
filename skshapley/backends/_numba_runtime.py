"""What the numba kernels share at run time: a pool of threads for their parts, serial and
parallel builds of one kernel, and the one-time notice that kernels are being compiled.

Threads. The TreeSHAP kernels are serial (``nogil``) functions of a range of parts (row
blocks, path chunks, trees); :func:`run_parts` runs the ranges on a pool of threads. This
replaces ``parallel=True``, which doubled what the first call compiles (measured on the
first interventional explain of a 100-tree model: 15 s of CPU with ``prange``, 7 s with
the same kernels serial, 4 s once their helpers were compiled once each and their scratch
came from the caller), and lets one compiled kernel serve every layout. Each part writes
only its own rows or buffer, and callers sum buffers in a fixed order, so the bits do
not depend on the number of threads. Kernels that keep ``prange`` run on this thread
alone for little work (:func:`threads_for`).

Forks. numba's OpenMP threading layer (GNU libgomp, numba's default where TBB is not
installed) is not fork-safe: a process forked after its pool started, such as a joblib
``"multiprocessing"`` worker, is terminated at its first ``prange`` call, and the parent
waits on it forever. :func:`prange_usable` is false in such a child; the kernels then run
their serial builds, which give the same bits.

Compilation. Kernels are compiled on their first call with ``cache=True``; numba keeps
the machine code in ``NUMBA_CACHE_DIR`` when set, else in the package's ``__pycache__``
when writable, else in the user's cache folder (``~/.cache/numba`` on Linux), so only the
first process compiles. :func:`announce_compilation` says so once per process when a
compile starts.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import types
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numba
from numba import njit
from numba.core import event

_LOGGER = logging.getLogger("skshapley")

# Parts are run on threads only when the call has at least this much work, in units of
# about 30 ns (rows x path elements for TreeSHAP), i.e. from about 2 ms of work on: waking
# threads costs tens of microseconds, and on a busy machine a thread that is not
# scheduled stalls the call for a time slice (several ms).
PARALLEL_MIN_WORK = 1 << 16
# Ranges per thread: a few, so that a thread finishing early takes another.
RANGES_PER_THREAD = 4

_POOL = None
_POOL_PID = None
# Set in a child forked after numba's thread pool started with a layer that is not
# fork-safe (every layer but TBB); see "Forks" above.
_FORKED_FROM_POOL = False
_POOL_LOCK = threading.Lock()


def n_threads() -> int:
    """Threads the kernels may use: numba's (``NUMBA_NUM_THREADS``, or what
    ``numba.set_num_threads`` set in this thread)."""
    from numba.np.ufunc import parallel

    # numba.get_num_threads() would start numba's own thread pool, which these kernels
    # do not use; it can only differ from the default once that pool runs.
    if parallel._is_initialized:
        return numba.get_num_threads()
    return numba.config.NUMBA_NUM_THREADS


def _after_fork_in_child():
    global _FORKED_FROM_POOL
    from numba.np.ufunc import parallel

    if parallel._is_initialized and numba.threading_layer() != "tbb":
        _FORKED_FROM_POOL = True


os.register_at_fork(after_in_child=_after_fork_in_child)


def prange_usable() -> bool:
    """Whether numba's ``prange`` kernels may run in this process: false in a child
    forked after the parent's OpenMP or workqueue pool started."""
    return not _FORKED_FROM_POOL


def serial_copy(function):
    """A copy of the Python ``function`` named ``<name>_serial``, for a serial numba build
    beside a ``parallel=True`` one: numba's on-disk cache is keyed by qualified name and
    signature, not by the ``parallel`` flag, so two builds of one function object would
    overwrite each other's cache entries."""
    copy = types.FunctionType(function.__code__, function.__globals__,
                              function.__name__ + "_serial")
    copy.__qualname__ = function.__qualname__ + "_serial"
    return copy


def _pool():
    global _POOL, _POOL_PID
    with _POOL_LOCK:
        if _POOL is None or _POOL_PID != os.getpid():  # a forked child has no threads
            _POOL = ThreadPoolExecutor(max_workers=max(1, numba.config.NUMBA_NUM_THREADS),
                                       thread_name_prefix="skshapley-kernel")
            _POOL_PID = os.getpid()
        return _POOL


def run_parts(call, n_parts, work):
    """Run ``call(first, stop)`` over the parts ``0 .. n_parts - 1``.

    One call in this thread when there is little ``work`` or one thread; otherwise
    contiguous ranges of parts on the pool (this thread takes the first), waiting for
    all of them. ``call`` must write each part's result apart from the others'.
    """
    threads = min(n_threads(), n_parts)
    if threads <= 1 or work < PARALLEL_MIN_WORK:
        call(0, n_parts)
        return
    n_ranges = min(n_parts, threads * RANGES_PER_THREAD)
    bounds = [n_parts * i // n_ranges for i in range(n_ranges + 1)]
    ranges = list(zip(bounds[:-1], bounds[1:], strict=True))
    pool = _pool()
    futures = [pool.submit(call, first, stop) for first, stop in ranges[1:]]
    try:
        call(*ranges[0])
    finally:
        for future in futures:  # every range ends before the buffers are read
            future.result()


@contextmanager
def threads_for(work):
    """Run numba's ``prange`` kernels inside on this thread alone when ``work`` is below
    ``PARALLEL_MIN_WORK``: waking numba's pool costs more than such a call takes, and on a
    busy machine a worker that is not scheduled stalls the call for a time slice
    (measured: one row's path-dependent values took 8 ms instead of 0.3 ms with two
    threads while other processes held the cores). The previous count is restored in
    ``finally``."""
    if work >= PARALLEL_MIN_WORK:
        yield
        return
    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(previous)


# -- serial and parallel builds of one kernel ------------------------------------------------
# Waking numba's thread pool costs about a millisecond, more than the whole kernel on the
# small arrays of one explained row (measured: prefix masks of 10 orderings took 4.6 ms
# with prange, 0.02 ms serially). Below this many output elements the serial build runs.
PARALLEL_MIN_ELEMENTS = 1 << 18


def compile_twice(function, **options):
    """A serial and a prange-parallel build of the same kernel (results are identical:
    every iteration writes only its own rows).

    The serial build compiles a copy renamed by :func:`serial_copy`. The parallel one is
    called through a guard that runs the serial build in a forked child where ``prange``
    is unsafe (:func:`prange_usable`).
    """
    serial = njit(cache=True, nogil=True, **options)(serial_copy(function))
    parallel = njit(parallel=True, cache=True, **options)(function)

    def parallel_unless_forked(*args):
        # a forked child of a process whose OpenMP pool ran must not enter a prange loop
        return parallel(*args) if prange_usable() else serial(*args)

    return serial, parallel_unless_forked


# -- the one-time notice -------------------------------------------------------------------
_ANNOUNCED = threading.Event()
NOTICE = ("skshapley: compiling numba kernels, one time only (later processes load them "
          "from numba's cache)...")


class _CompileNotice(event.Listener):
    """Says, once per process, that a kernel of this package is being compiled (numba
    sends ``numba:compile`` only on a miss of its in-memory and on-disk caches)."""

    def on_start(self, ev):
        if _ANNOUNCED.is_set():
            return
        dispatcher = ev.data.get("dispatcher") if isinstance(ev.data, dict) else None
        module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
        if module.startswith("skshapley."):
            announce_compilation()

    def on_end(self, ev):
        pass


def announce_compilation():
    """Log the notice (logger ``"skshapley"``, INFO) once per process, and print it on
    stderr when that is a terminal the log does not already reach: a progress message for
    people, not for pipes, files or captured test output."""
    if _ANNOUNCED.is_set():
        return
    _ANNOUNCED.set()
    _LOGGER.info(NOTICE)
    stream = sys.stderr
    shown = _LOGGER.isEnabledFor(logging.INFO) and _LOGGER.hasHandlers()
    if not shown and stream is not None and getattr(stream, "isatty", lambda: False)():
        print(NOTICE, file=stream, flush=True)


event.register("numba:compile", _CompileNotice())

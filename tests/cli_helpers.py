"""What the command-line tests share: one OpenMP thread and the one-line error check."""

import pytest


@pytest.fixture(autouse=True)
def one_openmp_thread():
    """HistGradientBoosting's OpenMP threads spin-wait; on a busy 2-core machine two of
    them can make a one-second fit take a minute. The CLI's own results do not depend on
    it. Autouse in every module that imports it."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="openmp"):
        yield


def one_line_error(err):
    """The one line a refused command prints on stderr (no traceback)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("skshapley: error: ") and "Traceback" not in err
    return lines[0]

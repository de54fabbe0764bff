import os

import matplotlib
import numpy as np
import pytest
from hypothesis import settings

matplotlib.use("Agg")

settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile("ci", max_examples=300, deadline=None, derandomize=True)
# CI (which sets CI=true) runs the larger, derandomised profile (STYLE.md §7).
_default_profile = "ci" if os.environ.get("CI") else "dev"
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", _default_profile))


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)

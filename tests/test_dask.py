"""Scale-out on dask (issue 11): the explainer's rows under joblib's dask backend and the
moment-sketch fit on a dask array, both on a ``LocalCluster`` of worker processes, give the
same results as one process."""

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

from joblib import parallel_backend  # noqa: E402
from sklearn.datasets import load_diabetes  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402

from skshapley import MomentQuantileTransformer, ShapleyExplainer  # noqa: E402
from skshapley.preprocessing import fit_dask  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client


def test_explainer_rows_on_dask_workers_equal_one_process(client):
    X, y = load_diabetes(return_X_y=True)
    model = Ridge().fit(X, y)
    kwargs = dict(method="permutation", max_evals=200, prefit=True, random_state=0)
    local = ShapleyExplainer(model, n_jobs=1, **kwargs).fit(X[:50]).transform(X[:12])
    explainer = ShapleyExplainer(model, n_jobs=-1, **kwargs).fit(X[:50])
    with parallel_backend("dask"), distributed.get_task_stream(client) as stream:
        remote = explainer.transform(X[:12])
    # the rows really ran as tasks on the worker processes
    assert len({task["worker"] for task in stream.data}) == 2
    np.testing.assert_array_equal(remote, local)


def test_fit_dask_on_worker_processes_equals_fit(client):
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(1000.0, 1.0, 20_000), rng.lognormal(0, 2, 20_000),
                         rng.integers(0, 5, 20_000)])
    ours = fit_dask(MomentQuantileTransformer(), da.from_array(X, chunks=(2_500, 3)))
    ref = MomentQuantileTransformer().fit(X)
    # merged sketches equal one fit within the sketch's own stated rank error: compare the
    # ranks of the two quantile tables in the data (integers stay on the lattice)
    for j in range(X.shape[1]):
        column = np.sort(X[:, j])
        rank = lambda q, column=column: np.searchsorted(column, q) / column.size  # noqa: E731
        bound = 3 * max(ours.quantile_error_[j], ref.quantile_error_[j]) + 1e-3
        assert np.max(np.abs(rank(ours.quantiles_[:, j]) - rank(ref.quantiles_[:, j]))) \
            <= bound
    np.testing.assert_array_equal(ours.quantiles_[:, 2], ref.quantiles_[:, 2])


@pytest.mark.parametrize("make_empty", [
    lambda: da.zeros((0, 2), chunks=1),
    # unknown chunk sizes: the row count (nan) is only known after compute
    lambda: (lambda X: X[X[:, 0] > 5])(da.ones((10, 2), chunks=3)),
], ids=["known-chunks", "unknown-chunks"])
def test_fit_dask_refuses_zero_rows_as_fit_does(make_empty):
    # fit_dask used to succeed with n_samples_seen_ = [0, 0], then quantiles were NaN
    with pytest.raises(ValueError, match=r"0 sample\(s\)") as fit_error:
        MomentQuantileTransformer().fit(np.zeros((0, 2)))
    transformer = MomentQuantileTransformer()
    with pytest.raises(ValueError, match=r"Found array with 0 sample\(s\) \(shape=\(0, 2\)\)") \
            as dask_error:
        fit_dask(transformer, make_empty())
    assert str(dask_error.value) == str(fit_error.value)
    assert not hasattr(transformer, "sketch_")


def test_fit_dask_refuses_an_in_memory_array():
    # a numpy array used to fail with "'numpy.ndarray' object has no attribute 'rechunk'"
    with pytest.raises(ValueError, match=r"X must be a 2-D dask array; got ndarray\. "
                       r"Wrap it with dask\.array\.from_array"):
        fit_dask(MomentQuantileTransformer(), np.ones((10, 2)))

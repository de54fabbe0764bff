"""Claim: ``ShapleyExplainer`` stays fast at many features (d = 20 ... 1000) on models no
tree algorithm can read, and at equal budget, and at equal wall time, is at least as
accurate as shap's and shapiq's model-agnostic estimators.

Protocol. Data: ``make_regression(n_samples=2100 + rows, n_features=d,
n_informative=max(5, d // 10), noise=0.1, random_state=0)`` with a nonlinear part added
to y (products of pairs and sines of informative columns), y standardised; rows
[0, 2000) train, [2000, 2100) are the background (100 rows), the rows after it are
explained. Three models:

1. ``mlp``: ``MLPRegressor(hidden_layer_sizes=(64,), max_iter=200, random_state=0)``
   fitted on the training rows (TreeSHAP cannot read it). Reference values: a long run
   of ours, ``method="permutation"`` at ``--reference-multiplier`` x d evaluations per
   row (a different seed from every timed run) on the first ``--reference-rows``
   explained rows; it has no closed form. Its own error is estimated from its standard
   errors and reported as the "reference floor": MSE against the reference is the true
   MSE plus that floor (the two are independent), so values near the floor are not
   resolved.
2. ``closed_form``: f(x) = x @ a + sum over d random pairs (i, j) of b_ij x_i x_j (a, b
   standard normal, seed 1). Its interventional values over the background B are exact:
   a_j (x_j - mean B_j) for the linear part, and for a product term the two-player split
   phi_i = 1/2 [(x_i mean B_j - mean B_i B_j) + (x_i x_j - mean B_i x_j)], phi_j
   symmetric (``closed_form_values``; ``--selftest`` checks it against enumeration).
3. ``closed_form3``: the same plus d random triples c_ijk x_i x_j x_k (seed 1), whose
   three-player games have the same kind of closed form. Needed because every game of
   order 2 is estimated exactly (to round-off) by antithetic permutation sampling (an
   ordering and its reverse put j before i once each, which is the pair's Shapley split)
   and by paired regression designs, so on ``closed_form`` those methods' MSE and error
   bars are zero whatever the budget; the triples make every estimator pay.

Every method explains the interventional game over the same 100 background rows.
Budgets B per explained row: ``auto`` (ours' default ``max_evals``, the same number
given to every peer), 10 d and 50 d. Methods at the same B: ours
``ShapleyExplainer(model, max_evals=B, random_state=seed, background=bg)`` with
``method="auto"`` and, for reference, ``"permutation"`` and ``"kernel"``; shap's
``PermutationExplainer`` (``max_evals=B``, Independent masker over the background) and
``KernelExplainer`` (``nsamples=B - 2``, ``l1_reg=False``: shap's default
``"num_features(10)"`` would zero all but 10 features); shapiq's ``KernelSHAP``,
``kADDSHAP`` (order 2) and ``PermutationSamplingSV`` (``budget=B``) on our
``MarginalGame`` of the row (boolean coalitions in, v(S) out); with ``--oddshap-python``,
shapiq's ``OddSHAP`` (``budget=B``; shapiq >= 1.5 needs Python >= 3.12) in that
interpreter, on the same pickled model, background and rows, its game the model's mean
over the background rows masked by each coalition, in batches of at most 2^23 floats
(its time is measured there, without the interpreter's start and imports). Peers explain row by row;
ours explains all rows of a run in one ``explain`` call.

Runs: with 1 row, seed s explains explained row s (so the seeds also vary the row),
``--seeds`` seeds; with more rows (``--rows``), ``--seeds-batch`` seeds of the whole
batch. Time per row: wall time of the call / rows, median and IQR over seeds, after one
warm-up call per method (numba compilation; reported) and one untimed call per method, d
and budget, on up to 10 of the rows (one-time costs of the estimator a budget picks).
Evaluations per row: model rows predicted during the call / (100 background rows x
rows), measured by wrapping ``predict``. "/ raw": time per row divided by the time the
model alone takes on that many rows (evaluations x 100 rows of width d, times the rows
of the call), predicted in the fastest of batches of 2^11, 2^14 or 2^17 rows (full
batches plus one call on the rest, best of 3 each), measured right after each call (the
machine's speed drifts by 20-30 % over a run); the median over seeds of the per-call
ratios. Until 2026-11-27 the denominator was the per-row rate of the best batch (usually
2^17 rows) times the rows, measured once per model, which no call of fewer rows can
reach: the model's fixed cost per predict is spread over more rows than the call has;
the header's "raw model time" is still that rate. MSE: mean over rows x features of
(phi_hat - truth)^2 per seed, mean +- standard error over seeds.

Equal wall time: for each model and d, T = ours-auto's median time per row at the
default budget (once for 1-row runs, once for batch runs). Each other method's time per
row is fitted as a + b B by least squares over its measured budgets, the budget
B* = (T - a) / b is computed (at least 2 d + 2, the smallest budget every method takes)
and the method is rerun at B* (not interpolated: MSE is not a power law of B for the
regression estimators, and the rerun checks that B* took about T). A rerun off by more
than 1.5x is repeated at B* x T / (its time), at most twice; the last run's MSE and
actual time are reported.

Error bars: on the closed-form games, the fraction of |phi_hat - phi| <=
``Explanation.error_bars()`` (95 % t intervals) over ``--coverage-seeds`` seeds (seed s
explains row s) x all features, at the default budget, for ``method="auto"`` and
``"permutation"``. Memory: in a fresh process, ours with the defaults explains one row
of the MLP at each ``--memory-sizes`` d; reported are the growth of the peak resident
size (``VmHWM``) over its value after loading model and data, and the ``tracemalloc``
peak of a second, identical call.

Cap: a configuration whose predicted time per row (scaled from that method's earlier
runs: linearly in B, and as d or d^2 for sampling or regression estimators) is above
``--cap-seconds`` is not run, and a run (the untimed call included) is stopped by an
alarm after cap x rows seconds; both are recorded as "skipped (> cap)". shap's
KernelExplainer and shapiq's kADDSHAP hold arrays of B x 100 x d and B x d^2 / 2
floats; above ``--max-gib`` they are recorded as "skipped (memory)". Any other failure
is recorded with its error text.

Refuted if, at some d and budget, ours-auto's MSE is above a peer's by more than the
standard errors, or its MSE at equal wall time is.

Run: ``python benchmarks/bench_width.py`` (``--quick``: d = 20, 50, rows 1 and 10, two
budgets, 2 seeds; ``--selftest``: the closed forms against enumeration at d = 8).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import pathlib
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from contextlib import contextmanager

import numpy as np
from _product_model import ProductModel
from _report import CountingModel

HERE = pathlib.Path(__file__).resolve().parent
RESULTS = HERE / "results" / "width.md"
OURS = ("auto", "permutation", "kernel")
SHAP = ("PermutationExplainer", "KernelExplainer")
SHAPIQ = ("KernelSHAP", "kADDSHAP", "PermutationSamplingSV")
# shapiq >= 1.5's OddSHAP needs Python >= 3.12: it runs in another interpreter
# (``--oddshap-python``; its row is left out without one), through ``_oddshap_runner.py``
ODDSHAP = "shapiq OddSHAP"
ODDSHAP_SCRIPT = pathlib.Path(__file__).resolve().parent / "_oddshap_runner.py"
LABELS = ([f"skshapley {m}" for m in OURS] + [f"shap {m}" for m in SHAP]
          + [f"shapiq {m}" for m in SHAPIQ] + [ODDSHAP])
AUTO = "skshapley auto"
# Estimators that solve a regression over the features: their own arithmetic grows with
# d^2 per evaluation, the samplers' with d (used only to predict the time of a run).
REGRESSION = ("skshapley auto", "skshapley kernel", "shap KernelExplainer",
              "shapiq KernelSHAP", "shapiq kADDSHAP", ODDSHAP)
N_BACKGROUND = 100
N_TRAIN = 2000
# MSE below this is round-off: the estimate is exact (the games' values are of order 1).
ROUND_OFF = 1e-20
REFERENCE_SEED = 10**6
# Rows of the untimed call at each budget before the timed ones (see Bench.run).
WARM_ROWS = 10


# -- models and data ------------------------------------------------------------------------

def _random_terms(rng, d, n_terms, order):
    """``n_terms`` distinct sorted index tuples of ``order`` features (fewer if d is small)."""
    n_terms = min(n_terms, math.comb(d, order))
    chosen = set()
    while len(chosen) < n_terms:
        chosen.add(tuple(int(i) for i in np.sort(rng.choice(d, size=order, replace=False))))
    return np.array(sorted(chosen), dtype=np.int64).reshape(-1, order)


def make_product_model(d, max_order=2, seed=1):
    """a, and d terms of each order 2..max_order with coefficients, all standard normal:
    ``closed_form`` is order 2 (d pairs), ``closed_form3`` adds d triples."""
    rng = np.random.default_rng(seed)
    coef = rng.standard_normal(d)
    terms = []
    for order in range(2, max_order + 1):
        indices = _random_terms(rng, d, d, order)
        terms.append((indices, rng.standard_normal(len(indices))))
    return ProductModel(coef, terms)


def closed_form_values(model, rows, background):
    r"""Exact interventional Shapley values of a ``ProductModel`` (n_rows, d).

    Linear part: a_j (x_j - mean B_j). A product over a set T of features is a game on T
    with v(S) = prod_{i in S} x_i * mean_b prod_{i in T \ S} b_i, whose Shapley values
    are phi_i = sum over S in T \ {i} of |S|! (|T| - |S| - 1)! / |T|! (v(S + i) - v(S)).
    For a pair (i, j) that is phi_i = 1/2 [(x_i mean B_j - mean B_i B_j)
    + (x_i x_j - mean B_i x_j)].
    """
    rows = np.atleast_2d(np.asarray(rows, dtype=np.float64))
    phi = model.coef * (rows - background.mean(axis=0))
    for indices, coefficients in model.terms:
        k = indices.shape[1]
        x = rows[:, indices]            # (n_rows, n_terms, k)
        b = background[:, indices]      # (n_background, n_terms, k)
        value = {}
        for mask in itertools.product((False, True), repeat=k):
            inside = np.array(mask)
            value[mask] = (np.prod(x[:, :, inside], axis=2)
                           * np.prod(b[:, :, ~inside], axis=2).mean(axis=0))
        for position in range(k):
            share = np.zeros(x.shape[:2])
            for mask, v in value.items():
                if mask[position]:
                    continue
                size = sum(mask)
                weight = math.factorial(size) * math.factorial(k - size - 1) / math.factorial(k)
                with_i = mask[:position] + (True,) + mask[position + 1 :]
                share += weight * (value[with_i] - v)
            np.add.at(phi.T, indices[:, position], (coefficients * share).T)
    return phi


def make_data(d, n_explain):
    """(X_train, y_train, background, explained rows): make_regression plus a nonlinear
    part on the informative columns, y standardised."""
    from sklearn.datasets import make_regression

    n_informative = max(5, d // 10)
    X, y, coef = make_regression(n_samples=N_TRAIN + N_BACKGROUND + n_explain, n_features=d,
                                 n_informative=n_informative, noise=0.1, coef=True,
                                 random_state=0)
    informative = np.flatnonzero(coef)
    scale = np.std(y)
    for k in range(0, len(informative) - 1, 2):  # products of pairs, sines of the rest
        y = y + 0.5 * scale / n_informative * (X[:, informative[k]] * X[:, informative[k + 1]])
        y = y + scale / n_informative * np.sin(2 * X[:, informative[k]])
    y = (y - y.mean()) / y.std()
    train, rest = slice(0, N_TRAIN), X[N_TRAIN:]
    return X[train], y[train], rest[:N_BACKGROUND], rest[N_BACKGROUND:]


def fit_mlp(X, y):
    from sklearn.neural_network import MLPRegressor

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning at 200 iterations
        return MLPRegressor(hidden_layer_sizes=(64,), max_iter=200, random_state=0).fit(X, y)




# -- the methods ------------------------------------------------------------------------------

def run_ours(name, model, background, rows, budget, seed):
    from skshapley import ShapleyExplainer

    counter = CountingModel(model)
    explainer = ShapleyExplainer(counter, prefit=True, method=name, max_evals=budget,
                                 background=background, random_state=seed).fit(background)
    counter.rows = 0
    start = time.perf_counter()
    explanation = explainer.explain(rows)
    seconds = time.perf_counter() - start
    return dict(values=np.asarray(explanation.values), seconds=seconds,
                model_rows=counter.rows, picked=explainer.method_, explanation=explanation)


def run_shap(name, model, background, rows, budget, seed):
    import shap

    counter = CountingModel(model)
    if name == "PermutationExplainer":
        masker = shap.maskers.Independent(background, max_samples=len(background))
        explainer = shap.PermutationExplainer(counter.predict, masker, seed=seed)
        counter.rows = 0
        start = time.perf_counter()
        values = explainer(rows, max_evals=budget, silent=True).values
    else:
        explainer = shap.KernelExplainer(counter.predict, background)
        counter.rows = 0
        np.random.seed(seed)  # noqa: NPY002 - shap samples with numpy's global state
        start = time.perf_counter()
        values = explainer.shap_values(rows, nsamples=budget - 2, l1_reg=False, silent=True)
    seconds = time.perf_counter() - start
    return dict(values=np.asarray(values).reshape(rows.shape), seconds=seconds,
                model_rows=counter.rows, picked=name)


def run_shapiq(name, model, background, rows, budget, seed):
    import shapiq.approximator as sa

    from skshapley.games import MarginalGame

    classes = {"KernelSHAP": (sa.KernelSHAP, {}), "kADDSHAP": (sa.kADDSHAP, {"max_order": 2}),
               "PermutationSamplingSV": (sa.PermutationSamplingSV, {})}
    cls, kwargs = classes[name]
    counter = CountingModel(model)
    d = rows.shape[1]
    values = np.empty(rows.shape)
    start = time.perf_counter()
    for r, row in enumerate(rows):
        game = MarginalGame(counter.predict, row, background)
        result = cls(n=d, random_state=seed, **kwargs).approximate(
            budget=budget, game=lambda coalitions, game=game: game.values(
                np.atleast_2d(coalitions)))
        values[r] = [result[(j,)] for j in range(d)]
    seconds = time.perf_counter() - start
    return dict(values=values, seconds=seconds, model_rows=counter.rows, picked=name)


def run_oddshap(python, model, background, rows, budget, seed):
    """shapiq's OddSHAP in the interpreter ``python`` (``_oddshap_runner.py width``)."""
    import pickle

    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        with open(tmp / "model.pkl", "wb") as handle:
            pickle.dump(model, handle)
        np.savez(tmp / "data.npz", background=background, rows=rows)
        done = subprocess.run([python, str(ODDSHAP_SCRIPT), "width", str(tmp / "model.pkl"),
                               str(tmp / "data.npz"), str(int(budget)), str(seed),
                               str(tmp / "out.json")], capture_output=True, text=True,
                              cwd=ODDSHAP_SCRIPT.parent)
        if done.returncode:
            raise RuntimeError(done.stderr.strip().splitlines()[-1][:300])
        result = json.loads((tmp / "out.json").read_text())
    return dict(values=np.asarray(result["values"]).reshape(rows.shape),
                seconds=result["seconds"], model_rows=result["model_rows"],
                picked=f"OddSHAP (shapiq {result['version']})")


def runner(label, oddshap_python=None):
    if label == ODDSHAP:
        return run_oddshap, oddshap_python
    family, name = label.split(" ", 1)
    return {"skshapley": run_ours, "shap": run_shap, "shapiq": run_shapiq}[family], name


def memory_gib(label, d, budget):
    """GiB of the largest array a peer holds for one row (None: no concern)."""
    if label == "shap KernelExplainer":
        return budget * N_BACKGROUND * d * 8 / 2**30  # its synthetic data
    if label == "shapiq kADDSHAP":
        return budget * (1 + d + d * (d - 1) // 2) * 8 / 2**30  # its design matrix
    return None


# -- timing helpers --------------------------------------------------------------------------

class CapExceeded(Exception):
    pass


@contextmanager
def deadline(seconds):
    """Raise ``CapExceeded`` in the main thread after ``seconds`` (checked between Python
    bytecodes, so a long C call finishes first)."""
    def handler(signum, frame):
        raise CapExceeded(f"stopped after {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


RAW_BATCHES = (2**11, 2**14, 2**17)


def _predict_seconds(model, X, repeats):
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        model.predict(X)
        best = min(best, time.perf_counter() - start)
    return best


def raw_seconds_per_row(model, d, repeats=3):
    """Seconds the model alone takes per input row of width d: the fastest of batches of
    2^11, 2^14 and 2^17 rows (at most 256 MiB), best of ``repeats`` (the header's rate)."""
    rng = np.random.default_rng(0)
    best = np.inf
    for n_rows in RAW_BATCHES:
        if n_rows > 2**11 and n_rows * d * 8 > 256 * 2**20:
            break
        best = min(best, _predict_seconds(model, rng.standard_normal((n_rows, d)),
                                          repeats) / n_rows)
    return best


class RawModelTime:
    """The model's own time on ``n`` input rows of width ``d``: the fastest way of
    predicting exactly ``n`` rows in batches of 2^11, 2^14 or 2^17 rows (``n // b`` full
    batches, timed once per size, plus one call on the remainder), best of ``repeats``
    each. Measured at ``n`` itself rather than scaled from the per-row rate of the largest
    batch: an explainer that spends ``n`` evaluations cannot spread the model's fixed cost
    per call over more rows than it has."""

    def __init__(self, model, d, repeats=3):
        self.model, self.d, self.repeats = model, d, repeats
        self.rng = np.random.default_rng(0)
        self.cache = {}

    def _direct(self, n):
        if n == 0:
            return 0.0
        if n not in self.cache:
            X = self.rng.standard_normal((n, self.d))
            self.cache[n] = _predict_seconds(self.model, X, self.repeats)
        return self.cache[n]

    def __call__(self, n):
        n = int(round(n))
        best = self._direct(n) if n <= RAW_BATCHES[0] else np.inf
        for b in RAW_BATCHES:
            if b > n or (b > 2**11 and b * self.d * 8 > 256 * 2**20):
                break
            best = min(best, (n // b) * self._direct(b) + self._direct(n % b))
        return best


def cpu_snapshot():
    """(machine busy CPU seconds, this process's CPU seconds, wall seconds)."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
        busy = (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        busy = float("nan")
    own = os.times()
    return busy, own.user + own.system + own.children_user + own.children_system, \
        time.perf_counter()


def others_share(before, after):
    """Share of the machine's cores that other processes kept busy between two snapshots."""
    busy, own, wall = (b - a for a, b in zip(before, after, strict=True))
    return max(0.0, (busy - own) / (wall * (os.cpu_count() or 1)))


# -- one configuration ----------------------------------------------------------------------

class Bench:
    """Runs configurations, keeps their results, predicts times for the cap."""

    def __init__(self, args):
        self.args = args
        self.history = {}  # (model, label) -> [(d, budget, seconds per row)]
        self.warm = {}  # label -> seconds of its first call
        self.warmed = set()  # (label, d, budget) given an untimed call

    def predict(self, model_name, label, d, budget):
        """Seconds per row predicted from this method's runs at the largest d measured so
        far (at most this d): linear in the budget, times (d / d_run) for samplers and
        (d / d_run)^2 for regression estimators; the most pessimistic run wins."""
        points = [p for p in self.history.get((model_name, label), []) if p[0] <= d]
        if not points:
            return None
        nearest = max(p[0] for p in points)
        exponent = 2 if label in REGRESSION else 1
        return max(t * (budget / b) * (d / dp) ** exponent
                   for dp, b, t in points if dp == nearest)

    def _over_cap(self, key, d, budget, why):
        """Record the cap as a lower bound on this method's time per row, so that larger
        budgets and d are predicted over it, and say why it was skipped."""
        self.history.setdefault(key, []).append((d, budget, self.args.cap_seconds))
        return f"skipped (> cap: {why})"

    def run(self, case, label, budget, n_rows, seeds):
        """One configuration: a result dict, or a string saying why there is none."""
        args, d = self.args, case["d"]
        key = (case["model_name"], label)
        n_budget = case["default_budget"] if budget == "auto" else budget
        if not re.search(args.methods, label) or (label == ODDSHAP
                                                  and not args.oddshap_python):
            return None
        gib = memory_gib(label, d, n_budget)
        if gib is not None and gib > args.max_gib:
            return f"skipped (memory: {gib:.1f} GiB > {args.max_gib:g})"
        predicted = self.predict(case["model_name"], label, d, n_budget)
        if predicted is not None and predicted > args.cap_seconds:
            return f"skipped (> cap: predicted {predicted:.0f} s/row)"
        run, name = runner(label, args.oddshap_python)
        if label not in self.warm:  # numba compiles here, or loads its cache
            start = time.perf_counter()
            warm_budget = max(10 * d, case["minimum"])
            try:
                with deadline(args.cap_seconds):
                    run(name, case["model"], case["background"], case["rows"][:1],
                        warm_budget, 0)
            except CapExceeded as err:
                # one row at 10 d took longer than a row may: the full budget would
                # too (kADD-SHAP at d = 200 then spent 2 x 1,000 s reaching the cap)
                print(f"  warm-up of {label} failed: {err}", flush=True)
                return self._over_cap(key, d, warm_budget,
                                      f"one row at 10 d over {args.cap_seconds:g} s")
            except Exception as err:  # noqa: BLE001 - a failing method is reported
                print(f"  warm-up of {label} failed: {err}", flush=True)
            self.warm[label] = time.perf_counter() - start
        if (label, d, n_budget) not in self.warmed:
            # one untimed call at this budget too: ours runs another estimator (and the
            # model other batch shapes) at each budget, whose one-time costs (a thread
            # pool controller, first page faults) the first timed seed would otherwise
            # pay; every method gets the same call. On up to WARM_ROWS rows: the one-time
            # costs are paid once per call, and a warm call of all 100 rows doubled the
            # time of a 100-row cell (d = 500: 2 x 656 s for ours alone)
            warm_rows = min(n_rows, WARM_ROWS)
            self.warmed.add((label, d, n_budget))
            try:
                with deadline(args.cap_seconds * warm_rows):
                    run(name, case["model"], case["background"], case["rows"][:warm_rows],
                        n_budget, 0)
            except CapExceeded:
                # over the cap per row on these rows: the timed call would be too, after
                # spending the cap on each of its rows (d = 1000: 1,500 s per peer)
                return self._over_cap(key, d, n_budget,
                                      f"{warm_rows} rows over {args.cap_seconds:g} s/row")
            except Exception:  # noqa: BLE001 - reported by the timed runs below
                pass
        outs = []
        try:
            for seed in seeds:
                rows = (case["rows"][seed : seed + 1] if n_rows == 1
                        else case["rows"][:n_rows])
                with deadline(args.cap_seconds * n_rows):
                    out = run(name, case["model"], case["background"], rows, n_budget, seed)
                out["truth_rows"] = [seed] if n_rows == 1 else list(range(n_rows))
                out.pop("explanation", None)
                # the model's own time on the rows this call predicted, measured right
                # after it (the machine's speed drifts by 20-30 % over a run)
                out["raw_seconds"] = RawModelTime(case["model"], case["d"])(out["model_rows"])
                outs.append(out)
        except CapExceeded:
            return self._over_cap(key, d, n_budget, f"over {args.cap_seconds:g} s/row")
        except Exception as err:  # noqa: BLE001 - a failing peer is reported, not fatal
            text = f"{type(err).__name__}: {err}".replace("|", "/").replace("\n", " ")
            return "error: " + text[:160]
        per_row = np.array([o["seconds"] / n_rows for o in outs])
        self.history.setdefault(key, []).append((d, n_budget, float(np.median(per_row))))
        return summarise(case, outs, per_row, n_rows, n_budget)


def summarise(case, outs, per_row, n_rows, budget):
    truth, truth_index = case["truth"], case["truth_index"]
    mse = []
    for o in outs:
        usable = [(k, r) for k, r in enumerate(o["truth_rows"]) if r in truth_index]
        if not usable:
            continue
        got = o["values"][[k for k, _ in usable]]
        want = truth[[truth_index[r] for _, r in usable]]
        mse.append(float(np.mean((got - want) ** 2)))
    evals = float(np.mean([o["model_rows"] for o in outs])) / (N_BACKGROUND * n_rows)
    # per seed, the call's time over the model's own time on the rows it predicted
    ratios = [o["seconds"] / o["raw_seconds"] for o in outs if o["raw_seconds"] > 0]
    raw = float(np.median([o["raw_seconds"] for o in outs])) / n_rows
    return dict(time=per_row, mse=np.array(mse), evals=evals, raw=raw, budget=budget,
                raw_ratio=float(np.median(ratios)) if ratios else float("nan"),
                picked="/".join(sorted({o["picked"] for o in outs})))


# -- cases -----------------------------------------------------------------------------------

def build_case(model_name, d, n_explain, args, log):
    from skshapley import ShapleyExplainer

    X, y, background, rows = make_data(d, n_explain)
    start = time.perf_counter()
    model = (fit_mlp(X, y) if model_name == "mlp"
             else make_product_model(d, 3 if model_name == "closed_form3" else 2))
    fit_seconds = time.perf_counter() - start
    default = ShapleyExplainer(model, prefit=True, background=background).fit(background)
    case = dict(model_name=model_name, d=d, model=model, background=background, rows=rows,
                default_budget=int(default.max_evals_),
                minimum=2 * d + 2,  # one antithetic pair or paired design: every method runs
                raw_per_model_row=raw_seconds_per_row(model, d))
    if model_name != "mlp":
        case["truth"] = closed_form_values(model, rows, background)
        case["truth_index"] = {r: r for r in range(len(rows))}
        case["truth_text"] = "the closed form (exact)"
        return case
    n_ref = min(len(rows), max(args.reference_rows, args.seeds))
    budget = args.reference_multiplier * d
    start = time.perf_counter()
    explanation = run_ours("permutation", model, background, rows[:n_ref], budget,
                           REFERENCE_SEED)["explanation"]
    seconds = time.perf_counter() - start
    floor = float(np.mean(np.asarray(explanation.std_errors) ** 2))
    case["truth"] = np.asarray(explanation.values)
    case["truth_index"] = {r: r for r in range(n_ref)}
    case["reference_floor"] = floor
    case["truth_text"] = (
        f"ours, method='permutation' at {budget} = {args.reference_multiplier} d evaluations "
        f"per row, seed {REFERENCE_SEED}, on the first {n_ref} explained rows "
        f"({seconds:.0f} s; MLP fitted in {fit_seconds:.0f} s); reference floor (mean "
        f"squared standard error of the reference) {floor:.2e}")
    log(f"  reference: {case['truth_text']}")
    return case


# -- equal wall time ---------------------------------------------------------------------------

def fitted_budget(points, target):
    """B with a + b B = target, (a, b) least squares over [(B, seconds per row)]; with one
    point (or a non-positive slope) seconds are taken proportional to B."""
    budgets = np.array([p[0] for p in points], dtype=float)
    seconds = np.array([p[1] for p in points], dtype=float)
    if len(points) >= 2 and np.ptp(budgets) > 0:
        slope, intercept = np.polyfit(budgets, seconds, 1)
        if slope > 0:
            return max(1, int(round((target - intercept) / slope)))
    k = int(np.argmax(budgets))
    return max(1, int(round(target * budgets[k] / seconds[k])))


def equal_time(bench, case, results, n_rows, seeds):
    """{label: (B*, result or text)} at ours-auto's default-budget time per row."""
    auto = results.get((AUTO, "auto", n_rows))
    if not isinstance(auto, dict):
        return None, {}
    target = float(np.median(auto["time"]))
    out = {AUTO: (auto["budget"], auto)}
    for label in LABELS:
        if label == AUTO or not re.search(bench.args.methods, label):
            continue
        points = [(r["budget"], float(np.median(r["time"])))
                  for (lab, _, n), r in results.items()
                  if lab == label and n == n_rows and isinstance(r, dict)]
        if not points:
            points = [(r["budget"], float(np.median(r["time"])))
                      for (lab, _, n), r in results.items()
                      if lab == label and n == 1 and isinstance(r, dict)]
        if not points:
            out[label] = (None, "no run to fit")
            continue
        budget, result = None, "no run"
        wanted = fitted_budget(points, target)
        for _ in range(3):  # a budget that misses the target by 1.5x is scaled and rerun
            budget = min(max(wanted, case["minimum"]), 2 ** min(case["d"], 40))
            result = bench.run(case, label, budget, n_rows, seeds)
            if not isinstance(result, dict):
                break
            took = float(np.median(result["time"]))
            result["floored"] = budget == case["minimum"] and took > target
            if result["floored"] or target / 1.5 <= took <= target * 1.5:
                break
            wanted = max(1, int(round(budget * target / took)))  # time ~ budget near B*
            if min(max(wanted, case["minimum"]), 2 ** min(case["d"], 40)) == budget:
                break
        out[label] = (budget, result)
    return target, out


# -- error bars and memory ---------------------------------------------------------------------

def coverage(args, d, model_name, log):
    """{method: dict or text}: coverage of ours' 95 % error bars on a closed-form game."""
    from skshapley import ShapleyExplainer

    _, _, background, rows = make_data(d, args.coverage_seeds)
    model = make_product_model(d, 3 if model_name == "closed_form3" else 2)
    truth = closed_form_values(model, rows, background)
    out = {}
    for method in ("auto", "permutation"):
        inside, widths, errors, seconds, picked = [], [], [], [], set()
        try:
            for seed in range(args.coverage_seeds):
                explainer = ShapleyExplainer(model, prefit=True, method=method,
                                             background=background,
                                             random_state=seed).fit(background)
                start = time.perf_counter()
                with deadline(args.cap_seconds):
                    explanation = explainer.explain(rows[seed : seed + 1])
                seconds.append(time.perf_counter() - start)
                bars = explanation.error_bars()
                if bars is None:
                    raise ValueError("no error bars")
                error = np.abs(np.asarray(explanation.values)[0] - truth[seed])
                inside.append(error <= np.asarray(bars)[0])
                widths.append(np.asarray(bars)[0])
                errors.append(error)
                picked.add(explainer.method_)
                budget = explainer.max_evals_
        except CapExceeded:
            out[method] = f"skipped (> cap: a row took over {args.cap_seconds:g} s)"
            continue
        except Exception as err:  # noqa: BLE001
            out[method] = f"error: {type(err).__name__}: {err}"[:160]
            continue
        inside = np.concatenate(inside)
        out[method] = dict(coverage=float(inside.mean()), n=inside.size,
                           width=float(np.mean(widths)),
                           rmse=float(np.sqrt(np.mean(np.concatenate(errors) ** 2))),
                           seconds=float(np.median(seconds)), budget=budget,
                           picked="/".join(sorted(picked)))
        log(f"  coverage {model_name} d = {d} {method}: {out[method]['coverage']:.3f} "
            f"({inside.size} values)")
    return out


# ru_maxrss survives exec on Linux (the child would start at its parent's peak), so the
# probe reads the peak resident size of its own address space, VmHWM, instead.
_MEMORY_PROBE = """
import json, sys, time, tracemalloc
import joblib
from skshapley import ShapleyExplainer

def peak_kib():
    with open("/proc/self/status") as f:
        return int(next(line for line in f if line.startswith("VmHWM")).split()[1])

model, background, rows = joblib.load(sys.argv[1])
explainer = ShapleyExplainer(model, prefit=True, background=background,
                             random_state=0).fit(background)
base = peak_kib()
start = time.perf_counter()
explainer.explain(rows[:1])
seconds = time.perf_counter() - start
grown = peak_kib()
tracemalloc.start()
explainer.explain(rows[:1])
peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
print(json.dumps(dict(base_kib=base, maxrss_kib=grown, traced_peak=peak, seconds=seconds,
                      method=explainer.method_, budget=explainer.max_evals_)))
"""


def memory(args, d, log):
    """Peak memory of ours with the defaults on one MLP row, in a fresh process."""
    import joblib

    X, y, background, rows = make_data(d, 1)
    model = fit_mlp(X, y)
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "case.joblib"
        joblib.dump((model, background, rows), path)
        try:
            done = subprocess.run([sys.executable, "-c", _MEMORY_PROBE, str(path)],
                                  capture_output=True, text=True,
                                  timeout=3 * args.cap_seconds + 60)
        except subprocess.TimeoutExpired:
            return f"skipped (> cap: over {3 * args.cap_seconds + 60:g} s)"
    if done.returncode != 0:
        return "error: " + done.stderr.strip().splitlines()[-1][:160]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    log(f"  memory d = {d}: {result}")
    return result


# -- report ----------------------------------------------------------------------------------

def fmt_time(values):
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    return f"{median:.3g} [{q1:.3g}, {q3:.3g}]" if len(values) > 2 else f"{median:.3g}"


def fmt_mse(mse):
    if len(mse) == 0:
        return "—"
    if len(mse) == 1:
        return f"{mse[0]:.2e}"
    return f"{mse.mean():.2e} ± {mse.std(ddof=1) / np.sqrt(len(mse)):.1e}"


def budget_name(budget, d):
    return "auto" if budget == "auto" else f"{budget // d} d"


def render_case(case, results, row_counts, budgets, equal, others):
    d, name = case["d"], case["model_name"]
    lines = [f"### {name}, d = {d}", "",
             f"Truth: {case['truth_text']}. Default budget (auto): {case['default_budget']} "
             f"evaluations per row. Raw model time: {case['raw_per_model_row'] * 1e6:.3g} µs "
             f"per input row. Other processes kept {100 * others:.0f} % of the cores busy "
             f"meanwhile{' (**timings disturbed**)' if others > 0.1 else ''}.", ""]
    head = ["budget", "method", "evals / row"]
    for n in row_counts:
        head += [f"s / row ({n} row{'s' if n > 1 else ''})", f"/ raw ({n})", f"MSE ({n})"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for budget in budgets:
        for label in LABELS:
            cells, evals, picked = [], "—", ""
            present = False
            for n in row_counts:
                r = results.get((label, budget, n))
                if r is None:
                    cells += ["—", "—", "—"]
                    continue
                present = True
                if isinstance(r, str):
                    cells += [r, "—", "—"]
                    continue
                evals = f"{r['evals']:.0f}"
                if label == AUTO:
                    picked = f" ({r['picked']})"
                cells += [fmt_time(r["time"]), f"{r['raw_ratio']:.2f}x"
                          if np.isfinite(r["raw_ratio"]) else "—", fmt_mse(r["mse"])]
            if present:
                b = case["default_budget"] if budget == "auto" else budget
                lines.append(f"| {budget_name(budget, d)} = {b} | {label}{picked} | {evals} | "
                             + " | ".join(cells) + " |")
    for n, (target, rows) in equal.items():
        if target is None:
            lines += ["", f"Equal wall time ({n} row{'s' if n > 1 else ''}): ours-auto at the "
                      "default budget has no time, so there is no target."]
            continue
        lines += ["", f"MSE at equal wall time ({n} row{'s' if n > 1 else ''} per call): "
                  f"target {target:.3g} s per row (ours-auto at the default budget).", "",
                  "| method | budget B* | evals / row | s / row | MSE |", "|---|---|---|---|---|"]
        for label, (budget, r) in rows.items():
            if isinstance(r, dict):
                floor = " (its minimum; slower than the target)" if r.get("floored") else ""
                lines.append(f"| {label} | {budget}{floor} | {r['evals']:.0f} | "
                             f"{fmt_time(r['time'])} | {fmt_mse(r['mse'])} |")
            else:
                lines.append(f"| {label} | {budget if budget else '—'} | — | {r} | — |")
    lines.append("")
    return "\n".join(lines)


def _compare(ours, peer):
    """"wins", "ties" or "**loses**": mean MSE apart by more than the two standard errors
    (one seed: no standard error); both below ``ROUND_OFF`` is a tie (both exact)."""
    if ours.mean() < ROUND_OFF and peer.mean() < ROUND_OFF:
        return "ties (both exact to round-off)"
    se = sum(m.std(ddof=1) / np.sqrt(len(m)) for m in (ours, peer) if len(m) > 1)
    if ours.mean() - peer.mean() > se:
        return f"**loses** ({ours.mean() / peer.mean():.2g}x its MSE)"
    if peer.mean() - ours.mean() > se:
        return f"wins ({ours.mean() / peer.mean():.2g}x its MSE)"
    return f"ties within the standard errors ({ours.mean() / peer.mean():.2g}x its MSE)"


def verdicts(case, results, budgets, row_counts, equal):
    """Plain-words lines: ours-auto against the most accurate peer, in MSE and in time."""
    out, name, d = [], case["model_name"], case["d"]
    for n_rows in row_counts:
        rows_text = f"{n_rows} row{'s' if n_rows > 1 else ''} per call"
        for budget in budgets:
            rows = {lab: results.get((lab, budget, n_rows)) for lab in LABELS}
            rows = {lab: r for lab, r in rows.items() if isinstance(r, dict) and len(r["mse"])}
            peers = [lab for lab in rows if not lab.startswith("skshapley")]
            if AUTO not in rows or not peers:
                continue
            peer = min(peers, key=lambda lab: rows[lab]["mse"].mean())
            auto = rows[AUTO]
            ratio = np.median(auto["time"]) / np.median(rows[peer]["time"])
            out.append(f"- {name}, d = {d}, B = {budget_name(budget, d)}, {rows_text}: "
                       f"ours-auto ({auto['picked']}) {_compare(auto['mse'], rows[peer]['mse'])}"
                       f" against the most accurate peer, {peer}, in {ratio:.2g}x its time "
                       "per row.")
        target, timed = equal.get(n_rows, (None, {}))
        rows = {lab: r for lab, (_, r) in timed.items() if isinstance(r, dict) and len(r["mse"])}
        peers = [lab for lab in rows if not lab.startswith("skshapley")]
        if target is None or AUTO not in rows or not peers:
            continue
        peer = min(peers, key=lambda lab: rows[lab]["mse"].mean())
        out.append(f"- {name}, d = {d}, equal wall time ({target:.3g} s per row), {rows_text}: "
                   f"ours-auto {_compare(rows[AUTO]['mse'], rows[peer]['mse'])} against the "
                   f"most accurate peer, {peer} at B* = {timed[peer][0]}.")
    return out


def tally(lines):
    """One sentence counting the verdict lines."""
    if not lines:
        return ""
    losses = sum("**loses**" in line for line in lines)
    wins = sum(" wins (" in line for line in lines)
    ties = len(lines) - losses - wins
    return (f"Ours-auto against the most accurate peer of each configuration below: "
            f"{wins} wins, {ties} ties, {losses} losses (MSE apart by more than the two "
            "standard errors; with one seed a plain comparison).")


def render_coverage(cover):
    if not cover:
        return "Not run."
    lines = ["| game | d | method | budget / row | s / row | values | inside 95 % bars | "
             "mean half-width | RMSE |", "|---|---|---|---|---|---|---|---|---|"]
    for (model_name, d), methods in cover.items():
        for method, r in methods.items():
            if isinstance(r, dict):
                lines.append(f"| {model_name} | {d} | {method} ({r['picked']}) | {r['budget']} "
                             f"| {r['seconds']:.3g} | {r['n']} | {r['coverage']:.3f} | "
                             f"{r['width']:.3g} | {r['rmse']:.3g} |")
            else:
                lines.append(f"| {model_name} | {d} | {method} | — | — | — | {r} | — | — |")
    return "\n".join(lines)


def render_memory(mem):
    if not mem:
        return "Not run."
    lines = ["| d | method (defaults) | budget / row | s / row | peak RSS after loading model "
             "and data (MiB) | peak RSS growth during explain (MiB) | tracemalloc peak of explain "
             "(MiB) |", "|---|---|---|---|---|---|---|"]
    for d, r in mem.items():
        if isinstance(r, dict):
            lines.append(f"| {d} | {r['method']} | {r['budget']} | {r['seconds']:.3g} | "
                         f"{r['base_kib'] / 1024:.0f} | "
                         f"{(r['maxrss_kib'] - r['base_kib']) / 1024:.0f} | "
                         f"{r['traced_peak'] / 2**20:.0f} |")
        else:
            lines.append(f"| {d} | defaults | — | — | — | {r} | — |")
    return "\n".join(lines)


def dirty_package_files():
    try:
        out = subprocess.run(["git", "-C", str(HERE.parent), "status", "--porcelain", "--",
                              "skshapley"], capture_output=True, text=True, timeout=10)
        return [line[3:] for line in out.stdout.splitlines()]
    except (OSError, subprocess.SubprocessError):
        return []


def write_report(args, argv, header, dirty, sections, lines_verdict, cover, mem, warm, total):
    command = " ".join(["python", "benchmarks/bench_width.py",
                        *map(shlex.quote, sys.argv[1:] if argv is None else argv)])
    dirty_text = (f"\n\nUncommitted changes in the package at run time: {', '.join(dirty)}."
                  if dirty else "")
    warm_text = ", ".join(f"{label} {seconds:.2f} s" for label, seconds in warm.items())
    text = f"""# Explaining at many features: ours and the peers at equal budget and equal time

{__doc__.split("Run:")[0].strip()}

## Machine and versions

{header}{dirty_text}

## Command

`{command}` (whole run {total:.0f} s; cap {args.cap_seconds:g} s per row; {args.seeds}
seeds for 1-row runs, {args.seeds_batch} for batch runs).

First call of each method (warm-up, not in the tables; numba compiles or loads its
cache there): {warm_text or "none"}.

## Summary

{tally(lines_verdict)}

{chr(10).join(lines_verdict) or "No configuration with ours-auto and a peer both measured."}

## Results

Budget: evaluations per row requested (``auto``: ours' default ``max_evals``, given to
every method). evals / row: measured model rows / (100 x rows). s / row: median [IQR]
over seeds. / raw: that time over the model's own time on the same number of rows. MSE: mean ±
standard error over seeds, against the truth named above each table. "skipped (> cap)":
predicted or measured above the cap; "—": not run (filtered or not applicable).

{chr(10).join(sections)}

## Error bars of ours (closed-form game)

Share of |φ̂ − φ| ≤ ``Explanation.error_bars()`` (95 % t intervals), seed s explaining
row s, default budget. Nominal: 0.95. On ``closed_form`` (order 2) antithetic orderings
and paired designs are exact, so errors and bars are both round-off and the share means
nothing there; ``closed_form3`` is the test.

{render_coverage(cover)}

## Memory of ours with the defaults (MLP, one row, fresh process)

{render_memory(mem)}
"""
    if args.output is None:
        print(text)
        return
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    print(f"written {args.output}", flush=True)


# -- self-test ---------------------------------------------------------------------------------

def selftest():
    """The closed form against enumeration of all 2^8 coalitions of the marginal game."""
    from skshapley.approximators import exact_shapley
    from skshapley.games import MarginalGame

    d = 8
    _, _, background, rows = make_data(d, 3)
    ok = True
    for model_name, order in (("closed_form", 2), ("closed_form3", 3)):
        model = make_product_model(d, order)
        oracle = closed_form_values(model, rows, background)
        worst = 0.0
        for r, row in enumerate(rows):
            game = MarginalGame(model.predict, row, background)
            exact = np.asarray(exact_shapley(game).values)
            worst = max(worst, float(np.abs(exact - oracle[r]).max()))
        efficiency = np.abs(oracle.sum(axis=1) + model.predict(background).mean()
                            - model.predict(rows)).max()
        scale = float(np.abs(oracle).max())
        passed = worst <= 1e-10 * max(1.0, scale) and efficiency <= 1e-10 * max(1.0, scale)
        ok &= passed
        print(f"selftest {model_name}, d = {d}: max |closed form - enumeration| = {worst:.2e}, "
              f"efficiency gap {efficiency:.2e} (max |phi| = {scale:.3g}): "
              f"{'OK' if passed else 'FAILED'}")
    return 0 if ok else 1


# -- main --------------------------------------------------------------------------------------

def parse_budgets(text):
    return [b if b == "auto" else int(b) for b in text.split(",")]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="smoke size: d = 20, 50; rows 1, 10; budgets auto, 10 d; 2 seeds; 1 batch seed; "
                             "reference at 100 d; coverage at "
                             "d = 20 over 5 seeds; memory at d = 50; prints the report")
    parser.add_argument("--selftest", action="store_true",
                        help="check the closed form against enumeration at d = 8 and exit")
    parser.add_argument("--sizes", default="20,50,100,200,500,1000")
    parser.add_argument("--rows", default="1,100", help="rows per explain call")
    parser.add_argument("--models", default="mlp,closed_form,closed_form3")
    parser.add_argument("--budgets", default="auto,10,50",
                        help="'auto' (ours' default) and multiples of d")
    parser.add_argument("--methods", default=".",
                        help="regular expression: run only the methods whose label matches")
    parser.add_argument("--seeds", type=int, default=5, help="seeds of the 1-row runs")
    parser.add_argument("--seeds-batch", type=int, default=3,
                        help="seeds of the runs with more than one row")
    parser.add_argument("--cap-seconds", type=float, default=120.0)
    parser.add_argument("--max-gib", type=float, default=4.0,
                        help="skip a peer whose largest array would exceed this")
    parser.add_argument("--reference-multiplier", type=int, default=500,
                        help="MLP reference budget per row, in multiples of d")
    parser.add_argument("--reference-rows", type=int, default=10)
    parser.add_argument("--no-equal-time", action="store_true")
    parser.add_argument("--coverage-sizes", default="100,500")
    parser.add_argument("--coverage-seeds", type=int, default=20)
    parser.add_argument("--memory-sizes", default="1000")
    parser.add_argument("--oddshap-python", default=None,
                        help="a Python >= 3.12 with shapiq >= 1.5: adds shapiq's OddSHAP")
    parser.add_argument("--output", type=pathlib.Path, default=None,
                        help=f"default {RESULTS} (--quick prints unless this is given)")
    args = parser.parse_args(argv)
    if args.selftest:
        return selftest()
    if args.quick:
        given = set(sys.argv[1:] if argv is None else argv)
        if "--sizes" not in given:
            args.sizes = "20,50"
        if "--seeds" not in given:
            args.seeds = 2
        if "--seeds-batch" not in given:
            args.seeds_batch = 1
        if "--rows" not in given:
            args.rows = "1,10"
        if "--budgets" not in given:
            args.budgets = "auto,10"
        if "--coverage-sizes" not in given:
            args.coverage_sizes = "20"
        if "--coverage-seeds" not in given:
            args.coverage_seeds = 5
        if "--memory-sizes" not in given:
            args.memory_sizes = "50"
        if "--reference-multiplier" not in given:
            args.reference_multiplier = 100
    elif args.output is None:
        args.output = RESULTS
    warnings.filterwarnings("ignore")
    import logging

    logging.getLogger("shap").setLevel(logging.ERROR)
    import skshapley

    started = time.perf_counter()
    header = skshapley.show_versions(as_markdown=True)
    dirty = dirty_package_files()
    sizes = [int(s) for s in args.sizes.split(",")]
    row_counts = [int(n) for n in args.rows.split(",")]
    budgets_spec = parse_budgets(args.budgets)
    bench = Bench(args)
    sections, lines_verdict, cover, mem = [], [], {}, {}

    def log(text=""):
        print(text, flush=True)

    for d in sizes:
        budgets = [b if b == "auto" else b * d for b in budgets_spec]
        for model_name in args.models.split(","):
            log(f"== {model_name}, d = {d}")
            snapshot = cpu_snapshot()
            try:
                case = build_case(model_name, d, max(max(row_counts), args.seeds), args, log)
            except Exception as err:  # noqa: BLE001
                sections.append(f"### {model_name}, d = {d}\n\nerror building the case: "
                                f"{type(err).__name__}: {err}\n")
                continue
            results, equal = {}, {}
            for n_rows in row_counts:
                seeds = list(range(args.seeds if n_rows == 1 else args.seeds_batch))
                for budget in budgets:
                    for label in LABELS:
                        r = bench.run(case, label, budget, n_rows, seeds)
                        if r is None:
                            continue
                        results[(label, budget, n_rows)] = r
                        text = (r if isinstance(r, str) else
                                f"{np.median(r['time']):.3g} s/row, {r['evals']:.0f} evals, "
                                f"MSE {fmt_mse(r['mse'])} ({r['picked']})")
                        log(f"  {n_rows} row(s) B = {budget} {label}: {text}")
                if not args.no_equal_time:
                    equal[n_rows] = equal_time(bench, case, results, n_rows, seeds)
                    for label, (b, r) in equal[n_rows][1].items():
                        if label != AUTO:
                            log(f"  equal time {n_rows} row(s) {label} B* = {b}: "
                                + (r if isinstance(r, str) else
                                   f"{np.median(r['time']):.3g} s/row MSE {fmt_mse(r['mse'])}"))
            others = others_share(snapshot, cpu_snapshot())
            sections.append(render_case(case, results, row_counts, budgets, equal,
                                        others))
            lines_verdict += verdicts(case, results, budgets, row_counts, equal)
            write_report(args, argv, header, dirty, sections, lines_verdict, cover, mem,
                         bench.warm, time.perf_counter() - started)
    for d in (int(s) for s in args.coverage_sizes.split(",") if s):
        for model_name in ("closed_form", "closed_form3"):
            cover[(model_name, d)] = coverage(args, d, model_name, log)
    for d in (int(s) for s in args.memory_sizes.split(",") if s):
        try:
            mem[d] = memory(args, d, log)
        except Exception as err:  # noqa: BLE001
            mem[d] = f"error: {type(err).__name__}: {err}"[:160]
    write_report(args, argv, header, dirty, sections, lines_verdict, cover, mem, bench.warm,
                 time.perf_counter() - started)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Claim (issue 31, speed): MomentQuantileTransformer's default sketch fits at least as
fast as ``np.sort`` of the same columns, transforms at least 2.5x as fast as
scikit-learn's ``QuantileTransformer.transform`` on every column family below (point
masses and heavy tails included), and merges two fitted transformers in well under a
millisecond per 20 columns.

Protocol:
- Data: seeded columns of n = 1,000,000 rows (``--quick``: 200,000): normal,
  lognormal(0, 2), Poisson(3), zero-inflated lognormal (60% zeros) and a 5-mode normal
  mixture ((-20, 2), (-8, 0.5), (0, 0.05), (5, 1), (30, 5)); and 20 columns of normal
  values and of the five families in turn. The fits are also timed on the same columns
  of 10,000 and 100,000 rows, where a fixed cost per fit shows.
- Fit: ``MomentQuantileTransformer().fit(X)`` (the CDF sketch, then 1000 quantiles read
  off it) against ``np.sort(X, axis=0)``, ``QuantileTransformer().fit(X)`` (its default
  10,000-row subsample) and datasketches' ``kll_doubles_sketch(200).update`` of each
  column (a batch update); the rank error of our fit and of KLL's quantiles at p =
  0.01, ..., 0.99 (``skshapley.metrics.rank_error``) beside them.
- Transform: ``transform`` of the fitted column(s) against
  ``QuantileTransformer.transform`` (fitted on the same data), uniform output.
- Merge: ``a.merge(b)`` of two transformers fitted on the halves of the 20 columns
  (a deep copy of ``a`` first, its time subtracted) and ``CDFSketch.merge`` of their
  sketches, against merging the 20 KLL k=200 sketches of the halves.
- Timing: best of ``--repeats`` calls (default 5) after one warm-up call, ours and its
  peers in the same minutes; numba and BLAS on one thread, then ours again on two
  threads (numba's ``set_num_threads(2)``: its counting and transform kernels split
  their rows across threads; np.sort, QuantileTransformer and KLL stay on one). The
  machine is shared: ratios are what to read.

Refuted if, on one thread, a fit is slower than ``np.sort`` of its columns or a
transform less than 2.5x as fast as ``QuantileTransformer.transform``.

Run: ``python benchmarks/bench_quantile_speed.py`` (``--quick``: 200,000 rows).
"""

from __future__ import annotations

import argparse
import copy
import os
import pathlib
import sys
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _report import best_time, start_report  # noqa: E402

RESULTS = pathlib.Path(__file__).resolve().parent / "results" / "quantile_speed.md"
P = np.round(np.linspace(0.01, 0.99, 99), 10)
# rows of the fits that are timed besides n (the transforms and merges use n alone)
SMALL = (10_000, 100_000)


def families(n, seed):
    """(name, column) pairs, seeded."""
    rng = np.random.default_rng(seed)
    k = rng.choice(5, n)
    mixture = rng.normal(np.array([-20.0, -8.0, 0.0, 5.0, 30.0])[k],
                         np.array([2.0, 0.5, 0.05, 1.0, 5.0])[k])
    return [
        ("normal", rng.normal(size=n)),
        ("lognormal(0, 2)", rng.lognormal(0, 2, n)),
        ("Poisson(3)", rng.poisson(3.0, n).astype(float)),
        ("zero-inflated (60% zeros)",
         np.where(rng.random(n) < 0.6, 0.0, rng.lognormal(1, 1, n))),
        ("5-mode mixture", mixture),
    ]


def kll_sketches(ds, X):
    out = []
    for j in range(X.shape[1]):
        sketch = ds.kll_doubles_sketch(200)
        sketch.update(np.ascontiguousarray(X[:, j]))
        out.append(sketch)
    return out


def run(n, repeats, ds, log):
    import numba
    from sklearn.preprocessing import QuantileTransformer
    from threadpoolctl import threadpool_limits

    from skshapley import MomentQuantileTransformer
    from skshapley.metrics import rank_error

    def ours_fit(X):
        return MomentQuantileTransformer().fit(X)

    def ours_two_threads(function):
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        try:
            return best_time(function, repeats)
        finally:
            numba.set_num_threads(1)

    def cases_of(rows):
        cases = [(f"{name}, {rows:,} x 1", x[:, None]) for name, x in families(rows, 0)]
        mixed = np.column_stack([x for _, x in families(rows, 1)] * 4)
        cases += [(f"normal, {rows:,} x 20",
                   np.random.default_rng(2).normal(size=(rows, 20))),
                  (f"the 5 families x 4, {rows:,} x 20", mixed)]
        return cases, mixed

    fits, transforms = [], []
    numba.set_num_threads(1)
    with threadpool_limits(1):
        cases, mixed = cases_of(n)
        # the small sizes' fits only: a fixed cost per fit shows there
        small = [case for rows in SMALL if rows < n for case in cases_of(rows)[0]]
        for name, X in small + cases:
            t_ours = best_time(lambda X=X: ours_fit(X), repeats)
            t_sort = best_time(lambda X=X: np.sort(X, axis=0), repeats)
            t_qt = best_time(lambda X=X: QuantileTransformer(random_state=0).fit(X), repeats)
            t_kll = best_time(lambda X=X: kll_sketches(ds, X), repeats) if ds else np.nan
            t_ours2 = ours_two_threads(lambda X=X: ours_fit(X))
            model = ours_fit(X)
            q = model.quantiles(P)
            err = np.mean([rank_error(X[:, j], q[:, j], P) for j in range(X.shape[1])])
            if ds:
                kll = kll_sketches(ds, X)
                kll_err = np.mean([rank_error(X[:, j], np.asarray(s.get_quantiles(P)), P)
                                   for j, s in enumerate(kll)])
            else:
                kll_err = np.nan
            fits.append((name, t_ours, t_ours2, t_sort, t_qt, t_kll, err, kll_err))
            if X.shape[0] != n:
                print(fits[-1], flush=True)
                continue
            qt = QuantileTransformer(random_state=0).fit(X)
            model.transform(X[:1000])  # the lookup table is built on first use
            t_tr = best_time(lambda X=X, m=model: m.transform(X), repeats)
            t_qt_tr = best_time(lambda X=X, qt=qt: qt.transform(X), repeats)
            t_tr2 = ours_two_threads(lambda X=X, m=model: m.transform(X))
            transforms.append((name, t_tr, t_tr2, t_qt_tr))
            print(fits[-1], transforms[-1], flush=True)
        # merges of the mixed 20 columns' halves
        half = n // 2
        a = ours_fit(mixed[:half])
        b = ours_fit(mixed[half:])
        t_copy = best_time(lambda: copy.deepcopy(a), repeats)
        t_merge = max(0.0, best_time(lambda: copy.deepcopy(a).merge(b), repeats) - t_copy)
        t_copy_s = best_time(lambda: a.sketch_.copy(), repeats)
        t_sketch = max(0.0, best_time(lambda: a.sketch_.copy().merge(b.sketch_), repeats)
                       - t_copy_s)
        if ds:
            kll_a, kll_b = kll_sketches(ds, mixed[:half]), kll_sketches(ds, mixed[half:])
            serial = [s.serialize() for s in kll_a]
            t_kll_copy = best_time(lambda: [ds.kll_doubles_sketch.deserialize(s)
                                            for s in serial], repeats)

            def kll_merge():
                for s, other in zip(serial, kll_b, strict=True):
                    ds.kll_doubles_sketch.deserialize(s).merge(other)
            t_kll_merge = max(0.0, best_time(kll_merge, repeats) - t_kll_copy)
        else:
            t_kll_merge = np.nan
        merged = copy.deepcopy(a).merge(b)
        q = merged.quantiles(P)
        merge_err = np.mean([rank_error(mixed[:, j], q[:, j], P) for j in range(20)])
    return fits, transforms, (t_merge, t_sketch, t_kll_merge, merge_err)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--output", type=pathlib.Path, default=RESULTS)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    try:
        import datasketches as ds
    except ImportError:
        ds = None
    lines, log = start_report("Quantile transformer speed (issue 31)", __doc__,
                              "bench_quantile_speed.py", argv)
    n = 200_000 if args.quick else 1_000_000
    log(f"Load average at the start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
        f"(a shared machine); datasketches: {'yes' if ds else 'not installed'}.")
    log("")
    fits, transforms, merge = run(n, args.repeats, ds, log)
    log(f"Load average at the end: {os.getloadavg()[0]:.1f}.")
    log("")
    log("## Fit (seconds; ratio = peer time / ours on one thread)")
    log("")
    log("| data | ours, 1 thread | ours, 2 threads | np.sort | ratio | "
        "QuantileTransformer.fit | ratio | KLL k=200 update | ratio | "
        "rank error ours | rank error KLL |")
    log("|---|---|---|---|---|---|---|---|---|---|---|")
    misses = []
    for name, t1, t2, ts, tq, tk, err, kerr in fits:
        # six decimals: np.sort of 10,000 values takes about 1e-5 s
        log(f"| {name} | {t1:.6f} | {t2:.6f} | {ts:.6f} | {ts / t1:.2f} | {tq:.6f} | "
            f"{tq / t1:.2f} | {tk:.6f} | {tk / t1:.2f} | {err:.6f} | {kerr:.6f} |")
        if ts / t1 < 1:
            misses.append(f"fit of {name}: {ts / t1:.2f}x np.sort")
    log("")
    log("## Transform (seconds; ratio = QuantileTransformer.transform / ours on one "
        "thread)")
    log("")
    log("| data | ours, 1 thread | ours, 2 threads | QuantileTransformer.transform | "
        "ratio |")
    log("|---|---|---|---|---|")
    for name, t1, t2, tq in transforms:
        log(f"| {name} | {t1:.4f} | {t2:.4f} | {tq:.4f} | {tq / t1:.2f} |")
        if tq / t1 < 2.5:
            misses.append(f"transform of {name}: {tq / t1:.2f}x QuantileTransformer")
    log("")
    t_merge, t_sketch, t_kll, merge_err = merge
    log("## Merge of two fitted 20-column states (seconds, the copy subtracted)")
    log("")
    log("| ours: transformer.merge | ours: CDFSketch.merge | 20 KLL k=200 merges | "
        "rank error of the merged transformer |")
    log("|---|---|---|---|")
    log(f"| {t_merge:.5f} | {t_sketch:.5f} | {t_kll:.5f} | {merge_err:.6f} |")
    log("")
    if misses:
        log("Missed on one thread: " + "; ".join(misses) + ".")
    else:
        log("Every fit is at least as fast as np.sort and every transform at least 2.5x "
            "QuantileTransformer.transform, on one thread.")
    args.output.write_text("\n".join(lines) + "\n")
    print(f"written to {args.output}")


if __name__ == "__main__":
    main(sys.argv[1:])

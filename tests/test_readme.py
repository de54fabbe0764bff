"""The README's Python examples run and mean what they say."""

import pathlib
import re

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
# the code of each block alone, not the prose after it
BLOCKS = [part.split("```")[0] for part in README.split("```python")[1:]]


def _run(code):
    import matplotlib

    matplotlib.use("Agg")
    from threadpoolctl import threadpool_limits

    namespace = {}
    with threadpool_limits(limits=1, user_api="openmp"):
        exec(compile(code, "README.md", "exec"), namespace)
    return namespace


def test_the_two_setup_commands_are_those_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text()
    commands = re.findall(r"```bash\n(.*?)```", README, flags=re.S)
    assert commands[:2] == ["pip install .\nskshapley explain\n",
                            "pip install '.[test]'\npython -m pytest\n"]
    for line in ("pip install .", "skshapley explain", "pip install '.[test]'",
                 "python -m pytest"):
        assert line in ci


def test_readme_explainer_example_runs():
    namespace = _run(BLOCKS[0])
    explanation, explainer = namespace["explanation"], namespace["explainer"]
    assert explanation.values.shape == (3, 30)
    # 2^30 coalitions do not fit the default budget: estimated, every value with a real
    # error bar, and still adding up to the explained output.
    assert explainer.response_method_ == "decision_function"
    assert explanation.method != "exact" and (explanation.std_errors > 0).all()
    assert (explanation.error_bars() > explanation.std_errors).all()
    model_output = explainer.estimator_.decision_function(namespace["X"].iloc[:3])
    np.testing.assert_allclose(explanation.predictions, model_output, rtol=1e-9)


@pytest.mark.parametrize("index", range(1, len(BLOCKS)))
def test_every_other_readme_example_runs(index):
    code = BLOCKS[index]
    namespace = _run(code)
    if "interactions" in code:
        explanation = namespace["explanation"]
        assert explanation.method == "tree"
        np.testing.assert_allclose(explanation.interactions.sum(axis=2), explanation.values,
                                   atol=1e-8)
    if "lsspa(" in code:
        result = namespace["result"]
        assert result.attribution.sum() == pytest.approx(result.r2, abs=1e-10)
    if "merged" in namespace:
        X, merged = namespace["X"], namespace["merged"]
        np.testing.assert_allclose(merged.quantiles([0.5]), np.quantile(X, [0.5], axis=0),
                                   rtol=0.01)
    if "careful" in namespace:
        # The regulariser shrinks the penalised feature's Shapley values.
        X = namespace["X"]
        plain = np.abs(namespace["model"].shapley_values(X[:100])[:, 3]).mean()
        careful = np.abs(namespace["careful"].shapley_values(X[:100])[:, 3]).mean()
        assert careful < 0.5 * plain

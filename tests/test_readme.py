"""The README's Python example runs and means what it says."""

import pathlib

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_readme_python_example_runs():
    readme = (ROOT / "README.md").read_text()
    code = readme.split("```python")[1].split("```")[0]
    namespace = {}
    exec(compile(code, "README.md", "exec"), namespace)
    explanation, explainer = namespace["explanation"], namespace["explainer"]
    assert explanation.values.shape == (20, 10)
    assert explanation.method == "tree" and not explanation.std_errors.any()
    model_output = explainer.estimator_.predict(namespace["X"].iloc[:20])
    np.testing.assert_allclose(explanation.predictions, model_output, rtol=1e-9)

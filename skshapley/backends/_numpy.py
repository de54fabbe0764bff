"""Compatibility: the names that code outside the backends still imports from the former
NumPy backend module. The NumPy reference kernels live by domain now
(``skshapley.backends.<domain>._numpy``); ``skshapley/sketch/_moments.py`` reads the moment
summary's layout from here until it imports ``skshapley.backends.sketch._numpy``, and then
this module goes.
"""

from skshapley.backends.sketch._numpy import N_MOMENT_FIELDS, _unit_exponent

__all__ = ["N_MOMENT_FIELDS", "_unit_exponent"]

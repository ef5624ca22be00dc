"""Built-in check families. Importing this package registers every built-in type.

A newcomer adds a check to its family's module, or a family by adding a module here and
naming it under its family in `core.registry.FAMILIES`; `tests/checks/test_registry.py`
then requires its description, family and documented parameters, and
`tests/checks/test_check_costs.py` a declared cost for each costly parameter.
"""

from importlib import import_module

from scorewire.core.registry import FAMILIES

# Families register themselves at import.
for _modules in FAMILIES.values():
    for _module in _modules:
        import_module(f"{__name__}.{_module}")

"""Shared fixtures. Importing the checks package registers every built-in type."""

import scorewire.checks  # noqa: F401

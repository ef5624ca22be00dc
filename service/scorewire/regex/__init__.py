"""Linear-time regular expressions for user patterns.

`engine` translates Python `re` patterns (with their flag bits) to RE2 and refuses, at
load, what RE2 cannot honour; `safe_subset` parses seed 002's safe subset. Nothing here
knows about checks: it imports only `scorewire.core`.
"""

"""Linear-time regular expressions for user patterns.

`engine` compiles Python `re` patterns (with their flag bits, `flags`) onto RE2 and
refuses, at load, what RE2 cannot honour; `ecma` reads JSON Schema's ECMA-262 dialect
into that syntax; `safe_subset` parses seed 002's safe subset. Nothing here knows about
checks: it imports only `scorewire.core`.

The translation from Python's syntax to RE2's is `translate`, which walks the pattern
once (`reader`) and hands each construct to the part that reads it: `escapes`,
`classes`, `groups`, `quantifiers`, `anchors`. The code-point sets Python means
(`codepoints`) are written as RE2 text by `re2_text`. A pattern holding `\\b`, `\\B` or a
`$` RE2 cannot state is read back into a `tree` and rebuilt without them by
`boundaries`, with `sublanguages` restricting the parts that meet at an assertion.
"""

"""ECMA-262 patterns (JSON Schema's `pattern` dialect) as Python-syntax patterns for the engine.

JSON Schema says a `pattern` is an ECMA-262 regular expression, and the difference from
Python's `re` is visible to users in a few places; this rewrites exactly those, and the
result runs on the same linear-time engine as every other user pattern:

- `\\d`, `\\w` and `\\b` are ASCII in ECMA-262 (`\\d` does not match `߀` or `৪`, `\\w` not
  `é`): the pattern is compiled with `re.ASCII`.
- `\\s` and `\\S` are Unicode-aware in ECMA-262 even so (no-break space, U+FEFF, the
  line and paragraph separators): they become explicit classes. `\\S` inside a class
  (`[\\S]`) cannot be written as a class member and is refused at load.
- `$` matches only at the very end of the text (no `m` flag in JSON Schema), not also
  before a final newline as Python's `$` does: it becomes `\\Z`.
- `\\cX` (a control character) becomes the character itself.
- `\\p{...}`/`\\P{...}` take ECMA's property names: long General_Category names
  (`\\p{Letter}`, `\\p{Decimal_Number}`, `\\p{digit}`), `gc=`/`General_Category=` and
  `sc=`/`Script=` forms become the short names the engine knows (`\\p{L}`, `\\p{Nd}`,
  `\\p{Greek}`): JSON Schema patterns always have Unicode semantics.

Everything else (`\\p{...}` property escapes among it) goes to the engine unchanged, which
refuses what it cannot run at load, naming the construct.
"""

from __future__ import annotations

import re

from scorewire.core.registry import ParamError

ECMA_WHITESPACE = (
    "\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
)
"""ECMA-262's WhiteSpace and LineTerminator characters, as class members in Python syntax."""

_CATEGORIES = {
    "letter": "L", "cased_letter": "L", "lowercase_letter": "Ll", "uppercase_letter": "Lu",
    "titlecase_letter": "Lt", "modifier_letter": "Lm", "other_letter": "Lo",
    "mark": "M", "combining_mark": "M", "nonspacing_mark": "Mn", "spacing_mark": "Mc",
    "enclosing_mark": "Me", "number": "N", "decimal_number": "Nd", "digit": "Nd",
    "letter_number": "Nl", "other_number": "No", "punctuation": "P", "punct": "P",
    "connector_punctuation": "Pc", "dash_punctuation": "Pd", "open_punctuation": "Ps",
    "close_punctuation": "Pe", "initial_punctuation": "Pi", "final_punctuation": "Pf",
    "other_punctuation": "Po", "symbol": "S", "math_symbol": "Sm", "currency_symbol": "Sc",
    "modifier_symbol": "Sk", "other_symbol": "So", "separator": "Z", "space_separator": "Zs",
    "line_separator": "Zl", "paragraph_separator": "Zp", "other": "C", "control": "Cc",
    "cntrl": "Cc", "format": "Cf", "surrogate": "Cs", "private_use": "Co",
    "unassigned": "Cn",
}  # fmt: skip
"""ECMA-262's long General_Category names (lower case) and their short names."""

FLAGS = re.ASCII
"""The flags an ECMA pattern is compiled with."""


def ecma_to_python(pattern: str, field: str = "pattern") -> str:
    """The Python-syntax pattern with the ECMA-262 meaning of `pattern` (see the module)."""
    out: list[str] = []
    in_class = False
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            if nxt == "s":
                out.append(ECMA_WHITESPACE if in_class else f"[{ECMA_WHITESPACE}]")
            elif nxt == "S":
                if in_class:
                    raise ParamError(
                        field, "\\S inside a character class is not supported in a schema pattern"
                    )
                out.append(f"[^{ECMA_WHITESPACE}]")
            elif nxt in "pP" and pattern.startswith("{", i + 2) and "}" in pattern[i + 3 :]:
                end = pattern.index("}", i + 3)
                out.append(f"\\{nxt}{{{_property(pattern[i + 3 : end])}}}")
                i = end + 1
                continue
            elif nxt == "c" and i + 2 < n and pattern[i + 2].isascii() and pattern[i + 2].isalpha():
                out.append(f"\\x{ord(pattern[i + 2]) % 32:02x}")
                i += 1
            else:
                out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
            elif ch == "[":
                ch = "\\["  # a literal in ECMA; Python would warn of a nested set
        elif ch == "[":
            in_class = True
            out.append(ch)
            i += 1
            if pattern.startswith("^", i):
                out.append("^")
                i += 1
            continue
        elif ch == "$":
            ch = "\\Z"
        out.append(ch)
        i += 1
    return "".join(out)


def _property(name: str) -> str:
    key, _, value = name.partition("=")
    if value:
        if key in ("sc", "Script", "scx", "Script_Extensions"):
            return value
        name = value  # gc=Letter, General_Category=Letter
    return _CATEGORIES.get(name.lower(), name)

//! Text helpers that answer exactly as their Python counterparts, or not at all (None):
//! the caller then asks Python.

/// `str.isspace` of CPython 3.11, one character.
pub fn py_space(c: char) -> bool {
    matches!(
        c,
        '\t'..='\r'
            | '\u{1c}'..='\u{20}'
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// `str.strip()`.
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(py_space)
}

/// `str.casefold()` for ASCII text (lower case); None for any other text.
pub fn ascii_fold(s: &str) -> Option<String> {
    if s.is_ascii() {
        Some(s.to_ascii_lowercase())
    } else {
        None
    }
}

/// Code points in `s` (Python's `len`).
pub fn chars(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    }
}

/// `s[:n]` in code points.
pub fn prefix(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// `repr(s)` for text of ASCII characters and `…`; None for any other text.
pub fn py_repr(s: &str) -> Option<String> {
    if !s.chars().all(|c| c.is_ascii() || c == '…') {
        return None;
    }
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    Some(out)
}

/// `scorewire.core.values.preview` of a string.
pub fn preview(s: &str, limit: usize) -> Option<String> {
    if chars(s) > limit {
        let mut cut = prefix(s, limit - 1).to_owned();
        cut.push('…');
        py_repr(&cut)
    } else {
        py_repr(s)
    }
}

/// `scorewire.server.convert.bounded_text`.
pub fn bounded(s: &str, limit: usize) -> std::borrow::Cow<'_, str> {
    if chars(s) <= limit {
        return std::borrow::Cow::Borrowed(s);
    }
    // Python's `text[: limit - 1]`: with limit 0 that is all but the last character.
    let keep = if limit == 0 { chars(s) - 1 } else { limit - 1 };
    let mut cut = prefix(s, keep).to_owned();
    cut.push('…');
    std::borrow::Cow::Owned(cut)
}

/// `scorewire.text.units.count_words` for ASCII text; None for any other text.
///
/// Pieces between `bytes.split()`'s white space (space, \t, \n, \r, \v, \f) that hold a
/// letter or digit once every other non-space character is deleted.
pub fn ascii_words(s: &str) -> Option<usize> {
    if !s.is_ascii() {
        return None;
    }
    let mut n = 0;
    let mut in_word = false;
    for &b in s.as_bytes() {
        if matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
            in_word = false;
        } else if b.is_ascii_alphanumeric() {
            if !in_word {
                n += 1;
                in_word = true;
            }
        }
        // any other character is deleted: it neither starts nor ends a piece
    }
    Some(n)
}

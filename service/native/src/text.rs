//! Text helpers that answer exactly as their Python counterparts, or not at all (None):
//! the caller then asks Python.

use crate::unicode;

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

/// `str.casefold()` (beyond ASCII, each character's folding as Python's database has it).
pub fn fold(s: &str) -> Option<String> {
    if s.is_ascii() {
        return Some(s.to_ascii_lowercase());
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        unicode::push_fold(&mut out, c)?;
    }
    Some(out)
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

/// `repr(s)`.
pub fn py_repr(s: &str) -> Option<String> {
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
            c if c.is_ascii() || c == '…' || unicode::printable(c)? => out.push(c),
            c => {
                let n = c as u32;
                out.push_str(&match n {
                    0..=0xff => format!("\\x{n:02x}"),
                    0x100..=0xffff => format!("\\u{n:04x}"),
                    _ => format!("\\U{n:08x}"),
                });
            }
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

/// `scorewire.text.units.count_words`: for ASCII text in one pass (below); beyond it, as
/// `units._CHUNK` splits text, with the classes Python gives each character: a character
/// of an unspaced script and the marks after it are one word; any other run of
/// characters that are neither white space nor unspaced is a word when it holds a word
/// character.
pub fn words(s: &str) -> Option<usize> {
    if s.is_ascii() {
        return ascii_words(s);
    }
    let mut n = 0;
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        let classes = unicode::word_classes(c)?;
        if classes & unicode::UNSPACED != 0 {
            n += 1;
            while let Some(&m) = it.peek() {
                if unicode::word_classes(m)? & unicode::MARK == 0 {
                    break;
                }
                it.next();
            }
        } else if classes & unicode::SPACE == 0 {
            let mut wordish = classes & unicode::WORDISH != 0;
            while let Some(&d) = it.peek() {
                let k = unicode::word_classes(d)?;
                if k & (unicode::SPACE | unicode::UNSPACED) != 0 {
                    break;
                }
                wordish |= k & unicode::WORDISH != 0;
                it.next();
            }
            n += wordish as usize;
        }
    }
    Some(n)
}

/// `count_words` for ASCII text; None for any other text.
///
/// Pieces between `bytes.split()`'s white space (space, \t, \n, \r, \v, \f) that hold a
/// letter or digit once every other non-space character is deleted. Counted without a
/// branch per byte (`ASCII_CLASS`): a piece ends at each space and counts when it saw a
/// letter or digit (`length` alone on the peers' prose: 0.9 us a case, 1.1 us with a
/// branch per byte).
pub fn ascii_words(s: &str) -> Option<usize> {
    if !s.is_ascii() {
        return None;
    }
    let mut n = 0usize;
    let mut seen = 0u8; // the current piece holds a letter or digit
    for &b in s.as_bytes() {
        let class = ASCII_CLASS[b as usize];
        let space = class & 1;
        n += (space & seen) as usize;
        seen = (seen | (class >> 1)) & (space ^ 1);
    }
    Some(n + seen as usize)
}

/// Per ASCII byte: bit 0 white space (`bytes.split`'s), bit 1 a letter or digit.
const ASCII_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        if matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
            t[b] = 1;
        } else if c.is_ascii_alphanumeric() {
            t[b] = 2;
        }
        b += 1;
    }
    t
};

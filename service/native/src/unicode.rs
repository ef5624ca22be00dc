//! What the running Python's Unicode database says of a character beyond ASCII, asked of
//! Python (`scorewire.engine.native.char_facts`) once per character and kept: its case
//! folding, whether `repr` shows it as it is, and the classes `text.units.count_words`
//! reads it by. The kernel holds no Unicode tables of its own, so what it answers on such
//! text is Python's by construction, whatever Python's Unicode version.
//!
//! Asking costs a Python call (about a microsecond), so each case may ask about a bounded
//! number of new characters (`ASKS_PER_CASE`) and the process keeps at most `KEPT`:
//! beyond either, the twin declines and the case's check runs in Python, as it did
//! before the kernel knew any character beyond ASCII.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::OnceLock;

use pyo3::prelude::*;

/// `count_words`' classes of a character, as `units.word_classes` gives them.
pub const SPACE: u8 = 1;
pub const UNSPACED: u8 = 2;
pub const MARK: u8 = 4;
pub const WORDISH: u8 = 8;

/// New characters one case may ask Python about.
const ASKS_PER_CASE: u32 = 256;
/// Characters kept (about 40 bytes each).
const KEPT: usize = 1 << 16;

struct Fact {
    /// `ch.casefold()` when it is not `ch` itself.
    fold: Option<Box<str>>,
    printable: bool,
    classes: u8,
}

static SOURCE: OnceLock<Py<PyAny>> = OnceLock::new();

thread_local! {
    static FACTS: RefCell<HashMap<char, Fact>> = RefCell::new(HashMap::new());
    static ASKS_LEFT: Cell<u32> = const { Cell::new(ASKS_PER_CASE) };
}

/// Where facts come from: `char_facts(ch) -> (casefold, isprintable, word classes)`.
pub fn set_source(char_facts: Py<PyAny>) {
    let _ = SOURCE.set(char_facts); // one Python, one database: the first is every one's
}

/// A new case: it may ask about `ASKS_PER_CASE` new characters again.
pub fn new_case() {
    ASKS_LEFT.with(|left| left.set(ASKS_PER_CASE));
}

fn ask(c: char) -> Option<Fact> {
    let left = ASKS_LEFT.with(|left| left.get());
    if left == 0 {
        return None;
    }
    ASKS_LEFT.with(|l| l.set(left - 1));
    let source = SOURCE.get()?;
    Python::with_gil(|py| {
        let got = source.call1(py, (c,)).ok()?;
        let (fold, printable, classes): (String, bool, u8) = got.extract(py).ok()?;
        let same = fold.chars().eq(std::iter::once(c));
        Some(Fact { fold: (!same).then(|| fold.into_boxed_str()), printable, classes })
    })
}

/// `f` of the fact of `c` (a character beyond ASCII); None when it cannot be had.
fn with_fact<R>(c: char, f: impl FnOnce(&Fact) -> R) -> Option<R> {
    FACTS.with(|facts| {
        if let Some(fact) = facts.borrow().get(&c) {
            return Some(f(fact));
        }
        let fact = ask(c)?;
        let out = f(&fact);
        let mut facts = facts.borrow_mut();
        if facts.len() < KEPT {
            facts.insert(c, fact);
        }
        Some(out)
    })
}

/// Append `c.casefold()` to `out`.
pub fn push_fold(out: &mut String, c: char) -> Option<()> {
    if c.is_ascii() {
        out.push(c.to_ascii_lowercase());
        return Some(());
    }
    with_fact(c, |fact| match &fact.fold {
        Some(folded) => out.push_str(folded),
        None => out.push(c),
    })
}

/// `c.isprintable()`.
pub fn printable(c: char) -> Option<bool> {
    if c.is_ascii() {
        return Some((' '..='~').contains(&c));
    }
    with_fact(c, |fact| fact.printable)
}

/// `units.word_classes(c)`.
pub fn word_classes(c: char) -> Option<u8> {
    if c.is_ascii() {
        // regex's `\s` on ASCII is the six of `bytes.split`; its word characters are the
        // letters and digits (`[^\W_]`); no ASCII character is a mark or unspaced.
        return Some(match c {
            ' ' | '\t' | '\n' | '\r' | '\u{b}' | '\u{c}' => SPACE,
            c if c.is_ascii_alphanumeric() => WORDISH,
            _ => 0,
        });
    }
    with_fact(c, |fact| fact.classes)
}

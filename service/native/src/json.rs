//! JSON values as the Python checks see them, and a strict parser.
//!
//! The parser accepts only what Python's `json` module parses to the same value: standard
//! JSON whose integers fit 64 bits, finite numbers, no lone surrogate escapes, no
//! duplicate keys, nesting up to `MAX_DEPTH`. Anything else is `None`, and the caller
//! hands that check to Python, which parses (or words the error) itself.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};

/// Nesting beyond this is left to Python (its parser follows the recursion limit).
pub const MAX_DEPTH: usize = 128;

/// A JSON value. Objects keep their keys in order, without duplicates.
#[derive(Debug, Clone)]
pub enum J {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

impl J {
    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&J> {
        match self {
            J::Obj(items) => items.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn is_number(&self) -> bool {
        matches!(self, J::Int(_) | J::Float(_))
    }
}

/// Python's `int == float` (exact, not through a rounded float).
fn int_eq_float(i: i64, f: f64) -> bool {
    if !f.is_finite() || f.fract() != 0.0 || (i as f64) != f {
        return false;
    }
    // Within ±2^63 the float converts exactly; beyond it cannot equal an i64.
    (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f) && (f as i64) == i
}

/// Python's `a < b`, `a <= b` ... for two numbers, as the comparison's sign.
pub fn num_cmp(a: &J, b: &J) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (J::Int(x), J::Int(y)) => Some(x.cmp(y)),
        (J::Float(x), J::Float(y)) => x.partial_cmp(y),
        (J::Int(x), J::Float(y)) => cmp_int_float(*x, *y),
        (J::Float(x), J::Int(y)) => cmp_int_float(*y, *x).map(|o| o.reverse()),
        _ => None,
    }
}

fn cmp_int_float(i: i64, f: f64) -> Option<std::cmp::Ordering> {
    if f.is_nan() {
        return None;
    }
    if int_eq_float(i, f) {
        return Some(std::cmp::Ordering::Equal);
    }
    // Different values: i128 holds every i64 and every float of interest here exactly
    // enough to order them (a float beyond ±2^100 is simply larger or smaller).
    if f >= 1.0e30 {
        return Some(std::cmp::Ordering::Less);
    }
    if f <= -1.0e30 {
        return Some(std::cmp::Ordering::Greater);
    }
    let fi = f.floor() as i128;
    let ii = i as i128;
    if ii <= fi {
        Some(std::cmp::Ordering::Less)
    } else {
        Some(std::cmp::Ordering::Greater)
    }
}

/// `scorewire.core.values.json_equal`: 1 == 1.0, true is not 1, objects ignore order.
pub fn json_equal(a: &J, b: &J) -> bool {
    match (a, b) {
        (J::Null, J::Null) => true,
        (J::Bool(x), J::Bool(y)) => x == y,
        (J::Int(x), J::Int(y)) => x == y,
        (J::Float(x), J::Float(y)) => x == y,
        (J::Int(x), J::Float(y)) | (J::Float(y), J::Int(x)) => int_eq_float(*x, *y),
        (J::Str(x), J::Str(y)) => x == y,
        (J::Arr(x), J::Arr(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q)),
        (J::Obj(x), J::Obj(y)) => {
            x.len() == y.len()
                && x.iter().all(|(k, v)| match b.get(k) {
                    Some(w) => json_equal(v, w),
                    None => false,
                })
        }
        _ => false,
    }
}

// --- parsing ---------------------------------------------------------------------------

/// The first character of `text` after `" \t\n\r"`, and its index in characters (all
/// skipped characters are ASCII, so bytes and characters agree).
pub fn first_non_ws(text: &str) -> (usize, Option<u8>) {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    (i, b.get(i).copied())
}

/// Whether Python's decoder may start a value with this byte (`_JSON_START`).
pub fn may_start_value(c: u8) -> bool {
    matches!(c, b'"' | b'{' | b'[' | b'n' | b't' | b'f' | b'N' | b'I' | b'-' | b'0'..=b'9')
}

/// `parse_json`'s early answer for text that cannot start a value: the decoder's message.
pub fn not_a_value(text: &str) -> Option<String> {
    let (idx, c) = first_non_ws(text);
    if let Some(c) = c {
        if may_start_value(c) {
            return None;
        }
    }
    let head = &text[..idx];
    let line = head.bytes().filter(|&c| c == b'\n').count() + 1;
    let column = match head.rfind('\n') {
        Some(p) => idx - p,
        None => idx + 1,
    };
    Some(format!("Expecting value: line {line} column {column} (char {idx})"))
}

/// Parse strict JSON; None for anything Python should decide.
pub fn parse(text: &str) -> Option<J> {
    let mut p = Parser { b: text.as_bytes(), i: 0 };
    p.ws();
    let v = p.value(0)?;
    p.ws();
    if p.i != p.b.len() {
        return None;
    }
    Some(v)
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Parser<'a> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn lit(&mut self, word: &[u8], v: J) -> Option<J> {
        if self.b[self.i..].starts_with(word) {
            self.i += word.len();
            Some(v)
        } else {
            None
        }
    }

    fn value(&mut self, depth: usize) -> Option<J> {
        if depth > MAX_DEPTH {
            return None;
        }
        match *self.b.get(self.i)? {
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' => self.string().map(J::Str),
            b't' => self.lit(b"true", J::Bool(true)),
            b'f' => self.lit(b"false", J::Bool(false)),
            b'n' => self.lit(b"null", J::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn object(&mut self, depth: usize) -> Option<J> {
        self.i += 1;
        let mut items: Vec<(String, J)> = Vec::new();
        self.ws();
        if self.b.get(self.i) == Some(&b'}') {
            self.i += 1;
            return Some(J::Obj(items));
        }
        loop {
            self.ws();
            if self.b.get(self.i) != Some(&b'"') {
                return None;
            }
            let key = self.string()?;
            self.ws();
            if self.b.get(self.i) != Some(&b':') {
                return None;
            }
            self.i += 1;
            self.ws();
            let v = self.value(depth + 1)?;
            if items.len() > 64 || items.iter().any(|(k, _)| *k == key) {
                return None; // a duplicate key (Python keeps the last), or a big object
            }
            items.push((key, v));
            self.ws();
            match self.b.get(self.i)? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(J::Obj(items));
                }
                _ => return None,
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<J> {
        self.i += 1;
        let mut items = Vec::new();
        self.ws();
        if self.b.get(self.i) == Some(&b']') {
            self.i += 1;
            return Some(J::Arr(items));
        }
        loop {
            self.ws();
            items.push(self.value(depth + 1)?);
            self.ws();
            match self.b.get(self.i)? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Some(J::Arr(items));
                }
                _ => return None,
            }
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let s = self.b.get(self.i..self.i + 4)?;
        let mut n = 0u32;
        for &c in s {
            n = n * 16 + (c as char).to_digit(16)?;
        }
        self.i += 4;
        Some(n)
    }

    fn string(&mut self) -> Option<String> {
        self.i += 1; // the opening quote
        let mut out = String::new();
        loop {
            let start = self.i;
            while self.i < self.b.len() {
                let c = self.b[self.i];
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.i += 1;
            }
            // The input is a &str, and we stopped at an ASCII byte: a char boundary.
            out.push_str(std::str::from_utf8(&self.b[start..self.i]).ok()?);
            match *self.b.get(self.i)? {
                b'"' => {
                    self.i += 1;
                    return Some(out);
                }
                b'\\' => {
                    self.i += 1;
                    let e = *self.b.get(self.i)?;
                    self.i += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let cp = if (0xD800..0xDC00).contains(&hi) {
                                if self.b.get(self.i..self.i + 2)? != b"\\u" {
                                    return None; // a lone surrogate: Python keeps it, we cannot
                                }
                                self.i += 2;
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return None;
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else if (0xDC00..0xE000).contains(&hi) {
                                return None;
                            } else {
                                hi
                            };
                            out.push(char::from_u32(cp)?);
                        }
                        _ => return None,
                    }
                }
                _ => return None, // a control character: strict JSON refuses it
            }
        }
    }

    fn number(&mut self) -> Option<J> {
        let start = self.i;
        let b = self.b;
        if b.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        match b.get(self.i)? {
            b'0' => self.i += 1,
            b'1'..=b'9' => {
                while matches!(b.get(self.i), Some(b'0'..=b'9')) {
                    self.i += 1;
                }
            }
            _ => return None,
        }
        let mut float = false;
        if b.get(self.i) == Some(&b'.') {
            float = true;
            self.i += 1;
            if !matches!(b.get(self.i), Some(b'0'..=b'9')) {
                return None;
            }
            while matches!(b.get(self.i), Some(b'0'..=b'9')) {
                self.i += 1;
            }
        }
        if matches!(b.get(self.i), Some(b'e' | b'E')) {
            float = true;
            self.i += 1;
            if matches!(b.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if !matches!(b.get(self.i), Some(b'0'..=b'9')) {
                return None;
            }
            while matches!(b.get(self.i), Some(b'0'..=b'9')) {
                self.i += 1;
            }
        }
        let text = std::str::from_utf8(&b[start..self.i]).ok()?;
        if float {
            let f: f64 = text.parse().ok()?;
            if f.is_finite() {
                Some(J::Float(f))
            } else {
                None
            }
        } else {
            text.parse::<i64>().ok().map(J::Int)
        }
    }
}

// --- from Python -----------------------------------------------------------------------

/// A Python JSON value (exact dict, list, str, int, float, bool, None) as J; None for
/// anything else (subclasses, tuples, ints beyond 64 bits, non-finite floats), which
/// leaves the checks reading it to Python.
pub fn from_py(obj: &Bound<'_, PyAny>, depth: usize) -> Option<J> {
    if depth > MAX_DEPTH {
        return None;
    }
    if obj.is_none() {
        return Some(J::Null);
    }
    if obj.is_exact_instance_of::<PyString>() {
        return obj.downcast::<PyString>().ok()?.to_str().ok().map(|s| J::Str(s.to_owned()));
    }
    if obj.is_exact_instance_of::<PyBool>() {
        return Some(J::Bool(obj.is_truthy().ok()?));
    }
    if obj.is_exact_instance_of::<PyInt>() {
        return obj.extract::<i64>().ok().map(J::Int);
    }
    if obj.is_exact_instance_of::<PyFloat>() {
        let f: f64 = obj.extract().ok()?;
        return if f.is_finite() { Some(J::Float(f)) } else { None };
    }
    if obj.is_exact_instance_of::<PyList>() {
        let list = obj.downcast::<PyList>().ok()?;
        let mut out = Vec::with_capacity(list.len());
        for item in list.iter() {
            out.push(from_py(&item, depth + 1)?);
        }
        return Some(J::Arr(out));
    }
    if obj.is_exact_instance_of::<PyDict>() {
        let dict = obj.downcast::<PyDict>().ok()?;
        let mut out = Vec::with_capacity(dict.len());
        for (k, v) in dict.iter() {
            if !k.is_exact_instance_of::<PyString>() {
                return None;
            }
            let key = k.downcast::<PyString>().ok()?.to_str().ok()?.to_owned();
            out.push((key, from_py(&v, depth + 1)?));
        }
        return Some(J::Obj(out));
    }
    None
}

/// J as a Python value (ints as ints, objects as dicts in their key order).
pub fn to_py<'py>(py: Python<'py>, value: &J) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        J::Null => py.None().into_bound(py),
        J::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        J::Int(i) => i.into_pyobject(py)?.into_any(),
        J::Float(f) => PyFloat::new(py, *f).into_any(),
        J::Str(s) => PyString::new(py, s).into_any(),
        J::Arr(items) => {
            let out = PyList::empty(py);
            for item in items {
                out.append(to_py(py, item)?)?;
            }
            out.into_any()
        }
        J::Obj(items) => {
            let out = PyDict::new(py);
            for (k, v) in items {
                out.set_item(k, to_py(py, v)?)?;
            }
            out.into_any()
        }
    })
}

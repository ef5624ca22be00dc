//! JSON values as the Python checks see them, a strict parser, and the JSON text Python
//! writes of them.
//!
//! The parser accepts only what Python's `json` module parses to the same value: standard
//! JSON whose integers fit 64 bits, finite numbers, no lone surrogate escapes, no
//! duplicate keys, nesting up to `MAX_DEPTH`. Text that is not JSON is a `Fail::Syntax`
//! when the kernel knows the error Python's decoder raises for it (its message and
//! offset, found as CPython's scanner finds them); anything else is `Fail::Python`, and
//! the caller hands that check to Python, which parses (or words the error) itself.

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

/// Why a text is not a value the kernel holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fail {
    /// Not JSON: the message of the error Python's decoder raises, and the byte offset it
    /// names (`syntax_error` words it as `str(err)` does).
    Syntax(&'static str, usize),
    /// Python decides: JSON the kernel cannot hold (an integer beyond 64 bits, a duplicate
    /// key, NaN, deep nesting...), or an error the kernel does not word (an invalid `\u`
    /// escape; a trailing comma, which Python 3.13 words differently from 3.11).
    Python,
}

const EXPECTING_VALUE: &str = "Expecting value";

/// Parse strict JSON; None for anything Python should decide.
pub fn parse(text: &str) -> Option<J> {
    parse_checked(text).ok()
}

/// Parse strict JSON as Python's `json.loads` does: its value, or why not (`Fail`).
pub fn parse_checked(text: &str) -> Result<J, Fail> {
    let mut p = Parser { b: text.as_bytes(), i: 0 };
    p.ws();
    let v = p.value(0)?;
    p.ws();
    if p.i != p.b.len() {
        return Err(Fail::Syntax("Extra data", p.i));
    }
    Ok(v)
}

/// `str(err)` of Python's `JSONDecodeError(message, text, pos)` for the byte offset
/// `at` (Python counts code points): `"<message>: line L column C (char P)"`.
pub fn syntax_error(text: &str, message: &str, at: usize) -> Option<String> {
    let head = text.get(..at)?;
    let line = head.bytes().filter(|&c| c == b'\n').count() + 1;
    let pos = crate::text::chars(head);
    let column = match head.rfind('\n') {
        Some(nl) => crate::text::chars(&head[nl + 1..]) + 1,
        None => pos + 1,
    };
    Some(format!("{message}: line {line} column {column} (char {pos})"))
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

    fn at(&self, word: &[u8]) -> bool {
        self.b[self.i..].starts_with(word)
    }

    fn lit(&mut self, word: &[u8], v: J) -> Result<J, Fail> {
        self.i += word.len();
        Ok(v)
    }

    /// CPython's `scan_once` at `self.i`: a value, else "Expecting value" where it began
    /// (a StopIteration there, whatever the nesting, is what `raw_decode` reports).
    fn value(&mut self, depth: usize) -> Result<J, Fail> {
        if depth > MAX_DEPTH {
            return Err(Fail::Python);
        }
        let Some(&c) = self.b.get(self.i) else {
            return Err(Fail::Syntax(EXPECTING_VALUE, self.i));
        };
        match c {
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' => self.string().map(J::Str),
            b't' if self.at(b"true") => self.lit(b"true", J::Bool(true)),
            b'f' if self.at(b"false") => self.lit(b"false", J::Bool(false)),
            b'n' if self.at(b"null") => self.lit(b"null", J::Null),
            // Python's decoder refuses these constants with its own message (`loads_strict`)
            b'N' if self.at(b"NaN") => Err(Fail::Python),
            b'I' if self.at(b"Infinity") => Err(Fail::Python),
            b'-' if self.at(b"-Infinity") => Err(Fail::Python),
            _ => self.number(),
        }
    }

    fn object(&mut self, depth: usize) -> Result<J, Fail> {
        self.i += 1;
        let mut items: Vec<(String, J)> = Vec::new();
        self.ws();
        if self.b.get(self.i) == Some(&b'}') {
            self.i += 1;
            return Ok(J::Obj(items));
        }
        loop {
            if self.b.get(self.i) != Some(&b'"') {
                return Err(Fail::Syntax("Expecting property name enclosed in double quotes", self.i));
            }
            let key = self.string()?;
            self.ws();
            if self.b.get(self.i) != Some(&b':') {
                return Err(Fail::Syntax("Expecting ':' delimiter", self.i));
            }
            self.i += 1;
            self.ws();
            let v = self.value(depth + 1)?;
            if items.len() > 64 || items.iter().any(|(k, _)| *k == key) {
                return Err(Fail::Python); // a duplicate key (Python keeps the last), or a big object
            }
            items.push((key, v));
            self.ws();
            match self.b.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(J::Obj(items));
                }
                _ => return Err(Fail::Syntax("Expecting ',' delimiter", self.i)),
            }
            self.ws();
            if self.b.get(self.i) == Some(&b'}') {
                return Err(Fail::Python); // a trailing comma
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<J, Fail> {
        self.i += 1;
        let mut items = Vec::new();
        self.ws();
        if self.b.get(self.i) == Some(&b']') {
            self.i += 1;
            return Ok(J::Arr(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            self.ws();
            match self.b.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(J::Arr(items));
                }
                _ => return Err(Fail::Syntax("Expecting ',' delimiter", self.i)),
            }
            self.ws();
            if self.b.get(self.i) == Some(&b']') {
                return Err(Fail::Python); // a trailing comma
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

    /// A `\uXXXX` escape after its `u` (a surrogate pair whole), or Python decides: a bad
    /// or lone escape, or one the text ends within a character of, where CPython's
    /// scanner reports an escape error rather than the unterminated string.
    fn unicode_escape(&mut self) -> Option<char> {
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
        if self.i >= self.b.len() {
            return None;
        }
        char::from_u32(cp)
    }

    /// CPython's `scanstring` from the opening quote at `self.i`.
    fn string(&mut self) -> Result<String, Fail> {
        let quote = self.i;
        let unterminated = Fail::Syntax("Unterminated string starting at", quote);
        self.i += 1;
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
            out.push_str(std::str::from_utf8(&self.b[start..self.i]).map_err(|_| Fail::Python)?);
            match self.b.get(self.i) {
                None => return Err(unterminated),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    let backslash = self.i;
                    self.i += 1;
                    let Some(&e) = self.b.get(self.i) else { return Err(unterminated) };
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
                        b'u' => out.push(self.unicode_escape().ok_or(Fail::Python)?),
                        _ => return Err(Fail::Syntax("Invalid \\escape", backslash)),
                    }
                }
                Some(_) => return Err(Fail::Syntax("Invalid control character at", self.i)),
            }
        }
    }

    /// CPython's `_match_number_unicode`: the longest number at `self.i` as it reads one
    /// (a `.` or an exponent without digits after it is left for the caller to refuse).
    fn number(&mut self) -> Result<J, Fail> {
        let start = self.i;
        let b = self.b;
        let n = b.len();
        let digit = |i: usize| i < n && b[i].is_ascii_digit();
        let mut i = start;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        match b.get(i) {
            Some(b'1'..=b'9') => {
                i += 1;
                while digit(i) {
                    i += 1;
                }
            }
            Some(b'0') => i += 1,
            _ => return Err(Fail::Syntax(EXPECTING_VALUE, start)),
        }
        let mut float = false;
        if i + 1 < n && b[i] == b'.' && digit(i + 1) {
            float = true;
            i += 2;
            while digit(i) {
                i += 1;
            }
        }
        if i + 1 < n && matches!(b[i], b'e' | b'E') {
            let e_start = i;
            i += 1;
            if i + 1 < n && matches!(b[i], b'+' | b'-') {
                i += 1;
            }
            while digit(i) {
                i += 1;
            }
            if b[i - 1].is_ascii_digit() {
                float = true;
            } else {
                i = e_start; // no exponent digits: the number ends before the `e`
            }
        }
        self.i = i;
        let text = std::str::from_utf8(&b[start..i]).map_err(|_| Fail::Python)?;
        if float {
            match text.parse::<f64>() {
                Ok(f) if f.is_finite() => Ok(J::Float(f)),
                _ => Err(Fail::Python), // Python holds it as inf
            }
        } else {
            text.parse::<i64>().map(J::Int).map_err(|_| Fail::Python)
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

/// Python's `repr` of a float: the shortest digits that read back, in fixed notation
/// unless the decimal exponent is below -4 or above 15 (`1e+16`, `1e-05`).
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".to_owned() } else { "-inf".to_owned() };
    }
    let sci = format!("{:e}", f); // shortest round-trip digits: "-1.2345e-7"
    let (mantissa, exp) = sci.split_once('e').unwrap();
    let exp: i32 = exp.parse().unwrap();
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let decpt = exp + 1; // digits "d1d2..." stand for 0.d1d2... x 10^decpt
    if decpt <= -4 || decpt > 16 {
        let mut m = digits[..1].to_owned();
        if digits.len() > 1 {
            m.push('.');
            m.push_str(&digits[1..]);
        }
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{m}e{esign}{:02}", exp.abs());
    }
    let n = digits.len() as i32;
    let body = if decpt <= 0 {
        format!("0.{}{}", "0".repeat((-decpt) as usize), digits)
    } else if decpt >= n {
        format!("{}{}.0", digits, "0".repeat((decpt - n) as usize))
    } else {
        format!("{}.{}", &digits[..decpt as usize], &digits[decpt as usize..])
    };
    format!("{sign}{body}")
}

// --- writing ---------------------------------------------------------------------------

/// `scorewire.core.values.preview` of a JSON value that is not a string: the start of
/// `json.dumps(value, ensure_ascii=False, separators=(", ", ": "))`, cut to `limit - 1`
/// code points and an ellipsis when it is longer than `limit`.
pub fn preview(value: &J, limit: usize) -> String {
    // Enough bytes for more than `limit` code points, so the cut is the whole text's.
    let cap = 4 * (limit + 1);
    let mut out = String::new();
    write(&mut out, value, cap);
    if crate::text::chars(&out) > limit {
        let mut cut = crate::text::prefix(&out, limit - 1).to_owned();
        cut.push('…');
        return cut;
    }
    out
}

/// Write `value` as Python's JSON encoder does (the separators above, text not escaped
/// beyond JSON's own escapes), stopping once `out` holds more than `cap` bytes.
fn write(out: &mut String, value: &J, cap: usize) {
    if out.len() > cap {
        return;
    }
    match value {
        J::Null => out.push_str("null"),
        J::Bool(true) => out.push_str("true"),
        J::Bool(false) => out.push_str("false"),
        J::Int(i) => out.push_str(&i.to_string()),
        J::Float(f) => out.push_str(&float_repr(*f)),
        J::Str(s) => write_str(out, s),
        J::Arr(items) => {
            out.push('[');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.push_str(", ");
                }
                write(out, item, cap);
                if out.len() > cap {
                    return;
                }
            }
            out.push(']');
        }
        J::Obj(items) => {
            out.push('{');
            for (n, (k, v)) in items.iter().enumerate() {
                if n > 0 {
                    out.push_str(", ");
                }
                write_str(out, k);
                out.push_str(": ");
                write(out, v, cap);
                if out.len() > cap {
                    return;
                }
            }
            out.push('}');
        }
    }
}

/// A JSON string as `json.encoder.encode_basestring` writes it (`ensure_ascii=False`):
/// quotes, backslashes and control characters escaped, everything else as it is.
fn write_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

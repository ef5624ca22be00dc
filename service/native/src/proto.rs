//! Reading `scorewire.v1.Case` messages and writing `RunSuiteResponse` results, by hand.
//!
//! Only the fields the native checks read are decoded; a message that is not what the
//! reader expects (an unknown field or wire type, bad UTF-8, a truncated field, a message
//! field given twice, which the runtime merges) is `None`, and the caller scores that case
//! in Python, which parses it with the protobuf runtime. `tests/engine/test_wire_reader.py`
//! holds the reader to the runtime on messages drawn from the descriptors (`read_case`).

use crate::json::{self, J};

pub struct Reader<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Reader<'a> {
    pub fn new(b: &'a [u8]) -> Self {
        Reader { b, i: 0 }
    }

    fn varint(&mut self) -> Option<u64> {
        let mut out = 0u64;
        for shift in (0..64).step_by(7) {
            let c = *self.b.get(self.i)?;
            self.i += 1;
            out |= ((c & 0x7f) as u64) << shift;
            if c < 0x80 {
                return Some(out);
            }
        }
        None
    }

    /// The next field: (number, wire type, payload). Varints and fixed values come back
    /// as their bytes too, which the readers below decode.
    pub fn next(&mut self) -> Option<Option<(u32, u8, &'a [u8])>> {
        if self.i >= self.b.len() {
            return Some(None);
        }
        let key = self.varint()?;
        let (num, wt) = ((key >> 3) as u32, (key & 7) as u8);
        let start = self.i;
        match wt {
            0 => {
                self.varint()?;
            }
            1 => self.i += 8,
            2 => {
                let n = self.varint()? as usize;
                let start = self.i;
                self.i = self.i.checked_add(n)?;
                if self.i > self.b.len() {
                    return None;
                }
                return Some(Some((num, wt, &self.b[start..self.i])));
            }
            5 => self.i += 4,
            _ => return None,
        }
        if self.i > self.b.len() {
            return None;
        }
        Some(Some((num, wt, &self.b[start..self.i])))
    }
}

fn varint_of(b: &[u8]) -> Option<u64> {
    Reader::new(b).varint()
}

fn text(b: &[u8]) -> Option<&str> {
    std::str::from_utf8(b).ok()
}

/// What the native checks read of a case.
pub struct WireCase<'a> {
    pub id: &'a str,
    pub text: &'a str,
    /// The output carries a JSON value (`value` or `value_json`): checks reading JSON go
    /// to Python.
    pub has_value: bool,
    expected: Option<&'a [u8]>,
    expected_json: &'a str,
}

impl<'a> WireCase<'a> {
    /// A `Case` message (sample = 1, output = 2; test, prompt, provider = 3..5, strings).
    pub fn decode(b: &'a [u8]) -> Option<WireCase<'a>> {
        Self::read(b, false)
    }

    /// The sample and output of a `ScoreRequest` message, which has them at the same
    /// field numbers as `Case` (checks = 3 and compact = 4 are skipped, budget_usd = 5 is
    /// a double, judge_cache = 6 an enum the server has read already): the request's own
    /// bytes, with no Case serialized from it.
    pub fn decode_score_request(b: &'a [u8]) -> Option<WireCase<'a>> {
        Self::read(b, true)
    }

    fn read(b: &'a [u8], request: bool) -> Option<WireCase<'a>> {
        let mut case = WireCase { id: "", text: "", has_value: false, expected: None, expected_json: "" };
        let mut r = Reader::new(b);
        while let Some((num, wt, data)) = r.next()? {
            match (num, wt, request) {
                (1, 2, _) => case.sample(data)?,
                (2, 2, _) => case.output(data)?,
                (3..=5, 2, false) => {
                    text(data)?;
                }
                (3 | 4, 2, true) | (5, 1, true) | (6, 0, true) => {}
                _ => return None,
            }
        }
        Some(case)
    }

    fn sample(&mut self, b: &'a [u8]) -> Option<()> {
        let mut r = Reader::new(b);
        while let Some((num, wt, data)) = r.next()? {
            match (num, wt) {
                (1, 2) => self.id = text(data)?,
                (2, 2) | (4, 2) => {}
                // Twice, the runtime merges the two Values: leave that to Python.
                (3, 2) if self.expected.is_some() => return None,
                (3, 2) => self.expected = Some(data),
                (10, 2) => {
                    text(data)?;
                }
                (11, 2) => self.expected_json = text(data)?,
                _ => return None,
            }
        }
        Some(())
    }

    fn output(&mut self, b: &'a [u8]) -> Option<()> {
        let mut r = Reader::new(b);
        while let Some((num, wt, data)) = r.next()? {
            match (num, wt) {
                (1, 2) => self.text = text(data)?,
                (2, 2) => self.has_value = true,
                (3, 2) => {}
                (10, 2) => self.has_value |= !data.is_empty(),
                _ => return None,
            }
        }
        Some(())
    }

    /// Whether the objects of `expected()` keep the key order Python's value of it has:
    /// not when it comes from a `Value`, whose struct keys the runtime iterates in an
    /// order of its own (JSON text keeps the text's order, as Python's parser does).
    pub fn expected_keys_in_order(&self) -> bool {
        self.expected.is_none()
    }

    /// The sample's expected value as `convert.sample_from_pb` makes it: the `expected`
    /// Value when set, else `expected_json` parsed, else null. None: Python must read it.
    pub fn expected(&self) -> Option<J> {
        if let Some(b) = self.expected {
            return value(b, 0);
        }
        if self.expected_json.is_empty() {
            return Some(J::Null);
        }
        json::parse(self.expected_json)
    }
}

/// Whether a serialized `Case` certainly passes the server's check of a RunSuite case
/// (`server.suite_runs.RequestChecks`): it parses, its output text is at most `short`
/// bytes, and each JSON-text field is JSON with no `Value` beside it. Only cases of
/// strings and JSON text are judged here; anything else (a `Value` or `metadata`, an
/// unknown or repeated field, bad bytes, a longer text, JSON this parser does not accept)
/// is false, and Python checks the case itself. This parser accepts no JSON Python's
/// refuses, and nests at most `json::MAX_DEPTH` deep, well within Python's limit.
pub fn plain_case_ok(b: &[u8], short: usize) -> bool {
    plain_fields(b, |num, wt, data| match (num, wt) {
        (1, 2) => plain_fields(data, |n, w, d| match (n, w) {
            (1, 2) => text(d).map(|_| ()),
            (10, 2) | (11, 2) => json_text(d),
            _ => None,
        }),
        (2, 2) => plain_fields(data, |n, w, d| match (n, w) {
            (1, 2) if d.len() <= short => text(d).map(|_| ()),
            (10, 2) => json_text(d),
            _ => None,
        }),
        (3..=5, 2) => text(data).map(|_| ()),
        _ => None,
    })
    .is_some()
}

/// Each field of a message read by `field`, refused when one is given twice (the runtime
/// would merge or replace it: left to Python).
fn plain_fields(b: &[u8], mut field: impl FnMut(u32, u8, &[u8]) -> Option<()>) -> Option<()> {
    let mut seen = 0u64;
    let mut r = Reader::new(b);
    while let Some((num, wt, data)) = r.next()? {
        let bit = 1u64.checked_shl(num)?;
        if num == 0 || seen & bit != 0 {
            return None;
        }
        seen |= bit;
        field(num, wt, data)?;
    }
    Some(())
}

/// A JSON-text field: empty, or JSON.
fn json_text(b: &[u8]) -> Option<()> {
    let t = text(b)?;
    if !t.is_empty() {
        json::parse_checked(t).ok()?;
    }
    Some(())
}

/// A `google.protobuf.Value` as `convert.value_to_py` reads it (numbers are floats).
fn value(b: &[u8], depth: usize) -> Option<J> {
    if depth > json::MAX_DEPTH {
        return None;
    }
    let mut out = J::Null;
    let mut r = Reader::new(b);
    let mut nested = false;
    // A oneof: the last field on the wire wins, as the runtime reads it; but a struct or
    // list after a struct or list may be merged into it, which is left to Python.
    while let Some((num, wt, data)) = r.next()? {
        if (num == 5 || num == 6) && wt == 2 {
            if nested {
                return None;
            }
            nested = true;
        }
        out = match (num, wt) {
            (1, 0) => J::Null,
            (2, 1) => {
                let f = f64::from_le_bytes(data.try_into().ok()?);
                if !f.is_finite() {
                    return None;
                }
                J::Float(f)
            }
            (3, 2) => J::Str(text(data)?.to_owned()),
            (4, 0) => J::Bool(varint_of(data)? != 0),
            (5, 2) => structure(data, depth + 1)?,
            (6, 2) => {
                let mut items = Vec::new();
                let mut lr = Reader::new(data);
                while let Some((n, w, d)) = lr.next()? {
                    if (n, w) != (1, 2) {
                        return None;
                    }
                    items.push(value(d, depth + 1)?);
                }
                J::Arr(items)
            }
            _ => return None,
        };
    }
    Some(out)
}

fn structure(b: &[u8], depth: usize) -> Option<J> {
    let mut items: Vec<(String, J)> = Vec::new();
    let mut r = Reader::new(b);
    while let Some((num, wt, entry)) = r.next()? {
        if (num, wt) != (1, 2) {
            return None;
        }
        let (mut key, mut val) = ("", None);
        let mut er = Reader::new(entry);
        while let Some((n, w, d)) = er.next()? {
            match (n, w) {
                (1, 2) => key = text(d)?,
                (2, 2) if val.is_some() => return None, // two Values the runtime merges
                (2, 2) => val = Some(value(d, depth)?),
                _ => return None,
            }
        }
        if items.iter().any(|(k, _)| k == key) {
            return None; // a repeated map key: the runtime keeps the last; leave it to Python
        }
        items.push((key.to_owned(), val.unwrap_or(J::Null)));
    }
    Some(J::Obj(items))
}

// --- writing ---------------------------------------------------------------------------

pub fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    while n > 0x7f {
        out.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

pub fn put_bytes(out: &mut Vec<u8>, tag: u8, data: &[u8]) {
    out.push(tag);
    put_varint(out, data.len() as u64);
    out.extend_from_slice(data);
}

/// A double field, left out when all its bits are zero (as the runtime writes proto3).
pub fn put_double(out: &mut Vec<u8>, tag: u8, v: f64) {
    if v.to_bits() != 0 {
        out.push(tag);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

pub fn put_bool(out: &mut Vec<u8>, tag: u8, v: bool) {
    if v {
        out.push(tag);
        out.push(1);
    }
}

//! `scorewire.schema.fast` in Rust: "is this instance valid?" for plain schemas.
//!
//! The same keywords, the same answers; a schema using anything else is not compiled
//! (None), and its json_schema check runs in Python. Only "valid" is answered natively:
//! an invalid instance goes to Python, whose full validator writes the reasons.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};

use crate::json::{self, from_py, json_equal, num_cmp, J};
use crate::text;

const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";
const ANNOTATIONS: [&str; 9] = [
    "title", "description", "$comment", "default", "examples", "format", "deprecated",
    "readOnly", "writeOnly",
];

#[derive(Clone, Copy)]
enum Kind {
    Object,
    Array,
    Str,
    Boolean,
    Null,
    Number,
    Integer,
}

#[derive(Clone, Copy)]
enum Sized {
    Str,
    Arr,
    Obj,
}

/// How a failed `enum` or `const` is worded: after the instance's repr, or whole.
enum Wording {
    After(String),
    Whole(String),
}

#[derive(Clone, Copy)]
enum Bound_ {
    Min,
    Max,
    ExclMin,
    ExclMax,
}

enum Test {
    Always,
    Never,
    /// The types, and their reprs joined as jsonschema words a failure.
    Type(Vec<Kind>, String),
    Properties(Vec<(String, Test)>),
    Required(Vec<String>),
    OnlyKeys(Vec<String>),
    Items(Box<Test>),
    EnumStr(Vec<String>, Wording),
    Enum(Vec<J>, Wording),
    /// The bound, which side, and the bound's repr.
    Bound(J, Bound_, String),
    /// What is counted, the count, whether it is a minimum, and jsonschema's words.
    Count(Sized, f64, bool, &'static str),
    All(Vec<Test>),
}

/// A compiled plain schema.
pub struct FastSchema(Test);

impl FastSchema {
    /// Compile a root schema, or None when it uses anything `compile_fast` refuses.
    pub fn compile(schema: &Bound<'_, PyAny>) -> Option<FastSchema> {
        if let Ok(d) = schema.downcast::<PyDict>() {
            if let Some(dialect) = d.get_item("$schema").ok()? {
                if !dialect.is_exact_instance_of::<PyString>() || dialect.extract::<String>().ok()? != DIALECT {
                    return None;
                }
                let copy = d.copy().ok()?;
                copy.del_item("$schema").ok()?;
                return node(copy.as_any(), 0).map(FastSchema);
            }
        }
        node(schema, 0).map(FastSchema)
    }

    pub fn valid(&self, x: &J) -> bool {
        run(&self.0, x)
    }

    /// `CompiledSchema.first_errors(x)`: up to `limit` "path: message" lines as jsonschema
    /// words them, in its order, and whether there were more; None when a message needs
    /// a repr only Python writes (text beyond ASCII).
    pub fn first_errors(&self, x: &J, limit: usize) -> Option<(Vec<String>, bool)> {
        let mut out = Errors { lines: Vec::new(), limit: limit + 1, path: Vec::new() };
        errors(&self.0, x, &mut out)?;
        let more = out.lines.len() > limit;
        out.lines.truncate(limit);
        Some((out.lines, more))
    }
}

fn is_true(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_exact_instance_of::<PyBool>() && obj.is_truthy().unwrap_or(false)
}

fn is_false(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_exact_instance_of::<PyBool>() && !obj.is_truthy().unwrap_or(true)
}

fn node(schema: &Bound<'_, PyAny>, depth: usize) -> Option<Test> {
    if is_true(schema) {
        return Some(Test::Always);
    }
    if is_false(schema) {
        return Some(Test::Never);
    }
    let d = schema.downcast::<PyDict>().ok()?;
    if depth > 32 {
        return None;
    }
    let mut tests = Vec::new();
    for (k, v) in d.iter() {
        let key: String = if k.is_exact_instance_of::<PyString>() { k.extract().ok()? } else { return None };
        if ANNOTATIONS.contains(&key.as_str()) {
            continue;
        }
        tests.push(keyword(&key, &v, d, depth)?);
    }
    Some(match tests.len() {
        0 => Test::Always,
        1 => tests.pop().unwrap(),
        _ => Test::All(tests),
    })
}

fn number(obj: &Bound<'_, PyAny>) -> Option<J> {
    if obj.is_exact_instance_of::<PyInt>() || obj.is_exact_instance_of::<PyFloat>() {
        from_py(obj, 0)
    } else {
        None
    }
}

fn keyword(key: &str, v: &Bound<'_, PyAny>, schema: &Bound<'_, PyDict>, depth: usize) -> Option<Test> {
    match key {
        "type" => {
            let names: Vec<Bound<'_, PyAny>> = if v.is_exact_instance_of::<PyString>() {
                vec![v.clone()]
            } else {
                v.downcast::<PyList>().ok()?.iter().collect()
            };
            if names.is_empty() {
                return None;
            }
            let mut kinds = Vec::new();
            let mut reprs = Vec::new();
            for n in names {
                if !n.is_exact_instance_of::<PyString>() {
                    return None;
                }
                reprs.push(format!("'{}'", n.extract::<String>().ok()?));
                kinds.push(match n.extract::<String>().ok()?.as_str() {
                    "object" => Kind::Object,
                    "array" => Kind::Array,
                    "string" => Kind::Str,
                    "boolean" => Kind::Boolean,
                    "null" => Kind::Null,
                    "number" => Kind::Number,
                    "integer" => Kind::Integer,
                    _ => return None,
                });
            }
            Some(Test::Type(kinds, reprs.join(", ")))
        }
        "properties" => {
            let d = v.downcast::<PyDict>().ok()?;
            let mut subs = Vec::new();
            for (name, sub) in d.iter() {
                if !name.is_exact_instance_of::<PyString>() {
                    return None;
                }
                subs.push((name.extract::<String>().ok()?, node(&sub, depth + 1)?));
            }
            Some(Test::Properties(subs))
        }
        "required" => {
            let list = v.downcast::<PyList>().ok()?;
            let mut names = Vec::new();
            for n in list.iter() {
                if !n.is_exact_instance_of::<PyString>() {
                    return None;
                }
                names.push(n.extract::<String>().ok()?);
            }
            Some(Test::Required(names))
        }
        "additionalProperties" => {
            if is_true(v) {
                return Some(Test::Always);
            }
            if !is_false(v) || schema.contains("patternProperties").ok()? {
                return None;
            }
            match schema.get_item("properties").ok()? {
                None => Some(Test::OnlyKeys(Vec::new())),
                Some(props) => {
                    let d = props.downcast::<PyDict>().ok()?;
                    let mut names = Vec::new();
                    for k in d.keys() {
                        if !k.is_exact_instance_of::<PyString>() {
                            return None;
                        }
                        names.push(k.extract::<String>().ok()?);
                    }
                    Some(Test::OnlyKeys(names))
                }
            }
        }
        "items" => Some(Test::Items(Box::new(node(v, depth + 1)?))),
        "enum" | "const" => {
            let values: Vec<Bound<'_, PyAny>> = if key == "const" {
                vec![v.clone()]
            } else {
                v.downcast::<PyList>().ok()?.iter().collect()
            };
            let mut out = Vec::new();
            for x in &values {
                let j = from_py(x, 0)?;
                if matches!(j, J::Arr(_) | J::Obj(_)) {
                    return None; // scalars only, as compile_fast
                }
                out.push(j);
            }
            let repr = v.repr().ok()?.to_string();
            let wording = if key == "const" {
                Wording::Whole(format!("{repr} was expected"))
            } else {
                Wording::After(format!(" is not one of {repr}"))
            };
            if out.iter().all(|j| matches!(j, J::Str(_))) {
                let strings = out.into_iter().map(|j| if let J::Str(s) = j { s } else { unreachable!() });
                return Some(Test::EnumStr(strings.collect(), wording));
            }
            Some(Test::Enum(out, wording))
        }
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
            let side = match key {
                "minimum" => Bound_::Min,
                "maximum" => Bound_::Max,
                "exclusiveMinimum" => Bound_::ExclMin,
                _ => Bound_::ExclMax,
            };
            Some(Test::Bound(number(v)?, side, v.repr().ok()?.to_string()))
        }
        "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties" | "maxProperties" => {
            let n = match number(v)? {
                J::Int(i) => i as f64,
                J::Float(f) if f.fract() == 0.0 => f,
                _ => return None,
            };
            let sized = match &key[3..] {
                "Length" => Sized::Str,
                "Items" => Sized::Arr,
                _ => Sized::Obj,
            };
            let min = key.starts_with("min");
            let words = match (min, sized) {
                (true, _) if n == 1.0 => "should be non-empty",
                (false, _) if n == 0.0 => "is expected to be empty",
                (true, Sized::Obj) => "does not have enough properties",
                (false, Sized::Obj) => "has too many properties",
                (true, _) => "is too short",
                (false, _) => "is too long",
            };
            Some(Test::Count(sized, n, min, words))
        }
        _ => None,
    }
}

fn kind_ok(k: Kind, x: &J) -> bool {
    match k {
        Kind::Object => matches!(x, J::Obj(_)),
        Kind::Array => matches!(x, J::Arr(_)),
        Kind::Str => matches!(x, J::Str(_)),
        Kind::Boolean => matches!(x, J::Bool(_)),
        Kind::Null => matches!(x, J::Null),
        Kind::Number => x.is_number(),
        Kind::Integer => match x {
            J::Int(_) => true,
            J::Float(f) => f.fract() == 0.0,
            _ => false,
        },
    }
}

fn size(s: Sized, x: &J) -> Option<f64> {
    match (s, x) {
        (Sized::Str, J::Str(t)) => Some(t.chars().count() as f64),
        (Sized::Arr, J::Arr(a)) => Some(a.len() as f64),
        (Sized::Obj, J::Obj(o)) => Some(o.len() as f64),
        _ => None,
    }
}

fn bound(x: &J, b: &J, ok: fn(std::cmp::Ordering) -> bool) -> bool {
    if !x.is_number() {
        return true;
    }
    num_cmp(x, b).map(ok).unwrap_or(false)
}

fn run(t: &Test, x: &J) -> bool {
    use std::cmp::Ordering::*;
    match t {
        Test::Always => true,
        Test::Never => false,
        Test::Type(kinds, _) => kinds.iter().any(|&k| kind_ok(k, x)),
        Test::Properties(subs) => match x {
            J::Obj(_) => subs.iter().all(|(name, sub)| match x.get(name) {
                Some(v) => run(sub, v),
                None => true,
            }),
            _ => true,
        },
        Test::Required(names) => match x {
            J::Obj(_) => names.iter().all(|n| x.get(n).is_some()),
            _ => true,
        },
        Test::OnlyKeys(names) => match x {
            J::Obj(items) => items.iter().all(|(k, _)| names.contains(k)),
            _ => true,
        },
        Test::Items(item) => match x {
            J::Arr(a) => a.iter().all(|v| run(item, v)),
            _ => true,
        },
        Test::EnumStr(options, _) => matches!(x, J::Str(s) if options.contains(s)),
        Test::Enum(options, _) => options.iter().any(|o| json_equal(x, o)),
        Test::Bound(b, side, _) => bound(x, b, match side {
            Bound_::Min => |o| o != Less,
            Bound_::Max => |o| o != Greater,
            Bound_::ExclMin => |o| o == Greater,
            Bound_::ExclMax => |o| o == Less,
        }),
        Test::Count(s, n, min, _) => size(*s, x).map(|len| if *min { len >= *n } else { len <= *n }).unwrap_or(true),
        Test::All(tests) => tests.iter().all(|t| run(t, x)),
    }
}

// --- failures, worded as jsonschema words them -----------------------------------------

enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

struct Errors<'a> {
    lines: Vec<String>,
    limit: usize,
    path: Vec<Step<'a>>,
}

impl<'a> Errors<'a> {
    fn full(&self) -> bool {
        self.lines.len() >= self.limit
    }

    /// One error at the current path (`full.py`'s `_error_line`).
    fn add(&mut self, message: String) -> Option<()> {
        let mut path = String::from("$");
        for step in &self.path {
            match step {
                Step::Index(i) => path.push_str(&format!("[{i}]")),
                Step::Key(k) => {
                    let plain = k.as_bytes().first().is_some_and(|c| c.is_ascii_alphabetic())
                        && k.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
                    if plain {
                        path.push('.');
                        path.push_str(k);
                    } else {
                        if !k.is_ascii() {
                            return None;
                        }
                        path.push_str("['");
                        path.push_str(&k.replace('\\', "\\\\").replace('\'', "\\'"));
                        path.push_str("']");
                    }
                }
            }
        }
        let n = text::chars(&message);
        let message = if n > 120 {
            let head = text::prefix(&message, 50);
            let tail: String = message.chars().skip(n - 69).collect();
            format!("{head}…{tail}")
        } else {
            message
        };
        self.lines.push(format!("{path}: {message}"));
        Some(())
    }
}

fn errors<'a>(t: &Test, x: &'a J, out: &mut Errors<'a>) -> Option<()> {
    if out.full() {
        return Some(());
    }
    match t {
        Test::Always => {}
        Test::Never => out.add(format!("False schema does not allow {}", repr(x)?))?,
        Test::Type(kinds, reprs) => {
            if !kinds.iter().any(|&k| kind_ok(k, x)) {
                out.add(format!("{} is not of type {reprs}", repr(x)?))?;
            }
        }
        Test::Properties(subs) => {
            if let J::Obj(_) = x {
                for (name, sub) in subs {
                    if let Some(v) = x.get(name) {
                        descend(sub, v, Step::Key(name_of(x, name)), out)?;
                    }
                }
            }
        }
        Test::Required(names) => {
            if let J::Obj(_) = x {
                for n in names {
                    if x.get(n).is_none() && !out.full() {
                        out.add(format!("{} is a required property", text::py_repr(n)?))?;
                    }
                }
            }
        }
        Test::OnlyKeys(names) => {
            if let J::Obj(items) = x {
                let mut extras: Vec<&str> =
                    items.iter().map(|(k, _)| k.as_str()).filter(|k| !names.iter().any(|n| n == k)).collect();
                if !extras.is_empty() {
                    extras.sort();
                    let listed: Option<Vec<String>> = extras.iter().map(|e| text::py_repr(e)).collect();
                    let verb = if extras.len() == 1 { "was" } else { "were" };
                    out.add(format!("Additional properties are not allowed ({} {verb} unexpected)", listed?.join(", ")))?;
                }
            }
        }
        Test::Items(item) => {
            if let J::Arr(values) = x {
                for (i, v) in values.iter().enumerate() {
                    descend(item, v, Step::Index(i), out)?;
                }
            }
        }
        Test::EnumStr(_, wording) | Test::Enum(_, wording) => {
            if !run(t, x) {
                match wording {
                    Wording::After(rest) => out.add(format!("{}{rest}", repr(x)?))?,
                    Wording::Whole(message) => out.add(message.clone())?,
                }
            }
        }
        Test::Bound(_, side, b) => {
            if !run(t, x) {
                let words = match side {
                    Bound_::Min => "is less than the minimum of",
                    Bound_::Max => "is greater than the maximum of",
                    Bound_::ExclMin => "is less than or equal to the minimum of",
                    Bound_::ExclMax => "is greater than or equal to the maximum of",
                };
                out.add(format!("{} {words} {b}", repr(x)?))?;
            }
        }
        Test::Count(_, _, _, words) => {
            if !run(t, x) {
                out.add(format!("{} {words}", repr(x)?))?;
            }
        }
        Test::All(tests) => {
            for t in tests {
                errors(t, x, out)?;
            }
        }
    }
    Some(())
}

/// jsonschema's `descend`: the errors of a subschema, one step down the path, except a
/// `false` subschema's, which jsonschema reports at the parent's path.
fn descend<'a>(t: &Test, x: &'a J, step: Step<'a>, out: &mut Errors<'a>) -> Option<()> {
    if let Test::Never = t {
        return errors(t, x, out);
    }
    out.path.push(step);
    let got = errors(t, x, out);
    out.path.pop();
    got
}

/// The instance's own key equal to `name` (borrowed from the instance, which outlives
/// the error paths).
fn name_of<'a>(x: &'a J, name: &str) -> &'a str {
    match x {
        J::Obj(items) => items.iter().find(|(k, _)| k == name).map(|(k, _)| k.as_str()).unwrap_or(""),
        _ => "",
    }
}

/// Python's `repr` of a parsed JSON value; None for text beyond ASCII.
pub fn repr(x: &J) -> Option<String> {
    Some(match x {
        J::Null => "None".to_owned(),
        J::Bool(true) => "True".to_owned(),
        J::Bool(false) => "False".to_owned(),
        J::Int(i) => i.to_string(),
        J::Float(f) => json::float_repr(*f),
        J::Str(s) => {
            if !s.is_ascii() {
                return None;
            }
            text::py_repr(s)?
        }
        J::Arr(items) => {
            let parts: Option<Vec<String>> = items.iter().map(repr).collect();
            format!("[{}]", parts?.join(", "))
        }
        J::Obj(items) => {
            let mut parts = Vec::with_capacity(items.len());
            for (k, v) in items {
                if !k.is_ascii() {
                    return None;
                }
                parts.push(format!("{}: {}", text::py_repr(k)?, repr(v)?));
            }
            format!("{{{}}}", parts.join(", "))
        }
    })
}

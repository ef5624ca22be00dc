//! `scorewire.schema.fast` in Rust: "is this instance valid?" for plain schemas.
//!
//! The same keywords, the same answers; a schema using anything else is not compiled
//! (None), and its json_schema check runs in Python. Only "valid" is answered natively:
//! an invalid instance goes to Python, whose full validator writes the reasons.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};

use crate::json::{from_py, json_equal, num_cmp, J};

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

enum Test {
    Always,
    Never,
    Type(Vec<Kind>),
    Properties(Vec<(String, Test)>),
    Required(Vec<String>),
    OnlyKeys(Vec<String>),
    Items(Box<Test>),
    EnumStr(Vec<String>),
    Enum(Vec<J>),
    Min(J),
    Max(J),
    ExclMin(J),
    ExclMax(J),
    MinCount(Sized, f64),
    MaxCount(Sized, f64),
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
            for n in names {
                if !n.is_exact_instance_of::<PyString>() {
                    return None;
                }
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
            Some(Test::Type(kinds))
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
            if out.iter().all(|j| matches!(j, J::Str(_))) {
                let strings = out.into_iter().map(|j| if let J::Str(s) = j { s } else { unreachable!() });
                return Some(Test::EnumStr(strings.collect()));
            }
            Some(Test::Enum(out))
        }
        "minimum" => Some(Test::Min(number(v)?)),
        "maximum" => Some(Test::Max(number(v)?)),
        "exclusiveMinimum" => Some(Test::ExclMin(number(v)?)),
        "exclusiveMaximum" => Some(Test::ExclMax(number(v)?)),
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
            Some(if key.starts_with("min") { Test::MinCount(sized, n) } else { Test::MaxCount(sized, n) })
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
        Test::Type(kinds) => kinds.iter().any(|&k| kind_ok(k, x)),
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
        Test::EnumStr(options) => matches!(x, J::Str(s) if options.contains(s)),
        Test::Enum(options) => options.iter().any(|o| json_equal(x, o)),
        Test::Min(b) => bound(x, b, |o| o != Less),
        Test::Max(b) => bound(x, b, |o| o != Greater),
        Test::ExclMin(b) => bound(x, b, |o| o == Greater),
        Test::ExclMax(b) => bound(x, b, |o| o == Less),
        Test::MinCount(s, n) => size(*s, x).map(|len| len >= *n).unwrap_or(true),
        Test::MaxCount(s, n) => size(*s, x).map(|len| len <= *n).unwrap_or(true),
        Test::All(tests) => tests.iter().all(|t| run(t, x)),
    }
}

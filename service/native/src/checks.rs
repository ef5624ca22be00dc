//! The native twins of the deterministic checks: contains, exact, regex, json_schema
//! and length, on their common paths.
//!
//! Each twin answers exactly what its Python check (`scorewire.checks.deterministic`)
//! answers, reason included, or `None`: the engine then runs the Python check for that
//! case. Everything unusual goes to Python that way: errors (a missing reference, a
//! needle list that is not one), text whose case folding, words or preview need the
//! Unicode database, JSON that Python must parse or whose failures it must word.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::json::{self, J};
use crate::schema::FastSchema;
use crate::text;

/// One step of a path: a key, and the list index it also is when it is digits.
pub type PathPart = (String, Option<usize>);

pub enum Twin {
    Contains {
        literal: Option<Vec<String>>,
        path: Option<Vec<PathPart>>,
        require_all: bool,
        fold: bool,
    },
    Exact {
        literal: Option<J>,
        path: Option<Vec<PathPart>>,
        case_sensitive: bool,
        strip: bool,
    },
    Regex {
        search: Py<PyAny>,
        /// RE2's `Match` and its unanchored mode, called on the UTF-8 bytes directly.
        re2_match: Option<(Py<PyAny>, Py<PyAny>)>,
    },
    JsonSchema {
        schema: FastSchema,
    },
    Length {
        max_chars: Option<usize>,
        max_words: Option<usize>,
        min_chars: Option<usize>,
    },
}

/// A native verdict: value, passed, reason (never an error: errors are Python's).
pub struct Verdict {
    pub value: f64,
    pub passed: bool,
    pub reason: String,
}

fn verdict(value: f64, passed: bool, reason: impl Into<String>) -> Option<Verdict> {
    Some(Verdict { value, passed, reason: reason.into() })
}

/// What a twin reads of a case; each part is computed once per case, when first asked.
pub trait CaseView<'py> {
    fn text(&self) -> &str;
    fn has_value(&self) -> bool;
    /// Compute the sample's expected value (once), for `expected`.
    fn prepare_expected(&mut self);
    /// The sample's expected value; None when Python must read it.
    fn expected(&self) -> Option<&J>;
    /// Parse the output text as JSON (once), for `output_json`.
    fn prepare_output_json(&mut self);
    /// The output text parsed as JSON; None when Python must parse it.
    fn output_json(&self) -> Option<&J>;
    /// The output text as a Python string (for the regex's search).
    fn py_text(&mut self, py: Python<'py>) -> Bound<'py, PyString>;
}

pub struct Limits {
    pub max_needles: Option<usize>,
    pub max_needle_chars: Option<usize>,
}

fn lookup<'a>(value: &'a J, path: &[PathPart]) -> Option<&'a J> {
    let mut v = value;
    for (key, index) in path {
        v = match v {
            J::Obj(_) => v.get(key)?,
            J::Arr(items) => items.get((*index)?)?,
            _ => return None,
        };
    }
    Some(v)
}

/// `Reference.resolve` when it finds a value (not null); None for its error scores.
fn resolve<'a>(expected: &'a J, path: &Option<Vec<PathPart>>) -> Option<&'a J> {
    if matches!(expected, J::Null) {
        return None;
    }
    let got = match path {
        Some(p) => lookup(expected, p)?,
        None => expected,
    };
    if matches!(got, J::Null) {
        None
    } else {
        Some(got)
    }
}

/// `_needles_from` when it yields needles.
fn needles_from(value: &J) -> Option<Vec<&str>> {
    let value = match value {
        J::Obj(_) => value.get("must_include")?,
        v => v,
    };
    match value {
        J::Str(s) if !s.is_empty() => Some(vec![s.as_str()]),
        J::Arr(items) if !items.is_empty() => items
            .iter()
            .map(|n| match n {
                J::Str(s) if !s.is_empty() => Some(s.as_str()),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

const FOUND_ALL_1: &str = "found all 1 needle";

fn contains_verdict<S: AsRef<str>>(needles: &[S], hay: &str, require_all: bool) -> Option<Verdict> {
    let total = needles.len();
    let missing: Vec<&str> = needles.iter().map(|n| n.as_ref()).filter(|n| !hay.contains(n)).collect();
    let found = total - missing.len();
    if missing.is_empty() {
        return if total == 1 {
            verdict(1.0, true, FOUND_ALL_1)
        } else {
            verdict(1.0, true, format!("found all {total} needles"))
        };
    }
    let passed = if require_all { false } else { found > 0 };
    let mut shown = Vec::with_capacity(3);
    for n in missing.iter().take(3) {
        shown.push(text::preview(n, 40)?);
    }
    let more = if missing.len() > 3 { format!(" and {} more", missing.len() - 3) } else { String::new() };
    verdict(
        found as f64 / total as f64,
        passed,
        format!("found {found} of {total}; missing {}{more}", shown.join(", ")),
    )
}

fn exact_text(want: &str, got: &str, case_sensitive: bool, strip: bool) -> Option<Verdict> {
    let (w, g) = if strip { (text::py_strip(want), text::py_strip(got)) } else { (want, got) };
    let same = if case_sensitive {
        w == g
    } else {
        text::ascii_fold(w)? == text::ascii_fold(g)?
    };
    if same {
        return verdict(1.0, true, "output equals the expected text");
    }
    verdict(0.0, false, format!("expected {}, got {}", text::preview(want, 60)?, text::preview(got, 60)?))
}

impl Twin {
    /// The twin's verdict on one case, or None: run the Python check.
    pub fn run<'py, C: CaseView<'py>>(&self, py: Python<'py>, case: &mut C, limits: &Limits) -> Option<Verdict> {
        match self {
            Twin::Contains { literal, path, require_all, fold } => {
                if let Some(needles) = literal {
                    // Literal needles were folded when the check was built.
                    return if *fold {
                        let hay = text::ascii_fold(case.text())?;
                        contains_verdict(needles, &hay, *require_all)
                    } else {
                        contains_verdict(needles, case.text(), *require_all)
                    };
                }
                if *fold && !case.text().is_ascii() {
                    return None;
                }
                case.prepare_expected();
                let value = resolve(case.expected()?, path)?;
                let needles = needles_from(value)?;
                if limits.max_needles.is_some_and(|m| needles.len() > m) {
                    return None;
                }
                if let Some(m) = limits.max_needle_chars {
                    if needles.iter().map(|n| text::chars(n)).sum::<usize>() > m {
                        return None;
                    }
                }
                if *fold {
                    let folded: Option<Vec<String>> = needles.iter().map(|n| text::ascii_fold(n)).collect();
                    let folded = folded?;
                    let hay = text::ascii_fold(case.text())?;
                    contains_verdict(&folded, &hay, *require_all)
                } else {
                    contains_verdict(&needles, case.text(), *require_all)
                }
            }
            Twin::Exact { literal, path, case_sensitive, strip } => {
                let want_is_text = match literal {
                    Some(l) => matches!(l, J::Str(_)),
                    None => {
                        case.prepare_expected();
                        matches!(resolve(case.expected()?, path)?, J::Str(_))
                    }
                };
                if !want_is_text {
                    if case.has_value() {
                        return None;
                    }
                    case.prepare_output_json();
                }
                let want: &J = match literal {
                    Some(l) => l,
                    None => resolve(case.expected()?, path)?,
                };
                if let J::Str(w) = want {
                    return exact_text(w, case.text(), *case_sensitive, *strip);
                }
                if json::json_equal(want, case.output_json()?) {
                    verdict(1.0, true, "output equals the expected JSON value")
                } else {
                    None // the reason quotes both values as JSON: Python writes it
                }
            }
            Twin::Regex { search, re2_match } => {
                let hit = match re2_match {
                    Some((m, mode)) => {
                        let text = case.text();
                        let data = PyBytes::new(py, text.as_bytes());
                        let spans = m.bind(py).call1((mode.bind(py), data, 0, text.len())).ok()?;
                        let first: i64 = spans.get_item(0).ok()?.get_item(0).ok()?.extract().ok()?;
                        first != -1
                    }
                    None => search.bind(py).call1((case.py_text(py),)).ok()?.is_truthy().ok()?,
                };
                if hit {
                    verdict(1.0, true, "the pattern matches")
                } else {
                    verdict(0.0, false, "the pattern does not match")
                }
            }
            Twin::JsonSchema { schema } => {
                if case.has_value() {
                    return None;
                }
                if let Some(err) = json::not_a_value(case.text()) {
                    return verdict(0.0, false, format!("the output is not valid JSON: {err}"));
                }
                case.prepare_output_json();
                let value = case.output_json()?;
                if schema.valid(value) {
                    return verdict(1.0, true, "the output conforms to the schema");
                }
                let (lines, more) = schema.first_errors(value, 3)?;
                if lines.is_empty() {
                    return None; // cannot be: the failure would have a reason; ask Python
                }
                let tail = if more { "; and more" } else { "" };
                verdict(0.0, false, format!("the output does not conform: {}{tail}", lines.join("; ")))
            }
            Twin::Length { max_chars, max_words, min_chars } => {
                let t = case.text();
                let n = text::chars(t);
                let words = match max_words {
                    Some(_) => text::ascii_words(t)?,
                    None => 0,
                };
                let over_chars = max_chars.is_some_and(|m| n > m);
                let under_chars = min_chars.is_some_and(|m| n < m);
                let over_words = max_words.is_some_and(|m| words > m);
                if !(over_chars || under_chars || over_words) {
                    return verdict(1.0, true, format!("within limits ({n} characters)"));
                }
                let mut problems = Vec::new();
                if over_chars {
                    problems.push(format!("{n} characters, over max_chars {}", max_chars.unwrap()));
                }
                if under_chars {
                    problems.push(format!("{n} characters, under min_chars {}", min_chars.unwrap()));
                }
                if over_words {
                    problems.push(format!("{words} words, over max_words {}", max_words.unwrap()));
                }
                verdict(0.0, false, problems.join("; "))
            }
        }
    }
}

/// The negation `engine.passing` applies (`must_match: false`): never to an error.
pub fn negate(v: &mut Verdict) {
    v.value = 1.0 - v.value;
    v.reason.push_str(if !v.passed { ", as required" } else { " but must not" });
    v.passed = !v.passed;
}

// --- building twins from the Python factories' descriptions ----------------------------

fn path_of(obj: &Bound<'_, PyAny>) -> PyResult<Option<Vec<PathPart>>> {
    if obj.is_none() {
        return Ok(None);
    }
    let mut out = Vec::new();
    for part in obj.downcast::<PyList>()?.iter() {
        let t = part.downcast::<PyTuple>()?;
        out.push((t.get_item(0)?.extract()?, t.get_item(1)?.extract()?));
    }
    Ok(Some(out))
}

fn opt_usize(obj: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
    obj.extract()
}

/// A twin from its description, a dict the check's factory attached to its function
/// (`native_twin`); None when the description asks for something the twins lack.
pub fn twin_from(desc: &Bound<'_, PyDict>) -> PyResult<Option<Twin>> {
    let get = |k: &str| -> PyResult<Bound<'_, PyAny>> {
        desc.get_item(k)?.ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(k.to_owned()))
    };
    let kind: String = get("kind")?.extract()?;
    Ok(match kind.as_str() {
        "contains" => Some(Twin::Contains {
            literal: get("needles")?.extract()?,
            path: path_of(&get("path")?)?,
            require_all: get("require_all")?.extract()?,
            fold: get("fold")?.extract()?,
        }),
        "exact" => {
            let has_literal: bool = get("has_literal")?.extract()?;
            let literal = if has_literal {
                match json::from_py(&get("literal")?, 0) {
                    Some(j) => Some(j),
                    None => return Ok(None),
                }
            } else {
                None
            };
            Some(Twin::Exact {
                literal,
                path: path_of(&get("path")?)?,
                case_sensitive: get("case_sensitive")?.extract()?,
                strip: get("strip")?.extract()?,
            })
        }
        "regex" => {
            let raw = get("re2_match")?;
            let re2_match = if raw.is_none() {
                None
            } else {
                let (m, mode): (Py<PyAny>, Py<PyAny>) = raw.extract()?;
                Some((m, mode))
            };
            Some(Twin::Regex { search: get("search")?.unbind(), re2_match })
        }
        "json_schema" => FastSchema::compile(&get("schema")?).map(|schema| Twin::JsonSchema { schema }),
        "length" => Some(Twin::Length {
            max_chars: opt_usize(&get("max_chars")?)?,
            max_words: opt_usize(&get("max_words")?)?,
            min_chars: opt_usize(&get("min_chars")?)?,
        }),
        _ => None,
    })
}

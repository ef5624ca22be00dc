//! The native twins of the deterministic checks: contains, exact, regex, json_schema
//! and length, on their common paths.
//!
//! Each twin answers exactly what its Python check (`scorewire.checks.reference` or
//! `scorewire.checks.output_form`) answers, reason included, or `None`: the engine then
//! runs the Python check for that case. Everything unusual goes to Python that way:
//! errors (a missing reference, a needle list that is not one), JSON that Python must
//! parse or whose failures it must word, and text beyond ASCII whose characters it could
//! not ask Python about (`unicode`: case folding, words and previews come from Python's
//! database, character by character).

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

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
    /// The output text parsed as JSON; None when it is not JSON or Python must parse it.
    fn output_json(&self) -> Option<&J>;
    /// When the output text is not JSON: the decoder's error message and byte offset
    /// (`json::syntax_error` words them); None when it is, or Python must parse it.
    fn output_not_json(&self) -> Option<(&'static str, usize)>;
    /// Whether the objects in `expected()` have their keys in the order Python's value
    /// of it has (a reason that writes one out must write them in that order).
    fn expected_keys_in_order(&self) -> bool;
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

/// Whether a value holds an object, at any depth.
fn has_object(value: &J) -> bool {
    match value {
        J::Obj(_) => true,
        J::Arr(items) => items.iter().any(has_object),
        _ => false,
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
        text::fold(w)? == text::fold(g)?
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
                        let hay = text::fold(case.text())?;
                        contains_verdict(needles, &hay, *require_all)
                    } else {
                        contains_verdict(needles, case.text(), *require_all)
                    };
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
                    let folded: Option<Vec<String>> = needles.iter().map(|n| text::fold(n)).collect();
                    let folded = folded?;
                    let hay = text::fold(case.text())?;
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
                // A failure's reason writes the reference out: in Python's key order.
                let want_written = literal.is_some() || case.expected_keys_in_order() || !has_object(want);
                if let Some((message, at)) = case.output_not_json() {
                    if !want_written {
                        return None;
                    }
                    let err = json::syntax_error(case.text(), message, at)?;
                    let want = json::preview(want, 60);
                    return verdict(0.0, false, format!("expected the JSON value {want}; the output is not JSON ({err})"));
                }
                let got = case.output_json()?;
                if json::json_equal(want, got) {
                    verdict(1.0, true, "output equals the expected JSON value")
                } else if !want_written {
                    None
                } else {
                    // `preview` of a parsed string is its repr, of anything else its JSON
                    let got = match got {
                        J::Str(s) => text::preview(s, 60)?,
                        _ => json::preview(got, 60),
                    };
                    verdict(0.0, false, format!("expected {}, got {got}", json::preview(want, 60)))
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
                case.prepare_output_json();
                if let Some((message, at)) = case.output_not_json() {
                    let err = json::syntax_error(case.text(), message, at)?;
                    return verdict(0.0, false, format!("the output is not valid JSON: {err}"));
                }
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
                    Some(_) => text::words(t)?,
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

/// The Python type a description's field is read as, written as the annotations of
/// `scorewire.core.twin`'s dataclasses are (`twin_fields` lists them for the test that
/// holds the two sides together).
pub trait Declared {
    fn declared() -> String;
}

impl Declared for bool {
    fn declared() -> String {
        "bool".to_owned()
    }
}

impl Declared for String {
    fn declared() -> String {
        "str".to_owned()
    }
}

impl Declared for usize {
    fn declared() -> String {
        "int".to_owned()
    }
}

impl Declared for Py<PyAny> {
    fn declared() -> String {
        "Any".to_owned()
    }
}

impl Declared for Py<PyDict> {
    fn declared() -> String {
        "dict[str, Any]".to_owned()
    }
}

impl<T: Declared> Declared for Option<T> {
    fn declared() -> String {
        format!("{} | None", T::declared())
    }
}

impl<T: Declared> Declared for Vec<T> {
    fn declared() -> String {
        format!("tuple[{}, ...]", T::declared())
    }
}

impl<A: Declared, B: Declared> Declared for (A, B) {
    fn declared() -> String {
        format!("tuple[{}, {}]", A::declared(), B::declared())
    }
}

/// A Python callable (the pattern's `search`, RE2's `Match`).
pub struct Callable(Py<PyAny>);

impl<'py> FromPyObject<'py> for Callable {
    fn extract_bound(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        if !ob.is_callable() {
            return Err(pyo3::exceptions::PyTypeError::new_err("not callable"));
        }
        Ok(Callable(ob.clone().unbind()))
    }
}

impl Declared for Callable {
    fn declared() -> String {
        "Callable".to_owned()
    }
}

/// Declares the fields of each kind's description (one struct per kind, read field by
/// field by name), and `twin_fields`: every kind's field names and declared types.
macro_rules! descriptions {
    ($($(#[$doc:meta])* $name:ident = $kind:literal { $($field:ident: $ty:ty,)* })*) => {
        $(
            $(#[$doc])*
            struct $name {
                $($field: $ty,)*
            }

            impl $name {
                fn read(desc: &Bound<'_, PyAny>) -> PyResult<Self> {
                    Ok($name { $($field: desc.getattr(stringify!($field))?.extract()?,)* })
                }
            }
        )*

        /// Each kind of twin and the fields the kernel reads of its description, with
        /// their declared types (`negate` included: every description has it).
        pub fn twin_fields() -> Vec<(&'static str, Vec<(&'static str, String)>)> {
            vec![$(($kind, vec![(NEGATE, bool::declared()), $((stringify!($field), <$ty>::declared()),)*]),)*]
        }

        fn read_twin(kind: &str, desc: &Bound<'_, PyAny>) -> PyResult<Option<Twin>> {
            match kind {
                $($kind => $name::read(desc)?.twin(desc.py()),)*
                _ => Ok(None),
            }
        }
    };
}

/// The field of every description that inverts its twin's verdicts (`_TwinBase.negate`).
const NEGATE: &str = "negate";

descriptions! {
    /// `ContainsTwin`.
    ContainsDesc = "contains" {
        needles: Option<Vec<String>>,
        path: Option<Vec<PathPart>>,
        require_all: bool,
        fold: bool,
    }
    /// `ExactTwin`.
    ExactDesc = "exact" {
        literal: Py<PyAny>,
        path: Option<Vec<PathPart>>,
        case_sensitive: bool,
        strip: bool,
    }
    /// `RegexTwin`.
    RegexDesc = "regex" {
        search: Callable,
        re2_match: Option<(Callable, Py<PyAny>)>,
    }
    /// `JsonSchemaTwin`.
    JsonSchemaDesc = "json_schema" {
        schema: Py<PyDict>,
    }
    /// `LengthTwin`.
    LengthDesc = "length" {
        max_chars: Option<usize>,
        max_words: Option<usize>,
        min_chars: Option<usize>,
    }
}

impl ContainsDesc {
    fn twin(self, _py: Python<'_>) -> PyResult<Option<Twin>> {
        let ContainsDesc { needles, path, require_all, fold } = self;
        Ok(Some(Twin::Contains { literal: needles, path, require_all, fold }))
    }
}

impl ExactDesc {
    fn twin(self, py: Python<'_>) -> PyResult<Option<Twin>> {
        let literal = if self.literal.is_none(py) {
            None
        } else {
            match json::from_py(self.literal.bind(py), 0) {
                Some(j) => Some(j),
                None => return Ok(None),
            }
        };
        let ExactDesc { path, case_sensitive, strip, .. } = self;
        Ok(Some(Twin::Exact { literal, path, case_sensitive, strip }))
    }
}

impl RegexDesc {
    fn twin(self, _py: Python<'_>) -> PyResult<Option<Twin>> {
        let re2_match = self.re2_match.map(|(m, mode)| (m.0, mode));
        Ok(Some(Twin::Regex { search: self.search.0, re2_match }))
    }
}

impl JsonSchemaDesc {
    fn twin(self, py: Python<'_>) -> PyResult<Option<Twin>> {
        Ok(FastSchema::compile(self.schema.bind(py).as_any()).map(|schema| Twin::JsonSchema { schema }))
    }
}

impl LengthDesc {
    fn twin(self, _py: Python<'_>) -> PyResult<Option<Twin>> {
        let LengthDesc { max_chars, max_words, min_chars } = self;
        Ok(Some(Twin::Length { max_chars, max_words, min_chars }))
    }
}

/// A twin and whether its verdicts are inverted, from its description (one of
/// `scorewire.core.twin`'s dataclasses, which the check's factory attached to its
/// function); None when the description asks for something the twins lack.
pub fn twin_from(desc: &Bound<'_, PyAny>) -> PyResult<Option<(Twin, bool)>> {
    let kind: String = desc.getattr("kind")?.extract()?;
    let negate: bool = desc.getattr(NEGATE)?.extract()?;
    Ok(read_twin(&kind, desc)?.map(|twin| (twin, negate)))
}

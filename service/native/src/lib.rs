//! scorewire's native scoring kernel.
//!
//! A `NativePlan` scores whole batches of a plan whose checks are deterministic: the
//! checks with a native twin (`checks`) run here on their common paths; every other check,
//! and every case a twin declines, runs the plan's own Python check through
//! `engine.execute.run_check_sync`, so each score is exactly the one Python gives. It
//! scores serialized `Case` messages into a serialized `RunSuiteResponse` (a scoring
//! worker's chunk) or `Case` objects into `CaseResult` objects (the engine in process),
//! and counts what the summary and the metrics need as it goes.

mod checks;
mod json;
mod objects;
mod proto;
mod schema;
mod text;
mod unicode;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::time::Instant;

use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyList, PyString};

use checks::{CaseView, Limits, Twin, Verdict};
use json::J;
use proto::WireCase;

/// Slots of the scoring worker's shared progress array (`server.scoring_worker`).
const STARTED_AT: usize = 0;
const CASE_POS: usize = 1;
const CHECK_IDX: usize = 2;

struct Check {
    name: String,
    ctype: String,
    /// The Score message's name and type fields, written once.
    head: Vec<u8>,
    twin: Option<Twin>,
    negate: bool,
    /// The CompiledCheck, for `run_check_sync`.
    compiled: Py<PyAny>,
}

/// One score, native or read back from Python's.
struct Res {
    value: f64,
    passed: bool,
    reason: String,
    error: Option<(String, String)>,
    cost: f64,
    latency_ms: f64,
    cached: bool,
    unpriced: bool,
    skipped: bool,
    /// Python's Score, when Python made it (kept for the in-process results, and for the
    /// rare score the native writer does not encode: a judge's spread).
    py: Option<Py<PyAny>>,
    spread: bool,
    /// Why Python's reason or error message cannot be written to a message (text that is
    /// not UTF-8: a lone surrogate), raised when the wire path writes it, as Python's
    /// writer raises; the in-process results keep Python's Score as it is.
    unwritable: Option<PyErr>,
}

impl Res {
    fn native(v: Verdict, latency_ms: f64) -> Res {
        Res {
            value: v.value,
            passed: v.passed,
            reason: v.reason,
            error: None,
            cost: 0.0,
            latency_ms,
            cached: false,
            unpriced: false,
            skipped: false,
            py: None,
            spread: false,
            unwritable: None,
        }
    }

    fn error(code: &str, message: &str) -> Res {
        Res {
            value: 0.0,
            passed: false,
            reason: message.to_owned(),
            error: Some((code.to_owned(), message.to_owned())),
            cost: 0.0,
            latency_ms: 0.0,
            cached: false,
            unpriced: false,
            skipped: false,
            py: None,
            spread: false,
            unwritable: None,
        }
    }

    fn from_py(score: Bound<'_, PyAny>) -> PyResult<Res> {
        let py = score.py();
        let mut unwritable = None;
        let mut text = |obj: Bound<'_, PyAny>| -> PyResult<String> {
            match obj.extract::<String>() {
                Ok(s) => Ok(s),
                Err(err) if obj.is_instance_of::<PyString>() => {
                    unwritable.get_or_insert(err);
                    Ok(String::new())
                }
                Err(err) => Err(err),
            }
        };
        let error = score.getattr(intern!(py, "error"))?;
        let error = if error.is_none() {
            None
        } else {
            Some((
                error.getattr(intern!(py, "code"))?.extract()?,
                text(error.getattr(intern!(py, "message"))?)?,
            ))
        };
        let reason = text(score.getattr(intern!(py, "reason"))?)?;
        Ok(Res {
            value: score.getattr(intern!(py, "value"))?.extract()?,
            passed: score.getattr(intern!(py, "passed"))?.is_truthy()?,
            reason,
            error,
            cost: score.getattr(intern!(py, "cost_usd"))?.extract()?,
            latency_ms: score.getattr(intern!(py, "latency_ms"))?.extract()?,
            cached: score.getattr(intern!(py, "cached"))?.is_truthy()?,
            unpriced: score.getattr(intern!(py, "unpriced"))?.is_truthy()?,
            skipped: score.getattr(intern!(py, "skipped"))?.is_truthy()?,
            spread: !score.getattr(intern!(py, "spread"))?.is_none(),
            py: Some(score.unbind()),
            unwritable,
        })
    }
}

// --- the two sources of cases ----------------------------------------------------------

enum Lazy {
    Unread,
    Python,
    Got(J),
    /// Not JSON, with the decoder's error (its message and byte offset).
    NotJson(&'static str, usize),
}

impl Lazy {
    fn get(&self) -> Option<&J> {
        match self {
            Lazy::Got(j) => Some(j),
            _ => None,
        }
    }

    fn parsed(text: &str) -> Lazy {
        match json::parse_checked(text) {
            Ok(j) => Lazy::Got(j),
            Err(json::Fail::Syntax(message, at)) => Lazy::NotJson(message, at),
            Err(json::Fail::Python) => Lazy::Python,
        }
    }

    fn not_json(&self) -> Option<(&'static str, usize)> {
        match self {
            Lazy::NotJson(message, at) => Some((message, *at)),
            _ => None,
        }
    }
}

struct Wire<'a, 'py> {
    case: WireCase<'a>,
    expected: Lazy,
    output: Lazy,
    py_text: Option<Bound<'py, PyString>>,
}

impl<'a, 'py> CaseView<'py> for Wire<'a, 'py> {
    fn text(&self) -> &str {
        self.case.text
    }
    fn has_value(&self) -> bool {
        self.case.has_value
    }
    fn prepare_expected(&mut self) {
        if let Lazy::Unread = self.expected {
            self.expected = self.case.expected().map_or(Lazy::Python, Lazy::Got);
        }
    }
    fn expected(&self) -> Option<&J> {
        self.expected.get()
    }
    fn prepare_output_json(&mut self) {
        if let Lazy::Unread = self.output {
            self.output = Lazy::parsed(self.case.text);
        }
    }
    fn output_json(&self) -> Option<&J> {
        self.output.get()
    }
    fn output_not_json(&self) -> Option<(&'static str, usize)> {
        self.output.not_json()
    }
    fn expected_keys_in_order(&self) -> bool {
        self.case.expected_keys_in_order()
    }
    fn py_text(&mut self, py: Python<'py>) -> Bound<'py, PyString> {
        self.py_text.get_or_insert_with(|| PyString::new(py, self.case.text)).clone()
    }
}

struct Obj<'py> {
    /// The output text (its UTF-8 form was checked readable when the view was made).
    text_obj: Bound<'py, PyString>,
    has_value: bool,
    /// The sample's expected value as Python holds it (None: no sample, or no value).
    expected_obj: Option<Bound<'py, PyAny>>,
    expected: Lazy,
    parsed: Lazy,
}

impl<'py> Obj<'py> {
    fn new(text: &Bound<'py, PyAny>, has_value: bool, expected_obj: Option<Bound<'py, PyAny>>) -> Option<Obj<'py>> {
        let text_obj = text.downcast_exact::<PyString>().ok()?.clone();
        text_obj.to_str().ok()?; // a lone surrogate has no UTF-8: Python scores the case
        Some(Obj { text_obj, has_value, expected_obj, expected: Lazy::Unread, parsed: Lazy::Unread })
    }
}

impl<'py> CaseView<'py> for Obj<'py> {
    fn text(&self) -> &str {
        self.text_obj.to_str().unwrap_or("")
    }
    fn has_value(&self) -> bool {
        self.has_value
    }
    fn prepare_expected(&mut self) {
        if let Lazy::Unread = self.expected {
            self.expected = match &self.expected_obj {
                None => Lazy::Got(J::Null),
                Some(v) => json::from_py(v, 0).map_or(Lazy::Python, Lazy::Got),
            };
        }
    }
    fn expected(&self) -> Option<&J> {
        self.expected.get()
    }
    fn prepare_output_json(&mut self) {
        if let Lazy::Unread = self.parsed {
            self.parsed = Lazy::parsed(self.text());
        }
    }
    fn output_json(&self) -> Option<&J> {
        self.parsed.get()
    }
    fn output_not_json(&self) -> Option<(&'static str, usize)> {
        self.parsed.not_json()
    }
    fn expected_keys_in_order(&self) -> bool {
        true // the caller's own dict, read in its order
    }
    fn py_text(&mut self, _py: Python<'py>) -> Bound<'py, PyString> {
        self.text_obj.clone()
    }
}

/// A case of `run_batch` in the form callers hold: `{"sample": {...}, "output": "text"}`
/// with plain dicts and only known keys. Anything else is converted by Python.
struct Plain<'py> {
    id: Bound<'py, PyAny>,
    view: Obj<'py>,
}

const CASE_KEYS: [&str; 2] = ["sample", "output"];
const SAMPLE_KEYS: [&str; 4] = ["id", "input", "expected", "metadata"];

fn only_keys(d: &Bound<'_, PyDict>, known: &[&str]) -> bool {
    d.len() <= known.len()
        && d.iter().all(|(k, _)| k.downcast_exact::<PyString>().is_ok_and(|k| k.to_str().is_ok_and(|k| known.contains(&k))))
}

fn plain<'py>(py: Python<'py>, item: &Bound<'py, PyAny>) -> PyResult<Option<Plain<'py>>> {
    let Ok(case) = item.downcast_exact::<PyDict>() else { return Ok(None) };
    if !only_keys(case, &CASE_KEYS) {
        return Ok(None);
    }
    let Some(output) = case.get_item(intern!(py, "output"))? else { return Ok(None) };
    let (id, expected) = match case.get_item(intern!(py, "sample"))? {
        None => (PyString::new(py, "").into_any(), None),
        Some(s) if s.is_none() => (PyString::new(py, "").into_any(), None),
        Some(s) => {
            let Ok(sample) = s.downcast_exact::<PyDict>() else { return Ok(None) };
            if !only_keys(sample, &SAMPLE_KEYS) {
                return Ok(None);
            }
            if let Some(meta) = sample.get_item(intern!(py, "metadata"))? {
                if !meta.is_none() && !meta.is_exact_instance_of::<PyDict>() {
                    return Ok(None); // Python's `dict(metadata)` decides (or raises)
                }
            }
            let id = match sample.get_item(intern!(py, "id"))? {
                None => PyString::new(py, "").into_any(),
                Some(v) if v.is_exact_instance_of::<PyString>() => v,
                Some(v) => v.str()?.into_any(), // `str(sample.get("id", ""))`, as Python
            };
            (id, sample.get_item(intern!(py, "expected"))?.filter(|v| !v.is_none()))
        }
    };
    Ok(Obj::new(&output, false, expected).map(|view| Plain { id, view }))
}

// --- counts ----------------------------------------------------------------------------

#[derive(Clone, Default)]
struct Totals {
    passed: u64,
    failed: u64,
    errored: u64,
    skipped: u64,
    value_sum: f64,
    cost: f64,
    cached: u64,
    unpriced: u64,
}

/// `SummaryBuilder.add` and `metrics.runs.tally`, per score in case order (so the float
/// sums are the same as Python's).
struct Counter {
    cases: u64,
    cases_passed: u64,
    totals: Vec<Totals>,
    bounds: Option<Vec<f64>>,
    t_passed: Vec<u64>,
    t_errored: Vec<u64>,
    millis: Vec<f64>,
    hist: Vec<u64>,
    codes: Vec<(usize, String)>,
}

type CountsOut = (u64, u64, Vec<(u64, u64, u64, u64, f64, f64, u64, u64)>);
type TallyOut = (u64, Vec<u64>, Vec<u64>, Vec<f64>, Vec<u64>, Vec<(usize, String)>);

impl Counter {
    fn new(n: usize, bounds: Option<Vec<f64>>) -> Counter {
        let width = bounds.as_ref().map_or(0, |b| b.len() + 1);
        Counter {
            cases: 0,
            cases_passed: 0,
            totals: vec![Totals::default(); n],
            bounds,
            t_passed: vec![0; n],
            t_errored: vec![0; n],
            millis: vec![0.0; n],
            hist: vec![0; n * width],
            codes: Vec::new(),
        }
    }

    /// Count one case's scores; whether the case passed (every score did).
    fn add(&mut self, scores: &[Res], known: &[String]) -> bool {
        self.cases += 1;
        let passed = scores.iter().all(|s| s.passed);
        self.cases_passed += passed as u64;
        for (i, s) in scores.iter().enumerate() {
            let t = &mut self.totals[i];
            t.cost += s.cost;
            if s.skipped {
                t.skipped += 1;
            } else {
                if s.error.is_some() {
                    t.errored += 1;
                } else if s.passed {
                    t.passed += 1;
                } else {
                    t.failed += 1;
                }
                t.value_sum += s.value;
                t.cached += s.cached as u64;
                t.unpriced += s.unpriced as u64;
            }
            if let Some(bounds) = &self.bounds {
                if let Some((code, _)) = &s.error {
                    self.t_errored[i] += 1;
                    let label = if known.contains(code) { code.clone() } else { "OTHER".to_owned() };
                    self.codes.push((i, label));
                } else if s.passed {
                    self.t_passed[i] += 1;
                }
                self.millis[i] += s.latency_ms;
                let bucket = bounds.partition_point(|&b| b < s.latency_ms);
                self.hist[i * (bounds.len() + 1) + bucket] += 1;
            }
        }
        passed
    }

    fn counts(&self) -> CountsOut {
        let per = self
            .totals
            .iter()
            .map(|t| (t.passed, t.failed, t.errored, t.skipped, t.value_sum, t.cost, t.cached, t.unpriced))
            .collect();
        (self.cases, self.cases_passed, per)
    }

    fn tally(self) -> Option<TallyOut> {
        self.bounds.as_ref()?;
        Some((self.cases, self.t_passed, self.t_errored, self.millis, self.hist, self.codes))
    }
}

// --- encoding --------------------------------------------------------------------------

fn score_bytes(out: &mut Vec<u8>, c: &Check, s: &Res, cap: usize) {
    out.extend_from_slice(&c.head);
    proto::put_double(out, 0x19, s.value);
    proto::put_bool(out, 0x20, s.passed);
    if !s.reason.is_empty() {
        proto::put_bytes(out, 0x2a, text::bounded(&s.reason, cap).as_bytes());
    }
    proto::put_double(out, 0x31, s.cost);
    proto::put_double(out, 0x39, s.latency_ms);
    proto::put_bool(out, 0x40, s.cached);
    if let Some((code, message)) = &s.error {
        let mut e = Vec::new();
        if !code.is_empty() {
            proto::put_bytes(&mut e, 0x0a, code.as_bytes());
        }
        let m = text::bounded(message, cap);
        if !m.is_empty() {
            proto::put_bytes(&mut e, 0x12, m.as_bytes());
        }
        proto::put_bytes(out, 0x4a, &e);
    }
    proto::put_bool(out, 0x50, s.unpriced);
    proto::put_bool(out, 0x58, s.error.is_none() && s.skipped);
}

fn now_monotonic() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given; CLOCK_MONOTONIC always exists
    // on Linux, and it is the clock of Python's time.monotonic().
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

struct Progress(usize);

impl Progress {
    fn set(&self, slot: usize, v: f64) {
        if self.0 != 0 {
            // SAFETY: the address is the scoring worker's shared RawArray of doubles
            // (`PROGRESS_SLOTS` long), which outlives the call; slots are below that.
            unsafe { std::ptr::write_volatile((self.0 as *mut f64).add(slot), v) }
        }
    }
}

// --- the plan --------------------------------------------------------------------------

type PyCase<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>);

/// The (Sample, Output) of a case for Python checks, made by `make` (a Case) when first
/// asked and kept for the case's other checks.
fn lazily<'py>(py: Python<'py>, make: impl Fn() -> PyResult<Bound<'py, PyAny>>) -> impl FnMut() -> PyResult<PyCase<'py>> {
    let mut got: Option<PyCase<'py>> = None;
    move || {
        if got.is_none() {
            let c = make()?;
            got = Some((c.getattr(intern!(py, "sample"))?, c.getattr(intern!(py, "output"))?));
        }
        Ok(got.clone().unwrap())
    }
}

/// A plan's checks, ready to score batches natively (see the module docs).
#[pyclass(module = "scorewire_native")]
struct NativePlan {
    checks: Vec<Check>,
    run_check: Py<PyAny>,
    ctx: Py<PyAny>,
    score_cls: Py<PyAny>,
    case_result_cls: Py<PyAny>,
    /// `server.convert.score_bytes`, for a score with a spread (none of a native plan's
    /// checks makes one; kept so that no score is ever written wrong).
    spread_bytes: Py<PyAny>,
    known_codes: Vec<String>,
    limits: Limits,
    max_reason_chars: usize,
    /// How to fill Score and CaseResult objects directly (None: call the classes).
    score_layout: Option<objects::Layout>,
    result_layout: Option<objects::Layout>,
    zero: Py<PyFloat>,
    one: Py<PyFloat>,
}

const SCORE_SLOTS: [&str; 11] = [
    "value", "passed", "reason", "cost_usd", "latency_ms", "error", "cached", "unpriced", "skipped", "spread",
    "judge",
];
/// Distinct reason strings one batch shares between its scores.
const REASONS_KEPT: usize = 1024;

/// A batch's reason strings, each made once (hashed with `Fx`: they are short and ours).
type Reasons = HashMap<String, Py<PyString>, BuildHasherDefault<Fx>>;

/// FxHash (rustc's): a multiply and a rotate per eight bytes, several times faster than
/// the default SipHash on short keys, which need no protection from chosen collisions
/// here (at most `REASONS_KEPT` of them per batch).
#[derive(Default)]
struct Fx(u64);

impl Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().unwrap()));
        }
        for &b in chunks.remainder() {
            self.add(b as u64);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

impl Fx {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}
const RESULT_SLOTS: [&str; 4] = ["index", "sample_id", "scores", "passed"];

impl NativePlan {
    /// Write each score as a Score message field `tag` of `out`; whether all passed.
    fn put_scores(&self, py: Python<'_>, scores: &[Res], tag: u8, out: &mut Vec<u8>, body: &mut Vec<u8>) -> PyResult<bool> {
        let mut passed = true;
        for (c, s) in self.checks.iter().zip(scores) {
            if let Some(err) = &s.unwritable {
                return Err(err.clone_ref(py));
            }
            passed &= s.passed;
            body.clear();
            if s.spread && s.error.is_none() && !s.skipped {
                let head = PyBytes::new(py, &c.head);
                let got = self.spread_bytes.bind(py).call1((
                    head,
                    c.name.as_str(),
                    c.ctype.as_str(),
                    s.py.as_ref().unwrap().bind(py),
                    self.max_reason_chars,
                ))?;
                body.extend_from_slice(got.downcast::<PyBytes>()?.as_bytes());
            } else {
                score_bytes(body, c, s, self.max_reason_chars);
            }
            proto::put_bytes(out, tag, body);
        }
        Ok(passed)
    }

    /// Every check of a case in Python (a case the kernel cannot read).
    fn python_scores<'py>(
        &self,
        py: Python<'py>,
        pair: &PyCase<'py>,
        ctx: &Bound<'py, PyAny>,
        mut before: impl FnMut(usize) -> Option<Res>,
    ) -> PyResult<Vec<Res>> {
        let mut scores = Vec::with_capacity(self.checks.len());
        for (j, c) in self.checks.iter().enumerate() {
            if let Some(r) = before(j) {
                scores.push(r);
                continue;
            }
            let s = self.run_check.bind(py).call1((c.compiled.bind(py), &pair.0, &pair.1, ctx))?;
            scores.push(Res::from_py(s)?);
        }
        Ok(scores)
    }

    /// Score one case. `python_case` gives the (Sample, Output) pair for Python checks,
    /// which get `ctx`; `before(j)` may give check `j`'s score without running it.
    fn score_case<'py, C: CaseView<'py>>(
        &self,
        py: Python<'py>,
        case: &mut C,
        python_case: &mut dyn FnMut() -> PyResult<PyCase<'py>>,
        mut before: impl FnMut(usize) -> Option<Res>,
        ctx: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Res>> {
        unicode::new_case();
        let mut scores = Vec::with_capacity(self.checks.len());
        let mut last: Option<Instant> = None;
        for (j, c) in self.checks.iter().enumerate() {
            if let Some(r) = before(j) {
                scores.push(r);
                last = None;
                continue;
            }
            if let Some(twin) = &c.twin {
                // One clock reading between two native checks ends one and starts the next.
                let start = last.unwrap_or_else(Instant::now);
                if let Some(mut v) = twin.run(py, case, &self.limits) {
                    if c.negate {
                        checks::negate(&mut v);
                    }
                    let end = Instant::now();
                    scores.push(Res::native(v, (end - start).as_secs_f64() * 1000.0));
                    last = Some(end);
                    continue;
                }
            }
            last = None;
            let (sample, output) = python_case()?;
            let score = self.run_check.bind(py).call1((c.compiled.bind(py), sample, output, ctx))?;
            scores.push(Res::from_py(score)?);
        }
        Ok(scores)
    }

    fn py_score<'py>(&self, py: Python<'py>, s: Res, reasons: &mut Reasons) -> PyResult<Py<PyAny>> {
        if let Some(obj) = s.py {
            return Ok(obj);
        }
        // Reasons repeat: one string object per distinct reason of a batch (up to a bound).
        let reason = match reasons.get(&s.reason) {
            Some(obj) => obj.clone_ref(py),
            None => {
                let obj = PyString::new(py, &s.reason).unbind();
                if reasons.len() < REASONS_KEPT {
                    reasons.insert(s.reason.clone(), obj.clone_ref(py));
                }
                obj
            }
        };
        let Some(layout) = &self.score_layout else {
            let score = self.score_cls.bind(py).call1((s.value, s.passed, reason))?;
            score.setattr(intern!(py, "latency_ms"), s.latency_ms)?;
            return Ok(score.unbind());
        };
        let value = if s.value == 1.0 {
            self.one.bind(py).clone().into_any()
        } else if s.value.to_bits() == 0 {
            self.zero.bind(py).clone().into_any()
        } else {
            PyFloat::new(py, s.value).into_any()
        };
        let f = PyBool::new(py, false).to_owned().into_any();
        let none = py.None().into_bound(py);
        // Native scores are never errors, cost nothing, are never cached, skipped or spread,
        // and ask no judge (no judge mark).
        let score = layout.make(
                py,
                vec![
                    value,
                    PyBool::new(py, s.passed).to_owned().into_any(),
                    reason.into_bound(py).into_any(),
                    self.zero.bind(py).clone().into_any(),
                    PyFloat::new(py, s.latency_ms).into_any(),
                    none.clone(),
                    f.clone(),
                    f.clone(),
                    f,
                    none.clone(),
                    none,
                ],
            )?;
        // Its slots hold a float, bools, a str and None: it can be part of no cycle, so
        // the cyclic collector need not walk it (as CPython untracks such tuples itself).
        // SAFETY: the object is ours, alive, and was tracked by its allocation.
        unsafe { ffi::PyObject_GC_UnTrack(score.as_ptr() as *mut std::ffi::c_void) };
        Ok(score.unbind())
    }
}

#[pymethods]
impl NativePlan {
    /// `checks`: (name, type, twin description or None, CompiledCheck) per check.
    /// `char_facts(ch)`: what Python's Unicode database says of a character (`unicode`).
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (checks, run_check, ctx, score_cls, case_result_cls, spread_bytes, known_codes, max_needles, max_needle_chars, max_reason_chars, char_facts))]
    fn new(
        checks: &Bound<'_, PyList>,
        run_check: Py<PyAny>,
        ctx: Py<PyAny>,
        score_cls: Py<PyAny>,
        case_result_cls: Py<PyAny>,
        spread_bytes: Py<PyAny>,
        known_codes: Vec<String>,
        max_needles: Option<usize>,
        max_needle_chars: Option<usize>,
        max_reason_chars: usize,
        char_facts: Py<PyAny>,
    ) -> PyResult<Self> {
        unicode::set_source(char_facts);
        let mut out = Vec::new();
        for item in checks.iter() {
            let (name, ctype, desc, compiled): (String, String, Bound<'_, PyAny>, Py<PyAny>) = item.extract()?;
            // A description the twins cannot take (a bound or index beyond 64 bits, say)
            // leaves the check to Python, which answers for every value.
            let (twin, negate) = if desc.is_none() {
                (None, false)
            } else {
                match checks::twin_from(&desc).unwrap_or(None) {
                    Some((twin, negate)) => (Some(twin), negate),
                    None => (None, false),
                }
            };
            let mut head = Vec::new();
            if !name.is_empty() {
                proto::put_bytes(&mut head, 0x0a, name.as_bytes());
            }
            if !ctype.is_empty() {
                proto::put_bytes(&mut head, 0x12, ctype.as_bytes());
            }
            out.push(Check { name, ctype, head, twin, negate, compiled });
        }
        let py = checks.py();
        let score_layout = objects::Layout::of(score_cls.bind(py), &SCORE_SLOTS);
        let result_layout = objects::Layout::of(case_result_cls.bind(py), &RESULT_SLOTS);
        Ok(NativePlan {
            score_layout,
            result_layout,
            zero: PyFloat::new(py, 0.0).unbind(),
            one: PyFloat::new(py, 1.0).unbind(),
            checks: out,
            run_check,
            ctx,
            score_cls,
            case_result_cls,
            spread_bytes,
            known_codes,
            limits: Limits { max_needles, max_needle_chars },
            max_reason_chars,
        })
    }

    /// Whether Score and CaseResult objects are filled directly (their slots are the
    /// expected ones), not made by calling the classes.
    #[getter]
    fn fills_objects(&self) -> bool {
        self.score_layout.is_some() && self.result_layout.is_some()
    }

    /// How many checks have a native twin.
    #[getter]
    fn native_checks(&self) -> usize {
        self.checks.iter().filter(|c| c.twin.is_some()).count()
    }

    /// Score serialized `Case` messages (a scoring worker's chunk): the serialized
    /// `RunSuiteResponse` of their results, the summary counts and, with `bounds_ms`, the
    /// metrics tally. `python_case(data, index)` parses a case for Python checks;
    /// `killed(code)` is the score of a check the server stopped (`skip`).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (cases, first, python_case, progress, deadline, skip, killed, bounds_ms))]
    fn score_wire<'py>(
        &self,
        py: Python<'py>,
        cases: &Bound<'py, PyList>,
        first: i64,
        python_case: &Bound<'py, PyAny>,
        progress: usize,
        deadline: Option<f64>,
        skip: &Bound<'py, PyDict>,
        killed: &Bound<'py, PyAny>,
        bounds_ms: Option<Vec<f64>>,
    ) -> PyResult<(Bound<'py, PyBytes>, CountsOut, Option<TallyOut>)> {
        let progress = Progress(progress);
        let mut counter = Counter::new(self.checks.len(), bounds_ms);
        let mut batch: Vec<u8> = Vec::with_capacity(cases.len() * 64 * (self.checks.len() + 1));
        let mut one: Vec<u8> = Vec::new();
        let mut body: Vec<u8> = Vec::new();
        for (pos, item) in cases.iter().enumerate() {
            let data = item.downcast::<PyBytes>()?;
            let bytes = data.as_bytes();
            let index = first + pos as i64;
            let case_skip = match skip.get_item(pos)? {
                Some(d) => Some(d.downcast_into::<PyDict>()?),
                None => None,
            };
            let mut get_py_case = lazily(py, || python_case.call1((data, index)));
            progress.set(CASE_POS, pos as f64);
            let mut before = |j: usize| -> Option<Res> {
                if let Some(sk) = &case_skip {
                    if let Ok(Some(code)) = sk.get_item(j) {
                        return Some(match killed.call1((code,)).and_then(Res::from_py) {
                            Ok(r) => r,
                            Err(_) => Res::error("CHECK_FAILED", "the check crashed its scoring worker; see the server log"),
                        });
                    }
                }
                let now = now_monotonic();
                if deadline.is_some_and(|d| now >= d) {
                    return Some(Res::error(
                        "DEADLINE_EXCEEDED",
                        "the request deadline expired before the check ran",
                    ));
                }
                progress.set(CHECK_IDX, j as f64);
                progress.set(STARTED_AT, now);
                None
            };
            let (sample_id, scores): (String, Vec<Res>) = match WireCase::decode(bytes) {
                Some(wc) => {
                    let id = wc.id.to_owned();
                    let mut view = Wire { case: wc, expected: Lazy::Unread, output: Lazy::Unread, py_text: None };
                    (id, self.score_case(py, &mut view, &mut get_py_case, &mut before, self.ctx.bind(py))?)
                }
                None => {
                    // Not a message the reader knows: every check in Python.
                    let pair = get_py_case()?;
                    let id: String = pair.0.getattr(intern!(py, "id"))?.extract()?;
                    (id, self.python_scores(py, &pair, self.ctx.bind(py), before)?)
                }
            };
            progress.set(STARTED_AT, 0.0);
            counter.add(&scores, &self.known_codes);
            // CaseResult { index = 1; sample_id = 2; scores = 3; passed = 4; }
            one.clear();
            if index != 0 {
                one.push(0x08);
                proto::put_varint(&mut one, index as u64);
            }
            if !sample_id.is_empty() {
                proto::put_bytes(&mut one, 0x12, sample_id.as_bytes());
            }
            let passed = self.put_scores(py, &scores, 0x1a, &mut one, &mut body)?;
            proto::put_bool(&mut one, 0x20, passed);
            proto::put_bytes(&mut batch, 0x0a, &one); // CaseResultBatch.results = 1
        }
        let message = if batch.is_empty() {
            PyBytes::new(py, b"")
        } else {
            let mut out = Vec::with_capacity(batch.len() + 6);
            proto::put_bytes(&mut out, 0x0a, &batch); // RunSuiteResponse.results = 1
            PyBytes::new(py, &out)
        };
        let counts = counter.counts();
        Ok((message, counts, counter.tally()))
    }

    /// Score a unary Score from its serialized `ScoreRequest`: the serialized
    /// `ScoreResponse` and, with `bounds_ms`, the metrics tally. `python_case()` gives
    /// the Case Python checks read; they get `ctx` (the request's).
    #[pyo3(signature = (request, python_case, ctx, bounds_ms))]
    fn score_one<'py>(
        &self,
        py: Python<'py>,
        request: &Bound<'py, PyBytes>,
        python_case: &Bound<'py, PyAny>,
        ctx: &Bound<'py, PyAny>,
        bounds_ms: Option<Vec<f64>>,
    ) -> PyResult<(Bound<'py, PyBytes>, Option<TallyOut>)> {
        let mut get_py_case = lazily(py, || python_case.call0());
        let scores = match WireCase::decode_score_request(request.as_bytes()) {
            Some(wc) => {
                let mut view = Wire { case: wc, expected: Lazy::Unread, output: Lazy::Unread, py_text: None };
                self.score_case(py, &mut view, &mut get_py_case, |_| None, ctx)?
            }
            None => self.python_scores(py, &get_py_case()?, ctx, |_| None)?,
        };
        let mut counter = Counter::new(self.checks.len(), bounds_ms);
        counter.add(&scores, &self.known_codes);
        // ScoreResponse { scores = 1; passed = 2; }
        let mut out = Vec::with_capacity(64 * (self.checks.len() + 1));
        let mut body = Vec::new();
        let passed = self.put_scores(py, &scores, 0x0a, &mut out, &mut body)?;
        proto::put_bool(&mut out, 0x10, passed);
        Ok((PyBytes::new(py, &out), counter.tally()))
    }

    /// Score the cases of `run_batch` in process, from any iterable: plain case dicts
    /// (`{"sample": {...}, "output": "text"}`) are read here; any other item, and the
    /// Python checks' view of any case, is `convert(item, index)`'s Case (which raises
    /// for a malformed case as `run_batch` does). Returns the `CaseResult` objects and
    /// the summary counts.
    fn score_objects<'py>(
        &self,
        py: Python<'py>,
        cases: &Bound<'py, PyAny>,
        convert: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyList>, CountsOut)> {
        let mut counter = Counter::new(self.checks.len(), None);
        let mut out = Vec::new();
        let mut reasons = Reasons::default();
        for (i, item) in cases.try_iter()?.enumerate() {
            let item = item?;
            let index = (i as i64).into_pyobject(py)?.into_any();
            let (sample_id, scores) = match plain(py, &item)? {
                Some(Plain { id, mut view }) => {
                    let mut get = lazily(py, || convert.call1((&item, &index)));
                    (id, self.score_case(py, &mut view, &mut get, |_| None, self.ctx.bind(py))?)
                }
                None => {
                    let case = convert.call1((&item, &index))?;
                    let sample = case.getattr(intern!(py, "sample"))?;
                    let output = case.getattr(intern!(py, "output"))?;
                    let has_value = !output.getattr(intern!(py, "value"))?.is_none();
                    let expected = Some(sample.getattr(intern!(py, "expected"))?).filter(|v| !v.is_none());
                    let scores = match Obj::new(&output.getattr(intern!(py, "text"))?, has_value, expected) {
                        Some(mut view) => {
                            let pair = (sample.clone(), output.clone());
                            self.score_case(py, &mut view, &mut || Ok(pair.clone()), |_| None, self.ctx.bind(py))?
                        }
                        None => self.python_scores(py, &(sample.clone(), output.clone()), self.ctx.bind(py), |_| None)?,
                    };
                    (sample.getattr(intern!(py, "id"))?, scores)
                }
            };
            let passed = counter.add(&scores, &self.known_codes);
            let objs: PyResult<Vec<Py<PyAny>>> = scores.into_iter().map(|s| self.py_score(py, s, &mut reasons)).collect();
            let objs = PyList::new(py, objs?)?;
            let result = match &self.result_layout {
                Some(layout) => layout.make(
                    py,
                    vec![index, sample_id, objs.clone().into_any(), PyBool::new(py, passed).to_owned().into_any()],
                )?,
                None => self.case_result_cls.bind(py).call1((index, sample_id, &objs))?,
            };
            // A result holds an int, a str, a bool and its list of scores, which hold only
            // floats, bools, strs, None and (from Python checks) their errors: no cycle
            // runs through them unless the caller builds one into them later, which then
            // stays uncollected (never freed early: an untracked object's references keep
            // what they reach alive). Untracked, the collections that allocation triggers
            // do not walk the 40,000 containers a 20,000-case batch makes, as CPython
            // untracks tuples itself (bench/e2e_bench.py's engine round, 8 rounds in a
            // process of its own: median 387,000 checks/s tracked, 452,000 untracked).
            // SAFETY: both objects are ours, alive, and tracked since their allocation.
            unsafe {
                ffi::PyObject_GC_UnTrack(objs.as_ptr() as *mut std::ffi::c_void);
                ffi::PyObject_GC_UnTrack(result.as_ptr() as *mut std::ffi::c_void);
            }
            out.push(result);
        }
        Ok((PyList::new(py, out)?, counter.counts()))
    }
}

/// What the kernel reads of a serialized `Case` (with `score_request`, of a `ScoreRequest`):
/// the sample's id, the output's text, whether the output carries a JSON value, and the
/// sample's expected value as (True, value), or (False, None) when Python must read it;
/// None when the kernel leaves the whole message to Python. The reader's own answers, for
/// the test that holds it to the protobuf runtime (tests/engine/test_wire_reader.py).
#[pyfunction]
#[pyo3(signature = (data, score_request = false))]
#[allow(clippy::type_complexity)]
fn read_case<'py>(
    py: Python<'py>,
    data: &[u8],
    score_request: bool,
) -> PyResult<Option<(String, String, bool, (bool, Bound<'py, PyAny>))>> {
    let case = if score_request { WireCase::decode_score_request(data) } else { WireCase::decode(data) };
    let Some(case) = case else { return Ok(None) };
    let expected = match case.expected() {
        Some(j) => (true, json::to_py(py, &j)?),
        None => (false, py.None().into_bound(py)),
    };
    Ok(Some((case.id.to_owned(), case.text.to_owned(), case.has_value, expected)))
}

/// Whether a serialized `Case` certainly passes the server's check of a RunSuite case:
/// parsed, its output text within `short` bytes, its JSON-text fields JSON (`proto::
/// plain_case_ok`); false leaves the case to Python's check.
#[pyfunction]
fn plain_case_ok(data: &[u8], short: usize) -> bool {
    proto::plain_case_ok(data, short)
}

/// Each kind of twin and the fields the kernel reads of its description, with the Python
/// types it reads them as (for the test that holds them to `scorewire.core.twin`).
#[pyfunction]
fn twin_fields() -> HashMap<&'static str, Vec<(&'static str, String)>> {
    checks::twin_fields().into_iter().collect()
}

#[pymodule]
fn scorewire_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativePlan>()?;
    m.add_function(wrap_pyfunction!(twin_fields, m)?)?;
    m.add_function(wrap_pyfunction!(read_case, m)?)?;
    m.add_function(wrap_pyfunction!(plain_case_ok, m)?)?;
    Ok(())
}

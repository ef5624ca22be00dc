//! Building `Score` and `CaseResult` objects without running their `__init__`.
//!
//! Both are plain slotted classes (`__slots__`, no `__dict__`): an instance is its
//! type's allocation plus one object pointer per slot, at offsets the type lists in
//! `tp_members`. Writing those pointers is what `__init__`'s attribute assignments do,
//! without a Python frame per object: a batch of 20,000 five-check cases makes 120,000
//! of them, and `__init__` cost more than all the checks. The layout is read from the
//! type when a plan is built and used only when it is exactly the expected set of object
//! slots; otherwise the objects are made by calling the class.

use std::ffi::CStr;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyType;

/// A slotted class's instance layout: the offset of each named slot, in the given order.
pub struct Layout {
    cls: Py<PyType>,
    offsets: Vec<isize>,
}

impl Layout {
    /// The layout of `cls`, when its slots are exactly `names` (all object slots).
    pub fn of(cls: &Bound<'_, PyAny>, names: &[&str]) -> Option<Layout> {
        let ty = cls.downcast::<PyType>().ok()?;
        let raw = ty.as_type_ptr();
        // SAFETY: `raw` is a live type object (we hold a reference); tp_members of a heap
        // type is its own PyMemberDef array, ended by an entry whose name is NULL.
        unsafe {
            if (*raw).tp_flags & ffi::Py_TPFLAGS_HEAPTYPE == 0 || (*raw).tp_alloc.is_none() {
                return None;
            }
            let mut m = (*raw).tp_members;
            if m.is_null() {
                return None;
            }
            let mut found: Vec<(String, isize)> = Vec::new();
            while !(*m).name.is_null() {
                if (*m).type_code != ffi::Py_T_OBJECT_EX || (*m).flags != 0 {
                    return None;
                }
                found.push((CStr::from_ptr((*m).name).to_str().ok()?.to_owned(), (*m).offset));
                m = m.add(1);
            }
            if found.len() != names.len() {
                return None;
            }
            let offsets = names
                .iter()
                .map(|n| found.iter().find(|(f, _)| f == n).map(|(_, o)| *o))
                .collect::<Option<Vec<isize>>>()?;
            Some(Layout { cls: ty.clone().unbind(), offsets })
        }
    }

    /// A new instance whose slots hold `values`, in the order of the layout's names.
    pub fn make<'py>(&self, py: Python<'py>, values: Vec<Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        debug_assert_eq!(values.len(), self.offsets.len());
        let ty = self.cls.bind(py).as_type_ptr();
        // SAFETY: tp_alloc returns a new, zeroed (every slot NULL) and GC-tracked instance
        // or NULL with an exception set. Each slot then takes a strong reference, as the
        // slot descriptor's setter would; a NULL slot is skipped by traversal meanwhile.
        unsafe {
            let obj = ((*ty).tp_alloc.unwrap())(ty, 0);
            if obj.is_null() {
                return Err(PyErr::fetch(py));
            }
            for (off, v) in self.offsets.iter().zip(values) {
                let slot = (obj as *mut u8).offset(*off) as *mut *mut ffi::PyObject;
                *slot = v.into_ptr();
            }
            Ok(Bound::from_owned_ptr(py, obj))
        }
    }
}

/* A value Python's cyclic collector need not see, taken out of its sight: a first load keeps
 * its change map (three dicts and two lists a changed control) in the shifted-page cache, and
 * each of them was walked by the next collection after the shift (a 200 KB page with 2,000
 * controls: 0.7 ms a first load, against 0.2 out of sight) and again by every full collection
 * after it, which runs on the event loop: with 60 such pages cached, 390 ms against 36.
 *
 * CPython does this itself, for dicts and tuples that hold nothing but atoms, only when a
 * collection reaches them; a list it never untracks, since a list may take a container later.
 * A value untracked here must not: the caller's promise (a frozen document's state, which
 * nothing changes). Were one put in all the same, nothing would be freed wrongly (what an
 * untracked container refers to only looks referred to from outside), but a cycle through
 * it would not be collected. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* (Deeper than any state a shift makes: past it, a value stays in sight, as it was.) */
#define MOST_DEPTH 64

/* Whether `value` holds no object the collector must see: an atom (no container: a string, a
 * number, None), or an exact dict, list or tuple of such values, which it then untracks (each
 * container of atoms is untracked, whatever its siblings hold). Anything else, an object that
 * may take part in a cycle, is left in sight, with every container that holds it. */
static int untrack_value(PyObject *value, int depth, Py_ssize_t *untracked) {
    if (!PyObject_IS_GC(value)) return 1;
    if (depth >= MOST_DEPTH) return 0;
    int atoms_only = 1;
    if (PyDict_CheckExact(value)) {
        PyObject *key, *item;
        Py_ssize_t position = 0;
        while (PyDict_Next(value, &position, &key, &item))
            atoms_only &= untrack_value(key, depth + 1, untracked) &
                          untrack_value(item, depth + 1, untracked);
    } else if (PyList_CheckExact(value)) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(value); i++)
            atoms_only &= untrack_value(PyList_GET_ITEM(value, i), depth + 1, untracked);
    } else if (PyTuple_CheckExact(value)) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(value); i++)
            atoms_only &= untrack_value(PyTuple_GET_ITEM(value, i), depth + 1, untracked);
    } else {
        return 0;
    }
    if (atoms_only && PyObject_GC_IsTracked(value)) {
        PyObject_GC_UnTrack(value);
        (*untracked)++;
    }
    return atoms_only;
}

static PyObject *untrack(PyObject *module, PyObject *value) {
    (void)module;
    Py_ssize_t untracked = 0;
    untrack_value(value, 0, &untracked);
    return PyLong_FromSsize_t(untracked);
}

static PyMethodDef methods[] = {
    {"untrack", untrack, METH_O,
     "untrack(value) -> int: the containers of `value` that hold nothing but strings, numbers, "
     "None and such containers (exact dicts, lists, tuples), taken out of the cyclic "
     "collector's sight; how many were. `value` must never take a container again."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_values", "Values out of the cyclic collector's sight, in C.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__values(void) { return PyModule_Create(&module_definition); }

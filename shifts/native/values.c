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
#include <stdint.h>

/* (Deeper than any state a shift makes: past it, a value stays in sight, as it was.) */
#define MOST_DEPTH 64

/* The containers the walk has been in and left in sight (or is in: a cycle back to one), by
 * address: each is walked once however many hold it (without, a value whose containers are
 * shared was walked once per path to each, and one holding itself twice, forever). */
typedef struct {
    PyObject **slots; /* open addressing; NULL: free */
    size_t mask, used;
} Seen;

static size_t slot_of(const Seen *seen, PyObject *object) {
    return (size_t)(((uintptr_t)object >> 4) * 0x9E3779B97F4A7C15ULL) & seen->mask;
}

/* 1 if `object` was not in `seen` (it is now), 0 if it was, -1 with MemoryError. */
static int seen_first(Seen *seen, PyObject *object) {
    if (2 * (seen->used + 1) > seen->mask + 1) { /* (kept at most half full) */
        size_t size = 2 * (seen->mask + 1);
        PyObject **old = seen->slots, **slots = PyMem_Calloc(size, sizeof(PyObject *));
        if (slots == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        size_t old_size = seen->mask + 1;
        seen->slots = slots;
        seen->mask = size - 1;
        for (size_t i = 0; i < old_size; i++) {
            if (old[i] == NULL) continue;
            size_t at = slot_of(seen, old[i]);
            while (slots[at] != NULL) at = (at + 1) & seen->mask;
            slots[at] = old[i];
        }
        PyMem_Free(old);
    }
    size_t at = slot_of(seen, object);
    for (; seen->slots[at] != NULL; at = (at + 1) & seen->mask)
        if (seen->slots[at] == object) return 0;
    seen->slots[at] = object;
    seen->used++;
    return 1;
}

/* Whether `value` holds no object the collector must see: an atom (of a type it does not
 * track: a string, a number, None), or an exact dict, list or tuple of such values, which it
 * then untracks (each container of atoms, whatever its siblings hold). One untracked already
 * holds atoms only (CPython untracks a dict or a tuple only then, and no other list than this
 * function's). Anything else, an object that may take part in a cycle, is left in sight, with
 * every container that holds it, and so is a cycle. -1 with an exception. */
static int untrack_value(PyObject *value, int depth, Seen *seen, Py_ssize_t *untracked) {
    if (!PyObject_IS_GC(value)) return 1;
    if (!PyDict_CheckExact(value) && !PyList_CheckExact(value) && !PyTuple_CheckExact(value))
        return 0;
    if (!PyObject_GC_IsTracked(value)) return 1;
    if (depth >= MOST_DEPTH) return 0;
    int first = seen_first(seen, value);
    if (first <= 0) return first; /* (walked before and left in sight, or on the walk now) */
    int atoms_only = 1, one;
    if (PyDict_CheckExact(value)) {
        PyObject *key, *item;
        Py_ssize_t position = 0;
        while (PyDict_Next(value, &position, &key, &item)) {
            if ((one = untrack_value(key, depth + 1, seen, untracked)) < 0) return -1;
            atoms_only &= one;
            if ((one = untrack_value(item, depth + 1, seen, untracked)) < 0) return -1;
            atoms_only &= one;
        }
    } else {
        int list = PyList_CheckExact(value);
        Py_ssize_t size = list ? PyList_GET_SIZE(value) : PyTuple_GET_SIZE(value);
        for (Py_ssize_t i = 0; i < size; i++) {
            PyObject *item = list ? PyList_GET_ITEM(value, i) : PyTuple_GET_ITEM(value, i);
            if ((one = untrack_value(item, depth + 1, seen, untracked)) < 0) return -1;
            atoms_only &= one;
        }
    }
    if (atoms_only) {
        PyObject_GC_UnTrack(value);
        (*untracked)++;
    }
    return atoms_only;
}

static PyObject *untrack(PyObject *module, PyObject *value) {
    (void)module;
    Seen seen = {PyMem_Calloc(64, sizeof(PyObject *)), 63, 0};
    if (seen.slots == NULL) return PyErr_NoMemory();
    Py_ssize_t untracked = 0;
    int done = untrack_value(value, 0, &seen, &untracked);
    PyMem_Free(seen.slots);
    return done < 0 ? NULL : PyLong_FromSsize_t(untracked);
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

/* How often each of some names occurs in a page as a word, in C: the locator drift counts its
 * ids' mentions (`locators._Mentions`), and in Python that was a bytes object per word of the
 * page (a 250 KB page has 33,000) to find the few hundred that are ids.
 *
 * The Python is the definition: `Counter(filter(names.__contains__,
 * page.translate(_SPACE_OUT).split()))`, a word being a maximal run of `[A-Za-z0-9_-]`. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

static unsigned char word_bytes[256]; /* `volatile.WORD_BYTES`: 1 for `[A-Za-z0-9_-]` */

static uint64_t hash_of(const unsigned char *s, Py_ssize_t n) { /* FNV-1a */
    uint64_t h = 1469598103934665603ULL;
    for (Py_ssize_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ULL;
    return h;
}

typedef struct {
    PyObject *name; /* borrowed from the names' list, which the call holds */
    Py_ssize_t count;
} Slot;

static PyObject *count_words(PyObject *module, PyObject *args) {
    (void)module;
    Py_buffer page;
    PyObject *names_object;
    if (!PyArg_ParseTuple(args, "y*O:count_words", &page, &names_object)) return NULL;
    PyObject *result = NULL, *names = PySequence_List(names_object);
    Slot *slots = NULL;
    if (names == NULL) goto done;
    Py_ssize_t count = PyList_GET_SIZE(names), size = 16, longest = 0;
    /* The names' lengths with their first bytes: a word of another length, or that starts
     * otherwise, is no name, and is not hashed (a page's words of an id's length are many). */
    uint8_t starts[256][32] = {{0}}; /* (bits; a length past 255 counted in the last) */
    while (size < 2 * count) size *= 2; /* (open addressing, at most half full) */
    slots = PyMem_Calloc(size, sizeof(Slot));
    if (slots == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *name = PyList_GET_ITEM(names, k);
        if (!PyBytes_Check(name)) {
            PyErr_SetString(PyExc_TypeError, "names are bytes");
            goto done;
        }
        const unsigned char *text = (const unsigned char *)PyBytes_AS_STRING(name);
        Py_ssize_t length = PyBytes_GET_SIZE(name);
        if (length > 0) starts[length < 255 ? length : 255][text[0] >> 3] |= 1 << (text[0] & 7);
        if (length > longest) longest = length;
        size_t at = hash_of(text, length) & (size - 1);
        for (; slots[at].name != NULL; at = (at + 1) & (size - 1))
            if (PyBytes_GET_SIZE(slots[at].name) == length &&
                memcmp(PyBytes_AS_STRING(slots[at].name), text, length) == 0)
                break; /* (a name given twice) */
        slots[at].name = name;
    }
    const unsigned char *bytes = page.buf;
    for (Py_ssize_t i = 0; i < page.len;) {
        if (!word_bytes[bytes[i]]) {
            i++;
            continue;
        }
        Py_ssize_t start = i;
        while (i < page.len && word_bytes[bytes[i]]) i++;
        Py_ssize_t length = i - start;
        const uint8_t *admitted = starts[length < 255 ? length : 255];
        if (length > longest || !(admitted[bytes[start] >> 3] >> (bytes[start] & 7) & 1)) continue;
        size_t at = hash_of(bytes + start, i - start) & (size - 1);
        for (; slots[at].name != NULL; at = (at + 1) & (size - 1)) {
            if (PyBytes_GET_SIZE(slots[at].name) == i - start &&
                memcmp(PyBytes_AS_STRING(slots[at].name), bytes + start, i - start) == 0) {
                slots[at].count++;
                break;
            }
        }
    }
    result = PyDict_New();
    if (result == NULL) goto done;
    for (Py_ssize_t at = 0; at < size; at++) {
        if (slots[at].count == 0) continue;
        PyObject *counted = PyLong_FromSsize_t(slots[at].count);
        if (counted == NULL || PyDict_SetItem(result, slots[at].name, counted) < 0) {
            Py_XDECREF(counted);
            Py_CLEAR(result);
            goto done;
        }
        Py_DECREF(counted);
    }
done:
    PyMem_Free(slots);
    Py_XDECREF(names);
    PyBuffer_Release(&page);
    return result;
}

static PyMethodDef methods[] = {
    {"count_words", count_words, METH_VARARGS,
     "count_words(page: bytes, names) -> dict[bytes, int]: how often each name occurs in the "
     "page as a word (a maximal run of [A-Za-z0-9_-]); names that do not occur are left out."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_words", "Counting a page's words, in C.", -1, methods,
};

PyMODINIT_FUNC PyInit__words(void) {
    const char *word = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
    for (const char *c = word; *c; c++) word_bytes[(unsigned char)*c] = 1;
    return PyModule_Create(&module_definition);
}

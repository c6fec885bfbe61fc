/* What the compiled modules that hand lxml's objects to Python share: what each does when it is
 * imported (lxml's C API imported, for `elementFactory` and `setAttributeValue`, and lxml's
 * element type, which its functions check their arguments against), an attribute's value as a
 * Python string, and a tuple's strings as C texts. */

#ifndef SKILLSHIFT_NATIVE_MODULE_H
#define SKILLSHIFT_NATIVE_MODULE_H

#include <Python.h>
#include <dlfcn.h>

#include "lxml.etree_api.h"
#include "tree.h"

/* A function of the libxml2 lxml is built with (its module links it in), by name, or NULL where
 * it is not found (the caller then leaves the work to lxml). Asked when a module is imported. */
static inline void *libxml2_function(const char *name) {
    PyObject *etree = PyImport_ImportModule("lxml.etree");
    PyObject *file = etree == NULL ? NULL : PyObject_GetAttrString(etree, "__file__");
    const char *path = file != NULL && PyUnicode_Check(file) ? PyUnicode_AsUTF8(file) : NULL;
    void *loaded = path == NULL ? NULL : dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    void *function = loaded == NULL ? NULL : dlsym(loaded, name);
    if (loaded != NULL) dlclose(loaded); /* (lxml's module stays loaded: it was before) */
    Py_XDECREF(file);
    Py_XDECREF(etree);
    PyErr_Clear(); /* (not found: lxml does the work) */
    return function;
}

/* `lxml.etree._Element` (a new reference), or NULL with the error. */
static inline PyTypeObject *imported_element_type(void) {
    if (import_lxml__etree() < 0) return NULL;
    PyObject *etree = PyImport_ImportModule("lxml.etree");
    if (etree == NULL) return NULL;
    PyObject *type = PyObject_GetAttrString(etree, "_Element");
    Py_DECREF(etree);
    if (type != NULL && !PyType_Check(type)) {
        Py_DECREF(type);
        PyErr_SetString(PyExc_ImportError, "lxml.etree._Element is no type");
        return NULL;
    }
    return (PyTypeObject *)type;
}

/* A tuple of strings as the UTF-8 texts it holds (each the tuple's own: valid while it is),
 * NULL-terminated in `texts`; 0 where it is no tuple of at most `room` plain strings (the
 * caller leaves the work to the Python). */
static inline int texts_of(PyObject *tuple, const char **texts, Py_ssize_t room) {
    if (!PyTuple_CheckExact(tuple) || PyTuple_GET_SIZE(tuple) > room) return 0;
    Py_ssize_t n = PyTuple_GET_SIZE(tuple);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *text = PyTuple_GET_ITEM(tuple, i);
        if (!PyUnicode_CheckExact(text) || (texts[i] = PyUnicode_AsUTF8(text)) == NULL) {
            PyErr_Clear();
            return 0;
        }
    }
    texts[n] = NULL;
    return 1;
}

/* An attribute's value as `get` reads it, as a new string; None (a new reference) where the
 * Python is to read it; NULL with an error. */
static inline PyObject *attribute_value(xmlAttr *attribute) {
    const char *text = attribute_text(attribute);
    if (text == NULL) Py_RETURN_NONE;
    PyObject *value = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "strict");
    if (value == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return value;
}

/* Whether `node` is one of `protected` (a set of lxml elements): 1, 0, or -1 with the error.
 * A node with no proxy (`_private`) is in no set, which holds its elements' proxies alive: none
 * is made for it. Where one is, it is left in `*element` (a new reference; else NULL) for the
 * caller to use or release. */
static inline int is_protected(PyObject *protected, struct LxmlDocument *doc, xmlNode *node,
                               PyObject **element) {
    *element = NULL;
    if (node->_private == NULL) return 0;
    if ((*element = (PyObject *)elementFactory(doc, node)) == NULL) return -1;
    return PySet_Contains(protected, *element);
}

#endif

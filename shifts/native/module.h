/* What a compiled module that makes lxml proxies does when it is imported: lxml's C API
 * imported (`elementFactory`, `setAttributeValue`), and lxml's element type, which its functions
 * check their arguments against. */

#ifndef SKILLSHIFT_NATIVE_MODULE_H
#define SKILLSHIFT_NATIVE_MODULE_H

#include <Python.h>

#include "lxml.etree_api.h"

/* `lxml.etree._Element` (a new reference), or NULL with the error. */
static PyTypeObject *imported_element_type(void) {
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

#endif

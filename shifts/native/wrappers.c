/* A wrapper put in an element's place, in C: what `locators._place_wrapper_read` does with
 * lxml (`makeelement`, `addprevious`, `append`), without its walks of the moved subtree.
 *
 * lxml's `append` moves an element within its document as it would move one from another: it
 * walks the element's whole subtree to fix namespace pointers, proxies' documents and document
 * links (`moveNodeToDocument`, `_setTreeDoc`). A first load wraps hundreds to thousands of
 * elements, many of them containers, so the walks cost more than the rest of the move. Here
 * the element stays in its document and under the same ancestors (the wrapper declares no
 * namespace), so each of those is already what the walk would set, and the move is the links
 * of the element, its tail and the wrapper alone.
 *
 * The one thing the walk does that this does not: libxml2's table of an HTML document's ids
 * loses the moved subtree's ids (`_setTreeDoc` unregisters each `id` attribute). Nothing here
 * reads that table (no XPath `id()`), and libxml2 keeps it consistent either way: an attribute
 * still marked as an id is unregistered when it is freed.
 *
 * The Python function is the definition: this one returns None, having changed nothing, where
 * the move would be lxml's to make (a namespaced element, a tail of more than one text node, a
 * CDATA section or an XInclude marker beside it). The tests compare the trees both make on
 * every saved page and on generated ones. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <libxml/tree.h>

#include "module.h" /* lxml's element struct, and `makeElement` for the wrapper */
#include "tree.h"

static PyTypeObject *element_type; /* lxml.etree._Element */

/* Whether lxml's move would carry more than the element and at most one text node after it
 * (its tail): `_moveTail` takes every text and CDATA node there, past XInclude markers. */
static int tail_is_one_text_at_most(xmlNode *node) {
    xmlNode *next = node->next;
    if (next == NULL) return 1;
    if (next->type == XML_TEXT_NODE) next = next->next;
    return next == NULL || (next->type != XML_TEXT_NODE && next->type != XML_CDATA_SECTION_NODE &&
                            next->type != XML_XINCLUDE_START && next->type != XML_XINCLUDE_END);
}

static PyObject *place_wrapper(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 2 || !PyObject_TypeCheck(args[0], element_type) || !PyUnicode_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "place_wrapper() takes an lxml element and a tag");
        return NULL;
    }
    struct LxmlElement *element = (struct LxmlElement *)args[0];
    xmlNode *node = element->_c_node;
    if (node == NULL || node->type != XML_ELEMENT_NODE || node->ns != NULL ||
        node->nsDef != NULL || node->parent == NULL || node->parent->type != XML_ELEMENT_NODE ||
        !tail_is_one_text_at_most(node))
        Py_RETURN_NONE;
    /* (as `element.makeelement(tag)`: a new element of the element's document, in no place) */
    struct LxmlElement *made =
        makeElement(args[1], element->_doc, Py_None, Py_None, Py_None, Py_None, Py_None);
    if (made == NULL) return NULL;
    xmlNode *wrapper = made->_c_node, *parent = node->parent;
    if (wrapper == NULL || wrapper->doc != node->doc || wrapper->ns != NULL ||
        wrapper->parent != NULL || wrapper->children != NULL) {
        Py_DECREF(made); /* (the wrapper is lxml's to place: none of its own) */
        Py_RETURN_NONE;
    }
    xmlNode *last = node->next != NULL && node->next->type == XML_TEXT_NODE ? node->next : node;
    /* The wrapper where the element was (`addprevious`)... */
    wrapper->parent = parent;
    wrapper->prev = node->prev;
    if (node->prev != NULL)
        node->prev->next = wrapper;
    else
        parent->children = wrapper;
    /* ... followed by what followed the element and its tail ... */
    wrapper->next = last->next;
    if (last->next != NULL)
        last->next->prev = wrapper;
    else
        parent->last = wrapper;
    /* ... and the element and its tail its only children (`append`). */
    node->prev = NULL;
    last->next = NULL;
    node->parent = last->parent = wrapper;
    wrapper->children = node;
    wrapper->last = last;
    return (PyObject *)made;
}

static PyMethodDef methods[] = {
    {"place_wrapper", (PyCFunction)(void (*)(void))place_wrapper, METH_FASTCALL,
     "place_wrapper(element, tag) -> element | None: locators._place_wrapper_read(element, "
     "tag), the wrapper, or None (nothing changed) where only the Python places it."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_wrappers", "A wrapper put in an element's place, in C.", -1, methods,
};

PyMODINIT_FUNC PyInit__wrappers(void) {
    element_type = imported_element_type();
    return element_type == NULL ? NULL : PyModule_Create(&module_definition);
}

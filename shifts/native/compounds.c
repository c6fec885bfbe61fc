/* Whether an element may match a selector's compound, in C (`references.model._matches_read`):
 * asked of every element a structural rule's compound, parent compound, ancestor compound or
 * sibling compound could be about, thousands of times a page with an app's stylesheets, where
 * each Python answer read the element's tag, id, classes and attributes through lxml's proxies.
 * Answers True or False where it is sure to answer as the Python does, else None (the caller
 * then asks the Python): an element in a namespace, a name or a value the Python would lowercase
 * beyond ASCII, a value that is no single text (an entity's reference in it) or not UTF-8, a
 * DTD's attribute defaults, keys not as `css.compound_keys` makes them. The tests compare the
 * two on every element of the saved pages against their stylesheets' compounds and on generated
 * ones. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <libxml/tree.h>
#include <stdint.h>

#include "module.h"
#include "tree.h"

#define DECLINED 2 /* (a test's answer where the Python is to answer) */

static PyTypeObject *element_type; /* lxml.etree._Element */

static int is_ascii(const char *text, Py_ssize_t length) {
    for (Py_ssize_t i = 0; i < length; i++)
        if ((unsigned char)text[i] >= 0x80) return 0;
    return 1;
}

/* `text.lower() == wanted` of an ASCII `text`: as Python lowers it. */
static int lowered_equals(const char *text, size_t length, const char *wanted, size_t size) {
    if (length != size) return 0;
    for (size_t i = 0; i < length; i++)
        if (Py_TOLOWER((unsigned char)text[i]) != (unsigned char)wanted[i]) return 0;
    return 1;
}

/* A plain string's UTF-8, its length in `*size`; NULL (no error set) where it has none (a lone
 * surrogate) or is no plain string. */
static const char *utf8_of(PyObject *text, Py_ssize_t *size) {
    if (!PyUnicode_CheckExact(text)) return NULL;
    const char *bytes = PyUnicode_AsUTF8AndSize(text, size);
    if (bytes == NULL) PyErr_Clear();
    return bytes;
}

/* Whether `word` (`size` bytes) is one of the words `str.split()` makes of the UTF-8 `text`
 * (split at each run of what Python calls whitespace): 1, 0, or DECLINED where `text` is not
 * UTF-8. */
static int holds_word(const char *text, const char *word, Py_ssize_t size) {
    const unsigned char *at = (const unsigned char *)text, *start = NULL;
    for (;;) {
        const unsigned char *here = at;
        uint32_t point = *at ? code_point(&at) : ' ';
        if (point == (uint32_t)-1) return DECLINED;
        int space = Py_UNICODE_ISSPACE((Py_UCS4)point);
        if (space && start != NULL) {
            if (here - start == size && memcmp(start, word, (size_t)size) == 0) return 1;
            start = NULL;
        } else if (!space && start == NULL)
            start = here;
        if (*here == '\0') return 0;
    }
}

/* `_attribute_matches(actual, operator, wanted)` of an ASCII `actual`: 1, 0, or DECLINED. */
static int attribute_matches(const char *actual, const char *operator, const char *wanted,
                             Py_ssize_t size) {
    if (operator[0] == '\0') return 1;
    if (!is_ascii(wanted, size)) return DECLINED; /* (its lowercase may be another length) */
    size_t length = strlen(actual);
    char lowered_buffer[256], *lowered = lowered_buffer;
    if ((size_t)size >= sizeof(lowered_buffer) &&
        (lowered = PyMem_Malloc((size_t)size + 1)) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < size; i++) lowered[i] = (char)Py_TOLOWER((unsigned char)wanted[i]);
    lowered[size] = '\0';
    size_t want = (size_t)size;
    int answer = 1; /* (an operator no compound is read with: it may match) */
    if (strcmp(operator, "=") == 0)
        answer = lowered_equals(actual, length, lowered, want);
    else if (strcmp(operator, "~=") == 0) {
        char *folded = PyMem_Malloc(length + 1);
        if (folded == NULL) {
            answer = -1;
        } else {
            for (size_t i = 0; i < length; i++)
                folded[i] = (char)Py_TOLOWER((unsigned char)actual[i]);
            folded[length] = '\0';
            answer = holds_word(folded, lowered, size);
            PyMem_Free(folded);
        }
    } else if (strcmp(operator, "|=") == 0)
        answer = lowered_equals(actual, length, lowered, want) ||
                 (length > want && actual[want] == '-' &&
                  lowered_equals(actual, want, lowered, want));
    else if (strcmp(operator, "^=") == 0)
        answer = length >= want && lowered_equals(actual, want, lowered, want);
    else if (strcmp(operator, "$=") == 0)
        answer = length >= want && lowered_equals(actual + length - want, want, lowered, want);
    else if (strcmp(operator, "*=") == 0) {
        answer = 0; /* (an empty `wanted` is at 0) */
        for (size_t at = 0; !answer && at + want <= length; at++)
            answer = lowered_equals(actual + at, want, lowered, want);
    }
    if (lowered != lowered_buffer) PyMem_Free(lowered);
    if (answer < 0) PyErr_NoMemory();
    return answer;
}

/* Whether an attribute's name is one `element.get` looks up as it is: no namespace (`{ns}name`)
 * in it, and no character lxml refuses (a 0, a control character), which it raises for. */
static int plain_name(const char *name, Py_ssize_t size) {
    if (size == 0 || name[0] == '{') return 0;
    for (Py_ssize_t i = 0; i < size; i++)
        if ((unsigned char)name[i] < 0x20) return 0;
    return 1;
}

/* Each of `set`'s items asked `test(node, item)` in the set's order, until one answers other
 * than 1: that answer (1 where all do), or -1 with an error. */
static int all_of(PyObject *set, xmlNode *node, int (*test)(xmlNode *, PyObject *)) {
    PyObject *items = PyObject_GetIter(set), *item;
    if (items == NULL) return -1;
    int answer = 1;
    while (answer == 1 && (item = PyIter_Next(items)) != NULL) {
        answer = test(node, item);
        Py_DECREF(item);
    }
    Py_DECREF(items);
    return answer == 1 && PyErr_Occurred() ? -1 : answer;
}

/* A class of the compound, of the element's class attribute as `str.split()` splits it. */
static int holds_class(xmlNode *node, PyObject *class_name) {
    Py_ssize_t size;
    const char *wanted = utf8_of(class_name, &size);
    xmlAttr *attribute = attribute_named(node, "class");
    const char *value = attribute ? attribute_text(attribute) : "";
    if (wanted == NULL || value == NULL) return DECLINED;
    return holds_word(value, wanted, size);
}

/* An attribute test of the compound, (name, operator, value): `_attribute_matches` of the
 * element's value. */
static int passes_test(xmlNode *node, PyObject *test) {
    if (!PyTuple_CheckExact(test) || PyTuple_GET_SIZE(test) != 3) return DECLINED;
    Py_ssize_t name_size, operator_size, size;
    const char *name = utf8_of(PyTuple_GET_ITEM(test, 0), &name_size);
    const char *operator = utf8_of(PyTuple_GET_ITEM(test, 1), &operator_size);
    const char *wanted = utf8_of(PyTuple_GET_ITEM(test, 2), &size);
    if (name == NULL || operator == NULL || wanted == NULL || !plain_name(name, name_size) ||
        (Py_ssize_t)strlen(operator) != operator_size)
        return DECLINED;
    xmlAttr *attribute = attribute_named(node, name);
    if (attribute == NULL) return 0;
    const char *actual = attribute_text(attribute);
    if (actual == NULL) return DECLINED;
    if (operator[0] == '\0') return 1; /* (there: its value is not read) */
    if (!is_ascii(actual, (Py_ssize_t)strlen(actual))) return DECLINED;
    return attribute_matches(actual, operator, wanted, size);
}

/* `_matches_read(element, keys)` of an element's node: 1, 0, DECLINED, or -1 with an error. */
static int matches_node(xmlNode *node, PyObject *keys) {
    if (!PyTuple_CheckExact(keys) || PyTuple_GET_SIZE(keys) != 4) return DECLINED;
    PyObject *tag = PyTuple_GET_ITEM(keys, 0), *classes = PyTuple_GET_ITEM(keys, 1),
             *element_id = PyTuple_GET_ITEM(keys, 2), *attributes = PyTuple_GET_ITEM(keys, 3);
    if (!PyFrozenSet_CheckExact(classes) || !PyFrozenSet_CheckExact(attributes)) return DECLINED;
    if (node->type != XML_ELEMENT_NODE) return 0; /* (a comment's or a PI's tag is no string) */
    if (node->ns != NULL || declares_attributes(node->doc)) return DECLINED;
    Py_ssize_t size;
    const char *wanted;
    if (tag != Py_None) {
        const char *name = (const char *)node->name;
        size_t length = strlen(name);
        if ((wanted = utf8_of(tag, &size)) == NULL || !is_ascii(name, (Py_ssize_t)length))
            return DECLINED;
        if (!lowered_equals(name, length, wanted, (size_t)size)) return 0;
    }
    if (element_id != Py_None) {
        xmlAttr *attribute = attribute_named(node, "id");
        const char *value = attribute ? attribute_text(attribute) : NULL;
        if ((wanted = utf8_of(element_id, &size)) == NULL || (attribute && value == NULL))
            return DECLINED;
        if (value == NULL || strlen(value) != (size_t)size || memcmp(value, wanted, (size_t)size))
            return 0;
    }
    int answer = PySet_GET_SIZE(classes) ? all_of(classes, node, holds_class) : 1;
    return answer == 1 && PySet_GET_SIZE(attributes) ? all_of(attributes, node, passes_test)
                                                      : answer;
}

static PyObject *matches(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "matches(element, keys) takes 2 arguments");
        return NULL;
    }
    /* (the Python says what is wrong with anything else; an element of a subclass may read
     * its names its own way: a comment's or a PI's, lxml's own, is no element) */
    if (!PyObject_TypeCheck(args[0], element_type) ||
        ((struct LxmlElement *)args[0])->_c_node == NULL)
        Py_RETURN_NONE;
    xmlNode *node = ((struct LxmlElement *)args[0])->_c_node;
    if (node->type == XML_ELEMENT_NODE && !Py_IS_TYPE(args[0], element_type)) Py_RETURN_NONE;
    int answer = matches_node(node, args[1]);
    if (answer < 0) return NULL;
    if (answer == DECLINED) Py_RETURN_NONE;
    return PyBool_FromLong(answer);
}

static PyMethodDef methods[] = {
    {"matches", (PyCFunction)(void (*)(void))matches, METH_FASTCALL,
     "matches(element, keys) -> bool | None: model._matches_read(element, keys), or None where "
     "only the Python answers."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_compounds", "Whether an element may match a compound, in C.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__compounds(void) {
    element_type = imported_element_type();
    return element_type == NULL ? NULL : PyModule_Create(&module_definition);
}

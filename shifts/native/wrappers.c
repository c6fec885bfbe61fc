/* A wrapper put in an element's place, in C: what `locators._place_wrapper_read` does with
 * lxml (`makeelement`, `addprevious`, `append`), and the first pass of the wrap decisions
 * (`wrap_chosen`, below).
 *
 * lxml's `append` moves an element within its document as it would move one from another:
 * for each node of the moved subtree it fixes namespace pointers, proxies' documents and
 * document links (`moveNodeToDocument`, `_setTreeDoc`), through Python-level machinery. Here
 * the element stays in its document and under the same ancestors (the wrapper declares no
 * namespace), so of that walk only two things can change anything: a namespace declared in
 * the subtree that an ancestor declares already (lxml strips it), and libxml2's table of the
 * document's ids (lxml unregisters each `id` attribute of the subtree, `_setTreeDoc`). A
 * subtree that declares or uses a namespace is left to lxml; the ids are unregistered here as
 * lxml does it, with lxml's own libxml2. A first load wraps hundreds to thousands of elements,
 * many of them containers: the move costs a fifth of lxml's.
 *
 * The wrapper's node is made as `makeelement` makes it (`xmlNewDocNode` in the element's
 * document), and its Python object only where a caller needs one. Both libxml2 functions are
 * those of the libxml2 lxml is built with (its documents' allocator and dictionary), found
 * where lxml's module is loaded; where they are not, lxml places every wrapper.
 *
 * The Python function is the definition: this one returns None, having changed nothing, where
 * the move would be lxml's to make (a namespace in the subtree, a tail of more than one text
 * node, a CDATA section or an XInclude marker beside it, a tag lxml would check). The tests
 * compare the trees both make, and the ids libxml2 finds, on every saved page and on
 * generated ones. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <libxml/tree.h>

#include "module.h" /* lxml's element struct, and `elementFactory` for the wrapper */
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

/* Whether no element of `top`'s subtree (it included) declares or uses a namespace, nor any of
 * their attributes: what lxml's move would fix. */
static int without_namespaces(xmlNode *top) {
    for (xmlNode *node = top; node != NULL; node = next_in(node, top, 1)) {
        if (node->type != XML_ELEMENT_NODE) continue;
        if (node->ns != NULL || node->nsDef != NULL) return 0;
        for (xmlAttr *attribute = node->properties; attribute; attribute = attribute->next)
            if (attribute->ns != NULL) return 0;
    }
    return 1;
}

/* Whether no element of the document declares or uses a namespace (`without_namespaces`). */
static int document_without_namespaces(xmlDoc *doc) {
    for (xmlNode *top = doc->children; top != NULL; top = top->next)
        if (top->type == XML_ELEMENT_NODE && !without_namespaces(top)) return 0;
    return 1;
}

/* libxml2's functions, from the libxml2 lxml is built with (NULL where not found). */
typedef xmlNode *(*NewDocNode)(xmlDoc *, xmlNs *, const xmlChar *, const xmlChar *);
typedef int (*RemoveId)(xmlDoc *, xmlAttr *);
static NewDocNode new_doc_node;
static RemoveId remove_id;

static void find_libxml2(void) {
    new_doc_node = (NewDocNode)libxml2_function("xmlNewDocNode");
    remove_id = (RemoveId)libxml2_function("xmlRemoveID");
}

/* As lxml's `_setTreeDoc` does of a moved subtree: each attribute libxml2 took for an id is
 * unregistered from the document's table of ids. */
static void unregister_ids(xmlNode *top) {
    for (xmlNode *node = top; node != NULL; node = next_in(node, top, 1)) {
        if (node->type != XML_ELEMENT_NODE) continue;
        for (xmlAttr *attribute = node->properties; attribute; attribute = attribute->next)
            if (attribute->atype == XML_ATTRIBUTE_ID) remove_id(node->doc, attribute);
    }
}

/* Whether `makeelement` would take the tag as it is, with no namespace and nothing to check:
 * lower-case letters, then letters, digits and hyphens (HTML's names, custom elements'). */
static int plain_tag(const char *tag) {
    if (*tag < 'a' || *tag > 'z') return 0;
    for (; *tag; tag++)
        if (!((*tag >= 'a' && *tag <= 'z') || (*tag >= '0' && *tag <= '9') || *tag == '-'))
            return 0;
    return 1;
}

/* A new `tag` element in `element`'s place, holding it and its tail: 1 with `*wrapper_node` its
 * node (no Python object made); 0 where lxml must place it (nothing changed); -1 with the
 * error. `plain`: the whole document is known to hold no namespace (its subtree not looked
 * at again). */
static int placed(struct LxmlElement *element, PyObject *tag, int plain, xmlNode **wrapper_node) {
    xmlNode *node = element->_c_node;
    if (new_doc_node == NULL || remove_id == NULL || node == NULL ||
        node->type != XML_ELEMENT_NODE || node->parent == NULL ||
        node->parent->type != XML_ELEMENT_NODE || !tail_is_one_text_at_most(node))
        return 0;
    const char *name = PyUnicode_AsUTF8(tag);
    if (name == NULL) { /* (a lone surrogate: lxml refuses it in its own words) */
        PyErr_Clear();
        return 0;
    }
    if (!plain_tag(name) || (!plain && !without_namespaces(node))) return 0;
    xmlNode *parent = node->parent;
    /* (as `element.makeelement(tag)` makes its node: lxml's `_createElement`) */
    xmlNode *wrapper = new_doc_node(node->doc, NULL, (const xmlChar *)name, NULL);
    if (wrapper == NULL) {
        PyErr_NoMemory();
        return -1;
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
    unregister_ids(node);
    *wrapper_node = wrapper;
    return 1;
}

/* The Python object of a wrapper `placed` placed (a new reference), or NULL with the error. */
static PyObject *wrapper_element(struct LxmlElement *element, xmlNode *wrapper) {
    return (PyObject *)elementFactory(element->_doc, wrapper);
}

static PyObject *place_wrapper(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 2 || !PyObject_TypeCheck(args[0], element_type)) {
        PyErr_SetString(PyExc_TypeError, "place_wrapper() takes an lxml element and a tag");
        return NULL;
    }
    if (!PyUnicode_CheckExact(args[1])) Py_RETURN_NONE; /* (bytes, a QName: lxml reads them) */
    struct LxmlElement *element = (struct LxmlElement *)args[0];
    xmlNode *wrapper;
    int done = placed(element, args[1], 0, &wrapper);
    if (done <= 0) {
        if (done == 0) Py_RETURN_NONE;
        return NULL;
    }
    return wrapper_element(element, wrapper);
}

/* What `locators.wrap_refusal` asks of the page's references, as `wrap_chosen` gets them:
 * each NULL where the answer is "no" for every element. */
typedef struct {
    /* `_referenced_by_scripts`: `reaches_id(id)`, `scripts_use(class)`, each answer kept in
     * `id_answers` / `class_answers` (name: bool); `held` the Python question, asked of a node
     * whose names are no single text. */
    PyObject *reaches_id, *scripts_use, *id_answers, *class_answers, *held;
    /* A node's answer by its address, for the pass (parents are asked again for each child):
     * no element is freed while it runs (wrappers are added; only lxml's merges of text nodes
     * free any), so no address is another element's. */
    PyObject *node_answers;
    PyObject *widget;       /* `found_by_widget_attribute` */
    PyObject *structure_matters, *a_child_structured, *wrapped;
    PyObject *beside_after, *beside_before; /* `_beside_held(e, ask, True / False)` */
} Questions;

/* Whether `ask(argument)` is true: 1, 0, or -1 with the error. */
static int asked(PyObject *ask, PyObject *argument) {
    PyObject *answer = PyObject_CallOneArg(ask, argument);
    if (answer == NULL) return -1;
    int truth = PyObject_IsTrue(answer);
    Py_DECREF(answer);
    return truth;
}

/* `answers[name]`, asked of `ask(name)` and kept if it is not there: 1, 0, or -1. */
static int name_answer(PyObject *name, PyObject *answers, PyObject *ask) {
    PyObject *known = PyDict_GetItemWithError(answers, name); /* (borrowed) */
    if (known != NULL) return known == Py_True;
    if (PyErr_Occurred()) return -1;
    int truth = asked(ask, name);
    if (truth >= 0 && PyDict_SetItem(answers, name, truth ? Py_True : Py_False) < 0) return -1;
    return truth;
}

/* An attribute's value as a new string, NULL with no attribute (no error), or NULL with the
 * error; `*single` 0 where the value is no single text (the Python reads the node). */
static PyObject *value_of(xmlNode *node, const char *name, int *single) {
    xmlAttr *attribute = attribute_named(node, name);
    *single = 1;
    if (attribute == NULL) return NULL;
    const char *text = attribute_text(attribute);
    if (text == NULL) {
        *single = 0;
        return NULL;
    }
    return PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "strict");
}

/* `locators._referenced_by_scripts` of `node` (`of_document`: any element of its document):
 * whether a script may hold it by its id or a class. 1, 0, or -1 with the error. */
static int held_by_name(xmlNode *node, struct LxmlElement *of_document, Questions *ask) {
    PyObject *key = PyLong_FromVoidPtr(node);
    if (key == NULL) return -1;
    PyObject *known = PyDict_GetItemWithError(ask->node_answers, key); /* (borrowed) */
    if (known != NULL || PyErr_Occurred()) {
        Py_DECREF(key);
        return known == NULL ? -1 : known == Py_True;
    }
    int answer = 0, single_id, single_class;
    PyObject *id = value_of(node, "id", &single_id);
    if (id == NULL && PyErr_Occurred()) goto failed;
    PyObject *classes = value_of(node, "class", &single_class);
    if (classes == NULL && PyErr_Occurred()) {
        Py_XDECREF(id);
        goto failed;
    }
    if (!single_id || !single_class) { /* (an entity reference in a name: the Python reads it) */
        PyObject *element = (PyObject *)elementFactory(of_document->_doc, node);
        answer = element == NULL ? -1 : asked(ask->held, element);
        Py_XDECREF(element);
    } else {
        if (id != NULL && PyUnicode_GET_LENGTH(id) > 0)
            answer = name_answer(id, ask->id_answers, ask->reaches_id);
        if (answer == 0 && classes != NULL) {
            PyObject *names = PyUnicode_Split(classes, NULL, -1); /* (`str.split()`) */
            if (names == NULL) answer = -1;
            for (Py_ssize_t i = 0; names != NULL && answer == 0 && i < PyList_GET_SIZE(names); i++)
                answer = name_answer(PyList_GET_ITEM(names, i), ask->class_answers,
                                     ask->scripts_use);
            Py_XDECREF(names);
        }
    }
    Py_XDECREF(id);
    Py_XDECREF(classes);
    if (answer < 0 || PyDict_SetItem(ask->node_answers, key, answer ? Py_True : Py_False) < 0)
        goto failed;
    Py_DECREF(key);
    return answer;
failed:
    Py_DECREF(key);
    return -1;
}

/* `ask.used_by_scripts` of a node, then `found_by_widget_attribute` (`walked`: the latter too,
 * as `walked_by_scripts` asks): 1, 0, or -1 with the error. */
static int held(xmlNode *node, struct LxmlElement *of_document, Questions *ask, int walked) {
    if (ask->reaches_id != NULL) {
        int by_name = held_by_name(node, of_document, ask);
        if (by_name != 0) return by_name;
    }
    if (!walked || ask->widget == NULL) return 0;
    PyObject *element = (PyObject *)elementFactory(of_document->_doc, node);
    if (element == NULL) return -1;
    int found = asked(ask->widget, element);
    Py_DECREF(element);
    return found;
}

#define TAGS 64 /* (more tags than a caller's sets hold: the Python decides) */

/* `wrap_if_safe` of one element of the first pass: 1 wrapped, 0 refused, -1 with the error. */
static int wrapped_if_safe(struct LxmlElement *element, PyObject *tag, const char *const *fixed,
                           const char *const *foreign, Questions *ask, PyObject *place,
                           int plain) {
    xmlNode *node = element->_c_node, *parent = node->parent;
    if (parent == NULL || parent->type != XML_ELEMENT_NODE ||
        is_one_of((const char *)parent->name, fixed))
        return 0; /* (no parent element: `getparent()` is None) */
    /* `clear_above`: no ancestor is SVG or MathML (no `:has()` rule: the caller's condition) */
    for (xmlNode *above = parent; above != NULL && above->type == XML_ELEMENT_NODE;
         above = above->parent)
        if (is_one_of((const char *)above->name, foreign)) return 0;
    /* `wrap_refusal`, its questions in its order */
    if (attribute_named(node, "slot") != NULL || strchr((const char *)parent->name, '-') != NULL)
        return 0;
    PyObject *parent_element = (PyObject *)elementFactory(element->_doc, parent);
    if (parent_element == NULL) return -1;
    int refused = 0;
    if (ask->structure_matters != NULL) {
        refused = asked(ask->structure_matters, (PyObject *)element);
        if (refused == 0) refused = asked(ask->a_child_structured, parent_element);
    }
    if (refused == 0) refused = held(parent, element, ask, 1);
    if (refused == 0) refused = held(node, element, ask, 0);
    if (refused == 0 && ask->beside_after != NULL)
        refused = asked(ask->beside_after, (PyObject *)element);
    if (refused == 0 && ask->beside_before != NULL)
        refused = asked(ask->beside_before, (PyObject *)element);
    if (refused != 0) {
        Py_DECREF(parent_element);
        return refused < 0 ? -1 : 0;
    }
    xmlNode *wrapper_node;
    PyObject *wrapper = NULL;
    int done = placed(element, tag, plain, &wrapper_node);
    if (done == 0) { /* (a move lxml makes) */
        wrapper = PyObject_CallFunctionObjArgs(place, (PyObject *)element, tag, NULL);
        done = wrapper == NULL ? -1 : 1;
    } else if (done > 0 && ask->wrapped != NULL) {
        wrapper = wrapper_element(element, wrapper_node);
        done = wrapper == NULL ? -1 : 1;
    }
    if (done > 0 && ask->wrapped != NULL) {
        PyObject *result =
            PyObject_CallFunctionObjArgs(ask->wrapped, parent_element, wrapper, NULL);
        done = result == NULL ? -1 : 1;
        Py_XDECREF(result);
    }
    Py_XDECREF(wrapper);
    Py_DECREF(parent_element);
    return done;
}

/* A tuple of `n` items, or None: the items into `slots` (borrowed), NULL for None items; 0
 * where it is neither (the Python decides), 1 otherwise. */
static int unpacked(PyObject *arg, Py_ssize_t n, PyObject **slots) {
    if (arg == Py_None) {
        for (Py_ssize_t i = 0; i < n; i++) slots[i] = NULL;
        return 1;
    }
    if (!PyTuple_CheckExact(arg) || PyTuple_GET_SIZE(arg) != n) return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(arg, i);
        slots[i] = item == Py_None ? NULL : item;
    }
    return 1;
}

/* Whether the `n` slots are all set or all NULL. */
static int whole_or_absent(PyObject *const *slots, Py_ssize_t n) {
    for (Py_ssize_t i = 1; i < n; i++)
        if ((slots[i] == NULL) != (slots[0] == NULL)) return 0;
    return 1;
}

static PyObject *wrap_chosen(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 9) {
        PyErr_SetString(PyExc_TypeError,
                        "wrap_chosen() takes chosen, tag, fixed_parents, foreign, names, widget, "
                        "structure, steps, place");
        return NULL;
    }
    PyObject *chosen = args[0], *tag = args[1], *place = args[8];
    const char *fixed[TAGS + 1], *foreign[TAGS + 1];
    Questions ask = {0};
    PyObject *names[5], *structure[3], *steps[2];
    if (!PyList_CheckExact(chosen) || !PyUnicode_CheckExact(tag) ||
        !texts_of(args[2], fixed, TAGS) || !texts_of(args[3], foreign, TAGS) ||
        !unpacked(args[4], 5, names) || !unpacked(args[6], 3, structure) ||
        !unpacked(args[7], 2, steps))
        Py_RETURN_NONE;
    /* (each group whole or absent: its questions are asked of one another) */
    if (!whole_or_absent(names, 5) || !whole_or_absent(structure, 3) ||
        (names[0] != NULL && (!PyDict_CheckExact(names[2]) || !PyDict_CheckExact(names[3]))))
        Py_RETURN_NONE;
    /* Each an element with no namespace, nor any element above it (their tags are compared
     * as names), of a document that declares no attribute defaults (what `get` reads of an
     * element without its own): else the Python decides them all. */
    xmlDoc *document = NULL; /* (theirs, if they are all of one: a page's) */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(chosen); i++) {
        PyObject *item = PyList_GET_ITEM(chosen, i);
        if (!PyObject_TypeCheck(item, element_type)) Py_RETURN_NONE;
        xmlNode *node = ((struct LxmlElement *)item)->_c_node;
        if (node == NULL || node->type != XML_ELEMENT_NODE || declares_attributes(node->doc))
            Py_RETURN_NONE;
        document = i == 0 || node->doc == document ? node->doc : NULL;
        for (; node != NULL && node->type == XML_ELEMENT_NODE; node = node->parent)
            if (node->ns != NULL) Py_RETURN_NONE;
    }
    /* (a page with no namespace, as an HTML parse makes it: no moved subtree is looked at for
     * one, once for each wrapper) */
    int plain = document != NULL && document_without_namespaces(document);
    ask.reaches_id = names[0];
    ask.scripts_use = names[1];
    ask.id_answers = names[2];
    ask.class_answers = names[3];
    ask.held = names[4];
    ask.widget = args[5] == Py_None ? NULL : args[5];
    ask.structure_matters = structure[0];
    ask.a_child_structured = structure[1];
    ask.wrapped = structure[2];
    ask.beside_after = steps[0];
    ask.beside_before = steps[1];
    PyObject *wrapped = PyList_New(0);
    ask.node_answers = PyDict_New();
    if (wrapped == NULL || ask.node_answers == NULL) goto error;
    /* (`chosen` is the caller's list: held while the questions, Python, are asked) */
    Py_INCREF(chosen);
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(chosen); i++) {
        PyObject *element = PyList_GET_ITEM(chosen, i);
        Py_INCREF(element);
        int done =
            wrapped_if_safe((struct LxmlElement *)element, tag, fixed, foreign, &ask, place, plain);
        if (done > 0 && PyList_Append(wrapped, element) < 0) done = -1;
        Py_DECREF(element);
        if (done < 0) {
            Py_DECREF(chosen);
            goto error;
        }
    }
    Py_DECREF(chosen);
    Py_DECREF(ask.node_answers);
    return wrapped;
error:
    Py_XDECREF(wrapped);
    Py_XDECREF(ask.node_answers);
    return NULL;
}

static PyMethodDef methods[] = {
    {"place_wrapper", (PyCFunction)(void (*)(void))place_wrapper, METH_FASTCALL,
     "place_wrapper(element, tag) -> element | None: locators._place_wrapper_read(element, "
     "tag), the wrapper, or None (nothing changed) where only the Python places it."},
    {"wrap_chosen", (PyCFunction)(void (*)(void))wrap_chosen, METH_FASTCALL,
     "wrap_chosen(chosen, tag, fixed_parents, foreign, names, widget, structure, steps, place) "
     "-> list | None: the first pass of locators._wrap where no `:has()` rule looks inside "
     "(locators._wrap_chosen), the elements wrapped; None where only the Python decides."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_wrappers", "A wrapper put in an element's place, in C.", -1, methods,
};

PyMODINIT_FUNC PyInit__wrappers(void) {
    element_type = imported_element_type();
    if (element_type == NULL) return NULL;
    find_libxml2();
    PyObject *module = PyModule_Create(&module_definition);
    /* (what the tests check: the wrappers placed here, with lxml's libxml2, not by lxml) */
    if (module != NULL && PyModule_AddIntConstant(module, "places_wrappers",
                                                  new_doc_node != NULL && remove_id != NULL) < 0)
        Py_CLEAR(module);
    return module;
}

/* Walks of a page's whole tree that test every element, in C: a first load makes a few, each
 * of every element of the page (thousands), and in Python each element costs a proxy object and
 * a few calls before the test says no to most of them.
 *
 * The Python functions are the definitions (`shifts.interactive.interactive_elements`,
 * `shifts.selectors.with_any_attributes`, `shifts.selectors._with_a_class_of`,
 * `shifts.document._links_to_keep`, `shifts.references.inline._handlers_and_data_values`):
 * these return what they return, or None where they would have to guess (a namespaced
 * attribute's name, a value that is no single text), and the caller then asks the Python.
 * The tests compare the two on every saved page and on generated trees. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <libxml/tree.h>

#include "module.h" /* lxml's element struct, and `elementFactory` for a node's proxy */
#include "tree.h"

/* Whether an attribute's value, as `get` reads it, is `text`: 1 yes, 0 no, -1 it is no single
 * text (the caller falls back). */
static int value_is(xmlAttr *attribute, const char *text) {
    const char *value = attribute_text(attribute);
    return value == NULL ? -1 : strcmp(value, text) == 0;
}

/* `shifts.interactive`'s members: `_TAGS` and `ROLES`. */
static const char *const member_tags[] = {"button", "select", "textarea", "summary", NULL};
static const char *const member_roles[] = {"button", "link", "tab", "menuitem", "checkbox", NULL};

/* `interactive._is_member`: 1, 0, or -1 where a value is no single text. */
static int is_member(xmlNode *node) {
    if (node->ns == NULL) { /* (a namespaced element's tag is `{ns}name`: none of these) */
        const char *tag = (const char *)node->name;
        xmlAttr *attribute;
        if (strcmp(tag, "a") == 0) {
            if (attribute_named(node, "href") != NULL) return 1;
        } else if (strcmp(tag, "input") == 0) {
            attribute = attribute_named(node, "type");
            if (attribute == NULL) return 1;
            int hidden = value_is(attribute, "hidden");
            if (hidden < 0) return -1;
            if (!hidden) return 1;
        } else if (is_one_of(tag, member_tags)) {
            return 1;
        }
    }
    xmlAttr *role = attribute_named(node, "role");
    if (role == NULL) return 0;
    for (const char *const *name = member_roles; *name; name++) {
        int is = value_is(role, *name);
        if (is != 0) return is;
    }
    return 0;
}

static PyTypeObject *element_type; /* lxml.etree._Element */

/* The lxml element `arg` is, or NULL with a TypeError. */
static struct LxmlElement *element_of(PyObject *arg) {
    if (!PyObject_TypeCheck(arg, element_type)) {
        PyErr_SetString(PyExc_TypeError, "takes an lxml element");
        return NULL;
    }
    return (struct LxmlElement *)arg;
}

/* Whether the walk from `root` is the Python's to make: a proxy with no node (which the Python
 * refuses in its own words), or a document whose DTD declares attributes (their defaults are
 * what `get` reads of an element without its own: an XML document's; HTML declares none). */
static int left_to_python(struct LxmlElement *root) {
    return root->_c_node == NULL || declares_attributes(root->_c_node->doc);
}

/* Append the proxy of `node` (lxml's own, made if need be) to `found`. */
static int append_element(PyObject *found, struct LxmlDocument *doc, xmlNode *node) {
    PyObject *element = (PyObject *)elementFactory(doc, node);
    if (element == NULL) return -1;
    int appended = PyList_Append(found, element);
    Py_DECREF(element);
    return appended;
}

static PyObject *interactive_elements(PyObject *module, PyObject *arg) {
    (void)module;
    struct LxmlElement *root = element_of(arg);
    if (root == NULL) return NULL;
    if (left_to_python(root)) Py_RETURN_NONE;
    PyObject *found = PyList_New(0);
    if (found == NULL) return NULL;
    xmlNode *top = root->_c_node;
    for (xmlNode *node = top; node != NULL;) {
        int descend = 1;
        if (node->type == XML_ELEMENT_NODE) {
            int member = is_member(node);
            if (member < 0) {
                Py_DECREF(found);
                Py_RETURN_NONE;
            }
            if (member && append_element(found, root->_doc, node) < 0) {
                Py_DECREF(found);
                return NULL;
            }
            /* What a browser running scripts never renders (`interactive._NOT_RENDERED`). */
            descend = !(node->ns == NULL && (strcmp((const char *)node->name, "noscript") == 0 ||
                                             strcmp((const char *)node->name, "template") == 0));
        }
        node = next_in(node, top, descend);
    }
    return found;
}

/* A set of names as UTF-8 strings (borrowed from the bytes `keep` holds). */
typedef struct {
    const char **names;
    Py_ssize_t count;
} NameSet;

/* Read `names_object` (an iterable) into `set`, each distinct name once: 0, or -1 with the
 * error. A name that is no string, that UTF-8 cannot write (a lone surrogate) or that holds a
 * NUL is no attribute's name: it matches nothing, as in Python. `set->names` is the caller's
 * to free (also after an error). */
static int name_set_of(PyObject *names_object, PyObject *keep, NameSet *set) {
    PyObject *names = PySequence_List(names_object);
    if (names == NULL) return -1;
    Py_ssize_t count = PyList_GET_SIZE(names);
    set->names = PyMem_Calloc(count ? count : 1, sizeof(char *));
    if (set->names == NULL) {
        PyErr_NoMemory();
        goto error;
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *name = PyList_GET_ITEM(names, k);
        if (!PyUnicode_Check(name)) continue;
        PyObject *utf8 = PyUnicode_AsUTF8String(name);
        if (utf8 == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) goto error;
            PyErr_Clear();
            continue;
        }
        const char *text = PyBytes_AS_STRING(utf8);
        int known = (Py_ssize_t)strlen(text) != PyBytes_GET_SIZE(utf8);
        for (Py_ssize_t i = 0; i < set->count && !known; i++) known = !strcmp(set->names[i], text);
        if (known || PyList_Append(keep, utf8) < 0) {
            Py_DECREF(utf8);
            if (known) continue;
            goto error;
        }
        set->names[set->count++] = text; /* (`keep` holds it) */
        Py_DECREF(utf8);
    }
    Py_DECREF(names);
    return 0;
error:
    Py_DECREF(names);
    return -1;
}

/* Whether an element has an attribute in a namespace (its name is `{ns}name` to Python: rare,
 * and left to it). */
static int namespaced_attribute(xmlNode *node) {
    for (xmlAttr *attribute = node->properties; attribute; attribute = attribute->next)
        if (attribute->ns != NULL) return 1;
    return 0;
}

static PyObject *with_any_attributes(PyObject *module, PyObject *args) {
    (void)module;
    Py_ssize_t sets = PyTuple_GET_SIZE(args) - 1;
    if (sets < 0) {
        PyErr_SetString(PyExc_TypeError, "with_any_attributes(root, *name_sets)");
        return NULL;
    }
    struct LxmlElement *root = element_of(PyTuple_GET_ITEM(args, 0));
    if (root == NULL) return NULL;
    if (left_to_python(root)) Py_RETURN_NONE;
    PyObject *keep = PyList_New(0); /* the names' bytes, alive while the arrays point in them */
    PyObject *result = PyTuple_New(sets);
    NameSet *wanted = PyMem_Calloc(sets ? sets : 1, sizeof(NameSet));
    if (wanted == NULL) PyErr_NoMemory();
    if (keep == NULL || result == NULL || wanted == NULL) goto error;
    for (Py_ssize_t i = 0; i < sets; i++) {
        PyObject *list = PyList_New(0);
        if (list == NULL) goto error;
        PyTuple_SET_ITEM(result, i, list);
        if (name_set_of(PyTuple_GET_ITEM(args, i + 1), keep, &wanted[i]) < 0) goto error;
    }
    xmlNode *top = root->_c_node;
    for (xmlNode *node = next_in(top, top, 1); node != NULL; node = next_in(node, top, 1)) {
        if (node->type != XML_ELEMENT_NODE) continue;
        if (namespaced_attribute(node)) {
            Py_CLEAR(result);
            result = Py_NewRef(Py_None);
            goto done;
        }
        for (Py_ssize_t i = 0; i < sets; i++) {
            int any = 0;
            for (xmlAttr *attribute = node->properties; attribute && !any;
                 attribute = attribute->next)
                for (Py_ssize_t k = 0; k < wanted[i].count && !any; k++)
                    any = strcmp((const char *)attribute->name, wanted[i].names[k]) == 0;
            if (any && append_element(PyTuple_GET_ITEM(result, i), root->_doc, node) < 0)
                goto error;
        }
    }
    goto done;
error:
    Py_CLEAR(result);
done:
    if (wanted != NULL)
        for (Py_ssize_t i = 0; i < sets; i++) PyMem_Free(wanted[i].names);
    PyMem_Free(wanted);
    Py_XDECREF(keep);
    return result;
}

/* `locators._drop_attributes`: from each element below `root` not in `protected`, the first
 * attribute of each of `names` (as `del element.attrib[name]` drops it); the elements dropped
 * from, in document order, and how many attributes were dropped. None, with nothing dropped,
 * where only the Python drops them (an attribute in a namespace, a name lxml would read as
 * one). */
static PyObject *drop_attributes(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *root_object, *names_object, *protected;
    if (!PyArg_ParseTuple(args, "OOO:drop_attributes", &root_object, &names_object, &protected))
        return NULL;
    struct LxmlElement *root = element_of(root_object);
    if (root == NULL) return NULL;
    if (left_to_python(root) || !PyAnySet_Check(protected)) Py_RETURN_NONE;
    PyObject *keep = PyList_New(0), *dropped_from = NULL, *result = NULL;
    NameSet wanted = {NULL, 0};
    if (keep == NULL || name_set_of(names_object, keep, &wanted) < 0) goto done;
    for (Py_ssize_t k = 0; k < wanted.count; k++)
        if (strchr(wanted.names[k], '{') != NULL) { /* (`{ns}name`: lxml's to parse) */
            result = Py_NewRef(Py_None);
            goto done;
        }
    if ((dropped_from = PyList_New(0)) == NULL) goto done;
    /* (The elements to drop from, first: nothing is dropped unless the Python has none to.) */
    xmlNode *top = root->_c_node;
    for (xmlNode *node = next_in(top, top, 1); node != NULL; node = next_in(node, top, 1)) {
        if (node->type != XML_ELEMENT_NODE) continue;
        if (namespaced_attribute(node)) {
            result = Py_NewRef(Py_None);
            goto done;
        }
        int held = 0;
        for (Py_ssize_t k = 0; k < wanted.count && !held; k++)
            held = attribute_named(node, wanted.names[k]) != NULL;
        if (!held) continue;
        PyObject *element = (PyObject *)elementFactory(root->_doc, node);
        if (element == NULL) goto done;
        int skip = PySet_Contains(protected, element);
        if (skip == 0) skip = PyList_Append(dropped_from, element);
        Py_DECREF(element);
        if (skip < 0) goto done;
    }
    Py_ssize_t dropped = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(dropped_from); i++) {
        xmlNode *node = ((struct LxmlElement *)PyList_GET_ITEM(dropped_from, i))->_c_node;
        for (Py_ssize_t k = 0; k < wanted.count; k++) { /* (only those it holds, its own) */
            const char *name = wanted.names[k];
            if (attribute_named(node, name) != NULL)
                dropped += delAttributeFromNsName(node, NULL, (const xmlChar *)name) == 0;
        }
    }
    result = Py_BuildValue("(On)", dropped_from, dropped);
done:
    PyMem_Free(wanted.names);
    Py_XDECREF(dropped_from);
    Py_XDECREF(keep);
    return result;
}

/* Whether the class attribute `value`, split as `selectors._class_names` splits it (at each
 * space, tab, line feed and carriage return: empty names between two of them), holds one of
 * `wanted`'s names. */
static int holds_a_class(const char *value, const NameSet *wanted) {
    for (const char *start = value;;) {
        size_t length = strcspn(start, " \t\n\r");
        for (Py_ssize_t k = 0; k < wanted->count; k++)
            if (strlen(wanted->names[k]) == length && memcmp(start, wanted->names[k], length) == 0)
                return 1;
        if (start[length] == '\0') return 0;
        start += length + 1;
    }
}

/* `selectors._with_a_class_of`: `root` and the elements below it whose class attribute holds
 * one of `names`, in document order; None where a class attribute is no single text. */
static PyObject *with_a_class_of(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *root_object, *names;
    if (!PyArg_ParseTuple(args, "OO:with_a_class_of", &root_object, &names)) return NULL;
    struct LxmlElement *root = element_of(root_object);
    if (root == NULL) return NULL;
    if (left_to_python(root)) Py_RETURN_NONE;
    PyObject *keep = PySequence_List(names); /* (its strings' UTF-8 stays theirs while it lives) */
    if (keep == NULL) return NULL;
    PyObject *found = NULL;
    NameSet wanted = {PyMem_Calloc(PyList_GET_SIZE(keep) + 1, sizeof(char *)), 0};
    if (wanted.names == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(keep); k++) {
        /* A name that is no string, that UTF-8 cannot write (a lone surrogate) or that holds a
         * NUL is no class any attribute holds: it matches nothing, as in Python. */
        PyObject *name = PyList_GET_ITEM(keep, k);
        if (!PyUnicode_Check(name)) continue;
        Py_ssize_t size;
        const char *utf8 = PyUnicode_AsUTF8AndSize(name, &size); /* (cached by the string) */
        if (utf8 == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) goto done;
            PyErr_Clear();
            continue;
        }
        if ((Py_ssize_t)strlen(utf8) == size) wanted.names[wanted.count++] = utf8;
    }
    found = PyList_New(0);
    if (found == NULL) goto done;
    xmlNode *top = root->_c_node;
    for (xmlNode *node = top; node != NULL; node = next_in(node, top, 1)) {
        xmlAttr *attribute;
        if (node->type != XML_ELEMENT_NODE || (attribute = attribute_named(node, "class")) == NULL)
            continue;
        const char *value = attribute_text(attribute);
        if (value == NULL) {
            Py_SETREF(found, Py_NewRef(Py_None));
            goto done;
        }
        if (holds_a_class(value, &wanted) && append_element(found, root->_doc, node) < 0) {
            Py_CLEAR(found);
            goto done;
        }
    }
done:
    PyMem_Free(wanted.names);
    Py_DECREF(keep);
    return found;
}

/* Whether a link's value is all characters `document._URI_SAFE` holds (libxml2 writes it as it
 * is): ASCII letters, digits and `-_.!~*'()@/:=?;#%&,+<>`. */
static int is_uri_safe(const char *value) {
    static const char safe[] = "-_.!~*'()@/:=?;#%&,+<>";
    for (const unsigned char *c = (const unsigned char *)value; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              strchr(safe, *c) != NULL))
            return 0;
    return 1;
}

/* `document._links_to_keep`: (element, name, value) for each link libxml2 would escape, of
 * every element of the document `root` is in, in document order; None where a link's value is
 * no single text or `root` is in no document. */
static PyObject *links_to_keep(PyObject *module, PyObject *arg) {
    (void)module;
    static const char *const links[] = {"href", "src", "action", "name", NULL};
    struct LxmlElement *root = element_of(arg);
    if (root == NULL) return NULL;
    if (left_to_python(root) || root->_c_node->doc == NULL) Py_RETURN_NONE;
    PyObject *found = PyList_New(0);
    if (found == NULL) return NULL;
    /* (`//` from any node: the whole document, each of its top elements' trees) */
    for (xmlNode *top = root->_c_node->doc->children; top != NULL; top = top->next) {
        for (xmlNode *node = top; node != NULL; node = next_in(node, top, 1)) {
            if (node->type != XML_ELEMENT_NODE) continue;
            int anchor = node->ns == NULL && strcmp((const char *)node->name, "a") == 0;
            for (const char *const *name = links; *name; name++) {
                xmlAttr *attribute = attribute_named(node, *name);
                if (attribute == NULL || (strcmp(*name, "name") == 0 && !anchor)) continue;
                const char *text = attribute_text(attribute);
                if (text == NULL) {
                    Py_SETREF(found, Py_NewRef(Py_None));
                    return found;
                }
                if (is_uri_safe(text)) continue;
                PyObject *value = attribute_value(attribute);
                if (value == Py_None) { /* (no UTF-8: the Python reads it) */
                    Py_SETREF(found, value);
                    return found;
                }
                PyObject *element =
                    value == NULL ? NULL : (PyObject *)elementFactory(root->_doc, node);
                PyObject *link =
                    element == NULL ? NULL : Py_BuildValue("(OsO)", element, *name, value);
                Py_XDECREF(element);
                Py_XDECREF(value);
                if (link == NULL || PyList_Append(found, link) < 0) {
                    Py_XDECREF(link);
                    Py_DECREF(found);
                    return NULL;
                }
                Py_DECREF(link);
            }
        }
    }
    return found;
}

/* Append an attribute's value, as `get` reads it, to `found`: 1, 0 if it is no single text
 * (the caller falls back), -1 on an error. */
static int append_value(PyObject *found, xmlAttr *attribute) {
    PyObject *value = attribute_value(attribute);
    if (value == NULL) return -1;
    int appended = value == Py_None ? 0 : PyList_Append(found, value) < 0 ? -1 : 1;
    Py_DECREF(value);
    return appended;
}

static PyObject *handlers_and_data_values(PyObject *module, PyObject *arg) {
    (void)module;
    struct LxmlElement *root = element_of(arg);
    if (root == NULL) return NULL;
    if (left_to_python(root)) Py_RETURN_NONE;
    PyObject *found_both = Py_BuildValue("([][])"); /* (handlers, data values) */
    if (found_both == NULL) return NULL;
    PyObject *handlers = PyTuple_GET_ITEM(found_both, 0);
    PyObject *data_values = PyTuple_GET_ITEM(found_both, 1);
    xmlNode *top = root->_c_node;
    for (xmlNode *node = top; node != NULL; node = next_in(node, top, 1)) {
        if (node->type != XML_ELEMENT_NODE) continue;
        for (xmlAttr *attribute = node->properties; attribute; attribute = attribute->next) {
            /* (A namespaced attribute's name is `{ns}name` to Python: neither prefix.) */
            if (attribute->ns != NULL) continue;
            const char *name = (const char *)attribute->name;
            PyObject *found = strncmp(name, "on", 2) == 0      ? handlers
                              : strncmp(name, "data-", 5) == 0 ? data_values
                                                               : NULL;
            if (found == NULL) continue;
            /* (The value of the first of its name: `items` reads each by its name.) */
            int appended = append_value(found, attribute_named(node, name));
            if (appended <= 0) { /* (an error; or a value the Python reads) */
                Py_DECREF(found_both);
                return appended < 0 ? NULL : Py_NewRef(Py_None);
            }
        }
    }
    return found_both;
}

/* Whether a `<script>` is one `inline._INLINE_SCRIPTS` reads, by its `type`: none, one that
 * holds `javascript`, or `module`. 1, 0, or -1 where the Python is to say (no error set: its
 * value is no single text, or it has two of that name: XPath's `=` asks each, `contains` the
 * first). */
static int is_read_script(xmlNode *node) {
    xmlAttr *type = NULL;
    for (xmlAttr *attribute = node->properties; attribute; attribute = attribute->next) {
        if (attribute->ns != NULL || strcmp((const char *)attribute->name, "type") != 0)
            continue;
        if (type != NULL) return -1;
        type = attribute;
    }
    if (type == NULL) return 1;
    const char *value = attribute_text(type);
    if (value == NULL) return -1;
    return strstr(value, "javascript") != NULL || strcmp(value, "module") == 0;
}

/* Append the texts of `node`'s text children (and CDATA's), as XPath's `text()` finds them, to
 * `found`: 1, 0 where one is not UTF-8 (the Python reads them), -1 with the error. */
static int append_texts(PyObject *found, xmlNode *node) {
    for (xmlNode *child = node->children; child != NULL; child = child->next) {
        if (child->type != XML_TEXT_NODE && child->type != XML_CDATA_SECTION_NODE) continue;
        const char *text = child->content ? (const char *)child->content : "";
        PyObject *value = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "strict");
        if (value == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) return -1;
            PyErr_Clear();
            return 0;
        }
        int appended = PyList_Append(found, value);
        Py_DECREF(value);
        if (appended < 0) return -1;
    }
    return 1;
}

/* `inline._inline_texts`: the texts of the document's `<style>` elements and of the
 * `<script>` elements it reads, in document order, as its two XPath queries find them (`//`:
 * in all of `root`'s document). None where only the Python reads them: a node XPath walks in
 * its own way (an entity reference, an XInclude marker), a script's type of no single text. */
static PyObject *inline_texts(PyObject *module, PyObject *arg) {
    (void)module;
    struct LxmlElement *root = element_of(arg);
    if (root == NULL) return NULL;
    if (left_to_python(root) || root->_c_node->doc == NULL) Py_RETURN_NONE;
    PyObject *found = Py_BuildValue("([][])");
    if (found == NULL) return NULL;
    PyObject *styles = PyTuple_GET_ITEM(found, 0), *scripts = PyTuple_GET_ITEM(found, 1);
    for (xmlNode *top = root->_c_node->doc->children; top != NULL; top = top->next) {
        for (xmlNode *node = top; node != NULL; node = next_in(node, top, 1)) {
            int read = 1; /* (as `append_texts`: 0 where the Python reads them) */
            if (node->type == XML_ENTITY_REF_NODE || node->type == XML_XINCLUDE_START ||
                node->type == XML_XINCLUDE_END) {
                read = 0;
            } else if (node->type == XML_ELEMENT_NODE && node->ns == NULL) {
                const char *name = (const char *)node->name;
                int script = strcmp(name, "script") == 0 ? is_read_script(node) : 0;
                if (strcmp(name, "style") == 0) read = append_texts(styles, node);
                else if (script != 0) read = script > 0 ? append_texts(scripts, node) : 0;
            }
            if (read <= 0) {
                Py_DECREF(found);
                return read < 0 ? NULL : Py_NewRef(Py_None);
            }
        }
    }
    return found;
}

/* libxml2's `xmlSetNsProp`, what lxml's `set` calls once it has checked and encoded the value
 * (NULL where it is not found: lxml sets every value). */
typedef xmlAttr *(*SetNsProp)(xmlNode *, xmlNs *, const xmlChar *, const xmlChar *);
static SetNsProp set_ns_prop;

/* `locators._attribute_words_read`: the distinct words of the attribute `name`'s values (each
 * split as `str.split` splits it) of the elements below `root` not in `protected` (a set), in
 * document order, each value as `get` reads it. A new list; None where the Python reads them
 * (a value that is no single text or no UTF-8, a walk `left_to_python`'s, no exact set). (A page
 * repeats a value on sibling after sibling: each is compared with the last first, and each
 * other value split once.) */
static PyObject *attribute_words(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *root_object, *protected;
    const char *name;
    if (!PyArg_ParseTuple(args, "OsO:attribute_words", &root_object, &name, &protected))
        return NULL;
    struct LxmlElement *root = element_of(root_object);
    if (root == NULL) return NULL;
    /* (a set's own `in`: a subclass may answer its own way) */
    if (left_to_python(root) || !PyAnySet_CheckExact(protected)) Py_RETURN_NONE;
    PyObject *values = PySet_New(NULL), *words = PyDict_New(); /* (a word: None, in order) */
    PyObject *result = NULL;
    if (values == NULL || words == NULL) goto done;
    const char *last = NULL;
    xmlNode *top = root->_c_node;
    for (xmlNode *node = next_in(top, top, 1); node != NULL; node = next_in(node, top, 1)) {
        xmlAttr *attribute;
        if (node->type != XML_ELEMENT_NODE || (attribute = attribute_named(node, name)) == NULL)
            continue;
        const char *text = attribute_text(attribute);
        if (text != NULL && last != NULL && strcmp(last, text) == 0) continue;
        PyObject *element; /* (made only where it is one already: `is_protected`) */
        int skip = is_protected(protected, root->_doc, node, &element);
        Py_XDECREF(element);
        if (skip > 0) continue;
        if (skip < 0) goto done;
        PyObject *value = attribute_value(attribute);
        if (value == NULL || value == Py_None) { /* (an error; or the Python reads them) */
            result = value;
            goto done;
        }
        last = text;
        int seen = PySet_Contains(values, value);
        PyObject *split = seen == 0 && PySet_Add(values, value) == 0
                              ? PyUnicode_Split(value, NULL, -1)
                              : NULL;
        Py_DECREF(value);
        if (seen > 0) continue;
        if (split == NULL) goto done;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(split); i++) {
            if (PyDict_SetDefault(words, PyList_GET_ITEM(split, i), Py_None) == NULL) {
                Py_DECREF(split);
                goto done;
            }
        }
        Py_DECREF(split);
    }
    result = PySequence_List(words);
done:
    Py_XDECREF(values);
    Py_XDECREF(words);
    return result;
}

/* A value `set_drifted` decided, by its text: what it becomes (None: it keeps its own) and
 * whether lxml has set it once, and so checked it (then libxml2 sets it directly, with no proxy
 * made for the element). The last few are kept: a page repeats its class attributes. */
#define DECISIONS 16
typedef struct {
    char *text;          /* a copy: an attribute's own text is freed when it is set */
    PyObject *new_value; /* a string or None */
    int checked;
} Decision;

static void decisions_free(Decision *decisions) {
    for (int i = 0; i < DECISIONS; i++) {
        PyMem_Free(decisions[i].text);
        Py_XDECREF(decisions[i].new_value);
    }
}

/* The decision for an attribute's `text`: a kept one, else `decided[value]` or what `drifted`
 * makes of the value (kept in `decided`, and in place of the oldest of `decisions`). NULL with
 * the error. */
static Decision *decision_of(const char *text, Decision *decisions, int *oldest, PyObject *decided,
                             PyObject *drifted) {
    for (int i = 0; i < DECISIONS && decisions[i].text != NULL; i++)
        if (decisions[i].text[0] == text[0] && strcmp(decisions[i].text, text) == 0)
            return &decisions[i];
    PyObject *value = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "strict");
    if (value == NULL) return NULL;
    PyObject *new_value = PyDict_GetItemWithError(decided, value); /* (borrowed) */
    if (new_value != NULL) {
        Py_INCREF(new_value);
    } else if (!PyErr_Occurred()) {
        new_value = PyObject_CallOneArg(drifted, value);
        if (new_value != NULL && PyDict_SetItem(decided, value, new_value) < 0)
            Py_CLEAR(new_value);
    }
    Py_DECREF(value);
    if (new_value == NULL) return NULL;
    size_t size = strlen(text) + 1;
    char *copy = PyMem_Malloc(size);
    if (copy == NULL) {
        Py_DECREF(new_value);
        PyErr_NoMemory();
        return NULL;
    }
    memcpy(copy, text, size);
    Decision *decision = &decisions[*oldest];
    *oldest = (*oldest + 1) % DECISIONS;
    PyMem_Free(decision->text);
    Py_XDECREF(decision->new_value);
    *decision = (Decision){copy, new_value, 0};
    return decision;
}

/* `locators._set_drifted`: for each element below `root` with the attribute `name`, in document
 * order, not in `protected`, the new value `drifted(value)` gives (None: it keeps its own) is
 * set; those of the elements set that are in `among` (a set or a dict), in order, and how many
 * were set (as `drop_attributes` answers).
 * None, with nothing set, where a value is no single text. `drifted` is asked once per distinct
 * value, as the walk goes: it must not change the tree (the walk holds its nodes), and answers
 * a value alike each time (the drift memoizes). An element is made a Python object only where
 * it is one already (`protected` and `among` hold their elements' objects alive: a node with
 * none is in neither) or where lxml sets a value the first time. */
static PyObject *set_drifted(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *root_object, *protected, *drifted, *among;
    const char *name;
    if (!PyArg_ParseTuple(args, "OsOOO:set_drifted", &root_object, &name, &protected, &drifted,
                          &among))
        return NULL;
    struct LxmlElement *root = element_of(root_object);
    if (root == NULL) return NULL;
    if (left_to_python(root) || !PyAnySet_Check(protected) ||
        !(PyAnySet_CheckExact(among) || PyDict_CheckExact(among)))
        Py_RETURN_NONE;
    xmlNode *top = root->_c_node;
    /* (First, whether every value reads as one text: nothing is set unless all do.) */
    for (xmlNode *node = next_in(top, top, 1); node != NULL; node = next_in(node, top, 1)) {
        xmlAttr *attribute;
        if (node->type != XML_ELEMENT_NODE || (attribute = attribute_named(node, name)) == NULL)
            continue;
        if (attribute_text(attribute) == NULL) Py_RETURN_NONE;
    }
    /* (a name lxml reads as `{namespace}name` is set by lxml alone) */
    int direct = set_ns_prop != NULL && strchr(name, '{') == NULL;
    Decision decisions[DECISIONS] = {{0}};
    int oldest = 0;
    Py_ssize_t count = 0;
    PyObject *set = PyList_New(0), *key = PyUnicode_FromString(name);
    PyObject *decided = PyDict_New(); /* value: new value or None (past the kept decisions) */
    if (set == NULL || key == NULL || decided == NULL) goto error;
    for (xmlNode *node = next_in(top, top, 1); node != NULL; node = next_in(node, top, 1)) {
        xmlAttr *attribute;
        if (node->type != XML_ELEMENT_NODE || (attribute = attribute_named(node, name)) == NULL)
            continue;
        PyObject *element; /* (made only where it is one already, or lxml sets the value) */
        int skip = is_protected(protected, root->_doc, node, &element);
        if (skip != 0) {
            Py_XDECREF(element);
            if (skip < 0) goto error;
            continue;
        }
        /* (a single text: asked above) */
        Decision *decision = decision_of(attribute_text(attribute), decisions, &oldest, decided,
                                         drifted);
        int failed = decision == NULL;
        if (!failed && decision->new_value != Py_None) {
            count++;
            if (direct && decision->checked) {
                const char *text = PyUnicode_AsUTF8(decision->new_value); /* (the string's) */
                failed = text == NULL ||
                         set_ns_prop(node, NULL, (const xmlChar *)name, (const xmlChar *)text) ==
                             NULL;
            } else {
                if (element == NULL) element = (PyObject *)elementFactory(root->_doc, node);
                failed = element == NULL ||
                         setAttributeValue((struct LxmlElement *)element, key,
                                           decision->new_value) < 0;
                /* (what lxml encoded a plain string to is its UTF-8; bytes or a QName it
                 * reads its own way: set by lxml each time) */
                decision->checked = !failed && PyUnicode_CheckExact(decision->new_value);
            }
            int kept = 0;
            if (!failed && element != NULL)
                failed = (kept = PySequence_Contains(among, element)) < 0 ||
                         (kept && PyList_Append(set, element) < 0);
        }
        Py_XDECREF(element);
        if (failed) {
            if (!PyErr_Occurred()) PyErr_NoMemory(); /* (libxml2 set nothing: out of memory) */
            goto error;
        }
    }
    decisions_free(decisions);
    Py_DECREF(key);
    Py_DECREF(decided);
    PyObject *counted = PyLong_FromSsize_t(count);
    PyObject *result = counted == NULL ? NULL : PyTuple_Pack(2, set, counted);
    Py_XDECREF(counted);
    Py_DECREF(set);
    return result;
error:
    decisions_free(decisions);
    Py_XDECREF(set);
    Py_XDECREF(key);
    Py_XDECREF(decided);
    return NULL;
}

static PyMethodDef methods[] = {
    {"interactive_elements", interactive_elements, METH_O,
     "interactive_elements(root) -> list | None: interactive.interactive_elements(root), or "
     "None where only the Python reads it."},
    {"with_any_attributes", with_any_attributes, METH_VARARGS,
     "with_any_attributes(root, *name_sets) -> tuple[list, ...] | None: "
     "selectors.with_any_attributes, or None where only the Python reads it."},
    {"handlers_and_data_values", handlers_and_data_values, METH_O,
     "handlers_and_data_values(root) -> tuple[list[str], list[str]] | None: "
     "references.inline._handlers_and_data_values, or None where only the Python reads it."},
    {"with_a_class_of", with_a_class_of, METH_VARARGS,
     "with_a_class_of(root, names) -> list | None: selectors._with_a_class_of, or None where "
     "only the Python reads it."},
    {"links_to_keep", links_to_keep, METH_O,
     "links_to_keep(root) -> list | None: document._links_to_keep, or None where only the "
     "Python reads it."},
    {"inline_texts", inline_texts, METH_O,
     "inline_texts(root) -> tuple[list[str], list[str]] | None: references.inline._inline_texts, "
     "or None where only the Python reads them."},
    {"drop_attributes", drop_attributes, METH_VARARGS,
     "drop_attributes(root, names, protected) -> tuple[list, int] | None: "
     "locators._drop_attributes, or None (nothing dropped) where only the Python drops them."},
    {"attribute_words", attribute_words, METH_VARARGS,
     "attribute_words(root, name, protected) -> list[str] | None: "
     "locators._attribute_words_read, or "
     "None where only the Python reads them."},
    {"set_drifted", set_drifted, METH_VARARGS,
     "set_drifted(root, name, protected, drifted, among) -> tuple[list, int] | None: "
     "locators._set_drifted, or None (nothing set) where only the Python reads it."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_walks", "Walks of a page's tree, in C.", -1, methods,
};

PyMODINIT_FUNC PyInit__walks(void) {
    element_type = imported_element_type();
    if (element_type == NULL) return NULL;
    set_ns_prop = (SetNsProp)libxml2_function("xmlSetNsProp");
    PyObject *module = PyModule_Create(&module_definition);
    /* (what the tests check: values set here by libxml2 after lxml set them once) */
    if (module != NULL &&
        PyModule_AddIntConstant(module, "sets_directly", set_ns_prop != NULL) < 0)
        Py_CLEAR(module);
    return module;
}

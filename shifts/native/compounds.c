/* Whether an element may match a selector's compound (`references.model._matches_read`), and
 * whether a structural rule may match it where it is (`_StructureIndex.matching(element, kept,
 * first=True)`), in C: asked of every wrap candidate and each child of its parent, and through
 * them of parents, siblings and ancestors, thousands of times a page with an app's stylesheets,
 * where each Python answer was a dozen calls reading names through lxml's proxies. Each answers
 * True or False where it is sure to answer as the Python does, else None (the caller then asks
 * the Python): an element in a namespace, a tag its proxy keeps that is not the node's, a name
 * or a value the Python would lowercase beyond ASCII, an attribute's name lxml's `get` may
 * refuse, a value that is no single text (an entity's reference in it), DTD attribute defaults,
 * keys not as `css.compound_keys` makes them, a proxy of a subclass (the other nodes of its tree
 * are read as lxml's own classes read them: the service's parser makes no other, and a tree
 * of classes of its own is no page's). A text is read as UTF-8,
 * as libxml2 keeps every text, and checked as far as it is read. The tests compare the two on
 * every element of the saved pages, against their stylesheets' rules and rules of every kind,
 * as wrappers go in, and on generated trees and compounds. */

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

/* Whether the ASCII `a` and `b` are alike lowercased, over `length` bytes. */
static int folded_equals(const char *a, const char *b, size_t length) {
    for (size_t i = 0; i < length; i++)
        if (Py_TOLOWER((unsigned char)a[i]) != Py_TOLOWER((unsigned char)b[i])) return 0;
    return 1;
}

/* The next of the words `str.split()` makes of the UTF-8 text at `*at` (split at each run of
 * what Python calls whitespace), `*at` moved past it: 1 with the word at `*word`, `*size` bytes;
 * 0 at the text's end; DECLINED where it is not UTF-8 as far as it is read. */
static int next_word(const unsigned char **at, const unsigned char **word, Py_ssize_t *size) {
    const unsigned char *start = NULL;
    for (;;) {
        const unsigned char *here = *at;
        uint32_t point = **at ? code_point(at) : ' ';
        if (point == (uint32_t)-1) return DECLINED;
        int space = Py_UNICODE_ISSPACE((Py_UCS4)point);
        if (space && start != NULL) {
            *word = start, *size = here - start;
            return 1;
        }
        if (!space && start == NULL) start = here;
        if (*here == '\0') return 0;
    }
}

/* Whether `word` (`size` bytes) is one of the words `str.split()` makes of the UTF-8 `text`,
 * each lowercased with it where `fold` (both ASCII): 1, 0, or DECLINED. */
static int holds_word(const char *text, const char *word, Py_ssize_t size, int fold) {
    const unsigned char *at = (const unsigned char *)text, *found;
    Py_ssize_t length;
    int more;
    while ((more = next_word(&at, &found, &length)) == 1)
        if (length == size && (fold ? folded_equals((const char *)found, word, (size_t)size)
                                    : memcmp(found, word, (size_t)size) == 0))
            return 1;
    return more;
}

/* The operators `_attribute_matches` reads (any other: it may match). */
static const char *const OPERATORS[] = {"=", "~=", "|=", "^=", "$=", "*=", NULL};

/* `_attribute_matches(actual, operator, wanted)` of one of `OPERATORS`, both values ASCII (each
 * lowercased as Python lowercases them): 1 or 0. */
static int attribute_matches(const char *actual, const char *operator, const char *wanted,
                             Py_ssize_t size) {
    size_t length = strlen(actual), want = (size_t)size;
    switch (operator[0]) {
    case '=':
        return length == want && folded_equals(actual, wanted, want);
    case '~':
        return holds_word(actual, wanted, size, 1) == 1;
    case '|':
        return (length == want || (length > want && actual[want] == '-')) &&
               folded_equals(actual, wanted, want);
    case '^':
        return length >= want && folded_equals(actual, wanted, want);
    case '$':
        return length >= want && folded_equals(actual + length - want, wanted, want);
    default: /* ('*': an empty `wanted` is at 0) */
        for (size_t at = 0; at + want <= length; at++)
            if (folded_equals(actual + at, wanted, want)) return 1;
        return 0;
    }
}

/* Whether an attribute's name is one `element.get` looks up as it is: no namespace (`{ns}name`)
 * in it, and no character lxml may refuse (a 0, a control character, U+FFFF...: it raises for
 * them), nor any beyond ASCII. */
static int plain_name(const char *name, Py_ssize_t size) {
    if (size == 0 || name[0] == '{') return 0;
    for (Py_ssize_t i = 0; i < size; i++)
        if ((unsigned char)name[i] < 0x20 || (unsigned char)name[i] >= 0x80) return 0;
    return 1;
}

/* Whether the proxy lxml keeps of `node` (where one is: `_private`) reads its tag from the
 * node: it keeps the tag it read last, or one set on it (`element.tag = b"a"`), which the
 * Python then reads. */
static int tag_read_from_node(const xmlNode *node) {
    const struct LxmlElement *proxy = node->_private;
    if (proxy == NULL || proxy->_tag == NULL || proxy->_tag == Py_None) return 1;
    Py_ssize_t size;
    const char *tag = node->ns == NULL ? utf8_of(proxy->_tag, &size) : NULL;
    return tag != NULL && strlen((const char *)node->name) == (size_t)size &&
           memcmp(tag, node->name, (size_t)size) == 0;
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
    return holds_word(value, wanted, size, 0);
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
    if (operator[0] == '\0' || !is_one_of(operator, OPERATORS)) return 1; /* (not read) */
    /* (beyond ASCII, a lowercase may be another length, or ASCII: Python's to make) */
    if (!is_ascii(actual, (Py_ssize_t)strlen(actual)) || !is_ascii(wanted, size)) return DECLINED;
    return attribute_matches(actual, operator, wanted, size);
}

/* `_matches_read(element, keys)` of an element's node: 1, 0, DECLINED, or -1 with an error. */
static int matches_node(xmlNode *node, PyObject *keys) {
    if (!PyTuple_CheckExact(keys) || PyTuple_GET_SIZE(keys) != 4) return DECLINED;
    PyObject *tag = PyTuple_GET_ITEM(keys, 0), *classes = PyTuple_GET_ITEM(keys, 1),
             *element_id = PyTuple_GET_ITEM(keys, 2), *attributes = PyTuple_GET_ITEM(keys, 3);
    if (!PyFrozenSet_CheckExact(classes) || !PyFrozenSet_CheckExact(attributes)) return DECLINED;
    if (node->type != XML_ELEMENT_NODE) return 0; /* (a comment's or a PI's tag is no string) */
    if (node->ns != NULL || declares_attributes(node->doc) || !tag_read_from_node(node))
        return DECLINED;
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

/* lxml's own proxy types of the nodes asked about: of an element, of a comment, of a PI, of an
 * entity's reference (a subclass may read its tag or names its own way). */
static PyTypeObject *own_types[4];

/* The node of an lxml proxy of one of `own_types`, or NULL (no error set) where the Python is
 * to read it: another object, a subclass's proxy, a proxy with no node. */
static xmlNode *node_of(PyObject *proxy) {
    for (int i = 0; i < 4; i++)
        if (Py_IS_TYPE(proxy, own_types[i])) return ((struct LxmlElement *)proxy)->_c_node;
    return NULL;
}

static PyObject *matches(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "matches(element, keys) takes 2 arguments");
        return NULL;
    }
    xmlNode *node = node_of(args[0]);
    if (node == NULL) Py_RETURN_NONE;
    int answer = matches_node(node, args[1]);
    if (answer < 0) return NULL;
    if (answer == DECLINED) Py_RETURN_NONE;
    return PyBool_FromLong(answer);
}

/* ---- Whether a structural rule may match an element where it is (`model._StructureIndex.
 * matching(element, kept, first=True)`, asked of every wrap candidate and of each child of its
 * parent): its groups filed by their compound's most specific test, each group's rules by
 * their parent compound, the answers a page's questions share kept per page. ---- */

typedef struct {
    PyObject *ancestor, *sibling; /* (NULL: none) */
} Rule;

typedef struct {
    PyObject *parent; /* (NULL: none) */
    Rule *rules;
    Py_ssize_t count;
} ParentRules;

typedef struct {
    PyObject *compound;
    int names_nothing;
    ParentRules *by_parent;
    Py_ssize_t count;
} Group;

/* An index (`structure_index`): every object below is borrowed from `held`, which it keeps. */
typedef struct {
    PyObject *held; /* (groups, by_tag, by_attribute, by_class, by_id, rest) */
    Group *groups;
    Py_ssize_t count;
    PyObject *by_tag, *by_attribute, *by_class, *by_id, *rest;
} Index;

#define INDEX_NAME "skillshift.structure_index"
#define STATE_NAME "skillshift.structure_state"

static void index_free(Index *index) {
    for (Py_ssize_t g = 0; index->groups != NULL && g < index->count; g++) {
        for (Py_ssize_t p = 0; p < index->groups[g].count; p++)
            PyMem_Free(index->groups[g].by_parent[p].rules);
        PyMem_Free(index->groups[g].by_parent);
    }
    PyMem_Free(index->groups);
    Py_XDECREF(index->held);
    PyMem_Free(index);
}

static void index_destroyed(PyObject *capsule) {
    index_free(PyCapsule_GetPointer(capsule, INDEX_NAME));
}

static PyObject *none_as_null(PyObject *object) { return object == Py_None ? NULL : object; }

/* `structure_index(groups, by_tag, by_attribute, by_class, by_id, rest)`: groups, a tuple of
 * (compound, names_nothing, ((parent | None, ((ancestor | None, sibling | None), ...)), ...));
 * each by_ a dict of a name to a tuple of the groups' indexes filed under it; rest, those
 * filed under none. An opaque index, or a TypeError where the groups are not of that shape (the
 * filing's indexes are read when a question reads them: one that is no group's declines it). */
static PyObject *structure_index(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    const char *shape = "structure_index(groups, by_tag, by_attribute, by_class, by_id, rest): "
                        "a tuple of groups, four dicts, a tuple";
    if (nargs != 6 || !PyTuple_CheckExact(args[0]) || !PyTuple_CheckExact(args[5])) {
        PyErr_SetString(PyExc_TypeError, shape);
        return NULL;
    }
    for (int i = 1; i < 5; i++)
        if (!PyDict_CheckExact(args[i])) {
            PyErr_SetString(PyExc_TypeError, shape);
            return NULL;
        }
    Index *index = PyMem_Calloc(1, sizeof(Index));
    if (index == NULL) return PyErr_NoMemory();
    index->held = PyTuple_New(6);
    if (index->held == NULL) goto error;
    for (int i = 0; i < 6; i++) PyTuple_SET_ITEM(index->held, i, Py_NewRef(args[i]));
    index->by_tag = args[1], index->by_attribute = args[2], index->by_class = args[3];
    index->by_id = args[4], index->rest = args[5];
    Py_ssize_t count = PyTuple_GET_SIZE(args[0]);
    index->groups = PyMem_Calloc(count ? (size_t)count : 1, sizeof(Group));
    if (index->groups == NULL) {
        PyErr_NoMemory();
        goto error;
    }
    index->count = count;
    for (Py_ssize_t g = 0; g < count; g++) {
        PyObject *group = PyTuple_GET_ITEM(args[0], g);
        if (!PyTuple_CheckExact(group) || PyTuple_GET_SIZE(group) != 3 ||
            !PyTuple_CheckExact(PyTuple_GET_ITEM(group, 2)))
            goto wrong;
        PyObject *by_parent = PyTuple_GET_ITEM(group, 2);
        Group *into = &index->groups[g];
        into->compound = PyTuple_GET_ITEM(group, 0);
        into->names_nothing = PyObject_IsTrue(PyTuple_GET_ITEM(group, 1));
        if (into->names_nothing < 0) goto error;
        into->count = PyTuple_GET_SIZE(by_parent);
        into->by_parent = PyMem_Calloc(into->count ? (size_t)into->count : 1, sizeof(ParentRules));
        if (into->by_parent == NULL) {
            into->count = 0;
            PyErr_NoMemory();
            goto error;
        }
        for (Py_ssize_t p = 0; p < into->count; p++) {
            PyObject *entry = PyTuple_GET_ITEM(by_parent, p);
            if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 2 ||
                !PyTuple_CheckExact(PyTuple_GET_ITEM(entry, 1)))
                goto wrong;
            PyObject *rules = PyTuple_GET_ITEM(entry, 1);
            ParentRules *parent = &into->by_parent[p];
            parent->parent = none_as_null(PyTuple_GET_ITEM(entry, 0));
            parent->rules = PyMem_Calloc(PyTuple_GET_SIZE(rules) ? (size_t)PyTuple_GET_SIZE(rules)
                                                                 : 1,
                                         sizeof(Rule));
            if (parent->rules == NULL) {
                PyErr_NoMemory();
                goto error;
            }
            parent->count = PyTuple_GET_SIZE(rules);
            for (Py_ssize_t r = 0; r < parent->count; r++) {
                PyObject *rule = PyTuple_GET_ITEM(rules, r);
                if (!PyTuple_CheckExact(rule) || PyTuple_GET_SIZE(rule) != 2) goto wrong;
                parent->rules[r].ancestor = none_as_null(PyTuple_GET_ITEM(rule, 0));
                parent->rules[r].sibling = none_as_null(PyTuple_GET_ITEM(rule, 1));
            }
        }
    }
    PyObject *capsule = PyCapsule_New(index, INDEX_NAME, index_destroyed);
    if (capsule == NULL) goto error;
    return capsule;
wrong:
    PyErr_SetString(PyExc_TypeError, shape);
error:
    index_free(index);
    return NULL;
}

/* What a page's questions share, per index: whether a node or one above it matches an
 * ancestor compound (`KeptMatches.at_or_above`, by node and compound), and what a parent
 * answers for all its children per group (`KeptMatches.rules_under`: `ALWAYS`, `NEVER`, or
 * every child but one), until a wrapper takes a child's place in it (`children_changed`:
 * the parent's generation moves on, and what was kept of it under the last is stale). */
enum { NEVER = 0, ALWAYS = 1, BUT_ONE = DECLINED + 1 }; /* (none of them DECLINED) */

typedef struct {
    const xmlNode *node; /* (NULL: a free slot) */
    const void *key;     /* a compound (`at_or_above`) or a group (`rules_under`) */
    long generation;     /* (the parent's, for `rules_under`) */
    int answer;
    const xmlNode *but; /* (`BUT_ONE`: the child it is not) */
} Kept;

typedef struct {
    Kept *slots;
    size_t size, used;
} KeptTable;

/* A state's answers are about one document, the first asked about, which it keeps: its nodes,
 * by their addresses, are the keys (no element of a tree that changes only by wrappers added,
 * each told, is freed: `KeptMatches`), and another document's elements are declined. */
typedef struct {
    PyObject *index_capsule;
    Index *index;
    PyObject *document; /* (lxml's proxy of it; NULL until the first question) */
    KeptTable above, under, generations; /* (generations: a parent's in `generation`) */
} State;

static size_t kept_slot(const KeptTable *table, const xmlNode *node, const void *key) {
    size_t at = ((((uintptr_t)node >> 4) * 0x9E3779B97F4A7C15ULL) ^ ((uintptr_t)key >> 4)) *
                    0xC2B2AE3D27D4EB4FULL >> 7;
    for (at &= table->size - 1; table->slots[at].node != NULL &&
                                (table->slots[at].node != node || table->slots[at].key != key);)
        at = (at + 1) & (table->size - 1);
    return at;
}

static Kept *kept_find(const KeptTable *table, const xmlNode *node, const void *key) {
    if (table->size == 0) return NULL;
    Kept *kept = &table->slots[kept_slot(table, node, key)];
    return kept->node == node ? kept : NULL;
}

/* The slot of (node, key), made where there is none: NULL with no memory (the error set). */
static Kept *kept_put(KeptTable *table, const xmlNode *node, const void *key) {
    Kept *kept = kept_find(table, node, key);
    if (kept != NULL) return kept;
    if (2 * (table->used + 1) > table->size) {
        size_t size = table->size ? 2 * table->size : 256;
        Kept *slots = PyMem_Calloc(size, sizeof(Kept));
        if (slots == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        KeptTable grown = {slots, size, table->used};
        for (size_t i = 0; i < table->size; i++)
            if (table->slots[i].node != NULL)
                slots[kept_slot(&grown, table->slots[i].node, table->slots[i].key)] =
                    table->slots[i];
        PyMem_Free(table->slots);
        *table = grown;
    }
    kept = &table->slots[kept_slot(table, node, key)];
    *kept = (Kept){node, key, 0, 0, NULL};
    table->used++;
    return kept;
}

static void state_destroyed(PyObject *capsule) {
    State *state = PyCapsule_GetPointer(capsule, STATE_NAME);
    PyMem_Free(state->above.slots);
    PyMem_Free(state->under.slots);
    PyMem_Free(state->generations.slots);
    Py_XDECREF(state->document);
    Py_XDECREF(state->index_capsule);
    PyMem_Free(state);
}

/* `structure_state(index)`: a page's answers under an index, none yet. */
static PyObject *structure_state(PyObject *module, PyObject *index_capsule) {
    (void)module;
    Index *index = PyCapsule_GetPointer(index_capsule, INDEX_NAME);
    if (index == NULL) return NULL;
    State *state = PyMem_Calloc(1, sizeof(State));
    if (state == NULL) return PyErr_NoMemory();
    state->index_capsule = Py_NewRef(index_capsule);
    state->index = index;
    PyObject *capsule = PyCapsule_New(state, STATE_NAME, state_destroyed);
    if (capsule == NULL) {
        Py_DECREF(state->index_capsule);
        PyMem_Free(state);
    }
    return capsule;
}

/* lxml's `getparent`: the parent node where it is an element (or a comment, a PI, an entity's
 * reference, which are no parent), else NULL (the document above the root). */
static xmlNode *parent_of(const xmlNode *node) {
    xmlNode *parent = node->parent;
    return parent != NULL && parent->type == XML_ELEMENT_NODE ? parent : NULL;
}

/* `KeptMatches.at_or_above(node, keys)`: 1, 0, DECLINED, or -1 with an error. */
static int at_or_above(State *state, xmlNode *node, PyObject *keys) {
    int answer = 0;
    xmlNode *at = node;
    for (; at != NULL; at = parent_of(at)) {
        Kept *known = kept_find(&state->above, at, keys);
        if (known != NULL) {
            answer = known->answer;
            break;
        }
        int matched = matches_node(at, keys);
        if (matched < 0 || matched == DECLINED) return matched;
        if (matched) {
            answer = 1; /* (for it and every node below it on the way up) */
            break;
        }
    }
    for (xmlNode *each = node; each != at; each = parent_of(each)) {
        Kept *kept = kept_put(&state->above, each, keys);
        if (kept == NULL) return -1;
        kept->answer = answer;
    }
    return answer;
}

/* A parent's generation (0 until a wrapper goes into it). */
static long generation_of(State *state, const xmlNode *parent) {
    Kept *kept = kept_find(&state->generations, parent, NULL);
    return kept == NULL ? 0 : kept->generation;
}

/* What `parent` (NULL: none) answers for its children under `group` (`rules_under`): ALWAYS,
 * NEVER or BUT_ONE (every child but `*but`); DECLINED, or -1 with an error. */
static int rules_under(State *state, xmlNode *parent, Py_ssize_t g, const xmlNode **but) {
    const Group *group = &state->index->groups[g];
    long generation = parent == NULL ? 0 : generation_of(state, parent);
    Kept *kept = kept_find(&state->under, parent ? parent : (xmlNode *)state, group);
    if (kept != NULL && kept->generation == generation) {
        *but = kept->but;
        return kept->answer;
    }
    int answer = NEVER;
    const xmlNode *single = NULL;
    for (Py_ssize_t p = 0; answer != ALWAYS && p < group->count; p++) {
        const ParentRules *rules = &group->by_parent[p];
        if (rules->parent != NULL && parent != NULL) {
            int matched = matches_node(parent, rules->parent);
            if (matched < 0 || matched == DECLINED) return matched;
            if (!matched) continue;
        }
        for (Py_ssize_t r = 0; answer != ALWAYS && r < rules->count; r++) {
            const Rule *rule = &rules->rules[r];
            if (rule->ancestor != NULL) {
                if (parent == NULL) continue;
                int above = at_or_above(state, parent, rule->ancestor);
                if (above < 0 || above == DECLINED) return above;
                if (!above) continue;
            }
            if (rule->sibling == NULL || parent == NULL) {
                answer = ALWAYS;
                break;
            }
            /* (the children that may match its sibling compound: two are as many as all) */
            int found = 0;
            const xmlNode *first = NULL;
            for (xmlNode *child = parent->children; child != NULL && found < 2;
                 child = child->next) {
                if (child->type != XML_ELEMENT_NODE) continue;
                int matched = matches_node(child, rule->sibling);
                if (matched < 0 || matched == DECLINED) return matched;
                if (matched && found++ == 0) first = child;
            }
            if (found == 2 || (found == 1 && single != NULL && single != first))
                answer = ALWAYS;
            else if (found == 1) {
                single = first;
                answer = BUT_ONE;
            }
        }
    }
    kept = kept_put(&state->under, parent ? parent : (xmlNode *)state, group);
    if (kept == NULL) return -1;
    kept->generation = generation;
    kept->answer = answer;
    kept->but = *but = answer == BUT_ONE ? single : NULL;
    return answer;
}

/* The groups filed under `name` in `filed` (a dict of tuples of indexes) asked of `node`
 * until one has a rule that may match it: 1 (one has), 0, DECLINED, or -1 with an error.
 * `name`: a new reference, released here. */
static int any_filed(State *state, xmlNode *node, xmlNode *parent, PyObject *filed,
                     PyObject *name);

static int any_group(State *state, xmlNode *node, xmlNode *parent, PyObject *indexes) {
    if (indexes == NULL) return 0;
    if (!PyTuple_CheckExact(indexes)) return DECLINED;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(indexes); i++) {
        Py_ssize_t g = PyLong_AsSsize_t(PyTuple_GET_ITEM(indexes, i));
        if (g == -1 && PyErr_Occurred()) return -1;
        if (g < 0 || g >= state->index->count) return DECLINED;
        const Group *group = &state->index->groups[g];
        if (!group->names_nothing) {
            int matched = matches_node(node, group->compound);
            if (matched < 0 || matched == DECLINED) return matched;
            if (!matched) continue;
        }
        const xmlNode *but = NULL;
        int answer = rules_under(state, parent, g, &but);
        if (answer < 0 || answer == DECLINED) return answer;
        if (answer == ALWAYS || (answer == BUT_ONE && but != node)) return 1;
    }
    return 0;
}

static int any_filed(State *state, xmlNode *node, xmlNode *parent, PyObject *filed,
                     PyObject *name) {
    if (name == NULL) return -1;
    PyObject *indexes = PyDict_GetItemWithError(filed, name); /* (borrowed: the index's) */
    Py_DECREF(name);
    if (indexes == NULL && PyErr_Occurred()) return -1;
    return any_group(state, node, parent, indexes);
}

/* An ASCII name lowercased, as a new string; NULL with an error; None (a new reference) where
 * it is not ASCII (its lowercase is Python's to make). */
static PyObject *lowered(const char *name) {
    size_t length = strlen(name);
    if (!is_ascii(name, (Py_ssize_t)length)) Py_RETURN_NONE;
    PyObject *text = PyUnicode_New((Py_ssize_t)length, 127);
    if (text == NULL) return NULL;
    Py_UCS1 *into = PyUnicode_1BYTE_DATA(text);
    for (size_t i = 0; i < length; i++) into[i] = (Py_UCS1)Py_TOLOWER((unsigned char)name[i]);
    return text;
}

/* `_StructureIndex.matching(element, kept, first=True)` of a node: 1, 0, DECLINED, -1. */
static int structure_matters_node(State *state, xmlNode *node) {
    if (node->type != XML_ELEMENT_NODE) return 0; /* (a comment's or a PI's tag: no string) */
    if (node->ns != NULL || declares_attributes(node->doc) || !tag_read_from_node(node))
        return DECLINED;
    const Index *index = state->index;
    xmlNode *parent = parent_of(node);
    int answer = 0;
    if (PyDict_GET_SIZE(index->by_tag)) {
        PyObject *tag = lowered((const char *)node->name);
        if (tag == Py_None) {
            Py_DECREF(tag);
            return DECLINED;
        }
        if ((answer = any_filed(state, node, parent, index->by_tag, tag)) != 0) return answer;
    }
    if (PyDict_GET_SIZE(index->by_attribute)) {
        for (xmlAttr *attribute = node->properties; attribute; attribute = attribute->next) {
            if (attribute->ns != NULL) return DECLINED; /* (`{ns}name` to Python) */
            PyObject *name = lowered((const char *)attribute->name);
            if (name == Py_None) {
                Py_DECREF(name);
                return DECLINED;
            }
            answer = any_filed(state, node, parent, index->by_attribute, name);
            if (answer != 0) return answer;
        }
    }
    if (PyDict_GET_SIZE(index->by_class)) {
        xmlAttr *attribute = attribute_named(node, "class");
        const char *value = attribute ? attribute_text(attribute) : "";
        if (value == NULL) return DECLINED;
        const unsigned char *at = (const unsigned char *)value, *word;
        Py_ssize_t size;
        int more;
        while ((more = next_word(&at, &word, &size)) == 1) {
            PyObject *name = PyUnicode_DecodeUTF8((const char *)word, size, NULL);
            if ((answer = any_filed(state, node, parent, index->by_class, name)) != 0)
                return answer;
        }
        if (more == DECLINED) return DECLINED;
    }
    if (PyDict_GET_SIZE(index->by_id)) {
        xmlAttr *attribute = attribute_named(node, "id");
        const char *value = attribute ? attribute_text(attribute) : "";
        if (value == NULL) return DECLINED;
        if (*value) {
            PyObject *name = PyUnicode_DecodeUTF8(value, (Py_ssize_t)strlen(value), NULL);
            if (name == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
                PyErr_Clear();
                return DECLINED;
            }
            if ((answer = any_filed(state, node, parent, index->by_id, name)) != 0)
                return answer;
        }
    }
    return any_group(state, node, parent, index->rest);
}

/* Whether `proxy` is of the state's document (which it becomes, if none is yet). */
static int of_document(State *state, PyObject *proxy) {
    PyObject *document = (PyObject *)((struct LxmlElement *)proxy)->_doc;
    if (state->document == NULL) state->document = Py_NewRef(document);
    return document == state->document;
}

/* `structure_matters(state, element)`: True, False, or None where the Python answers. */
static PyObject *structure_matters(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "structure_matters(state, element) takes 2 arguments");
        return NULL;
    }
    State *state = PyCapsule_GetPointer(args[0], STATE_NAME);
    if (state == NULL) return NULL;
    xmlNode *node = node_of(args[1]);
    if (node == NULL || !of_document(state, args[1])) Py_RETURN_NONE;
    int answer = structure_matters_node(state, node);
    if (answer < 0) return NULL;
    if (answer == DECLINED) Py_RETURN_NONE;
    return PyBool_FromLong(answer);
}

/* `structure_children_changed(state, parent)`: a wrapper took a child's place in `parent`:
 * what was kept of it goes stale. */
static PyObject *structure_children_changed(PyObject *module, PyObject *const *args,
                                            Py_ssize_t nargs) {
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "children_changed(state, parent) takes 2 arguments");
        return NULL;
    }
    State *state = PyCapsule_GetPointer(args[0], STATE_NAME);
    if (state == NULL) return NULL;
    if (!PyObject_TypeCheck(args[1], element_type) ||
        ((struct LxmlElement *)args[1])->_c_node == NULL) {
        PyErr_SetString(PyExc_TypeError, "children_changed takes an lxml element");
        return NULL;
    }
    if (state->document != (PyObject *)((struct LxmlElement *)args[1])->_doc)
        Py_RETURN_NONE; /* (nothing kept of another document's) */
    Kept *kept = kept_put(&state->generations, ((struct LxmlElement *)args[1])->_c_node, NULL);
    if (kept == NULL) return NULL;
    kept->generation++;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"matches", (PyCFunction)(void (*)(void))matches, METH_FASTCALL,
     "matches(element, keys) -> bool | None: model._matches_read(element, keys), or None where "
     "only the Python answers."},
    {"structure_index", (PyCFunction)(void (*)(void))structure_index, METH_FASTCALL,
     "structure_index(groups, by_tag, by_attribute, by_class, by_id, rest) -> index: "
     "model._StructureIndex's rules, for structure_matters."},
    {"structure_state", structure_state, METH_O,
     "structure_state(index) -> state: a page's answers under the index, none yet."},
    {"structure_matters", (PyCFunction)(void (*)(void))structure_matters, METH_FASTCALL,
     "structure_matters(state, element) -> bool | None: "
     "bool(model._StructureIndex.matching(element, kept, first=True)), or None where only the "
     "Python answers."},
    {"structure_children_changed", (PyCFunction)(void (*)(void))structure_children_changed,
     METH_FASTCALL,
     "structure_children_changed(state, parent): a wrapper took a child's place in parent "
     "(KeptMatches.children_changed)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_compounds", "Whether an element may match a compound, in C.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__compounds(void) {
    element_type = imported_element_type();
    if (element_type == NULL) return NULL;
    PyObject *etree = PyImport_ImportModule("lxml.etree");
    if (etree == NULL) return NULL;
    const char *names[] = {"_Element", "_Comment", "_ProcessingInstruction", "_Entity"};
    for (int i = 0; i < 4; i++) {
        PyObject *type = PyObject_GetAttrString(etree, names[i]);
        if (type != NULL && !PyType_Check(type)) {
            PyErr_Format(PyExc_ImportError, "lxml.etree.%s is no type", names[i]);
            Py_CLEAR(type);
        }
        if (type == NULL) {
            Py_DECREF(etree);
            return NULL;
        }
        own_types[i] = (PyTypeObject *)type; /* (kept: the module is never unloaded) */
    }
    Py_DECREF(etree);
    return PyModule_Create(&module_definition);
}

/* What a recorded skill could locate an element by, in C: its id, classes and test hooks
 * (`locators._names`: read again after the drifts) and its path (`tree.getpath`, libxml2's
 * `xmlGetNodePath` as lxml calls it), read of every interactive element of a page before the
 * drifts and again after them (the change map's `before` and `after`). Each function takes a
 * list of elements and returns a list of the same length, or None where it would have to guess
 * for one of them: a namespaced element on the way up, a name too long for libxml2's path
 * buffer to hold whole, an attribute's value that is no single text, a DTD's attribute
 * defaults, text that is not UTF-8, a node that is neither element nor document above it. The
 * caller then asks the Python for them all. A path is read up to the element's document (the
 * caller's tree is that document's: lxml's `getpath` refuses an element of another). The tests
 * compare the two on every element of the saved pages and on generated trees. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <libxml/tree.h>
#include <stdint.h>
#include <stdio.h>

#include "module.h" /* lxml's element struct */
#include "tree.h"

/* libxml2 writes a path step's name into a buffer that keeps 120 bytes spare: a longer name
 * is cut there (an element's own name is not measured first). Such names are left to it. */
#define LONGEST_NAME 100

static PyTypeObject *element_type; /* lxml.etree._Element */

/* Whether `a` counts as `b`'s same-named sibling in a path step (both with no namespace). */
static int same_step(const xmlNode *a, const xmlNode *b) {
    return a->type == XML_ELEMENT_NODE && a->ns == NULL && strcmp((const char *)a->name,
                                                                  (const char *)b->name) == 0;
}

/* A node's same-named siblings before it, counted: the next of its name asked under the same
 * parent counts on from it, not from the first (a long list's items, read in order, were a
 * walk of the list each). */
typedef struct {
    const xmlNode *parent, *node; /* (NULL: none counted) */
    const xmlChar *name;          /* `node`'s: a key (the same text at another address misses) */
    long before;
} SiblingCount;

#define COUNTED 16

/* The paths of the nodes one call has read, by node: a page's interactive elements share their
 * ancestors, whose steps (each a walk of its siblings) are then written once, not once per
 * element below them. Valid for one call: nothing changes the tree meanwhile. */
typedef struct {
    const xmlNode *node; /* NULL: a free slot */
    size_t at, length;   /* its path in `text` */
} KnownPath;

typedef struct {
    KnownPath *slots;
    size_t size, used; /* (open addressing by the node's address, at most half full) */
    char *text;
    size_t text_length, text_capacity;
    /* The last step counted under a few parents, by parent and name (`step_index`). */
    SiblingCount counted[COUNTED];
} PathMemo;

static void memo_free(PathMemo *memo) {
    PyMem_Free(memo->slots);
    PyMem_Free(memo->text);
}

static size_t slot_of(const PathMemo *memo, const xmlNode *node) {
    size_t at = ((uintptr_t)node >> 4) * 0x9E3779B97F4A7C15ULL >> 7; /* (addresses: aligned) */
    for (at &= memo->size - 1; memo->slots[at].node != NULL && memo->slots[at].node != node;)
        at = (at + 1) & (memo->size - 1);
    return at;
}

static const KnownPath *memo_find(const PathMemo *memo, const xmlNode *node) {
    if (memo->size == 0) return NULL;
    const KnownPath *known = &memo->slots[slot_of(memo, node)];
    return known->node == node ? known : NULL;
}

/* Keep `node`'s path (`path`, `length` bytes): 0, or -1 with no memory (the error set). */
static int memo_add(PathMemo *memo, const xmlNode *node, const char *path, size_t length) {
    if (2 * (memo->used + 1) > memo->size) {
        size_t size = memo->size ? 2 * memo->size : 64;
        KnownPath *slots = PyMem_Calloc(size, sizeof(KnownPath));
        if (slots == NULL) goto no_memory;
        PathMemo grown = *memo;
        grown.slots = slots, grown.size = size;
        for (size_t i = 0; i < memo->size; i++)
            if (memo->slots[i].node != NULL)
                slots[slot_of(&grown, memo->slots[i].node)] = memo->slots[i];
        PyMem_Free(memo->slots);
        memo->slots = slots, memo->size = size;
    }
    if (memo->text_length + length > memo->text_capacity) {
        size_t capacity = memo->text_capacity ? memo->text_capacity : 4096;
        while (capacity < memo->text_length + length) capacity *= 2;
        char *text = PyMem_Realloc(memo->text, capacity);
        if (text == NULL) goto no_memory;
        memo->text = text, memo->text_capacity = capacity;
    }
    memcpy(memo->text + memo->text_length, path, length);
    memo->slots[slot_of(memo, node)] = (KnownPath){node, memo->text_length, length};
    memo->text_length += length;
    memo->used++;
    return 0;
no_memory:
    PyErr_NoMemory();
    return -1;
}

/* A path step's index as `xmlGetNodePath` gives it: 0 (no index: no sibling of its name),
 * else its place among the siblings of its name, from 1. Counted on from the last sibling of
 * its name counted in `memo`, where that one is before it. */
static long step_index(const xmlNode *node, PathMemo *memo) {
    SiblingCount *last =
        &memo->counted[(((uintptr_t)node->parent ^ (uintptr_t)node->name) >> 4) % COUNTED];
    long before = -1;
    if (last->node != NULL && last->parent == node->parent && last->name == node->name) {
        long between = 0;
        const xmlNode *sibling = last->node->next;
        for (; sibling != NULL && sibling != node; sibling = sibling->next)
            between += same_step(sibling, node);
        if (sibling == node) before = last->before + 1 + between; /* (`last` is of its name) */
    }
    if (before < 0) {
        before = 0;
        for (const xmlNode *sibling = node->prev; sibling != NULL; sibling = sibling->prev)
            before += same_step(sibling, node);
    }
    *last = (SiblingCount){node->parent, node, node->name, before};
    if (before > 0) return before + 1;
    for (const xmlNode *sibling = node->next; sibling != NULL; sibling = sibling->next)
        if (same_step(sibling, node)) return 1;
    return 0;
}

/* `tree.getpath(element)`: `/html/body/div[2]/a`, from the node up to its document (or to the
 * top of a subtree taken out of it). The path of each node above it is kept in `memo`, and
 * read from there where an element read before shares it. A new string; None (a new
 * reference) where the Python is to read it; NULL with an error. */
static PyObject *path_of(xmlNode *node, PathMemo *memo) {
    size_t length = 0;
    int steps = 0;
    const KnownPath *known = NULL; /* (the nearest node above whose path is kept) */
    for (const xmlNode *at = node; at != NULL; at = at->parent) {
        if (at->type == XML_DOCUMENT_NODE || at->type == XML_HTML_DOCUMENT_NODE) break;
        if ((known = memo_find(memo, at)) != NULL) {
            length += known->length;
            break;
        }
        size_t name_length;
        if (at->type != XML_ELEMENT_NODE || at->ns != NULL ||
            (name_length = strlen((const char *)at->name)) >= LONGEST_NAME)
            Py_RETURN_NONE;
        length += 1 + name_length + 22; /* (`/`, the name, `[index]` at its widest) */
        steps++;
    }
    char *path = PyMem_Malloc(length + 1);
    const xmlNode **chain = PyMem_Malloc(sizeof(*chain) * (steps ? steps : 1));
    PyObject *text = NULL;
    if (path == NULL || chain == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int step = 0;
    for (const xmlNode *at = node; step < steps; at = at->parent) chain[step++] = at;
    size_t written = 0;
    if (known != NULL) {
        memcpy(path, memo->text + known->at, known->length);
        written = known->length;
    }
    while (step-- > 0) { /* (from the top down) */
        long index = step_index(chain[step], memo);
        int wrote = index ? snprintf(path + written, length + 1 - written, "/%s[%ld]",
                                     (const char *)chain[step]->name, index)
                          : snprintf(path + written, length + 1 - written, "/%s",
                                     (const char *)chain[step]->name);
        written += (size_t)wrote;
        if (step > 0 && memo_add(memo, chain[step], path, written) < 0) goto done;
    }
    path[written] = '\0';
    text = PyUnicode_DecodeUTF8(path, (Py_ssize_t)written, "strict");
    if (text == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
        PyErr_Clear(); /* (what lxml makes of such a name, it says) */
        text = Py_NewRef(Py_None);
    }
done:
    PyMem_Free(path);
    PyMem_Free(chain);
    return text;
}

/* `element.get(name)`: a new reference to its value or to None if it has none; `*declined`
 * set where the Python is to read it; NULL with an error. */
static PyObject *get(xmlNode *node, const char *name, int *declined) {
    xmlAttr *attribute = attribute_named(node, name);
    if (attribute == NULL) Py_RETURN_NONE;
    PyObject *value = attribute_value(attribute);
    if (value == Py_None) *declined = 1;
    return value;
}

/* `_names(element)`'s hooks: ((name, value), ...) of its attributes whose names start with
 * `data-`, in their order, each the value of the first of its name (as `attrib[name]` reads
 * it). A new tuple; None (a new reference) with `*declined` set where the Python is to read
 * them; NULL with an error. */
static PyObject *hooks_of(xmlNode *node, int *declined) {
    PyObject *hooks = PyList_New(0);
    if (hooks == NULL) return NULL;
    for (xmlAttr *attribute = node->properties; attribute; attribute = attribute->next) {
        const char *raw = (const char *)attribute->name;
        /* (A namespaced attribute's name is `{ns}name` to Python: no hook's.) */
        if (attribute->ns != NULL || strncmp(raw, "data-", 5) != 0) continue;
        PyObject *value = attribute_value(attribute_named(node, raw));
        if (value == NULL) goto error;
        if (value == Py_None) {
            Py_DECREF(value);
            goto decline;
        }
        PyObject *name = PyUnicode_DecodeUTF8(raw, (Py_ssize_t)strlen(raw), "strict");
        if (name == NULL) {
            Py_DECREF(value);
            if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) goto error;
            PyErr_Clear();
            goto decline;
        }
        PyObject *pair = PyTuple_Pack(2, name, value);
        Py_DECREF(name);
        Py_DECREF(value);
        if (pair == NULL) goto error;
        int appended = PyList_Append(hooks, pair);
        Py_DECREF(pair);
        if (appended < 0) goto error;
    }
    PyObject *tuple = PyList_AsTuple(hooks);
    Py_DECREF(hooks);
    return tuple;
decline:
    *declined = 1;
    Py_DECREF(hooks);
    Py_RETURN_NONE;
error:
    Py_DECREF(hooks);
    return NULL;
}

/* `_locators(tree, element)` of one element, (id, classes, hooks, path), or with `with_path`
 * 0 its `_names(element)`, (id, classes, hooks): a new tuple; None (a new reference) where the
 * Python is to read it; NULL with an error. */
static PyObject *read_locators(xmlNode *node, int with_path, PathMemo *memo) {
    int declined = 0;
    PyObject *found[4] = {NULL, NULL, NULL, NULL};
    found[0] = get(node, "id", &declined);
    found[1] = found[0] ? get(node, "class", &declined) : NULL;
    found[2] = found[1] ? hooks_of(node, &declined) : NULL;
    found[3] = found[2] && with_path ? path_of(node, memo) : NULL;
    PyObject *result = NULL;
    if (found[2] != NULL && (found[3] != NULL || !with_path)) {
        if (declined || found[3] == Py_None)
            result = Py_NewRef(Py_None);
        else
            result = with_path ? PyTuple_Pack(4, found[0], found[1], found[2], found[3])
                               : PyTuple_Pack(3, found[0], found[1], found[2]);
    }
    for (int i = 0; i < 4; i++) Py_XDECREF(found[i]);
    return result;
}

static PyObject *locators_of(xmlNode *node, PathMemo *memo) {
    return read_locators(node, 1, memo);
}

static PyObject *names_of(xmlNode *node, PathMemo *memo) { return read_locators(node, 0, memo); }

/* Each element's answer (`one` of its node) in a list, or None where one is the Python's to
 * read (a proxy with no node, a node that is no element, a DTD's attribute defaults). */
static PyObject *each(PyObject *elements, PyObject *(*one)(xmlNode *, PathMemo *)) {
    if (!PyList_Check(elements)) {
        PyErr_SetString(PyExc_TypeError, "takes a list of lxml elements");
        return NULL;
    }
    /* (A copy: it holds every element, whatever the caller's list becomes meanwhile.) */
    PyObject *held = PyList_GetSlice(elements, 0, PyList_GET_SIZE(elements));
    if (held == NULL) return NULL;
    Py_ssize_t count = PyList_GET_SIZE(held);
    PyObject *answers = NULL;
    PathMemo memo = {0}; /* (the paths above the elements read: `path_of`) */
    int declined = 0; /* (every element's type checked all the same: a wrong one is an error) */
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *element = PyList_GET_ITEM(held, i);
        if (!PyObject_TypeCheck(element, element_type)) {
            PyErr_SetString(PyExc_TypeError, "takes a list of lxml elements");
            goto done;
        }
        xmlNode *node = ((struct LxmlElement *)element)->_c_node;
        declined |= node == NULL || node->type != XML_ELEMENT_NODE ||
                    declares_attributes(node->doc);
    }
    if (declined) {
        answers = Py_NewRef(Py_None);
        goto done;
    }
    answers = PyList_New(count);
    for (Py_ssize_t i = 0; answers != NULL && i < count; i++) {
        xmlNode *node = ((struct LxmlElement *)PyList_GET_ITEM(held, i))->_c_node;
        PyObject *answer = one(node, &memo);
        if (answer == NULL || answer == Py_None) { /* (an error; or the Python reads them all) */
            Py_SETREF(answers, answer);
            break;
        }
        PyList_SET_ITEM(answers, i, answer);
    }
done:
    memo_free(&memo);
    Py_DECREF(held);
    return answers;
}

static PyObject *locators(PyObject *module, PyObject *arg) {
    (void)module;
    return each(arg, locators_of);
}

static PyObject *names(PyObject *module, PyObject *arg) {
    (void)module;
    return each(arg, names_of);
}

static PyObject *paths(PyObject *module, PyObject *arg) {
    (void)module;
    return each(arg, path_of);
}

/* The keys a change map's records hold (interned once, as the Python's literals are). */
static PyObject *key_shift, *key_tag, *key_text, *key_before, *key_after;
static PyObject *key_id, *key_classes, *key_hooks, *key_path;

/* Whether `node` is a text lxml joins into one part with the texts beside it (an element's
 * `text` or a node's `tail`: each run of adjacent text and CDATA nodes). */
static int is_text(const xmlNode *node) {
    return node != NULL && (node->type == XML_TEXT_NODE || node->type == XML_CDATA_SECTION_NODE);
}

/* `locators._short_text(element, limit)`: the text below it (lxml's `itertext`: every text and
 * CDATA node in document order, a comment's or a PI's own text not), its words (split where
 * Python's `str.split` splits) joined by one space, its first `limit` characters. Read as far
 * as the Python reads it, no farther nor less far, every character of it checked as lxml's
 * decoder checks it: part by part (each run of adjacent texts: an element with no child but
 * texts has one, its `text`, read whole), until the words read make `limit` characters at one
 * of the Python's checks (after a part, once `limit` more characters are read since the last).
 * A new string; None (a new reference) where the Python is to read it: a node of another kind
 * below it (an entity's reference, an XInclude's), text that is not UTF-8; NULL with an error.
 * `kept`: room for `limit` characters. */
static PyObject *short_text(xmlNode *node, Py_ssize_t limit, Py_UCS4 *kept) {
    Py_ssize_t length = 0, read = 0, checked = 0; /* (read: the characters of the parts read) */
    int words = 0, spaced = 0; /* (a word seen; a space after it, written before the next) */
    for (xmlNode *at = node->children; at != NULL; at = next_in(at, node, 1)) {
        if (at->type == XML_ELEMENT_NODE || at->type == XML_COMMENT_NODE ||
            at->type == XML_PI_NODE)
            continue;
        if (!is_text(at)) Py_RETURN_NONE;
        const unsigned char *text = at->content ? at->content : (const unsigned char *)"";
        while (*text) {
            Py_UCS4 point = code_point(&text);
            if (point == (Py_UCS4)-1) Py_RETURN_NONE;
            read++;
            if (length == limit) continue; /* (read past the characters kept: only checked) */
            if (Py_UNICODE_ISSPACE(point)) {
                spaced = words;
                continue;
            }
            if (spaced) {
                kept[length++] = ' ';
                spaced = 0;
                if (length == limit) continue;
            }
            kept[length++] = point;
            words = 1;
        }
        if (!is_text(at->next) && read >= checked + limit) {
            checked = read;
            if (length == limit) break;
        }
    }
    return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, kept, length);
}

/* A dict this module made, taken out of the cyclic collector's sight where each of its values
 * is an atom (no container the collector tracks) or a container this module made and took out
 * of it (`values`: its `count` values). CPython keeps a dict in sight once it holds any list or
 * dict, tracked or not; a change map's records are data, never given anything later, so a
 * first load's thousands of them are then walked by no collection during the shift, nor by
 * `native.untrack` when its state is frozen. (A dict given a container later is tracked again
 * by CPython itself; only this module's own containers are ever taken out of sight here.) */
static void out_of_sight(PyObject *dict, PyObject *const *atoms, int count_atoms,
                         PyObject *const *made, int count_made) {
    for (int i = 0; i < count_atoms; i++)
        if (PyObject_IS_GC(atoms[i])) return;
    for (int i = 0; i < count_made; i++)
        if (PyObject_GC_IsTracked(made[i])) return;
    PyObject_GC_UnTrack(dict);
}

/* Whether `names`' item `index` (its classes, or its hooks) is the one `like`'s is: then the
 * record made of `like` holds the container it is read into, shared (a change map's records are
 * data, read and written whole: `after.path` alone is set again, `_settle_changes`). Classes
 * are compared where both are strings; hooks by identity, and only pairs of a string and a
 * value, which the Python reads alike each time it reads them (no object's own code is run
 * where the Python runs none, nor less than it runs: an iterator read once, a key's hash). */
static int same_as(PyObject *names, PyObject *like, Py_ssize_t index) {
    if (like == NULL) return 0;
    PyObject *mine = PyTuple_GET_ITEM(names, index), *theirs = PyTuple_GET_ITEM(like, index);
    if (index == 1)
        return mine == theirs || (PyUnicode_CheckExact(mine) && PyUnicode_CheckExact(theirs) &&
                                  PyUnicode_Compare(mine, theirs) == 0);
    if (mine != theirs) return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mine); i++) {
        PyObject *pair = PyTuple_GET_ITEM(mine, i);
        if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2 ||
            !PyUnicode_CheckExact(PyTuple_GET_ITEM(pair, 0)))
            return 0;
    }
    return 1;
}

/* `locators._named(names, path)`: {"id", "classes" (split), "hooks" (a dict), "path"} of
 * `names` (id, classes, hooks, ...). `like`, `made`: names read before and the record made of
 * them, or NULL: where `names` holds the same classes or hooks, `made`'s container of them is
 * shared (an element's record before and after: a first load's thousands differ in a path and
 * a dropped hook, their classes mostly not). A new dict; None (a new reference) where `names`
 * is not as the readers make it (the Python then says how); NULL with an error. */
static PyObject *named(PyObject *names, PyObject *path, PyObject *like, PyObject *made) {
    if (!PyTuple_CheckExact(names) || PyTuple_GET_SIZE(names) < 3) Py_RETURN_NONE;
    PyObject *classes = PyTuple_GET_ITEM(names, 1), *hooks = PyTuple_GET_ITEM(names, 2);
    if ((classes != Py_None && !PyUnicode_CheckExact(classes)) || !PyTuple_CheckExact(hooks))
        Py_RETURN_NONE;
    PyObject *split, *held, *record;
    if (same_as(names, like, 1))
        split = Py_NewRef(PyDict_GetItem(made, key_classes));
    else if ((split = classes != Py_None ? PyUnicode_Split(classes, NULL, -1) : PyList_New(0)))
        PyObject_GC_UnTrack(split); /* (strings only, never given more) */
    if (split == NULL) return NULL;
    if (same_as(names, like, 2))
        held = Py_NewRef(PyDict_GetItem(made, key_hooks));
    else if ((held = PyDict_New()) != NULL && PyDict_MergeFromSeq2(held, hooks, 1) < 0)
        Py_CLEAR(held);
    if (held == NULL) {
        Py_DECREF(split);
        return NULL;
    }
    if ((record = PyDict_New()) == NULL ||
        PyDict_SetItem(record, key_id, PyTuple_GET_ITEM(names, 0)) < 0 ||
        PyDict_SetItem(record, key_classes, split) < 0 ||
        PyDict_SetItem(record, key_hooks, held) < 0 || PyDict_SetItem(record, key_path, path) < 0)
        Py_CLEAR(record);
    else /* (`held` is in sight where a hook's value is a container: then so is the record) */
        out_of_sight(record, (PyObject *[]){PyTuple_GET_ITEM(names, 0), path}, 2,
                     (PyObject *[]){split, held}, 2);
    Py_DECREF(split);
    Py_DECREF(held);
    return record;
}

/* An element's tag as lxml's `tag` reads it, of an element in no namespace: a new string;
 * None (a new reference) where the Python is to read it; NULL with an error. The last few
 * names read are kept by their address, for one call (libxml2 keeps one copy of each name in
 * the dictionary lxml's documents share, which outlives the call). */
typedef struct {
    const xmlChar *name;
    PyObject *tag;
} KnownTag;

#define TAGS_KEPT 8

static PyObject *tag_of(const xmlNode *node, KnownTag *known) {
    if (node->ns != NULL) Py_RETURN_NONE;
    KnownTag *slot = &known[((uintptr_t)node->name >> 4) % TAGS_KEPT];
    if (slot->name != node->name || slot->tag == NULL) {
        const char *name = (const char *)node->name;
        PyObject *tag = PyUnicode_DecodeUTF8(name, (Py_ssize_t)strlen(name), "strict");
        if (tag == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) return NULL;
            PyErr_Clear();
            Py_RETURN_NONE;
        }
        Py_XSETREF(slot->tag, tag);
        slot->name = node->name;
    }
    return Py_NewRef(slot->tag);
}

/* One element's change (`locators._changes_read`'s): a new dict, or None (a new reference)
 * where its locators are unchanged; `*declined` set where the Python is to read them all; NULL
 * with an error. */
static PyObject *change_of(PyObject *element, PyObject *path, PyObject *was, PyObject *now,
                           PyObject *shift, Py_ssize_t limit, Py_UCS4 *kept, KnownTag *known,
                           int *declined) {
    if (!PyTuple_CheckExact(was) || PyTuple_GET_SIZE(was) < 4 ||
        (now != NULL && (!PyTuple_CheckExact(now) || PyTuple_GET_SIZE(now) != 3))) {
        *declined = 1;
        Py_RETURN_NONE;
    }
    PyObject *unequal = PyObject_RichCompare(path, PyTuple_GET_ITEM(was, 3), Py_NE);
    int differs = unequal == NULL ? -1 : PyObject_IsTrue(unequal); /* (`!=`, as the Python asks) */
    Py_XDECREF(unequal);
    for (Py_ssize_t i = 0; now != NULL && differs == 0 && i < 3; i++) {
        int equal = PyObject_RichCompareBool(PyTuple_GET_ITEM(now, i), PyTuple_GET_ITEM(was, i),
                                             Py_EQ);
        differs = equal < 0 ? -1 : !equal;
    }
    if (differs < 0) return NULL;
    if (!differs) Py_RETURN_NONE;
    xmlNode *node = ((struct LxmlElement *)element)->_c_node;
    PyObject *found[4] = {NULL, NULL, NULL, NULL}, *change = NULL;
    for (int i = 0; i < 4; i++) {
        /* (lxml's `tag` is the one its proxy keeps, where it keeps one: read, or set) */
        PyObject *own_tag = ((struct LxmlElement *)element)->_tag;
        if (i == 0)
            found[i] = own_tag && own_tag != Py_None ? Py_NewRef(own_tag) : tag_of(node, known);
        if (i == 1) found[i] = short_text(node, limit, kept);
        if (i == 2) found[i] = named(was, PyTuple_GET_ITEM(was, 3), NULL, NULL);
        if (i == 3) found[i] = named(now ? now : was, path, was, found[2]);
        if (found[i] == NULL) goto done;
        if (found[i] == Py_None) {
            *declined = 1;
            change = Py_NewRef(Py_None);
            goto done;
        }
    }
    change = PyDict_New();
    if (change != NULL &&
        (PyDict_SetItem(change, key_shift, shift) < 0 ||
         PyDict_SetItem(change, key_tag, found[0]) < 0 ||
         PyDict_SetItem(change, key_text, found[1]) < 0 ||
         PyDict_SetItem(change, key_before, found[2]) < 0 ||
         PyDict_SetItem(change, key_after, found[3]) < 0))
        Py_CLEAR(change);
    else if (change != NULL)
        out_of_sight(change, (PyObject *[]){shift, found[0], found[1]}, 3,
                     (PyObject *[]){found[2], found[3]}, 2);
done:
    for (int i = 0; i < 4; i++) Py_XDECREF(found[i]);
    return change;
}

/* `locators._changes_read(shift, elements, paths, before, after, limit)`. */
static PyObject *changes(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError,
                        "changes(shift, elements, paths, before, after, limit) takes 6 arguments");
        return NULL;
    }
    PyObject *shift = args[0], *elements = args[1], *paths = args[2], *before = args[3],
             *after = args[4];
    /* (Anything else, the Python says how it is wrong, where it does: an int, lists of one
     * length, dicts.) */
    int overflow = 0;
    Py_ssize_t limit =
        PyLong_CheckExact(args[5]) ? PyLong_AsLongAndOverflow(args[5], &overflow) : 0;
    if (!PyList_CheckExact(elements) || !PyList_CheckExact(paths) ||
        PyList_GET_SIZE(elements) != PyList_GET_SIZE(paths) || !PyDict_CheckExact(before) ||
        !PyDict_CheckExact(after) || overflow || limit < 1 || limit > 4096)
        Py_RETURN_NONE;
    Py_UCS4 kept[4096];
    KnownTag known[TAGS_KEPT] = {{0}};
    /* (Copies: they hold every element and path, whatever the caller's lists become.) */
    PyObject *held = PyList_GetSlice(elements, 0, PyList_GET_SIZE(elements));
    PyObject *held_paths = PyList_GetSlice(paths, 0, PyList_GET_SIZE(paths));
    PyObject *recorded = held && held_paths ? PyList_New(0) : NULL;
    int declined = 0;
    for (Py_ssize_t i = 0; recorded != NULL && i < PyList_GET_SIZE(held); i++) {
        PyObject *element = PyList_GET_ITEM(held, i), *path = PyList_GET_ITEM(held_paths, i);
        /* (a subclass may read its tag or its text its own way) */
        if (!Py_IS_TYPE(element, element_type) ||
            ((struct LxmlElement *)element)->_c_node == NULL ||
            ((struct LxmlElement *)element)->_c_node->type != XML_ELEMENT_NODE) {
            declined = 1;
            break;
        }
        /* (Each held as soon as it is found: a look-up, or a comparison, may run an object's
         * code, which may take it out of its dict.) */
        PyObject *was = Py_XNewRef(PyDict_GetItemWithError(before, element));
        if (was == NULL) { /* (an error; or none: the Python's KeyError) */
            if (PyErr_Occurred()) Py_CLEAR(recorded);
            declined = 1;
            break;
        }
        PyObject *now = Py_XNewRef(PyDict_GetItemWithError(after, element));
        if (now == NULL && PyErr_Occurred()) {
            Py_DECREF(was);
            Py_CLEAR(recorded);
            break;
        }
        PyObject *change = change_of(element, path, was, now == Py_None ? NULL : now, shift,
                                     limit, kept, known, &declined);
        Py_DECREF(was);
        Py_XDECREF(now);
        if (change == NULL) {
            Py_CLEAR(recorded);
            break;
        }
        if (declined) {
            Py_DECREF(change);
            break;
        }
        if (change != Py_None) {
            PyObject *pair = PyTuple_Pack(2, element, change);
            if (pair == NULL || PyList_Append(recorded, pair) < 0) Py_CLEAR(recorded);
            Py_XDECREF(pair);
        }
        Py_DECREF(change);
    }
    for (int i = 0; i < TAGS_KEPT; i++) Py_XDECREF(known[i].tag);
    Py_XDECREF(held);
    Py_XDECREF(held_paths);
    if (declined && recorded != NULL) Py_SETREF(recorded, Py_NewRef(Py_None));
    return recorded;
}

static PyMethodDef methods[] = {
    {"locators", locators, METH_O,
     "locators(elements) -> list[tuple] | None: [locators._locators(tree, e) for e in "
     "elements], or None where only the Python reads them."},
    {"names", names, METH_O,
     "names(elements) -> list[tuple] | None: [locators._names(e) for e in elements], or None "
     "where only the Python reads them."},
    {"changes", (PyCFunction)(void (*)(void))changes, METH_FASTCALL,
     "changes(shift, elements, paths, before, after, limit) -> list[tuple] | None: "
     "locators._changes_read(shift, elements, paths, before, after, limit), or None where only "
     "the Python reads them."},
    {"paths", paths, METH_O,
     "paths(elements) -> list[str] | None: [tree.getpath(e) for e in elements], or None where "
     "only the Python reads them."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_locators", "What a skill could locate an element by, in C.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__locators(void) {
    element_type = imported_element_type();
    if (element_type == NULL) return NULL;
    PyObject **keys[] = {&key_shift, &key_tag,     &key_text,  &key_before, &key_after,
                         &key_id,    &key_classes, &key_hooks, &key_path};
    const char *texts[] = {"shift", "tag", "text", "before", "after",
                           "id",    "classes", "hooks", "path"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (*keys[i] == NULL && (*keys[i] = PyUnicode_InternFromString(texts[i])) == NULL)
            return NULL;
    return PyModule_Create(&module_definition);
}

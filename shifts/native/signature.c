/* A wrap candidate's signature and its seeded coin, in C: what
 * `shifts.perceptual.locators._signature` returns for an element, read off libxml2's tree
 * without a Python object per string (but one per id and class where names are keyed: each is
 * looked up).
 *
 * A first load draws a seeded coin for every element it may wrap (thousands on a large page),
 * and the coin reads the element's signature: its tag, its id and classes with their random
 * runs masked, its name and link with their per-request values masked, and the start of its
 * text, normalized and masked. In Python that is about 10 us an element; here about one.
 *
 * The Python function is the definition: this one returns None wherever it would have to guess
 * (a namespaced tag, an attribute whose value is no single text, an entity reference), and the
 * caller then asks the Python one. The patterns
 * mirrored here are `volatile.mask`, `volatile.mask_text` and `volatile.name_key`; the tests
 * compare the two on every saved page and on generated trees and texts.
 *
 * `wrap_candidates` walks a page's body for the elements `_wrap` may wrap and draws each one's
 * coin (`coin.h`), so that only those it asks about become Python objects. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <libxml/tree.h>

#include "coin.h"
#include "module.h" /* lxml's element struct (its node is `_c_node`), `elementFactory` */
#include "tree.h"

#define CUT 40   /* the characters of its masked text a coin reads (`_CUT`) */
#define READ 201 /* the characters of a text read at first (`_READ`) */
/* What is read before that: most texts' first `CUT` masked characters are in their first 80,
 * and what `masked_into` makes of a start is the start of what it makes of a longer one (a
 * text is read further, four times as far each time, only where a start falls short). */
#define FIRST_READ 80
#define MIN_LENGTH 8 /* a volatile value's least length (`volatile.MIN_LENGTH`) */

static PyTypeObject *element_type; /* lxml.etree._Element */

/* A growable buffer of code points, in its own storage until it outgrows it (a signature's
 * parts are short: no allocation for most). Made empty by `text_empty` (not `{0}`, which
 * would clear its storage), freed by `text_free`. */
typedef struct {
    Py_UCS4 *data;
    Py_ssize_t length, capacity;
    Py_UCS4 local[256];
} Text;

static inline void text_empty(Text *text) {
    text->data = NULL;
    text->length = text->capacity = 0;
}

static int text_reserve(Text *text, Py_ssize_t more) {
    if (text->data == NULL) {
        text->data = text->local;
        text->capacity = sizeof text->local / sizeof *text->local;
    }
    if (text->length + more <= text->capacity) return 0;
    Py_ssize_t capacity = text->capacity;
    while (capacity < text->length + more) capacity *= 2;
    size_t size = capacity * sizeof(Py_UCS4);
    Py_UCS4 *data =
        text->data == text->local ? PyMem_Malloc(size) : PyMem_Realloc(text->data, size);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    if (text->data == text->local) memcpy(data, text->local, text->length * sizeof(Py_UCS4));
    text->data = data;
    text->capacity = capacity;
    return 0;
}

static void text_free(Text *text) {
    if (text->data != text->local) PyMem_Free(text->data);
}

static inline int text_put(Text *text, Py_UCS4 c) {
    if (text->length >= text->capacity && text_reserve(text, 1) < 0) return -1;
    text->data[text->length++] = c;
    return 0;
}

/* Append libxml2's UTF-8 `utf8` decoded, up to `limit` code points in all (-1: no limit).
 * Returns 1 if it stopped at the limit, 0 at the string's end, -2 on invalid UTF-8 (the caller
 * falls back), -1 with no memory (the exception set). */
static int text_put_utf8(Text *text, const xmlChar *utf8, Py_ssize_t limit) {
    const unsigned char *s = utf8;
    while (*s) {
        if (limit >= 0 && text->length >= limit) return 1;
        Py_UCS4 c;
        int more;
        if (s[0] < 0x80) {
            c = s[0], more = 0;
        } else if ((s[0] & 0xE0) == 0xC0) {
            c = s[0] & 0x1F, more = 1;
        } else if ((s[0] & 0xF0) == 0xE0) {
            c = s[0] & 0x0F, more = 2;
        } else if ((s[0] & 0xF8) == 0xF0) {
            c = s[0] & 0x07, more = 3;
        } else {
            return -2;
        }
        for (int i = 1; i <= more; i++) {
            if ((s[i] & 0xC0) != 0x80) return -2;
            c = (c << 6) | (s[i] & 0x3F);
        }
        /* (libxml2 keeps its texts valid; anything else is read by the Python, not guessed) */
        static const Py_UCS4 least[] = {0, 0x80, 0x800, 0x10000};
        if (c < least[more] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return -2;
        s += more + 1;
        if (text_put(text, c) < 0) return -1;
    }
    return 0;
}

static int is_word(Py_UCS4 c) { /* `[A-Za-z0-9_-]` */
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-';
}

static int is_digit(Py_UCS4 c) { return c >= '0' && c <= '9'; }

static int is_hex(Py_UCS4 c) {
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* `volatile.mask` (`numbers` 0) and `volatile.mask_text` (1) of in[0:n], appended to `out`: a
 * whole run of word characters of 8 or more with a digit in it becomes `#`; with `numbers`,
 * so does every run of digits left. (The pattern's look-behind starts a run only where no
 * word character is before it: at a run's start.) */
static int mask_into(Text *out, const Py_UCS4 *in, Py_ssize_t n, int numbers) {
    Py_ssize_t i = 0;
    while (i < n) {
        if (!is_word(in[i])) {
            if (text_put(out, in[i++]) < 0) return -1;
            continue;
        }
        Py_ssize_t end = i;
        int digit = 0;
        while (end < n && is_word(in[end])) digit |= is_digit(in[end++]);
        if (end - i >= MIN_LENGTH && digit) {
            if (text_put(out, '#') < 0) return -1;
            i = end;
            continue;
        }
        while (i < end) {
            if (numbers && is_digit(in[i])) {
                while (i < end && is_digit(in[i])) i++;
                if (text_put(out, '#') < 0) return -1;
            } else if (text_put(out, in[i++]) < 0) {
                return -1;
            }
        }
    }
    return 0;
}

/* `volatile.name_key` of in[0:n], appended to `out`: a whole run of hex digits (no hex digit
 * on either side) that is a UUID, or 8 or more holding a letter and a digit, or 10 or more
 * digits, becomes `#`. */
static int name_key_into(Text *out, const Py_UCS4 *in, Py_ssize_t n) {
    static const int uuid_parts[] = {8, 4, 4, 4, 12};
    Py_ssize_t i = 0;
    while (i < n) {
        if (!is_hex(in[i])) {
            if (text_put(out, in[i++]) < 0) return -1;
            continue;
        }
        /* A UUID: its parts of hex digits joined by `-`, no hex digit after it. */
        Py_ssize_t at = i;
        int uuid = 1;
        for (int part = 0; part < 5 && uuid; part++) {
            if (part > 0) {
                if (at < n && in[at] == '-') at++;
                else uuid = 0;
            }
            for (int k = 0; k < uuid_parts[part] && uuid; k++, at++)
                if (at >= n || !is_hex(in[at])) uuid = 0;
        }
        if (uuid && (at >= n || !is_hex(in[at]))) {
            if (text_put(out, '#') < 0) return -1;
            i = at;
            continue;
        }
        Py_ssize_t end = i;
        int letter = 0, digit = 0;
        while (end < n && is_hex(in[end])) {
            if (is_digit(in[end])) digit = 1;
            else letter = 1;
            end++;
        }
        if ((end - i >= MIN_LENGTH && letter && digit) || (end - i >= 10 && !letter)) {
            if (text_put(out, '#') < 0) return -1;
        } else {
            for (; i < end; i++)
                if (text_put(out, in[i]) < 0) return -1;
        }
        i = end;
    }
    return 0;
}

/* An attribute's value as lxml's `get` reads it: 1 with its text appended (none: nothing), 0 if
 * it is no single text (the caller falls back), -1 on an error. */
static int attribute_into(Text *out, xmlNode *node, const char *name) {
    xmlAttr *attribute = attribute_named(node, name);
    if (attribute == NULL) return 1;
    const char *text = attribute_text(attribute);
    if (text == NULL) return 0;
    int read = text_put_utf8(out, (const xmlChar *)text, -1);
    return read == -2 ? 0 : read < 0 ? -1 : 1;
}

/* The first `limit` characters of the element's text as the Python reads it: a leaf's `.text`,
 * a container's string value (its descendants' texts in order, as XPath's `string(.)`). 1 if
 * read, 0 if the caller must fall back (a node of a kind not handled), -1 on an error. */
static int text_start_into(Text *out, xmlNode *element, Py_ssize_t limit) {
    /* (A leaf's `.text` is its text children joined: its string value, as a container's.) */
    for (xmlNode *node = next_in(element, element, 1); node != NULL && out->length < limit;
         node = next_in(node, element, 1)) {
        switch (node->type) {
        case XML_TEXT_NODE:
        case XML_CDATA_SECTION_NODE: {
            int read = text_put_utf8(out, node->content, limit);
            if (read == -2) return 0;
            if (read < 0) return -1;
            break;
        }
        case XML_ELEMENT_NODE: /* (its children are next: `next_in` descends) */
        case XML_COMMENT_NODE:
        case XML_PI_NODE:
            break; /* (no part of a string value) */
        default:
            return 0; /* an entity reference, an XInclude marker: the Python reads it */
        }
    }
    return 1;
}

/* `locators._masked`: the start of a text normalized (`" ".join(start.split())`) and masked,
 * if `whole` or it holds its first `CUT` masked characters; 0 (nothing appended) otherwise. */
static int masked_into(Text *out, const Text *start, int whole) {
    Text words, masked;
    text_empty(&words);
    text_empty(&masked);
    int result = -1;
    for (Py_ssize_t i = 0; i < start->length;) { /* split on whitespace, joined by a space */
        while (i < start->length && Py_UNICODE_ISSPACE(start->data[i])) i++;
        if (i == start->length) break;
        if (words.length && text_put(&words, ' ') < 0) goto done;
        while (i < start->length && !Py_UNICODE_ISSPACE(start->data[i]))
            if (text_put(&words, start->data[i++]) < 0) goto done;
    }
    Py_ssize_t n = words.length;
    if (!whole && start->length && is_word(start->data[start->length - 1]))
        while (n && is_word(words.data[n - 1])) n--; /* (the run it ends in may go on) */
    for (Py_ssize_t step = CUT; step < n; step += CUT) {
        while (step < n && is_word(words.data[step - 1]) && is_word(words.data[step])) step++;
        masked.length = 0;
        if (mask_into(&masked, words.data, step, 1) < 0) goto done;
        if (masked.length >= CUT) goto found;
    }
    masked.length = 0;
    if (mask_into(&masked, words.data, n, 1) < 0) goto done;
    if (!whole && masked.length < CUT) {
        result = 0;
        goto done;
    }
found:
    if (text_reserve(out, masked.length) < 0) goto done;
    if (masked.length)
        memcpy(out->data + out->length, masked.data, masked.length * sizeof(Py_UCS4));
    out->length += masked.length;
    result = 1;
done:
    text_free(&masked);
    text_free(&words);
    return result;
}

/* `keyed.get(name, name)` of the name in[0:n], appended to `out`: 1 if appended, 0 if the key
 * is no plain string (the caller falls back), -1 on an error. */
static int keyed_into(Text *out, const Py_UCS4 *in, Py_ssize_t n, PyObject *keyed) {
    PyObject *name = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, in, n);
    if (name == NULL) return -1;
    PyObject *key = PyDict_GetItemWithError(keyed, name); /* (borrowed: the dict holds it) */
    Py_DECREF(name);
    if (key == NULL) {
        if (PyErr_Occurred()) return -1;
        if (text_reserve(out, n) < 0) return -1;
        if (n) memcpy(out->data + out->length, in, n * sizeof(Py_UCS4));
        out->length += n;
        return 1;
    }
    if (!PyUnicode_CheckExact(key)) return 0; /* (a subclass may format itself its own way) */
    int kind = PyUnicode_KIND(key);
    const void *data = PyUnicode_DATA(key);
    Py_ssize_t length = PyUnicode_GET_LENGTH(key);
    if (text_reserve(out, length) < 0) return -1;
    for (Py_ssize_t i = 0; i < length; i++)
        out->data[out->length++] = PyUnicode_READ(kind, data, i);
    return 1;
}

/* `_signature_read`'s keyed names: "{keyed.get(id, id)}|{' '.join(keyed.get(c, c) for c in
 * classes.split())}" appended to `names`; 1, 0 (fall back) or -1 as `attribute_into`. */
static int keyed_names_into(Text *names, xmlNode *node, PyObject *keyed) {
    Text value;
    text_empty(&value);
    int read;
    if ((read = attribute_into(&value, node, "id")) <= 0) goto done;
    if ((read = keyed_into(names, value.data, value.length, keyed)) <= 0) goto done;
    if (text_put(names, '|') < 0) goto failed;
    value.length = 0;
    if ((read = attribute_into(&value, node, "class")) <= 0) goto done;
    int first = 1;
    for (Py_ssize_t i = 0; i < value.length;) { /* (`str.split()`: on every Unicode space) */
        while (i < value.length && Py_UNICODE_ISSPACE(value.data[i])) i++;
        if (i == value.length) break;
        Py_ssize_t start = i;
        while (i < value.length && !Py_UNICODE_ISSPACE(value.data[i])) i++;
        if (!first && text_put(names, ' ') < 0) goto failed;
        first = 0;
        if ((read = keyed_into(names, value.data + start, i - start, keyed)) <= 0) goto done;
    }
    read = 1;
    goto done;
failed:
    read = -1;
done:
    text_free(&value);
    return read;
}

/* An element's signature, as a new string; None (a new reference) where only the Python reads
 * it; NULL with the error (no memory). `keyed`: None, or a non-empty dict of exactly that type. */
static PyObject *signature_of(xmlNode *node, PyObject *keyed) {
    if (node == NULL || node->type != XML_ELEMENT_NODE || node->ns != NULL ||
        declares_attributes(node->doc))
        Py_RETURN_NONE;
    Text out, names, values, start;
    text_empty(&out);
    text_empty(&names);
    text_empty(&values);
    text_empty(&start);
    PyObject *result = NULL;
    int read;
    /* "{tag}|{name_key(id|classes)}|" */
    if (text_put_utf8(&out, node->name, -1) != 0 || text_put(&out, '|') < 0) goto fallback;
    if (keyed != Py_None) {
        if (keyed_names_into(&names, node, keyed) <= 0) goto fallback;
    } else if ((read = attribute_into(&names, node, "id")) <= 0 || text_put(&names, '|') < 0 ||
               (read = attribute_into(&names, node, "class")) <= 0) {
        goto fallback;
    }
    if (name_key_into(&out, names.data, names.length) < 0 || text_put(&out, '|') < 0)
        goto fallback;
    /* + mask("{name}|{href}|") */
    if ((read = attribute_into(&values, node, "name")) <= 0 || text_put(&values, '|') < 0 ||
        (read = attribute_into(&values, node, "href")) <= 0 || text_put(&values, '|') < 0)
        goto fallback;
    if (mask_into(&out, values.data, values.length, 0) < 0) goto fallback;
    /* + the first CUT characters of its text, masked (`_first_words`) */
    /* (A start that falls short, mostly whitespace or masked short, is read again further, as
     * the Python reads on part by part: each start's masked form begins the whole text's.) */
    Py_ssize_t before = out.length;
    for (Py_ssize_t limit = FIRST_READ;; limit = limit == FIRST_READ ? READ : limit * 4) {
        start.length = 0;
        if ((read = text_start_into(&start, node, limit)) <= 0) goto fallback;
        int whole = start.length < limit;
        if ((read = masked_into(&out, &start, whole)) != 0 || whole) break;
    }
    if (read <= 0) goto fallback;
    if (out.length - before > CUT) out.length = before + CUT;
    result = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out.data, out.length);
    goto done;
fallback: /* None, or NULL with the error (no memory) set */
    if (!PyErr_Occurred()) result = Py_NewRef(Py_None);
done:
    text_free(&out);
    text_free(&names);
    text_free(&values);
    text_free(&start);
    return result;
}

/* The keyed names as `signature_of` takes them: None for none (an empty dict reads as none, as
 * the Python's `if keyed:` does: no class is split); NULL where the Python must read them (a
 * dict's subclass may answer `get` or `len` its own way). Borrowed. */
static PyObject *keyed_names(PyObject *keyed) {
    if (keyed == Py_None) return Py_None;
    if (!PyDict_CheckExact(keyed)) return NULL;
    return PyDict_GET_SIZE(keyed) == 0 ? Py_None : keyed;
}

static PyObject *signature(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "signature() takes an element and keyed names");
        return NULL;
    }
    if (!PyObject_TypeCheck(args[0], element_type)) {
        PyErr_SetString(PyExc_TypeError, "signature() takes an lxml element");
        return NULL;
    }
    PyObject *keyed = keyed_names(nargs == 2 ? args[1] : Py_None);
    if (keyed == NULL) Py_RETURN_NONE;
    return signature_of(((struct LxmlElement *)args[0])->_c_node, keyed);
}

/* A new list of the `count` numbers `values` holds, or NULL with the error. */
static PyObject *float_list(const double *values, Py_ssize_t count) {
    PyObject *list = PyList_New(count);
    for (Py_ssize_t i = 0; list != NULL && i < count; i++) {
        PyObject *value = PyFloat_FromDouble(values[i]);
        if (value == NULL) Py_CLEAR(list);
        else PyList_SET_ITEM(list, i, value);
    }
    return list;
}

/* The seeds of `texts` (a list of strings: the caller checked), each the digest of `prefix`
 * and its UTF-8 (`blake2b_64`): a new array (PyMem_Free it), or NULL with the error (a text
 * that is no UTF-8, as the Python's `encode` fails). */
static uint64_t *seeds_of(const char *prefix, Py_ssize_t prefix_length, PyObject *texts) {
    Py_ssize_t count = PyList_GET_SIZE(texts);
    uint64_t *seeds = PyMem_Malloc(sizeof(uint64_t) * (size_t)(count ? count : 1));
    if (seeds == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t length;
        const char *text = PyUnicode_AsUTF8AndSize(PyList_GET_ITEM(texts, i), &length);
        if (text == NULL) {
            PyMem_Free(seeds);
            return NULL;
        }
        seeds[i] = blake2b_64((const uint8_t *)prefix, (size_t)prefix_length,
                              (const uint8_t *)text, (size_t)length);
    }
    return seeds;
}

/* A workspace for `count` seedings in lockstep (`seeded_states`), or none where they are too
 * few (NULL with no error). NULL with the error where there is no memory. */
static uint32_t *workspace_for(Py_ssize_t count) {
    if (count < FEWEST_IN_LOCKSTEP) return NULL;
    uint32_t *workspace = PyMem_Malloc(sizeof(uint32_t) * MT_N * LANES);
    if (workspace == NULL) PyErr_NoMemory();
    return workspace;
}

/* The coins of `texts` (a list of strings: the caller checked), each `prefix` + its UTF-8,
 * drawn in lockstep (`first_draws`): a new list, or NULL with the error. No Python runs
 * meanwhile: the list stays as it is. */
static PyObject *coins_of(const char *prefix, Py_ssize_t prefix_length, PyObject *texts) {
    Py_ssize_t count = PyList_GET_SIZE(texts);
    uint64_t *seeds = seeds_of(prefix, prefix_length, texts);
    double *drawn = PyMem_Malloc(sizeof(double) * (size_t)(count ? count : 1));
    uint32_t *workspace = seeds && drawn ? workspace_for(count) : NULL;
    PyObject *found = NULL;
    if (drawn == NULL && !PyErr_Occurred()) PyErr_NoMemory();
    if (!PyErr_Occurred()) {
        first_draws(seeds, (size_t)count, drawn, workspace);
        found = float_list(drawn, count);
    }
    PyMem_Free(seeds);
    PyMem_Free(drawn);
    PyMem_Free(workspace);
    return found;
}

/* A wrap candidate found: its node, its element where one was made (or NULL) and its
 * signature, each a new reference; its coin is drawn once all are found (`first_draws`). */
typedef struct {
    xmlNode *node;
    PyObject *element, *signature;
} Candidate;

typedef struct {
    Candidate *items;
    size_t count, capacity;
} Candidates;

static void candidates_free(Candidates *candidates) {
    for (size_t i = 0; i < candidates->count; i++) {
        Py_XDECREF(candidates->items[i].element);
        Py_DECREF(candidates->items[i].signature);
    }
    PyMem_Free(candidates->items);
}

/* Keep `one` (its references then held by `candidates`): 0, or -1 with no memory (the error
 * set, `one`'s references left to the caller). */
static int candidates_add(Candidates *candidates, Candidate one) {
    if (candidates->count == candidates->capacity) {
        size_t capacity = candidates->capacity ? 2 * candidates->capacity : 64;
        Candidate *items = PyMem_Realloc(candidates->items, capacity * sizeof *items);
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        candidates->items = items, candidates->capacity = capacity;
    }
    candidates->items[candidates->count++] = one;
    return 0;
}

/* Draw the coins of the signatures `pending` holds (a dict's keys: each once) into `memo`:
 * 0, or -1 with the error. */
static int draw_pending(PyObject *pending, const char *prefix, Py_ssize_t prefix_length,
                        PyObject *memo) {
    if (PyDict_GET_SIZE(pending) == 0) return 0;
    PyObject *signatures = PyDict_Keys(pending);
    PyObject *drawn = signatures ? coins_of(prefix, prefix_length, signatures) : NULL;
    int result = drawn == NULL ? -1 : 0;
    /* (one the memo holds meanwhile is kept: another thread drew the same coin) */
    for (Py_ssize_t i = 0; result == 0 && i < PyList_GET_SIZE(signatures); i++)
        if (PyDict_SetDefault(memo, PyList_GET_ITEM(signatures, i), PyList_GET_ITEM(drawn, i)) ==
            NULL)
            result = -1;
    Py_XDECREF(signatures);
    Py_XDECREF(drawn);
    return result;
}

#define TAGS 64 /* (more tags than a caller's sets hold: the Python reads them) */

/* `locators._wrap_candidates_read`: see `wrap_candidates` in the method table. */
static PyObject *wrap_candidates(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 9) {
        PyErr_SetString(PyExc_TypeError,
                        "wrap_candidates() takes body, wrappable, fixed_parents, protected, "
                        "keyed, read, prefix, memo, below");
        return NULL;
    }
    PyObject *body = args[0], *protected = args[3], *read = args[5], *prefix_object = args[6],
             *memo = args[7], *below_object = args[8];
    if (!PyObject_TypeCheck(body, element_type)) {
        PyErr_SetString(PyExc_TypeError, "wrap_candidates() takes an lxml element");
        return NULL;
    }
    const char *wrappable[TAGS + 1], *fixed_parents[TAGS + 1];
    PyObject *keyed = keyed_names(args[4]);
    struct LxmlElement *top_element = (struct LxmlElement *)body;
    xmlNode *top = top_element->_c_node;
    if (keyed == NULL || !texts_of(args[1], wrappable, TAGS) ||
        !texts_of(args[2], fixed_parents, TAGS) || !PyAnySet_CheckExact(protected) ||
        !PyBytes_CheckExact(prefix_object) || !PyDict_CheckExact(memo) ||
        (below_object != Py_None && !PyFloat_CheckExact(below_object)) || top == NULL ||
        declares_attributes(top->doc))
        Py_RETURN_NONE;
    /* (a namespaced element: which of them `iterdescendants(*tags)` yields, and what its tag
     * is as a parent, are lxml's to say) */
    for (xmlNode *node = top; node != NULL; node = next_in(node, top, 1))
        if (node->type == XML_ELEMENT_NODE && node->ns != NULL) Py_RETURN_NONE;
    const char *prefix = PyBytes_AS_STRING(prefix_object);
    Py_ssize_t prefix_length = PyBytes_GET_SIZE(prefix_object);
    int all = below_object == Py_None;
    double below = all ? 0.0 : PyFloat_AS_DOUBLE(below_object);
    /* First every candidate and its signature, the coins not in `memo` noted; then those
     * coins, drawn together; then the candidates with their coins. */
    Candidates candidates = {0};
    PyObject *pending = PyDict_New(), *result = NULL; /* (a signature to draw: None) */
    if (pending == NULL) return NULL;
    /* `read` (the Python signature) must not change the tree: the walk holds its nodes. */
    for (xmlNode *node = next_in(top, top, 1); node != NULL; node = next_in(node, top, 1)) {
        if (node->type != XML_ELEMENT_NODE || !is_one_of((const char *)node->name, wrappable))
            continue;
        xmlNode *parent = node->parent; /* (an element: `top` or one below it) */
        if (is_one_of((const char *)parent->name, fixed_parents)) continue;
        PyObject *element = NULL, *signature = NULL, *known;
        int skip = is_protected(protected, top_element->_doc, node, &element);
        if (skip != 0) {
            Py_XDECREF(element);
            if (skip < 0) goto done;
            continue;
        }
        signature = signature_of(node, keyed);
        if (signature == Py_None) { /* (the Python reads it) */
            Py_CLEAR(signature);
            if (element == NULL &&
                (element = (PyObject *)elementFactory(top_element->_doc, node)) == NULL)
                goto failed;
            signature = PyObject_CallFunctionObjArgs(read, element, args[4], NULL);
            if (signature != NULL && !PyUnicode_CheckExact(signature)) {
                /* (as `derive_seed` reads a key: its `str`) */
                Py_SETREF(signature, PyObject_Str(signature));
            }
        }
        if (signature == NULL) goto failed;
        if ((known = PyDict_GetItemWithError(memo, signature)) == NULL) { /* (borrowed) */
            if (PyErr_Occurred() || PyDict_SetItem(pending, signature, Py_None) < 0) goto failed;
        } else if (!PyFloat_CheckExact(known)) { /* (not a coin the C drew: the Python draws) */
            Py_XDECREF(element);
            Py_DECREF(signature);
            result = Py_NewRef(Py_None);
            goto done;
        }
        if (candidates_add(&candidates, (Candidate){node, element, signature}) < 0) goto failed;
        continue;
    failed:
        Py_XDECREF(element);
        Py_XDECREF(signature);
        goto done;
    }
    if (draw_pending(pending, prefix, prefix_length, memo) < 0) goto done;
    PyObject *found = PyList_New(0);
    if (found == NULL) goto done;
    for (size_t i = 0; i < candidates.count; i++) {
        Candidate *candidate = &candidates.items[i];
        /* (held: making an element may run Python, a lookup of its class, which may change
         * the memo) */
        PyObject *coin = Py_XNewRef(PyDict_GetItemWithError(memo, candidate->signature));
        if (coin == NULL || !PyFloat_CheckExact(coin)) {
            /* (a `read` that changed the memo: the Python draws them all) */
            Py_XDECREF(coin);
            Py_DECREF(found);
            if (!PyErr_Occurred()) result = Py_NewRef(Py_None);
            goto done;
        }
        int wanted = all || PyFloat_AS_DOUBLE(coin) < below, appended = 0;
        if (wanted && candidate->element == NULL &&
            (candidate->element = (PyObject *)elementFactory(top_element->_doc,
                                                             candidate->node)) == NULL) {
            appended = -1;
        } else if (all) {
            PyObject *pair = PyTuple_Pack(2, coin, candidate->element);
            appended = pair == NULL ? -1 : PyList_Append(found, pair);
            Py_XDECREF(pair);
        } else if (wanted) {
            appended = PyList_Append(found, candidate->element);
        }
        Py_DECREF(coin);
        if (appended < 0) {
            Py_DECREF(found);
            goto done;
        }
    }
    result = found;
done:
    candidates_free(&candidates);
    Py_DECREF(pending);
    return result;
}

/* `rng._coin_read(prefix + text)`: `rng.chance`'s coin for the keys' text, given whole or as
 * a prefix and the rest. */
static PyObject *coin(PyObject *module, PyObject *args) {
    (void)module;
    const char *prefix, *text = "";
    Py_ssize_t prefix_length, text_length = 0;
    if (!PyArg_ParseTuple(args, "y#|y#:coin", &prefix, &prefix_length, &text, &text_length))
        return NULL;
    return PyFloat_FromDouble(seeded_coin((const uint8_t *)prefix, (size_t)prefix_length,
                                          (const uint8_t *)text, (size_t)text_length));
}

/* Whether every item of the list `texts` is a string (else the Python reads them). */
static int all_strings(PyObject *texts) {
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(texts); i++)
        if (!PyUnicode_CheckExact(PyList_GET_ITEM(texts, i))) return 0;
    return 1;
}

/* `rng._coins_read(prefix, texts)`: each text's coin (`prefix` + its UTF-8), drawn in
 * lockstep. A new list; None (a new reference) where a text is no string (the Python reads
 * them); NULL with the error. */
static PyObject *coins(PyObject *module, PyObject *args) {
    (void)module;
    const char *prefix;
    Py_ssize_t prefix_length;
    PyObject *texts;
    if (!PyArg_ParseTuple(args, "y#O!:coins", &prefix, &prefix_length, &PyList_Type, &texts))
        return NULL;
    if (!all_strings(texts)) Py_RETURN_NONE;
    return coins_of(prefix, prefix_length, texts);
}

/* `[random.Random(seed).random() for seed in seeds]` of seeds below 2^64, drawn as `coins`
 * draws them (in lockstep where there are enough): what the tests compare with CPython's, on
 * seeds of one 32-bit word and of two side by side (a digest is of one once in 2^32). A new
 * list; NULL with the error. */
static PyObject *draws(PyObject *module, PyObject *seeds_object) {
    (void)module;
    if (!PyList_Check(seeds_object)) {
        PyErr_SetString(PyExc_TypeError, "draws() takes a list of seeds");
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(seeds_object);
    uint64_t *seeds = PyMem_Malloc(sizeof(uint64_t) * (size_t)(count ? count : 1));
    double *drawn = PyMem_Malloc(sizeof(double) * (size_t)(count ? count : 1));
    uint32_t *workspace = workspace_for(count);
    PyObject *found = NULL;
    if (PyErr_Occurred()) goto done;
    if (seeds == NULL || drawn == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        seeds[i] = PyLong_AsUnsignedLongLong(PyList_GET_ITEM(seeds_object, i));
        if (PyErr_Occurred()) goto done;
    }
    first_draws(seeds, (size_t)count, drawn, workspace);
    found = float_list(drawn, count);
done:
    PyMem_Free(seeds);
    PyMem_Free(drawn);
    PyMem_Free(workspace);
    return found;
}

/* The longest token made here: `rng.token_for`'s are a few characters. */
#define LONGEST_TOKEN 64

/* `rng._token_read(text, length)`: a new string; None (a new reference) where the Python is
 * to make it (a length past LONGEST_TOKEN or below 1, draws past one twist). */
static PyObject *token(PyObject *module, PyObject *args) {
    (void)module;
    const char *text;
    Py_ssize_t text_length, length;
    if (!PyArg_ParseTuple(args, "y#n:token", &text, &text_length, &length)) return NULL;
    char out[LONGEST_TOKEN];
    uint64_t seed = blake2b_64((const uint8_t *)text, (size_t)text_length, NULL, 0);
    if (length < 1 || length > LONGEST_TOKEN || tokens_of(&seed, 1, (size_t)length, out, NULL) < 0)
        Py_RETURN_NONE;
    return PyUnicode_DecodeASCII(out, length, "strict");
}

/* `rng._tokens_read(prefix, texts, length)`: each text's token (of `prefix` + its UTF-8),
 * seeded in lockstep (`tokens_of`). A new list; None (a new reference) where the Python is to
 * make them (a text that is no string, a length `token` leaves to it); NULL with the error. */
static PyObject *tokens(PyObject *module, PyObject *args) {
    (void)module;
    const char *prefix;
    Py_ssize_t prefix_length, length;
    PyObject *texts;
    if (!PyArg_ParseTuple(args, "y#O!n:tokens", &prefix, &prefix_length, &PyList_Type, &texts,
                          &length))
        return NULL;
    Py_ssize_t count = PyList_GET_SIZE(texts);
    if (!all_strings(texts) || length < 1 || length > LONGEST_TOKEN) Py_RETURN_NONE;
    uint64_t *seeds = seeds_of(prefix, prefix_length, texts);
    char *made = PyMem_Malloc((size_t)length * (size_t)(count ? count : 1));
    uint32_t *workspace = seeds && made ? workspace_for(count) : NULL;
    PyObject *found = NULL;
    if (made == NULL && !PyErr_Occurred()) PyErr_NoMemory();
    if (!PyErr_Occurred()) {
        if (tokens_of(seeds, (size_t)count, (size_t)length, made, workspace) < 0) {
            found = Py_NewRef(Py_None);
        } else if ((found = PyList_New(count)) != NULL) {
            for (Py_ssize_t i = 0; i < count; i++) {
                PyObject *one = PyUnicode_DecodeASCII(made + i * length, length, "strict");
                if (one == NULL) {
                    Py_CLEAR(found);
                    break;
                }
                PyList_SET_ITEM(found, i, one);
            }
        }
    }
    PyMem_Free(seeds);
    PyMem_Free(made);
    PyMem_Free(workspace);
    return found;
}

static PyMethodDef methods[] = {
    {"signature", (PyCFunction)(void (*)(void))signature, METH_FASTCALL,
     "signature(element, keyed=None) -> str | None: a wrap candidate's signature, as "
     "locators._signature(element, keyed) reads it, or None where only the Python reads it."},
    {"wrap_candidates", (PyCFunction)(void (*)(void))wrap_candidates, METH_FASTCALL,
     "wrap_candidates(body, wrappable, fixed_parents, protected, keyed, read, prefix, memo, "
     "below) -> list | None: the elements below `body` of a tag in `wrappable` (a tuple), "
     "their parent's not in `fixed_parents`, not in `protected`, in document order, each with "
     "its coin: drawn from `prefix` (bytes) and its signature, read as `signature` reads it "
     "with `keyed` (and by `read(element, keyed)` where that declines), kept in `memo` "
     "(signature: coin). `below` None: every (coin, element); a float: the elements whose "
     "coin is below it. None where only the Python reads them (locators._wrap_candidates)."},
    {"coin", coin, METH_VARARGS,
     "coin(prefix, text=b'') -> float: rng.chance's coin for the keys' text prefix + text "
     "(rng._coin_read)."},
    {"coins", coins, METH_VARARGS,
     "coins(prefix, texts) -> list | None: rng._coins_read's coins of the texts (strings), "
     "drawn in lockstep, or None where only the Python draws them."},
    {"draws", draws, METH_O,
     "draws(seeds) -> list[float]: random.Random(seed).random() of each seed below 2**64, "
     "drawn as coins draws them: what the tests compare."},
    {"tokens", tokens, METH_VARARGS,
     "tokens(prefix, texts, length) -> list[str] | None: rng._tokens_read's tokens of the "
     "texts (strings), seeded in lockstep, or None where only the Python makes them."},
    {"token", token, METH_VARARGS,
     "token(text, length) -> str | None: rng.token_for's token for the keys' text "
     "(rng._token_read), or None where only the Python makes it."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_signature",
    "A wrap candidate's signature, the seeded coins and tokens, in C.", -1, methods,
};

PyMODINIT_FUNC PyInit__signature(void) {
    element_type = imported_element_type();
    return element_type == NULL ? NULL : PyModule_Create(&module_definition);
}

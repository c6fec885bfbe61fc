/* Scans of a page's markup bytes, in C. `tag_starts` and `assigned_names` find where some
 * words are in any case, one `memchr` to the next `<` or `=` (Python's `find` in a page of
 * attributes took 0.1 ms a word, each of its skips cut short at each `=` or `t`).
 *
 * `end_tags`: where libxml2 reports an end tag that closes nothing
 * (`</p>`, `</br>`), the parser finds each such end tag in the page, past its comments, its
 * raw text (a script's, a style's) and its tags' attributes (`data-content="<p>...</p>"`). In
 * Python that is a pattern tried at every tag of the page: about as long as parsing it.
 * `strays_likely` reads the page as `end_tags` does, and guesses whether one of those end tags
 * closes nothing (the page is then parsed with them marked at once, not parsed again).
 *
 * The Python is the definition: `parsing._END_TAG_OR_SKIPPED`'s matches, in order, of which the
 * end tags are kept. Its alternatives are tried in turn at each `<`, as the pattern tries them,
 * and each is read without backtracking: at each step of the pattern only one way on can match
 * (an attribute's name stops at `=`, a space, `/` or `>`; a quoted value at its quote), so the
 * one read here is the pattern's. The tests compare the two on every saved page and on
 * generated markup.
 *
 * `contains_folded`: whether a lowercase word occurs in a page in any case (`word in
 * page.lower()`, which copies the page to ask it: 30-50 us for a page's first 64 KB, at every
 * load an execution shift streams, where the answer is almost always no).
 *
 * `holds_any`: whether a page holds any of some words (`any(word in page for word in words)`),
 * in one pass where Python makes one per word: a page of no known site is matched against
 * every site's signatures at each load whose first 64 KB are new (a fresh nonce in them: every
 * load), 18 scans of 64 KB, a third of a next load's time.
 *
 * `contains`: whether a word is in a page (`word in page`) by the C library's `memmem`: a
 * page's next load asks whether its new per-request value is in the page it is swapped from
 * and in that page's shift, where Python's search takes 0.5 ns a byte of markup (a value's hex
 * digits are as common as the bytes it skips by) and `memmem` about a third of that. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* `\s` of a bytes pattern: space, tab, line feed, carriage return, form feed, vertical tab. */
static int is_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int is_letter(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

static unsigned char lower(unsigned char c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* `(?=[\s/>])`: what ends a tag's name. */
static int ends_a_name(const unsigned char *s, Py_ssize_t n, Py_ssize_t at) {
    return at < n && (is_space(s[at]) || s[at] == '/' || s[at] == '>');
}

/* Whether s[at:] starts with the lowercase `word`, in any case. */
static int starts_with(const unsigned char *s, Py_ssize_t n, Py_ssize_t at, const char *word) {
    Py_ssize_t length = (Py_ssize_t)strlen(word);
    if (at + length > n) return 0;
    for (Py_ssize_t k = 0; k < length; k++)
        if (lower(s[at + k]) != (unsigned char)word[k]) return 0;
    return 1;
}

/* The first match of a search at or after `from` (its start and end, start -1: none), kept:
 * a later search from any position between `from` and that start finds the same (none, from
 * any later position). A scan asks each search again at each tag that starts one (`<!--` that
 * never ends, `<script>` after `<script>`, a quote left open): kept, a page of such tags is
 * read once, not once per tag (quadratic: a page of 100 KB of `<!--x`, 4 s). */
typedef struct {
    Py_ssize_t from, start, end;
} Found;

static const char *const RAW_TEXT_NAMES[] = {"script", "style",   "textarea", "title", "xmp",
                                             "iframe", "noembed", "noframes", NULL};

/* A page being scanned, with its searches' last matches. */
typedef struct {
    const unsigned char *s;
    Py_ssize_t n;
    Found gt, comment_end, quotes[2], raw_text_ends[8];
} Scan;

/* A scan of the page `arg` (a buffer, held in `page` until the caller releases it): 0, or -1
 * with the error. */
static int scan_page(PyObject *arg, Py_buffer *page, Scan *scan) {
    if (PyObject_GetBuffer(arg, page, PyBUF_SIMPLE) < 0) return -1;
    Found none = {-1, -1, -1};
    scan->s = page->buf;
    scan->n = page->len;
    scan->gt = scan->comment_end = scan->quotes[0] = scan->quotes[1] = none;
    for (int k = 0; k < 8; k++) scan->raw_text_ends[k] = none;
    return 0;
}

/* Whether `found` answers a search from `from` (then its start and end are the answer). */
static int recalled(const Found *found, Py_ssize_t from) {
    return found->from >= 0 && from >= found->from && (found->start < 0 || from <= found->start);
}

static Py_ssize_t kept(Found *found, Py_ssize_t from, Py_ssize_t start, Py_ssize_t end) {
    found->from = from;
    found->start = start;
    found->end = end;
    return start;
}

/* Where the first `c` (one byte, kept in `found`) is at or after `from`, or -1. */
static Py_ssize_t next_byte(const Scan *scan, Found *found, unsigned char c, Py_ssize_t from) {
    if (recalled(found, from)) return found->start;
    const unsigned char *at = from < scan->n ? memchr(scan->s + from, c, scan->n - from) : NULL;
    Py_ssize_t start = at == NULL ? -1 : at - scan->s;
    return kept(found, from, start, start + 1);
}

/* Where the first `>` at or after `at` ends (`[^>]*>`), or -1. */
static Py_ssize_t past_next_gt(Scan *scan, Py_ssize_t at) {
    Py_ssize_t gt = next_byte(scan, &scan->gt, '>', at);
    return gt < 0 ? -1 : gt + 1;
}

/* `<!--.*?-->` at `at`: its end, or -1. */
static Py_ssize_t comment_at(Scan *scan, Py_ssize_t at) {
    const unsigned char *s = scan->s;
    Py_ssize_t n = scan->n, from = at + 4;
    if (from > n || memcmp(s + at, "<!--", 4) != 0) return -1;
    if (recalled(&scan->comment_end, from)) return scan->comment_end.end;
    for (Py_ssize_t k = from; k + 3 <= n; k++) {
        const unsigned char *dash = memchr(s + k, '-', n - k);
        if (dash == NULL) break;
        k = dash - s;
        if (k + 3 <= n && s[k + 1] == '-' && s[k + 2] == '>') {
            kept(&scan->comment_end, from, k, k + 3);
            return k + 3;
        }
    }
    kept(&scan->comment_end, from, -1, -1);
    return -1;
}

/* `<(script|...)(?=[\s/>])[^>]*>.*?</\1\s*>` at `at`: its end, or -1. */
static Py_ssize_t raw_text_at(Scan *scan, Py_ssize_t at) {
    const unsigned char *s = scan->s;
    Py_ssize_t n = scan->n;
    int which = -1;
    if (at + 1 >= n || strchr("sStTxXiInN", s[at + 1]) == NULL || s[at + 1] == 0) return -1;
    for (int k = 0; RAW_TEXT_NAMES[k] && which < 0; k++)
        if (starts_with(s, n, at + 1, RAW_TEXT_NAMES[k]) &&
            ends_a_name(s, n, at + 1 + strlen(RAW_TEXT_NAMES[k])))
            which = k;
    if (which < 0) return -1;
    const char *name = RAW_TEXT_NAMES[which];
    Py_ssize_t length = (Py_ssize_t)strlen(name);
    Py_ssize_t content = past_next_gt(scan, at + 1 + length);
    if (content < 0) return -1;
    Found *found = &scan->raw_text_ends[which];
    if (recalled(found, content)) return found->end;
    for (Py_ssize_t k = content; k + 2 <= n; k++) { /* the first `</name\s*>` (`.*?`) */
        const unsigned char *lt = memchr(s + k, '<', n - k);
        if (lt == NULL) break;
        k = lt - s;
        if (k + 2 > n || s[k + 1] != '/' || !starts_with(s, n, k + 2, name)) continue;
        Py_ssize_t end = k + 2 + length;
        while (end < n && is_space(s[end])) end++;
        if (end < n && s[end] == '>') {
            kept(found, content, k, end + 1);
            return end + 1;
        }
    }
    kept(found, content, -1, -1);
    return -1;
}

/* `</(p|br)(?=[\s/>])[^>]*>` at `at`: its end, and its name in `name`; or -1. */
static Py_ssize_t end_tag_at(Scan *scan, Py_ssize_t at, const char **name) {
    const unsigned char *s = scan->s;
    Py_ssize_t n = scan->n;
    if (at + 1 >= n || s[at + 1] != '/') return -1;
    if (starts_with(s, n, at + 2, "p") && ends_a_name(s, n, at + 3)) *name = "p";
    else if (starts_with(s, n, at + 2, "br") && ends_a_name(s, n, at + 4)) *name = "br";
    else return -1;
    return past_next_gt(scan, at + 2 + (Py_ssize_t)strlen(*name));
}

/* An attribute's name's byte: `[^\s"'>/=]`. */
static int in_name(unsigned char c) {
    return !is_space(c) && c != '"' && c != '\'' && c != '>' && c != '/' && c != '=';
}

/* An unquoted value's byte: `[^\s"'>]`. */
static int in_unquoted(unsigned char c) {
    return !is_space(c) && c != '"' && c != '\'' && c != '>';
}

/* `<[A-Za-z][^\s/>]*` and `parsing._ATTRIBUTES` at `at`: its end, or -1. */
static Py_ssize_t start_tag_at(Scan *scan, Py_ssize_t at) {
    const unsigned char *s = scan->s;
    Py_ssize_t n = scan->n;
    Py_ssize_t k = at + 1;
    if (k >= n || !is_letter(s[k])) return -1;
    for (k++; k < n && !is_space(s[k]) && s[k] != '/' && s[k] != '>'; k++) {}
    for (;;) {
        Py_ssize_t m = k;
        while (m < n && is_space(s[m])) m++;
        if (m > k && m < n && in_name(s[m])) { /* `\s+name`, then `\s*=\s*value` if one */
            while (m < n && in_name(s[m])) m++;
            Py_ssize_t v = m;
            while (v < n && is_space(s[v])) v++;
            if (v < n && s[v] == '=') {
                for (v++; v < n && is_space(s[v]); v++) {}
                if (v < n && (s[v] == '"' || s[v] == '\'')) {
                    Found *found = &scan->quotes[s[v] == '\''];
                    Py_ssize_t quote = next_byte(scan, found, s[v], v + 1);
                    if (quote >= 0) m = quote + 1;
                } else if (v < n && in_unquoted(s[v])) {
                    while (v < n && in_unquoted(s[v])) v++;
                    m = v;
                } /* (no value: the name alone, and what follows it must end it) */
            }
            k = m;
        } else if (m < n && s[m] == '/') { /* a slash, after spaces or none */
            k = m + 1;
        } else {
            return m < n && s[m] == '>' ? m + 1 : -1; /* `\s*>` */
        }
    }
}

/* Where the next `<` is at or after `at`, or -1. */
static Py_ssize_t next_lt(const Scan *scan, Py_ssize_t at) {
    const unsigned char *next = at < scan->n ? memchr(scan->s + at, '<', scan->n - at) : NULL;
    return next == NULL ? -1 : next - scan->s;
}

/* What a scan finds at a `<`: a comment or a raw text element, read past; an end tag of
 * `end_tag_at`; or something else, which each scan reads its own way. */
typedef enum { SKIPPED, END_TAG, OTHER } Piece;

/* The piece at the `<` at `at`, in the order the pattern tries its alternatives; where it
 * ends in `end` (-1 for OTHER), an end tag's name in `name`. */
static Piece piece_at(Scan *scan, Py_ssize_t at, Py_ssize_t *end, const char **name) {
    if ((*end = comment_at(scan, at)) >= 0 || (*end = raw_text_at(scan, at)) >= 0) return SKIPPED;
    if ((*end = end_tag_at(scan, at, name)) >= 0) return END_TAG;
    return OTHER;
}

static PyObject *end_tags(PyObject *module, PyObject *arg) {
    (void)module;
    Py_buffer page;
    Scan scan;
    if (scan_page(arg, &page, &scan) < 0) return NULL;
    PyObject *found = PyList_New(0);
    for (Py_ssize_t at = 0; found != NULL && (at = next_lt(&scan, at)) >= 0;) {
        const char *name = NULL;
        Py_ssize_t end;
        Piece piece = piece_at(&scan, at, &end, &name);
        if (piece == END_TAG) {
            PyObject *tag = Py_BuildValue("(nns)", at, end, name);
            if (tag == NULL || PyList_Append(found, tag) < 0) Py_CLEAR(found);
            Py_XDECREF(tag);
        } else if (piece == OTHER) {
            end = start_tag_at(&scan, at);
        }
        at = end >= 0 ? end : at + 1;
    }
    PyBuffer_Release(&page);
    return found;
}

/* The start tags that close an open `<p>`: `parsing._CLOSES_A_P`. */
static int closes_a_p(const unsigned char *s, Py_ssize_t at, Py_ssize_t length) {
    static const char *const names[] = {
        "address", "article", "aside", "blockquote", "details", "div", "dl", "fieldset",
        "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "main",
        "menu", "nav", "ol", "pre", "section", "table", "ul", NULL};
    for (const char *const *each = names; *each; each++) {
        if ((Py_ssize_t)strlen(*each) != length) continue;
        Py_ssize_t k = 0;
        while (k < length && lower(s[at + k]) == (unsigned char)(*each)[k]) k++;
        if (k == length) return 1;
    }
    return 0;
}

/* `parsing._strays_likely_read`: the scan of `end_tags`, with whether a `<p>` is open; a start
 * tag read to its first `>` (a guess needs no attribute's value read past a `>` in it). */
static PyObject *strays_likely(PyObject *module, PyObject *arg) {
    (void)module;
    Py_buffer page;
    Scan scan;
    if (scan_page(arg, &page, &scan) < 0) return NULL;
    const unsigned char *s = scan.s;
    Py_ssize_t n = scan.n;
    int open = 0, likely = 0;
    for (Py_ssize_t at = 0; !likely && (at = next_lt(&scan, at)) >= 0;) {
        const char *name = NULL;
        Py_ssize_t end;
        Piece piece = piece_at(&scan, at, &end, &name);
        if (piece == END_TAG) {
            likely = name[0] == 'b' || !open; /* a `</br>`, or a `</p>` with none open */
            open = 0;
        } else if (piece == OTHER && at + 1 < n && is_letter(s[at + 1])) {
            Py_ssize_t length = 1; /* `<([A-Za-z][^\s/>]*)[^>]*>` */
            while (at + 1 + length < n && !is_space(s[at + 1 + length]) &&
                   s[at + 1 + length] != '/' && s[at + 1 + length] != '>')
                length++;
            end = past_next_gt(&scan, at + 1 + length);
            if (end >= 0 && length == 1 && lower(s[at + 1]) == 'p') open = 1;
            else if (end >= 0 && closes_a_p(s, at + 1, length)) open = 0;
        }
        at = end >= 0 ? end : at + 1;
    }
    PyBuffer_Release(&page);
    return PyBool_FromLong(likely);
}

/* Whether s[at:at+length] is `word` (lowercase) in any case. */
static int is_word_at(const unsigned char *s, Py_ssize_t at, const char *word, Py_ssize_t length) {
    for (Py_ssize_t k = 0; k < length; k++)
        if (lower(s[at + k]) != (unsigned char)word[k]) return 0;
    return 1;
}

/* Where the next `c` is at or after `at` in s[0:n], or -1. */
static Py_ssize_t next_at(const unsigned char *s, Py_ssize_t n, Py_ssize_t at, unsigned char c) {
    const unsigned char *next = at < n ? memchr(s + at, c, n - at) : NULL;
    return next == NULL ? -1 : next - s;
}

/* The page and a tuple of bytes as `tag_starts` and `assigned_names` take them: 1, or 0 where
 * they are of another kind (the Python reads them), -1 with the error. */
static int page_and_names(PyObject *args, Py_buffer *page, PyObject **names) {
    PyObject *page_object;
    if (!PyArg_ParseTuple(args, "OO", &page_object, names)) return -1;
    if (!PyBytes_CheckExact(page_object) || !PyTuple_CheckExact(*names)) return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(*names); i++)
        if (!PyBytes_CheckExact(PyTuple_GET_ITEM(*names, i))) return 0;
    return PyObject_GetBuffer(page_object, page, PyBUF_SIMPLE) < 0 ? -1 : 1;
}

static PyObject *tag_starts(PyObject *module, PyObject *args) {
    (void)module;
    Py_buffer page;
    PyObject *names;
    int read = page_and_names(args, &page, &names);
    if (read <= 0) return read < 0 ? NULL : Py_NewRef(Py_None);
    const unsigned char *s = page.buf;
    Py_ssize_t n = page.len, count = PyTuple_GET_SIZE(names);
    PyObject *found = PyList_New(0);
    for (Py_ssize_t at = next_at(s, n, 0, '<'); found != NULL && at >= 0;
         at = next_at(s, n, at + 1, '<')) {
        for (Py_ssize_t i = 0; i < count; i++) {
            PyObject *name = PyTuple_GET_ITEM(names, i);
            Py_ssize_t length = PyBytes_GET_SIZE(name);
            if (at + 1 + length > n || !is_word_at(s, at + 1, PyBytes_AS_STRING(name), length))
                continue;
            PyObject *position = PyLong_FromSsize_t(at);
            if (position == NULL || PyList_Append(found, position) < 0) Py_CLEAR(found);
            Py_XDECREF(position);
            break;
        }
    }
    PyBuffer_Release(&page);
    return found;
}

static PyObject *assigned_names(PyObject *module, PyObject *args) {
    (void)module;
    Py_buffer page;
    PyObject *names;
    int read = page_and_names(args, &page, &names);
    if (read <= 0) return read < 0 ? NULL : Py_NewRef(Py_None);
    const unsigned char *s = page.buf;
    Py_ssize_t n = page.len, count = PyTuple_GET_SIZE(names), left = count;
    char *seen = PyMem_Calloc(count ? count : 1, 1);
    if (seen == NULL) {
        PyBuffer_Release(&page);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t at = next_at(s, n, 0, '='); left > 0 && at >= 0;
         at = next_at(s, n, at + 1, '=')) {
        for (Py_ssize_t i = 0; i < count; i++) {
            PyObject *name = PyTuple_GET_ITEM(names, i);
            Py_ssize_t length = PyBytes_GET_SIZE(name);
            if (!seen[i] && length <= at &&
                is_word_at(s, at - length, PyBytes_AS_STRING(name), length)) {
                seen[i] = 1;
                left--;
            }
        }
    }
    PyObject *found = PyList_New(0);
    for (Py_ssize_t i = 0; found != NULL && i < count; i++)
        if (seen[i] && PyList_Append(found, PyTuple_GET_ITEM(names, i)) < 0) Py_CLEAR(found);
    PyMem_Free(seen);
    PyBuffer_Release(&page);
    return found;
}

/* `word in page.lower()`, the page unchanged: `memchr` to each place of the word's first byte
 * that has no case (its `-` in `security-policy`), then the word compared there in any case; a
 * word of letters alone is compared at each byte. A capital in the word matches nothing, as it
 * matches nothing in a lowered page. */
static PyObject *contains_folded(PyObject *module, PyObject *args) {
    (void)module;
    Py_buffer page, word;
    if (!PyArg_ParseTuple(args, "y*y*", &page, &word)) return NULL;
    const unsigned char *s = page.buf, *w = word.buf;
    Py_ssize_t n = page.len, m = word.len, anchor = 0;
    while (anchor < m && lower(w[anchor]) >= 'a' && lower(w[anchor]) <= 'z') anchor++;
    int found = m == 0;
    if (anchor == m) { /* letters alone: each place */
        for (Py_ssize_t at = 0; !found && at + m <= n; at++)
            found = is_word_at(s, at, (const char *)w, m);
    } else {
        for (Py_ssize_t at = next_at(s, n, anchor, w[anchor]); !found && at >= 0;
             at = next_at(s, n, at + 1, w[anchor]))
            found = at - anchor + m <= n && is_word_at(s, at - anchor, (const char *)w, m);
    }
    PyBuffer_Release(&page);
    PyBuffer_Release(&word);
    return PyBool_FromLong(found);
}

#define BLOCK(s, at) ((unsigned)(s)[(at) - 1] << 4 ^ (s)[at]) /* two bytes, in 12 bits */

/* `any(word in page for word in words)` in one pass (Wu and Manber's): a window as long as the
 * shortest word of two bytes or more (m) moves along the page by what its last two bytes
 * allow: as far as no word's first m bytes hold them nearer their end (a table by the two
 * bytes, 12 bits of them: pairs that share an entry move as little as either). Where a word's
 * first m bytes may end, every word is compared there. The signatures' literals are 8 bytes
 * or more: most windows move on by 6 or 7. A word of one byte is looked for with `memchr`, an
 * empty one is in every page. Declines (None) a page or a word that is no `bytes`, which the
 * Python asks as it would (`in` reads a `memoryview`'s items as numbers). */
static PyObject *holds_any(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *page, *words;
    if (!PyArg_ParseTuple(args, "OO!", &page, &PyTuple_Type, &words)) return NULL;
    if (!PyBytes_CheckExact(page)) return Py_NewRef(Py_None);
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(page);
    Py_ssize_t n = PyBytes_GET_SIZE(page), count = PyTuple_GET_SIZE(words), m = PY_SSIZE_T_MAX;
    int found = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *word = PyTuple_GET_ITEM(words, i);
        if (!PyBytes_CheckExact(word)) return Py_NewRef(Py_None);
        Py_ssize_t length = PyBytes_GET_SIZE(word);
        if (length < 2)
            found |= length == 0 || memchr(s, PyBytes_AS_STRING(word)[0], n) != NULL;
        else if (length < m)
            m = length;
    }
    if (!found && m <= n) {
        unsigned char shift[1 << 12];
        Py_ssize_t most = m - 1 < 255 ? m - 1 : 255; /* (a shorter move is always safe) */
        memset(shift, (int)most, sizeof shift);
        for (Py_ssize_t i = 0; i < count; i++) {
            PyObject *word = PyTuple_GET_ITEM(words, i);
            const unsigned char *w = (const unsigned char *)PyBytes_AS_STRING(word);
            if (PyBytes_GET_SIZE(word) < 2) continue;
            for (Py_ssize_t at = 1; at < m; at++) { /* the pair ending at `at`: m - 1 - at on */
                Py_ssize_t on = m - 1 - at;
                if (on < shift[BLOCK(w, at)]) shift[BLOCK(w, at)] = (unsigned char)on;
            }
        }
        for (Py_ssize_t end = m - 1; !found && end < n;) {
            unsigned char on = shift[BLOCK(s, end)];
            if (on > 0) {
                end += on;
                continue;
            }
            Py_ssize_t start = end - (m - 1);
            for (Py_ssize_t i = 0; i < count && !found; i++) {
                PyObject *word = PyTuple_GET_ITEM(words, i);
                Py_ssize_t length = PyBytes_GET_SIZE(word);
                found = length >= 2 && start + length <= n &&
                        memcmp(s + start, PyBytes_AS_STRING(word), length) == 0;
            }
            end++;
        }
    }
    return PyBool_FromLong(found);
}

/* `word in page`, by `memmem` (declared by `_GNU_SOURCE`, which Python's headers define).
 * Declines (None) a page or a word that is no `bytes`: `in` reads another kind its own way (a
 * `memoryview`'s items are numbers). */
static PyObject *contains(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *page, *word;
    if (!PyArg_ParseTuple(args, "OO", &page, &word)) return NULL;
    if (!PyBytes_CheckExact(page) || !PyBytes_CheckExact(word)) return Py_NewRef(Py_None);
    Py_ssize_t length = PyBytes_GET_SIZE(word);
    int found = length == 0 || memmem(PyBytes_AS_STRING(page), PyBytes_GET_SIZE(page),
                                      PyBytes_AS_STRING(word), length) != NULL;
    return PyBool_FromLong(found);
}

static PyMethodDef methods[] = {
    {"tag_starts", tag_starts, METH_VARARGS,
     "tag_starts(page: bytes, names: tuple[bytes, ...]) -> list[int] | None: "
     "document._tag_starts, where `<` and one of the names (in any case) start, in order."},
    {"assigned_names", assigned_names, METH_VARARGS,
     "assigned_names(page: bytes, names: tuple[bytes, ...]) -> list[bytes] | None: "
     "document._assigned_names, the names the page holds (in any case) with `=` after them."},
    {"end_tags", end_tags, METH_O,
     "end_tags(page: bytes) -> list[tuple[int, int, str]]: parsing._end_tags, each `</p>` and "
     "`</br>` of the page outside comments, raw text and tags, as (start, end, name)."},
    {"strays_likely", strays_likely, METH_O,
     "strays_likely(page: bytes) -> bool: parsing._strays_likely_read, whether an end tag of "
     "the page likely closes nothing."},
    {"contains_folded", contains_folded, METH_VARARGS,
     "contains_folded(page: bytes, word: bytes) -> bool: `word in page.lower()`, without the "
     "lowered copy of the page."},
    {"contains", contains, METH_VARARGS,
     "contains(page: bytes, word: bytes) -> bool | None: `word in page`, by `memmem`; None "
     "for a page or a word that is no bytes."},
    {"holds_any", holds_any, METH_VARARGS,
     "holds_any(page: bytes, words: tuple[bytes, ...]) -> bool | None: "
     "`any(word in page for word in words)`, in one pass; None for a page or a word that is "
     "no bytes."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_markup", "Scans of a page's markup, in C.", -1, methods,
};

PyMODINIT_FUNC PyInit__markup(void) { return PyModule_Create(&module_definition); }

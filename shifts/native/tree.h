/* What the compiled shifts read of libxml2's tree, as lxml reads it: one definition for every
 * module (`signature.c`, `walks.c`, `locators.c`). */

#ifndef SKILLSHIFT_NATIVE_TREE_H
#define SKILLSHIFT_NATIVE_TREE_H

#include <libxml/tree.h>
#include <stdint.h>
#include <string.h>

/* An element's attribute of that name with no namespace, as `element.get(name)` finds it (the
 * first of that name), or NULL. */
static inline xmlAttr *attribute_named(xmlNode *node, const char *name) {
    for (xmlAttr *attribute = node->properties; attribute; attribute = attribute->next)
        if (attribute->ns == NULL && attribute->name[0] == (xmlChar)name[0] &&
            strcmp((const char *)attribute->name, name) == 0)
            return attribute;
    return NULL;
}

/* An attribute's value as `get` reads it, if it is a single text (or none: ""), else NULL (an
 * entity reference in it: the Python reads it). */
static inline const char *attribute_text(xmlAttr *attribute) {
    xmlNode *value = attribute->children;
    if (value == NULL) return "";
    if (value->next != NULL ||
        (value->type != XML_TEXT_NODE && value->type != XML_CDATA_SECTION_NODE))
        return NULL;
    return value->content ? (const char *)value->content : ""; /* (none: as libxml2 reads it) */
}

/* Whether the document's DTD declares attributes: their defaults are what `get` reads of an
 * element that has none of its own (an XML document's; an HTML one declares none). */
static inline int declares_attributes(xmlDoc *doc) {
    return doc != NULL && ((doc->intSubset != NULL && doc->intSubset->attributes != NULL) ||
                           (doc->extSubset != NULL && doc->extSubset->attributes != NULL));
}

/* Whether `text` is one of `texts` (NULL-terminated). (Their first bytes compared first: a walk
 * asks this of every element, and most names differ there, without a call.) */
static inline int is_one_of(const char *text, const char *const *texts) {
    for (; *texts; texts++)
        if (text[0] == (*texts)[0] && strcmp(text, *texts) == 0) return 1;
    return 0;
}

/* The next node after `node` in document order, within `top`'s subtree (`descend`: into its
 * children if it has any), or NULL. Only an element's children are walked, as lxml's
 * iterators do. */
static inline xmlNode *next_in(xmlNode *node, xmlNode *top, int descend) {
    if (descend && node->type == XML_ELEMENT_NODE && node->children != NULL) return node->children;
    while (node != top && node->next == NULL) node = node->parent;
    return node == top ? NULL : node->next;
}

/* One code point of valid UTF-8 at `*at` (moved past it), as Python's strict decoder takes
 * it: no overlong form, no surrogate, none past U+10FFFF; (uint32_t)-1 where it is not. */
static inline uint32_t code_point(const unsigned char **at) {
    const unsigned char *s = *at;
    if (s[0] < 0x80) {
        *at += 1;
        return s[0];
    }
    int more;
    uint32_t point;
    unsigned char low = 0x80, high = 0xBF; /* (the second byte's range) */
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        more = 1, point = s[0] & 0x1F;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        more = 2, point = s[0] & 0x0F;
        if (s[0] == 0xE0) low = 0xA0;
        if (s[0] == 0xED) high = 0x9F;
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        more = 3, point = s[0] & 0x07;
        if (s[0] == 0xF0) low = 0x90;
        if (s[0] == 0xF4) high = 0x8F;
    } else
        return (uint32_t)-1;
    for (int i = 1; i <= more; i++) { /* (a 0 byte, the text's end, is in no range) */
        if (s[i] < (i == 1 ? low : 0x80) || s[i] > (i == 1 ? high : 0xBF)) return (uint32_t)-1;
        point = point << 6 | (s[i] & 0x3F);
    }
    *at += 1 + more;
    return point;
}

#endif

"""`AssetRefs` to and from JSON, for the knowledge store (`REFS_VERSION` names the readers that
made a record: a record of other readers is read again)."""

from __future__ import annotations

from shifts.references.model import AssetRefs, Keys, StructuralRule

# The version of the readers below: what an asset references is a function of its bytes and of
# this number, so stored references (proxy.knowledge) are keyed by both. Bump it whenever a
# reader's output changes.
REFS_VERSION = 18


def refs_to_json(refs: AssetRefs) -> dict[str, object]:
    """A canonical JSON form (sorted lists): the same references give the same text."""
    return {
        "ids": sorted(refs.ids),
        "classes": sorted(refs.classes),
        "attributes": sorted(refs.attributes),
        "values": sorted(refs.values),
        "tags": sorted(refs.tags),
        "words": sorted(refs.words),
        "prefixes": sorted(refs.prefixes),
        "suffixes": sorted(refs.suffixes),
        "free_names": sorted(refs.free_names),
        "structure": sorted(
            (_rule_to_json(rule) for rule in refs.structure), key=lambda r: repr(r)
        ),
        "follows_held": sorted(refs.follows_held),
        "steps_held": sorted(refs.steps_held),
        "script_attributes": sorted(refs.script_attributes),
        "parses_ids": refs.parses_ids,
        "complete": refs.complete,
    }


def refs_from_json(data: dict[str, object]) -> AssetRefs:
    def names(key: str) -> frozenset[str]:
        value = data.get(key, [])
        assert isinstance(value, list)
        return frozenset(str(name) for name in value)

    structure = data.get("structure", [])
    assert isinstance(structure, list)
    # Refs stored by readers before version 12 hold no `script_attributes`: what they read was
    # asked as `attributes` (a stylesheet's too), and a page learnt then is shifted as before.
    script_attributes = "script_attributes" if "script_attributes" in data else "attributes"
    return AssetRefs(
        ids=names("ids"),
        classes=names("classes"),
        attributes=names("attributes"),
        values=names("values"),
        tags=names("tags"),
        words=names("words"),
        prefixes=names("prefixes"),
        suffixes=names("suffixes"),
        free_names=names("free_names"),
        structure=frozenset(_rule_from_json(rule) for rule in structure),
        follows_held=names("follows_held"),
        steps_held=names("steps_held"),
        script_attributes=names(script_attributes),
        parses_ids=bool(data.get("parses_ids", False)),
        complete=bool(data.get("complete", True)),
    )


def _keys_to_json(keys: Keys | None) -> list[object] | None:
    if keys is None:
        return None
    tag, classes, element_id, attributes = keys
    return [tag, sorted(classes), element_id, sorted(list(test) for test in attributes)]


def _keys_from_json(data: object) -> Keys | None:
    if data is None:
        return None
    assert isinstance(data, list) and len(data) == 4
    tag, classes, element_id, attributes = data
    return (
        tag,
        frozenset(classes),
        element_id,
        frozenset((str(name), str(op), str(value)) for name, op, value in attributes),
    )


def _rule_to_json(rule: StructuralRule) -> list[object]:
    return [
        rule.kind,
        _keys_to_json(rule.keys),
        _keys_to_json(rule.parent),
        _keys_to_json(rule.ancestor),
        _keys_to_json(rule.sibling),
    ]


def _rule_from_json(data: object) -> StructuralRule:
    assert isinstance(data, list) and len(data) == 5
    kind, keys, parent, ancestor, sibling = data
    found = _keys_from_json(keys)
    assert found is not None and kind in ("child", "sibling", "subtree")
    return StructuralRule(
        kind, found, _keys_from_json(parent), _keys_from_json(ancestor), _keys_from_json(sibling)
    )

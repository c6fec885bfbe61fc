"""Site knowledge: what each page's stylesheets and scripts reference, learnt once, stored where
every process finds it, pinned by episodes (records, store, learner, lookup, learn runs)."""

from proxy.knowledge.learner import Learner, LearnFailed, LearnRequest
from proxy.knowledge.lookup import KnowledgeLookup, PageKnowledge
from proxy.knowledge.records import Generation, PageRecord
from proxy.knowledge.store import (
    FileKnowledge,
    KnowledgeStore,
    MemoryKnowledge,
    RedisKnowledge,
    open_knowledge,
)

__all__ = [
    "FileKnowledge",
    "Generation",
    "KnowledgeLookup",
    "KnowledgeStore",
    "LearnFailed",
    "LearnRequest",
    "MemoryKnowledge",
    "Learner",
    "PageKnowledge",
    "PageRecord",
    "RedisKnowledge",
    "open_knowledge",
]

"""GraphSearch (arXiv 2509.22009) as a second strategy on ARK's tools: a fixed
six-module workflow over a semantic and a relational channel. Registered as
``"graphsearch"`` (``Retriever(strategy="graphsearch")``, ``--strategy graphsearch``)."""

from ark.strategies._protocol import register_strategy
from ark.strategies.graphsearch.documents import DenseSearch, DocumentGraph
from ark.strategies.graphsearch.modules import SubQuery, Triple, Verdict
from ark.strategies.graphsearch.strategy import GraphSearch, GraphSearchConfig, graphsearch_factory

# One pipeline per question.
register_strategy("graphsearch", GraphSearch.from_context, default_agents=1)

__all__ = [
    "DenseSearch",
    "DocumentGraph",
    "GraphSearch",
    "GraphSearchConfig",
    "SubQuery",
    "Triple",
    "Verdict",
    "graphsearch_factory",
]

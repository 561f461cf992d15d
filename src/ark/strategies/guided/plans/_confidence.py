"""How sure the reading is of its plan: named features, one weight vector, a
calibrated probability.

A plan's confidence is the probability that what it adds is the answer (every node
it adds answers the question). It is a logistic model over a few named features of
the reading and of the plan's run (:data:`FEATURES`), as bm25s keeps its scorers:
pure functions chosen by name, the weights a value. The weights are fitted to the
user's graph on questions synthesised from that graph's own walks (no question set;
:func:`ark.distill.fit_plans`), and stored in the index's described schema with what
they were fitted on; a plan whose index has no fit, or a fit made before the schema
was described again, never runs by itself (:func:`plan_model` says why).

A feature is one the synthetic questions show as real questions do. The words a
question leaves unread and the hops it leaves unnamed are not: a walk is put in words
hop by hop with nothing else, so in the walks they mark only the reading's own
failures, while a person's question has them when its plan is right
(``docs/decisions/plan-threshold.md``).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ark.strategies.guided.hints import ChainHints
from ark.strategies.guided.plans._run import PlanRun

if TYPE_CHECKING:
    from ark.index import Index

#: The confidence at which ``ark-guided`` runs a plan without the model
#: (``--plan-threshold``).
DEFAULT_THRESHOLD = 0.5


def threshold_setting(value: float) -> float | None:
    """``--plan-threshold`` as the library takes it: above 1 no confidence reaches it,
    so plans are off (None), and the run is recorded as one without them."""
    return value if value <= 1 else None


#: Synthetic walks a fit reads by default (``ark index fit-plans --walks``).
DEFAULT_WALKS = 300
#: The key of the fit in the described schema's ``fits``.
FIT_KEY = "plan_confidence"
#: The fit's format (4: the feature ``choice``).
FIT_VERSION = 4


@dataclass(frozen=True)
class PlanFacts:
    """What the features read: the hints' reading and the plan's run."""

    hints: ChainHints
    run: PlanRun
    #: The best chain's score less the second best's (0 with one chain or none).
    margin: float


def _hops(f: PlanFacts) -> float:
    chain = f.hints.chain
    return float(len(chain.steps)) if chain is not None else float(len(f.hints.relations))


def _score(f: PlanFacts) -> float:
    chain = f.hints.chain
    return float(chain.score) if chain is not None else 0.0


def _intersection(f: PlanFacts) -> float:
    return 1.0 if f.hints.anchors else 0.0


def _answers(f: PlanFacts) -> float:
    return math.log1p(len(f.run.answer))


def _margin(f: PlanFacts) -> float:
    return min(f.margin, 2.0)


def _unused(f: PlanFacts) -> float:
    """How many times the question names a relation (by the linker's confident links)
    beyond the times the plan takes it: a relation named and not taken, or named
    twice and taken once."""
    reading = f.hints.reading
    if reading is None:
        return 0.0
    taken = {n.relation: n.uses for n in f.hints.relations}
    named = reading.linking.uses()
    return float(sum(max(0, n - taken.get(r, 0)) for r, (n, _) in named.items()))


def _entity_score(f: PlanFacts) -> float:
    """How surely the nodes the plan starts from are named (1: each whole name as
    written)."""
    reading = f.hints.reading
    if reading is None or not reading.entities:
        return 0.0
    return float(min(e.score for e in reading.entities))


def _asked_type(f: PlanFacts) -> float:
    """Whether the question names the node type the plan's answers have."""
    asks = set(f.hints.asked_types)
    if not asks or not f.run.answer:
        return 0.0
    g = f.hints.index.graph
    return 1.0 if g.type_name(f.run.answer[0]) in asks else -1.0


def _choice(f: PlanFacts) -> float:
    """Whether the plan took the add of a choice the hints left (a hop for words the
    chain leaves unexplained, or the add: :func:`ark.strategies.guided.plans.concluding_add`).
    The walks show how often such a plan is right on this graph: on some graphs the
    words are a description of the node the question names, on others a hop the
    reading missed."""
    return 1.0 if f.run.chose is not None else 0.0


#: The features by name, each a pure function of the facts; the fit's weights follow
#: this order (a fit names its features, so a fit over other ones is refused).
FEATURES: dict[str, Callable[[PlanFacts], float]] = {
    "hops": _hops,
    "score": _score,
    "margin": _margin,
    "intersection": _intersection,
    "answers": _answers,
    "asked_type": _asked_type,
    "unused": _unused,
    "entity_score": _entity_score,
    "choice": _choice,
}


def chain_margin(hints: ChainHints) -> float:
    """The reading's best chain's score less its second best's (the chain search's
    :attr:`ark.reading.Chain.runner_up`; 2 when it found no other, 0 without a
    chain): a question two paths read almost as well is one the plan may take the
    wrong way."""
    chain = hints.chain
    if chain is None:
        return 0.0
    return 2.0 if chain.runner_up is None else float(chain.score - chain.runner_up)


def plan_features(hints: ChainHints, run: PlanRun) -> dict[str, float]:
    """The features of a plan that ran to its finish, by name."""
    facts = PlanFacts(hints, run, chain_margin(hints))
    return {name: fn(facts) for name, fn in FEATURES.items()}


@dataclass(frozen=True)
class PlanModel:
    """A fitted confidence: weights over standardised features and what it was fitted
    on (the synthetic questions' count and seed, their calibration error)."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]  # the bias first
    info: Mapping[str, Any] = field(default_factory=dict)

    def confidence(self, features: Mapping[str, float]) -> float:
        x = np.array([features[n] for n in self.features], dtype=np.float64)
        z = (x - np.array(self.mean)) / np.array(self.scale)
        w = np.array(self.weights)
        return float(_sigmoid(w[0] + z @ w[1:]))

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": FIT_VERSION,
            "features": list(self.features),
            "mean": [round(v, 6) for v in self.mean],
            "scale": [round(v, 6) for v in self.scale],
            "weights": [round(v, 6) for v in self.weights],
            "info": dict(self.info),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PlanModel:
        return cls(
            tuple(d["features"]),
            tuple(float(v) for v in d["mean"]),
            tuple(float(v) for v in d["scale"]),
            tuple(float(v) for v in d["weights"]),
            dict(d.get("info") or {}),
        )


def _sigmoid(z: Any) -> Any:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))


def fit_model(
    rows: Sequence[Mapping[str, float]],
    labels: Sequence[bool],
    *,
    l2: float = 1.0,
    info: Mapping[str, Any] | None = None,
) -> PlanModel:
    """The logistic model of ``labels`` on ``rows`` (Newton's method on the L2-penalised
    log-likelihood over standardised features; the bias is not penalised)."""
    names = tuple(FEATURES)
    x = np.array([[r[n] for n in names] for r in rows], dtype=np.float64).reshape(-1, len(names))
    y = np.asarray(labels, dtype=np.float64)
    if len(y) == 0:
        raise ValueError("no plan to fit the confidence on")
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = np.hstack([np.ones((len(y), 1)), (x - mean) / scale])
    w = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2)
    penalty[0] = 1e-6
    for _ in range(50):
        p = _sigmoid(z @ w)
        grad = z.T @ (p - y) + penalty * w
        hess = (z * (p * (1 - p))[:, None]).T @ z + np.diag(penalty)
        delta = np.linalg.solve(hess, grad)
        w -= delta
        if np.max(np.abs(delta)) < 1e-8:
            break
    return PlanModel(
        names, tuple(mean.tolist()), tuple(scale.tolist()), tuple(w.tolist()), dict(info or {})
    )


def calibration_error(
    probabilities: Sequence[float], labels: Sequence[bool], bins: int = 10
) -> float:
    """The expected calibration error: over ``bins`` equal-width bins of the predicted
    probability, the share of plans in each bin times the gap between its mean
    prediction and its share of right plans."""
    p = np.asarray(probabilities, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    if not len(p):
        return 0.0
    which = np.minimum((p * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        inside = which == b
        if inside.any():
            total += inside.sum() / len(p) * abs(p[inside].mean() - y[inside].mean())
    return float(total)


def reading_digest(index: Index) -> str:
    """What a fit is valid for: the described schema's words (its fits aside), the
    linking encoder and the reading's version (:data:`ark.reading.READING_VERSION`);
    describing the index again, or another version of the reading, makes a new
    reading, and an old fit stale."""
    import ark.reading
    from ark.index import linking_encoder

    described = index.described.to_dict()
    described.pop("fits", None)
    parts = [described, linking_encoder(), ark.reading.READING_VERSION]
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def plan_model(index: Index) -> tuple[PlanModel | None, str]:
    """The index's fitted confidence and a line saying which (or why there is none);
    read once per described schema of an opened index."""
    described = index.described
    cache: dict[int, tuple[Any, tuple[PlanModel | None, str]]] = index.memo("plan_models", dict)
    hit = cache.get(id(described))
    if hit is not None and hit[0] is described:
        return hit[1]
    found = _plan_model(index)
    cache[id(described)] = (described, found)
    return found


def _plan_model(index: Index) -> tuple[PlanModel | None, str]:
    fit = index.described.fits.get(FIT_KEY)
    if not fit:
        return None, "no plan confidence fitted (ark index fit-plans): the model runs every step"
    try:
        model = PlanModel.from_dict(fit)
    except (KeyError, TypeError, ValueError):
        return None, "the plan confidence stored in the index is malformed: ark index fit-plans"
    if model.features != tuple(FEATURES) or fit.get("version") != FIT_VERSION:
        return None, "the plan confidence was fitted by another ARK: ark index fit-plans"
    if model.info.get("reading") != reading_digest(index):
        return None, (
            "the plan confidence was fitted for another reading (the schema described "
            "again since, or another version of ARK's reading): ark index fit-plans"
        )
    return model, f"plan confidence fitted on {model.info.get('n', '?')} synthetic questions"

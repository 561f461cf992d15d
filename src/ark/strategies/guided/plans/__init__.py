"""Plans: the reading's calls run without a model when it is sure of them.

The hints of ``ark-guided`` write the next call after every step; a small model
mostly copies it. :func:`run_plan` runs those calls itself through the tool session
(global search for the node the question names, each hop, the add, finish) and
stops wherever a decision is left, but for the add that ends the reading's chain
beside a hop for words it leaves unexplained (:func:`concluding_add`), which it takes
and its confidence weighs. :class:`PlanModel` says how sure the reading is
that the plan's answer is right: a logistic model over named features
(:data:`FEATURES`), fitted to the user's graph on its own synthetic questions
(``ark index fit-plans``; :func:`ark.distill.fit_plans`) and stored in the index.
Where the plan and its rival are sure only together, the model chooses between them
(:func:`plan_words`, :func:`choice_messages`), its reply an index.
"""

from ark.strategies.guided.plans._calls import Call, calls_in, concluding_add, ready_call
from ark.strategies.guided.plans._choice import (
    choice_messages,
    choice_schema,
    plan_words,
    read_choice,
)
from ark.strategies.guided.plans._confidence import (
    DEFAULT_THRESHOLD,
    DEFAULT_WALKS,
    FEATURES,
    FIT_KEY,
    PlanModel,
    calibration_error,
    chain_margin,
    fit_model,
    plan_features,
    plan_model,
    reading_digest,
    threshold_setting,
)
from ark.strategies.guided.plans._run import (
    PLAN_STEPS,
    STOPS,
    PlanRun,
    PlanStep,
    first_call,
    next_call,
    plan_question,
    reading_finishes,
    run_plan,
)

__all__ = [
    "DEFAULT_THRESHOLD",
    "DEFAULT_WALKS",
    "FEATURES",
    "FIT_KEY",
    "PLAN_STEPS",
    "STOPS",
    "Call",
    "PlanModel",
    "PlanRun",
    "PlanStep",
    "calibration_error",
    "calls_in",
    "chain_margin",
    "choice_messages",
    "choice_schema",
    "concluding_add",
    "first_call",
    "fit_model",
    "next_call",
    "plan_features",
    "plan_model",
    "plan_question",
    "plan_words",
    "read_choice",
    "reading_digest",
    "reading_finishes",
    "ready_call",
    "run_plan",
    "threshold_setting",
]

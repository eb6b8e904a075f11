"""The question types a slot can ask for, with the description the prompt shows the model."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["PAIR_TYPES", "QUESTION_TYPES"]

# The question types a user can ask for (``--types``).
QUESTION_TYPES: Mapping[str, str] = {
    "lookup": "asks for one specific fact, value, name or setting",
    "conceptual": "asks how or why something works, in the asker's own words",
    "comparison": "asks how two options, versions or approaches differ, or which to choose",
    "procedural": "asks how to get a task done, step by step",
    "troubleshooting": "describes something that went wrong and asks how to fix it",
    "yes_no": "asks whether something is possible, allowed or true",
}

# The question types of a pair of chunks (``--multi-chunk``; see ``generate.pairs``).
PAIR_TYPES: Mapping[str, str] = {
    "comparison": "asks how the two things the passages describe differ, or which to choose",
    "multi_part": "asks two related things at once, one answered by each passage",
}

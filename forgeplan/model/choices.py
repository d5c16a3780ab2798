"""The named choices a user picks on the command line: objectives, PDDL export profiles, external planners,
prompt styles, target orders, serving engines.

Plain data, so that the command line offers them without importing the planners that act on them.
"""

# objective -> the values it minimises, lexicographically (what an optimality proof covers)
OBJECTIVES = {"moved-parts,actions": ("moved-parts", "actions"), "actions": ("actions",),
              "moved-parts": ("moved-parts",)}
# the papers' objectives by name: FORGE's reference uses the fewest actions (c*), MAGAR's the fewest moved
# parts first (J_move), then actions
PAPER_OBJECTIVES = {"forge": "actions", "magar": "moved-parts,actions"}

# PDDL export profiles, richest first (planners.pddl.profiles)
PROFILES = ("full", "strips", "strips-costs", "strips-table")

# external PDDL planner -> (default profile, default configuration) (planners.pddl.external)
PLANNERS = {"fd": ("strips-costs", "astar(lmcut())"), "pyperplan": ("strips", "-s astar -H lmcut")}

# prompt styles (llm.prompt): forge, FORGE's inference contract with the full public task representation (the
# default); compact, the action signatures and the task's state in a few lines, for small models trained on the
# assembly
PROMPTS = ("forge", "compact")
DEFAULT_PROMPT = "forge"

# the order of a reference's actions in an SFT target (llm.targets): reference, as stored; structured, by the
# layers of the dependency closure (FORGE's Rework Structuring); plain, a fixed order that ignores them
TARGETS = ("reference", "structured", "plain")
DEFAULT_TARGETS = "reference"

# serving engines, each with its request field that carries the task's grammar (llm.serving.constraint)
SERVING_ENGINES = ("vllm", "sglang", "llama.cpp", "openai")

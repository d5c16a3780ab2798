"""Pictures of states and plans: colours and labels, a face renderer, a task's states, a plan step by step."""

"""Issue 40's faults under load (`make chaos`, `python -m bench.chaos`): a stack on stores of
its own, the load test's traffic, each fault done and undone, and what the answers and the
tables say after."""

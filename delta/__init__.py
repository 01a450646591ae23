"""The minimal conforming implementation: cut planner, chunked encode, session store with repair."""

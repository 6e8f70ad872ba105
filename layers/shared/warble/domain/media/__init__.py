"""Media (images): uploads straight to the object store, processing, and what a tweet shows."""

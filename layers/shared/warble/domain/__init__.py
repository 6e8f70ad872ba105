"""Domain logic: Warble's rules. No I/O library is imported here; stores come in as ports."""

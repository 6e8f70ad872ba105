"""Entry points of every trigger but HTTP: stream consumers, schedules and WebSocket routes
(HTTP routers live in ``warble.http``). Each is built on ``skeleton.entry_point``, so every
function has the same Logger, Tracer, Metrics and correlation id."""

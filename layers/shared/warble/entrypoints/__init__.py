"""Entry points of every trigger but HTTP: stream consumers, schedules, WebSocket routes and the
authorizer (HTTP routers live in ``warble.http``). Each is built on ``skeleton.entry_point``, so
every function has the same Logger, Tracer, Metrics and correlation id."""

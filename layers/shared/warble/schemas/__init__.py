"""The API's contract: request and response models per feature, which drive validation and
the OpenAPI document; used by the HTTP and the WebSocket entry points alike."""

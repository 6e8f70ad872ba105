"""The HTTP skeleton and routers (Powertools APIGatewayHttpResolver)."""
